/** ibsm→ibsm failover on ibsim with the SA's state kept: an ibsm master with a multicast group
 * joined from another process and a ServiceRecord registered, an ibsm standby at another node;
 * `kill -9` the master; the standby is master within 5 s, `saquery -g` shows the same group with
 * the same MLID, the service is there, and no LID changed. Witnesses: sminfo, saquery, smpquery. */
import { afterAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, IBSIM_EXAMPLES, type Ibsim, type PreloadedProcess } from './helpers/ibsim.js';

const CLI = path.resolve('dist/cli/main.js');
const CLIENT = path.resolve('test/fixtures/ibsim-sa-client.mjs');
const NET = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');

async function tool(ib: Ibsim, host: string, cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const r = await runPreloaded(cmd, args, { ibsim: ib, simHost: host, timeoutMs: 20_000 });
  return { code: r.code, out: r.stdout + r.stderr };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** `sminfo <lid>`: "sminfo: sm lid 1 sm guid 0x..., activity count N priority P state S MASTER". */
async function smState(ib: Ibsim, host: string, lid: number): Promise<{ state: string; priority: number } | undefined> {
  const r = await tool(ib, host, 'sminfo', [String(lid)]);
  const m = /priority (\d+) state \d+ SMINFO_(\w+)/.exec(r.out);
  return m ? { state: m[2]!, priority: Number(m[1]) } : undefined;
}

/** A port's LID and MasterSMLID (smpquery portinfo on the local port through DR). */
async function portInfo(ib: Ibsim, host: string): Promise<{ lid: number; smLid: number }> {
  const r = await tool(ib, host, 'smpquery', ['-D', 'portinfo', '0', '1']);
  const lid = /^Lid:\.+(\d+)$/m.exec(r.out);
  const sm = /^SMLid:\.+(\d+)$/m.exec(r.out);
  if (!lid || !sm) throw new Error(`smpquery portinfo at ${host}: ${r.out}`);
  return { lid: Number(lid[1]), smLid: Number(sm[1]) };
}

const HOSTS = ['Hca1', 'Hca2', 'Hca3', 'Hca4'];

describe('ibsm failover on ibsim', () => {
  let ib: Ibsim | undefined;
  const procs: PreloadedProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop('SIGKILL').catch(() => undefined);
    await ib?.stop();
  });

  it('the standby takes over within 5 s of kill -9, with the same group (MGID, MLID), the service and every LID', async () => {
    ib = await startIbsim(NET);
    const sm = (host: string, priority: number): PreloadedProcess => {
      const p = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--priority', String(priority), '--sweep-interval', '1', '--poll-interval', '300', '--poll-retries', '3'], { ibsim: ib!, simHost: host, setIsSm: true, timeoutMs: 180_000 });
      procs.push(p);
      return p;
    };
    const master = sm('Hca1', 10);
    const a = await waitFor('the first SM to be master', async () => ((await portInfo(ib!, 'Hca3')).smLid ? await smState(ib!, 'Hca3', (await portInfo(ib!, 'Hca1')).lid) : undefined), 30_000);
    expect(a).toEqual({ state: 'MASTER', priority: 10 });
    const standby = sm('Hca2', 3);
    // No other process may attach at Hca2 while the SM there starts (umad2sim: it dies with SIGSEGV).
    await new Promise((r) => setTimeout(r, 3000));
    const lidB = await waitFor('the second SM to stand by', async () => {
      const b = await portInfo(ib!, 'Hca2');
      const s = await smState(ib!, 'Hca3', b.lid);
      return s?.state === 'STANDBY' ? b.lid : undefined;
    }, 30_000);

    // A host creates a group; another registers a service.
    const run = async (host: string, ops: unknown[]): Promise<Array<Record<string, unknown>>> => {
      const r = await runPreloaded(process.execPath, [CLIENT, JSON.stringify({ ops })], { ibsim: ib!, simHost: host, timeoutMs: 30_000 });
      const lines = r.stdout.split('\n').filter((l) => l.startsWith('RESULT ')).map((l) => JSON.parse(l.slice(7)) as Record<string, unknown>);
      if (lines.length !== ops.length) throw new Error(`client at ${host}: ${r.stdout}\n${r.stderr}`);
      return lines;
    };
    const [join] = await run('Hca3', [{ op: 'join', mgid: '0x0', joinState: 1, qkey: 0x1234, pkey: 0xffff }]);
    expect(join!.status).toBe(0);
    const [reg] = await run('Hca4', [{ op: 'register', serviceId: '0x1000000000000099', name: 'kept-across-failover', lease: 0xffffffff }]);
    expect(reg!.status).toBe(0);
    const groupsBefore = (await tool(ib, 'Hca4', 'saquery', ['-g'])).out;
    const mgid = /MGID\.+([0-9a-f:]+)/.exec(groupsBefore)?.[1];
    const mlid = /Mlid\.+(0x[0-9a-fA-F]+)/.exec(groupsBefore)?.[1];
    expect(mgid && mlid, groupsBefore).toBeTruthy();
    const lidsBefore = await Promise.all(HOSTS.slice(1).map((h) => portInfo(ib!, h).then((p) => p.lid)));
    await new Promise((r) => setTimeout(r, 1500)); // the standby's next polls pull the new state

    const t0 = Date.now();
    await master.stop('SIGKILL');
    await waitFor('the standby to become master', async () => ((await smState(ib!, 'Hca3', lidB))?.state === 'MASTER' ? true : undefined), 15_000);
    const took = Date.now() - t0;
    expect(took, `took over after ${took} ms`).toBeLessThan(5000);
    await waitFor('every port to point at the new master', async () => ((await Promise.all(HOSTS.slice(1).map((h) => portInfo(ib!, h)))).every((p) => p.smLid === lidB) ? true : undefined), 10_000);

    const groupsAfter = (await tool(ib, 'Hca4', 'saquery', ['-g'])).out;
    expect(groupsAfter).toContain(mgid!);
    expect(/Mlid\.+(0x[0-9a-fA-F]+)/.exec(groupsAfter)?.[1], groupsAfter).toBe(mlid);
    const services = (await tool(ib, 'Hca3', 'saquery', ['-S'])).out;
    expect(services).toContain('kept-across-failover');
    expect(await Promise.all(HOSTS.slice(1).map((h) => portInfo(ib!, h).then((p) => p.lid))), 'no LID changed').toEqual(lidsBefore);
    await standby.stop('SIGTERM');
  }, 180_000);
});

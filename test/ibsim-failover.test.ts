/** ibsm→ibsm failover on ibsim with the SA's state kept: an ibsm master with a multicast group
 * joined from another process and a ServiceRecord registered, an ibsm standby at another node;
 * `kill -9` the master; the standby is master within seconds (bounded at 12 s, ~6x what it takes idle), `saquery -g` shows the same group with
 * the same MLID, the service is there, and no LID changed. Witnesses: sminfo, saquery, smpquery. */
import { afterAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, IBSIM_EXAMPLES, type Ibsim, type PreloadedProcess } from './helpers/ibsim.js';
import { parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { NodeType } from '../src/wire/mad.js';

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

/** Every CA's LID by its description, from ibnetdiscover run at Hca4 (which runs no SM: no
 * other process may attach at an SM's node while it starts; see docs/ibsim-notes.md). */
async function caLids(ib: Ibsim): Promise<Map<string, number>> {
  const f = parseIbnetdiscover((await tool(ib, 'Hca4', 'ibnetdiscover', [])).out);
  const out = new Map<string, number>();
  for (const n of f.nodes) if (n.type !== NodeType.Switch) for (const p of n.ports) if (p?.lid) out.set(n.desc, p.lid);
  return out;
}
const lidOf = async (ib: Ibsim, desc: string): Promise<number | undefined> => (await caLids(ib)).get(desc) || undefined;

describe('ibsm failover on ibsim', () => {
  let ib: Ibsim | undefined;
  const procs: PreloadedProcess[] = [];
  afterAll(async () => {
    for (const p of procs) await p.stop('SIGKILL').catch(() => undefined);
    await ib?.stop();
  });

  it('the standby takes over within seconds of kill -9, with the same group (MGID, MLID), the service and every LID', async () => {
    ib = await startIbsim(NET);
    const sm = (host: string, priority: number): PreloadedProcess => {
      const p = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--priority', String(priority), '--sweep-interval', '1', '--poll-interval', '300', '--poll-retries', '3'], { ibsim: ib!, simHost: host, timeoutMs: 180_000 });
      procs.push(p);
      return p;
    };
    const master = sm('Hca1', 10);
    const lidA = await waitFor('the first SM to be master', async () => {
      const lid = (await portInfo(ib!, 'Hca3')).smLid;
      return lid && (await smState(ib!, 'Hca3', lid))?.state === 'MASTER' ? lid : undefined;
    }, 30_000);
    expect(await smState(ib, 'Hca3', lidA)).toEqual({ state: 'MASTER', priority: 10 });
    const standby = sm('Hca2', 3);
    // No SMInfo to the new SM's port before it has registered its agents: under umad2sim a MAD
    // for a class a starting process has not registered yet kills it (docs/ibsim-notes.md).
    await new Promise((r) => setTimeout(r, 3000));
    const lidB = (await waitFor('the LID of Hca2', () => lidOf(ib!, 'Hca2'), 10_000))!;
    await waitFor('the second SM to stand by', async () => ((await smState(ib!, 'Hca3', lidB))?.state === 'STANDBY' ? true : undefined), 30_000);

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
    const lidsBefore = await caLids(ib);
    expect(lidsBefore.size).toBe(HOSTS.length);
    await new Promise((r) => setTimeout(r, 1500)); // the standby's next polls pull the new state

    const t0 = Date.now();
    await master.stop('SIGKILL');
    await waitFor('the standby to become master', async () => ((await smState(ib!, 'Hca3', lidB))?.state === 'MASTER' ? true : undefined), 15_000);
    const took = Date.now() - t0;
    // ~2 s on an idle machine (500 ms x 3 polls and their time-outs); the bound is ~6x that.
    expect(took, `took over after ${took} ms`).toBeLessThan(12_000);
    await waitFor('the hosts to point at the new master', async () => ((await Promise.all(['Hca3', 'Hca4'].map((h) => portInfo(ib!, h)))).every((p) => p.smLid === lidB) ? true : undefined), 10_000);

    const groupsAfter = (await tool(ib, 'Hca4', 'saquery', ['-g'])).out;
    expect(groupsAfter).toContain(mgid!);
    expect(/Mlid\.+(0x[0-9a-fA-F]+)/.exec(groupsAfter)?.[1], groupsAfter).toBe(mlid);
    // saquery shows one MAD of a table under ibsim; ask for the one service by ID (ibsm query
    // reassembles RMPP).
    const services = (await tool(ib, 'Hca3', process.execPath, [CLI, 'query', 'services', '--service-id', '0x1000000000000099', '--umad'])).out;
    expect(services).toContain('kept-across-failover');
    const lidsAfter = await caLids(ib);
    lidsBefore.delete('Hca1'); // the dead master's port
    lidsAfter.delete('Hca1');
    expect(lidsAfter, 'no LID changed').toEqual(lidsBefore);
    await standby.stop('SIGTERM');
  }, 180_000);
});

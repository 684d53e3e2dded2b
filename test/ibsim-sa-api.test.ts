/** The package API's SA client against another SA: OpenSM's, on ibsim through libibumad, with
 * saquery from the same host as the witness (PathRecord values, the group it created, the service
 * it registered, and both gone after leave/delete). */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startIbsim, runPreloaded, startPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { TIMEOUT, planOf, parseSaquery, saquery, startOpenSm, stopSa, type RunningSa } from './helpers/sa-compare.js';

const FIXTURE = path.resolve('test/fixtures/api-sa-client.mjs');
type Out = { portGid: string; path?: { slid: number; dlid: number; sl: number; pKey: number }; group?: { mgid: string; mlid: number; joinState: number }; service?: { serviceName: string }; cleaned?: boolean };
/** A GID as saquery prints it (inet_ntop) → bigint. */
const gidValue = (text: string): bigint => {
  const [head, tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail ? tail.split(':') : [];
  const groups = [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((a, g) => (a << 16n) | BigInt(parseInt(g || '0', 16)), 0n);
};

describe('openSaClient against OpenSM on ibsim', () => {
  it('PathRecord, multicast create/leave and service register/delete, as saquery sees them', async () => {
    const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
    const ib = await startIbsim(file);
    let sa: RunningSa | undefined;
    try {
      sa = await startOpenSm(ib);
      const plan = planOf(file, readFileSync(sa.guid2lid, 'utf8'));
      const host = plan.caHosts.at(-1)!;
      const cas = plan.ends.filter((e) => !e.switch);
      const [a, b] = [cas[0]!, cas.at(-1)!];
      const api = async (cfg: unknown): Promise<Out> => {
        const r = await runPreloaded(process.execPath, [FIXTURE, JSON.stringify(cfg)], { ibsim: ib, simHost: host, timeoutMs: 30_000 });
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Out;
      };
      const out = await api({ op: 'setup', slid: a.lid, dlid: b.lid });
      const [spr] = parseSaquery((await saquery(ib, host, ['-p', '--src-to-dst', `${a.lid}:${b.lid}`])).out).map((x) => x.fields);
      expect(String(out.path!.slid)).toBe(spr!.get('slid'));
      expect(String(out.path!.dlid)).toBe(spr!.get('dlid'));
      expect(`0x${out.path!.sl.toString(16)}`).toBe(spr!.get('sl'));

      const groups = parseSaquery((await saquery(ib, host, ['-m'])).out).map((x) => x.fields);
      const mine = groups.filter((g) => g.has('MGID') && gidValue(g.get('MGID')!) === BigInt(out.group!.mgid));
      expect(mine.length, JSON.stringify(groups.map((g) => Object.fromEntries(g)))).toBeGreaterThan(0);
      expect(parseInt(mine[0]!.get('Mlid')!, 16)).toBe(out.group!.mlid);
      const services = (await saquery(ib, host, ['-S'])).out;
      expect(services).toContain('ibsm-api-test');

      expect((await api({ op: 'cleanup', mgid: out.group!.mgid })).cleaned).toBe(true);
      const after = parseSaquery((await saquery(ib, host, ['-m'])).out).map((x) => x.fields);
      expect(after.some((g) => g.has('MGID') && gidValue(g.get('MGID')!) === BigInt(out.group!.mgid))).toBe(false);
      expect((await saquery(ib, host, ['-S'])).out).not.toContain('ibsm-api-test');
    } finally {
      await stopSa(sa, 'opensm');
      await ib.stop();
    }
  }, TIMEOUT * 3);
});

describe('openSaClient in the process of an SM on a device (issue #28)', () => {
  it('{ sm } and { umad: true } on the SM\'s own port answer; a service registered through it is what saquery sees', async () => {
    const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
    const ib = await startIbsim(file);
    try {
      const p = startPreloaded(process.execPath, [path.resolve('test/fixtures/api-sm-sa-inprocess.mjs')], { ibsim: ib, simHost: 'Hca1', timeoutMs: TIMEOUT });
      try {
        const line = await p.waitForLine((l) => l.startsWith('{'), TIMEOUT);
        const out = JSON.parse(line) as { nodesBySm: number; nodesByUmad: number };
        // the witness: saquery from another host, through the SA of that SM
        // a NodeRecord per node of the topology file (saquery cannot count them: under umad2sim it
        // gets the first RMPP segment only, from OpenSM as from ibsm)
        const nodes = readFileSync(file, 'utf8').match(/^(Switch|Hca|Ca)\s/gm)!.length;
        expect(out.nodesBySm).toBe(nodes);
        expect(out.nodesByUmad).toBe(nodes);
        // the witness: saquery from another host sees the service registered through { sm }
        expect((await saquery(ib, 'Hca3', ['-S'])).out).toContain('ibsm-inprocess');
      } finally {
        const r = await p.stop();
        expect(r.code, r.stderr).toBe(0);
      }
    } finally {
      await ib.stop();
    }
  }, TIMEOUT * 3);
});

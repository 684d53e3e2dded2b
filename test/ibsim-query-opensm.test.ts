/** `ibsm query --umad` against OpenSM's SA on ibsim, witnessed by saquery from the same host: every
 * record OpenSM answers comes back with the same values. OpenSM leaves RMPP to the kernel (its
 * answers carry only the Active flag), and umad2sim delivers one MAD: ibsm's client takes that MAD
 * as the answer (the records in its intact bytes, with a warning that the table may have more), as
 * saquery does, instead of waiting for segments that never come (it used to time out). */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { TIMEOUT, CLI, planOf, parseSaquery, saquery, startOpenSm, stopSa, type RunningSa } from './helpers/sa-compare.js';
import { readFileSync } from 'node:fs';

type Json = Record<string, unknown>;
const at = (o: unknown, p: string): unknown => p.split('.').reduce<unknown>((v, k) => (v as Json | undefined)?.[k], o);
const hex64 = (v: unknown): string => `0x${BigInt(v as string).toString(16).padStart(16, '0')}`;

describe('ibsm query against OpenSM on ibsim', () => {
  it('answers every record OpenSM knows, with the values saquery prints', async () => {
    const file = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
    const ib = await startIbsim(file);
    let sa: RunningSa | undefined;
    try {
      sa = await startOpenSm(ib);
      const plan = planOf(file, readFileSync(sa.guid2lid, 'utf8'));
      const host = plan.caHosts.at(-1)!;
      const cas = plan.ends.filter((e) => !e.switch);
      const sw = plan.ends.find((e) => e.switch)!;
      const [a, b] = [cas[0]!, cas.at(-1)!];
      const q = async (args: string[]): Promise<{ recs: Json[]; stderr: string }> => {
        const r = await runPreloaded(process.execPath, [CLI, 'query', ...args, '--umad', '--json'], { ibsim: ib, simHost: host, timeoutMs: 30_000 });
        expect(r.code, `ibsm query ${args.join(' ')}: ${r.stderr}`).toBe(0);
        return { recs: JSON.parse(r.stdout) as Json[], stderr: r.stderr };
      };
      const sq = async (args: string[]): Promise<Array<Map<string, string>>> => parseSaquery((await saquery(ib, host, args)).out).map((x) => x.fields);
      const bad: string[] = [];
      const same = (what: string, ours: unknown, theirs: string | undefined): void => {
        if (String(ours) !== theirs) bad.push(`${what}: ibsm query ${String(ours)}, saquery ${theirs}`);
      };

      // NodeRecord of one CA (Get-sized answers: the whole record arrives).
      const nr = await q(['nodes', '--lid', String(a.lid)]);
      const [snr] = await sq(['NR', String(a.lid)]);
      expect(nr.recs).toHaveLength(1);
      same('NR lid', nr.recs[0]!.lid, snr!.get('lid'));
      same('NR node_guid', hex64(at(nr.recs[0], 'nodeInfo.nodeGuid')), snr!.get('node_guid'));
      same('NR port_guid', hex64(at(nr.recs[0], 'nodeInfo.portGuid')), snr!.get('port_guid'));

      // PathRecord between two CAs.
      const pr = await q(['path', '--slid', String(a.lid), '--dlid', String(b.lid)]);
      const [spr] = await sq(['-p', '--src-to-dst', `${a.lid}:${b.lid}`]);
      expect(pr.recs).toHaveLength(1);
      same('PR slid', pr.recs[0]!.slid, spr!.get('slid'));
      same('PR dlid', pr.recs[0]!.dlid, spr!.get('dlid'));
      same('PR pkey', `0x${Number(pr.recs[0]!.pKey).toString(16).toUpperCase()}`, spr!.get('pkey')?.replace(/^0x/, '0x'));
      same('PR sl', `0x${Number(pr.recs[0]!.sl).toString(16)}`, spr!.get('sl'));

      // MultiPathRecord (GetMulti, an RMPP request): OpenSM's lone answer segment under umad2sim.
      const gidOf = (guid: bigint): string => `0x${((0xfe80000000000000n << 64n) | guid).toString(16)}`;
      const mpr = await q(['multipath', '--sgid', gidOf(a.guid), '--dgid', gidOf(b.guid)]);
      expect(mpr.recs.length).toBeGreaterThan(0);
      same('MPR slid', mpr.recs[0]!.slid, spr!.get('slid'));
      same('MPR dlid', mpr.recs[0]!.dlid, spr!.get('dlid'));

      // SMInfoRecord: OpenSM itself.
      const smi = await q(['sminfo']);
      const [ssmi] = await sq(['SMIR', String(plan.ends[0]!.lid)]);
      expect(smi.recs.length).toBeGreaterThan(0);
      same('SMIR LID', smi.recs[0]!.lid, ssmi!.get('LID'));
      same('SMIR GUID', hex64(at(smi.recs[0], 'smInfo.guid')), ssmi!.get('GUID'));

      // SwitchInfoRecord and LinkRecord.
      const swi = await q(['switchinfo', '--lid', String(sw.lid)]);
      const [sswi] = await sq(['SWIR', String(sw.lid)]);
      expect(swi.recs).toHaveLength(1);
      same('SWIR LinearFDBCap', `0x${Number(at(swi.recs[0], 'switchInfo.linearFdbCap')).toString(16)}`, sswi!.get('LinearFDBCap'));
      const lr = await q(['links', '--lid', String(a.lid), '--port', String(a.port)]);
      const [slr] = await sq(['LR', `${a.lid}/${a.port}`]);
      expect(lr.recs).toHaveLength(1);
      same('LR ToLID', lr.recs[0]!.toLid, slr!.get('ToLID'));
      same('LR ToPort', lr.recs[0]!.toPort, slr!.get('ToPort'));

      // Tables of more than one MAD: the first MAD's records, as saquery sees them, and a warning.
      const nodes = await q(['nodes']);
      expect(nodes.recs.length).toBeGreaterThan(0);
      expect(nodes.stderr).toMatch(/only its first MAD arrived/);
      const snodes = await sq(['NR']);
      same('NR (table) first lid', nodes.recs[0]!.lid, snodes[0]!.get('lid'));

      // The IPoIB broadcast group OpenSM created.
      const mc = await q(['mcmembers']);
      expect(mc.recs.map((r) => r.mgid)).toContain('ff12:401b:ffff:0000:0000:0000:ffff:ffff');

      // The rest answer (no timeout), each with at least one record.
      for (const args of [['portinfo', '--lid', String(a.lid)], ['guidinfo', '--lid', String(a.lid)], ['lft', '--lid', String(sw.lid), '--block', '0'], ['sl2vl', '--lid', String(a.lid)], ['vlarb', '--lid', String(a.lid)]]) {
        expect((await q(args)).recs.length, args.join(' ')).toBeGreaterThan(0);
      }
      expect(bad).toEqual([]);
    } finally {
      await stopSa(sa, 'opensm');
      await ib.stop();
    }
  }, 3 * TIMEOUT);
});

/** IPoIB's broadcast groups on ibsim: partitions.conf with two `ipoib` partitions (and an mgid=
 * line), OpenSM and then ibsm on the same fabric with the same guid2lid. Each SA must have the
 * groups before any client asks (saquery -g), and a join without the create components (as the
 * kernel's IPoIB joins its broadcast group) from another process must succeed and reach the
 * switches' MFTs (ibroute -M). Every process is stopped by PID. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { NodeType } from '../src/wire/mad.js';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES, type Ibsim } from './helpers/ibsim.js';
import { TIMEOUT, planOf, parseSaquery, diffRecords, saquery, client, startOpenSm, startIbsm, stopSa, parseIbrouteMcast, mcastReach, waitFor, type Plan, type RunningSa } from './helpers/sa-compare.js';
import { hasCode } from './helpers/log-lines.js';

const FILE = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
/** Two ipoib partitions (the default one and Storage) and a partition with an mgid= group only. */
const PARTITIONS = `
Default=0x7fff, ipoib : ALL=full ;
Storage=0x8002, ipoib : ALL=full ;
Other=0x0003 :
   mgid=ff12::1234,sl=1,TClass=3,FlowLabel=0x12
   ALL=full ;
`;
const BCAST_DEFAULT = { text: 'ff12:401b:ffff::ffff:ffff', hex: '0xff12401bffff000000000000ffffffff' };
const BCAST_STORAGE = { text: 'ff12:401b:8002::ffff:ffff', hex: '0xff12401b8002000000000000ffffffff' };
const OTHER = 'ff12::1234';

interface Seen {
  guid2lid: string;
  before: string;
  joins: Array<Record<string, unknown>>;
  after: Map<string, string>;
  /** switch node → MLID → ports, once both members reach each other. */
  mfts: Map<number, Map<number, number[]>>;
  log: string;
}

async function readMfts(ib: Ibsim, plan: Plan, host: string): Promise<Map<number, Map<number, number[]>>> {
  const m = new Map<number, Map<number, number[]>>();
  for (const s of plan.ends.filter((e) => e.switch)) {
    const r = await runPreloaded('ibroute', ['-M', String(s.lid)], { ibsim: ib, simHost: host, timeoutMs: 20_000 });
    if (r.code !== 0) throw new Error(`ibroute -M ${s.lid}: ${r.stderr}`);
    m.set(s.node, parseIbrouteMcast(r.stdout));
  }
  return m;
}

async function observe(kind: 'opensm' | 'ibsm', conf: string, guid2lid?: string): Promise<Seen> {
  const ib = await startIbsim(FILE);
  let sa: RunningSa | undefined;
  try {
    sa = kind === 'opensm' ? await startOpenSm(ib, ['-P', conf]) : await startIbsm(ib, guid2lid!, ['--partitions', conf]);
    const g2l = readFileSync(sa.guid2lid, 'utf8');
    const plan = planOf(FILE, g2l);
    // Two members on different switches.
    const cas = plan.ends.filter((e) => !e.switch);
    const switchOf = (e: (typeof cas)[number]): number => plan.fabric.nodes[e.node]!.ports[e.port]!.peer!.node;
    const a = cas[0]!;
    const b = cas.find((e) => switchOf(e) !== switchOf(a))!;
    const caNodes = plan.fabric.nodes.map((n, i) => ({ n, i })).filter((x) => x.n.type !== NodeType.Switch);
    const host = (e: (typeof cas)[number]): string => plan.caHosts[caNodes.findIndex((x) => x.i === e.node)]!;
    const queryHost = host(cas.at(-1)!);
    const before = (await saquery(ib, queryHost, ['-g'])).out;
    const joins: Array<Record<string, unknown>> = [];
    for (const m of [a, b]) {
      const c = await client(ib, host(m), [
        { op: 'join', mgid: BCAST_DEFAULT.hex, joinState: 1, create: false },
        { op: 'join', mgid: BCAST_STORAGE.hex, joinState: 1, create: false },
      ]);
      joins.push(...c.lines);
    }
    const mlidOf = (j: Record<string, unknown>): number => Number((j.record as Record<string, unknown> | undefined)?.mlid);
    let mfts = new Map<number, Map<number, number[]>>();
    let last = '';
    await waitFor(
      `${kind}: the MFTs deliver each broadcast group between its members`,
      async () => {
        mfts = await readMfts(ib, plan, queryHost);
        return [mlidOf(joins[0]!), mlidOf(joins[1]!)].every((mlid) =>
          [a, b].every((m, i) => {
            const { reached, loops } = mcastReach(plan, mfts, m, mlid);
            last = JSON.stringify({ mlid, from: m.lid, reached: [...reached].map((g) => g.toString(16)), loops });
            return loops.length === 0 && reached.has([a, b][1 - i]!.guid);
          }),
        );
      },
      30_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; last walk ${last}`);
    });
    const after = new Map<string, string>();
    for (const args of [['-g'], ['MCMR', '--mgid', BCAST_DEFAULT.text], ['MCMR', '--mgid', BCAST_STORAGE.text], ['MCMR', '--mgid', OTHER]]) {
      after.set(args.join(' '), (await saquery(ib, queryHost, args)).out);
    }
    return { guid2lid: g2l, before, joins, after, mfts, log: sa.log() };
  } finally {
    await stopSa(sa, kind);
    await ib.stop();
  }
}

describe('IPoIB broadcast groups from partitions.conf on ibsim (OpenSM as the witness)', () => {
  it(
    'both SAs have the groups before any join (saquery -g); joins without create succeed; ibroute -M holds them; the records agree field by field',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ipoib-'));
      const conf = path.join(dir, 'partitions.conf');
      writeFileSync(conf, PARTITIONS);
      const osm = await observe('opensm', conf);
      const g2l = path.join(dir, 'guid2lid');
      writeFileSync(g2l, osm.guid2lid);
      const ours = await observe('ibsm', conf, g2l);

      // Before any client joined: the three groups, at the MLIDs OpenSM gives (file order from 0xC000).
      const groups = (out: string): string[] => parseSaquery(out).map((r) => `${r.fields.get('MGID')} ${r.fields.get('Mlid')}`);
      const want = [`${OTHER} 0xC002`, `${BCAST_STORAGE.text} 0xC001`, `${BCAST_DEFAULT.text} 0xC000`];
      expect(groups(osm.before)).toEqual(want);
      expect(groups(ours.before)).toEqual(want);
      expect(diffRecords('saquery -g (before joins)', parseSaquery(ours.before), parseSaquery(osm.before))).toEqual([]);

      // Every join (no create components) succeeded under both, with the same answer.
      for (const s of [osm, ours]) expect(s.joins.map((j) => j.status)).toEqual([0, 0, 0, 0]);
      expect(ours.joins).toEqual(osm.joins);
      for (const j of ours.joins) expect((j.record as Record<string, number>).qKey).toBe(0x0b1b);

      // After the joins, saquery prints the same under both.
      const mismatches: string[] = [];
      for (const [q, theirs] of osm.after) {
        const recs = parseSaquery(theirs);
        expect(recs.length, `OpenSM saquery ${q}`).toBeGreaterThan(0);
        mismatches.push(...diffRecords(`saquery ${q}`, parseSaquery(ours.after.get(q)!), recs));
      }
      expect(mismatches).toEqual([]);
      // The broadcast MLIDs are in the MFTs under ibsm (the walk above checked delivery); the
      // group nobody joined is in none.
      const mlidsInMfts = new Set([...ours.mfts.values()].flatMap((t) => [...t].filter(([, ports]) => ports.length > 0).map(([mlid]) => mlid)));
      expect([...mlidsInMfts].sort()).toEqual([0xc000, 0xc001]);
      // ibsm logged what it created.
      expect(hasCode(ours.log, 'IBSM-5010')).toBe(true);
    },
    6 * TIMEOUT,
  );
});

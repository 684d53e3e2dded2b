/** The SA on ibsim: ibsm's SA against OpenSM's, witnessed by saquery (infiniband-diags), on the
 * same fabric with the same LIDs (ibsm starts from the guid2lid OpenSM wrote). Then ibsm's own
 * client over RMPP, multicast forwarding through the switches' MFTs, and a fuzz of malformed SA
 * MADs. Every test starts its own ibsim and stops every process it started by PID. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { parseGuid2Lid } from '../src/sm/lids.js';
import { NodeType } from '../src/wire/mad.js';
import {
  TIMEOUT, hex16, linkLocalGid, planOf, spread, parseSaquery, diffRecords, saquery, client, startOpenSm, startIbsm, stopSa,
  fattreeFile, withIbsm, ibsmQuery, parseIbrouteMcast, mcastReach, waitFor, type PlanEndPort, type Plan, type RunningSa,
} from './helpers/sa-compare.js';
import { hasCode } from './helpers/log-lines.js';

/** The MGID both SAs are asked to create (a fixed one, so the records can be compared). */
const TEST_MGID = 'ff12:401b:ffff::1234';
const TEST_MGID_HEX = '0xff12401bffff00000000000000001234';
const SERVICE = { serviceId: '0x1000000000000abc', name: 'ibsm-acceptance', data8: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] };

/** The saquery invocations compared between the two SAs. */
function queriesOf(p: Plan, smLid: number): string[][] {
  const q: string[][] = [];
  const cas = p.ends.filter((e) => !e.switch);
  const sws = p.ends.filter((e) => e.switch);
  for (const e of spread(p.ends, 12)) q.push(['NR', String(e.lid)]);
  for (const e of spread(cas, 6)) q.push(['PIR', `${e.lid}/${e.port}`]);
  for (const s of spread(sws, 3)) {
    q.push(['PIR', `${s.lid}/0`]);
    const n = p.fabric.nodes[s.node]!;
    const cabled = n.ports.filter((x, i) => i > 0 && x?.peer).map((x) => x!.num);
    for (const pn of spread(cabled, 2)) q.push(['PIR', `${s.lid}/${pn}`]);
    q.push(['SWIR', String(s.lid)]);
    for (const pn of spread(cabled, 2)) q.push(['LR', `${s.lid}/${pn}`]);
  }
  for (const e of spread(cas, 6)) q.push(['LR', `${e.lid}/${e.port}`]);
  const pairs: Array<[PlanEndPort, PlanEndPort]> = [];
  for (const a of cas) for (const b of cas) if (a !== b) pairs.push([a, b]);
  for (const [a, b] of spread(pairs, 8)) q.push(['-p', '--src-to-dst', `${a.lid}:${b.lid}`]);
  for (const [a, b] of spread(pairs, 4)) q.push(['-p', '--sgid-to-dgid', `${linkLocalGid(a.guid)}-${linkLocalGid(b.guid)}`]);
  if (sws[0] && cas[0]) q.push(['-p', '--src-to-dst', `${cas[0].lid}:${sws[0].lid}`]);
  q.push(['SMIR', String(smLid)]);
  q.push(['-s']);
  return q;
}

// ---------------------------------------------------------------- saquery output


/** Fields that legitimately differ between two SAs, per saquery record kind. */
const EXCLUDED: Record<string, Record<string, string>> = {
  SMIR: {
    // SMInfo.ActCount counts the SM's management activity: it depends on the SM's implementation and timing.
    ActCount: 'activity counter',
  },
  PIR: {
    // PortInfo.LocalPortNum is the port the SM's SMP entered the node by. For a switch reached over
    // parallel links that is whichever link each SM discovered it through (seen: ibsm 3, OpenSM 5 or 3
    // from run to run); for a CA port it equals the record's PortNum, which is compared.
    LocalPort: "the port each SM's SMP came in by",
  },
  SWIR: {
    // saquery prints MulticastFDBTop only when the SA's ClassPortInfo advertises
    // IsMulticastFDBTopSupported (CapabilityMask2); OpenSM programs MulticastFDBTop and says so, ibsm does not.
    MulticastFDBTop: 'optional capability (ClassPortInfo CapabilityMask2)',
  },
  MCMR: {
    // The MLID is the SA's choice: OpenSM pre-creates the IPoIB broadcast group (0xC000) at start, so
    // the first group a client creates gets 0xC001 there.
    mlid: 'SA-chosen MLID',
    // The creator gave no PacketLifeTime: the value is the SA's choice.
    pkt_life: 'SA-chosen default for the group',
  },
};

interface Observed {
  outputs: Map<string, { code: number | null; out: string }>;
  join: Record<string, unknown>;
  service: Record<string, unknown>;
  guid2lid: string;
}

/** Bring up one SA on a fresh ibsim, make a join and a service registration from `clientHost`,
 * then run every query from `queryHost`. */
async function observe(kind: 'opensm' | 'ibsm', file: string, guid2lid?: string): Promise<Observed> {
  const ib = await startIbsim(file);
  let sa: RunningSa | undefined;
  try {
    sa = kind === 'opensm' ? await startOpenSm(ib) : await startIbsm(ib, guid2lid!);
    const g2l = readFileSync(sa.guid2lid, 'utf8');
    const plan = planOf(file, g2l);
    const [clientHost, queryHost] = [plan.caHosts[0]!, plan.caHosts.at(-1)!];
    const smLid = plan.ends[0]!.lid; // both SMs run at the first node of the file
    const c = await client(ib, clientHost, [
      { op: 'join', mgid: TEST_MGID_HEX, joinState: 1 },
      { op: 'register', ...SERVICE },
    ]);
    const outputs = new Map<string, { code: number | null; out: string }>();
    for (const args of [...queriesOf(plan, smLid), ['MCMR', '--mgid', TEST_MGID], ['-S']]) {
      outputs.set(args.join(' '), await saquery(ib, queryHost, args));
    }
    return { outputs, join: c.lines[0]!, service: c.lines[1]!, guid2lid: g2l };
  } finally {
    await stopSa(sa, kind);
    await ib.stop();
  }
}

/** The record fields saquery printed agree with the topology (LIDs from guid2lid). */
function checkAgainstFabric(plan: Plan, outputs: Observed['outputs']): string[] {
  const bad: string[] = [];
  const byLid = new Map(plan.ends.map((e) => [e.lid, e]));
  for (const [q, r] of outputs) {
    const recs = parseSaquery(r.out);
    const args = q.split(' ');
    if (args[0] === 'NR') {
      const e = byLid.get(Number(args[1]))!;
      const n = plan.fabric.nodes[e.node]!;
      const f = recs[0]?.fields;
      if (recs.length !== 1 || !f) {
        bad.push(`${q}: ${recs.length} records`);
        continue;
      }
      if (f.get('node_guid') !== `0x${n.guid.toString(16).padStart(16, '0')}`) bad.push(`${q}: node_guid ${f.get('node_guid')}`);
      if (f.get('port_guid') !== `0x${e.guid.toString(16).padStart(16, '0')}`) bad.push(`${q}: port_guid ${f.get('port_guid')}`);
      if (f.get('lid') !== String(e.lid)) bad.push(`${q}: lid ${f.get('lid')}`);
      if (f.get('node_type') !== (e.switch ? 'Switch' : 'Channel Adapter')) bad.push(`${q}: node_type ${f.get('node_type')}`);
    } else if (args[0] === 'LR') {
      const [lid, port] = args[1]!.split('/').map(Number) as [number, number];
      const e = byLid.get(lid)!;
      const peer = plan.fabric.nodes[e.node]!.ports[port]!.peer!;
      const pn = plan.fabric.nodes[peer.node]!;
      const peerLid = plan.lidOfGuid.get(pn.ports[pn.type === NodeType.Switch ? 0 : peer.port]!.guid);
      const f = recs[0]?.fields;
      if (recs.length !== 1 || !f || f.get('ToLID') !== String(peerLid) || f.get('ToPort') !== String(peer.port)) {
        bad.push(`${q}: expected one link to LID ${peerLid} port ${peer.port}, got ${JSON.stringify(recs.map((x) => Object.fromEntries(x.fields)))}`);
      }
    } else if (args[0] === '-p' && args[1] === '--src-to-dst') {
      const [s, d] = args[2]!.split(':').map(Number) as [number, number];
      const f = recs[0]?.fields;
      if (recs.length !== 1 || !f) {
        bad.push(`${q}: ${recs.length} records`);
        continue;
      }
      if (f.get('slid') !== String(s) || f.get('dlid') !== String(d)) bad.push(`${q}: slid/dlid ${f.get('slid')}/${f.get('dlid')}`);
      if (f.get('sgid') !== linkLocalGid(byLid.get(s)!.guid) || f.get('dgid') !== linkLocalGid(byLid.get(d)!.guid)) bad.push(`${q}: sgid/dgid ${f.get('sgid')}/${f.get('dgid')}`);
    } else if (args[0] === 'SWIR') {
      if (recs.length !== 1 || recs[0]!.fields.get('LID') !== args[1]) bad.push(`${q}: ${JSON.stringify(recs.map((x) => Object.fromEntries(x.fields)))}`);
    }
  }
  return bad;
}

describe('SA records on ibsim: ibsm and OpenSM print the same through saquery', () => {
  for (const [name, fileOf] of [
    ['net.2sw2path4hca', () => path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca')],
    ['a generated fat tree (4 leaves, 2 spines, 16 hosts)', fattreeFile],
  ] as const) {
    it(
      `${name}: NodeRecord, PortInfoRecord, PathRecord (LIDs and GIDs), SwitchInfoRecord, LinkRecord, SMInfoRecord, MCMemberRecord, ServiceRecord`,
      async () => {
        const file = fileOf();
        const osm = await observe('opensm', file);
        const ours = await observe('ibsm', file, (() => {
          const f = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-g2l-')), 'guid2lid');
          writeFileSync(f, osm.guid2lid);
          return f;
        })());
        // Same LIDs (ibsm took OpenSM's guid2lid and must keep it).
        expect(parseGuid2Lid(ours.guid2lid)).toEqual(parseGuid2Lid(osm.guid2lid));
        const plan = planOf(file, osm.guid2lid);

        // The join and registration answers (the Set responses) agree.
        expect(ours.join.status).toBe(0);
        expect(osm.join.status).toBe(0);
        const { mlid: ourMlid, packetLifeTime: _ourLife, ...ourJoin } = ours.join.record as Record<string, unknown>;
        const { mlid: osmMlid, packetLifeTime: _osmLife, ...osmJoin } = osm.join.record as Record<string, unknown>;
        expect(ourJoin).toEqual(osmJoin);
        for (const mlid of [ourMlid, osmMlid]) expect(Number(mlid)).toBeGreaterThanOrEqual(0xc000);
        expect(ours.service).toEqual(osm.service);

        const mismatches: string[] = [];
        for (const [q, theirs] of osm.outputs) {
          const mine = ours.outputs.get(q)!;
          if (mine.code !== theirs.code) mismatches.push(`saquery ${q}: exit ${mine.code} under ibsm, ${theirs.code} under OpenSM`);
          mismatches.push(...diffRecords(`saquery ${q}`, parseSaquery(mine.out), parseSaquery(theirs.out), EXCLUDED[q.split(' ')[0]!]));
        }
        // Both SAs answered every query with something (not two empty outputs agreeing).
        for (const [q, r] of osm.outputs) expect(parseSaquery(r.out).length, `OpenSM saquery ${q}`).toBeGreaterThan(0);
        expect(mismatches).toEqual([]);
        expect(checkAgainstFabric(plan, ours.outputs)).toEqual([]);
        expect(checkAgainstFabric(plan, osm.outputs)).toEqual([]);
      },
      6 * TIMEOUT,
    );
  }
});


describe('ibsm query over ibsim: full GetTables through RMPP on both ends', () => {
  it('nodes: exactly the fabric end ports; path --slid: one path per destination LID; trace: the hops ibtracert walks', async () => {
    const file = fattreeFile();
    await withIbsm(file, async (ib, plan) => {
      const host = plan.caHosts.at(-1)!;
      const nodes = await ibsmQuery(ib, host, ['nodes']);
      // One NodeRecord per end port (switch port 0, cabled CA port), each with its LID and GUIDs.
      const want = plan.ends.map((e) => `${e.lid} 0x${plan.fabric.nodes[e.node]!.guid.toString(16).padStart(16, '0')} 0x${e.guid.toString(16).padStart(16, '0')}`).sort();
      const got = nodes.map((n) => {
        const ni = n.nodeInfo as Record<string, string>;
        return `${String(n.lid)} ${ni.nodeGuid} ${ni.portGuid}`;
      });
      expect(got.sort()).toEqual(want);
      expect(nodes.length * 112).toBeGreaterThan(200); // more than one MAD: RMPP really ran

      const src = plan.ends.find((e) => !e.switch)!;
      const paths = await ibsmQuery(ib, host, ['path', '--slid', String(src.lid)]);
      expect(paths.every((p) => p.slid === src.lid)).toBe(true);
      expect(paths.map((p) => p.dlid as number).sort((a, b) => a - b)).toEqual(plan.ends.map((e) => e.lid).sort((a, b) => a - b));

      // TraceRecords against ibtracert (which reads the switches' LFTs) for a few destinations.
      for (const dst of spread(plan.ends.filter((e) => !e.switch && e !== src), 4)) {
        const trace = await ibsmQuery(ib, host, ['trace', '--slid', String(src.lid), '--dlid', String(dst.lid)]);
        const r = await runPreloaded('ibtracert', [String(src.lid), String(dst.lid)], { ibsim: ib, simHost: host, timeoutMs: 20_000 });
        expect(r.code).toBe(0);
        const switchesWalked = [...r.stdout.matchAll(/-> switch port \{0x([0-9a-f]+)\}\[(\d+)\]/g)].map((m) => BigInt('0x' + m[1]));
        const exits = [...r.stdout.matchAll(/^\[(\d+)\] ->/gm)].map((m) => Number(m[1]));
        const traceSwitches = trace.filter((t) => t.nodeType === NodeType.Switch).map((t) => BigInt(t.nodeId as string));
        expect(traceSwitches, `trace ${src.lid} -> ${dst.lid}`).toEqual(switchesWalked);
        // exit ports: the source CA's, then each switch's
        expect(trace.filter((t) => (t.exitPort as number) > 0).slice(0, exits.length).map((t) => t.exitPort)).toEqual(exits);
      }
    });
  }, 3 * TIMEOUT);
});


describe('multicast through ibsim', () => {
  it('two CAs join one group (the first creates it with MGID 0); every switch MFT delivers between them; after both leave the MLID is gone', async () => {
    const file = fattreeFile();
    await withIbsm(file, async (ib, plan) => {
      const cas = plan.ends.filter((e) => !e.switch);
      // Two hosts on different leaves (first and last CA of the file).
      const [hostA, hostB] = [plan.caHosts[0]!, plan.caHosts.at(-1)!];
      const a = await client(ib, hostA, [{ op: 'local' }, { op: 'join', mgid: '0x0', joinState: 1 }]);
      const created = a.lines[1]!;
      expect(created.status).toBe(0);
      const rec = created.record as Record<string, string | number>;
      const mgid = String(rec.mgid);
      expect(BigInt(mgid) >> 120n).toBe(0xffn); // a multicast GID the SA assigned
      const mlid = Number(rec.mlid);
      expect(mlid).toBeGreaterThanOrEqual(0xc000);
      const b = await client(ib, hostB, [{ op: 'local' }, { op: 'join', mgid, joinState: 1 }]);
      expect(b.lines[1]!.status).toBe(0);
      expect(Number((b.lines[1]!.record as Record<string, number>).mlid)).toBe(mlid);
      const members = [a, b].map((c) => cas.find((e) => e.guid === BigInt(c.lines[0]!.portGuid as string))!);
      expect(members[0]!.node).not.toBe(members[1]!.node);

      const readMfts = async (): Promise<Map<number, Map<number, number[]>>> => {
        const m = new Map<number, Map<number, number[]>>();
        for (const s of plan.ends.filter((e) => e.switch)) {
          const r = await runPreloaded('ibroute', ['-M', String(s.lid)], { ibsim: ib, simHost: hostA, timeoutMs: 20_000 });
          if (r.code !== 0) throw new Error(`ibroute -M ${s.lid}: ${r.stderr}`);
          m.set(s.node, parseIbrouteMcast(r.stdout));
        }
        return m;
      };
      // The SM programs the MFTs after the join: wait until both members reach each other.
      let last = '';
      await waitFor(
        'MFTs deliver between the members',
        async () => {
          const mfts = await readMfts();
          const ok = members.every((m, i) => {
            const { reached, loops } = mcastReach(plan, mfts, m, mlid);
            last = JSON.stringify({ from: m.lid, reached: [...reached].map(hex16), loops });
            return loops.length === 0 && reached.has(members[1 - i]!.guid);
          });
          return ok;
        },
        20_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; last walk ${last}`);
      });
      // Nothing reaches a CA that is not a member.
      const mfts = await readMfts();
      for (const m of members) {
        const { reached } = mcastReach(plan, mfts, m, mlid);
        expect([...reached].filter((g) => !members.some((x) => x.guid === g)).map(hex16)).toEqual([]);
      }

      expect((await client(ib, hostA, [{ op: 'leave', mgid, joinState: 1 }])).lines[0]!.status).toBe(0);
      expect((await client(ib, hostB, [{ op: 'leave', mgid, joinState: 1 }])).lines[0]!.status).toBe(0);
      await waitFor('the MLID leaves every MFT', async () => [...(await readMfts()).values()].every((t) => !(t.get(mlid) ?? []).length), 20_000);
    });
  }, 3 * TIMEOUT);
});

describe('fuzzing ibsm SA through ibsim', () => {
  it('answers every malformed SA MAD with a non-zero status, drops those with a wrong SA_Key unanswered, then still answers a NodeRecord Get; the SM stays up', async () => {
    await withIbsm(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'), async (ib, plan, sm) => {
      const host = plan.caHosts.at(-1)!;
      const target = plan.ends.find((e) => !e.switch)!;
      const c = await client(ib, host, [{ op: 'fuzz', count: 300, seed: 20261129 }, { op: 'nodeRecord', lid: target.lid }], 60_000);
      const fz = c.lines[0] as { sent: number; byCase: Record<string, { sent: number; answered: number; nonZero: number; zeroStatus: number; noAnswer: number; statuses: Record<string, number> }> };
      const summary = Object.fromEntries(Object.entries(fz.byCase).map(([k, v]) => [k, { sent: v.sent, answered: v.answered, nonZero: v.nonZero, statuses: v.statuses }]));
      for (const [name, v] of Object.entries(fz.byCase)) {
        expect(v.sent, name).toBeGreaterThan(0);
        if (name === 'wrongKey') continue;
        expect({ case: name, answered: v.answered, nonZero: v.nonZero }, JSON.stringify(summary)).toEqual({ case: name, answered: v.sent, nonZero: v.sent });
      }
      // A wrong non-zero SA_Key: no answer (as OpenSM), said in the log (rate-limited per requester).
      expect(fz.byCase.wrongKey!.noAnswer, JSON.stringify(summary)).toBe(fz.byCase.wrongKey!.sent);
      expect(hasCode(sm.log(), 'IBSM-5040')).toBe(true);
      // Specific codes where the spec names one.
      expect(Object.keys(fz.byCase.badAttr!.statuses)).toEqual(['0x000c']);
      expect(Object.keys(fz.byCase.badMethod!.statuses).every((s) => s === '0x0008' || s === '0x000c')).toBe(true);
      expect(Object.keys(fz.byCase.badVersion!.statuses)).toEqual(['0x0004']);
      const nr = c.lines[1] as { status: number; record: { lid: number; nodeInfo: { portGuid: string } } };
      expect(nr.status).toBe(0);
      expect(nr.record.lid).toBe(target.lid);
      expect(BigInt(nr.record.nodeInfo.portGuid)).toBe(target.guid);
      // the SM process is still running (stopSa then checks it exits 0 on SIGTERM)
      expect(() => process.kill(sm.proc.pid, 0)).not.toThrow();
    });
  }, 2 * TIMEOUT);
});

import { describe, expect, it } from 'vitest';
import { generateFabric } from '../src/model/generators.js';
import { assignLids } from '../src/sm/lids.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { PartitionPlan, parsePartitions } from '../src/model/partitions.js';
import type { SmSnapshot } from '../src/sm/sm.js';
import type { SaContext, SaQuery, SaRequester, SaAnswer } from '../src/sa/types.js';
import { MulticastManager, MC_CREATE_MASK, MC_JOIN_MASK, type McGroupEvent } from '../src/sa/multicast.js';
import { computeMfts, MCAST_LID_BASE, type MftPlan } from '../src/routing/mcast-tree.js';
import { mftBlocks, MftCache, mftKeyParts } from '../src/sm/mft-blocks.js';
import { indexEndPorts } from '../src/model/snapshot.js';

/** A port by GUID as a bare node/port reference (what the old SA port lookup returned). */
function fabricPorts(f: Fabric): { byGuid: { get(g: bigint): PeerRef | undefined } } {
  const idx = indexEndPorts(f);
  return { byGuid: { get: (g) => { const e = idx.byGuid.get(g); return e && { node: e.node, port: e.port }; } } };
}
import { JoinState, MCMemberRecord, SaStatus, Selector, SA_DATA_SIZE } from '../src/wire/sa.js';
import { Method } from '../src/wire/mad.js';
import type { DeepPartial } from '../src/wire/layout.js';
import type { Fabric, PeerRef } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { Rng } from '../src/util/rng.js';

const PREFIX = 0xfe80000000000000n;

function ctxFor(spec: string, partitions = PartitionPlan.defaultPlan(), engine = 'minhop'): SaContext {
  const fabric = generateFabric(spec, { seed: 1 });
  const lids = assignLids(fabric, { lmc: 0 });
  const routed = routeWithFallback(fabric, [engine], { lmc: 0 });
  const snapshot: SmSnapshot = {
    fabric,
    discovery: { fabric, nodes: [], smNode: 0, smPort: 0, smps: 0, maxDepth: 0 },
    routing: routed.result,
    maxLid: lids.maxLid,
    smLid: 1,
    sweep: 1,
  };
  return { snapshot, partitions, smPortGuid: 0x1234n, smKey: 0n, now: 0 };
}

/** CA ports of the fabric, in node order. */
function caPorts(f: Fabric): PeerRef[] {
  const out: PeerRef[] = [];
  f.nodes.forEach((n, ni) => {
    if (isSwitch(n)) return;
    n.ports.forEach((p, pi) => {
      if (pi > 0 && p?.peer) out.push({ node: ni, port: pi });
    });
  });
  return out;
}
const guidOf = (f: Fabric, r: PeerRef): bigint => f.nodes[r.node]!.ports[r.port]!.guid;
const lidOf = (f: Fabric, r: PeerRef): number => f.nodes[r.node]!.ports[r.port]!.lid!;
const gidOf = (f: Fabric, r: PeerRef): bigint => (PREFIX << 64n) | guidOf(f, r);
const who = (f: Fabric, r: PeerRef, trusted = false): SaRequester => ({ lid: lidOf(f, r), portGuid: guidOf(f, r), smKey: trusted ? 1n : 0n, trusted, qpn: 1 });

function query(method: number, rec: DeepPartial<MCMemberRecord>, mask: bigint, requester: SaRequester): SaQuery {
  const data = new Uint8Array(SA_DATA_SIZE);
  MCMemberRecord.encode(rec, data, 0);
  return { method, attrId: 0x38, attrMod: 0, componentMask: mask, data, requester };
}
function records(a: SaAnswer): MCMemberRecord[] {
  if (a.kind !== 'records') throw new Error(`expected records, got status 0x${a.status.toString(16)}`);
  return a.records.map((r) => MCMemberRecord.decode(r));
}
const statusOf = (a: SaAnswer): number => (a.kind === 'status' ? a.status : 0);

const createRec = (portGid: bigint, joinState: number, mgid = 0n): DeepPartial<MCMemberRecord> => ({ mgid, portGid, joinState, qKey: 0x11111111, pKey: 0xffff, tClass: 0, flowLabel: 0, sl: 0 });

describe('MulticastManager: join, leave, query', () => {
  const ctx = ctxFor('gen:fattree2:leaves=4,spines=2,hosts=3');
  const f = ctx.snapshot.fabric;
  const cas = caPorts(f);
  const [a, b, c, d] = [cas[0]!, cas[4]!, cas[8]!, cas[11]!];

  it('creates a group with an SA-assigned MGID and MLID 0xC000, then joins full / non-member / send-only', () => {
    const mm = new MulticastManager();
    const events: McGroupEvent[] = [];
    mm.onGroupsChanged((e) => events.push(e));
    const r0 = records(mm.handle(query(Method.Set, createRec(gidOf(f, a), JoinState.FullMember), MC_CREATE_MASK, who(f, a)), ctx));
    expect(r0).toHaveLength(1);
    const g = r0[0]!;
    expect(g.mlid).toBe(MCAST_LID_BASE);
    expect(g.mgid >> 112n).toBe(0xff12n); // link-local, transient
    expect((g.mgid >> 96n) & 0xffffn).toBe(0xa01bn);
    expect((g.mgid >> 80n) & 0xffffn).toBe(0xffffn);
    expect(g.joinState).toBe(JoinState.FullMember);
    expect(g.portGid).toBe(gidOf(f, a));
    expect(g.mtuSelector).toBe(Selector.Exactly);
    expect(events).toEqual([{ kind: 'created', mgid: g.mgid, mlid: g.mlid }]);

    const join = (p: PeerRef, js: number): MCMemberRecord =>
      records(mm.handle(query(Method.Set, { mgid: g.mgid, portGid: gidOf(f, p), joinState: js }, MC_JOIN_MASK, who(f, p)), ctx))[0]!;
    expect(join(b, JoinState.NonMember).joinState).toBe(JoinState.NonMember);
    expect(join(c, JoinState.SendOnlyNonMember).mlid).toBe(g.mlid);
    // merging bits for the same port
    expect(join(b, JoinState.FullMember).joinState).toBe(JoinState.FullMember | JoinState.NonMember);
    expect(mm.get(g.mgid)!.members.size).toBe(3);
    expect(events.filter((e) => e.kind === 'membership')).toHaveLength(3);

    // a trusted GetTable lists every member with its join state
    const all = records(mm.handle(query(Method.GetTable, { mgid: g.mgid }, MCMemberRecord.mask('mgid'), who(f, d, true)), ctx));
    expect(new Map(all.map((r) => [r.portGid, r.joinState]))).toEqual(
      new Map([
        [gidOf(f, a), 1],
        [gidOf(f, b), 3],
        [gidOf(f, c), 4],
      ]),
    );
    // untrusted: one group record, PortGID / JoinState zero
    const pub = records(mm.handle(query(Method.GetTable, {}, 0n, who(f, d)), ctx));
    expect(pub).toHaveLength(1);
    expect(pub[0]!.portGid).toBe(0n);
    expect(pub[0]!.joinState).toBe(0);
    expect(pub[0]!.mgid).toBe(g.mgid);

    // leave: clear bits, member stays while bits remain; last full member leaving removes the group
    const leave = (p: PeerRef, js: number): SaAnswer => mm.handle(query(Method.Delete, { mgid: g.mgid, portGid: gidOf(f, p), joinState: js }, MC_JOIN_MASK, who(f, p)), ctx);
    expect(records(leave(b, JoinState.FullMember))[0]!.joinState).toBe(JoinState.NonMember);
    expect(statusOf(leave(b, JoinState.FullMember))).toBe(SaStatus.ReqInvalid); // bit no longer set
    expect(mm.get(g.mgid)!.members.get(guidOf(f, b))!.joinState).toBe(JoinState.NonMember);
    expect(records(leave(a, JoinState.FullMember))[0]!.joinState).toBe(0);
    expect(mm.get(g.mgid)).toBeUndefined();
    expect(mm.mlidsInUse).toBe(0);
    expect(events.at(-1)).toEqual({ kind: 'deleted', mgid: g.mgid, mlid: g.mlid });
  });

  it('rejects bad requests with the spec statuses', () => {
    const mm = new MulticastManager();
    // join mask incomplete
    expect(statusOf(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1), MCMemberRecord.mask('mgid', 'portGid'), who(f, a)), ctx))).toBe(SaStatus.ReqInsufficientComponents);
    // create without Q_Key etc.
    expect(statusOf(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1), MC_JOIN_MASK, who(f, a)), ctx))).toBe(SaStatus.ReqInsufficientComponents);
    // create by a non-member
    expect(statusOf(mm.handle(query(Method.Set, createRec(gidOf(f, a), JoinState.NonMember), MC_CREATE_MASK, who(f, a)), ctx))).toBe(SaStatus.ReqInvalid);
    // JoinState 0, unknown port
    expect(statusOf(mm.handle(query(Method.Set, createRec(gidOf(f, a), 0), MC_CREATE_MASK, who(f, a)), ctx))).toBe(SaStatus.ReqInvalid);
    expect(statusOf(mm.handle(query(Method.Set, createRec((PREFIX << 64n) | 0xdeadn, 1), MC_CREATE_MASK, who(f, a)), ctx))).toBe(SaStatus.ReqInvalid);
    // A01B signature with link-local scope is the SA's own: refused when requested
    const bad = (0xff12a01bn << 96n) | 5n;
    expect(statusOf(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1, bad), MC_CREATE_MASK, who(f, a)), ctx))).toBe(SaStatus.ReqInvalid);
    // an IPoIB MGID is fine
    const ipoib = (0xff12401bffffn << 80n) | 0xffffffffn;
    const g = records(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1, ipoib), MC_CREATE_MASK, who(f, a)), ctx))[0]!;
    expect(g.mgid).toBe(ipoib);
    // join with a mismatching Q_Key, or an MTU selector the group does not satisfy
    expect(statusOf(mm.handle(query(Method.Set, { mgid: ipoib, portGid: gidOf(f, b), joinState: 1, qKey: 7 }, MC_JOIN_MASK | MCMemberRecord.mask('qKey'), who(f, b)), ctx))).toBe(SaStatus.ReqInvalid);
    const mtuMask = MC_JOIN_MASK | MCMemberRecord.mask('mtuSelector', 'mtu');
    expect(statusOf(mm.handle(query(Method.Set, { mgid: ipoib, portGid: gidOf(f, b), joinState: 1, mtuSelector: Selector.GreaterThan, mtu: 5 }, mtuMask, who(f, b)), ctx))).toBe(SaStatus.ReqInvalid);
    expect(mm.handle(query(Method.Set, { mgid: ipoib, portGid: gidOf(f, b), joinState: 1, mtuSelector: Selector.Exactly, mtu: g.mtu }, mtuMask, who(f, b)), ctx).kind).toBe('records');
    // another port may not change b's (non-proxy) membership
    expect(statusOf(mm.handle(query(Method.Delete, { mgid: ipoib, portGid: gidOf(f, b), joinState: 1 }, MC_JOIN_MASK, who(f, c)), ctx))).toBe(SaStatus.ReqInvalid);
    // leave of an unknown group
    expect(statusOf(mm.handle(query(Method.Delete, { mgid: ipoib + 1n, portGid: gidOf(f, b), joinState: 1 }, MC_JOIN_MASK, who(f, b)), ctx))).toBe(SaStatus.ReqInvalid);
    // Get with no match / several matches
    expect(statusOf(mm.handle(query(Method.Get, { mgid: 1n }, MCMemberRecord.mask('mgid'), who(f, a)), ctx))).toBe(SaStatus.NoRecords);
  });

  it('hides groups of partitions the requester does not hold', () => {
    const plan = parsePartitions(`Default=0x7fff : ALL=full ;\nSecret=0x0005 : ${'0x' + guidOf(f, a).toString(16)}=full, ${'0x' + guidOf(f, b).toString(16)}=full ;`);
    const pctx = { ...ctx, partitions: plan };
    const mm = new MulticastManager();
    const g = records(mm.handle(query(Method.Set, { ...createRec(gidOf(f, a), 1), pKey: 0x8005 }, MC_CREATE_MASK, who(f, a)), pctx))[0]!;
    expect(records(mm.handle(query(Method.GetTable, {}, 0n, who(f, b)), pctx))).toHaveLength(1);
    expect(records(mm.handle(query(Method.GetTable, {}, 0n, who(f, c)), pctx))).toHaveLength(0);
    // c cannot join a partition it is not in
    expect(statusOf(mm.handle(query(Method.Set, { mgid: g.mgid, portGid: gidOf(f, c), joinState: 1 }, MC_JOIN_MASK, who(f, c)), pctx))).toBe(SaStatus.ReqInvalid);
  });

  it('reuses MLIDs without leaks over many create/delete cycles', () => {
    const mm = new MulticastManager({ maxMlid: MCAST_LID_BASE + 15 });
    const rng = new Rng(7);
    const live: bigint[] = [];
    let highest = 0;
    for (let i = 0; i < 600; i++) {
      if (live.length < 16 && (live.length === 0 || rng.chance(0.55))) {
        const r = records(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1), MC_CREATE_MASK, who(f, a)), ctx))[0]!;
        highest = Math.max(highest, r.mlid);
        live.push(r.mgid);
      } else {
        const k = rng.int(live.length);
        const mgid = live.splice(k, 1)[0]!;
        expect(mm.handle(query(Method.Delete, { mgid, portGid: gidOf(f, a), joinState: 1 }, MC_JOIN_MASK, who(f, a)), ctx).kind).toBe('records');
      }
      expect(mm.mlidsInUse).toBe(live.length);
      const mlids = mm.list().map((g) => g.mlid);
      expect(new Set(mlids).size).toBe(mlids.length);
    }
    expect(highest).toBeLessThanOrEqual(MCAST_LID_BASE + 15);
    // full: the 17th concurrent group gets NoResources
    while (live.length < 16) live.push(records(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1), MC_CREATE_MASK, who(f, a)), ctx))[0]!.mgid);
    expect(statusOf(mm.handle(query(Method.Set, createRec(gidOf(f, a), 1), MC_CREATE_MASK, who(f, a)), ctx))).toBe(SaStatus.NoResources);
  });
});

describe('send-only members and partial leaves (OpenSM PR #43: no MLID leaked)', () => {
  const ctx = ctxFor('gen:fattree2:leaves=4,spines=2,hosts=3');
  const f = ctx.snapshot.fabric;
  const cas = caPorts(f);
  const [a, b] = [cas[0]!, cas[4]!];
  const join = (mm: MulticastManager, r: PeerRef, mgid: bigint, joinState: number): number =>
    statusOf(mm.handle(query(Method.Set, { mgid, portGid: gidOf(f, r), joinState }, MC_JOIN_MASK, who(f, r)), ctx));
  const leave = (mm: MulticastManager, r: PeerRef, mgid: bigint, joinState: number): number =>
    statusOf(mm.handle(query(Method.Delete, { mgid, portGid: gidOf(f, r), joinState }, MC_JOIN_MASK, who(f, r)), ctx));

  it('a send-only full member keeps the group after the full member leaves; its leave frees the MLID', () => {
    const mm = new MulticastManager();
    const g = records(mm.handle(query(Method.Set, createRec(gidOf(f, a), JoinState.FullMember), MC_CREATE_MASK, who(f, a)), ctx))[0]!;
    expect(join(mm, b, g.mgid, JoinState.SendOnlyFullMember)).toBe(0);
    expect(leave(mm, a, g.mgid, JoinState.FullMember)).toBe(0);
    expect(mm.get(g.mgid)?.members.size).toBe(1);
    expect(leave(mm, b, g.mgid, JoinState.SendOnlyFullMember)).toBe(0);
    expect(mm.get(g.mgid)).toBeUndefined();
    expect(mm.mlidsInUse).toBe(0);
  });

  it('a partial leave of the send-only bit keeps the membership; the last full bit leaving frees the MLID for the next group', () => {
    const mm = new MulticastManager();
    const g = records(mm.handle(query(Method.Set, createRec(gidOf(f, a), JoinState.FullMember), MC_CREATE_MASK, who(f, a)), ctx))[0]!;
    expect(join(mm, b, g.mgid, JoinState.SendOnlyNonMember)).toBe(0);
    expect(join(mm, b, g.mgid, JoinState.FullMember)).toBe(0);
    expect(mm.get(g.mgid)!.members.get(guidOf(f, b))!.joinState).toBe(JoinState.SendOnlyNonMember | JoinState.FullMember);
    expect(leave(mm, b, g.mgid, JoinState.SendOnlyNonMember)).toBe(0); // partial: the full bit stays
    expect(mm.get(g.mgid)!.members.get(guidOf(f, b))!.joinState).toBe(JoinState.FullMember);
    expect(leave(mm, a, g.mgid, JoinState.FullMember)).toBe(0);
    expect(mm.get(g.mgid)?.mlid).toBe(g.mlid); // b is still a full member
    // b leaves its full bit while a send-only non-member (a again) remains: no full member, the group goes.
    expect(join(mm, a, g.mgid, JoinState.SendOnlyNonMember)).toBe(0);
    expect(leave(mm, b, g.mgid, JoinState.FullMember)).toBe(0);
    expect(mm.get(g.mgid)).toBeUndefined();
    expect(mm.mlidsInUse).toBe(0);
    const next = records(mm.handle(query(Method.Set, createRec(gidOf(f, a), JoinState.FullMember), MC_CREATE_MASK, who(f, a)), ctx))[0]!;
    expect(next.mlid).toBe(g.mlid);
  });
});

// ---------------------------------------------------------------- MFT trees

/** Flood one packet from `src` through the MFTs; returns deliveries per end port and fails on a loop. */
function flood(f: Fabric, plan: MftPlan, mlid: number, src: PeerRef): Map<string, number> {
  const got = new Map<string, number>();
  const visits = new Map<number, number>();
  const n = f.nodes[src.node]!;
  const start: [number, number] = isSwitch(n) ? [src.node, 0] : [n.ports[src.port]!.peer!.node, n.ports[src.port]!.peer!.port];
  const queue: Array<[number, number]> = [start];
  while (queue.length) {
    const [s, inPort] = queue.shift()!;
    const v = (visits.get(s) ?? 0) + 1;
    visits.set(s, v);
    if (v > 1) throw new Error(`switch ${s} received the packet ${v} times (loop or duplicate)`);
    const mask = plan.bySwitch.get(s)?.get(mlid) ?? 0n;
    for (let p = 0; 1n << BigInt(p) <= mask; p++) {
      if (!((mask >> BigInt(p)) & 1n) || p === inPort) continue;
      if (p === 0) {
        const k = `${s}:0`;
        got.set(k, (got.get(k) ?? 0) + 1);
        continue;
      }
      const peer = f.nodes[s]!.ports[p]?.peer;
      if (!peer) throw new Error(`switch ${s} forwards to unconnected port ${p}`);
      if (isSwitch(f.nodes[peer.node]!)) queue.push([peer.node, peer.port]);
      else {
        const k = `${peer.node}:${peer.port}`;
        got.set(k, (got.get(k) ?? 0) + 1);
      }
    }
  }
  return got;
}

function checkDelivery(f: Fabric, plan: MftPlan, mlid: number, members: PeerRef[]): void {
  const key = (r: PeerRef): string => `${r.node}:${r.port}`;
  for (const src of members) {
    const got = flood(f, plan, mlid, src);
    const want = new Map(members.filter((m) => key(m) !== key(src)).map((m) => [key(m), 1]));
    expect(got).toEqual(want);
  }
}

describe('MFT spanning trees', () => {
  const cases: Array<[string, string]> = [
    ['gen:fattree2:leaves=6,spines=3,hosts=4', 'minhop'],
    ['gen:fattree2:leaves=4,spines=2,hosts=3,links=2', 'minhop'],
    ['gen:fattree3:pods=4,leaves=2,spines=2,cores=4,hosts=2', 'minhop'],
    ['gen:torus:4x4,hosts=1', 'minhop'],
    ['gen:torus:3x3x3,hosts=1', 'updn'],
    ['gen:random:switches=12,degree=3,hosts=2,seed=5', 'minhop'],
  ];
  for (const [spec, engine] of cases) {
    it(`delivers to every member exactly once, loop-free: ${spec}`, () => {
      const ctx = ctxFor(spec, PartitionPlan.defaultPlan(), engine);
      const f = ctx.snapshot.fabric;
      const cas = caPorts(f);
      const switches = f.nodes.map((n, i) => (isSwitch(n) ? i : -1)).filter((i) => i >= 0);
      const rng = new Rng(spec.length);
      const groups = Array.from({ length: 8 }, (_, gi) => {
        const k = gi === 0 ? cas.length : 2 + rng.int(Math.max(1, cas.length - 2));
        const members = [...cas].sort(() => rng.next() - 0.5).slice(0, k);
        if (gi % 3 === 1) members.push({ node: switches[rng.int(switches.length)]!, port: 0 }); // a switch's own port
        return { mlid: MCAST_LID_BASE + gi * 7, members };
      });
      for (const lfts of [ctx.snapshot.routing.lfts, undefined]) {
        const plan = computeMfts(f, lfts, groups);
        expect(plan.notes).toEqual([]);
        for (const g of groups) checkDelivery(f, plan, g.mlid, g.members);
      }
    });
  }

  it('falls back to shortest paths when the unicast tables lead nowhere', () => {
    const ctx = ctxFor('gen:fattree2:leaves=4,spines=2,hosts=2');
    const f = ctx.snapshot.fabric;
    const broken = new Map([...ctx.snapshot.routing.lfts].map(([s, l]) => [s, new Uint8Array(l.length).fill(255)]));
    const members = caPorts(f);
    const plan = computeMfts(f, broken, [{ mlid: 0xc001, members }]);
    checkDelivery(f, plan, 0xc001, members);
  });

  it('blocks follow MLID/position, and the cache writes only what changed', () => {
    const ctx = ctxFor('gen:fattree2:leaves=4,spines=2,hosts=3');
    const f = ctx.snapshot.fabric;
    const cas = caPorts(f);
    const sw = f.nodes.findIndex((n) => isSwitch(n));
    const masks = new Map<number, bigint>([
      [0xc000, 0b1010n],
      [0xc021, (1n << 17n) | 1n],
    ]);
    const blocks = mftBlocks(masks);
    expect([...blocks.keys()].map(mftKeyParts)).toEqual([
      { block: 0, position: 0 },
      { block: 1, position: 0 },
      { block: 1, position: 1 },
    ]);
    expect(blocks.get(0)![0]).toBe(0b1010);
    expect(blocks.get(1)![1]).toBe(1);
    expect(blocks.get(1 | (1 << 28))![1]).toBe(2);

    const cache = new MftCache();
    const guid = f.nodes[sw]!.guid;
    const w1 = cache.diff(guid, blocks);
    expect(w1).toHaveLength(3);
    w1.forEach((w) => cache.commit(w));
    expect(cache.diff(guid, blocks)).toEqual([]);
    // drop one MLID: only its blocks change; an emptied block is written as zeros
    const w2 = cache.diff(guid, mftBlocks(new Map([[0xc000, 0b1010n]])));
    expect(w2.map((w) => [w.block, w.position, w.masks.every((m) => m === 0)])).toEqual([
      [1, 0, true],
      [1, 1, true],
    ]);
    w2.forEach((w) => cache.commit(w));
    expect(cache.diff(guid, mftBlocks(new Map([[0xc000, 0b1010n]])))).toEqual([]);

    // the manager's groups feed computeMfts
    const mm = new MulticastManager();
    const q = (p: PeerRef): SaQuery => query(Method.Set, createRec(gidOf(f, p), 1), MC_CREATE_MASK, who(f, p));
    const g = records(mm.handle(q(cas[0]!), ctx))[0]!;
    for (const p of cas.slice(1, 5)) mm.handle(query(Method.Set, { mgid: g.mgid, portGid: gidOf(f, p), joinState: 2 }, MC_JOIN_MASK, who(f, p)), ctx);
    const groups = mm.mftGroups(ctx);
    expect(groups).toHaveLength(1);
    expect(groups[0]!.members.map((m) => fabricPorts(f).byGuid.get(guidOf(f, m)))).toEqual(cas.slice(0, 5));
    checkDelivery(f, computeMfts(f, ctx.snapshot.routing.lfts, groups), g.mlid, cas.slice(0, 5));
  });
});

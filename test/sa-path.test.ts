import { beforeAll, describe, expect, it } from 'vitest';
import { MadStatus, Method, NodeType } from '../src/wire/mad.js';
import { MultiPathRecord, PathRecord, SaAttr, SaStatus, Selector, TraceRecord, type PathRecord as PR } from '../src/wire/sa.js';
import type { DeepPartial } from '../src/wire/layout.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import { portRate, walkPath } from '../src/sa/path.js';
import { snapshotPorts as fabricIndex } from '../src/model/snapshot.js';
import type { SaAnswer, SaContext, SaRequester } from '../src/sa/types.js';
import type { SimFabric } from '../src/sim/fabric.js';
import { buildContext, mixedFabric, nodeByDesc, query, requester, type Built } from './sa-fixture.js';

const PREFIX = 0xfe80000000000000n;
let b0: Built; // LMC 0
let b1: Built; // LMC 1
let engine: SaEngine;

function records(a: SaAnswer): Uint8Array[] {
  if (a.kind !== 'records') throw new Error(`expected records, got status 0x${a.status.toString(16)}`);
  return a.records;
}
function statusOf(a: SaAnswer): number {
  return a.kind === 'status' ? a.status : 0;
}

/** H2's link is 1x SDR with MTU 1024 on both ends. */
function smallMtu(sim: SimFabric): void {
  sim.port('H2 HCA-1', 1).info.mtuCap = 3;
  sim.port('S1', 2).info.mtuCap = 3;
}

beforeAll(async () => {
  b0 = await buildContext(mixedFabric(), { lmc: 0, tweak: smallMtu });
  b1 = await buildContext(mixedFabric(), { lmc: 1, tweak: smallMtu });
  engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
});

function gidOf(ctx: SaContext, desc: string, port = 1): bigint {
  const n = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, desc)]!;
  return (PREFIX << 64n) | n.ports[n.type === NodeType.Switch ? 0 : port]!.guid;
}
function lidOf(ctx: SaContext, desc: string, port = 1): number {
  const n = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, desc)]!;
  return n.ports[n.type === NodeType.Switch ? 0 : port]!.lid!;
}
function pr(ctx: SaContext, method: number, v: DeepPartial<PR>, fields: string[], who?: SaRequester): SaAnswer {
  return engine.answer(query(method, SaAttr.PathRecord, PathRecord.encode(v), fields.length ? PathRecord.mask(...fields) : 0n, who ?? requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'))), ctx);
}
function paths(ctx: SaContext, from: string, to: string, extra: DeepPartial<PR> = {}, fields: string[] = [], method: number = Method.GetTable): PR[] {
  return records(pr(ctx, method, { sgid: gidOf(ctx, from), dgid: gidOf(ctx, to), ...extra }, ['sgid', 'dgid', ...fields])).map((r) => PathRecord.decode(r));
}

/** The route the switches themselves hold: follow the live LFTs of the simulated fabric. */
function liveRoute(b: Built, from: string, to: string): { nodes: string[]; widths: string[]; speeds: string[] } {
  const f = b.ctx.snapshot.fabric;
  const dlid = lidOf(b.ctx, to);
  let ni = nodeByDesc(b.ctx, from);
  let port = 1;
  const nodes = [from];
  const widths: string[] = [];
  const speeds: string[] = [];
  for (let i = 0; i < 10; i++) {
    const p = f.nodes[ni]!.ports[port]!;
    widths.push(p.width!);
    speeds.push(p.speed!);
    ni = p.peer!.node;
    const n = f.nodes[ni]!;
    nodes.push(n.desc);
    if (n.type !== NodeType.Switch) break;
    port = b.sim.lft(n.guid)[dlid]!;
  }
  return { nodes, widths, speeds };
}

describe('PathRecord computed from the programmed LFTs', () => {
  it('hop count and links match the routes the switches hold', () => {
    const ctx = b0.ctx;
    const idx = fabricIndex(ctx.snapshot);
    for (const [from, to] of [['H0 HCA-1', 'H2 HCA-1'], ['H1 HCA-1', 'H3 HCA-1'], ['H2 HCA-1', 'H0 HCA-1']] as const) {
      const s = idx.byLid(lidOf(ctx, from))!;
      const d = idx.byLid(lidOf(ctx, to))!;
      const w = walkPath(ctx, s, d.lid, d);
      if (!w.ok) throw new Error(w.reason);
      const live = liveRoute(b0, from, to);
      expect(w.hops.map((h) => ctx.snapshot.fabric.nodes[h.node]!.desc)).toEqual(live.nodes);
      expect(w.links).toBe(live.nodes.length - 1);
    }
  });

  it('MTU and rate are the minima along the path', () => {
    const ctx = b0.ctx;
    const [toH2] = paths(ctx, 'H0 HCA-1', 'H2 HCA-1');
    expect(toH2!.mtu).toBe(3); // 1024 on the last link
    expect(toH2!.rate).toBe(2); // 2.5 Gb/s: the 1x SDR link
    expect(toH2!.mtuSelector).toBe(Selector.Exactly);
    const [h1h3] = paths(ctx, 'H1 HCA-1', 'H3 HCA-1');
    expect(h1h3!.rate).toBe(6); // 20 Gb/s: H1's 4x DDR link
    expect(h1h3!.mtu).toBe(5);
    const [h0h3] = paths(ctx, 'H0 HCA-1', 'H3 HCA-1');
    expect(h0h3!.rate).toBe(7); // 40 Gb/s (4x QDR) beats 12x QDR and 4x EDR
    expect(portRate({ linkWidthActive: 2, linkSpeedActive: 0, linkSpeedExtActive: 2 })).toBe(16); // 4x EDR = 100 Gb/s
    expect(portRate({ linkWidthActive: 8, linkSpeedActive: 4, linkSpeedExtActive: 0 })).toBe(10); // 12x QDR = 120 Gb/s
  });

  it('the record names both ends, LIDs, P_Key, SL and the loopback lifetime', () => {
    const ctx = b0.ctx;
    const [p] = paths(ctx, 'H0 HCA-1', 'H1 HCA-1');
    expect(p!.sgid).toBe(gidOf(ctx, 'H0 HCA-1'));
    expect(p!.dgid).toBe(gidOf(ctx, 'H1 HCA-1'));
    expect(p!.slid).toBe(lidOf(ctx, 'H0 HCA-1'));
    expect(p!.dlid).toBe(lidOf(ctx, 'H1 HCA-1'));
    expect(p!.pKey).toBe(0xffff);
    expect(p!.sl).toBe(0);
    expect(p!.reversible).toBe(1);
    expect(p!.packetLifeTime).toBe(18);
    const [loop] = paths(ctx, 'H0 HCA-1', 'H0 HCA-1');
    expect(loop!.packetLifeTime).toBe(0);
  });

  it('selectors: GreaterThan / LessThan / Exactly / Best on MTU, rate and packet lifetime', () => {
    const ctx = b0.ctx;
    const q = (extra: DeepPartial<PR>, f: string[]): PR[] => paths(ctx, 'H0 HCA-1', 'H2 HCA-1', extra, f);
    // rate 2.5 Gb/s (enum 2)
    expect(q({ rateSelector: Selector.GreaterThan, rate: 2 }, ['rateSelector', 'rate'])).toEqual([]);
    expect(q({ rateSelector: Selector.LessThan, rate: 3 }, ['rateSelector', 'rate'])[0]!.rate).toBe(2);
    expect(q({ rateSelector: Selector.LessThan, rate: 2 }, ['rateSelector', 'rate'])).toEqual([]);
    expect(q({ rateSelector: Selector.Exactly, rate: 3 }, ['rateSelector', 'rate'])).toEqual([]);
    expect(q({ rateSelector: Selector.Exactly, rate: 2 }, ['rateSelector', 'rate'])[0]!.rate).toBe(2);
    expect(q({ rateSelector: Selector.Best, rate: 0 }, ['rateSelector', 'rate'])[0]!.rate).toBe(2);
    // a 5 Gb/s path (enum 5) is slower than 10 Gb/s (enum 3) despite the larger number
    const fast = paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { rateSelector: Selector.GreaterThan, rate: 5 }, ['rateSelector', 'rate']);
    expect(fast[0]!.rate).toBe(6);
    // MTU 1024 (3)
    expect(q({ mtuSelector: Selector.GreaterThan, mtu: 3 }, ['mtuSelector', 'mtu'])).toEqual([]);
    expect(q({ mtuSelector: Selector.LessThan, mtu: 3 }, ['mtuSelector', 'mtu'])[0]!.mtu).toBe(2);
    expect(q({ mtuSelector: Selector.LessThan, mtu: 1 }, ['mtuSelector', 'mtu'])).toEqual([]);
    expect(q({ mtuSelector: Selector.Exactly, mtu: 2 }, ['mtuSelector', 'mtu'])[0]!.mtu).toBe(2);
    expect(q({ mtuSelector: Selector.Exactly, mtu: 4 }, ['mtuSelector', 'mtu'])).toEqual([]);
    // packet lifetime 18
    expect(q({ packetLifeTimeSelector: Selector.Exactly, packetLifeTime: 20 }, ['packetLifeTimeSelector', 'packetLifeTime'])).toEqual([]);
    expect(q({ packetLifeTimeSelector: Selector.LessThan, packetLifeTime: 10 }, ['packetLifeTimeSelector', 'packetLifeTime'])[0]!.packetLifeTime).toBe(9);
    expect(q({ packetLifeTimeSelector: Selector.GreaterThan, packetLifeTime: 17 }, ['packetLifeTimeSelector', 'packetLifeTime'])[0]!.packetLifeTime).toBe(18);
    // Get with a selector that cannot be met → NoRecords
    expect(statusOf(pr(ctx, Method.Get, { sgid: gidOf(ctx, 'H0 HCA-1'), dgid: gidOf(ctx, 'H2 HCA-1'), mtuSelector: Selector.GreaterThan, mtu: 5 }, ['sgid', 'dgid', 'mtuSelector', 'mtu']))).toBe(SaStatus.NoRecords);
  });

  it('SL from the routing engine; a requested SL must match it', () => {
    const base = b0.ctx;
    const ctx: SaContext = { ...base, snapshot: { ...base.snapshot, routing: { ...base.snapshot.routing, sl: (s, d) => (s + 2 * d) % 16 } } };
    const [p] = paths(ctx, 'H0 HCA-1', 'H1 HCA-1');
    expect(p!.sl).toBe((p!.slid + 2 * p!.dlid) % 16);
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { sl: (p!.sl + 1) % 16 }, ['sl'])).toEqual([]);
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { sl: p!.sl }, ['sl']).length).toBe(1);
  });

  it('LMC: every LID pair, diagonal ones first, up to NumbPath; Get gives one; SLID pins the source LID', () => {
    const ctx = b1.ctx;
    const all = paths(ctx, 'H0 HCA-1', 'H1 HCA-1');
    const s = lidOf(ctx, 'H0 HCA-1');
    const d = lidOf(ctx, 'H1 HCA-1');
    expect(all.map((p) => [p.slid, p.dlid, p.preference])).toEqual([
      [s, d, 0],
      [s + 1, d + 1, 0],
      [s, d + 1, 2],
      [s + 1, d, 2],
    ]);
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { numbPath: 2 }, ['numbPath']).length).toBe(2);
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { numbPath: 0 }, ['numbPath']).length).toBe(0);
    expect(records(pr(ctx, Method.Get, { sgid: gidOf(ctx, 'H0 HCA-1'), dgid: gidOf(ctx, 'H1 HCA-1') }, ['sgid', 'dgid'])).length).toBe(1);
    const pinned = paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { slid: s + 1 }, ['slid']);
    expect(pinned.map((p) => p.slid)).toEqual([s + 1, s + 1]);
    // LID-only query: SLID/DLID name the ports and pin the LIDs
    const byLid = records(pr(ctx, Method.GetTable, { slid: s + 1, dlid: d }, ['slid', 'dlid'])).map((r) => PathRecord.decode(r));
    expect(byLid.map((p) => [p.slid, p.dlid])).toEqual([[s + 1, d]]);
  });

  it('source only: a path to every reachable end port', () => {
    const ctx = b0.ctx;
    const recs = records(pr(ctx, Method.GetTable, { sgid: gidOf(ctx, 'H0 HCA-1') }, ['sgid'])).map((r) => PathRecord.decode(r));
    expect(recs.length).toBe(fabricIndex(ctx.snapshot).endPorts.length);
  });

  it('P_Key: the requested one must be shared; RawTraffic gives P_Key 0', () => {
    const ctx = b0.ctx;
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { pKey: 0x8123 }, ['pKey'])).toEqual([]);
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { pKey: 0xffff }, ['pKey'])[0]!.pKey).toBe(0xffff);
    expect(paths(ctx, 'H0 HCA-1', 'H1 HCA-1', { rawTraffic: 1 }, ['rawTraffic'])[0]!.pKey).toBe(0);
  });

  it('no endpoints: every path the requester may see, as OpenSM (saquery -p); a Get gives one', () => {
    const ctx = b0.ctx;
    const a = pr(ctx, Method.GetTable, {}, []);
    if (a.kind !== 'records') throw new Error(`status 0x${a.status.toString(16)}`);
    const ends = fabricIndex(ctx.snapshot).endPorts.filter((e) => e.lid);
    const got = a.records.map((r) => PathRecord.decode(r)).map((p) => `${p.slid}>${p.dlid}`);
    // Every ordered pair of end ports (loopback included), sources and destinations in LID order.
    const lids = ends.map((e) => e.lid).sort((x, y) => x - y);
    expect(got).toEqual(lids.flatMap((s) => lids.map((d) => `${s}>${d}`)));
    const one = pr(ctx, Method.Get, {}, []);
    expect(one.kind === 'records' && one.records.length).toBe(1);
  });

  it('errors: foreign or unknown GID → ReqInvalidGid; unknown SLID → NoRecords; Set → unsupported', () => {
    const ctx = b0.ctx;
    expect(statusOf(pr(ctx, Method.GetTable, { sgid: (0x1234n << 64n) | 5n }, ['sgid']))).toBe(SaStatus.ReqInvalidGid);
    expect(statusOf(pr(ctx, Method.GetTable, { sgid: (PREFIX << 64n) | 0xdeadn }, ['sgid']))).toBe(SaStatus.ReqInvalidGid);
    expect(statusOf(pr(ctx, Method.GetTable, { slid: 0xbffe }, ['slid']))).toBe(SaStatus.NoRecords);
    expect(statusOf(pr(ctx, Method.Set, { slid: 1 }, ['slid']))).toBe(MadStatus.UnsupportedMethodAttr);
  });
});

describe('MultiPathRecord and TraceRecord', () => {
  it('GetMulti: SGIDs × DGIDs round-robin up to NumbPath', () => {
    const ctx = b1.ctx;
    const data = MultiPathRecord.encode({ sgidCount: 1, dgidCount: 2, numbPath: 3, gids: [gidOf(ctx, 'H0 HCA-1'), gidOf(ctx, 'H1 HCA-1'), gidOf(ctx, 'H2 HCA-1')] });
    const mask = MultiPathRecord.mask('sgidCount', 'dgidCount', 'numbPath', 'gids');
    const a = engine.answer(query(Method.GetMulti, SaAttr.MultiPathRecord, data, mask, requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'))), ctx);
    const recs = records(a).map((r) => PathRecord.decode(r));
    expect(recs.map((r) => r.dgid)).toEqual([gidOf(ctx, 'H1 HCA-1'), gidOf(ctx, 'H2 HCA-1'), gidOf(ctx, 'H1 HCA-1')]);
    expect(a.kind === 'records' && a.method).toBe(Method.GetMultiResp);
    const bad = MultiPathRecord.encode({ sgidCount: 9, dgidCount: 9 });
    expect(statusOf(engine.answer(query(Method.GetMulti, SaAttr.MultiPathRecord, bad, MultiPathRecord.mask('sgidCount', 'dgidCount'), requester(ctx, 0)), ctx))).toBe(SaStatus.ReqInvalid);
    expect(statusOf(engine.answer(query(Method.GetTable, SaAttr.MultiPathRecord, data, mask, requester(ctx, 0)), ctx))).toBe(MadStatus.UnsupportedMethodAttr);
  });

  it('GetTraceTable: one TraceRecord per node, with entry and exit ports of the live route', () => {
    const ctx = b0.ctx;
    const data = PathRecord.encode({ sgid: gidOf(ctx, 'H0 HCA-1'), dgid: gidOf(ctx, 'H2 HCA-1') });
    const a = engine.answer(query(Method.GetTraceTable, SaAttr.TraceRecord, data, PathRecord.mask('sgid', 'dgid'), requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'))), ctx);
    const hops = records(a).map((r) => TraceRecord.decode(r));
    const live = liveRoute(b0, 'H0 HCA-1', 'H2 HCA-1');
    expect(hops.map((h) => ctx.snapshot.fabric.nodes.find((n) => n.guid === h.nodeId)!.desc)).toEqual(live.nodes);
    expect(hops[0]!.exitPort).toBe(1);
    expect(hops[0]!.entryPort).toBe(0);
    expect(hops[hops.length - 1]!.entryPort).toBe(1);
    expect(hops[hops.length - 1]!.exitPort).toBe(0);
    for (const h of hops.slice(1, -1)) expect(h.nodeType).toBe(NodeType.Switch);
    expect(statusOf(engine.answer(query(Method.GetTraceTable, SaAttr.TraceRecord, data, PathRecord.mask('sgid'), requester(ctx, 0)), ctx))).toBe(SaStatus.ReqInsufficientComponents);
  });
});

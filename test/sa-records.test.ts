import { beforeAll, describe, expect, it } from 'vitest';
import { MadStatus, Method, NodeType } from '../src/wire/mad.js';
import {
  GUIDInfoRecord,
  LinearForwardingTableRecord,
  LinkRecord,
  NodeRecord,
  PKeyTableRecord,
  PortInfoRecord,
  SLtoVLMappingTableRecord,
  SMInfoRecord,
  SaAttr,
  SaStatus,
  SwitchInfoRecord,
  VLArbitrationTableRecord,
} from '../src/wire/sa.js';
import { ClassPortInfo, SaCap } from '../src/wire/classportinfo.js';
import { links } from '../src/model/fabric.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import type { SaAnswer, SaContext, SaRequester } from '../src/sa/types.js';
import { buildContext, mixedFabric, nodeByDesc, query, requester, SM_KEY, type Built } from './sa-fixture.js';

const MKEY = 0x0badc0de12345678n;
let b: Built;
let ctx: SaContext;
let engine: SaEngine;
let h0: SaRequester;

function records(a: SaAnswer): Uint8Array[] {
  if (a.kind !== 'records') throw new Error(`expected records, got status 0x${a.status.toString(16)}`);
  return a.records;
}
function statusOf(a: SaAnswer): number {
  return a.kind === 'status' ? a.status : 0;
}

beforeAll(async () => {
  b = await buildContext(mixedFabric(), { lmc: 1, mkey: MKEY });
  ctx = b.ctx;
  engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
  h0 = requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'));
});

/** Port counts computed from the fabric itself. */
function endPortCount(): number {
  let n = 0;
  for (const node of ctx.snapshot.fabric.nodes) n += node.type === NodeType.Switch ? 1 : node.ports.filter((p) => p?.peer).length;
  return n;
}

describe('NodeRecord', () => {
  it('GetTable without a mask returns one record per end port (switch port 0, each CA port)', () => {
    const recs = records(engine.answer(query(Method.GetTable, SaAttr.NodeRecord, new Uint8Array(108), 0n, h0), ctx)).map((r) => NodeRecord.decode(r));
    expect(recs.length).toBe(endPortCount());
    const guids = new Set(recs.map((r) => r.nodeInfo.portGuid));
    expect(guids.size).toBe(recs.length);
  });

  it('by LID: any LID of the LMC range finds the port; the record carries the base LID and that port', () => {
    const h3 = nodeByDesc(ctx, 'H3 HCA-1');
    const p2 = ctx.snapshot.fabric.nodes[h3]!.ports[2]!;
    expect(p2.lmc).toBe(1);
    const data = NodeRecord.encode({ lid: p2.lid! + 1 });
    const a = engine.answer(query(Method.Get, SaAttr.NodeRecord, data, NodeRecord.mask('lid'), h0), ctx);
    const [r] = records(a).map((x) => NodeRecord.decode(x));
    expect(r!.lid).toBe(p2.lid);
    expect(r!.nodeInfo.portGuid).toBe(p2.guid);
    expect(r!.nodeInfo.localPortNum).toBe(2);
    expect(r!.nodeDescription.description).toBe('H3 HCA-1');
  });

  it('by other components: node type, description', () => {
    const sw = records(engine.answer(query(Method.GetTable, SaAttr.NodeRecord, NodeRecord.encode({ nodeInfo: { nodeType: NodeType.Switch } }), NodeRecord.mask('nodeInfo.nodeType'), h0), ctx));
    expect(sw.length).toBe(ctx.snapshot.fabric.nodes.filter((n) => n.type === NodeType.Switch).length);
    const byDesc = records(engine.answer(query(Method.GetTable, SaAttr.NodeRecord, NodeRecord.encode({ nodeDescription: { description: 'S1' } }), NodeRecord.mask('nodeDescription'), h0), ctx));
    expect(byDesc.map((r) => NodeRecord.decode(r).nodeInfo.nodeGuid)).toEqual([ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'S1')]!.guid]);
  });

  it('Get: several matches → TooManyRecords, none → NoRecords; GetTable with none → empty table', () => {
    expect(statusOf(engine.answer(query(Method.Get, SaAttr.NodeRecord, new Uint8Array(108), 0n, h0), ctx))).toBe(SaStatus.TooManyRecords);
    const none = NodeRecord.encode({ lid: 0xbfff });
    expect(statusOf(engine.answer(query(Method.Get, SaAttr.NodeRecord, none, NodeRecord.mask('lid'), h0), ctx))).toBe(SaStatus.NoRecords);
    expect(records(engine.answer(query(Method.GetTable, SaAttr.NodeRecord, none, NodeRecord.mask('lid'), h0), ctx))).toEqual([]);
  });
});

describe('PortInfoRecord', () => {
  it('a switch LID gives every port; PortNum narrows to one, as the SMA reports it', () => {
    const s0 = nodeByDesc(ctx, 'S0');
    const lid = ctx.snapshot.fabric.nodes[s0]!.ports[0]!.lid!;
    const all = records(engine.answer(query(Method.GetTable, SaAttr.PortInfoRecord, PortInfoRecord.encode({ endportLid: lid }), PortInfoRecord.mask('endportLid'), h0), ctx));
    expect(all.length).toBe(ctx.snapshot.fabric.nodes[s0]!.numPorts + 1);
    const one = PortInfoRecord.decode(
      records(engine.answer(query(Method.Get, SaAttr.PortInfoRecord, PortInfoRecord.encode({ endportLid: lid, portNum: 4 }), PortInfoRecord.mask('endportLid', 'portNum'), h0), ctx))[0]!,
    );
    const live = b.sim.portInfo('S0', 4); // what the switch itself reports (12x QDR link to S2)
    expect(one.portNum).toBe(4);
    expect(one.portInfo.linkWidthActive).toBe(live.linkWidthActive);
    expect(one.portInfo.linkWidthActive).toBe(8);
    expect(one.portInfo.linkSpeedActive).toBe(live.linkSpeedActive);
  });

  it('M_Key shows only to a trusted requester (the SM_Key)', () => {
    const h1 = nodeByDesc(ctx, 'H1 HCA-1');
    const lid = ctx.snapshot.fabric.nodes[h1]!.ports[1]!.lid!;
    const data = PortInfoRecord.encode({ endportLid: lid });
    const mask = PortInfoRecord.mask('endportLid');
    const untrusted = PortInfoRecord.decode(records(engine.answer(query(Method.Get, SaAttr.PortInfoRecord, data, mask, h0), ctx))[0]!);
    expect(untrusted.portInfo.mkey).toBe(0n);
    const wrongKey = { ...h0, smKey: SM_KEY ^ 1n, trusted: false };
    expect(PortInfoRecord.decode(records(engine.answer(query(Method.Get, SaAttr.PortInfoRecord, data, mask, wrongKey), ctx))[0]!).portInfo.mkey).toBe(0n);
    const trusted = requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'), 1, SM_KEY);
    expect(trusted.trusted).toBe(true);
    expect(PortInfoRecord.decode(records(engine.answer(query(Method.Get, SaAttr.PortInfoRecord, data, mask, trusted), ctx))[0]!).portInfo.mkey).toBe(MKEY);
  });
});

describe('switch records', () => {
  it('SwitchInfoRecord: one per switch, LinearFDBTop as programmed', () => {
    const recs = records(engine.answer(query(Method.GetTable, SaAttr.SwitchInfoRecord, new Uint8Array(24), 0n, h0), ctx)).map((r) => SwitchInfoRecord.decode(r));
    expect(recs.length).toBe(3);
    for (const r of recs) {
      const n = ctx.snapshot.fabric.nodes.find((x) => x.ports[0]?.lid === r.lid)!;
      expect(r.switchInfo.linearFdbTop).toBe(b.sim.switchInfo(n.guid).linearFdbTop);
    }
  });

  it('LinearForwardingTableRecord by LID and block equals the table the switch holds', () => {
    for (const name of ['S0', 'S1', 'S2']) {
      const n = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, name)]!;
      const data = LinearForwardingTableRecord.encode({ lid: n.ports[0]!.lid!, blockNum: 0 });
      const r = LinearForwardingTableRecord.decode(records(engine.answer(query(Method.Get, SaAttr.LinearForwardingTableRecord, data, LinearForwardingTableRecord.mask('lid', 'blockNum'), h0), ctx))[0]!);
      const live = b.sim.lft(n.guid);
      const top = ctx.snapshot.maxLid;
      expect(r.lft.ports.slice(1, top + 1)).toEqual(Array.from(live.subarray(1, top + 1)));
    }
    const all = records(engine.answer(query(Method.GetTable, SaAttr.LinearForwardingTableRecord, new Uint8Array(72), 0n, h0), ctx));
    expect(all.length).toBe(3 * (Math.floor(ctx.snapshot.maxLid / 64) + 1));
  });

  it('a query by RID builds only the records it names (no scan of every switch and block)', () => {
    const s1 = nodeByDesc(ctx, 'S1');
    const lid = ctx.snapshot.fabric.nodes[s1]!.ports[0]!.lid!;
    const lfts = ctx.snapshot.routing.lfts;
    const asked: number[] = [];
    const counting = new Map(lfts);
    counting.get = (k: number) => {
      asked.push(k);
      return lfts.get(k);
    };
    const c2: SaContext = { ...ctx, snapshot: { ...ctx.snapshot, routing: { ...ctx.snapshot.routing, lfts: counting } } };
    const data = LinearForwardingTableRecord.encode({ lid, blockNum: 0 });
    expect(records(engine.answer(query(Method.Get, SaAttr.LinearForwardingTableRecord, data, LinearForwardingTableRecord.mask('lid', 'blockNum'), h0), c2)).length).toBe(1);
    expect(asked).toEqual([s1]);
  });

  it('RandomForwardingTableRecord: none (linear switches)', () => {
    expect(records(engine.answer(query(Method.GetTable, SaAttr.RandomForwardingTableRecord, new Uint8Array(72), 0n, h0), ctx))).toEqual([]);
  });

  it('SLtoVLMappingTableRecord: (N+1)² per switch, one per CA port, narrowed by the port RIDs', () => {
    const s2 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'S2')]!;
    const lid = s2.ports[0]!.lid!;
    const all = records(engine.answer(query(Method.GetTable, SaAttr.SLtoVLMappingTableRecord, SLtoVLMappingTableRecord.encode({ lid }), SLtoVLMappingTableRecord.mask('lid'), h0), ctx));
    expect(all.length).toBe((s2.numPorts + 1) ** 2);
    const one = records(
      engine.answer(query(Method.GetTable, SaAttr.SLtoVLMappingTableRecord, SLtoVLMappingTableRecord.encode({ lid, inputPortNum: 1, outputPortNum: 2 }), SLtoVLMappingTableRecord.mask('lid', 'inputPortNum', 'outputPortNum'), h0), ctx),
    ).map((r) => SLtoVLMappingTableRecord.decode(r));
    expect(one.map((r) => [r.inputPortNum, r.outputPortNum])).toEqual([[1, 2]]);
    const h1 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'H1 HCA-1')]!;
    const ca = records(engine.answer(query(Method.GetTable, SaAttr.SLtoVLMappingTableRecord, SLtoVLMappingTableRecord.encode({ lid: h1.ports[1]!.lid! }), SLtoVLMappingTableRecord.mask('lid'), h0), ctx)).map((r) => SLtoVLMappingTableRecord.decode(r));
    expect(ca.map((r) => [r.inputPortNum, r.outputPortNum])).toEqual([[0, 1]]);
  });

  it('VLArbitrationTableRecord: the blocks the port capabilities allow', () => {
    const h1 = nodeByDesc(ctx, 'H1 HCA-1');
    const pi = ctx.snapshot.discovery.nodes[h1]!.portInfo[1]!;
    const lid = ctx.snapshot.fabric.nodes[h1]!.ports[1]!.lid!;
    const recs = records(engine.answer(query(Method.GetTable, SaAttr.VLArbitrationTableRecord, VLArbitrationTableRecord.encode({ lid }), VLArbitrationTableRecord.mask('lid'), h0), ctx)).map((r) => VLArbitrationTableRecord.decode(r));
    const expected = [pi.vlArbitrationLowCap > 0 ? 1 : 0, pi.vlArbitrationLowCap > 32 ? 2 : 0, pi.vlArbitrationHighCap > 0 ? 3 : 0, pi.vlArbitrationHighCap > 32 ? 4 : 0].filter(Boolean);
    expect(recs.map((r) => r.blockNum)).toEqual(expected);
  });
});

describe('other records', () => {
  it('SMInfoRecord: the SM, SM_Key only when trusted', () => {
    const [r] = records(engine.answer(query(Method.Get, SaAttr.SMInfoRecord, new Uint8Array(25), 0n, h0), ctx)).map((x) => SMInfoRecord.decode(x));
    expect(r!.lid).toBe(ctx.snapshot.smLid);
    expect(r!.smInfo.guid).toBe(ctx.smPortGuid);
    expect(r!.smInfo.smKey).toBe(0n);
    const t = requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'), 1, SM_KEY);
    expect(SMInfoRecord.decode(records(engine.answer(query(Method.Get, SaAttr.SMInfoRecord, new Uint8Array(25), 0n, t), ctx))[0]!).smInfo.smKey).toBe(SM_KEY);
  });

  it('P_KeyTableRecord: the table the port holds', () => {
    const h1 = nodeByDesc(ctx, 'H1 HCA-1');
    const lid = ctx.snapshot.fabric.nodes[h1]!.ports[1]!.lid!;
    const r = PKeyTableRecord.decode(records(engine.answer(query(Method.Get, SaAttr.PKeyTableRecord, PKeyTableRecord.encode({ lid, blockNum: 0 }), PKeyTableRecord.mask('lid', 'blockNum'), h0), ctx))[0]!);
    expect(r.portNum).toBe(1);
    expect(r.pkeyTable.pkeys).toEqual(b.sim.pkeys('H1 HCA-1', 1).slice(0, 32));
  });

  it('LinkRecord: both directions of every link; by FromLID', () => {
    const all = records(engine.answer(query(Method.GetTable, SaAttr.LinkRecord, new Uint8Array(6), 0n, h0), ctx));
    expect(all.length).toBe(2 * links(ctx.snapshot.fabric).length);
    const h2 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'H2 HCA-1')]!;
    const s1 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'S1')]!;
    const mine = records(engine.answer(query(Method.GetTable, SaAttr.LinkRecord, LinkRecord.encode({ fromLid: h2.ports[1]!.lid! + 1 }), LinkRecord.mask('fromLid'), h0), ctx)).map((r) => LinkRecord.decode(r));
    expect(mine).toEqual([{ fromLid: h2.ports[1]!.lid, fromPort: 1, toPort: 2, toLid: s1.ports[0]!.lid }]);
    const toH2 = records(engine.answer(query(Method.GetTable, SaAttr.LinkRecord, LinkRecord.encode({ toLid: h2.ports[1]!.lid! }), LinkRecord.mask('toLid'), h0), ctx)).map((r) => LinkRecord.decode(r));
    expect(toH2).toEqual([{ fromLid: s1.ports[0]!.lid, fromPort: 2, toPort: 1, toLid: h2.ports[1]!.lid }]);
  });

  it('GUIDInfoRecord: GUID 0 is the port GUID', () => {
    const h1 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'H1 HCA-1')]!;
    const r = GUIDInfoRecord.decode(records(engine.answer(query(Method.Get, SaAttr.GUIDInfoRecord, GUIDInfoRecord.encode({ lid: h1.ports[1]!.lid!, blockNum: 0 }), GUIDInfoRecord.mask('lid', 'blockNum'), h0), ctx))[0]!);
    expect(r.guidInfo.guids[0]).toBe(h1.ports[1]!.guid);
  });
});

describe('engine', () => {
  it('ClassPortInfo: truthful capability bits and RespTimeValue; Get only', () => {
    const cpi = ClassPortInfo.decode(records(engine.answer(query(Method.Get, SaAttr.ClassPortInfo, new Uint8Array(72), 0n, h0), ctx))[0]!);
    expect(cpi.capabilityMask & SaCap.MultiPathSup).toBe(SaCap.MultiPathSup);
    expect(cpi.capabilityMask & SaCap.UdMcastSup).toBe(0); // no multicast handler registered here
    expect(cpi.respTimeValue).toBe(18);
    expect(statusOf(engine.answer(query(Method.GetTable, SaAttr.ClassPortInfo, new Uint8Array(72), 0n, h0), ctx))).toBe(MadStatus.UnsupportedMethodAttr);
  });

  it('unsupported attribute / method / method for the attribute; mask beyond the record', () => {
    expect(statusOf(engine.answer(query(Method.Get, 0x00ff, new Uint8Array(200), 0n, h0), ctx))).toBe(MadStatus.UnsupportedMethodAttr);
    expect(statusOf(engine.answer(query(0x33, SaAttr.NodeRecord, new Uint8Array(200), 0n, h0), ctx))).toBe(MadStatus.UnsupportedMethod);
    expect(statusOf(engine.answer(query(Method.Set, SaAttr.NodeRecord, new Uint8Array(200), 0n, h0), ctx))).toBe(MadStatus.UnsupportedMethodAttr);
    expect(statusOf(engine.answer(query(Method.GetTable, SaAttr.LinkRecord, new Uint8Array(200), 1n << 4n, h0), ctx))).toBe(SaStatus.ReqInvalid);
    expect(statusOf(engine.answer(query(Method.GetTable, SaAttr.LinkRecord, new Uint8Array(200), 1n << 3n, h0), ctx))).toBe(0);
  });

  it('refuses a second handler for the same attribute', () => {
    expect(() => engine.register(coreSaHandlers()[0]!)).toThrow(/already has a handler/);
  });
});

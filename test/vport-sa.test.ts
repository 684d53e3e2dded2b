/** SR-IOV vports in the SA (docs/vports.md): PathRecords to and from vport GIDs carry the vports'
 * LIDs (their own, or the physical port's base LID), the route reaches them (the simulated
 * fabric delivers an SMP to the LID the record gives), and two vports of one HCA in different
 * partitions get no PathRecord between them. The SM's real sweep on the in-process fabric. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GID_PREFIX, Method, NodeType } from '../src/wire/mad.js';
import { JoinState, MCMemberRecord, MultiPathRecord, NodeRecord, PathRecord, PortInfoRecord, SaAttr, SaStatus } from '../src/wire/sa.js';
import { MC_CREATE_MASK, MC_JOIN_MASK, MulticastManager } from '../src/sa/multicast.js';
import type { SaAnswer } from '../src/sa/types.js';
import { VPortAttr, VPortInfo, vportIndexMod } from '../src/wire/vport.js';
import { SaEngine } from '../src/sa/engine.js';
import { InformManager } from '../src/sa/inform.js';
import { InformInfo, INFORM_ALL_PRODUCERS, INFORM_ALL_TYPES, INFORM_LID_RANGE_ALL } from '../src/wire/sa.js';
import { TrapNumber } from '../src/wire/notice.js';
import { coreSaHandlers } from '../src/sa/server.js';
import { loadFabricSpec } from '../src/model/load.js';
import { parsePartitions, PartitionPlan } from '../src/model/partitions.js';
import type { SimFabric } from '../src/sim/fabric.js';
import type { SaContext } from '../src/sa/types.js';
import { buildContext, query, requester } from './sa-fixture.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=6';
const gid = (guid: bigint): bigint => (DEFAULT_GID_PREFIX << 64n) | guid;

function engine(): SaEngine {
  const e = new SaEngine();
  for (const h of coreSaHandlers()) e.register(h);
  return e;
}
function virtualize(sim: SimFabric): void {
  for (const n of sim.nodes) if (n.type === NodeType.CA) for (const p of n.ports) if (p) sim.vports.enable(p, { vportCap: 16, vports: 4 });
}
/** A PathRecord query from the vport `sgid` names (its own GUID and LID as the requester). */
function path(ctx: SaContext, from: number, sgid: bigint, dgid: bigint) {
  const guid = sgid & 0xffff_ffff_ffff_ffffn;
  const v = ctx.vports?.of(guid);
  const who = v ? { ...requester(ctx, from), portGuid: guid, lid: v.lid } : requester(ctx, from);
  const r = engine().answer(query(Method.Get, SaAttr.PathRecord, PathRecord.encode({ sgid, dgid }), PathRecord.mask('sgid', 'dgid'), who), ctx);
  return r.kind === 'records' ? r.records.map((x) => PathRecord.decode(x)) : [];
}

async function setup(partitions?: PartitionPlan) {
  const b = await buildContext(loadFabricSpec(SPEC), { tweak: virtualize, ...(partitions ? { partitions } : {}) });
  const plan = partitions ?? PartitionPlan.defaultPlan();
  b.ctx.vports = b.sm.vports.saView(b.ctx.snapshot.fabric, (g) => plan.pkeysFor(g, 'ca'));
  const hosts = b.sim.nodes.filter((n) => n.type === NodeType.CA);
  return { ...b, hosts };
}

describe('SR-IOV vports in the SA', () => {
  it('PathRecords between vports of two hosts carry their LIDs (own when LidRequired, else the base LID), and the route reaches them', async () => {
    const { ctx, sim, hosts, rpc, clock } = await setup();
    const [h1, h2] = [hosts[1]!, hosts[4]!];
    const v1 = sim.vports.virt(h1.guid, 1).vports.get(1)!; // LidRequired
    const v2 = sim.vports.virt(h2.guid, 1).vports.get(3)!; // LidRequired
    const v4 = sim.vports.virt(h2.guid, 1).vports.get(4)!; // not: the port's base LID
    expect([v1.lidRequired, v2.lidRequired, v4.lidRequired]).toEqual([true, true, false]);
    const recs = path(ctx, h1.idx, gid(v1.guid), gid(v2.guid));
    expect(recs.length).toBe(1);
    expect([recs[0]!.slid, recs[0]!.dlid]).toEqual([v1.lid, v2.lid]);
    expect([recs[0]!.sgid, recs[0]!.dgid]).toEqual([gid(v1.guid), gid(v2.guid)]);
    const toShared = path(ctx, h1.idx, gid(v1.guid), gid(v4.guid));
    expect(toShared[0]!.dlid).toBe(h2.ports[1]!.info.lid);
    // the DLID the SA gave reaches the vport's HCA through the switches' LFTs
    const got = VPortInfo.decode(await clock.runUntil(rpc.smpGet(recs[0]!.dlid, VPortAttr.VPortInfo, vportIndexMod(v2.index)), 10_000));
    expect(got.portGuid).toBe(v2.guid);
  });

  it('two vports of one HCA in different partitions get no PathRecord between them; each reaches its tenant elsewhere', async () => {
    const probe = await setup();
    const [h1, h2] = [probe.hosts[1]!, probe.hosts[4]!];
    const a = probe.sim.vports.virt(h1.guid, 1).vports.get(1)!.guid;
    const b = probe.sim.vports.virt(h1.guid, 1).vports.get(3)!.guid;
    const c = probe.sim.vports.virt(h2.guid, 1).vports.get(1)!.guid;
    const hex = (g: bigint) => '0x' + g.toString(16).padStart(16, '0');
    const plan = parsePartitions(`Default=0x7fff : ALL=limited ;\nTenantA=0x0a01 : ${hex(a)}=full, ${hex(c)}=full ;\nTenantB=0x0a02 : ${hex(b)}=full ;\n`);
    const { ctx } = await setup(plan);
    expect(path(ctx, h1.idx, gid(a), gid(b)), 'A and B share no partition with a full member').toEqual([]);
    const ac = path(ctx, h1.idx, gid(a), gid(c));
    expect(ac.length).toBe(1);
    expect(ac[0]!.pKey).toBe(0x8a01);
    expect(path(ctx, h1.idx, gid(b), gid(c))).toEqual([]);
  });

  it('MCMember: a vport joins only groups of its own partitions (a group of the other vport of its HCA is refused)', async () => {
    const probe = await setup();
    const h1 = probe.hosts[1]!;
    const va = probe.sim.vports.virt(h1.guid, 1).vports.get(1)!;
    const vb = probe.sim.vports.virt(h1.guid, 1).vports.get(3)!;
    const hex = (g: bigint) => '0x' + g.toString(16).padStart(16, '0');
    const plan = parsePartitions(`Default=0x7fff : ALL=limited ;\nTenantA=0x0a01 : ${hex(va.guid)}=full ;\nTenantB=0x0a02 : ${hex(vb.guid)}=full ;\n`);
    const { ctx } = await setup(plan);
    const mm = new MulticastManager();
    const ask = (v: typeof va, rec: Partial<MCMemberRecord>, mask: bigint): SaAnswer => {
      const data = new Uint8Array(200);
      MCMemberRecord.encode({ ...rec, portGid: gid(v.guid) }, data, 0);
      return mm.handle({ method: Method.Set, attrId: SaAttr.MCMemberRecord, attrMod: 0, componentMask: mask, data, requester: { ...requester(ctx, h1.idx), portGuid: v.guid, lid: v.lid } }, ctx);
    };
    const created = ask(vb, { joinState: JoinState.FullMember, qKey: 0x11, pKey: 0x8a02 }, MC_CREATE_MASK);
    expect(created.kind, 'B creates a group in its partition').toBe('records');
    const mgid = MCMemberRecord.decode((created as { records: Uint8Array[] }).records[0]!).mgid;
    const refused = ask(va, { mgid, joinState: JoinState.FullMember }, MC_JOIN_MASK);
    expect(refused.kind === 'status' ? refused.status : 0, "A may not join B's group").toBe(SaStatus.ReqInvalid);
    expect(ask(va, { joinState: JoinState.FullMember, qKey: 0x11, pKey: 0x8a01 }, MC_CREATE_MASK).kind, 'A creates in its own').toBe('records');
  });

  it('NodeRecord and PortInfoRecord: each vport a record of its own; two vports of one HCA in different partitions do not see each other', async () => {
    const open = await setup();
    const [h1, h2] = [open.hosts[1]!, open.hosts[4]!];
    const va = open.sim.vports.virt(h1.guid, 1).vports.get(1)!;
    const vb = open.sim.vports.virt(h1.guid, 1).vports.get(3)!;
    const vc = open.sim.vports.virt(h2.guid, 1).vports.get(1)!;
    const vd = open.sim.vports.virt(h2.guid, 1).vports.get(2)!; // no LID of its own
    /** NodeRecords (GetTable; by LID when given) as the vport `who` (or a physical port) asks. */
    const nodes = (ctx: SaContext, who: typeof va | undefined, lid?: number) => {
      const req = who ? { ...requester(ctx, who.virt.port.node.idx), portGuid: who.guid, lid: who.lid || who.virt.port.info.lid } : requester(ctx, h2.idx);
      const r = engine().answer(query(Method.GetTable, SaAttr.NodeRecord, NodeRecord.encode({ lid: lid ?? 0 }), lid !== undefined ? NodeRecord.mask('lid') : 0n, req), ctx);
      return r.kind === 'records' ? r.records.map((x) => NodeRecord.decode(x)) : [];
    };
    // every vport answers as a node record with its GUID and LID (a physical port, default partitions)
    const all = nodes(open.ctx, undefined);
    const caPorts = open.hosts.reduce((k, n) => k + n.ports.filter((p) => p?.peer).length, 0);
    expect(all.filter((r) => open.ctx.vports!.of(r.nodeInfo.portGuid)).length).toBe(caPorts * 4);
    const c = all.find((r) => r.nodeInfo.portGuid === vc.guid)!;
    expect([c.lid, c.nodeInfo.nodeGuid, c.nodeInfo.localPortNum]).toEqual([vc.lid, h2.guid, 1]);
    expect(all.find((r) => r.nodeInfo.portGuid === vd.guid)!.lid, 'without LidRequired: the base LID').toBe(h2.ports[1]!.info.lid);
    // by LID: a vport's own LID, and the base LID it shares with the vports without one
    expect(nodes(open.ctx, undefined, vc.lid).map((r) => r.nodeInfo.portGuid)).toEqual([vc.guid]);
    expect(nodes(open.ctx, undefined, h2.ports[1]!.info.lid).map((r) => r.nodeInfo.portGuid)).toContain(vd.guid);
    const pir = engine().answer(query(Method.GetTable, SaAttr.PortInfoRecord, PortInfoRecord.encode({ endportLid: vc.lid }), PortInfoRecord.mask('endportLid'), requester(open.ctx, h2.idx)), open.ctx);
    const pis = pir.kind === 'records' ? pir.records.map((x) => PortInfoRecord.decode(x)) : [];
    expect(pis.map((x) => [x.endportLid, x.portNum, x.portInfo.lid])).toEqual([[vc.lid, 1, vc.lid]]);
    // partitions: A and C in TenantA, B in TenantB, Default limited for all
    const hex = (g: bigint) => '0x' + g.toString(16).padStart(16, '0');
    const plan = parsePartitions(`Default=0x7fff : ALL=limited ;\nTenantA=0x0a01 : ${hex(va.guid)}=full, ${hex(vc.guid)}=full ;\nTenantB=0x0a02 : ${hex(vb.guid)}=full ;\n`);
    const { ctx } = await setup(plan);
    const guids = (who: typeof va, lid?: number) => nodes(ctx, who, lid).map((r) => r.nodeInfo.portGuid);
    expect(guids(va)).toContain(vc.guid);
    expect(guids(va), 'A does not see B').not.toContain(vb.guid);
    expect(guids(vb), 'B does not see A').not.toContain(va.guid);
    expect(guids(vb)).not.toContain(vc.guid);
    expect(guids(va, vb.lid), "B's record by its LID: not to A").toEqual([]);
    expect(guids(vc, va.lid)).toEqual([va.guid]);
  });

  it('MultiPathRecord from a vport GID to vport GIDs: each path with the vports\' LIDs; a vport outside the partitions left out', async () => {
    const probe = await setup();
    const [h1, h2, h3] = [probe.hosts[1]!, probe.hosts[4]!, probe.hosts[5]!];
    const va = probe.sim.vports.virt(h1.guid, 1).vports.get(1)!;
    const vc = probe.sim.vports.virt(h2.guid, 1).vports.get(3)!;
    const vd = probe.sim.vports.virt(h3.guid, 1).vports.get(2)!; // no LID of its own: its port's base LID
    const ve = probe.sim.vports.virt(h3.guid, 1).vports.get(1)!;
    const hex = (g: bigint) => '0x' + g.toString(16).padStart(16, '0');
    const plan = parsePartitions(`Default=0x7fff : ALL=limited ;\nTenantA=0x0a01 : ${hex(va.guid)}=full, ${hex(vc.guid)}=full, ${hex(vd.guid)}=full ;\n`);
    const { ctx } = await setup(plan);
    const data = MultiPathRecord.encode({ sgidCount: 1, dgidCount: 3, numbPath: 8, gids: [gid(va.guid), gid(vc.guid), gid(vd.guid), gid(ve.guid)] });
    const who = { ...requester(ctx, h1.idx), portGuid: va.guid, lid: va.lid };
    const r = engine().answer(query(Method.GetMulti, SaAttr.MultiPathRecord, data, MultiPathRecord.mask('sgidCount', 'dgidCount', 'numbPath', 'gids'), who), ctx);
    if (r.kind !== 'records') throw new Error(`status 0x${r.status.toString(16)}`);
    const recs = r.records.map((x) => PathRecord.decode(x));
    expect(new Set(recs.map((p) => p.slid))).toEqual(new Set([va.lid]));
    expect(new Map(recs.map((p) => [p.dgid, p.dlid]))).toEqual(new Map([[gid(vc.guid), vc.lid], [gid(vd.guid), h3.ports[1]!.info.lid]]));
    expect(recs.some((p) => p.dgid === gid(ve.guid)), 'E shares only the limited Default with A').toBe(false);
  });

  it('InformInfo from a vport: its subscription answered, and reports of GIDs outside its partitions not sent to it', async () => {
    const probe = await setup();
    const [h1, h2] = [probe.hosts[1]!, probe.hosts[4]!];
    const va = probe.sim.vports.virt(h1.guid, 1).vports.get(1)!;
    const vb = probe.sim.vports.virt(h1.guid, 1).vports.get(3)!;
    const vc = probe.sim.vports.virt(h2.guid, 1).vports.get(1)!;
    const hex = (g: bigint) => '0x' + g.toString(16).padStart(16, '0');
    const plan = parsePartitions(`Default=0x7fff : ALL=limited ;\nTenantA=0x0a01 : ${hex(va.guid)}=full, ${hex(vc.guid)}=full ;\nTenantB=0x0a02 : ${hex(vb.guid)}=full ;\n`);
    const { ctx } = await setup(plan);
    const sent: Array<{ lid: number; qpn: number }> = [];
    const im = new InformManager({ attempts: 1, send: async (lid, qpn) => void sent.push({ lid, qpn }) });
    const subscribe = (v: typeof va, qpn: number): SaAnswer => {
      const data = new Uint8Array(200);
      InformInfo.encode({ gid: 0n, lidRangeBegin: INFORM_LID_RANGE_ALL, lidRangeEnd: 0, isGeneric: 1, subscribe: 1, type: INFORM_ALL_TYPES, trapNumber: TrapNumber.GidInService, qpn, respTimeValue: 18, producerType: INFORM_ALL_PRODUCERS }, data, 0);
      return im.handle({ method: Method.Set, attrId: SaAttr.InformInfo, attrMod: 0, componentMask: 0n, data, requester: { ...requester(ctx, h1.idx), portGuid: v.guid, lid: v.lid } }, ctx);
    };
    expect(subscribe(va, 0x11).kind).toBe('records');
    expect(subscribe(vb, 0x22).kind).toBe('records');
    expect(im.list().map((x) => x.subscriberGuid).sort()).toEqual([va.guid, vb.guid].sort());
    // C (TenantA) comes into service: A is told, at its own LID; B (TenantB) is not
    expect(await im.gidInService(gid(vc.guid), ctx)).toMatchObject({ matched: 1, delivered: 1 });
    expect(sent).toEqual([{ lid: va.lid, qpn: 0x11 }]);
  });
});

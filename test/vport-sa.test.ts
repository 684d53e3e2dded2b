/** SR-IOV vports in the SA (docs/vports.md): PathRecords to and from vport GIDs carry the vports'
 * LIDs (their own, or the physical port's base LID), the route reaches them (the simulated
 * fabric delivers an SMP to the LID the record gives), and two vports of one HCA in different
 * partitions get no PathRecord between them. The SM's real sweep on the in-process fabric. */
import { describe, expect, it } from 'vitest';
import { DEFAULT_GID_PREFIX, Method, NodeType } from '../src/wire/mad.js';
import { JoinState, MCMemberRecord, PathRecord, SaAttr, SaStatus } from '../src/wire/sa.js';
import { MC_CREATE_MASK, MC_JOIN_MASK, MulticastManager } from '../src/sa/multicast.js';
import type { SaAnswer } from '../src/sa/types.js';
import { VPortAttr, VPortInfo, vportIndexMod } from '../src/wire/vport.js';
import { SaEngine } from '../src/sa/engine.js';
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
});

/** The SM and SA together (src/subnet.ts) on the in-process fabric: clients join multicast groups
 * through the SA, the SM programs the MFTs, and a MAD sent to the MLID reaches every member. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric, type SimEndpoint } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MadHeader, MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { JoinState, MCMemberRecord, SaAttr, SA_CLASS_VERSION, ServiceRecord } from '../src/wire/sa.js';
import { MC_CREATE_MASK, MC_JOIN_MASK } from '../src/sa/multicast.js';
import { SaClient } from '../src/sa/client.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';

const TEST_CLASS = 0x32; // a vendor class the members listen on
const GID_PREFIX = 0xfe80000000000000n;

async function bringUp(spec: string) {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec(spec), { clock, seed: 3 });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
  const sink = new MemorySink();
  const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(sink, 'debug'), routing: ['ftree', 'minhop'], lmc: 0, sweepIntervalMs: 0, saServer: { schedule: (fn) => queueMicrotask(fn) } });
  await drive(clock, subnet.start());
  return { clock, sim, subnet, sink };
}

interface Member {
  ep: SimEndpoint;
  rpc: MadRpc;
  sa: SaClient;
  guid: bigint;
  got: number;
}

async function member(r: Awaited<ReturnType<typeof bringUp>>, nodeIdx: number): Promise<Member> {
  const ep = r.sim.attach(nodeIdx);
  ep.register(MgmtClass.SubnDirected, 1);
  ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
  ep.register(TEST_CLASS, 1, { methods: [Method.Send] });
  const rpc = new MadRpc(ep, r.clock, { timeoutMs: 50 });
  const m: Member = { ep, rpc, sa: await drive(r.clock, SaClient.locate(rpc)), guid: ep.local.portGuid, got: 0 };
  rpc.onUnsolicited(TEST_CLASS, () => m.got++, { method: Method.Send });
  return m;
}

describe('SM + SA on the in-process fabric', () => {
  it('programs MFTs on join so a MAD to the MLID reaches every member, and clears them on the last leave', async () => {
    const r = await bringUp('gen:fattree2:leaves=4,spines=2,hosts=3');
    const cas = r.sim.nodes.map((n, i) => (n.type !== NodeType.Switch ? i : -1)).filter((i) => i >= 0);
    const members = await Promise.all([cas[0]!, cas[4]!, cas[10]!].map((i) => member(r, i)));
    const outsider = await member(r, cas[7]!);
    // The first member creates the group (MGID 0: the SA assigns one); the others join it.
    const created = await drive(
      r.clock,
      members[0]!.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: 0n, portGid: (GID_PREFIX << 64n) | members[0]!.guid, qKey: 0x1234, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK),
    );
    expect(created.mlid).toBeGreaterThanOrEqual(0xc000);
    expect(created.mgid >> 120n).toBe(0xffn);
    for (const m of members.slice(1)) {
      const j = await drive(r.clock, m.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: created.mgid, portGid: (GID_PREFIX << 64n) | m.guid, joinState: JoinState.FullMember }, MC_JOIN_MASK));
      expect(j.mlid).toBe(created.mlid);
    }
    await r.clock.advanceAsync(50); // the MFT writes triggered by the joins
    expect(r.subnet.sm.stats.length).toBe(1); // no sweep needed: joins reprogram MFTs directly

    const send = async (from: Member): Promise<void> => {
      const mad = MadHeader.encode({ baseVersion: 1, mgmtClass: TEST_CLASS, classVersion: 1, method: Method.Send, tid: 7n, attrId: 0x10 }, new Uint8Array(256));
      from.ep.send(mad, { lid: created.mlid, qpn: 0xffffff, qkey: 0x1234 });
      await r.clock.advanceAsync(10);
    };
    await send(members[0]!);
    expect(members.slice(1).map((m) => m.got)).toEqual([1, 1]);
    expect(outsider.got).toBe(0);
    await send(members[2]!);
    expect(members.map((m) => m.got)).toEqual([1, 2, 1]);

    // All leave: the group is gone and the MFTs no longer forward its MLID.
    for (const m of members) {
      await drive(r.clock, m.sa.delete(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: created.mgid, portGid: (GID_PREFIX << 64n) | m.guid, joinState: JoinState.FullMember }, MC_JOIN_MASK));
    }
    await r.clock.advanceAsync(50);
    // Only the well-known group remains: the default partition's IPoIB broadcast group, which the
    // SM creates at start (as OpenSM) and no leave deletes.
    expect(r.subnet.multicast.list().filter((g) => !g.wellKnown)).toEqual([]);
    expect(r.subnet.multicast.list().map((g) => [g.mgid.toString(16), g.members.size])).toEqual([['ff12401bffff000000000000ffffffff', 0]]);
    const before = members.map((m) => m.got);
    await send(members[0]!).catch(() => undefined);
    expect(members.map((m) => m.got)).toEqual(before);
    for (const n of r.sim.nodes) if (n.type === NodeType.Switch) expect([...r.subnet.sm.mftEntries(n.guid)]).toEqual([]);
  });

  it('registers, finds and deletes a ServiceRecord through the SA', async () => {
    const r = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2');
    const cas = r.sim.nodes.map((n, i) => (n.type !== NodeType.Switch ? i : -1)).filter((i) => i >= 0);
    const a = await member(r, cas[0]!);
    const b = await member(r, cas[2]!);
    const gid = (GID_PREFIX << 64n) | a.guid;
    const mask = ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey', 'serviceLease', 'serviceName');
    await drive(r.clock, a.sa.set(SaAttr.ServiceRecord, ServiceRecord, { serviceId: 0x1000_0000_0000_0042n, serviceGid: gid, servicePKey: 0xffff, serviceLease: 0xffffffff, serviceName: 'ibsm-test' }, mask));
    const found = await drive(r.clock, b.sa.getTable(SaAttr.ServiceRecord, ServiceRecord, { serviceId: 0x1000_0000_0000_0042n }, ServiceRecord.mask('serviceId')));
    expect(found.map((s) => [s.serviceName, s.serviceGid])).toEqual([['ibsm-test', gid]]);
    await drive(r.clock, a.sa.delete(SaAttr.ServiceRecord, ServiceRecord, { serviceId: 0x1000_0000_0000_0042n, serviceGid: gid, servicePKey: 0xffff }, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey')));
    const after = await drive(r.clock, b.sa.getTable(SaAttr.ServiceRecord, ServiceRecord, { serviceId: 0x1000_0000_0000_0042n }, ServiceRecord.mask('serviceId')));
    expect(after).toEqual([]);
  });
});

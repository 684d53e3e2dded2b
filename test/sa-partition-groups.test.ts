/** The multicast groups partitions.conf names (IPoIB broadcast groups, mgid= lines), created as
 * OpenSM creates them, and their life in the SA: joined without create, never deleted by the
 * last leave. Witnessed against OpenSM on ibsim in ibsim-ipoib.test.ts. */
import { describe, expect, it } from 'vitest';
import { generateFabric } from '../src/model/generators.js';
import { assignLids } from '../src/sm/lids.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { PartitionPlan, parsePartitions, partitionGroups } from '../src/model/partitions.js';
import { parseGidText } from '../src/wire/format.js';
import { MulticastManager, MC_JOIN_MASK } from '../src/sa/multicast.js';
import { MCMemberRecord, SA_DATA_SIZE, SaStatus } from '../src/wire/sa.js';
import { Method } from '../src/wire/mad.js';
import type { SaAnswer, SaContext, SaQuery, SaRequester } from '../src/sa/types.js';
import type { Snapshot } from '../src/model/snapshot.js';
import { isSwitch } from '../src/model/fabric.js';

const hex = (g: bigint): string => g.toString(16);

describe('partitionGroups: the groups OpenSM creates from partitions.conf', () => {
  it('without a file: the default partition carries IPoIB, its broadcast group ff12:401b:ffff::ffff:ffff', () => {
    const { groups, warnings } = partitionGroups(PartitionPlan.defaultPlan());
    expect(warnings).toEqual([]);
    expect(groups).toEqual([
      { mgid: 0xff12401bffff000000000000ffffffffn, pkey: 0xffff, qKey: 0x0b1b, mtu: 4, rate: 3, sl: 0, tClass: 0, flowLabel: 0, scope: 2, hopLimit: 0, source: 'Default (line 1) IPoIB broadcast' },
    ]);
  });

  it('one broadcast group per ipoib partition, in file order, with the partition flags; none for a partition without ipoib', () => {
    const plan = parsePartitions(`
Default=0x7fff, ipoib : ALL=full ;
Storage=0x8002, ipoib, mtu=5, rate=7, Q_Key=0x22, TClass=4, FlowLabel=0x99 : ALL=full ;
Plain=0x0004 : ALL=full ;
`);
    const { groups } = partitionGroups(plan);
    expect(groups.map((g) => hex(g.mgid))).toEqual(['ff12401bffff000000000000ffffffff', 'ff12401b8002000000000000ffffffff']);
    expect(groups[1]).toMatchObject({ pkey: 0x8002, mtu: 5, rate: 7, qKey: 0x22, tClass: 4, flowLabel: 0x99 });
  });

  it('mgid= groups inherit the partition flags (not TClass), override them, and take the scope into the MGID', () => {
    const plan = parsePartitions(`
Other=0x0003, ipoib, TClass=9 :
   mgid=ff15::1234,sl=1,Q_Key=0x100,TClass=3,FlowLabel=0x12
   mgid=ff12::99
   mgid=ff12::77,scope=5,scope=8
   ALL=full ;
`);
    const { groups } = partitionGroups(plan);
    expect(groups.map((g) => hex(g.mgid))).toEqual([
      'ff12401b8003000000000000ffffffff',
      'ff120000000000000000000000001234', // no scope flag: link-local, as OpenSM
      'ff120000000000000000000000000099',
      'ff150000000000000000000000000077',
      'ff180000000000000000000000000077',
    ]);
    expect(groups[0]).toMatchObject({ tClass: 9, qKey: 0x0b1b });
    expect(groups[1]).toMatchObject({ pkey: 0x8003, sl: 1, qKey: 0x100, tClass: 3, flowLabel: 0x12, mtu: 4, rate: 3 });
    expect(groups[2]).toMatchObject({ qKey: 0, tClass: 0, sl: 0 }); // a non-IP group: no IPoIB Q_Key
    expect(groups[3]).toMatchObject({ scope: 5, hopLimit: 0xff });
  });

  it('IP groups take the partition P_Key and the IPoIB Q_Key; a foreign P_Key or another MTU/rate is refused with a reason', () => {
    const plan = parsePartitions(`
P=0x0005, ipoib :
   mgid=ff12:601b::1
   mgid=ff12:401b:0006::2
   mgid=ff12:401b::3,mtu=5
   mgid=fe80::1
   mgid=ff12:401b:0005::4
   ALL=full ;
`);
    const { groups, warnings } = partitionGroups(plan);
    expect(groups.map((g) => hex(g.mgid))).toEqual(['ff12401b8005000000000000ffffffff', 'ff12601b800500000000000000000001', 'ff12401b800500000000000000000004']);
    expect(groups[1]!.qKey).toBe(0x0b1b);
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/P_Key bytes must be 0 or the partition's 0x5, not 0x6/);
    expect(warnings[1]).toMatch(/needs the partition's rate 3 and mtu 4/);
    expect(warnings[2]).toMatch(/fe80::1: not a multicast GID/);
  });

  it('a partition-level sl is not used without QoS (as OpenSM), and is with it', () => {
    const plan = parsePartitions('Default=0x7fff, ipoib, sl=3 : ALL=full ;');
    expect(partitionGroups(plan).groups[0]!.sl).toBe(0);
    expect(partitionGroups(plan).warnings[0]).toMatch(/QoS is not enabled/);
    expect(partitionGroups(plan, { qos: true }).groups[0]!.sl).toBe(3);
  });

  it('parseGidText reads IPv6 text as inet_pton does', () => {
    expect(parseGidText('ff12:401b:ffff::ffff:ffff')).toBe(0xff12401bffff000000000000ffffffffn);
    expect(parseGidText('::')).toBe(0n);
    expect(parseGidText('1:2:3:4:5:6:7:8')).toBe(0x00010002000300040005000600070008n);
    for (const bad of ['1:2', 'ff12:::1', 'g::1', '1::2::3', '12345::1', '1:2:3:4:5:6:7:8:9']) expect(parseGidText(bad), bad).toBeUndefined();
  });
});

// ---------------------------------------------------------------- in the SA

function ctxFor(partitions: PartitionPlan): SaContext {
  const fabric = generateFabric('gen:fattree2:leaves=2,spines=1,hosts=2', { seed: 1 });
  const lids = assignLids(fabric, { lmc: 0 });
  const routed = routeWithFallback(fabric, ['minhop'], { lmc: 0 });
  const snapshot = { fabric, discovery: { fabric, nodes: [], smNode: 0, smPort: 0, smps: 0, maxDepth: 0 }, routing: routed.result, maxLid: lids.maxLid, smLid: 1, sweep: 1 } as unknown as Snapshot;
  return { snapshot, partitions, smPortGuid: 0x1234n, smKey: 0n, now: 0 };
}
function q(method: number, rec: Partial<MCMemberRecord>, mask: bigint, requester: SaRequester): SaQuery {
  const data = new Uint8Array(SA_DATA_SIZE);
  MCMemberRecord.encode(rec, data, 0);
  return { method, attrId: 0x38, attrMod: 0, componentMask: mask, data, requester };
}
const statusOf = (a: SaAnswer): number => (a.kind === 'status' ? a.status : 0);

describe('well-known groups in the SA', () => {
  const plan = parsePartitions('Default=0x7fff, ipoib : ALL=full ;\nP2=0x0002, ipoib : ALL=full ;');
  const ctx = ctxFor(plan);
  const f = ctx.snapshot.fabric;
  const ca = f.nodes.findIndex((n) => !isSwitch(n));
  const port = f.nodes[ca]!.ports.find((p) => p?.peer)!;
  const me: SaRequester = { lid: port.lid!, portGuid: port.guid, smKey: 0n, trusted: false, qpn: 1 };
  const gid = (0xfe80000000000000n << 64n) | port.guid;

  it('get MLIDs from 0xC000 in file order; a join without the create components succeeds; the last leave keeps the group', () => {
    const mm = new MulticastManager();
    const made = partitionGroups(plan).groups.map((s) => mm.createWellKnown(s));
    expect(made.map((g) => g.mlid)).toEqual([0xc000, 0xc001]);
    const bcast = made[1]!.mgid;
    // IPoIB's join: MGID, PortGID, JoinState (and Q_Key/P_Key it read from the group): no create bits.
    const join = mm.handle(q(Method.Set, { mgid: bcast, portGid: gid, joinState: 1 }, MC_JOIN_MASK, me), ctx);
    expect(statusOf(join)).toBe(0);
    expect(MCMemberRecord.decode((join as { records: Uint8Array[] }).records[0]!)).toMatchObject({ mlid: 0xc001, qKey: 0x0b1b, pKey: 0x8002, mtu: 4, rate: 3 });
    expect(mm.mftGroupsOf(ctx.snapshot).find((g) => g.mlid === 0xc001)!.members).toHaveLength(1);
    expect(statusOf(mm.handle(q(Method.Delete, { mgid: bcast, portGid: gid, joinState: 1 }, MC_JOIN_MASK, me), ctx))).toBe(0);
    expect(mm.get(bcast)?.mlid).toBe(0xc001);
    expect(mm.get(bcast)?.members.size).toBe(0);
    // A port leaving the fabric does not delete it either.
    mm.handle(q(Method.Set, { mgid: bcast, portGid: gid, joinState: 1 }, MC_JOIN_MASK, me), ctx);
    mm.removePort(port.guid, ctx);
    expect(mm.get(bcast)?.mlid).toBe(0xc001);
    // The next group a client creates gets the next MLID.
    expect(mm.mlidsInUse).toBe(2);
    // A group the config does not name still needs the create components.
    expect(statusOf(mm.handle(q(Method.Set, { mgid: 0xff12401b8002000000000000deadbeefn, portGid: gid, joinState: 1 }, MC_JOIN_MASK, me), ctx))).toBe(SaStatus.ReqInsufficientComponents);
  });

  it('creating an MGID twice keeps the first group', () => {
    const mm = new MulticastManager();
    const [s] = partitionGroups(plan).groups;
    expect(mm.createWellKnown(s!).mlid).toBe(mm.createWellKnown({ ...s!, qKey: 5 }).mlid);
    expect(mm.mlidsInUse).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { generateFabric } from '../src/model/generators.js';
import { assignLids } from '../src/sm/lids.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { PartitionPlan, parsePartitions } from '../src/model/partitions.js';
import type { SaContext, SaQuery, SaRequester, SaAnswer } from '../src/sa/types.js';
import { ServiceRegistry } from '../src/sa/services.js';
import { SaStatus, ServiceRecord, SA_DATA_SIZE, SERVICE_LEASE_INFINITE } from '../src/wire/sa.js';
import { Method } from '../src/wire/mad.js';
import type { DeepPartial } from '../src/wire/layout.js';
import { isSwitch, type Fabric } from '../src/model/fabric.js';

const PREFIX = 0xfe80000000000000n;
function ctxFor(spec: string): SaContext {
  const fabric = generateFabric(spec, { seed: 1 });
  const lids = assignLids(fabric, { lmc: 0 });
  const routed = routeWithFallback(fabric, ['minhop'], { lmc: 0 });
  return {
    snapshot: { fabric, discovery: { fabric, nodes: [], smNode: 0, smPort: 0, smps: 0, maxDepth: 0 }, routing: routed.result, maxLid: lids.maxLid, smLid: 1, sweep: 1 },
    partitions: PartitionPlan.defaultPlan(),
    smPortGuid: 0x1234n,
    smKey: 0n,
    now: 0,
  };
}
const cas = (f: Fabric) => f.nodes.flatMap((n, ni) => (isSwitch(n) ? [] : n.ports.flatMap((p, pi) => (pi > 0 && p?.peer ? [{ node: ni, port: pi, guid: p.guid, lid: p.lid! }] : []))));

const q = (method: number, rec: DeepPartial<ServiceRecord>, mask: bigint, requester: SaRequester): SaQuery => {
  const data = new Uint8Array(SA_DATA_SIZE);
  ServiceRecord.encode(rec, data, 0);
  return { method, attrId: 0x31, attrMod: 0, componentMask: mask, data, requester };
};
const recs = (a: SaAnswer): ServiceRecord[] => {
  if (a.kind !== 'records') throw new Error(`status 0x${a.status.toString(16)}`);
  return a.records.map((r) => ServiceRecord.decode(r));
};
const st = (a: SaAnswer): number => (a.kind === 'status' ? a.status : 0);
const ID = ServiceRecord.mask('serviceId', 'serviceGid');
const ALL = ID | ServiceRecord.mask('servicePKey', 'serviceLease', 'serviceKey', 'serviceName');

describe('ServiceRegistry', () => {
  const ctx = ctxFor('gen:fattree2:leaves=2,spines=1,hosts=3');
  const [a, b, c] = cas(ctx.snapshot.fabric);
  const me = (p: { guid: bigint; lid: number }, trusted = false): SaRequester => ({ lid: p.lid, portGuid: p.guid, smKey: 0n, trusted, qpn: 1 });
  const gid = (p: { guid: bigint }) => (PREFIX << 64n) | p.guid;

  it('registers, queries by component mask and expires leases on the virtual clock', () => {
    const sr = new ServiceRegistry();
    const at = (now: number): SaContext => ({ ...ctx, now });
    const key = new Uint8Array(16).fill(9);
    expect(recs(sr.handle(q(Method.Set, { serviceId: 0x10n, serviceGid: gid(a), servicePKey: 0xffff, serviceLease: 30, serviceName: 'alpha', serviceKey: key }, ALL, me(a)), at(0)))[0]!.serviceName).toBe('alpha');
    sr.handle(q(Method.Set, { serviceId: 0x20n, serviceGid: gid(b), servicePKey: 0xffff, serviceLease: SERVICE_LEASE_INFINITE, serviceName: 'beta' }, ALL, me(b)), at(0));
    sr.handle(q(Method.Set, { serviceId: 0x10n, serviceGid: gid(b), serviceLease: 60, serviceName: 'alpha-b' }, ID | ServiceRecord.mask('serviceLease', 'serviceName'), me(b)), at(0));
    // by ServiceID: two providers
    const byId = recs(sr.handle(q(Method.GetTable, { serviceId: 0x10n }, ServiceRecord.mask('serviceId'), me(c)), at(10_000)));
    expect(byId.map((r) => r.serviceName).sort()).toEqual(['alpha', 'alpha-b']);
    expect(byId.find((r) => r.serviceName === 'alpha')!.serviceLease).toBe(20); // remaining seconds
    expect(byId.find((r) => r.serviceName === 'alpha-b')!.servicePKey).toBe(0xffff); // requester's default P_Key
    // by name
    expect(recs(sr.handle(q(Method.Get, { serviceName: 'beta' }, ServiceRecord.mask('serviceName'), me(c)), at(10_000)))[0]!.serviceId).toBe(0x20n);
    // lease expiry: 30 s and 60 s leases, infinite stays
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(c)), at(29_999)))).toHaveLength(3);
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(c)), at(30_000))).map((r) => r.serviceName).sort()).toEqual(['alpha-b', 'beta']);
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(c)), at(60_000))).map((r) => r.serviceName)).toEqual(['beta']);
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(c)), at(1e12)))[0]!.serviceLease).toBe(SERVICE_LEASE_INFINITE);
    // re-register restarts the lease
    sr.handle(q(Method.Set, { serviceId: 0x30n, serviceGid: gid(a), serviceLease: 5 }, ID | ServiceRecord.mask('serviceLease'), me(a)), at(0));
    sr.handle(q(Method.Set, { serviceId: 0x30n, serviceGid: gid(a), serviceLease: 5 }, ID | ServiceRecord.mask('serviceLease'), me(a)), at(4_000));
    expect(sr.list(8_000).map((r) => r.serviceId)).toContain(0x30n);
    expect(sr.list(9_000).map((r) => r.serviceId)).not.toContain(0x30n);
  });

  it('deletes with the key, and answers bad requests with the spec statuses', () => {
    const sr = new ServiceRegistry();
    const key = new Uint8Array(16).fill(3);
    sr.handle(q(Method.Set, { serviceId: 1n, serviceGid: gid(a), servicePKey: 0xffff, serviceLease: SERVICE_LEASE_INFINITE, serviceKey: key }, ALL, me(a)), ctx);
    expect(st(sr.handle(q(Method.Set, { serviceId: 1n }, ServiceRecord.mask('serviceId'), me(a)), ctx))).toBe(SaStatus.ReqInsufficientComponents);
    expect(st(sr.handle(q(Method.Set, { serviceId: 2n, serviceGid: (PREFIX << 64n) | 0xbeefn }, ID, me(a)), ctx))).toBe(SaStatus.ReqInvalidGid);
    // replacing a keyed record without its key
    expect(st(sr.handle(q(Method.Set, { serviceId: 1n, serviceGid: gid(a), servicePKey: 0xffff }, ID | ServiceRecord.mask('servicePKey'), me(b)), ctx))).toBe(SaStatus.ReqDenied);
    // delete needs the key too
    expect(st(sr.handle(q(Method.Delete, { serviceId: 1n, serviceGid: gid(a) }, ID, me(a)), ctx))).toBe(SaStatus.ReqDenied);
    const del = recs(sr.handle(q(Method.Delete, { serviceId: 1n, serviceGid: gid(a), serviceKey: key }, ID | ServiceRecord.mask('serviceKey'), me(a)), ctx));
    expect(del[0]!.serviceId).toBe(1n);
    expect(st(sr.handle(q(Method.Delete, { serviceId: 1n, serviceGid: gid(a), serviceKey: key }, ID | ServiceRecord.mask('serviceKey'), me(a)), ctx))).toBe(SaStatus.NoRecords);
    expect(st(sr.handle(q(Method.Get, {}, 0n, me(a)), ctx))).toBe(SaStatus.NoRecords);
  });

  it('applies P_Key visibility', () => {
    const plan = parsePartitions(`Default=0x7fff : ALL=full ;\nP5=0x0005 : 0x${a.guid.toString(16)}=full, 0x${b.guid.toString(16)}=limited ;`);
    const pctx = { ...ctx, partitions: plan };
    const sr = new ServiceRegistry();
    expect(recs(sr.handle(q(Method.Set, { serviceId: 5n, serviceGid: gid(a), servicePKey: 0x8005, serviceLease: SERVICE_LEASE_INFINITE }, ID | ServiceRecord.mask('servicePKey', 'serviceLease'), me(a)), pctx))).toHaveLength(1);
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(b)), pctx))).toHaveLength(1);
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(c)), pctx))).toHaveLength(0);
    expect(recs(sr.handle(q(Method.GetTable, {}, 0n, me(c, true)), pctx))).toHaveLength(1);
    expect(st(sr.handle(q(Method.Set, { serviceId: 6n, serviceGid: gid(c), servicePKey: 0x8005 }, ID | ServiceRecord.mask('servicePKey'), me(c)), pctx))).toBe(SaStatus.ReqDenied);
  });
});

import { describe, expect, it } from 'vitest';
import { generateFabric } from '../src/model/generators.js';
import { assignLids } from '../src/sm/lids.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { PartitionPlan } from '../src/model/partitions.js';
import type { SaContext, SaQuery, SaRequester, SaAnswer } from '../src/sa/types.js';
import { InformManager } from '../src/sa/inform.js';
import { MulticastManager, MC_CREATE_MASK, MC_JOIN_MASK } from '../src/sa/multicast.js';
import { InformInfo, InformInfoRecord, MCMemberRecord, SaAttr, SaStatus, SA_DATA_SIZE, decodeSaMad, INFORM_ALL_PRODUCERS, INFORM_ALL_TYPES, INFORM_LID_RANGE_ALL } from '../src/wire/sa.js';
import { Method } from '../src/wire/mad.js';
import { decodeNotice, NoticeType, TrapNumber } from '../src/wire/notice.js';
import type { DeepPartial, AnyLayout } from '../src/wire/layout.js';
import { isSwitch, type Fabric } from '../src/model/fabric.js';

const PREFIX = 0xfe80000000000000n;
function ctxFor(spec: string): SaContext {
  const fabric = generateFabric(spec, { seed: 1 });
  const lids = assignLids(fabric, { lmc: 0 });
  const routed = routeWithFallback(fabric, ['minhop'], { lmc: 0 });
  const sm = fabric.nodes.find((n) => !isSwitch(n))!.ports[1]!;
  return {
    snapshot: { fabric, discovery: { fabric, nodes: [], smNode: 0, smPort: 0, smps: 0, maxDepth: 0 }, routing: routed.result, maxLid: lids.maxLid, smLid: sm.lid!, sweep: 1 },
    partitions: PartitionPlan.defaultPlan(),
    smPortGuid: sm.guid,
    smKey: 0n,
    now: 0,
  };
}
const cas = (f: Fabric) => f.nodes.flatMap((n, ni) => (isSwitch(n) ? [] : n.ports.flatMap((p, pi) => (pi > 0 && p?.peer ? [{ node: ni, port: pi, guid: p.guid, lid: p.lid! }] : []))));
function q<V>(layout: AnyLayout, attrId: number, method: number, rec: DeepPartial<V>, mask: bigint, requester: SaRequester): SaQuery {
  const data = new Uint8Array(SA_DATA_SIZE);
  layout.encode(rec, data, 0);
  return { method, attrId, attrMod: 0, componentMask: mask, data, requester };
}
const st = (a: SaAnswer): number => (a.kind === 'status' ? a.status : 0);
const sub = (trapNumber: number, qpn = 1, subscribe = 1): DeepPartial<InformInfo> => ({
  gid: 0n, lidRangeBegin: INFORM_LID_RANGE_ALL, lidRangeEnd: 0, isGeneric: 1, subscribe, type: INFORM_ALL_TYPES, trapNumber, qpn, respTimeValue: 18, producerType: INFORM_ALL_PRODUCERS,
});

interface Sent { lid: number; qpn: number; mad: Uint8Array }

describe('InformManager', () => {
  const ctx = ctxFor('gen:fattree2:leaves=2,spines=1,hosts=3');
  const [a, b, c] = cas(ctx.snapshot.fabric);
  const me = (p: { guid: bigint; lid: number }, trusted = false): SaRequester => ({ lid: p.lid, portGuid: p.guid, smKey: 0n, trusted, qpn: 1 });
  const gid = (p: { guid: bigint }) => (PREFIX << 64n) | p.guid;

  it('subscribes, reports traps 64/65 to matching subscribers, and retries until ReportResp', async () => {
    const sent: Sent[] = [];
    let failFirst = 2;
    const im = new InformManager({
      attempts: 4,
      send: async (lid, qpn, mad) => {
        sent.push({ lid, qpn, mad });
        if (lid === b.lid && failFirst-- > 0) throw new Error('timeout');
      },
    });
    expect(im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, sub(TrapNumber.GidInService, 0x11), 0n, me(a)), ctx).kind).toBe('records');
    expect(im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, sub(0xffff, 0x22), 0n, me(b)), ctx).kind).toBe('records');
    expect(im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, sub(TrapNumber.McGroupCreated), 0n, me(c)), ctx).kind).toBe('records');
    // re-subscribing the same thing replaces, does not duplicate
    im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, sub(TrapNumber.GidInService, 0x11), 0n, me(a)), ctx);
    expect(im.list()).toHaveLength(3);

    const r = await im.gidInService(gid(c), ctx);
    expect(r).toEqual({ matched: 2, delivered: 2, failed: 0 });
    const toA = sent.filter((s) => s.lid === a.lid);
    const toB = sent.filter((s) => s.lid === b.lid);
    expect(toA).toHaveLength(1);
    expect(toB).toHaveLength(3); // two failures, then acknowledged
    expect(toA[0]!.qpn).toBe(0x11);
    const msg = decodeSaMad(toA[0]!.mad);
    expect(msg.header.method).toBe(Method.Report);
    expect(msg.header.attrId).toBe(SaAttr.Notice);
    const { notice, details } = decodeNotice(msg.data, 0, 'full');
    expect(notice.trapNumber).toBe(64);
    expect(notice.type).toBe(NoticeType.SubnetManagement);
    expect(notice.issuerLid).toBe(ctx.snapshot.smLid);
    expect(notice.issuerGid).toBe((PREFIX << 64n) | ctx.smPortGuid);
    expect(details).toEqual({ trap: 64, value: { gid: gid(c) } });

    // bounded retries: a subscriber that never answers gets `attempts` tries
    const failed: bigint[] = [];
    const d2 = new InformManager({ attempts: 3, send: () => Promise.reject(new Error('no ReportResp')), onReportFailed: (s) => failed.push(s.subscriberGuid) });
    d2.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, sub(0xffff), 0n, me(a)), ctx);
    expect(await d2.gidOutOfService(gid(c), ctx)).toEqual({ matched: 1, delivered: 0, failed: 1 });
    expect(d2.stats.reportTries).toBe(3);
    expect(failed).toEqual([a.guid]);
    // out of service drops the departed port's own subscriptions
    await d2.gidOutOfService(gid(a), ctx);
    expect(d2.list()).toHaveLength(0);
  });

  it('gets traps 66/67 from the multicast manager', async () => {
    const traps: number[] = [];
    const im = new InformManager({ send: async (_l, _q, mad) => void traps.push(decodeNotice(decodeSaMad(mad).data, 0, 'full').notice.trapNumber) });
    im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, sub(0xffff), 0n, me(b)), ctx);
    const mm = new MulticastManager({ traps: im });
    const rec = (js: number, mgid = 0n) => ({ mgid, portGid: gid(a), joinState: js, qKey: 1, pKey: 0xffff, tClass: 0, flowLabel: 0, sl: 0 });
    const made = mm.handle(q(MCMemberRecord, SaAttr.MCMemberRecord, Method.Set, rec(1), MC_CREATE_MASK, me(a)), ctx);
    if (made.kind !== 'records') throw new Error('create failed');
    const mgid = MCMemberRecord.decode(made.records[0]!).mgid;
    mm.handle(q(MCMemberRecord, SaAttr.MCMemberRecord, Method.Delete, rec(1, mgid), MC_JOIN_MASK, me(a)), ctx);
    await new Promise((r) => setTimeout(r, 0));
    expect(traps).toEqual([66, 67]);
  });

  it('unsubscribes, validates, and lists InformInfoRecords', () => {
    const im = new InformManager({ send: async () => undefined });
    const set = (info: DeepPartial<InformInfo>, r = me(a)) => im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, info, 0n, r), ctx);
    expect(set(sub(128)).kind).toBe('records');
    expect(set(sub(129)).kind).toBe('records');
    expect(set(sub(128), me(b)).kind).toBe('records');
    // unknown GID, bad LID range, QPN 0, security trap from an untrusted port
    expect(st(set({ ...sub(128), gid: (PREFIX << 64n) | 0xbadn }))).toBe(SaStatus.ReqInvalidGid);
    expect(st(set({ ...sub(128), lidRangeBegin: 9, lidRangeEnd: 3 }))).toBe(SaStatus.ReqInvalid);
    expect(st(set(sub(128, 0)))).toBe(SaStatus.ReqInvalid);
    expect(st(set(sub(256)))).toBe(SaStatus.ReqDenied);
    expect(set(sub(256), me(a, true)).kind).toBe('records');
    // unsubscribe what is not subscribed
    const bad = set(sub(130, 1, 0));
    expect(st(bad)).toBe(SaStatus.ReqInvalid);
    expect(bad.kind === 'status' && InformInfo.decode(bad.record!).subscribe).toBe(0);
    expect(set(sub(129, 1, 0)).kind).toBe('records');
    // records: untrusted sees its own; enumerations per subscriber
    const list = (r: SaRequester, mask = 0n, rec: DeepPartial<InformInfoRecord> = {}) => {
      const ans = im.handle(q(InformInfoRecord, SaAttr.InformInfoRecord, Method.GetTable, rec, mask, r), ctx);
      if (ans.kind !== 'records') throw new Error('status');
      return ans.records.map((x) => InformInfoRecord.decode(x));
    };
    expect(list(me(a)).map((r) => [r.subscriberGid, r.enumeration, r.informInfo.trapNumber])).toEqual([
      [gid(a), 0, 128],
      [gid(a), 2, 256],
    ]);
    expect(list(me(c))).toEqual([]);
    expect(list(me(c, true))).toHaveLength(3);
    expect(list(me(c, true), InformInfoRecord.mask('subscriberGid'), { subscriberGid: gid(b) }).map((r) => r.enumeration)).toEqual([0]);
  });

  it('matches LID ranges and GIDs of the issuer for forwarded traps', async () => {
    const got: number[] = [];
    const im = new InformManager({ send: async (lid) => void got.push(lid) });
    im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, { ...sub(128), lidRangeBegin: 1, lidRangeEnd: 3 }, 0n, me(a)), ctx);
    im.handle(q(InformInfo, SaAttr.InformInfo, Method.Set, { ...sub(128), gid: gid(c) }, 0n, me(b)), ctx);
    const trap = { isGeneric: 1, type: NoticeType.Urgent, producerType: 2, trapNumber: 128, noticeToggle: 0, noticeCount: 0, dataDetails: new Uint8Array(54) };
    expect((await im.forwardTrap({ ...trap, issuerLid: 2 }, ctx)).matched).toBe(1);
    expect((await im.forwardTrap({ ...trap, issuerLid: 4 }, ctx)).matched).toBe(c.lid === 4 ? 1 : 0);
    expect((await im.forwardTrap({ ...trap, issuerLid: c.lid }, ctx)).matched).toBeGreaterThanOrEqual(1);
    expect(got).toContain(b.lid);
  });
});

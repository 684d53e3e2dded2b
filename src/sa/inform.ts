/**
 * Event subscriptions (InformInfo, IBA 13.4.8.3 / 15.2.5.12) and Reports.
 *
 * - InformInfo SubnAdmSet subscribes (Subscribe=1) or unsubscribes (0) the requester's port. The
 *   subscription names either one GID or a LID range (LIDRangeBegin 0xFFFF: all), generic trap
 *   number / type / producer type (0xFFFF / 0xFFFF / 0xFFFFFF: all) or vendor DeviceID/VendorID,
 *   and the QPN Reports go to. Security traps need a trusted requester. Unsubscribing something
 *   not subscribed is ERR_REQ_INVALID (echoing Subscribe=0).
 * - InformInfoRecord Get/GetTable lists subscriptions (an untrusted requester sees its own).
 * - `notify(notice)` sends a Report (SubnAdm method 0x06, attribute Notice) to every matching
 *   subscriber through the injected sender, one call per try, until a try resolves (the sender
 *   resolves on ReportResp) or `attempts` tries failed. Traps 64/65 come from the SM after sweeps
 *   (`gidInService`, `gidOutOfService`, which also drops the departed port's subscriptions), 66/67
 *   from MulticastManager, others are forwarded SMA traps (`forwardTrap`).
 * - Bounded (sa/limits.ts): a port holds at most `subscriptionsPerRequester` subscriptions
 *   (ERR_NO_RESOURCES beyond; a repeated Set is the same subscription, found by key, not by a
 *   scan); a notice goes once to each destination (LID, QPN) however many of its subscriptions
 *   match; one Report in flight per destination with a short queue behind it (oldest dropped,
 *   counted); a failed Report is counted and reported to `onReportFailed` (which logs it
 *   through the logger's rate limit, once per destination per interval).
 */
import { MadStatus, Method } from '../wire/mad.js';
import { componentsMatch } from '../wire/layout.js';
import { encodeSaMad, InformInfo, InformInfoRecord, INFORM_ALL_PRODUCERS, INFORM_ALL_TRAPS, INFORM_ALL_TYPES, INFORM_LID_RANGE_ALL, SaAttr, SaStatus, SA_DATA_SIZE } from '../wire/sa.js';
import { Notice, NoticeType, TrapGidDetails, TrapNumber, type NoticeSmp } from '../wire/notice.js';
import type { SaAnswer, SaContext, SaHandler, SaQuery } from './types.js';
import { snapshotPorts } from '../model/snapshot.js';
import { hasPkey, pkeysOf, portGidOf, portOfGid, requesterPort, sharePkey } from './multicast.js';
import { Fifo } from '../util/fifo.js';
import { resolveSaLimits, type SaLimits } from './limits.js';
import { GUID_MASK } from '../util/guid.js';

/** Sends one Report MAD to (lid, qpn); resolves when the ReportResp arrives, rejects otherwise. */
export type ReportSender = (lid: number, qpn: number, mad: Uint8Array) => Promise<void>;

export interface InformOptions {
  send: ReportSender;
  /** Tries per Report (default 4). */
  attempts?: number;
  /** Called when a Report could not be delivered after every try (each time: the caller's log
   * rate-limits it, util/log.ts Logger.from). */
  onReportFailed?: (sub: Subscription, error: unknown) => void;
  /** Bounds (subscriptionsPerRequester, reportsQueuedPerSubscriber); sa/limits.ts. */
  limits?: Partial<SaLimits>;
}

export interface Subscription {
  readonly subscriberGid: bigint;
  readonly subscriberGuid: bigint;
  /** LID of the subscriber when it subscribed (used when the snapshot no longer knows the port). */
  readonly lid: number;
  readonly enumeration: number;
  readonly info: Readonly<InformInfo>;
}

export interface NotifyResult {
  matched: number;
  delivered: number;
  failed: number;
}

export interface InformStats {
  reportsSent: number;
  reportTries: number;
  reportsFailed: number;
  /** Reports not sent: the subscriber's queue was full (the oldest waiting one goes). */
  reportsDropped: number;
  /** Notices matched by several subscriptions of one destination, sent to it once. */
  reportsCoalesced: number;
  /** Subscriptions refused with ERR_NO_RESOURCES (the requester's bound). */
  subscriptionsRefused: number;
}

/** One destination of Reports (LID, QPN): one Report in flight, a bounded queue behind it. */
interface Destination {
  lid: number;
  qpn: number;
  sub: Subscription;
  busy: boolean;
  queue: Fifo<{ data: Uint8Array; done: (ok: boolean) => void }>;
}

/** Class Manager (the SM/SA) as a notice producer. */
const PRODUCER_CLASS_MANAGER = 4;
const SECURITY_TRAPS = new Set([256, 257, 258, 259]);
const status = (s: number, record?: Uint8Array): SaAnswer => (record ? { kind: 'status', status: s, record } : { kind: 'status', status: s });

/** A notice to report: the Notice fields (IssuerGID filled from the issuer LID when absent). */
export type NoticeInput = Omit<Notice, 'issuerGid' | 'dataDetails'> & { issuerGid?: bigint; dataDetails?: Uint8Array };

export class InformManager implements SaHandler {
  readonly attrIds = [SaAttr.InformInfo, SaAttr.InformInfoRecord] as const;
  /** Subscriptions per subscriber port GUID, keyed by what identifies one (subscriptionKey). */
  private readonly byPort = new Map<bigint, Map<string, Subscription>>();
  private count = 0;
  /** Report destinations with a Report in flight or waiting (removed when idle). */
  private readonly dests = new Map<string, Destination>();
  private readonly limits: SaLimits;
  readonly stats: InformStats = { reportsSent: 0, reportTries: 0, reportsFailed: 0, reportsDropped: 0, reportsCoalesced: 0, subscriptionsRefused: 0 };

  constructor(private readonly o: InformOptions) {
    this.limits = resolveSaLimits(o.limits);
  }

  list(): readonly Subscription[] {
    const out: Subscription[] = [];
    for (const m of this.byPort.values()) for (const s of m.values()) out.push(s);
    return out;
  }

  /** Subscriptions stored. */
  get size(): number {
    return this.count;
  }

  /** Report destinations with work (in flight or queued): bounded by the subscribers. */
  get pendingDestinations(): number {
    return this.dests.size;
  }

  /** Put back a subscription as another SM had it (failover); a duplicate is not added twice. */
  restore(s: Subscription): void {
    const m = this.byPort.get(s.subscriberGuid);
    if (m) for (const x of m.values()) if (x.enumeration === s.enumeration) return;
    this.store({ ...s, info: { ...s.info } });
  }

  private store(s: Subscription): void {
    let m = this.byPort.get(s.subscriberGuid);
    if (!m) this.byPort.set(s.subscriberGuid, (m = new Map()));
    const k = subscriptionKey(s.info);
    if (!m.has(k)) this.count++;
    m.set(k, s);
  }

  handle(q: SaQuery, ctx: SaContext): SaAnswer {
    if (q.attrId === SaAttr.InformInfo) {
      if (q.method !== Method.Set) return status(MadStatus.UnsupportedMethodAttr);
      return this.set(q, ctx);
    }
    if (q.attrId === SaAttr.InformInfoRecord) {
      if (q.method !== Method.Get && q.method !== Method.GetTable) return status(MadStatus.UnsupportedMethodAttr);
      const recs = this.query(q, ctx);
      if (q.method === Method.GetTable) return { kind: 'records', records: recs };
      if (recs.length === 0) return status(SaStatus.NoRecords);
      if (recs.length > 1) return status(SaStatus.TooManyRecords);
      return { kind: 'records', records: recs, method: Method.GetResp };
    }
    return status(MadStatus.UnsupportedMethodAttr);
  }

  private set(q: SaQuery, ctx: SaContext): SaAnswer {
    let info: InformInfo;
    try {
      info = InformInfo.decode(q.data, 0);
    } catch {
      return status(SaStatus.ReqInvalid);
    }
    const echo = (s: number): SaAnswer => status(s, InformInfo.encode(info));
    const reqPort = requesterPort(ctx, q.requester);
    if (!reqPort) return echo(SaStatus.ReqInvalid);
    const subscriberGid = portGidOf(ctx, reqPort);
    const guid = subscriberGid & GUID_MASK;
    if (info.subscribe > 1 || info.isGeneric > 1) return echo(SaStatus.ReqInvalid);
    if (info.gid !== 0n && !portOfGid(ctx, info.gid)) return echo(SaStatus.ReqInvalidGid);
    if (info.gid === 0n && info.lidRangeBegin !== INFORM_LID_RANGE_ALL && info.lidRangeEnd !== 0 && info.lidRangeEnd < info.lidRangeBegin) return echo(SaStatus.ReqInvalid);
    if (info.qpn === 0) return echo(SaStatus.ReqInvalid);
    const security = info.isGeneric === 1 && (info.type === NoticeType.Security || SECURITY_TRAPS.has(info.trapNumber));
    if (security && !q.requester.trusted) return echo(SaStatus.ReqDenied);

    // Indexed: the requester's own subscriptions, by what identifies one (a duplicate is one).
    const mine = this.byPort.get(guid);
    const k = subscriptionKey(info);
    const have = mine?.get(k);
    if (info.subscribe) {
      if (!have && (mine?.size ?? 0) >= this.limits.subscriptionsPerRequester) {
        this.stats.subscriptionsRefused++;
        return echo(SaStatus.NoResources);
      }
      const enumeration = have ? have.enumeration : this.freeEnum(mine);
      this.store({ subscriberGid, subscriberGuid: guid, lid: q.requester.lid, enumeration, info: { ...info } });
    } else {
      if (!have) return status(SaStatus.ReqInvalid, InformInfo.encode({ ...info, subscribe: 0 }));
      this.unstore(guid, k);
    }
    return { kind: 'records', records: [InformInfo.encode(info)], method: Method.GetResp };
  }

  private unstore(guid: bigint, k: string): void {
    const m = this.byPort.get(guid);
    if (!m?.delete(k)) return;
    this.count--;
    if (m.size === 0) this.byPort.delete(guid);
  }

  private freeEnum(mine: Map<string, Subscription> | undefined): number {
    if (!mine) return 0;
    const used = new Set<number>();
    for (const s of mine.values()) used.add(s.enumeration);
    let e = 0;
    while (used.has(e)) e++;
    return e;
  }

  private query(q: SaQuery, ctx: SaContext): Uint8Array[] {
    const reqPort = requesterPort(ctx, q.requester);
    const mine = reqPort ? ctx.snapshot.fabric.nodes[reqPort.node]!.ports[reqPort.port]!.guid : undefined;
    const out: Uint8Array[] = [];
    const pool = q.requester.trusted ? this.list() : mine !== undefined ? [...(this.byPort.get(mine)?.values() ?? [])] : [];
    for (const s of pool) {
      const b = InformInfoRecord.encode({ subscriberGid: s.subscriberGid, enumeration: s.enumeration, informInfo: s.info });
      if (componentsMatch(InformInfoRecord, q.componentMask, q.data, 0, b, 0)) out.push(b);
    }
    return out;
  }

  /** Remove every subscription of a port (it left the fabric). Returns how many went. */
  removeSubscriber(portGuid: bigint): number {
    const m = this.byPort.get(portGuid);
    if (!m) return 0;
    this.byPort.delete(portGuid);
    this.count -= m.size;
    return m.size;
  }

  // ------------------------------------------------------------ reports

  /** Trap 64: a port (GID) came into service. */
  gidInService(gid: bigint, ctx: SaContext): Promise<NotifyResult> {
    return this.smTrap(TrapNumber.GidInService, gid, ctx, (s) => this.gidVisible(s, gid, ctx));
  }

  /** Trap 65: a port (GID) went out of service; its own subscriptions are dropped first. */
  gidOutOfService(gid: bigint, ctx: SaContext): Promise<NotifyResult> {
    this.removeSubscriber(gid & GUID_MASK);
    return this.smTrap(TrapNumber.GidOutOfService, gid, ctx, (s) => this.gidVisible(s, gid, ctx));
  }

  /** Trap 66: multicast group created (to subscribers holding its P_Key). */
  mcGroupCreated(mgid: bigint, pkey: number, ctx: SaContext): Promise<NotifyResult> {
    return this.smTrap(TrapNumber.McGroupCreated, mgid, ctx, (s) => this.holdsPkey(s, pkey, ctx));
  }

  /** Trap 67: multicast group deleted. */
  mcGroupDeleted(mgid: bigint, pkey: number, ctx: SaContext): Promise<NotifyResult> {
    return this.smTrap(TrapNumber.McGroupDeleted, mgid, ctx, (s) => this.holdsPkey(s, pkey, ctx));
  }

  /** Forward a trap an SMA sent the SM (e.g. 128 from a switch): IssuerGID from the issuer's LID. */
  forwardTrap(notice: NoticeSmp & { issuerGid?: bigint }, ctx: SaContext): Promise<NotifyResult> {
    return this.notify({ ...notice }, ctx);
  }

  private smTrap(trap: 64 | 65 | 66 | 67, gid: bigint, ctx: SaContext, visible: (s: Subscription) => boolean): Promise<NotifyResult> {
    const n: NoticeInput = {
      isGeneric: 1,
      type: NoticeType.SubnetManagement,
      producerType: PRODUCER_CLASS_MANAGER,
      trapNumber: trap,
      issuerLid: ctx.snapshot.smLid,
      noticeToggle: 0,
      noticeCount: 0,
      issuerGid: this.smGid(ctx),
      dataDetails: TrapGidDetails.encode({ gid }),
    };
    return this.notify(n, ctx, visible);
  }

  private smGid(ctx: SaContext): bigint {
    const ref = snapshotPorts(ctx.snapshot).byGuid.get(ctx.smPortGuid);
    return ref ? portGidOf(ctx, ref) : ctx.smPortGuid;
  }

  private gidVisible(s: Subscription, gid: bigint, ctx: SaContext): boolean {
    const sub = portOfGid(ctx, s.subscriberGid);
    const port = portOfGid(ctx, gid);
    if (!sub || !port) return true;
    return sharePkey(pkeysOf(ctx, sub), pkeysOf(ctx, port));
  }

  private holdsPkey(s: Subscription, pkey: number, ctx: SaContext): boolean {
    const sub = portOfGid(ctx, s.subscriberGid);
    return !sub || hasPkey(pkeysOf(ctx, sub), pkey);
  }

  /** The subscriptions a notice matches (GID / LID range of the issuer, trap/type/producer or vendor IDs). */
  matching(n: NoticeInput, issuerGid: bigint): Subscription[] {
    const out: Subscription[] = [];
    for (const m of this.byPort.values()) for (const s of m.values()) if (matches(s.info, n, issuerGid)) out.push(s);
    return out;
  }

  /**
   * Report `notice` to every matching subscriber: one Report per destination (LID, QPN) however
   * many of its subscriptions match, one Report in flight per destination and at most
   * `reportsQueuedPerSubscriber` waiting behind it (the oldest waiting one is dropped). Resolves
   * when every Report was acknowledged, gave up or was dropped (counted as failed).
   */
  async notify(notice: NoticeInput, ctx: SaContext, visible: (s: Subscription) => boolean = (s) => this.issuerVisible(s, notice, ctx)): Promise<NotifyResult> {
    const issuerGid = notice.issuerGid ?? this.issuerGidOf(notice.issuerLid, ctx);
    const subs = this.matching(notice, issuerGid).filter(visible);
    const full: Notice = {
      ...Notice.zero(),
      ...notice,
      issuerGid,
      dataDetails: notice.dataDetails ?? new Uint8Array(54),
    };
    const data = Notice.encode(full);
    const res: NotifyResult = { matched: subs.length, delivered: 0, failed: 0 };
    const once = new Map<string, { s: Subscription; lid: number }>();
    for (const s of subs) {
      const lid = this.lidOf(s, ctx);
      const k = `${lid}/${s.info.qpn}`;
      if (once.has(k)) this.stats.reportsCoalesced++;
      else once.set(k, { s, lid });
    }
    await Promise.all(
      [...once].map(
        ([k, { s, lid }]) =>
          new Promise<void>((resolve) =>
            this.enqueue(k, s, lid, data, (ok) => {
              if (ok) res.delivered++;
              else res.failed++;
              resolve();
            }, ctx),
          ),
      ),
    );
    return res;
  }

  private enqueue(k: string, s: Subscription, lid: number, data: Uint8Array, done: (ok: boolean) => void, ctx: SaContext): void {
    let d = this.dests.get(k);
    if (!d) this.dests.set(k, (d = { lid, qpn: s.info.qpn, sub: s, busy: false, queue: new Fifo() }));
    d.sub = s;
    if (d.queue.size >= this.limits.reportsQueuedPerSubscriber) {
      this.stats.reportsDropped++;
      d.queue.shift()!.done(false);
    }
    d.queue.push({ data, done });
    if (!d.busy) void this.pump(k, d, ctx);
  }

  /** Send a destination's Reports one at a time until its queue is empty, then forget it. */
  private async pump(k: string, d: Destination, ctx: SaContext): Promise<void> {
    d.busy = true;
    for (let job = d.queue.shift(); job; job = d.queue.shift()) {
      const r = await this.sendReport(d.lid, d.qpn, job.data);
      if (!r.ok) {
        try {
          this.o.onReportFailed?.(d.sub, r.error);
        } catch {
          /* a logging callback must not stop this destination's Reports */
        }
      }
      job.done(r.ok);
    }
    d.busy = false;
    this.dests.delete(k);
  }

  private issuerGidOf(lid: number, ctx: SaContext): bigint {
    const ref = snapshotPorts(ctx.snapshot).byLid(lid);
    return ref ? portGidOf(ctx, ref) : 0n;
  }

  private issuerVisible(s: Subscription, n: NoticeInput, ctx: SaContext): boolean {
    const sub = portOfGid(ctx, s.subscriberGid);
    const issuer = snapshotPorts(ctx.snapshot).byLid(n.issuerLid);
    if (!sub || !issuer) return true;
    return sharePkey(pkeysOf(ctx, sub), pkeysOf(ctx, issuer));
  }

  private lidOf(s: Subscription, ctx: SaContext): number {
    const ref = snapshotPorts(ctx.snapshot).byGuid.get(s.subscriberGuid);
    return (ref && ctx.snapshot.fabric.nodes[ref.node]!.ports[ref.port]!.lid) || s.lid;
  }

  private async sendReport(lid: number, qpn: number, notice: Uint8Array): Promise<{ ok: boolean; error?: unknown }> {
    const attempts = Math.max(1, this.o.attempts ?? 4);
    this.stats.reportsSent++;
    let last: unknown;
    for (let i = 0; i < attempts; i++) {
      this.stats.reportTries++;
      const mad = encodeSaMad({ header: { method: Method.Report, attrId: SaAttr.Notice } }, padTo(notice, SA_DATA_SIZE));
      try {
        await this.o.send(lid, qpn, mad);
        return { ok: true };
      } catch (e) {
        last = e;
      }
    }
    this.stats.reportsFailed++;
    return { ok: false, error: last };
  }
}

function padTo(b: Uint8Array, n: number): Uint8Array {
  if (b.length >= n) return b;
  const out = new Uint8Array(n);
  out.set(b);
  return out;
}

/** What identifies a subscription of one port (replace/unsubscribe; a duplicate Set is the same
 * one): everything but Subscribe and RespTimeValue. */
function subscriptionKey(a: InformInfo): string {
  return `${a.gid.toString(16)}/${a.lidRangeBegin}/${a.lidRangeEnd}/${a.isGeneric}/${a.type}/${a.trapNumber}/${a.qpn}/${a.producerType}`;
}

/** Does a subscription want this notice? */
export function matches(info: InformInfo, n: NoticeInput, issuerGid: bigint): boolean {
  if (info.gid !== 0n) {
    if (info.gid !== issuerGid) return false;
  } else if (info.lidRangeBegin !== INFORM_LID_RANGE_ALL) {
    const end = info.lidRangeEnd || info.lidRangeBegin;
    if (n.issuerLid < info.lidRangeBegin || n.issuerLid > end) return false;
  }
  if (info.isGeneric !== n.isGeneric) return false;
  if (info.trapNumber !== INFORM_ALL_TRAPS && info.trapNumber !== n.trapNumber) return false;
  if (info.isGeneric) {
    if (info.type !== INFORM_ALL_TYPES && info.type !== n.type) return false;
    if (info.producerType !== INFORM_ALL_PRODUCERS && info.producerType !== n.producerType) return false;
  } else if (info.producerType !== INFORM_ALL_PRODUCERS && info.producerType !== n.producerType) return false;
  return true;
}

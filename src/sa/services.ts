/**
 * ServiceRecords (IBA 15.2.5.14): register (SubnAdmSet), query (Get/GetTable by component mask),
 * delete (SubnAdmDelete), with leases on the SaContext clock.
 *
 * A record is identified by ServiceID, ServiceGID and ServiceP_Key (OpenSM's RID). Set needs the
 * ServiceID and ServiceGID components; without the P_Key component the record takes the first
 * P_Key of the requester's port. A Set for an existing identity replaces it (and restarts the
 * lease); when the stored record has a non-zero ServiceKey, replacing or deleting it requires the
 * same key unless the requester is trusted (ERR_REQ_DENIED). ServiceLease is in seconds,
 * 0xFFFFFFFF is infinite, 0 expires at once; queries return the remaining lease.
 * P_Key visibility: a requester sees and may register only services in partitions its port holds.
 * Bounded: a requester port holds at most `servicesPerRequester` records (sa/limits.ts), beyond
 * that a new registration is ERR_NO_RESOURCES; leases expire from a heap, not a scan of every record.
 */
import { MadStatus, Method } from '../wire/mad.js';
import { componentsMatch } from '../wire/layout.js';
import { SaAttr, SaStatus, ServiceRecord, SERVICE_LEASE_INFINITE } from '../wire/sa.js';
import type { SaAnswer, SaContext, SaHandler, SaQuery } from './types.js';
import { hasPkey, pkeysOf, portOfGid, requesterPort } from './multicast.js';
import { Heap } from '../util/heap.js';
import { KeyCounter, requesterKey, resolveSaLimits, type SaLimits } from './limits.js';

interface Stored {
  rec: ServiceRecord;
  /** ms on the SaContext clock; Infinity for an infinite lease. */
  expiresAt: number;
  /** Answered only to a query naming its ServiceID (the SM's own markers), never listed. */
  hidden?: boolean;
  /** Who registered it (requesterKey), counted against servicesPerRequester; none when restored. */
  owner?: string;
}

export interface ServiceOptions {
  /** Bounds (servicesPerRequester); defaults in sa/limits.ts. */
  limits?: Partial<SaLimits>;
}

export interface ServiceStats {
  /** Registrations refused with ERR_NO_RESOURCES (the requester's bound). */
  refused: number;
  expired: number;
}

const SR_ID_MASK = ServiceRecord.mask('serviceId') | ServiceRecord.mask('serviceGid');
const SR_PKEY = ServiceRecord.mask('servicePKey');
const SR_KEY = ServiceRecord.mask('serviceKey');
const status = (s: number): SaAnswer => ({ kind: 'status', status: s });

function keyOf(r: Pick<ServiceRecord, 'serviceId' | 'serviceGid' | 'servicePKey'>): string {
  return `${r.serviceId.toString(16)}/${r.serviceGid.toString(16)}/${(r.servicePKey & 0x7fff).toString(16)}`;
}
const idGidOf = (r: Pick<ServiceRecord, 'serviceId' | 'serviceGid'>): string => `${r.serviceId.toString(16)}/${r.serviceGid.toString(16)}`;
const isZero = (b: Uint8Array): boolean => b.every((x) => x === 0);
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

export class ServiceRegistry implements SaHandler {
  readonly attrIds = [SaAttr.ServiceRecord] as const;
  private readonly records = new Map<string, Stored>();
  /** Finite leases by expiry: (time, key, the Stored it was for). Entries of replaced or deleted
   * records are skipped when they come up, and the heap is rebuilt when they outnumber the live. */
  private readonly leases = new Heap<{ at: number; key: string; s: Stored }>((a, b) => a.at < b.at);
  /** ServiceID/ServiceGID → the keys (P_Keys) registered under it: Delete without a P_Key. */
  private readonly byIdGid = new Map<string, Set<string>>();
  private readonly perOwner = new KeyCounter();
  private readonly limits: SaLimits;
  readonly stats: ServiceStats = { refused: 0, expired: 0 };

  constructor(o: ServiceOptions = {}) {
    this.limits = resolveSaLimits(o.limits);
  }

  /** Records currently registered (expired ones purged at `now`), with their remaining lease. */
  list(now: number): ServiceRecord[] {
    this.expire(now);
    return [...this.records.values()].filter((s) => !s.hidden).map((s) => this.view(s, now));
  }

  /** How many records are stored (hidden ones included). */
  get size(): number {
    return this.records.size;
  }

  /** Requester ports holding records (for the bounds' metrics and tests). */
  get owners(): number {
    return this.perOwner.keys;
  }

  /** Drop every record whose lease has run out at `now`; returns how many went. O(expired · log n). */
  expire(now: number): number {
    let n = 0;
    for (let top = this.leases.peek(); top && top.at <= now; top = this.leases.peek()) {
      this.leases.pop();
      if (this.records.get(top.key) !== top.s) continue; // replaced or deleted since
      this.drop(top.key, top.s);
      n++;
    }
    this.stats.expired += n;
    return n;
  }

  /** When the next lease runs out (for a timer), undefined when none is finite. */
  nextExpiry(): number | undefined {
    for (let top = this.leases.peek(); top; top = this.leases.peek()) {
      if (this.records.get(top.key) === top.s) return top.at;
      this.leases.pop();
    }
    return undefined;
  }

  private put(k: string, s: Stored): void {
    const old = this.records.get(k);
    if (old) this.unindex(old);
    this.records.set(k, s);
    if (s.owner !== undefined) this.perOwner.inc(s.owner);
    const ig = idGidOf(s.rec);
    let set = this.byIdGid.get(ig);
    if (!set) this.byIdGid.set(ig, (set = new Set()));
    set.add(k);
    if (Number.isFinite(s.expiresAt)) {
      this.leases.push({ at: s.expiresAt, key: k, s });
      if (this.leases.size > 2 * this.records.size + 64) this.rebuildLeases();
    }
  }

  private drop(k: string, s: Stored): void {
    this.records.delete(k);
    this.unindex(s);
    const ig = idGidOf(s.rec);
    const set = this.byIdGid.get(ig);
    set?.delete(k);
    if (set && set.size === 0) this.byIdGid.delete(ig);
  }

  private unindex(s: Stored): void {
    if (s.owner !== undefined) this.perOwner.dec(s.owner);
  }

  private rebuildLeases(): void {
    this.leases.clear();
    for (const [key, s] of this.records) if (Number.isFinite(s.expiresAt)) this.leases.push({ at: s.expiresAt, key, s });
  }

  handle(q: SaQuery, ctx: SaContext): SaAnswer {
    if (q.attrId !== SaAttr.ServiceRecord) return status(MadStatus.UnsupportedMethodAttr);
    this.expire(ctx.now);
    let rec: ServiceRecord;
    try {
      rec = ServiceRecord.decode(q.data, 0);
    } catch {
      return status(SaStatus.ReqInvalid);
    }
    switch (q.method) {
      case Method.Set:
        return this.register(q, rec, ctx);
      case Method.Delete:
        return this.remove(q, rec, ctx);
      case Method.Get:
      case Method.GetTable: {
        const recs = this.query(q, ctx);
        if (q.method === Method.GetTable) return { kind: 'records', records: recs };
        if (recs.length === 0) return status(SaStatus.NoRecords);
        if (recs.length > 1) return status(SaStatus.TooManyRecords);
        return { kind: 'records', records: recs, method: Method.GetResp };
      }
      default:
        return status(MadStatus.UnsupportedMethodAttr);
    }
  }

  private requesterPkeys(q: SaQuery, ctx: SaContext): number[] | undefined {
    const p = requesterPort(ctx, q.requester);
    return p ? pkeysOf(ctx, p) : undefined;
  }

  private register(q: SaQuery, rec: ServiceRecord, ctx: SaContext): SaAnswer {
    if ((q.componentMask & SR_ID_MASK) !== SR_ID_MASK) return status(SaStatus.ReqInsufficientComponents);
    const pkeys = this.requesterPkeys(q, ctx);
    if (!pkeys && !q.requester.trusted) return status(SaStatus.ReqInvalid);
    if (!(q.componentMask & SR_PKEY)) rec.servicePKey = pkeys?.[0] ?? 0xffff;
    const svcPort = portOfGid(ctx, rec.serviceGid);
    if (!svcPort) return status(SaStatus.ReqInvalidGid);
    if (!q.requester.trusted && !hasPkey(pkeys ?? [], rec.servicePKey)) return status(SaStatus.ReqDenied);
    if (!hasPkey(pkeysOf(ctx, svcPort), rec.servicePKey)) return status(SaStatus.ReqInvalid);
    const k = keyOf(rec);
    const old = this.records.get(k);
    if (old && !q.requester.trusted && !isZero(old.rec.serviceKey) && !sameBytes(old.rec.serviceKey, rec.serviceKey)) return status(SaStatus.ReqDenied);
    const owner = requesterKey(q.requester);
    // A new record (not a replacement by its owner) counts against the requester's bound.
    if ((!old || old.owner !== owner) && this.perOwner.get(owner) >= this.limits.servicesPerRequester) {
      this.stats.refused++;
      return status(SaStatus.NoResources);
    }
    const lease = rec.serviceLease >>> 0;
    const s: Stored = { rec, expiresAt: lease === SERVICE_LEASE_INFINITE ? Infinity : ctx.now + lease * 1000, owner };
    this.put(k, s);
    return { kind: 'records', records: [ServiceRecord.encode(rec)], method: Method.GetResp };
  }

  private remove(q: SaQuery, rec: ServiceRecord, ctx: SaContext): SaAnswer {
    if ((q.componentMask & SR_ID_MASK) !== SR_ID_MASK) return status(SaStatus.ReqInsufficientComponents);
    const pkeys = this.requesterPkeys(q, ctx) ?? [];
    const keys = this.byIdGid.get(idGidOf(rec)) ?? new Set<string>();
    const candidates = [...keys].map((k) => [k, this.records.get(k)!] as const).filter(
      ([, s]) =>
        (!(q.componentMask & SR_PKEY) || (s.rec.servicePKey & 0x7fff) === (rec.servicePKey & 0x7fff)) &&
        (q.requester.trusted || hasPkey(pkeys, s.rec.servicePKey)),
    );
    if (candidates.length === 0) return status(SaStatus.NoRecords);
    if (candidates.length > 1) return status(SaStatus.TooManyRecords);
    const [k, s] = candidates[0]!;
    if (!q.requester.trusted && !isZero(s.rec.serviceKey) && (!(q.componentMask & SR_KEY) || !sameBytes(s.rec.serviceKey, rec.serviceKey))) return status(SaStatus.ReqDenied);
    this.drop(k, s);
    return { kind: 'records', records: [ServiceRecord.encode(this.view(s, ctx.now))], method: Method.DeleteResp };
  }

  private query(q: SaQuery, ctx: SaContext): Uint8Array[] {
    const pkeys = this.requesterPkeys(q, ctx) ?? [];
    const out: Uint8Array[] = [];
    const byId = q.componentMask & ServiceRecord.mask('serviceId') ? ServiceRecord.decode(q.data).serviceId : undefined;
    for (const s of this.records.values()) {
      if (s.hidden && byId !== s.rec.serviceId) continue;
      if (!q.requester.trusted && !hasPkey(pkeys, s.rec.servicePKey)) continue;
      const b = ServiceRecord.encode(this.view(s, ctx.now));
      if (componentsMatch(ServiceRecord, q.componentMask, q.data, 0, b, 0)) out.push(b);
    }
    return out;
  }

  /** Put back a record as another SM had it (failover): its remaining lease counts from `now`. */
  restore(rec: ServiceRecord, now: number, o: { hidden?: boolean } = {}): void {
    const lease = rec.serviceLease >>> 0;
    this.put(keyOf(rec), { rec: { ...rec }, expiresAt: lease === SERVICE_LEASE_INFINITE ? Infinity : now + lease * 1000, ...(o.hidden ? { hidden: true } : {}) });
  }

  private view(s: Stored, now: number): ServiceRecord {
    const lease = Number.isFinite(s.expiresAt) ? Math.max(0, Math.ceil((s.expiresAt - now) / 1000)) : SERVICE_LEASE_INFINITE;
    return { ...s.rec, serviceLease: lease };
  }
}

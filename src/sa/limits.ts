/**
 * Bounds on the SA state a requester can grow (issue #11 item 5), in one place: the option names
 * and defaults and a per-requester counter.
 *
 * Exceeding a bound is answered with the spec's status (ERR_NO_RESOURCES 0x0100, IBA 15.2.5.x
 * Table 222) and counted; it is never fatal, and its log line goes through the logger's rate limit
 * (util/log.ts Logger.from), never a line per request.
 */
import type { SaRequester } from './types.js';

/** The SA's bounds (constructor options; defaults in DEFAULT_SA_LIMITS). */
export interface SaLimits {
  /** ServiceRecords one requester port may hold registered. */
  servicesPerRequester: number;
  /** InformInfo subscriptions one requester port may hold (duplicates are one subscription). */
  subscriptionsPerRequester: number;
  /** Reports waiting per subscriber destination (LID, QPN) while one is in flight; the oldest goes first. */
  reportsQueuedPerSubscriber: number;
  /** Multicast groups one requester port may have created (and that still exist). */
  groupsPerRequester: number;
  /** Multicast groups in all, hence MLIDs 0xC000.. (OpenSM's cap: 1,024); the smallest
   * MulticastFDBCap across the switches bounds it further. */
  maxGroups: number;
  /** RMPP responses (GetTable, GetMulti, ...) being sent to one requester LID at once. */
  rmppPerRequester: number;
  /** RMPP responses being sent at once, all requesters. */
  rmppTotal: number;
}

export const DEFAULT_SA_LIMITS: Readonly<SaLimits> = Object.freeze({
  servicesPerRequester: 256,
  subscriptionsPerRequester: 64,
  reportsQueuedPerSubscriber: 8,
  groupsPerRequester: 256,
  maxGroups: 1024,
  rmppPerRequester: 32,
  rmppTotal: 256,
});

/** Defaults overlaid with what was given; every bound at least 1. */
export function resolveSaLimits(o: Partial<SaLimits> = {}): SaLimits {
  const out = { ...DEFAULT_SA_LIMITS } as SaLimits;
  for (const k of Object.keys(out) as (keyof SaLimits)[]) {
    const v = o[k];
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 1) throw new RangeError(`SA limit ${k} must be a number >= 1 (got ${String(v)})`);
    out[k] = Math.floor(v);
  }
  return out;
}

/** The key a requester's state is counted under: its port GUID, else its LID. */
export function requesterKey(r: Pick<SaRequester, 'portGuid' | 'lid'>): string {
  return r.portGuid !== undefined ? r.portGuid.toString(16) : `lid:${r.lid}`;
}

/** Counts per key; a key at zero is removed (the map holds only keys with state). */
export class KeyCounter {
  private readonly m = new Map<string, number>();
  get(k: string): number {
    return this.m.get(k) ?? 0;
  }
  inc(k: string): void {
    this.m.set(k, this.get(k) + 1);
  }
  dec(k: string): void {
    const n = this.get(k) - 1;
    if (n > 0) this.m.set(k, n);
    else this.m.delete(k);
  }
  get keys(): number {
    return this.m.size;
  }
  clear(): void {
    this.m.clear();
  }
}

/**
 * Finished answers to repeated PathRecord Gets, per SA context.
 *
 * A PathRecord Get is a pure function of the SA context (the snapshot the SM published), the
 * request's attribute, modifier, component mask and record bytes, and who asks (the requester's
 * LID decides what it may see; whether its SM_Key is trusted decides nothing for paths today but
 * is part of the key so that can change safely). Applications ask for the same paths again and
 * again (every connection setup, every rank of a job), so the SA keeps the single-MAD response it
 * sent, keyed by exactly those bytes, and answers a repeat by copying it (the TID is patched by
 * MadRpc.respond). Nothing is shared across contexts: a new context (every sweep) empties it.
 * Bounded: emptied when full. Pure; the server decides what is cacheable and sends.
 */
import { SA_DATA_OFFSET } from '../wire/sa.js';
import type { SaContext } from './types.js';

/** Request bytes the answer depends on: AttributeID, (reserved), AttributeModifier. */
const ATTR_START = 16;
const ATTR_END = 24;
/** ComponentMask (SA header bytes 48–55), then the record. Only the record's own bytes count: past
 * them a request may carry anything (ibsim delivers bytes 224–255 as garbage). */
const MASK_START = 48;
/** Extra key bytes after the request's: the requester's LID (2) and trust (1). */
const EXTRA = 3;

interface Entry {
  key: Uint8Array;
  hash: number;
  mad: Uint8Array;
  next: Entry | undefined;
}

export interface AnswerCacheStats {
  hits: number;
  misses: number;
  /** Times the cache was emptied because it was full. */
  evictions: number;
}

export class AnswerCache {
  private ctx: SaContext | undefined;
  private readonly buckets = new Map<number, Entry>();
  private size = 0;
  private readonly scratch: Uint8Array;
  readonly stats: AnswerCacheStats = { hits: 0, misses: 0, evictions: 0 };

  /**
   * @param maxEntries most answers kept (each about 400 bytes); 0 disables the cache.
   * @param recordBytes length of the cached attribute's record (PathRecord: 64).
   */
  constructor(
    readonly maxEntries: number,
    readonly recordBytes: number,
  ) {
    this.scratch = new Uint8Array(ATTR_END - ATTR_START + SA_DATA_OFFSET - MASK_START + recordBytes + EXTRA);
  }

  get entries(): number {
    return this.size;
  }

  /** The key of a request in `scratch`; returns its length. */
  private keyOf(req: Uint8Array, lid: number, trusted: boolean): number {
    const k = this.scratch;
    let n = 0;
    for (let i = ATTR_START; i < ATTR_END; i++) k[n++] = req[i]!;
    const end = Math.min(req.length, SA_DATA_OFFSET + this.recordBytes);
    for (let i = MASK_START; i < end; i++) k[n++] = req[i]!;
    k[n++] = lid >>> 8;
    k[n++] = lid & 0xff;
    k[n++] = trusted ? 1 : 0;
    return n;
  }

  private static hash(k: Uint8Array, n: number): number {
    let h = 0x811c9dc5; // FNV-1a
    for (let i = 0; i < n; i++) h = Math.imul(h ^ k[i]!, 0x01000193);
    return h >>> 0;
  }

  private sync(ctx: SaContext): void {
    if (ctx === this.ctx) return;
    this.ctx = ctx;
    this.clear();
  }

  clear(): void {
    this.buckets.clear();
    this.size = 0;
  }

  /** The response sent for an identical request under `ctx`, or undefined. Do not modify it. */
  get(ctx: SaContext, req: Uint8Array, lid: number, trusted: boolean): Uint8Array | undefined {
    if (this.maxEntries <= 0 || req.length < SA_DATA_OFFSET) return undefined;
    this.sync(ctx);
    const n = this.keyOf(req, lid, trusted);
    const h = AnswerCache.hash(this.scratch, n);
    for (let e = this.buckets.get(h); e; e = e.next) {
      if (e.hash === h && e.key.length === n && sameBytes(e.key, this.scratch, n)) {
        this.stats.hits++;
        return e.mad;
      }
    }
    this.stats.misses++;
    return undefined;
  }

  /** Remember the response `mad` (copied) sent for `req` under `ctx`. */
  put(ctx: SaContext, req: Uint8Array, lid: number, trusted: boolean, mad: Uint8Array): void {
    if (this.maxEntries <= 0 || req.length < SA_DATA_OFFSET) return;
    this.sync(ctx);
    if (this.size >= this.maxEntries) {
      this.clear();
      this.stats.evictions++;
    }
    const n = this.keyOf(req, lid, trusted);
    const h = AnswerCache.hash(this.scratch, n);
    const e: Entry = { key: this.scratch.slice(0, n), hash: h, mad: mad.slice(), next: this.buckets.get(h) };
    this.buckets.set(h, e);
    this.size++;
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

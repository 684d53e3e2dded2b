/**
 * Finished answers to repeated PathRecord Gets, per SA context.
 *
 * A PathRecord Get is a pure function of the SA context (the snapshot the SM published), the
 * request's attribute, modifier, component mask and record bytes, and who asks (the requester's
 * LID decides what it may see; whether its SM_Key is trusted decides nothing for paths today but
 * is part of the key so that can change safely). Applications ask for the same paths again and
 * again (every connection setup, every rank of a job), so the SA keeps the single-MAD response it
 * sent with a record (error responses echo request bytes outside the key, so they are not kept),
 * keyed by exactly those bytes, and answers a repeat by copying it (the TID is patched by
 * MadRpc.respond). Nothing is shared across contexts: a new context (every sweep) empties it.
 * Bounded: emptied when full. Pure; the server decides what is cacheable and sends.
 */
import { readU32 } from '../wire/layout.js';
import { SA_DATA_OFFSET } from '../wire/sa.js';
import type { SaContext } from './types.js';

/** Request bytes the answer depends on: AttributeID, (reserved), AttributeModifier. */
const ATTR_START = 16;
const ATTR_END = 24;
/** ComponentMask (SA header bytes 48–55), then the record. Only the record's own bytes count: past
 * them a request may carry anything (ibsim delivers bytes 224–255 as garbage). */
const MASK_START = 48;
/** Key words after the request's bytes: the requester's LID and trust, and the request's length. */
const EXTRA_WORDS = 1;

interface Entry {
  key: Uint32Array;
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
  /** The key of the request at hand, as big-endian 32-bit words (compared and hashed a word at a time). */
  private readonly scratch: Uint32Array;
  private readonly keyWords: number;
  readonly stats: AnswerCacheStats = { hits: 0, misses: 0, evictions: 0 };

  /**
   * @param maxEntries most answers kept (each about 400 bytes); 0 disables the cache.
   * @param recordBytes length of the cached attribute's record (PathRecord: 64).
   */
  constructor(
    readonly maxEntries: number,
    readonly recordBytes: number,
  ) {
    const bytes = ATTR_END - ATTR_START + SA_DATA_OFFSET - MASK_START + recordBytes;
    // + one word for the requester (LID, trust) and the request's length
    this.keyWords = Math.ceil(bytes / 4) + EXTRA_WORDS;
    this.scratch = new Uint32Array(this.keyWords);
  }

  get entries(): number {
    return this.size;
  }

  /** Put the key of a request in `scratch` and return its hash (FNV-1a over the words). */
  private keyOf(req: Uint8Array, lid: number, trusted: boolean): number {
    const k = this.scratch;
    const end = Math.min(req.length, SA_DATA_OFFSET + this.recordBytes);
    let w = 0;
    for (let i = ATTR_START; i < ATTR_END; i += 4) k[w++] = readU32(req, i);
    let i = MASK_START;
    for (; i + 4 <= end; i += 4) k[w++] = readU32(req, i);
    if (i < end) {
      // A request cut short inside a word: the missing bytes read as zeros (its length is in the key).
      let v = 0;
      for (let j = 0; j < 4; j++) v = (v << 8) | (i + j < end ? req[i + j]! : 0);
      k[w++] = v >>> 0;
    }
    while (w < this.keyWords - EXTRA_WORDS) k[w++] = 0;
    k[w++] = (((lid & 0xffff) << 16) | (trusted ? 0x8000 : 0) | (end & 0x7fff)) >>> 0;
    let h = 0x811c9dc5;
    for (let j = 0; j < w; j++) h = Math.imul(h ^ k[j]!, 0x01000193);
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
    const h = this.keyOf(req, lid, trusted);
    for (let e = this.buckets.get(h); e; e = e.next) {
      if (e.hash === h && sameWords(e.key, this.scratch)) {
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
    const h = this.keyOf(req, lid, trusted);
    const e: Entry = { key: this.scratch.slice(), hash: h, mad: mad.slice(), next: this.buckets.get(h) };
    this.buckets.set(h, e);
    this.size++;
  }
}

function sameWords(a: Uint32Array, b: Uint32Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The books of MadRpc's outstanding requests: one Pending per request in a slot table indexed by
 * its low TID, the global window and the per-destination windows (FIFO beyond them), and TID
 * allocation.
 *
 * Preallocated, reused structures (no allocation per MAD the books can avoid): Pending
 * objects come from a free list and go back to it once settled (`gen` tells a reused one from
 * the request a stale reference meant); the table is an array of 2^k slots, a request sitting in
 * slot `tid & (2^k - 1)` (TIDs run on in sequence, skipping a TID whose slot is taken, and the
 * table doubles when too many are); the per-destination states are pooled as well.
 */
import { Fifo } from '../util/fifo.js';
import type { MadAddress, ReceivedMad } from '../transport/types.js';
import type { RmppReceiver } from './rmpp-receiver.js';
import type { DestinationKey } from './ident.js';

export const enum St {
  Queued = 0,
  Outstanding = 1,
  Done = 2,
}

/** Low TIDs are allocated in 1..2^30-1 (unique across classes) so slot keys stay small integers. */
export const TID_MAX = 0x3fffffff;

/** Where a callback-slot SMP settles (one object for many requests, each told apart by its `ctx`):
 * exactly one of the two is called, once, per request. */
export interface SmpSink<C> {
  /** The SMP data (64 bytes) of a response with MAD status 0. */
  smpOk(ctx: C, data: Uint8Array): void;
  /** MadTimeoutError, MadStatusError, TransportError, RpcClosedError or an encoding error. */
  smpFailed(ctx: C, e: Error): void;
}

const NO_MAD = new Uint8Array(0);
const NO_ADDR: MadAddress = { lid: 0, qpn: 0 };
const nop = (): void => undefined;

export class Pending {
  /** Bumped each time the object is (re)used for a request: a deadline or handler holding an
   * older `gen` refers to a request that is over. */
  gen = 0;
  key = 0;
  mad: Uint8Array = NO_MAD;
  /** The request's class: a response must be of the same class. */
  mgmtClass = 0;
  /** The request's attribute: an SMP response must be of the same one. */
  attrId = 0;
  addr: MadAddress = NO_ADDR;
  dest: DestinationKey = 0;
  /** This try's timeout (MadRpc sets it per try when timeouts are adaptive). */
  timeoutMs = 0;
  retriesLeft = 0;
  /** The timeout follows MadRpc's RTO estimate (no per-request timeout was given). */
  adaptive = false;
  /** Tries made above MadRpc before this request (RequestOptions.priorTries). */
  priorTries = 0;
  state: St = St.Queued;
  tries = 0;
  transportStatus = 0;
  rx: RmppReceiver | undefined = undefined;
  /** An SMP (MadRpc.requestSmp): settled with its SMP data, or MadStatusError, as it is matched. */
  smp = false;
  /** When the latest try went out. */
  sentAt = 0;
  resolve: (v: ReceivedMad | Uint8Array) => void = nop;
  reject: (e: Error) => void = nop;
  /** A callback-slot SMP (MadRpc.smpSetDrTo): settled through `sink` with `ctx` instead of a
   * promise (no promise or closure per SMP). */
  sink: SmpSink<unknown> | undefined = undefined;
  ctx: unknown = undefined;
  /** `mad` is MadRpc's own (built by smpSetDrTo over a transport that copies on send): it goes
   * back to MadRpc's MAD pool once the request settled. */
  ownMad = false;
  /** Sent, waiting for its response, and not being received by RMPP. */
  get awaiting(): boolean {
    return this.state === St.Outstanding && !this.rx;
  }
}

interface DestState {
  admitted: number;
  waiting: Fifo<Pending> | undefined;
}

export class RequestTable {
  private slots: (Pending | undefined)[];
  private mask: number;
  private size = 0;
  private readonly free: Pending[] = [];
  private readonly dests = new Map<DestinationKey, DestState>();
  private readonly freeDests: DestState[] = [];
  private readonly ready = new Fifo<Pending>();
  private outstanding = 0;
  private nextTid: number;

  constructor(
    private readonly window: number,
    private readonly perDest: number,
    firstTid: number,
    /** Put a request on the wire (its first try). */
    private readonly send: (p: Pending) => void,
  ) {
    this.nextTid = Math.min(TID_MAX, firstTid >>> 0) || 1;
    let n = 64;
    while (n < 2 * window) n *= 2;
    this.slots = new Array<Pending | undefined>(n).fill(undefined);
    this.mask = n - 1;
  }

  get outstandingCount(): number {
    return this.outstanding;
  }
  get queuedCount(): number {
    return this.size - this.outstanding;
  }

  /** A Pending for a new request (reused when one is free): `gen` bumped, everything else reset
   * by the caller's fields and these defaults. */
  acquire(): Pending {
    const p = this.free.pop() ?? new Pending();
    p.gen = (p.gen + 1) | 0; // wraps as the Int32Array the deadlines keep it in does
    p.state = St.Queued;
    p.tries = 0;
    p.transportStatus = 0;
    p.rx = undefined;
    p.sentAt = 0;
    return p;
  }

  /** Give a settled Pending back for reuse. Only once nothing but stale references (which check
   * `gen`) remain: not one an RMPP receiver's handlers still hold. */
  release(p: Pending): void {
    if (p.state !== St.Done || p.rx) return;
    p.mad = NO_MAD;
    p.addr = NO_ADDR;
    p.resolve = nop;
    p.reject = nop;
    p.sink = undefined;
    p.ctx = undefined;
    p.ownMad = false;
    if (this.free.length < 4096) this.free.push(p);
  }

  /** A low TID no pending request holds (its slot free). */
  allocTid(): number {
    if (this.size * 2 >= this.slots.length) this.grow();
    let tid = this.nextTid;
    while (this.slots[tid & this.mask] !== undefined) tid = tid >= TID_MAX ? 1 : tid + 1;
    this.nextTid = tid >= TID_MAX ? 1 : tid + 1;
    return tid;
  }

  /** Twice the slots: a request keeps its slot's low bits, so distinct slots stay distinct. */
  private grow(): void {
    const old = this.slots;
    const n = old.length * 2;
    this.slots = new Array<Pending | undefined>(n).fill(undefined);
    this.mask = n - 1;
    for (const p of old) if (p) this.slots[p.key & this.mask] = p;
  }

  /** The request with low TID `low` and class `mgmtClass`, if pending. */
  lookup(low: number, mgmtClass: number): Pending | undefined {
    if (low > TID_MAX) return undefined;
    const p = this.slots[low & this.mask];
    return p && p.key === low && p.mgmtClass === mgmtClass ? p : undefined;
  }

  /** Book a new request (its `key` from allocTid) and send it when the windows allow. */
  add(p: Pending): void {
    this.slots[p.key & this.mask] = p;
    this.size++;
    let d = this.dests.get(p.dest);
    if (!d) {
      d = this.freeDests.pop() ?? { admitted: 0, waiting: undefined };
      this.dests.set(p.dest, d);
    }
    if (d.admitted < this.perDest && !(d.waiting && d.waiting.size)) {
      d.admitted++;
      this.toReady(p);
    } else {
      (d.waiting ??= new Fifo<Pending>()).push(p);
    }
  }

  private toReady(p: Pending): void {
    if (this.outstanding < this.window && this.ready.size === 0) this.transmit(p);
    else this.ready.push(p);
  }

  private transmit(p: Pending): void {
    p.state = St.Outstanding;
    this.outstanding++;
    this.send(p);
  }

  /** Take p out of the books and let the next queued request go. */
  settle(p: Pending): void {
    if (p.state === St.Done) return;
    const wasOut = p.state === St.Outstanding;
    p.state = St.Done;
    if (this.slots[p.key & this.mask] === p) {
      this.slots[p.key & this.mask] = undefined;
      this.size--;
    }
    const d = this.dests.get(p.dest);
    if (wasOut) this.outstanding--;
    if (d) {
      d.admitted--;
      const next = d.waiting?.shift();
      if (next) {
        d.admitted++;
        this.ready.push(next);
      } else if (d.admitted === 0) {
        this.dests.delete(p.dest);
        if (!d.waiting && this.freeDests.length < 1024) this.freeDests.push(d);
      }
    }
    while (this.outstanding < this.window) {
      const q = this.ready.shift();
      if (!q) break;
      this.transmit(q);
    }
  }

  /** Forget everything; returns what was pending (marked done), for the caller to reject. */
  clear(): Pending[] {
    const all: Pending[] = [];
    for (let i = 0; i < this.slots.length; i++) {
      const p = this.slots[i];
      if (p) all.push(p);
      this.slots[i] = undefined;
    }
    this.size = 0;
    this.ready.drain();
    this.dests.clear();
    this.outstanding = 0;
    for (const p of all) p.state = St.Done;
    return all;
  }
}

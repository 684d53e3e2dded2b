/**
 * The books of MadRpc's outstanding requests: one Pending per request keyed by its low TID, the
 * global window and the per-destination windows (FIFO beyond them), and TID allocation.
 */
import { Fifo } from '../util/fifo.js';
import type { MadAddress, ReceivedMad } from '../transport/types.js';
import type { RmppReceiver } from './rmpp.js';
import type { DestinationKey } from './ident.js';

export const enum St {
  Queued = 0,
  Outstanding = 1,
  Done = 2,
}

/** Low TIDs are allocated in 1..2^30-1 (unique across classes) so Map keys stay small integers. */
export const TID_MAX = 0x3fffffff;

export class Pending {
  state: St = St.Queued;
  tries = 0;
  transportStatus = 0;
  rx: RmppReceiver | undefined = undefined;
  /** An SMP (MadRpc.requestSmp): settled with its SMP data, or MadStatusError, as it is matched. */
  smp = false;
  /** The request's attribute: an SMP response must be of the same one. */
  attrId = 0;
  resolve!: (v: ReceivedMad | Uint8Array) => void;
  reject!: (e: Error) => void;
  constructor(
    readonly key: number,
    readonly mad: Uint8Array,
    /** The request's class: a response must be of the same class. */
    readonly mgmtClass: number,
    readonly addr: MadAddress,
    readonly dest: DestinationKey,
    /** This try's timeout (MadRpc sets it per try when timeouts are adaptive). */
    public timeoutMs: number,
    public retriesLeft: number,
    /** The timeout follows MadRpc's RTO estimate (no per-request timeout was given). */
    readonly adaptive = false,
  ) {}
  /** When the latest try went out. */
  sentAt = 0;
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
  private readonly pending = new Map<number, Pending>();
  private readonly dests = new Map<DestinationKey, DestState>();
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
  }

  get outstandingCount(): number {
    return this.outstanding;
  }
  get queuedCount(): number {
    return this.pending.size - this.outstanding;
  }

  /** A low TID no pending request holds. */
  allocTid(): number {
    let tid = this.nextTid;
    while (this.pending.has(tid)) tid = tid >= TID_MAX ? 1 : tid + 1;
    this.nextTid = tid >= TID_MAX ? 1 : tid + 1;
    return tid;
  }

  /** The request with low TID `low` and class `mgmtClass`, if pending. */
  lookup(low: number, mgmtClass: number): Pending | undefined {
    if (low > TID_MAX) return undefined;
    const p = this.pending.get(low);
    return p && p.mgmtClass === mgmtClass ? p : undefined;
  }

  /** Book a new request and send it when the windows allow. */
  add(p: Pending): void {
    this.pending.set(p.key, p);
    let d = this.dests.get(p.dest);
    if (!d) {
      d = { admitted: 0, waiting: undefined };
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
    const wasOut = p.state === St.Outstanding;
    p.state = St.Done;
    this.pending.delete(p.key);
    const d = this.dests.get(p.dest);
    if (wasOut) this.outstanding--;
    if (d) {
      d.admitted--;
      const next = d.waiting?.shift();
      if (next) {
        d.admitted++;
        this.ready.push(next);
      } else if (d.admitted === 0) this.dests.delete(p.dest);
    }
    while (this.outstanding < this.window) {
      const q = this.ready.shift();
      if (!q) break;
      this.transmit(q);
    }
  }

  /** Forget everything; returns what was pending (marked done), for the caller to reject. */
  clear(): Pending[] {
    const all = [...this.pending.values()];
    this.pending.clear();
    this.ready.drain();
    this.dests.clear();
    this.outstanding = 0;
    for (const p of all) p.state = St.Done;
    return all;
  }
}

/**
 * MadRpc: the request/response layer over a Transport. It allocates TIDs (only the low 32 bits are
 * ours: libibumad/the kernel and ibsim write the high bits), matches responses on low TID + class,
 * retries on timeout and at once when the transport hands a MAD back undeliverable (ibsim's status
 * 110), keeps a window of outstanding requests (global and per destination, FIFO beyond it),
 * dispatches unsolicited MADs (requests, traps, reports) by class/method/attribute, and runs RMPP
 * where the transport does not.
 *
 * Hot path: one Pending object and one Promise per request, a Map keyed by class+low TID, and a
 * single clock timer for all deadlines (a heap, stale entries dropped lazily).
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { Heap } from '../util/heap.js';
import { readBits } from '../wire/layout.js';
import { EncodeError } from '../wire/errors.js';
import { MAD_SIZE, MgmtClass, Method, PERMISSIVE_LID, SmpDr, SmpLid, isResponse } from '../wire/mad.js';
import type { MadAddress, ReceivedMad, Transport } from '../transport/types.js';
import { TransportError } from '../transport/types.js';
import { RMPP_HEADER_OFFSET, RMPP_HEADER_SIZE, RmppType, decodeRmpp, encodeRmpp, rmppData, type RmppHeader } from '../wire/rmpp.js';
import { MadStatusError, MadTimeoutError, RpcClosedError, describeMad, type MadIdent } from './errors.js';
import { Fifo } from '../util/fifo.js';
import {
  RmppReceiver,
  RmppSender,
  hasRmppHeader,
  identOf,
  newRmppStats,
  replyAddress,
  resolveRmppOptions,
  rmppActive,
  rmppDataOffset,
  segmentRmpp,
  type ResolvedRmppOptions,
  type RmppHost,
  type RmppOptions,
  type RmppStats,
} from './rmpp.js';

export type DestinationKey = string | number;

export interface MadRpcOptions {
  /** Per-try response timeout. Default 100 ms. */
  timeoutMs?: number;
  /** Extra tries after the first. Default 3. */
  retries?: number;
  /** Most requests outstanding at once. Default 16. */
  window?: number;
  /** Most requests outstanding to one destination. Default 4. */
  perDestinationWindow?: number;
  /** Destination key for the per-destination window. Default: DR path for class 0x81, else the LID. */
  destinationKey?: (mad: Uint8Array, addr: MadAddress) => DestinationKey;
  /** M_Key put in SMPs built by smpGet/smpSet/smpGetDr/smpSetDr. Default 0. */
  mkey?: bigint;
  /** RMPP in TypeScript (default on), or `false` where the kernel does RMPP (real hardware). */
  rmpp?: RmppOptions | false;
  /** First low TID to hand out (default 1; TIDs run 1..2^30-1 and wrap); tests use it to exercise wrap-around. */
  firstTid?: number;
  /** Let the event loop deliver what arrived before expiring tries (default true; see onTimer). */
  graceTurn?: boolean;
}

export interface RequestOptions {
  timeoutMs?: number;
  retries?: number;
  /** Override the destination key of this request. */
  destination?: DestinationKey;
}

export interface SmpOptions extends RequestOptions {
  mkey?: bigint;
}

export interface UnsolicitedFilter {
  method?: number;
  attrId?: number;
}
export type UnsolicitedHandler = (mad: ReceivedMad) => void;

export interface MadRpcStats {
  /** MADs handed to the transport as requests (first tries and retries). */
  sent: number;
  retries: number;
  /** Tries that expired without a response. */
  timeouts: number;
  /** Tries the transport handed back with a non-zero status. */
  bounced: number;
  /** Requests rejected after all tries (timeouts or undeliverable). */
  failed: number;
  /** Responses matched to a request. */
  responses: number;
  /** Responses with no outstanding request (late, duplicate or foreign). */
  unmatched: number;
  /** Unsolicited MADs handed to a handler. */
  unsolicited: number;
  /** Unsolicited MADs no handler wanted. */
  unhandled: number;
  /** Responses sent with respond()/respondRmpp(). */
  responsesSent: number;
  /** Received MADs too short to carry a header. */
  malformed: number;
}

const enum St {
  Queued = 0,
  Outstanding = 1,
  Done = 2,
}

/** Low TIDs are allocated in 1..2^30-1 (unique across classes) so Map keys stay small integers. */
const TID_MAX = 0x3fffffff;

class Pending {
  state: St = St.Queued;
  tries = 0;
  transportStatus = 0;
  rx: RmppReceiver | undefined = undefined;
  resolve!: (m: ReceivedMad) => void;
  reject!: (e: Error) => void;
  constructor(
    readonly key: number,
    readonly mad: Uint8Array,
    readonly addr: MadAddress,
    readonly dest: DestinationKey,
    readonly timeoutMs: number,
    public retriesLeft: number,
  ) {}
}

interface Deadline {
  at: number;
  p: Pending;
  tries: number;
}
const deadlineLess = (a: Deadline, b: Deadline): boolean => a.at < b.at;

interface DestState {
  admitted: number;
  waiting: Fifo<Pending> | undefined;
}

interface HandlerEntry {
  method: number | undefined;
  attrId: number | undefined;
  fn: UnsolicitedHandler;
  rank: number;
  order: number;
}

// Byte offsets derived from the layouts (no second table).
function byteOff(fields: Readonly<Record<string, { bit: number }>>, name: string): number {
  const f = fields[name];
  if (!f) throw new Error(`layout has no field ${name}`);
  return f.bit >>> 3;
}
const DR = {
  hopCount: byteOff(SmpDr.fields, 'hopCount'),
  hopPointer: byteOff(SmpDr.fields, 'hopPointer'),
  attrId: byteOff(SmpDr.fields, 'attrId'),
  attrMod: byteOff(SmpDr.fields, 'attrMod'),
  mkey: byteOff(SmpDr.fields, 'mkey'),
  drSlid: byteOff(SmpDr.fields, 'drSlid'),
  drDlid: byteOff(SmpDr.fields, 'drDlid'),
  data: byteOff(SmpDr.fields, 'data'),
  initialPath: byteOff(SmpDr.fields, 'initialPath'),
  statusBit: SmpDr.fields['status']!.bit,
  statusWidth: SmpDr.fields['status']!.width,
};
const LR = {
  attrId: byteOff(SmpLid.fields, 'attrId'),
  attrMod: byteOff(SmpLid.fields, 'attrMod'),
  mkey: byteOff(SmpLid.fields, 'mkey'),
  data: byteOff(SmpLid.fields, 'data'),
  statusBit: SmpLid.fields['status']!.bit,
  statusWidth: SmpLid.fields['status']!.width,
};
const SMP_DATA_LEN = (SmpDr.fields['data']!.width >>> 3) as number;
const MAX_DR_HOPS = 63;

function defaultDestinationKey(mad: Uint8Array, addr: MadAddress): DestinationKey {
  if (mad[1] === MgmtClass.SubnDirected && mad.length >= MAD_SIZE) {
    const n = Math.min(mad[DR.hopCount]!, MAX_DR_HOPS);
    let k = 'dr:';
    for (let i = 1; i <= n; i++) k += (i > 1 ? ',' : '') + mad[DR.initialPath + i]!;
    return k;
  }
  return addr.lid;
}

function describeDest(mad: Uint8Array, addr: MadAddress): string {
  if (mad[1] === MgmtClass.SubnDirected && mad.length >= MAD_SIZE) {
    const n = Math.min(mad[DR.hopCount]!, MAX_DR_HOPS);
    const ports: number[] = [0];
    for (let i = 1; i <= n; i++) ports.push(mad[DR.initialPath + i]!);
    return `DR path ${ports.join(',')}`;
  }
  return `LID ${addr.lid}`;
}

function identFor(mad: Uint8Array, addr: MadAddress): MadIdent {
  const dv = new DataView(mad.buffer, mad.byteOffset, mad.byteLength);
  return { mgmtClass: mad[1]!, method: mad[3]!, attrId: dv.getUint16(16), attrMod: dv.getUint32(20), destination: describeDest(mad, addr) };
}

function rmppKey(cls: number, lid: number, mad: Uint8Array): string {
  const dv = new DataView(mad.buffer, mad.byteOffset, mad.byteLength);
  return `${cls}:${lid}:${dv.getUint32(8)}:${dv.getUint32(12)}`;
}

export class MadRpc implements RmppHost {
  readonly stats: MadRpcStats = { sent: 0, retries: 0, timeouts: 0, bounced: 0, failed: 0, responses: 0, unmatched: 0, unsolicited: 0, unhandled: 0, responsesSent: 0, malformed: 0 };
  readonly rmppStats: RmppStats = newRmppStats();
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly window: number;
  private readonly perDest: number;
  private readonly destKeyFn: (mad: Uint8Array, addr: MadAddress) => DestinationKey;
  private readonly mkey: bigint;
  private readonly rmppOpts: ResolvedRmppOptions | undefined;

  private readonly pending = new Map<number, Pending>();
  private readonly dests = new Map<DestinationKey, DestState>();
  private readonly ready = new Fifo<Pending>();
  private outstanding = 0;
  private nextTid: number;

  private readonly deadlines = new Heap<Deadline>(deadlineLess);
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;

  private readonly handlers = new Map<number, HandlerEntry[]>();
  private handlerOrder = 0;

  private readonly receivers = new Map<string, RmppReceiver>();
  private readonly senders = new Map<string, { sender: RmppSender; done: Promise<void> }>();
  private closed = false;
  private readonly graceTurn: boolean;

  constructor(
    readonly transport: Transport,
    readonly clock: Clock,
    opts: MadRpcOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 100;
    this.retries = opts.retries ?? 3;
    this.window = Math.max(1, opts.window ?? 16);
    this.perDest = Math.max(1, opts.perDestinationWindow ?? 4);
    this.destKeyFn = opts.destinationKey ?? defaultDestinationKey;
    this.mkey = opts.mkey ?? 0n;
    this.graceTurn = opts.graceTurn ?? true;
    this.rmppOpts = opts.rmpp === false ? undefined : resolveRmppOptions({ madSize: transport.maxMadSize, ...opts.rmpp });
    this.nextTid = Math.min(TID_MAX, (opts.firstTid ?? 1) >>> 0) || 1;
    transport.onReceive((m) => this.onReceive(m));
  }

  /** Requests sent and not yet answered. */
  get outstandingCount(): number {
    return this.outstanding;
  }
  /** Requests waiting for a window slot. */
  get queuedCount(): number {
    return this.pending.size - this.outstanding;
  }

  // ---------------------------------------------------------------- requests

  /**
   * Send a request and resolve with its response (for an RMPP response: the reassembled transfer).
   * MadRpc owns `mad` until the promise settles: it writes the low 32 bits of the TID into it.
   * Rejects with MadTimeoutError, TransportError, RmppTimeoutError/RmppAbortError or RpcClosedError.
   * The response's MAD status is not checked here (smp* helpers do).
   */
  request(mad: Uint8Array, addr: MadAddress, opts?: RequestOptions): Promise<ReceivedMad> {
    if (this.closed) return Promise.reject(new RpcClosedError('request'));
    if (mad.length < 24) return Promise.reject(new EncodeError('MadHeader', '', `a MAD needs at least 24 bytes, got ${mad.length}`));
    let tid = this.nextTid;
    while (this.pending.has(tid)) tid = tid >= TID_MAX ? 1 : tid + 1;
    this.nextTid = tid >= TID_MAX ? 1 : tid + 1;
    mad[12] = tid >>> 24;
    mad[13] = (tid >>> 16) & 0xff;
    mad[14] = (tid >>> 8) & 0xff;
    mad[15] = tid & 0xff;
    const p = new Pending(
      tid,
      mad,
      addr,
      opts?.destination ?? this.destKeyFn(mad, addr),
      opts?.timeoutMs ?? this.timeoutMs,
      opts?.retries ?? this.retries,
    );
    const promise = new Promise<ReceivedMad>((res, rej) => {
      p.resolve = res;
      p.reject = rej;
    });
    this.pending.set(p.key, p);
    this.admit(p);
    return promise;
  }

  private admit(p: Pending): void {
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
    this.sendTry(p);
  }

  private sendTry(p: Pending): void {
    p.tries++;
    this.stats.sent++;
    try {
      this.transport.send(p.mad, p.addr);
    } catch (e) {
      this.settle(p);
      this.stats.failed++;
      p.reject(e instanceof Error ? e : new TransportError(String(e), 'send'));
      return;
    }
    const at = this.clock.now() + p.timeoutMs;
    this.deadlines.push({ at, p, tries: p.tries });
    if (at < this.timerAt) {
      if (this.timer) this.clock.clearTimeout(this.timer);
      this.timerAt = at;
      this.timer = this.clock.setTimeout(this.onTimer, p.timeoutMs);
    }
  }

  /** Take p out of the books and let the next queued request go. */
  private settle(p: Pending): void {
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

  private retryOrFail(p: Pending): void {
    if (p.retriesLeft > 0) {
      p.retriesLeft--;
      this.stats.retries++;
      this.sendTry(p);
      return;
    }
    this.settle(p);
    this.stats.failed++;
    p.reject(new MadTimeoutError(identFor(p.mad, p.addr), p.tries, p.transportStatus));
  }

  /** A deadline passed. After a long pause of this thread (a GC, a big synchronous step) timers run
   * before the I/O that arrived meanwhile, so responses may be waiting unprocessed: give the event
   * loop one turn (setImmediate runs after the poll phase) to deliver them before declaring tries
   * timed out. Without it a stall times out a whole window of requests that were answered. */
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.graceTurn) {
      this.timerAt = -Infinity; // an expiry is pending: rearm() must not schedule another timer
      setImmediate(this.expire);
      return;
    }
    this.expire();
  };

  private readonly expire = (): void => {
    this.timerAt = Infinity;
    if (this.closed) return;
    const now = this.clock.now();
    for (;;) {
      const top = this.deadlines.peek();
      if (!top) break;
      const p = top.p;
      const live = p.state === St.Outstanding && top.tries === p.tries && !p.rx;
      if (live && top.at > now) break;
      this.deadlines.pop();
      if (!live) continue;
      this.stats.timeouts++;
      p.transportStatus = 0;
      this.retryOrFail(p);
    }
    this.rearm();
  };

  private rearm(): void {
    for (;;) {
      const top = this.deadlines.peek();
      if (!top) return;
      const p = top.p;
      if (p.state === St.Outstanding && top.tries === p.tries && !p.rx) break;
      this.deadlines.pop();
    }
    const at = this.deadlines.peek()!.at;
    if (at >= this.timerAt) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(this.onTimer, Math.max(0, at - this.clock.now()));
  }

  // ---------------------------------------------------------------- receiving

  private onReceive(m: ReceivedMad): void {
    const d = m.data;
    if (d.length < 24) {
      this.stats.malformed++;
      return;
    }
    const cls = d[1]!;
    if (m.status !== 0) return this.onBounce(m);
    if (this.rmppOpts && hasRmppHeader(cls) && rmppActive(d)) return this.onRmpp(m);
    if (isResponse(d[3]!)) {
      const p = this.lookup(d);
      if (!p || p.state !== St.Outstanding || p.rx) {
        this.stats.unmatched++;
        return;
      }
      this.stats.responses++;
      this.settle(p);
      p.resolve(m);
      return;
    }
    this.dispatch(m);
  }

  /** The request a MAD answers: same low 32 TID bits (ours are all below 2^30, so the Map key
   * stays a small integer) and the same class. */
  private lookup(d: Uint8Array): Pending | undefined {
    if (d[12]! >= 0x40) return undefined;
    const p = this.pending.get((d[12]! << 24) | (d[13]! << 16) | (d[14]! << 8) | d[15]!);
    return p && p.mad[1] === d[1] ? p : undefined;
  }

  private onBounce(m: ReceivedMad): void {
    this.stats.bounced++;
    const d = m.data;
    if (isResponse(d[3]!)) return; // one of our responses or RMPP segments could not be delivered
    const p = this.lookup(d);
    if (!p || p.state !== St.Outstanding || p.rx) return;
    p.transportStatus = m.status;
    this.retryOrFail(p);
  }

  private dispatch(m: ReceivedMad): void {
    const d = m.data;
    const list = this.handlers.get(d[1]!);
    if (list) {
      const method = d[3]!;
      const attrId = (d[16]! << 8) | d[17]!;
      for (const h of list) {
        if ((h.method === undefined || h.method === method) && (h.attrId === undefined || h.attrId === attrId)) {
          this.stats.unsolicited++;
          h.fn(m);
          return;
        }
      }
    }
    this.stats.unhandled++;
  }

  /**
   * Handle unsolicited MADs (requests, traps, reports; reassembled when RMPP) of a class. Exactly
   * one handler gets each MAD: the most specific match (method+attribute, then method, then
   * attribute, then class only), earliest registered first. Returns an unsubscribe function.
   */
  onUnsolicited(mgmtClass: number, handler: UnsolicitedHandler, filter: UnsolicitedFilter = {}): () => void {
    const e: HandlerEntry = {
      method: filter.method,
      attrId: filter.attrId,
      fn: handler,
      rank: (filter.method !== undefined ? 2 : 0) + (filter.attrId !== undefined ? 1 : 0),
      order: this.handlerOrder++,
    };
    const list = this.handlers.get(mgmtClass) ?? [];
    list.push(e);
    list.sort((a, b) => b.rank - a.rank || a.order - b.order);
    this.handlers.set(mgmtClass, list);
    return () => {
      const l = this.handlers.get(mgmtClass);
      if (!l) return;
      const i = l.indexOf(e);
      if (i >= 0) l.splice(i, 1);
    };
  }

  // ---------------------------------------------------------------- responding

  /** Send `response` answering `request`: echoes the request's full 64-bit TID into it and sends it
   * back to the requester (Q_Key 0x80010000 on GSI when the received address has none). */
  respond(request: ReceivedMad, response: Uint8Array, addr: MadAddress = request.addr): void {
    response.set(request.data.subarray(8, 16), 8);
    this.stats.responsesSent++;
    this.transport.send(response, replyAddress(addr));
  }

  /**
   * Answer `request` with a payload that may need several segments. `header` holds the MAD header,
   * (space for) the RMPP header and the class header (56 bytes for SA: method, status, attribute,
   * AttributeOffset, ...); the TID is taken from the request. With RMPP in TypeScript a
   * multi-segment payload runs the sender protocol and the promise settles when the peer has
   * acknowledged everything (RmppTimeoutError/RmppAbortError otherwise); a single segment is sent
   * at once. With `rmpp: false` one long MAD goes to the transport (the kernel segments it).
   * A second call for the same request while its transfer runs returns the running transfer.
   */
  respondRmpp(request: ReceivedMad, header: Uint8Array, payload: Uint8Array, addr: MadAddress = request.addr): Promise<void> {
    if (this.closed) return Promise.reject(new RpcClosedError('respondRmpp'));
    const cls = header[1]!;
    const off = rmppDataOffset(cls);
    const hdr = header.slice(0, off);
    hdr.set(request.data.subarray(8, 16), 8);
    const to = replyAddress(addr);
    if (!this.rmppOpts) {
      const one = new Uint8Array(off + payload.length);
      one.set(hdr);
      one.set(payload, off);
      // one long send, First|Last, PayloadLength of the whole transfer: the kernel segments it
      encodeRmpp(rmppData(1, true, true, off - RMPP_HEADER_OFFSET - RMPP_HEADER_SIZE + payload.length), one);
      this.stats.responsesSent++;
      try {
        this.transport.send(one, to);
      } catch (e) {
        return Promise.reject(e);
      }
      return Promise.resolve();
    }
    const segs = segmentRmpp(hdr, payload, undefined, this.rmppOpts.madSize);
    if (segs.length === 1) {
      this.stats.responsesSent++;
      try {
        // Send only what is used: a peer without RMPP (a diag tool under ibsim) counts the records
        // by the MAD's length; real hardware pads short sends.
        this.transport.send(segs[0]!.subarray(0, off + payload.length), to);
      } catch (e) {
        return Promise.reject(e);
      }
      this.rmppStats.segmentsSent++;
      return Promise.resolve();
    }
    const key = rmppKey(cls, to.lid, hdr);
    const running = this.senders.get(key);
    if (running) return running.done;
    this.stats.responsesSent++;
    let ok!: () => void;
    let fail!: (e: Error) => void;
    const done = new Promise<void>((res, rej) => {
      ok = res;
      fail = rej;
    });
    const sender = new RmppSender(this, this.rmppOpts, segs, to, { ...identOf(hdr, to), destination: `LID ${to.lid}` }, { ok, fail }, () => {
      if (this.senders.get(key)?.sender === sender) this.senders.delete(key);
    });
    this.senders.set(key, { sender, done });
    sender.start();
    return done;
  }

  /** RmppHost: raw send. */
  sendRaw(mad: Uint8Array, addr: MadAddress): void {
    this.transport.send(mad, addr);
  }

  private onRmpp(m: ReceivedMad): void {
    const d = m.data;
    let h: RmppHeader;
    try {
      h = decodeRmpp(d);
    } catch {
      this.stats.malformed++;
      return;
    }
    const cls = d[1]!;
    const key = rmppKey(cls, m.addr.lid, d);
    if (h.type !== RmppType.Data) {
      const s = this.senders.get(key);
      if (s) return s.sender.onControl(h);
      const r = this.receivers.get(key);
      if (r && (h.type === RmppType.Stop || h.type === RmppType.Abort)) return r.onStopAbort(h);
      this.stats.unmatched++; // stray ACK (e.g. for a single-segment response) or late control MAD
      return;
    }
    const existing = this.receivers.get(key);
    if (existing) return existing.onData(m, h);
    const rsp = isResponse(d[3]!);
    if (rsp) {
      const p = this.lookup(d);
      if (!p || p.state !== St.Outstanding || p.rx) {
        this.stats.unmatched++;
        return;
      }
      if (h.data1 !== 1) {
        // not the start of a transfer we know: ignore, the sender will resend from segment 1
        this.rmppStats.outOfWindowSegments++;
        return;
      }
      const rx = new RmppReceiver(
        this,
        this.rmppOpts!,
        m.addr,
        identFor(p.mad, p.addr),
        cls,
        {
          ok: (whole) => {
            if (p.state !== St.Outstanding) return;
            this.stats.responses++;
            this.settle(p);
            p.resolve(whole);
          },
          fail: (e) => {
            if (p.state !== St.Outstanding) return;
            this.settle(p);
            this.stats.failed++;
            p.reject(e);
          },
        },
        () => {
          if (this.receivers.get(key) === rx) this.receivers.delete(key);
        },
      );
      p.rx = rx;
      this.receivers.set(key, rx);
      rx.onData(m, h);
      return;
    }
    // an RMPP request from a peer (e.g. a multi-segment SA query): reassemble, then dispatch
    if (h.data1 !== 1) {
      this.rmppStats.outOfWindowSegments++;
      return;
    }
    const rx: RmppReceiver = new RmppReceiver(
      this,
      this.rmppOpts!,
      m.addr,
      identOf(d, m.addr),
      cls,
      { ok: (whole) => this.dispatch(whole), fail: () => undefined },
      () => {
        if (this.receivers.get(key) === rx) this.receivers.delete(key);
      },
    );
    this.receivers.set(key, rx);
    rx.onData(m, h);
  }

  // ---------------------------------------------------------------- SMP helpers

  /** Build a directed-route SMP. `path` lists the egress port of each hop (`[]` is the local port;
   * `[1, 3]` is InitialPath 0,1,3). */
  buildSmpDr(method: number, path: readonly number[], attrId: number, attrMod: number, data?: Uint8Array, mkey: bigint = this.mkey): Uint8Array {
    if (path.length > MAX_DR_HOPS) throw new EncodeError('SmpDr', 'initialPath', `a directed route has at most ${MAX_DR_HOPS} hops, got ${path.length}`);
    const b = new Uint8Array(MAD_SIZE);
    b[0] = 1;
    b[1] = MgmtClass.SubnDirected;
    b[2] = 1;
    b[3] = method;
    b[DR.hopCount] = path.length;
    for (let i = 0; i < path.length; i++) {
      const port = path[i]!;
      if (!Number.isInteger(port) || port < 0 || port > 255) throw new EncodeError('SmpDr', `initialPath[${i + 1}]`, `port ${port} is not in 0..255`);
      b[DR.initialPath + 1 + i] = port;
    }
    this.writeCommon(b, DR.attrId, DR.attrMod, DR.mkey, DR.data, attrId, attrMod, mkey, data, 'SmpDr');
    b[DR.drSlid] = b[DR.drSlid + 1] = b[DR.drDlid] = b[DR.drDlid + 1] = 0xff;
    return b;
  }

  /** Build a LID-routed SMP. */
  buildSmpLid(method: number, attrId: number, attrMod: number, data?: Uint8Array, mkey: bigint = this.mkey): Uint8Array {
    const b = new Uint8Array(MAD_SIZE);
    b[0] = 1;
    b[1] = MgmtClass.SubnLid;
    b[2] = 1;
    b[3] = method;
    this.writeCommon(b, LR.attrId, LR.attrMod, LR.mkey, LR.data, attrId, attrMod, mkey, data, 'SmpLid');
    return b;
  }

  private writeCommon(b: Uint8Array, oAttr: number, oMod: number, oMkey: number, oData: number, attrId: number, attrMod: number, mkey: bigint, data: Uint8Array | undefined, name: string): void {
    if (!(attrId >= 0 && attrId <= 0xffff && Number.isInteger(attrId))) throw new EncodeError(name, 'attrId', `${attrId} is not a 16-bit value`);
    if (!(attrMod >= 0 && attrMod <= 0xffffffff && Number.isInteger(attrMod))) throw new EncodeError(name, 'attrMod', `${attrMod} is not a 32-bit value`);
    b[oAttr] = attrId >>> 8;
    b[oAttr + 1] = attrId & 0xff;
    b[oMod] = attrMod >>> 24;
    b[oMod + 1] = (attrMod >>> 16) & 0xff;
    b[oMod + 2] = (attrMod >>> 8) & 0xff;
    b[oMod + 3] = attrMod & 0xff;
    if (mkey) new DataView(b.buffer).setBigUint64(oMkey, mkey);
    if (data) {
      if (data.length > SMP_DATA_LEN) throw new EncodeError(name, 'data', `SMP data is at most ${SMP_DATA_LEN} bytes, got ${data.length}`);
      b.set(data, oData);
    }
  }

  /** SubnGet over a directed route; resolves with the 64-byte SMP data of the response. */
  smpGetDr(path: readonly number[], attrId: number, attrMod = 0, data?: Uint8Array, opts?: SmpOptions): Promise<Uint8Array> {
    return this.smpDr(Method.Get, path, attrId, attrMod, data, opts);
  }
  /** SubnSet over a directed route; resolves with the 64-byte SMP data of the response. */
  smpSetDr(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, opts?: SmpOptions): Promise<Uint8Array> {
    return this.smpDr(Method.Set, path, attrId, attrMod, data, opts);
  }
  /** LID-routed SubnGet; resolves with the 64-byte SMP data. */
  smpGet(lid: number, attrId: number, attrMod = 0, data?: Uint8Array, opts?: SmpOptions): Promise<Uint8Array> {
    return this.smpLid(Method.Get, lid, attrId, attrMod, data, opts);
  }
  /** LID-routed SubnSet; resolves with the 64-byte SMP data. */
  smpSet(lid: number, attrId: number, attrMod: number, data: Uint8Array, opts?: SmpOptions): Promise<Uint8Array> {
    return this.smpLid(Method.Set, lid, attrId, attrMod, data, opts);
  }

  private async smpDr(method: number, path: readonly number[], attrId: number, attrMod: number, data: Uint8Array | undefined, opts: SmpOptions | undefined): Promise<Uint8Array> {
    const mad = this.buildSmpDr(method, path, attrId, attrMod, data, opts?.mkey ?? this.mkey);
    const r = await this.request(mad, DR_ADDR, opts);
    const st = readBits(r.data, DR.statusBit, DR.statusWidth);
    if (st !== 0) throw new MadStatusError(identFor(mad, DR_ADDR), st, r.data);
    return r.data.subarray(DR.data, DR.data + SMP_DATA_LEN);
  }

  private async smpLid(method: number, lid: number, attrId: number, attrMod: number, data: Uint8Array | undefined, opts: SmpOptions | undefined): Promise<Uint8Array> {
    const mad = this.buildSmpLid(method, attrId, attrMod, data, opts?.mkey ?? this.mkey);
    const addr: MadAddress = { lid, qpn: 0 };
    const r = await this.request(mad, addr, opts);
    const st = readBits(r.data, LR.statusBit, LR.statusWidth);
    if (st !== 0) throw new MadStatusError(identFor(mad, addr), st, r.data);
    return r.data.subarray(LR.data, LR.data + SMP_DATA_LEN);
  }

  // ---------------------------------------------------------------- shutdown

  /** Reject everything pending (RpcClosedError), stop timers and RMPP transfers. Does not close the transport. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.deadlines.clear();
    const all = [...this.pending.values()];
    this.pending.clear();
    this.ready.drain();
    this.dests.clear();
    this.outstanding = 0;
    for (const r of this.receivers.values()) r.cancel();
    this.receivers.clear();
    for (const s of this.senders.values()) s.sender.cancel(new RpcClosedError('RMPP send'));
    this.senders.clear();
    for (const p of all) {
      p.state = St.Done;
      p.reject(new RpcClosedError(describeMad(identFor(p.mad, p.addr))));
    }
  }
}

const DR_ADDR: MadAddress = { lid: PERMISSIVE_LID, qpn: 0 };


/**
 * MadRpc: the request/response layer over a Transport. It allocates TIDs (only the low 32 bits are
 * ours: libibumad/the kernel and ibsim write the high bits), matches responses on low TID + class,
 * retries on timeout and at once when the transport hands a MAD back undeliverable (ibsim's status
 * 110), keeps a window of outstanding requests (global and per destination, FIFO beyond it),
 * dispatches unsolicited MADs (requests, traps, reports) by class/method/attribute, and runs RMPP
 * where the transport does not (rpc/rmpp-transfers.ts; options and counters in rpc/madrpc-types.ts).
 *
 * Hot path: one Promise per request; the Pending objects pooled in a slot table indexed by the
 * low TID (rpc/pending.ts); one clock timer for all deadlines, kept in a ring of preallocated
 * columns while they come in order, in a heap when not (rpc/timeouts.ts); an SMP settled with its
 * data as its response is matched (no second promise).
 */
import type { Clock } from '../util/clock.js';
import { EncodeError } from '../wire/errors.js';
import { MAD_SIZE, MadHeader, MadHeaderView, Method, MgmtClass, PERMISSIVE_LID, SMP_DATA_OFFSET, SMP_DATA_SIZE, SmpDr, isResponse } from '../wire/mad.js';
import { copyTid, setTidLow, smpLid, tidLow } from '../wire/builders.js';
import { buildSmpDr } from './smp-dr.js';
import type { AgentOptions, MadAddress, ReceivedMad, Transport } from '../transport/types.js';
import { TransportError } from '../transport/types.js';
import { RMPP_HEADER_OFFSET, RMPP_HEADER_SIZE, encodeRmpp, rmppData } from '../wire/rmpp.js';
import { MadStatusError, MadTimeoutError, RpcClosedError, describeMad } from './errors.js';
import { hasRmppHeader, newRmppStats, replyAddress, resolveRmppOptions, rmppActive, rmppLeftToKernel, rmppDataOffset, type RmppHost, type RmppStats } from './rmpp.js';
import { RmppTransfers } from './rmpp-transfers.js';
import { defaultDestinationKey, identFor, type DestinationKey } from './ident.js';
import { UnsolicitedDispatch, type UnsolicitedFilter, type UnsolicitedHandler } from './dispatch.js';
import { Pending, RequestTable, St, type SmpSink } from './pending.js';
import { TryDeadlines } from './timeouts.js';
import { RtoEstimator } from './rto.js';
import type { MadRpcOptions, MadRpcStats, RequestOptions, SmpOptions } from './madrpc-types.js';
import { LayoutError } from '../wire/errors.js';

export type { DestinationKey } from './ident.js';
export type { SmpSink } from './pending.js';
export type { UnsolicitedFilter, UnsolicitedHandler } from './dispatch.js';
export type { MadRpcOptions, MadRpcStats, RequestOptions, SmpOptions } from './madrpc-types.js';

export class MadRpc implements RmppHost {
  readonly stats: MadRpcStats = { sent: 0, retries: 0, timeouts: 0, bounced: 0, failed: 0, responses: 0, unmatched: 0, unsolicited: 0, unhandled: 0, responsesSent: 0, malformed: 0 };
  readonly rmppStats: RmppStats = newRmppStats();
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly destKeyFn: (mad: Uint8Array, addr: MadAddress) => DestinationKey;
  private readonly mkey: bigint;
  /** The RMPP transfers, when RMPP runs here (not in the kernel). */
  private readonly rmpp: RmppTransfers | undefined;
  /** The adaptive timeout, when on. */
  readonly rto: RtoEstimator | undefined;

  private readonly table: RequestTable;
  private readonly deadlines: TryDeadlines;
  private readonly unsolicited = new UnsolicitedDispatch();

  private closed = false;
  /** Observer of round trips (ms, management class) of requests answered at their first try
   * (Karn's rule: a retried request's answer may belong to any try); the metrics' SMP histogram. */
  onRoundTrip?: (ms: number, mgmtClass: number) => void;

  constructor(
    readonly transport: Transport,
    readonly clock: Clock,
    opts: MadRpcOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 100;
    this.retries = opts.retries ?? 3;
    this.destKeyFn = opts.destinationKey ?? defaultDestinationKey;
    this.mkey = opts.mkey ?? 0n;
    if (opts.adaptiveTimeout) this.rto = new RtoEstimator({ ...(opts.adaptiveTimeout === true ? {} : opts.adaptiveTimeout), initialMs: this.timeoutMs });
    if (opts.rmpp !== false) {
      const ro = resolveRmppOptions({ madSize: transport.maxMadSize, quietWithoutAck: transport.maxMadSize !== undefined, ...opts.rmpp });
      this.rmpp = new RmppTransfers(this, ro, Math.max(1, opts.maxPeerRmppPerLid ?? 16), {
        lookup: (d) => this.lookup(d),
        settle: (p) => this.table.settle(p), // out of the books, the next queued request let go
        dispatch: (m) => this.dispatch(m),
      });
    }
    this.table = new RequestTable(Math.max(1, opts.window ?? 16), Math.max(1, opts.perDestinationWindow ?? 4), opts.firstTid ?? 1, (p) => this.sendTry(p));
    this.deadlines = new TryDeadlines(clock, opts.graceTurn ?? true, (p: Pending) => {
      this.stats.timeouts++;
      // Still queued behind a stalled peer (a paced transport), the try is dropped: its retry
      // would otherwise wait behind the stale copy, and after it every retry of a long stall.
      transport.unsend?.(p.mad);
      p.transportStatus = 0;
      this.retryOrFail(p);
    });
    transport.onReceive((m) => this.onReceive(m));
  }

  /** First segments of peer requests dropped: that peer had maxPeerRmppPerLid transfers running. */
  get peerRmppRefused(): number {
    return this.rmpp?.peerRefused ?? 0;
  }

  /** Requests sent and not yet answered. */
  get outstandingCount(): number {
    return this.table.outstandingCount;
  }
  /** Requests waiting for a window slot. */
  get queuedCount(): number {
    return this.table.queuedCount;
  }

  /** True when a MAD handed to respond() or request() may be reused as soon as the call returns
   * (the transport copies on send); otherwise it must stay untouched. */
  get copiesOnSend(): boolean {
    return this.transport.copiesOnSend === true;
  }

  /** Register an agent for a class on the transport (a server names the methods it serves). */
  register(mgmtClass: number, classVersion: number, opts?: AgentOptions): void {
    this.transport.register(mgmtClass, classVersion, opts);
  }

  // ---------------------------------------------------------------- requests

  /**
   * Send a request and resolve with its response (for an RMPP response: the reassembled transfer).
   * MadRpc owns `mad` until the promise settles: it writes the low 32 bits of the TID into it.
   * Rejects with MadTimeoutError, TransportError, RmppTimeoutError/RmppAbortError or RpcClosedError.
   * The response's MAD status is not checked here (smp* helpers do).
   */
  request(mad: Uint8Array, addr: MadAddress, opts?: RequestOptions): Promise<ReceivedMad> {
    return this.send<ReceivedMad>(mad, addr, opts, false);
  }

  /** request(), the SMP way: resolves with the 64 bytes of SMP data of the response, rejects with
   * MadStatusError when its MAD status is not 0 (checked as the response is matched: no second
   * promise per SMP). */
  private requestSmp(mad: Uint8Array, addr: MadAddress, opts?: RequestOptions, own = false): Promise<Uint8Array> {
    return this.send<Uint8Array>(mad, addr, opts, true, own);
  }

  /** `own`: `mad` is MadRpc's own, from its pool (see smpSetDrTo), and goes back to it once settled. */
  private send<T>(mad: Uint8Array, addr: MadAddress, opts: RequestOptions | undefined, smp: boolean, own = false): Promise<T> {
    if (this.closed) return Promise.reject(new RpcClosedError('request'));
    if (mad.length < 24) return Promise.reject(new EncodeError('MadHeader', '', `a MAD needs at least 24 bytes, got ${mad.length}`));
    const p = this.book(mad, addr, opts, smp);
    p.ownMad = own;
    // One executor for every request (no closure per request): it hands the resolvers out.
    const promise = new Promise<T>(takeResolvers as (res: (v: T) => void, rej: (e: Error) => void) => void);
    p.resolve = outResolve as (v: ReceivedMad | Uint8Array) => void;
    p.reject = outReject;
    this.table.add(p);
    return promise;
  }

  /** A Pending for `mad` (its TID written), not yet in the table. */
  private book(mad: Uint8Array, addr: MadAddress, opts: RequestOptions | undefined, smp: boolean): Pending {
    const tid = this.table.allocTid();
    setTidLow(mad, tid);
    const p = this.table.acquire();
    p.key = tid;
    p.mad = mad;
    p.mgmtClass = mad[MGMT_CLASS_OFFSET]!;
    p.attrId = (mad[ATTR_ID_OFFSET]! << 8) | mad[ATTR_ID_OFFSET + 1]!;
    p.addr = addr;
    p.dest = opts?.destination ?? this.destKeyFn(mad, addr);
    p.timeoutMs = opts?.timeoutMs ?? this.timeoutMs;
    p.retriesLeft = opts?.retries ?? this.retries;
    p.adaptive = this.rto !== undefined && opts?.timeoutMs === undefined;
    p.priorTries = opts?.priorTries ?? 0;
    p.smp = smp;
    return p;
  }

  private sendTry(p: Pending): void {
    p.tries++;
    this.stats.sent++;
    if (p.adaptive) p.timeoutMs = p.priorTries ? this.rto!.forTry(p.tries + p.priorTries, this.timeoutMs) : this.rto!.forTry(p.tries);
    // The time a response was received at, for the requests its settling lets go (the same
    // synchronous turn): one clock read per response, not one more per send.
    const held = this.settleNow;
    const now = held >= 0 ? held : this.clock.now();
    p.sentAt = now;
    try {
      this.transport.send(p.mad, p.addr);
    } catch (e) {
      this.stats.failed++;
      this.fail(p, e instanceof Error ? e : new TransportError(String(e), 'send'));
      return;
    }
    this.deadlines.arm(p, now);
  }

  /** Settle p with `v`; its Pending goes back to the pool. */
  private succeed(p: Pending, v: ReceivedMad | Uint8Array): void {
    if (p.sink) return this.succeedToSink(p, v as Uint8Array);
    this.table.settle(p);
    this.settleNow = -1;
    const res = p.resolve;
    this.reuseMad(p);
    this.table.release(p);
    res(v);
  }

  /** succeed() of a callback-slot SMP (its own function: the promise path's optimized code does
   * not take in the sink's callees, nor get thrown away when they change). */
  private succeedToSink(p: Pending, data: Uint8Array): void {
    this.table.settle(p);
    this.settleNow = -1; // the sink's own sends read the clock (it may work long)
    const { sink, ctx } = p;
    this.reuseMad(p);
    this.table.release(p);
    sink!.smpOk(ctx, data);
  }

  /** Settle p with the error `e`; its Pending goes back to the pool. */
  private fail(p: Pending, e: Error): void {
    this.table.settle(p);
    this.settleNow = -1;
    const { reject, sink, ctx } = p;
    this.reuseMad(p);
    this.table.release(p);
    if (sink) sink.smpFailed(ctx, e);
    else reject(e);
  }

  /** A settled request's MAD, when it is MadRpc's own (the transport copied it on every send and
   * nothing refers to it any more), goes to the pool the next smpSetDrTo takes its MAD from. */
  private reuseMad(p: Pending): void {
    if (p.ownMad && p.state === St.Done && this.madPool.length < MAD_POOL_MAX) this.madPool.push(p.mad);
    p.ownMad = false;
  }
  private readonly madPool: Uint8Array[] = [];
  /** The clock read of the response being settled, while its settling sends what it lets go; -1 otherwise. */
  private settleNow = -1;

  private retryOrFail(p: Pending): void {
    if (p.retriesLeft > 0) {
      p.retriesLeft--;
      this.stats.retries++;
      this.sendTry(p);
      return;
    }
    this.stats.failed++;
    this.fail(p, new MadTimeoutError(identFor(p.mad, p.addr), p.tries, p.transportStatus));
  }

  // ---------------------------------------------------------------- receiving

  private onReceive(m: ReceivedMad): void {
    const d = m.data;
    if (d.length < 24) {
      this.stats.malformed++;
      return;
    }
    // The header fields read at offsets derived from the MadHeader table (no view object per MAD).
    const mgmtClass = d[MGMT_CLASS_OFFSET]!;
    if (m.status !== 0) return this.onBounce(m);
    if (this.rmpp && hasRmppHeader(mgmtClass) && rmppActive(d) && !rmppLeftToKernel(d)) return this.rmpp.onMad(m);
    if (isResponse(d[METHOD_OFFSET]!)) {
      const p = this.table.lookup(tidLow(d), mgmtClass);
      if (!p || !p.awaiting) {
        this.stats.unmatched++;
        return;
      }
      // An SMP is settled with its data as it is matched: a response too short to hold an SMP, or
      // of another attribute, is dropped before that (counted; the request keeps waiting: its try
      // may still be answered, or it times out and is retried).
      if (p.smp && (d.length < MAD_SIZE || ((d[ATTR_ID_OFFSET]! << 8) | d[ATTR_ID_OFFSET + 1]!) !== p.attrId)) {
        this.stats.malformed++;
        return;
      }
      this.stats.responses++;
      if (p.tries === 1 && (p.adaptive || this.onRoundTrip)) {
        const now = this.clock.now();
        const rtt = now - p.sentAt;
        if (p.adaptive) this.rto!.sample(rtt);
        this.onRoundTrip?.(rtt, mgmtClass);
        this.settleNow = now; // held until p is taken out of the books (succeed, fail)
      }
      try {
        if (!p.smp) this.succeed(p, m);
        else {
          const st = smpStatus(d, mgmtClass);
          if (st !== 0) this.fail(p, new MadStatusError(identFor(p.mad, p.addr), st, d));
          else this.succeed(p, new Uint8Array(d.buffer, d.byteOffset + SMP_DATA_OFFSET, SMP_DATA_SIZE)); // the SMP data, a view (the constructor: about half subarray's cost)
        }
      } finally {
        this.settleNow = -1;
      }
      return;
    }
    this.dispatch(m);
  }

  /** The request a MAD answers: same low 32 TID bits (ours are all below 2^30, so the Map key
   * stays a small integer) and the same class. */
  private lookup(d: Uint8Array): Pending | undefined {
    return this.table.lookup(tidLow(d), d[MGMT_CLASS_OFFSET]!);
  }

  private onBounce(m: ReceivedMad): void {
    this.stats.bounced++;
    const d = m.data;
    // A response handed back: one of ours (or an RMPP segment) that could not be delivered, or the
    // answer to one of our requests lost on its way back (ibsim's `Error`: the SMA has acted on
    // the request, see docs/ibsim-notes.md). The latter is a lost answer: try again.
    const p = this.lookup(d);
    if (!p || !p.awaiting) return;
    p.transportStatus = m.status;
    this.retryOrFail(p);
  }

  private dispatch(m: ReceivedMad): void {
    if (this.unsolicited.dispatch(m)) this.stats.unsolicited++;
    else this.stats.unhandled++;
  }

  /**
   * Handle unsolicited MADs (requests, traps, reports; reassembled when RMPP) of a class. Exactly
   * one handler gets each MAD: the most specific match (method+attribute, then method, then
   * attribute, then class only), earliest registered first. Returns an unsubscribe function.
   */
  onUnsolicited(mgmtClass: number, handler: UnsolicitedHandler, filter: UnsolicitedFilter = {}): () => void {
    return this.unsolicited.on(mgmtClass, handler, filter);
  }

  // ---------------------------------------------------------------- responding

  /** Send `response` answering `request`: echoes the request's full 64-bit TID into it and sends it
   * back to the requester (Q_Key 0x80010000 on GSI when the received address has none). */
  respond(request: ReceivedMad, response: Uint8Array, addr: MadAddress = request.addr): void {
    copyTid(request.data, response);
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
    const cls = MadHeaderView.over(header).mgmtClass;
    const off = rmppDataOffset(cls);
    const hdr = header.slice(0, off);
    copyTid(request.data, hdr);
    const to = replyAddress(addr);
    if (!this.rmpp) {
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
    return this.rmpp.respond(cls, off, hdr, payload, to);
  }

  /** RmppHost: raw send. */
  sendRaw(mad: Uint8Array, addr: MadAddress): void {
    this.transport.send(mad, addr);
  }

  // ---------------------------------------------------------------- SMP helpers

  /** Build a directed-route SMP (the bytes of smpDr in wire/builders; rpc/smp-dr: a template copy
   * and the varying fields, no view per SMP) with this RPC's default M_Key. */
  buildSmpDr(method: number, path: readonly number[], attrId: number, attrMod: number, data?: Uint8Array, mkey: bigint = this.mkey, into?: Uint8Array): Uint8Array {
    return buildSmpDr(method, path, attrId, attrMod, data, mkey, into);
  }

  /** Build a LID-routed SMP (see smpLid in wire/builders) with this RPC's default M_Key. */
  buildSmpLid(method: number, attrId: number, attrMod: number, data?: Uint8Array, mkey: bigint = this.mkey): Uint8Array {
    return smpLid({ method, attrId, attrMod, ...(data ? { data } : {}), mkey });
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

  /** SubnSet over a directed route settled through a callback slot: `sink.smpOk(ctx, data)` with
   * the response's SMP data, or `sink.smpFailed(ctx, error)` (as smpSetDr would reject; also for
   * an SMP that cannot be built or an RPC that is closed, then before this returns). No promise
   * and no closure per SMP: what a programming step of many Sets uses. `opts`: its timeout and
   * tries, as request()'s. */
  smpSetDrTo<C>(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, mkey: bigint | undefined, sink: SmpSink<C>, ctx: C, opts?: RequestOptions): void {
    this.smpDrTo(Method.Set, path, attrId, attrMod, data, mkey, sink, ctx, opts);
  }

  /** SubnGet over a directed route settled through a callback slot, as smpSetDrTo (a discovery's Gets). */
  smpGetDrTo<C>(path: readonly number[], attrId: number, attrMod: number, sink: SmpSink<C>, ctx: C, opts?: RequestOptions): void {
    this.smpDrTo(Method.Get, path, attrId, attrMod, undefined, undefined, sink, ctx, opts);
  }
  private smpDrTo<C>(method: number, path: readonly number[], attrId: number, attrMod: number, data: Uint8Array | undefined, mkey: bigint | undefined, sink: SmpSink<C>, ctx: C, opts?: RequestOptions): void {
    if (this.closed) return sink.smpFailed(ctx, new RpcClosedError('request'));
    // Over a transport that copies on send, the MAD is MadRpc's own: built into a pooled buffer
    // and pooled again once the request settled (no MAD allocated per SMP once the pool is warm).
    const own = this.transport.copiesOnSend === true;
    let mad: Uint8Array;
    try {
      mad = this.buildSmpDr(method, path, attrId, attrMod, data, mkey ?? this.mkey, own ? this.madPool.pop() : undefined);
    } catch (e) {
      return sink.smpFailed(ctx, e instanceof Error ? e : new EncodeError('SmpDr', '', String(e)));
    }
    const p = this.book(mad, DR_ADDR, opts, true);
    p.sink = sink as SmpSink<unknown>;
    p.ctx = ctx;
    p.ownMad = own;
    this.table.add(p);
  }

  // The SMP helpers chain one `then` on the request (no async function: one promise less per SMP).
  // Over a transport that copies on send, the MAD comes from the pool and goes back to it once
  // the request settled, as smpSetDrTo's (a discovery Get allocated a 256-byte buffer each, off
  // the JS heap: its backing store made, tracked by the GC and swept).
  private smpDr(method: number, path: readonly number[], attrId: number, attrMod: number, data: Uint8Array | undefined, opts: SmpOptions | undefined): Promise<Uint8Array> {
    const own = this.transport.copiesOnSend === true;
    let mad: Uint8Array;
    try {
      mad = this.buildSmpDr(method, path, attrId, attrMod, data, opts?.mkey ?? this.mkey, own ? this.madPool.pop() : undefined);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.requestSmp(mad, DR_ADDR, opts, own);
  }

  private smpLid(method: number, lid: number, attrId: number, attrMod: number, data: Uint8Array | undefined, opts: SmpOptions | undefined): Promise<Uint8Array> {
    let mad: Uint8Array;
    try {
      mad = this.buildSmpLid(method, attrId, attrMod, data, opts?.mkey ?? this.mkey);
    } catch (e) {
      return Promise.reject(e);
    }
    return this.requestSmp(mad, { lid, qpn: 0 }, opts);
  }

  // ---------------------------------------------------------------- shutdown

  /** Reject everything pending (RpcClosedError), stop timers and RMPP transfers. Does not close the transport. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.deadlines.close();
    const all = this.table.clear();
    this.rmpp?.close();
    for (const p of all) {
      const e = new RpcClosedError(describeMad(identFor(p.mad, p.addr)));
      if (p.sink) p.sink.smpFailed(p.ctx, e);
      else p.reject(e);
    }
  }
}

const DR_ADDR: MadAddress = { lid: PERMISSIVE_LID, qpn: 0 };
/** MAD buffers MadRpc keeps for reuse (about its window's worth). */
const MAD_POOL_MAX = 1024;

/** Header offsets read on every request, from the MadHeader field table. */
const MGMT_CLASS_OFFSET = MadHeader.fields.mgmtClass.bit >>> 3;
const ATTR_ID_OFFSET = MadHeader.fields.attrId.bit >>> 3;
const METHOD_OFFSET = MadHeader.fields.method.bit >>> 3;
/** The status: the whole 16-bit field, or a directed-route SMP's 15 bits after the D bit. */
const STATUS_OFFSET = MadHeader.fields.status.bit >>> 3;
const DR_STATUS_MASK = 2 ** SmpDr.fields.status.width - 1;
if (MadHeader.fields.status.width !== 16 || SmpDr.fields.status.bit + SmpDr.fields.status.width !== MadHeader.fields.status.bit + 16) throw new LayoutError('MadHeader/SmpDr', 'the status fields moved (madrpc reads them as one 16-bit word)');

/** The MAD status of an SMP response (what wire/builders.madStatus reads, without a view per MAD). */
function smpStatus(d: Uint8Array, mgmtClass: number): number {
  const st = (d[STATUS_OFFSET]! << 8) | d[STATUS_OFFSET + 1]!;
  return mgmtClass === MgmtClass.SubnDirected ? st & DR_STATUS_MASK : st;
}

// The resolvers of the promise being made (takeResolvers runs synchronously in `new Promise`).
let outResolve: (v: unknown) => void = () => undefined;
let outReject: (e: Error) => void = () => undefined;
function takeResolvers(res: (v: unknown) => void, rej: (e: Error) => void): void {
  outResolve = res;
  outReject = rej;
}


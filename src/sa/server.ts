/**
 * The SA server: the only part of the SA that decodes requests and encodes responses. Attached to
 * a MadRpc as the class 0x03 (version 2) server: each request is decoded (bad bytes → an
 * ERR_REQ_INVALID response, never an exception), turned into an SaQuery, answered by the engine
 * over the latest SaContext and sent back to the requester's LID/QPN (Q_Key 0x80010000) with its
 * full TID echoed: GetResp/DeleteResp with one record, GetTableResp/GetMultiResp with the records
 * packed AttributeOffset×8 bytes apart and segmented with RMPP (MadRpc's sender, or the kernel's).
 * Requests wait in bounded queues, one per requester LID, drained a batch at a time round-robin
 * (one request of each requester in turn), so a flood from some hosts delays another host's
 * request by one turn, not by the flood; when all queues together are full, the longest queue's
 * newest request is answered BUSY to make room for a shorter queue's (the longest's own overflow
 * is BUSY at once), as is any request before the SM has published its first context. RMPP transfers are bounded per requester
 * LID and in all (sa/limits.ts): beyond, a table answer is ERR_NO_RESOURCES. Every refusal at a
 * bound (ERR_NO_RESOURCES) and failed transfer is counted and logged through the logger's rate
 * limit (Logger.from: once per requester LID and code per interval, then a summary).
 */
import { DecodeError } from '../wire/errors.js';
import { readBig } from '../wire/layout.js';
import { MAD_SIZE, MadHeader, MadHeaderView, MadStatus, MgmtClass, Method, METHOD_RESPONSE_BIT } from '../wire/mad.js';
import { PathRecord, SA_CLASS_VERSION, SA_DATA_OFFSET, SA_DATA_SIZE, SA_HEADER_OFFSET, SaAttr, SaHeader, SaMadHeader, SaStatus, decodeSaMad, recordStride, type SaMessage } from '../wire/sa.js';
import { SA_TABLE_METHODS, responseMethod, saStatusResponse } from '../wire/builders.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { ReceivedMad } from '../transport/types.js';
import { FairQueues } from '../util/fair-queues.js';
import type { Logger } from '../util/log.js';
import { AnswerCache, type AnswerCacheStats } from './answer-cache.js';
import { responseLayout, type SaEngine } from './engine.js';
import { snapshotPorts } from '../model/snapshot.js';
import { recordHandlers } from './records.js';
import { pathHandlers } from './path-handlers.js';
import type { SaAnswer, SaContext, SaHandler, SaQuery } from './types.js';
import { KeyCounter, resolveSaLimits, type SaLimits } from './limits.js';
import { formatGuid } from '../util/guid.js';

/** The handlers of the SA core: every record of the snapshot, PathRecord, MultiPathRecord, TraceRecord. */
/** The default bounds of the request queues (SaServerOptions.maxQueue, maxQueuePerRequester). A
 * host re-registering sends some 20 requests at once (issue #32's storm: an IPoIB join, a
 * ServiceRecord, an InformInfo, 16 PathRecords); 32 each gives room for that, for the whole
 * subnet at once. */
export const QUEUE_MIN = 512;
export const QUEUE_PER_END_PORT = 32;
export const QUEUE_PER_REQUESTER = 256;

export function coreSaHandlers(): SaHandler[] {
  return [...recordHandlers(), ...pathHandlers()];
}

export interface SaServerOptions {
  /** Most requests waiting to be answered, all requesters together; beyond it the longest queue
   * gives way (BUSY). Default: QUEUE_PER_END_PORT per end port of the subnet (so that every host
   * re-registering at once after a failover is queued, not refused), at least QUEUE_MIN. */
  maxQueue?: number;
  /** Most requests waiting from one requester LID; beyond it its requests are answered BUSY at
   * once. Default QUEUE_PER_REQUESTER. */
  maxQueuePerRequester?: number;
  /** Requests answered per turn of the event loop. Default 32. */
  batch?: number;
  /** How a drain turn is scheduled (default the RPC clock's defer). */
  schedule?: (fn: () => void) => void;
  /** Register the class 0x03 server agent on the transport (default true; false when the caller did). */
  registerAgent?: boolean;
  /** PathRecord Get answers kept per SA context for repeats (see AnswerCache). Default 32768; 0 disables. */
  answerCacheSize?: number;
  /** Called for every answer sent (the request's attribute and method, the requester, the status). */
  onServed?: (e: { attrId: number; method: number; lid: number; status: number }) => void;
  /** Bounds (rmppPerRequester, rmppTotal); sa/limits.ts. */
  limits?: Partial<SaLimits>;
  log?: Logger;
}

export interface SaServerStats {
  received: number;
  answered: number;
  /** Answers with a non-zero status (BUSY included). */
  errors: number;
  busy: number;
  /** MADs too short to answer (dropped). */
  malformed: number;
  /** Requests whose bytes did not decode (answered ERR_REQ_INVALID). */
  invalid: number;
  /** Responses and other non-requests received (ignored). */
  ignored: number;
  /** RMPP transfers that failed (timeout / abort by the requester). */
  rmppFailures: number;
  /** Table answers refused ERR_NO_RESOURCES: the requester (or all) had too many RMPP transfers running. */
  rmppRefused: number;
  /** RMPP transfers running now. */
  rmppActive: number;
  /** Single-MAD responses the transport refused. */
  sendFailures: number;
  /** Refusals at a bound (ERR_NO_RESOURCES answers from the engine: services, subscriptions, groups, PathRecords). */
  refused: number;
  /** Requests dropped unanswered: a non-zero SM_Key field other than the SA_Key (OpenSM's ERR 1A04). */
  wrongKey: number;
  /** Requests per attribute name (SaAttr names, unknown IDs under "other"). */
  byAttribute: Record<string, number>;
  /** PathRecord Gets answered from / missing in the answer cache. */
  cache: AnswerCacheStats;
  /** Answers per status ("0x0000" = records). */
  byStatus: Record<string, number>;
}

const ATTR_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(SaAttr).map(([k, v]) => [v, k]));
/** The name an attribute ID is counted and logged under: its SaAttr name, or "other" for every
 * ID the SA does not know (a closed set: a requester cannot add series to the metrics). */
export function attrName(id: number): string {
  return ATTR_NAMES[id] ?? 'other';
}
/** Request methods the SA serves (ReportResp, the answer to our Reports, reaches us as a response). */
const SERVED_METHODS = [Method.Get, Method.Set, Method.GetTable, Method.Delete, Method.GetMulti, Method.GetTraceTable];

/** The response method of a request method (wire/builders; re-exported where it was). */
export { responseMethod };

/** Header bytes a single-MAD response takes from its request (TID, AttributeID, AttributeModifier,
 * ComponentMask), found by encoding the echoed fields two ways: derived from SaMadHeader, never a
 * second offset table. */
const ECHOED_HEADER_BYTES: readonly number[] = (() => {
  const fields = (v: bigint, n: number) => ({ header: { tid: v, attrId: n & 0xffff, attrMod: n >>> 0 }, sa: { componentMask: v } });
  const a = SaMadHeader.encode(fields(0n, 0));
  const b = SaMadHeader.encode(fields(0xffffffffffffffffn, 0xffffffff));
  const out: number[] = [];
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) out.push(i);
  return out;
})();
/** Encoded single-MAD response headers per (method, AttributeOffset), the echoed fields zero: the
 * SaMadHeader encode (the costliest part of a PathRecord answer after the record itself) runs once
 * per pair, not once per response. */
const responseHeaderTemplates = new Map<number, Uint8Array>();

/** Write a single-MAD (no RMPP) SA response header: request's TID/attribute/modifier/component mask echoed. */
function writeSingleResponseHeader(mad: Uint8Array, request: Uint8Array, method: number, attributeOffset: number): void {
  const key = method * 0x10000 + attributeOffset;
  let t = responseHeaderTemplates.get(key);
  if (!t) {
    t = SaMadHeader.encode({
      header: { baseVersion: 1, mgmtClass: MgmtClass.SubnAdm, classVersion: SA_CLASS_VERSION, method, status: 0 },
      rmpp: {},
      sa: { smKey: 0n, attributeOffset },
    });
    responseHeaderTemplates.set(key, t);
  }
  mad.set(t, 0);
  for (const i of ECHOED_HEADER_BYTES) mad[i] = request[i]!;
}

/** Bit offset of the request's SM_Key, from the SA header's table. Read with readBig rather than a
 * second view on the cache path (measurably cheaper per request). */
const SM_KEY_BIT = SA_HEADER_OFFSET * 8 + SaHeader.fields.smKey.bit;

/** The key a trusted SA request carries: the SA_Key, else (a context without one) the SM_Key. */
const saKeyOf = (ctx: SaContext): bigint => ctx.saKey ?? ctx.smKey;

const HEX4 = new Map<number, string>();
/** "0x" and four hex digits (memoised: it names counters on every answer). */
function hex4(n: number): string {
  let s = HEX4.get(n);
  if (s === undefined) HEX4.set(n, (s = '0x' + n.toString(16).padStart(4, '0')));
  return s;
}

export class SaServer {
  private ctx: SaContext | undefined;
  /** Requests waiting, per requester LID, answered round-robin. */
  private readonly queues: FairQueues<number, ReceivedMad>;
  private draining = false;
  private unsubscribe: (() => void) | undefined;
  private readonly batch: number;
  private readonly schedule: (fn: () => void) => void;
  private readonly cache: AnswerCache;
  /** Set while a cacheable request is being answered: where its single-MAD response goes. */
  private capture: { ctx: SaContext; lid: number; trusted: boolean } | undefined;
  /** The one single-MAD response buffer, used when the transport copies on send. */
  private readonly scratchMad = new Uint8Array(MAD_SIZE);
  private readonly limits: SaLimits;
  /** RMPP transfers running per requester LID. */
  private readonly rmppByLid = new KeyCounter();
  readonly stats: SaServerStats;
  /** Observer of each request's answering time (method, attribute ID, ms from taking it off the
   * queue to its response handed to the RPC); the metrics' SA duration histogram. */
  onTimed?: (method: number, attrId: number, ms: number) => void;

  constructor(
    readonly rpc: MadRpc,
    readonly engine: SaEngine,
    private readonly opts: SaServerOptions = {},
  ) {
    this.queues = new FairQueues(Math.max(1, opts.maxQueue ?? QUEUE_MIN), undefined, Math.max(1, opts.maxQueuePerRequester ?? QUEUE_PER_REQUESTER));
    this.batch = Math.max(1, opts.batch ?? 32);
    this.schedule = opts.schedule ?? ((fn) => rpc.clock.defer(fn));
    this.cache = new AnswerCache(Math.max(0, opts.answerCacheSize ?? 32768), PathRecord.byteLength);
    this.limits = resolveSaLimits(opts.limits);
    this.stats = { received: 0, answered: 0, errors: 0, busy: 0, malformed: 0, invalid: 0, ignored: 0, rmppFailures: 0, rmppRefused: 0, rmppActive: 0, sendFailures: 0, refused: 0, wrongKey: 0, byAttribute: {}, byStatus: {}, cache: this.cache.stats };
  }

  /** The RPC clock's time (for the log rate limits; 0 for an RPC without a clock, as in unit stubs). */
  private now(): number {
    return (this.rpc.clock as typeof this.rpc.clock | undefined)?.now() ?? 0;
  }

  /** Register as the SA class server and start answering. */
  start(): void {
    if (this.unsubscribe) return;
    if (this.opts.registerAgent ?? true) this.rpc.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, { methods: SERVED_METHODS });
    this.unsubscribe = this.rpc.onUnsolicited(MgmtClass.SubnAdm, (m) => this.receive(m));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.clearQueues();
  }

  /** Answer requests (true) or drop them unanswered (false: this SM is not the master, and only
   * the master's SA answers). */
  setActive(active: boolean): void {
    this.active = active;
    if (!active) this.clearQueues();
  }
  private active = true;

  /** Called by the SM after each sweep. Until the first call every request is answered BUSY. */
  setContext(ctx: SaContext | undefined): void {
    this.ctx = ctx && this.interSubnet ? { ...ctx, interSubnet: this.interSubnet } : ctx;
    if (ctx && this.opts.maxQueue === undefined) this.queues.setMax(Math.max(QUEUE_MIN, QUEUE_PER_END_PORT * snapshotPorts(ctx.snapshot).endPorts.length));
  }

  /** The inter-subnet answers (sa/inter-subnet.ts) every context gets from now on; a new view
   * starts a new context (and answer cache). */
  setInterSubnet(v: SaContext['interSubnet']): void {
    this.interSubnet = v;
    if (this.ctx) this.ctx = { ...this.ctx, interSubnet: v };
  }
  private interSubnet?: SaContext['interSubnet'];

  get context(): SaContext | undefined {
    return this.ctx;
  }

  private clearQueues(): void {
    this.queues.clear();
  }

  get queueLength(): number {
    return this.queues.size;
  }

  /** A copy of the counters, for metrics. */
  metrics(): SaServerStats {
    return { ...this.stats, byAttribute: { ...this.stats.byAttribute }, byStatus: { ...this.stats.byStatus }, cache: { ...this.stats.cache } };
  }

  /** Take one received SA MAD (what the MadRpc handler calls). */
  receive(m: ReceivedMad): void {
    this.stats.received++;
    if (!this.active) {
      this.stats.ignored++;
      return;
    }
    if (m.data.length < 24) {
      this.stats.malformed++;
      return;
    }
    // All together maxQueue: when full, the longest queue gives way to a shorter one's request.
    const refused = this.queues.push(m.addr.lid, m);
    if (refused) {
      this.stats.busy++;
      this.answerStatus(refused, MadStatus.Busy);
      if (refused === m) return;
    }
    if (!this.draining) {
      this.draining = true;
      this.schedule(() => this.drain());
    }
  }

  private drain(): void {
    let n = 0;
    while (n < this.batch && this.queues.size) {
      const m = this.queues.shift()!;
      try {
        this.process(m);
      } catch (err) {
        // Never let one request stop the server; answer it as a resource failure.
        this.opts.log?.from(m.addr.lid).error('SA request failed', { lid: m.addr.lid, error: (err as Error).message });
        this.answerStatus(m, SaStatus.NoResources);
      }
      n++;
    }
    if (this.queues.size) this.schedule(() => this.drain());
    else this.draining = false;
  }

  /** A zeroed buffer for a single-MAD response: the reused one when the RPC copies on send
   * (everything from here to send() is synchronous), else a new one. */
  private responseBuffer(): Uint8Array {
    if (!this.rpc.copiesOnSend) return new Uint8Array(MAD_SIZE);
    return this.scratchMad.fill(0);
  }

  /** Answer one request now (bypassing the queue). */
  process(m: ReceivedMad): void {
    const timed = this.onTimed;
    if (!timed || m.data.length < 24) return this.processOne(m);
    const t0 = this.now();
    try {
      this.processOne(m);
    } finally {
      // Method (byte 3) and attribute ID (bytes 16-17) of the MAD header, read without a view.
      timed(m.data[3]!, (m.data[16]! << 8) | m.data[17]!, this.now() - t0);
    }
  }

  private processOne(m: ReceivedMad): void {
    if (m.data.length < 24) {
      this.stats.malformed++;
      return;
    }
    const d = m.data;
    const ctx0 = this.ctx;
    // The SA header's SM_Key field: 0 (an ordinary request), the SA_Key (trusted), or another key:
    // dropped unanswered, as OpenSM (osm_sa_mad_ctrl.c, ERR 1A04: "MAD ignored"), counted and said
    // (rate-limited per requester). The key received is logged, never the SA_Key.
    const key = ctx0 && d.length >= SA_DATA_OFFSET ? readBig(d, SM_KEY_BIT, 64) : 0n; // zero (the usual case) costs no BigInt work
    if (key !== 0n && key !== saKeyOf(ctx0!)) {
      this.stats.wrongKey++;
      this.opts.log?.from(m.addr.lid).warn('SA request with a wrong SA_Key dropped', { lid: m.addr.lid, key: formatGuid(key), dropped: this.stats.wrongKey });
      return;
    }
    // A repeated PathRecord Get is answered with the response already sent for it (AnswerCache).
    const h = MadHeaderView.over(d);
    if (ctx0 && d.length >= SA_DATA_OFFSET && h.attrId === SaAttr.PathRecord && h.method === Method.Get && h.mgmtClass === MgmtClass.SubnAdm && h.classVersion === SA_CLASS_VERSION && h.baseVersion === 1) {
      const trusted = key !== 0n;
      const hit = this.cache.get(ctx0, d, m.addr.lid, trusted);
      if (hit) {
        this.stats.byAttribute['PathRecord'] = (this.stats.byAttribute['PathRecord'] ?? 0) + 1;
        this.count(MadHeaderView.over(hit).status, m);
        // MadRpc.respond writes the TID into the buffer: a copy, reused when the transport copies on send.
        const out = this.responseBuffer();
        out.set(hit);
        this.sendSingle(m, out);
        return;
      }
      this.capture = { ctx: ctx0, lid: m.addr.lid, trusted };
      try {
        this.processDecoded(m);
      } finally {
        this.capture = undefined;
      }
      return;
    }
    this.processDecoded(m);
  }

  private processDecoded(m: ReceivedMad): void {
    const hdr = MadHeader.decode(m.data, 0);
    if (hdr.method & METHOD_RESPONSE_BIT) {
      this.stats.ignored++;
      return;
    }
    const name = attrName(hdr.attrId);
    this.stats.byAttribute[name] = (this.stats.byAttribute[name] ?? 0) + 1;
    if (hdr.baseVersion !== 1 || hdr.classVersion !== SA_CLASS_VERSION) {
      this.answerStatus(m, MadStatus.BadVersion);
      return;
    }
    const ctx = this.ctx;
    if (!ctx) {
      this.stats.busy++;
      this.answerStatus(m, MadStatus.Busy);
      return;
    }
    let msg: SaMessage;
    try {
      msg = decodeSaMad(m.data);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      this.stats.invalid++;
      this.answerStatus(m, SaStatus.ReqInvalid);
      return;
    }
    const smKey = msg.sa.smKey;
    const q: SaQuery = {
      method: hdr.method,
      attrId: hdr.attrId,
      attrMod: hdr.attrMod,
      componentMask: msg.sa.componentMask,
      data: msg.data,
      requester: {
        lid: m.addr.lid,
        portGuid: snapshotPorts(ctx.snapshot).byLid(m.addr.lid)?.guid,
        smKey,
        // (another non-zero key was dropped in processOne)
        trusted: smKey !== 0n && smKey === saKeyOf(ctx),
        qpn: m.addr.qpn,
      },
    };
    const a = this.engine.answer(q, ctx);
    if (hdr.method === Method.Report) return; // a Report is answered by its handler's ReportResp logic, not here
    this.respond(m, msg, a);
  }

  private count(status: number, m: ReceivedMad): void {
    if (this.opts.onServed) {
      const h = MadHeaderView.over(m.data);
      this.opts.onServed({ attrId: h.attrId, method: h.method, lid: m.addr.lid, status });
    }
    this.stats.answered++;
    if (status) this.stats.errors++;
    const k = hex4(status);
    this.stats.byStatus[k] = (this.stats.byStatus[k] ?? 0) + 1;
  }

  /** Send a single-MAD response, remembering it while a cacheable request is being answered. Only
   * answers with a record are kept: an error response echoes request bytes outside the key. */
  private sendSingle(m: ReceivedMad, mad: Uint8Array): void {
    const c = this.capture;
    if (c && MadHeaderView.over(mad).status === 0) this.cache.put(c.ctx, m.data, c.lid, c.trusted, mad);
    try {
      this.rpc.respond(m, mad);
    } catch (e) {
      this.stats.sendFailures++;
      this.opts.log?.from(m.addr.lid).warn('SA response could not be sent', { lid: m.addr.lid, error: (e as Error).message, failed: this.stats.sendFailures });
    }
  }

  private respond(m: ReceivedMad, msg: SaMessage, a: SaAnswer): void {
    const { header } = msg;
    if (a.kind === 'status') {
      if (a.status === SaStatus.NoResources) {
        this.stats.refused++;
        this.opts.log?.from(m.addr.lid).warn('SA request refused: a bound was reached', { lid: m.addr.lid, attr: attrName(header.attrId), method: header.method, refused: this.stats.refused });
      }
      this.answerStatus(m, a.status, a.record);
      return;
    }
    const layout = responseLayout(header.attrId);
    const stride = layout ? recordStride(layout) : Math.ceil(Math.max(8, ...a.records.map((r) => r.length)) / 8) * 8;
    const method = a.method ?? responseMethod(header.method);
    const lid = String(m.addr.lid);
    if (SA_TABLE_METHODS.has(header.method)) {
      // Bounded RMPP senders: a requester that never ACKs holds at most rmppPerRequester of them.
      if (this.rmppByLid.get(lid) >= this.limits.rmppPerRequester || this.stats.rmppActive >= this.limits.rmppTotal) {
        this.stats.rmppRefused++;
        this.opts.log?.from(m.addr.lid).warn('SA table answer refused: too many RMPP transfers running', { lid: m.addr.lid, running: this.rmppByLid.get(lid), total: this.stats.rmppActive, refused: this.stats.rmppRefused });
        this.answerStatus(m, SaStatus.NoResources);
        return;
      }
    }
    this.count(0, m);
    if (!SA_TABLE_METHODS.has(header.method)) {
      const mad = this.responseBuffer();
      writeSingleResponseHeader(mad, m.data, method, stride / 8);
      const r = a.records[0];
      if (r) mad.set(r.length <= SA_DATA_SIZE ? r : r.subarray(0, SA_DATA_SIZE), SA_DATA_OFFSET);
      this.sendSingle(m, mad);
      return;
    }
    const payload = new Uint8Array(stride * a.records.length);
    a.records.forEach((r, i) => payload.set(r.subarray(0, Math.min(r.length, stride)), i * stride));
    const hdr = SaMadHeader.encode({
      header: { baseVersion: 1, mgmtClass: MgmtClass.SubnAdm, classVersion: SA_CLASS_VERSION, method, status: 0, tid: header.tid, attrId: header.attrId, attrMod: header.attrMod },
      sa: { smKey: 0n, attributeOffset: stride / 8, componentMask: msg.sa.componentMask },
      rmpp: {},
    });
    this.rmppByLid.inc(lid);
    this.stats.rmppActive++;
    this.rpc
      .respondRmpp(m, hdr, payload)
      .catch((e: unknown) => {
        this.stats.rmppFailures++;
        this.opts.log?.from(m.addr.lid).warn('SA RMPP response failed', { lid: m.addr.lid, attr: attrName(header.attrId), records: a.records.length, error: (e as Error).message, failed: this.stats.rmppFailures });
      })
      .finally(() => {
        this.rmppByLid.dec(lid);
        this.stats.rmppActive--;
      });
  }

  /** An error (or BUSY) response: the request echoed with the status set; table methods carry an empty single-segment RMPP. */
  private answerStatus(m: ReceivedMad, status: number, record?: Uint8Array): void {
    this.count(status, m);
    this.sendSingle(m, saStatusResponse(m.data, status, record, this.responseBuffer()));
  }
}

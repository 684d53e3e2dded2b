/**
 * RMPP (IBA 13.6): segmentation of a long class payload into 256-byte MADs, the sender (window
 * opened by the receiver's ACK NewWindowLast, go-back-N retransmission on ACK timeout, total
 * transfer timeout, STOP/ABORT) and the receiver (in-window buffering of out-of-order segments,
 * duplicate re-ACKs, reassembly). Used by MadRpc where the kernel does no RMPP (ibsim, the
 * in-process fabric); MadRpc can switch it off for a kernel that does.
 *
 * PayloadLength follows the Linux kernel: it counts the class header of every segment (for SA,
 * 20 + 200 bytes per segment). The first segment carries the total, the last its own length.
 * A reassembled transfer is what the kernel delivers: the first segment's headers (MAD, RMPP,
 * class header) followed by the data of every segment.
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import type { MadAddress, ReceivedMad } from '../transport/types.js';
import { GSI_QKEY, MadHeaderView, MgmtClass, METHOD_RESPONSE_BIT, MAD_SIZE } from '../wire/mad.js';
import { RMPP_DATA_SIZE, RMPP_HEADER_OFFSET, RMPP_HEADER_SIZE, RmppFlag, RmppHeaderView, RmppStatus, RmppType, decodeRmpp, encodeRmpp, rmppAck, rmppData, rmppStopOrAbort, type RmppHeader } from '../wire/rmpp.js';
import { RmppAbortError, RmppTimeoutError, type MadIdent } from './errors.js';
import { identOf } from './ident.js';

export { identOf } from './ident.js';

export interface RmppOptions {
  /** Window the receiver advertises (segments per ACK). Default 32. */
  windowSize?: number;
  /** Sender: how long to wait for an ACK before resending the window. Default 200 ms. */
  ackTimeoutMs?: number;
  /** Sender: resends without progress before giving up (ABORT TooManyRetries). Default 5. */
  retries?: number;
  /** Whole-transfer limit, both roles (ABORT TotalTimeTooLong). Default 10000 ms. */
  totalTimeoutMs?: number;
  /** Receiver: give up when no new segment arrives for this long. Default 2000 ms. */
  receiveTimeoutMs?: number;
  /** Receiver: keep a finished transfer this long to re-ACK late duplicates. Default 1000 ms. */
  lingerMs?: number;
  /** Bytes of a MAD that reach the peer intact (default 256). Segments carry `madSize - header`
   * bytes of data; both ends must agree. Below 256 only for a link that cuts MADs short (ibsim
   * delivers 224 bytes), where both ends are ibsm. */
  madSize?: number;
  /** Sender: when the receiver has ACKed nothing by the first ACK timeout, stop there, without
   * resends or an ABORT, and count the transfer in `transfersUnacked`. A receiver that does no
   * RMPP (a diag tool under umad2sim reads the first segment as the whole answer, as it reads
   * OpenSM's) never ACKs, and resends outlive it: they reach whichever process next uses that
   * LID and QP and match its TIDs (libibmad's TID sequence restarts in every process), which made
   * diag tools run back to back crash. An RMPP receiver that lost the first segment retries its
   * request. Default false; MadRpc turns it on where the transport cuts MADs short (umad2sim). */
  quietWithoutAck?: boolean;
}

export type ResolvedRmppOptions = Required<RmppOptions>;

export function resolveRmppOptions(o: RmppOptions = {}): ResolvedRmppOptions {
  return {
    windowSize: o.windowSize ?? 32,
    ackTimeoutMs: o.ackTimeoutMs ?? 200,
    retries: o.retries ?? 5,
    totalTimeoutMs: o.totalTimeoutMs ?? 10_000,
    receiveTimeoutMs: o.receiveTimeoutMs ?? 2_000,
    lingerMs: o.lingerMs ?? 1_000,
    madSize: Math.min(MAD_SIZE, o.madSize ?? MAD_SIZE),
    quietWithoutAck: o.quietWithoutAck ?? false,
  };
}

/** Bytes of class header that every segment repeats after the RMPP header. */
export function classHeaderLength(mgmtClass: number): number {
  if (mgmtClass === MgmtClass.SubnAdm) return 20;
  if (mgmtClass >= 0x30 && mgmtClass <= 0x4f) return 4; // vendor class with OUI
  return 0;
}

/** Offset of the segment data: MAD header + RMPP header + class header (56 for SA). */
export function rmppDataOffset(mgmtClass: number): number {
  return RMPP_HEADER_OFFSET + RMPP_HEADER_SIZE + classHeaderLength(mgmtClass);
}

/** Data bytes per segment (200 for SA with 256-byte MADs). */
export function rmppSegmentDataSize(mgmtClass: number, madSize = MAD_SIZE): number {
  return madSize - rmppDataOffset(mgmtClass);
}

export function hasRmppHeader(mgmtClass: number): boolean {
  return mgmtClass === MgmtClass.SubnAdm || (mgmtClass >= 0x30 && mgmtClass <= 0x4f);
}

/** The RMPP flags byte's Active bit, read without decoding the header. */
/** An RMPP-active MAD without RMPP version and type: the sender left RMPP to a layer below it
 * (OpenSM's SA answers, which a kernel would segment; umad2sim delivers them as one MAD). It is
 * the whole answer as far as this end can have it, not a segment. */
export function rmppLeftToKernel(mad: Uint8Array): boolean {
  return mad.length >= RMPP_HEADER_OFFSET + RMPP_HEADER_SIZE && mad[RMPP_HEADER_OFFSET] === 0 && mad[RMPP_HEADER_OFFSET + 1] === 0;
}

export function rmppActive(mad: Uint8Array): boolean {
  return mad.length >= RMPP_HEADER_OFFSET + RMPP_HEADER_SIZE && (RmppHeaderView.over(mad, RMPP_HEADER_OFFSET).flags & RmppFlag.Active) !== 0;
}

/**
 * Split `payload` into DATA segments. `header` holds at least the MAD header, RMPP header and class
 * header (its RMPP header is overwritten); every segment repeats it. Always at least one segment.
 */
export function segmentRmpp(header: Uint8Array, payload: Uint8Array, respTime?: number, madSize = MAD_SIZE): Uint8Array[] {
  const cls = MadHeaderView.over(header).mgmtClass;
  const off = rmppDataOffset(cls);
  if (header.length < off) throw new RangeError(`RMPP header block for class 0x${cls.toString(16)} needs ${off} bytes, got ${header.length}`);
  const size = madSize - off;
  const chdr = off - RMPP_HEADER_OFFSET - RMPP_HEADER_SIZE;
  const n = Math.max(1, Math.ceil(payload.length / size));
  const segs: Uint8Array[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const b = new Uint8Array(MAD_SIZE);
    b.set(header.subarray(0, off));
    const chunk = payload.subarray(i * size, Math.min(payload.length, (i + 1) * size));
    b.set(chunk, off);
    const first = i === 0;
    const last = i === n - 1;
    const paylen = first ? n * chdr + payload.length : last ? chdr + chunk.length : 0;
    encodeRmpp(rmppData(i + 1, first, last, paylen, respTime), b);
    segs[i] = b;
  }
  return segs;
}

/** Join segments (in order, 1..n) into headers + data; `lastDataLength` bytes of the last segment's data are used. */
export function reassembleRmpp(segments: readonly Uint8Array[], lastDataLength: number, madSize = MAD_SIZE): Uint8Array {
  const first = segments[0]!;
  const off = rmppDataOffset(MadHeaderView.over(first).mgmtClass);
  const size = madSize - off;
  const total = (segments.length - 1) * size + lastDataLength;
  const out = new Uint8Array(off + total);
  out.set(first.subarray(0, off));
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!;
    const len = i === segments.length - 1 ? lastDataLength : size;
    out.set(s.subarray(off, off + len), off + i * size);
  }
  return out;
}

/** What RMPP needs from its host (MadRpc). */
export interface RmppHost {
  readonly clock: Clock;
  /** Send raw bytes; may throw TransportError. */
  sendRaw(mad: Uint8Array, addr: MadAddress): void;
  readonly rmppStats: RmppStats;
}

export interface RmppStats {
  segmentsSent: number;
  segmentsResent: number;
  segmentsReceived: number;
  duplicateSegments: number;
  outOfWindowSegments: number;
  acksSent: number;
  acksReceived: number;
  aborts: number;
  transfersSent: number;
  transfersReceived: number;
  /** Sends stopped after the first window because the receiver never ACKed (quietWithoutAck). */
  transfersUnacked: number;
}

export function newRmppStats(): RmppStats {
  return { segmentsSent: 0, segmentsResent: 0, segmentsReceived: 0, duplicateSegments: 0, outOfWindowSegments: 0, acksSent: 0, acksReceived: 0, aborts: 0, transfersSent: 0, transfersReceived: 0, transfersUnacked: 0 };
}

export function replyAddress(addr: MadAddress): MadAddress {
  return addr.qpn !== 0 && !addr.qkey ? { ...addr, qkey: GSI_QKEY } : addr;
}

/** A control MAD (ACK/STOP/ABORT) answering `about`: its MAD and class headers, method flipped. */
function controlMad(about: Uint8Array, hdr: RmppHeader, flipMethod = true): Uint8Array {
  const a = MadHeaderView.over(about);
  const b = new Uint8Array(MAD_SIZE);
  b.set(about.subarray(0, rmppDataOffset(a.mgmtClass)));
  if (flipMethod) MadHeaderView.over(b).method = a.method ^ METHOD_RESPONSE_BIT;
  encodeRmpp(hdr, b);
  return b;
}

/** Sends an RMPP ABORT answering `about` (best effort). */
export function sendAbort(host: RmppHost, about: Uint8Array, addr: MadAddress, status: number, flipMethod: boolean): void {
  const b = controlMad(about, rmppStopOrAbort(RmppType.Abort, status), flipMethod);
  host.rmppStats.aborts++;
  try {
    host.sendRaw(b, replyAddress(addr));
  } catch {
    /* best effort */
  }
}

type Settle<T> = { ok: (v: T) => void; fail: (e: Error) => void };

/** The receiving side of one transfer. */
export class RmppReceiver {
  private expected = 1;
  private windowLast = 1;
  private lastSeg = 0;
  private lastDataLen = 0;
  private readonly segs = new Map<number, Uint8Array>();
  private readonly ordered: Uint8Array[] = [];
  private lastProgress: number;
  private readonly started: number;
  private timer: TimerHandle | undefined;
  private about: Uint8Array | undefined;
  /** 'active' → 'done' (lingering to re-ACK) or 'failed'. */
  state: 'active' | 'done' | 'failed' = 'active';
  private readonly dataSize: number;

  constructor(
    private readonly host: RmppHost,
    private readonly o: ResolvedRmppOptions,
    private readonly peer: MadAddress,
    private readonly ident: MadIdent,
    mgmtClass: number,
    private readonly settle: Settle<ReceivedMad>,
    /** Called when the receiver can be forgotten (after lingering or failure). */
    private readonly onForget: () => void,
  ) {
    this.dataSize = rmppSegmentDataSize(mgmtClass, o.madSize);
    this.started = this.lastProgress = host.clock.now();
    this.arm(Math.min(o.receiveTimeoutMs, o.totalTimeoutMs));
  }

  private arm(ms: number): void {
    this.timer = this.host.clock.setTimeout(this.onTimer, ms);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    const now = this.host.clock.now();
    if (this.state === 'done') {
      this.state = 'failed';
      this.onForget();
      return;
    }
    if (this.state !== 'active') return;
    const idleDue = this.lastProgress + this.o.receiveTimeoutMs;
    const totalDue = this.started + this.o.totalTimeoutMs;
    if (now >= totalDue) return this.fail('the whole transfer took longer than ' + this.o.totalTimeoutMs + ' ms', RmppStatus.TotalTimeTooLong);
    if (now >= idleDue) return this.fail(`no new segment for ${this.o.receiveTimeoutMs} ms`, RmppStatus.TotalTimeTooLong);
    this.arm(Math.min(idleDue, totalDue) - now);
  };

  private fail(reason: string, status: number): void {
    this.state = 'failed';
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.about) sendAbort(this.host, this.about, this.peer, status, true);
    this.onForget();
    this.settle.fail(new RmppTimeoutError(this.ident, 'receive', this.expected - 1, this.lastSeg || undefined, reason));
  }

  private protocolAbort(status: number, detail: string): void {
    this.state = 'failed';
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.about) sendAbort(this.host, this.about, this.peer, status, true);
    this.onForget();
    this.settle.fail(new RmppAbortError('ABORT', status, false, this.ident.destination, detail));
  }

  private ack(seg: number, nwl: number): void {
    if (!this.about) return;
    this.host.rmppStats.acksSent++;
    try {
      this.host.sendRaw(controlMad(this.about, rmppAck(seg, nwl)), replyAddress(this.peer));
    } catch {
      /* the sender will resend; we re-ACK then */
    }
  }

  /** A DATA segment of this transfer. */
  onData(m: ReceivedMad, h: RmppHeader): void {
    const s = h.data1;
    this.about ??= m.data;
    if (this.state === 'done') {
      this.host.rmppStats.duplicateSegments++;
      this.ack(this.lastSeg, this.lastSeg);
      return;
    }
    if (this.state !== 'active') return;
    this.host.rmppStats.segmentsReceived++;
    const first = (h.flags & RmppFlag.First) !== 0;
    if ((s === 1) !== first) {
      return this.protocolAbort(RmppStatus.InconsistentFirstAndSegmentNumber, `segment ${s} ${first ? 'has' : 'lacks'} the First flag`);
    }
    if (s < this.expected || this.segs.has(s)) {
      this.host.rmppStats.duplicateSegments++;
      this.ack(this.expected - 1, this.windowLast);
      return;
    }
    if (s > this.windowLast || (this.lastSeg && s > this.lastSeg)) {
      this.host.rmppStats.outOfWindowSegments++;
      return;
    }
    const isLast = (h.flags & RmppFlag.Last) !== 0;
    const cls = MadHeaderView.over(m.data).mgmtClass;
    const dataOff = rmppDataOffset(cls);
    // A middle segment carries a full segment of data; the last one (possibly sent short, as a
    // lone segment is) at least the data its PayloadLength names.
    if (!isLast && m.data.length < dataOff + this.dataSize) return this.protocolAbort(RmppStatus.Unspecified, `segment ${s} is only ${m.data.length} bytes`);
    if (isLast) {
      const chdr = classHeaderLength(cls);
      const len = h.data2 - chdr;
      // A lone segment (First|Last) from a sender using standard 256-byte segments where this end
      // gets fewer bytes intact (OpenSM's GetMultiResp under umad2sim): keep the intact part.
      const lone = s === 1 && (h.flags & RmppFlag.First) !== 0;
      const max = lone ? Math.max(this.dataSize, rmppSegmentDataSize(cls)) : this.dataSize;
      if (len < 0 || len > max) {
        return this.protocolAbort(RmppStatus.InconsistentLastAndPayloadLength, `last segment ${s} has PayloadLength ${h.data2}, outside ${chdr}..${chdr + max}`);
      }
      // (A lone segment may also arrive shorter than its PayloadLength says there: what came is it.)
      const keep = lone ? Math.max(0, Math.min(len, this.dataSize, m.data.length - dataOff)) : len;
      if (m.data.length < dataOff + keep) return this.protocolAbort(RmppStatus.InconsistentLastAndPayloadLength, `last segment ${s} is ${m.data.length} bytes, shorter than its PayloadLength says`);
      this.lastSeg = s;
      this.lastDataLen = keep;
      if (keep !== len) {
        // What the caller decodes says what it holds: PayloadLength of the kept part.
        const seg = m.data.slice();
        new DataView(seg.buffer, seg.byteOffset, seg.byteLength).setUint32(RMPP_HEADER_OFFSET + 8, chdr + keep);
        this.segs.set(s, seg);
      }
    }
    if (!this.segs.has(s)) this.segs.set(s, m.data);
    this.lastProgress = this.host.clock.now();
    while (this.segs.has(this.expected)) {
      this.ordered.push(this.segs.get(this.expected)!);
      this.segs.delete(this.expected);
      this.expected++;
    }
    if (this.lastSeg && this.expected > this.lastSeg) {
      this.ack(this.lastSeg, this.lastSeg);
      this.state = 'done';
      if (this.timer) this.host.clock.clearTimeout(this.timer);
      this.arm(this.o.lingerMs);
      this.host.rmppStats.transfersReceived++;
      const data = reassembleRmpp(this.ordered, this.lastDataLen, this.o.madSize);
      this.ordered.length = 0;
      this.settle.ok({ data, addr: this.peer, status: 0 });
      return;
    }
    if (this.expected - 1 >= this.windowLast) {
      this.windowLast = this.expected - 1 + this.o.windowSize;
      this.ack(this.expected - 1, this.windowLast);
    }
  }

  /** STOP or ABORT from the sender. */
  onStopAbort(h: RmppHeader): void {
    if (this.state !== 'active') return;
    this.state = 'failed';
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.onForget();
    this.settle.fail(new RmppAbortError(h.type === RmppType.Stop ? 'STOP' : 'ABORT', h.status, true, this.ident.destination, `after ${this.expected - 1} segments`));
  }

  cancel(): void {
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.state = 'failed';
  }
}

/** The sending side of one transfer. */
export class RmppSender {
  private lastAcked = 0;
  private windowLast = 1;
  private nextToSend = 1;
  private retriesLeft: number;
  private readonly started: number;
  private timer: TimerHandle | undefined;
  private ackDue = 0;
  /** Any ACK received (quietWithoutAck). */
  private acked = false;
  state: 'active' | 'done' | 'failed' = 'active';

  constructor(
    private readonly host: RmppHost,
    private readonly o: ResolvedRmppOptions,
    private readonly segs: readonly Uint8Array[],
    private readonly addr: MadAddress,
    private readonly ident: MadIdent,
    private readonly settle: Settle<void>,
    private readonly onForget: () => void,
  ) {
    this.retriesLeft = o.retries;
    this.started = host.clock.now();
  }

  start(): void {
    this.pump();
  }

  private sendSeg(i: number, resend: boolean): boolean {
    try {
      this.host.sendRaw(this.segs[i - 1]!, this.addr);
    } catch (e) {
      this.finish(e instanceof Error ? e : new Error(String(e)));
      return false;
    }
    if (resend) this.host.rmppStats.segmentsResent++;
    else this.host.rmppStats.segmentsSent++;
    return true;
  }

  private pump(): void {
    const end = Math.min(this.windowLast, this.segs.length);
    while (this.state === 'active' && this.nextToSend <= end) {
      if (!this.sendSeg(this.nextToSend, false)) return;
      this.nextToSend++;
    }
    this.rearm();
  }

  private rearm(): void {
    if (this.state !== 'active') return;
    const now = this.host.clock.now();
    this.ackDue = now + this.o.ackTimeoutMs;
    if (!this.timer) this.timer = this.host.clock.setTimeout(this.onTimer, this.o.ackTimeoutMs);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    if (this.state !== 'active') return;
    const now = this.host.clock.now();
    if (now - this.started >= this.o.totalTimeoutMs) {
      return this.abort(RmppStatus.TotalTimeTooLong, `the whole transfer took longer than ${this.o.totalTimeoutMs} ms`);
    }
    if (now < this.ackDue) {
      this.timer = this.host.clock.setTimeout(this.onTimer, this.ackDue - now);
      return;
    }
    if (this.o.quietWithoutAck && !this.acked) {
      // The receiver does no RMPP: it has what it can take (the first window). No resend.
      this.host.rmppStats.transfersUnacked++;
      this.state = 'done';
      this.onForget();
      this.settle.ok();
      return;
    }
    if (this.retriesLeft-- <= 0) {
      return this.abort(RmppStatus.TooManyRetries, `no ACK after ${this.o.retries + 1} sends of segment ${this.lastAcked + 1}`);
    }
    // go-back-N: resend the unacknowledged part of the window
    const end = Math.min(this.windowLast, this.segs.length, Math.max(this.nextToSend - 1, this.lastAcked + 1));
    for (let i = this.lastAcked + 1; i <= end; i++) if (!this.sendSeg(i, true)) return;
    this.nextToSend = Math.max(this.nextToSend, end + 1);
    this.rearm();
  };

  private abort(status: number, reason: string): void {
    sendAbort(this.host, this.segs[0]!, this.addr, status, false);
    this.finish(new RmppTimeoutError(this.ident, 'send', this.lastAcked, this.segs.length, reason));
  }

  private finish(err?: Error): void {
    if (this.state !== 'active') return;
    this.state = err ? 'failed' : 'done';
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.onForget();
    if (err) this.settle.fail(err);
    else {
      this.host.rmppStats.transfersSent++;
      this.settle.ok();
    }
  }

  onControl(h: RmppHeader): void {
    if (this.state !== 'active') return;
    if (h.type === RmppType.Stop || h.type === RmppType.Abort) {
      this.finish(new RmppAbortError(h.type === RmppType.Stop ? 'STOP' : 'ABORT', h.status, true, this.ident.destination, `after ${this.lastAcked}/${this.segs.length} segments acknowledged`));
      return;
    }
    if (h.type !== RmppType.Ack) return;
    this.host.rmppStats.acksReceived++;
    this.acked = true;
    const seg = h.data1;
    const nwl = h.data2;
    if (seg > this.segs.length || seg >= this.nextToSend) {
      sendAbort(this.host, this.segs[0]!, this.addr, RmppStatus.SegmentNumberTooBig, false);
      this.finish(new RmppAbortError('ABORT', RmppStatus.SegmentNumberTooBig, false, this.ident.destination, `peer acknowledged segment ${seg}, only ${this.nextToSend - 1} sent`));
      return;
    }
    if (nwl < seg) {
      sendAbort(this.host, this.segs[0]!, this.addr, RmppStatus.NewWindowLastTooSmall, false);
      this.finish(new RmppAbortError('ABORT', RmppStatus.NewWindowLastTooSmall, false, this.ident.destination, `NewWindowLast ${nwl} below acknowledged segment ${seg}`));
      return;
    }
    if (seg > this.lastAcked) {
      this.lastAcked = seg;
      this.retriesLeft = this.o.retries;
    }
    if (nwl > this.windowLast) this.windowLast = nwl;
    if (this.lastAcked >= this.segs.length) return this.finish();
    if (this.nextToSend <= this.lastAcked) this.nextToSend = this.lastAcked + 1;
    this.pump();
  }

  cancel(err: Error): void {
    this.finish(err);
  }
}

export { RMPP_DATA_SIZE, decodeRmpp };

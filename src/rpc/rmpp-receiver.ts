/** The receiving side of an RMPP transfer (IBA 13.6; see rpc/rmpp.ts): in-window buffering of
 * out-of-order segments, duplicate re-ACKs, reassembly, receive and total timeouts. */
import type { TimerHandle } from '../util/clock.js';
import type { MadAddress, ReceivedMad } from '../transport/types.js';
import { MadHeaderView } from '../wire/mad.js';
import { RMPP_HEADER_OFFSET, RmppFlag, RmppStatus, RmppType, rmppAck, type RmppHeader } from '../wire/rmpp.js';
import { RmppAbortError, RmppTimeoutError, type MadIdent } from './errors.js';
import { classHeaderLength, controlMad, replyAddress, reassembleRmpp, rmppDataOffset, rmppSegmentDataSize, sendAbort, type ResolvedRmppOptions, type RmppHost, type Settle } from './rmpp.js';

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
    this.end(status, new RmppTimeoutError(this.ident, 'receive', this.expected - 1, this.lastSeg || undefined, reason));
  }

  private protocolAbort(status: number, detail: string): void {
    this.end(status, new RmppAbortError('ABORT', status, false, this.ident.destination, detail));
  }

  /** The transfer failed: stop, ABORT the sender with `status` (once it is known), settle with `err`. */
  private end(status: number, err: Error): void {
    this.state = 'failed';
    if (this.timer) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.about) sendAbort(this.host, this.about, this.peer, status, true);
    this.onForget();
    this.settle.fail(err);
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

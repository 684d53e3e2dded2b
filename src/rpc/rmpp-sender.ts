/** The sending side of an RMPP transfer (IBA 13.6; see rpc/rmpp.ts): the window the receiver's
 * ACK NewWindowLast opens, go-back-N retransmission on ACK timeout, total timeout, STOP/ABORT. */
import type { TimerHandle } from '../util/clock.js';
import type { MadAddress } from '../transport/types.js';
import { RmppStatus, RmppType, type RmppHeader } from '../wire/rmpp.js';
import { RmppAbortError, RmppTimeoutError, type MadIdent } from './errors.js';
import { sendAbort, type ResolvedRmppOptions, type RmppHost, type Settle } from './rmpp.js';

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

/** MADs staged for one native port and handed to the addon in one sendMany() call per burst of
 * sends, instead of one send() each: one N-API call and one lock of the addon's send queue for the
 * burst. At 5k nodes under ibsim the main thread spent ~12 % of the discovery in send(), much of
 * it waiting for that lock while the receiver thread held it (scripts/bench/README.md). */
import type { NativeSendRecordLayout, NativeUmadPort } from './native.js';

/** MADs staged before they are handed over without waiting for the end of the burst (the sender
 * thread starts on them while the burst goes on). */
export const STAGE_MADS = 64;

export type SendManyPort = NativeUmadPort & { sendMany(data: Uint8Array, meta: Uint32Array, count: number): number };

export class SendStage {
  private readonly data: Uint8Array;
  private readonly meta: Uint32Array;
  private bytes = 0;
  /** MADs staged and not yet handed over. */
  count = 0;

  constructor(
    readonly port: SendManyPort,
    private readonly r: NativeSendRecordLayout,
  ) {
    this.data = new Uint8Array(STAGE_MADS * r.maxLength);
    this.meta = new Uint32Array(STAGE_MADS * r.stride);
  }

  /** Whether a MAD of this length is staged (a longer one goes through send()). */
  takes(length: number): boolean {
    return length <= this.r.maxLength;
  }

  /** Copy one MAD in (the caller may reuse `mad` at once); true when the stage is full and must be
   * handed over before the next. */
  add(agent: number, mad: Uint8Array, lid: number, qpn: number, qkey: number, sl: number, pkeyIndex: number, timeoutMs: number): boolean {
    const r = this.r;
    const base = this.count * r.stride;
    const m = this.meta;
    this.data.set(mad, this.bytes);
    m[base + r.agent] = agent;
    m[base + r.offset] = this.bytes;
    m[base + r.length] = mad.length;
    m[base + r.lid] = lid;
    m[base + r.qpn] = qpn;
    m[base + r.qkey] = qkey;
    m[base + r.sl] = sl;
    m[base + r.pkeyIndex] = pkeyIndex;
    m[base + r.timeoutMs] = timeoutMs;
    this.bytes += mad.length;
    return ++this.count === STAGE_MADS;
  }

  /** Hand every staged MAD to the addon; returns how many its full queue dropped. The stage is
   * empty afterwards, even when the addon throws. */
  flush(): number {
    const n = this.count;
    if (!n) return 0;
    this.count = 0;
    this.bytes = 0;
    return this.port.sendMany(this.data, this.meta, n);
  }
}

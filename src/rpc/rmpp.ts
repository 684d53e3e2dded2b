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
 *
 * This file: the options, segmentation and reassembly, and what the two sides share; the sides
 * in rpc/rmpp-sender.ts and rpc/rmpp-receiver.ts.
 */
import type { Clock } from '../util/clock.js';
import type { MadAddress } from '../transport/types.js';
import { GSI_QKEY, MadHeaderView, MgmtClass, METHOD_RESPONSE_BIT, MAD_SIZE } from '../wire/mad.js';
import { RMPP_DATA_SIZE, RMPP_HEADER_OFFSET, RMPP_HEADER_SIZE, RmppFlag, RmppHeaderView, RmppType, decodeRmpp, encodeRmpp, rmppData, rmppStopOrAbort, type RmppHeader } from '../wire/rmpp.js';


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
export function controlMad(about: Uint8Array, hdr: RmppHeader, flipMethod = true): Uint8Array {
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

/** How a transfer settles: with its result, or with the error that ended it. */
export type Settle<T> = { ok: (v: T) => void; fail: (e: Error) => void };

export { RMPP_DATA_SIZE, decodeRmpp };

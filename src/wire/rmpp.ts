/**
 * The RMPP header (IBA 13.6.2.1; ib_types.h `ib_rmpp_mad_t`, umad_types.h `umad_rmpp_hdr`): 12 bytes
 * that follow the 24-byte MAD common header in every MAD of an RMPP-capable class (SA, PerfMgt
 * vendor classes...). Pure codec: the segmentation / reassembly protocol lives in rpc/.
 *
 *   byte 0  RMPPVersion
 *   byte 1  RMPPType
 *   byte 2  RRespTime (5 MS bits) | RMPPFlags (3 LS bits: Last, First, Active)
 *   byte 3  RMPPStatus
 *   4..7    Data1: SegmentNumber (DATA, ACK)
 *   8..11   Data2: PayloadLength (DATA), NewWindowLast (ACK)
 */
import { defineLayout, hex, uint, type LayoutValue } from './layout.js';
import { DecodeError, EncodeError } from './errors.js';
import { defineView, type View } from './view.js';

/** Byte offset of the RMPP header inside a MAD. */
export const RMPP_HEADER_OFFSET = 24;
export const RMPP_HEADER_SIZE = 12;
/** Bytes after the common and RMPP headers in one 256-byte MAD (umad_types.h UMAD_LEN_RMPP_DATA). */
export const RMPP_DATA_SIZE = 220;

/** The only RMPP version defined (UMAD_RMPP_VERSION). */
export const RMPP_VERSION = 1;
/** RRespTime value meaning "no time value given". */
export const RMPP_NO_RESP_TIME = 0x1f;

export const RmppType = {
  None: 0,
  Data: 1,
  Ack: 2,
  Stop: 3,
  Abort: 4,
} as const;
export type RmppTypeValue = (typeof RmppType)[keyof typeof RmppType];

/** RMPPFlags bits (the low 3 bits of byte 2). */
export const RmppFlag = {
  Active: 0x01,
  First: 0x02,
  Last: 0x04,
} as const;

/** RMPPStatus values (IBA table 176; ib_types.h IB_RMPP_STATUS_*). */
export const RmppStatus = {
  Success: 0,
  ResourcesExhausted: 1,
  TotalTimeTooLong: 118,
  InconsistentLastAndPayloadLength: 119,
  InconsistentFirstAndSegmentNumber: 120,
  BadRmppType: 121,
  NewWindowLastTooSmall: 122,
  SegmentNumberTooBig: 123,
  IllegalStatus: 124,
  UnsupportedVersion: 125,
  TooManyRetries: 126,
  Unspecified: 127,
} as const;

const TYPE_NAMES: Readonly<Record<number, string>> = { 0: 'None', 1: 'DATA', 2: 'ACK', 3: 'STOP', 4: 'ABORT' };
const STATUS_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(RmppStatus).map(([k, v]) => [v, k]),
);

/**
 * The 12-byte RMPP header. `data1` is the SegmentNumber of DATA and ACK packets; `data2` is the
 * PayloadLength of a DATA packet (first and last segments) or the NewWindowLast of an ACK.
 */
export const RmppHeader = defineLayout('RmppHeader', RMPP_HEADER_SIZE, {
  version: uint(0, 8, { label: 'RMPPVersion' }),
  type: uint(8, 8, { label: 'RMPPType', names: TYPE_NAMES }),
  respTime: uint(16, 5, { label: 'RRespTime' }),
  flags: hex(21, 3, { label: 'RMPPFlags' }),
  status: uint(24, 8, { label: 'RMPPStatus', names: STATUS_NAMES }),
  data1: uint(32, 32, { label: 'SegmentNumber' }),
  data2: uint(64, 32, { label: 'PayloadLength/NewWindowLast' }),
});
export type RmppHeader = LayoutValue<typeof RmppHeader>;
/** A view of the RMPP header: `RmppHeaderView.over(mad, RMPP_HEADER_OFFSET)`. */
export const RmppHeaderView = defineView(RmppHeader);
export type RmppHeaderView = View<typeof RmppHeader.fields>;

/** Read the RMPP header of a MAD (bytes 24..35). Throws only DecodeError. */
export function decodeRmpp(mad: Uint8Array): RmppHeader {
  if (!(mad instanceof Uint8Array)) throw new DecodeError('RmppHeader', '', 0, 'input is not a byte array');
  if (mad.length < RMPP_HEADER_OFFSET + RMPP_HEADER_SIZE) {
    throw new DecodeError('RmppHeader', '', RMPP_HEADER_OFFSET, `a MAD with an RMPP header needs ${RMPP_HEADER_OFFSET + RMPP_HEADER_SIZE} bytes, ${mad.length} available`);
  }
  return RmppHeader.decode(mad, RMPP_HEADER_OFFSET);
}

/** Write the RMPP header into a MAD buffer (bytes 24..35), leaving the rest untouched. */
export function encodeRmpp(hdr: Partial<RmppHeader>, mad: Uint8Array): Uint8Array {
  if (mad.length < RMPP_HEADER_OFFSET + RMPP_HEADER_SIZE) {
    throw new EncodeError('RmppHeader', '', `MAD buffer of ${mad.length} bytes cannot hold the RMPP header at byte ${RMPP_HEADER_OFFSET}`);
  }
  return RmppHeader.encode(hdr, mad, RMPP_HEADER_OFFSET);
}

export function isRmppActive(hdr: Pick<RmppHeader, 'flags'>): boolean {
  return (hdr.flags & RmppFlag.Active) !== 0;
}
export function isRmppFirst(hdr: Pick<RmppHeader, 'flags'>): boolean {
  return (hdr.flags & RmppFlag.First) !== 0;
}
export function isRmppLast(hdr: Pick<RmppHeader, 'flags'>): boolean {
  return (hdr.flags & RmppFlag.Last) !== 0;
}

/** Header of a DATA segment. `payloadLength` belongs in the first and the last segment (0 elsewhere). */
export function rmppData(segment: number, first: boolean, last: boolean, payloadLength: number, respTime: number = RMPP_NO_RESP_TIME): RmppHeader {
  return {
    version: RMPP_VERSION,
    type: RmppType.Data,
    respTime,
    flags: RmppFlag.Active | (first ? RmppFlag.First : 0) | (last ? RmppFlag.Last : 0),
    status: RmppStatus.Success,
    data1: segment,
    data2: payloadLength,
  };
}

/** Header of an ACK for `segment`, opening the window up to `newWindowLast`. */
export function rmppAck(segment: number, newWindowLast: number, respTime: number = RMPP_NO_RESP_TIME): RmppHeader {
  return {
    version: RMPP_VERSION,
    type: RmppType.Ack,
    respTime,
    flags: RmppFlag.Active,
    status: RmppStatus.Success,
    data1: segment,
    data2: newWindowLast,
  };
}

/** Header of a STOP or ABORT carrying `status`. */
export function rmppStopOrAbort(type: typeof RmppType.Stop | typeof RmppType.Abort, status: number): RmppHeader {
  return { version: RMPP_VERSION, type, respTime: RMPP_NO_RESP_TIME, flags: RmppFlag.Active, status, data1: 0, data2: 0 };
}

/**
 * Subnet Administration (class 0x03) wire format: the SA MAD (common header, RMPP header, SA
 * header, 200 data bytes), SA attribute IDs and status codes, and every SA record as one
 * declarative layout in today's wire format (ib_types.h `ib_*_record_t`; IBA 15.2.5).
 *
 * Record layouts are the record's own size (NodeRecord 108 bytes, PortInfoRecord 68, ...). In a
 * response the records sit `AttributeOffset * 8` bytes apart (`recordStride`): the size rounded
 * up to 8 bytes, the pad zero.
 *
 * Component masks derive from the tables (see layout.ts): every field, reserved included, is a
 * component in table order; embedded SMA attributes contribute their own components in place;
 * `cm: n` splits a field (PathRecord.ServiceID, ServiceRecord.ServiceData arrays, the GUIDs of a
 * GUIDInfoRecord). test/wire-sa.test.ts checks every `IB_*_COMPMASK_*` constant of ib_types.h.
 */
import { bytes, defineLayout, reserved, struct, u64, uint, type AnyLayout, type DeepPartial, type Layout, type LayoutValue } from './layout.js';
import { DecodeError, EncodeError } from './errors.js';
import { defineView, type View } from './view.js';
import { MAD_SIZE, MadHeader, MgmtClass, Method } from './mad.js';
import { RMPP_HEADER_OFFSET, RmppFlag, RmppHeader, RmppType, RMPP_VERSION, RMPP_NO_RESP_TIME } from './rmpp.js';
import { SA_CLASS_VERSION, SA_DATA_OFFSET, SA_DATA_SIZE, SA_HEADER_OFFSET, SA_HEADER_SIZE } from './sa-constants.js';

export * from './sa-constants.js';
export * from './sa-records.js';

// ---------- helpers ----------

/** Bytes between consecutive records in an SA response: the record size rounded up to 8. */
export function recordStride(layout: AnyLayout): number {
  return Math.ceil(layout.byteLength / 8) * 8;
}
/** AttributeOffset (in 8-byte words) for records of `layout`. */
export function attributeOffsetOf(layout: AnyLayout): number {
  return recordStride(layout) / 8;
}

// ---------- the SA MAD ----------

/** The SA header that follows the RMPP header (and opens every RMPP segment). */
export const SaHeader = defineLayout('SaHeader', SA_HEADER_SIZE, {
  smKey: u64(0, 64, { label: 'SM_Key' }),
  attributeOffset: uint(64, 16, { label: 'AttributeOffset' }),
  reserved1: reserved(80, 16),
  componentMask: u64(96, 64, { label: 'ComponentMask' }),
});
export type SaHeader = LayoutValue<typeof SaHeader>;
/** A view of the SA header: `SaHeaderView.over(mad, SA_HEADER_OFFSET)`. */
export const SaHeaderView = defineView(SaHeader);
export type SaHeaderView = View<typeof SaHeader.fields>;

/** The fixed 56 bytes of every SA MAD: common header, RMPP header, SA header. */
export const SaMadHeader = defineLayout('SaMadHeader', SA_DATA_OFFSET, {
  header: struct(0, MadHeader),
  rmpp: struct(RMPP_HEADER_OFFSET * 8, RmppHeader),
  sa: struct(SA_HEADER_OFFSET * 8, SaHeader),
});
export type SaMadHeader = LayoutValue<typeof SaMadHeader>;

/** One 256-byte SA MAD. */
export const SaMad = defineLayout('SaMad', MAD_SIZE, {
  header: struct(0, MadHeader),
  rmpp: struct(RMPP_HEADER_OFFSET * 8, RmppHeader),
  sa: struct(SA_HEADER_OFFSET * 8, SaHeader),
  data: bytes(SA_DATA_OFFSET * 8, SA_DATA_SIZE, { label: 'SAData' }),
});
export type SaMad = LayoutValue<typeof SaMad>;

/** A decoded SA message: the fixed headers and the data area (200 bytes for one MAD, any length once RMPP-reassembled). */
export interface SaMessage extends SaMadHeader {
  readonly data: Uint8Array;
}

/** Records of one layout for `encodeSaMad`. */
export interface SaRecords<V> {
  readonly layout: Layout<V>;
  readonly records: readonly DeepPartial<V>[];
}

/** What `encodeSaMad` takes: the headers (any omitted field zero; see defaults there). */
export interface SaMadInit {
  readonly header: DeepPartial<MadHeader>;
  readonly rmpp?: DeepPartial<RmppHeader>;
  readonly sa?: DeepPartial<SaHeader>;
}

/**
 * Encode an SA message. `payload` is the data area: raw bytes, or records of one layout placed
 * `recordStride` bytes apart (AttributeOffset then defaults to that stride). The result is one
 * 256-byte MAD when the data fits 200 bytes (zero padded), otherwise the whole unsegmented message
 * (56 + data bytes) for the RMPP sender to cut. Defaults: baseVersion 1, mgmtClass SubnAdm,
 * classVersion 2. Throws EncodeError.
 */
export function encodeSaMad<V>(init: SaMadInit, payload?: Uint8Array | SaRecords<V>): Uint8Array {
  let data: Uint8Array;
  let attrOffset: number | undefined;
  if (payload === undefined) data = new Uint8Array(0);
  else if (payload instanceof Uint8Array) data = payload;
  else {
    const stride = recordStride(payload.layout);
    data = new Uint8Array(stride * payload.records.length);
    payload.records.forEach((r, i) => payload.layout.encode(r, data, i * stride));
    attrOffset = stride / 8;
  }
  const size = Math.max(MAD_SIZE, SA_DATA_OFFSET + data.length);
  const buf = new Uint8Array(size);
  const header: DeepPartial<MadHeader> = { baseVersion: 1, mgmtClass: MgmtClass.SubnAdm, classVersion: SA_CLASS_VERSION, ...init.header };
  const sa: DeepPartial<SaHeader> = { ...(attrOffset !== undefined ? { attributeOffset: attrOffset } : {}), ...init.sa };
  SaMadHeader.encode({ header, rmpp: init.rmpp ?? {}, sa }, buf, 0);
  buf.set(data, SA_DATA_OFFSET);
  return buf;
}

/** Decode an SA message of at least 56 bytes (a MAD, or an RMPP-reassembled message). Throws only DecodeError. */
export function decodeSaMad(buf: Uint8Array): SaMessage {
  if (!(buf instanceof Uint8Array)) throw new DecodeError('SaMad', '', 0, 'input is not a byte array');
  if (buf.length < SA_DATA_OFFSET) {
    throw new DecodeError('SaMad', '', 0, `an SA MAD needs at least ${SA_DATA_OFFSET} bytes (headers), ${buf.length} available`);
  }
  const h = SaMadHeader.decode(buf, 0);
  // A literal, not `{ ...h, data }`: V8 11 (Node 20) keeps every object made by a spread that adds
  // a property alive through two scavenges, so each SA request's message reached the old space
  // (issue #29: most of the old-space garbage behind the SA flood's peak RSS; test/sa-promotion.test.ts).
  return { header: h.header, rmpp: h.rmpp, sa: h.sa, data: buf.slice(SA_DATA_OFFSET) };
}

/**
 * Number of records in the data of an SA response, for records of `layout`:
 * GetResp (and Get, Set, Delete, DeleteResp, Report) carries exactly one; a single-segment RMPP message (First and Last set) says its length
 * in PayloadLength (SA header included); otherwise (a reassembled message) the data length counts.
 * Throws DecodeError when AttributeOffset is too small for the record or PayloadLength is inconsistent.
 */
export function saRecordCount(msg: SaMessage, layout: AnyLayout): number {
  const stride = saStride(msg, layout);
  if (!TABLE_METHODS.has(msg.header.method)) return msg.data.length >= layout.byteLength ? 1 : 0;
  let avail = msg.data.length;
  const r = msg.rmpp;
  const single = RmppFlag.First | RmppFlag.Last | RmppFlag.Active;
  if (r.type === RmppType.Data && (r.flags & single) === single) {
    if (r.data2 < SA_HEADER_SIZE || r.data2 - SA_HEADER_SIZE > msg.data.length) {
      throw new DecodeError('SaMad', 'rmpp.data2', RMPP_HEADER_OFFSET + 8, `PayloadLength ${r.data2} inconsistent with ${msg.data.length} data bytes`);
    }
    avail = r.data2 - SA_HEADER_SIZE;
  }
  return avail < layout.byteLength ? 0 : Math.floor((avail - layout.byteLength) / stride) + 1;
}
const TABLE_METHODS: ReadonlySet<number> = new Set([Method.GetTable, Method.GetTableResp, Method.GetTraceTable, Method.GetMulti, Method.GetMultiResp]);

function saStride(msg: SaMessage, layout: AnyLayout): number {
  const offset = msg.sa.attributeOffset;
  const stride = offset === 0 ? recordStride(layout) : offset * 8;
  if (stride < layout.byteLength) {
    throw new DecodeError('SaMad', 'sa.attributeOffset', SA_HEADER_OFFSET + 8, `AttributeOffset ${offset} (${stride} bytes) is shorter than a ${layout.name} (${layout.byteLength} bytes)`);
  }
  return stride;
}

/** Decode the records of an SA message (count from `saRecordCount` unless given). Throws only DecodeError. */
export function decodeSaRecords<V>(msg: SaMessage, layout: Layout<V>, count?: number): V[] {
  const stride = saStride(msg, layout);
  const n = count ?? saRecordCount(msg, layout);
  if (!Number.isInteger(n) || n < 0) throw new DecodeError('SaMad', 'data', SA_DATA_OFFSET, `invalid record count ${String(n)}`);
  const out: V[] = [];
  for (let i = 0; i < n; i++) {
    const off = i * stride;
    if (off + layout.byteLength > msg.data.length) {
      throw new DecodeError(layout.name, '', SA_DATA_OFFSET + off, `record ${i} of ${n} extends past the ${msg.data.length} data bytes`);
    }
    out.push(layout.decode(msg.data, off));
  }
  return out;
}

/**
 * RMPP header of a response sent as one RMPP message of `dataLength` data bytes whose sender will
 * not segment further (fits one MAD): DATA, Active|First|Last, segment 1, PayloadLength = SA header + data.
 * For longer messages the RMPP sender in rpc/ sets these per segment.
 */
export function saSingleSegmentRmpp(dataLength: number, respTime: number = RMPP_NO_RESP_TIME): RmppHeader {
  if (dataLength < 0 || dataLength > SA_DATA_SIZE) {
    throw new EncodeError('RmppHeader', 'data2', `${dataLength} data bytes do not fit one SA MAD (${SA_DATA_SIZE})`);
  }
  return {
    version: RMPP_VERSION,
    type: RmppType.Data,
    respTime,
    flags: RmppFlag.Active | RmppFlag.First | RmppFlag.Last,
    status: 0,
    data1: 1,
    data2: SA_HEADER_SIZE + dataLength,
  };
}

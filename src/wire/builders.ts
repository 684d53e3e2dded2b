/**
 * Pure builders of the MADs ibsm sends, and the header accessors every layer needs, written once
 * over the views of src/wire (no byte offset restated): SMP Get/Set (LID-routed and directed
 * route), the response to a request with a status (SMP and SA), TrapRepress, SA requests, and the
 * TID helpers. Each returns new bytes (or writes a buffer it is handed) and does no I/O.
 */
import { allocBytes, copyBytes } from '../util/slab.js';
import { EncodeError } from './errors.js';
import { readBig, readU32, writeBig, writeBits } from './bits.js';
import type { AnyLayout } from './fields.js';
import { MAD_SIZE, MadHeader, MadHeaderView, METHOD_RESPONSE_BIT, Method, MgmtClass, PERMISSIVE_LID, SmpDr, SmpDrView, SmpLid, SmpLidView, SMP_DATA_OFFSET, SMP_DATA_SIZE } from './mad.js';
import { RmppHeader } from './rmpp.js';
import { SA_CLASS_VERSION, SA_DATA_OFFSET, SA_DATA_SIZE, SA_HEADER_OFFSET, SaHeader, SaHeaderView, encodeSaMad, saSingleSegmentRmpp } from './sa.js';

// ---------- TID ----------

/** Byte offset of the 64-bit TransactionID, from the MadHeader table. */
const TID_OFFSET = MadHeader.fields.tid.bit >>> 3;

/** The full 64-bit TID of a MAD. */
export function tidOf(mad: Uint8Array): bigint {
  return readBig(mad, TID_OFFSET * 8, 64);
}
export function setTid(mad: Uint8Array, tid: bigint): void {
  writeBig(mad, TID_OFFSET * 8, 64, tid & 0xffffffffffffffffn);
}
/** The high 32 bits of the TID (what the kernel/umad and ibsim put there: the agent id). No BigInt. */
export function tidHigh(mad: Uint8Array): number {
  return readU32(mad, TID_OFFSET);
}
/** The low 32 bits of the TID (the requester's own part). No BigInt. */
export function tidLow(mad: Uint8Array): number {
  return readU32(mad, TID_OFFSET + 4);
}
function put32(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = (v >>> 16) & 0xff;
  b[o + 2] = (v >>> 8) & 0xff;
  b[o + 3] = v & 0xff;
}
/** Set the high 32 bits of the TID, keeping the low 32 (the agent id a kernel writes into a request). */
export function setTidHigh(mad: Uint8Array, high: number): void {
  put32(mad, TID_OFFSET, high >>> 0);
}
/** Set the low 32 bits of the TID, keeping the high 32. */
export function setTidLow(mad: Uint8Array, low: number): void {
  put32(mad, TID_OFFSET + 4, low >>> 0);
}
/** Echo the full TID of `from` into `to` (a response carries its request's TID). */
export function copyTid(from: Uint8Array, to: Uint8Array): void {
  to.set(from.subarray(TID_OFFSET, TID_OFFSET + 8), TID_OFFSET);
}

// ---------- header reads ----------

/** The status of a MAD: for a directed-route SMP the 15-bit status (without the D bit), else the 16-bit field. */
export function madStatus(mad: Uint8Array): number {
  return mad[1] === MgmtClass.SubnDirected ? SmpDrView.over(mad).status : MadHeaderView.over(mad).status;
}
/** The M_Key of an SMP (either routing). */
export function readMkey(smp: Uint8Array): bigint {
  return SmpLidView.over(smp).mkey;
}

/** The response method of a request method (IBA 13.4.5; SA 15.2.2). */
export function responseMethod(method: number): number {
  switch (method) {
    case Method.Get:
    case Method.Set:
      return Method.GetResp;
    case Method.GetTable:
    case Method.GetTraceTable:
      return Method.GetTableResp;
    case Method.GetMulti:
      return Method.GetMultiResp;
    case Method.Delete:
      return Method.DeleteResp;
    case Method.Report:
      return Method.ReportResp;
    default:
      return (method | METHOD_RESPONSE_BIT) & 0xff;
  }
}

// ---------- SMPs ----------

/** A directed route has at most this many hops (InitialPath[1..63]). */
export const MAX_DR_HOPS = 63;

export interface SmpInit {
  /** Method.Get, Method.Set, ... */
  method: number;
  attrId: number;
  attrMod?: number;
  /** SMP data (at most 64 bytes), e.g. the attribute to Set. */
  data?: Uint8Array;
  mkey?: bigint;
  tid?: bigint;
}

function checkSmp(name: string, init: SmpInit): void {
  const { attrId, attrMod = 0, data } = init;
  if (!(attrId >= 0 && attrId <= 0xffff && Number.isInteger(attrId))) throw new EncodeError(name, 'attrId', `${attrId} is not a 16-bit value`);
  if (!(attrMod >= 0 && attrMod <= 0xffffffff && Number.isInteger(attrMod))) throw new EncodeError(name, 'attrMod', `${attrMod} is not a 32-bit value`);
  if (data && data.length > SMP_DATA_SIZE) throw new EncodeError(name, 'data', `SMP data is at most ${SMP_DATA_SIZE} bytes, got ${data.length}`);
}

/** The fields both SMP routings share, through a view of either (the header and M_Key are one table). */
function writeSmp(b: Uint8Array, v: { baseVersion: number; mgmtClass: number; classVersion: number; method: number; attrId: number; attrMod: number; mkey: bigint; tid: bigint }, mgmtClass: number, init: SmpInit): void {
  v.baseVersion = 1;
  v.mgmtClass = mgmtClass;
  v.classVersion = 1;
  v.method = init.method;
  v.attrId = init.attrId;
  v.attrMod = init.attrMod ?? 0;
  if (init.mkey) v.mkey = init.mkey;
  if (init.tid) v.tid = init.tid;
  if (init.data) b.set(init.data, SMP_DATA_OFFSET);
}

/** A LID-routed SMP (class 0x01). Throws EncodeError. */
export function smpLid(init: SmpInit): Uint8Array {
  checkSmp(SmpLid.name, init);
  const b = allocBytes(MAD_SIZE);
  writeSmp(b, SmpLidView.over(b), MgmtClass.SubnLid, init);
  return b;
}

/**
 * A directed-route SMP (class 0x81) from the local port. `path` lists the egress port of each hop
 * (`[]` is the local port; `[1, 3]` is InitialPath 0,1,3); DrSLID and DrDLID are permissive (the
 * whole route is directed). Throws EncodeError.
 */
export function smpDr(path: readonly number[], init: SmpInit, into?: Uint8Array): Uint8Array {
  if (path.length > MAX_DR_HOPS) throw new EncodeError(SmpDr.name, 'initialPath', `a directed route has at most ${MAX_DR_HOPS} hops, got ${path.length}`);
  checkSmp(SmpDr.name, init);
  // `into`: a MAD buffer to reuse (cleared first), instead of a new one
  if (into && into.length !== MAD_SIZE) throw new EncodeError(SmpDr.name, '', `a MAD buffer to reuse must be ${MAD_SIZE} bytes, got ${into.length}`);
  const b = into ? into.fill(0) : allocBytes(MAD_SIZE);
  const v = SmpDrView.over(b);
  for (let i = 0; i < path.length; i++) {
    const port = path[i]!;
    if (!Number.isInteger(port) || port < 0 || port > 255) throw new EncodeError(SmpDr.name, `initialPath[${i + 1}]`, `port ${port} is not in 0..255`);
    v.setAt('initialPath', i + 1, port);
  }
  v.hopCount = path.length;
  writeSmp(b, v, MgmtClass.SubnDirected, init);
  v.drSlid = PERMISSIVE_LID;
  v.drDlid = PERMISSIVE_LID;
  return b;
}

/** SubnGet / SubnSet conveniences. */
export function smpGetLid(attrId: number, attrMod = 0, o: Omit<SmpInit, 'method' | 'attrId' | 'attrMod'> = {}): Uint8Array {
  return smpLid({ ...o, method: Method.Get, attrId, attrMod });
}
export function smpSetLid(attrId: number, attrMod: number, data: Uint8Array, o: Omit<SmpInit, 'method' | 'attrId' | 'attrMod' | 'data'> = {}): Uint8Array {
  return smpLid({ ...o, method: Method.Set, attrId, attrMod, data });
}
export function smpGetDr(path: readonly number[], attrId: number, attrMod = 0, o: Omit<SmpInit, 'method' | 'attrId' | 'attrMod'> = {}): Uint8Array {
  return smpDr(path, { ...o, method: Method.Get, attrId, attrMod });
}
export function smpSetDr(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, o: Omit<SmpInit, 'method' | 'attrId' | 'attrMod' | 'data'> = {}): Uint8Array {
  return smpDr(path, { ...o, method: Method.Set, attrId, attrMod, data });
}

/** The SMP data area of an SMP (a view of the bytes, not a copy). */
export function smpData(smp: Uint8Array): Uint8Array {
  return smp.subarray(SMP_DATA_OFFSET, SMP_DATA_OFFSET + SMP_DATA_SIZE);
}

/**
 * The GetResp an SMA (or the SM, for SMInfo) sends for an SMP request: a copy of the request with
 * method GetResp and `status`; a directed-route response also gets the D bit (it travels the
 * return path) and keeps every path field as the request had it (IBA 14.2.2: hop count, hop
 * pointer, DrSLID/DrDLID and both paths; the hop pointer is moved by whoever forwards it). The
 * data area is left as the request had it, for the responder to fill.
 */
export function smpResponse(req: Uint8Array, status = 0): Uint8Array {
  const r = copyBytes(req);
  if (r[1] === MgmtClass.SubnDirected) {
    const v = SmpDrView.over(r);
    v.method = Method.GetResp;
    v.direction = 1;
    v.status = status & 0x7fff;
  } else {
    const v = MadHeaderView.over(r);
    v.method = Method.GetResp;
    v.status = status;
  }
  return r;
}

/** The TrapRepress answering a trap: the trap echoed (TID, Notice and all) with method TrapRepress (IBA 14.2.5.1). */
export function trapRepress(trap: Uint8Array): Uint8Array {
  const r = trap.slice();
  MadHeaderView.over(r).method = Method.TrapRepress;
  return r;
}

// ---------- SA ----------

export interface SaRequestInit {
  method: number;
  attrId: number;
  attrMod?: number;
  componentMask?: bigint;
  smKey?: bigint;
  /** The encoded query record (the data area; at most 200 bytes are sent). */
  record?: Uint8Array;
  /** Length of the record, for GetMulti's PayloadLength (default: the record's length). */
  recordLength?: number;
  tid?: bigint;
}

/** An SA request MAD (256 bytes). A GetMulti request carries its record as a single-segment RMPP
 * message (Active|First|Last, PayloadLength of the record); other methods no RMPP header. */
export function saRequest(init: SaRequestInit): Uint8Array {
  const record = init.record ?? new Uint8Array(0);
  const data = record.length > SA_DATA_SIZE ? record.subarray(0, SA_DATA_SIZE) : record;
  return encodeSaMad(
    {
      header: { method: init.method, attrId: init.attrId, attrMod: init.attrMod ?? 0, ...(init.tid !== undefined ? { tid: init.tid } : {}) },
      sa: { smKey: init.smKey ?? 0n, componentMask: init.componentMask ?? 0n },
      ...(init.method === Method.GetMulti ? { rmpp: saSingleSegmentRmpp(init.recordLength ?? data.length) } : {}),
    },
    data,
  );
}

/** The SA methods answered with a table (GetTableResp / GetMultiResp, RMPP). */
export const SA_TABLE_METHODS: ReadonlySet<number> = new Set([Method.GetTable, Method.GetTraceTable, Method.GetMulti]);

/** Zero the reserved fields of `layout` at byte `offset` (what encoding a decoded value does to them). */
function clearReserved(layout: AnyLayout, mad: Uint8Array, offset: number): void {
  for (const f of Object.values(layout.fields)) {
    if (f.kind !== 'reserved') continue;
    if (f.width <= 32) writeBits(mad, offset * 8 + f.bit, f.width, 0);
    else writeBig(mad, offset * 8 + f.bit, f.width, 0n);
  }
}

const RMPP_OFFSET = SA_HEADER_OFFSET - RmppHeader.byteLength;
const SINGLE_EMPTY_SEGMENT = RmppHeader.encode(saSingleSegmentRmpp(0));
const SM_KEY_END = SA_HEADER_OFFSET + (SaHeader.fields.smKey.width >>> 3);

/**
 * The status response of the SA to a request (an error, or BUSY): the request echoed (at most one
 * MAD; TID, attribute, modifier and component mask included) with the response method and
 * `status`. When the request holds the SA headers: the SM_Key is not echoed (zero); a table method
 * gets a single empty RMPP segment and no data, another method no RMPP header and `record` (or
 * the request's data when none is given). Written into `out` (zeroed, at least 256 bytes) when
 * given, else a new buffer.
 */
export function saStatusResponse(req: Uint8Array, status: number, record?: Uint8Array, out?: Uint8Array): Uint8Array {
  const mad = out ?? new Uint8Array(MAD_SIZE);
  mad.set(req.subarray(0, Math.min(req.length, MAD_SIZE)));
  const h = MadHeaderView.over(mad);
  const table = SA_TABLE_METHODS.has(h.method);
  h.method = responseMethod(h.method);
  h.status = status;
  clearReserved(MadHeader, mad, 0);
  if (mad.length >= SA_DATA_OFFSET && req.length >= SA_DATA_OFFSET) {
    mad.fill(0, SA_HEADER_OFFSET, SM_KEY_END);
    clearReserved(SaHeader, mad, SA_HEADER_OFFSET);
    if (table) mad.set(SINGLE_EMPTY_SEGMENT, RMPP_OFFSET);
    else mad.fill(0, RMPP_OFFSET, SA_HEADER_OFFSET);
    if (table) mad.fill(0, SA_DATA_OFFSET);
    else if (record) {
      mad.fill(0, SA_DATA_OFFSET);
      mad.set(record.subarray(0, SA_DATA_SIZE), SA_DATA_OFFSET);
    }
  }
  return mad;
}

/** The SA header of an SA MAD, as a view (`componentMask`, `smKey`, `attributeOffset`). */
export function saHeaderOf(mad: Uint8Array): ReturnType<typeof SaHeaderView.over> {
  return SaHeaderView.over(mad, SA_HEADER_OFFSET);
}

export { SA_CLASS_VERSION };

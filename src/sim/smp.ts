/**
 * SMP header access for the simulated fabric and SMA: field accessors derived from the framing
 * layouts of src/wire (offsets are never restated here), directed-route paths, response building
 * and the TID/M_Key pokes of the endpoint host and trap origination.
 */
import { readBig, readBits, writeBig, writeBits, type FieldSpec, type AnyLayout } from '../wire/layout.js';
import { Method, SmpDr, SmpLid, MgmtClass } from '../wire/mad.js';

function field(layout: AnyLayout, name: string): FieldSpec {
  const f = layout.fields[name];
  if (!f) throw new Error(`layout ${layout.name} has no field ${name}`);
  return f;
}
/** Accessors for the SMP header fields the fabric and the SMA touch on every MAD. */
export const Smp = {
  mgmtClass: field(SmpDr, 'mgmtClass'),
  classVersion: field(SmpDr, 'classVersion'),
  method: field(SmpDr, 'method'),
  direction: field(SmpDr, 'direction'),
  drStatus: field(SmpDr, 'status'),
  lidStatus: field(SmpLid, 'status'),
  hopPointer: field(SmpDr, 'hopPointer'),
  hopCount: field(SmpDr, 'hopCount'),
  tid: field(SmpDr, 'tid'),
  attrId: field(SmpDr, 'attrId'),
  attrMod: field(SmpDr, 'attrMod'),
  mkey: field(SmpDr, 'mkey'),
  drSlid: field(SmpDr, 'drSlid'),
  drDlid: field(SmpDr, 'drDlid'),
  initialPath: field(SmpDr, 'initialPath'),
  returnPath: field(SmpDr, 'returnPath'),
} as const;

export function getF(buf: Uint8Array, f: FieldSpec): number {
  return readBits(buf, f.bit, f.width);
}
export function setF(buf: Uint8Array, f: FieldSpec, v: number): void {
  writeBits(buf, f.bit, f.width, v);
}
export function getTid(buf: Uint8Array): bigint {
  return readBig(buf, Smp.tid.bit, 64);
}
export function setTid(buf: Uint8Array, tid: bigint): void {
  writeBig(buf, Smp.tid.bit, 64, tid);
}
function pathField(f: FieldSpec): { bit: number; stride: number } {
  if (f.kind !== 'array') throw new Error('path field is not an array');
  return { bit: f.elem.bit, stride: f.stride };
}
const IP = pathField(Smp.initialPath);
const RP = pathField(Smp.returnPath);
export function initialPathAt(buf: Uint8Array, i: number): number {
  return readBits(buf, IP.bit + i * IP.stride, 8);
}
export function returnPathAt(buf: Uint8Array, i: number): number {
  return readBits(buf, RP.bit + i * RP.stride, 8);
}
export function setReturnPathAt(buf: Uint8Array, i: number, port: number): void {
  writeBits(buf, RP.bit + i * RP.stride, 8, port);
}

/** Build a GetResp from a request: method, D bit (DR), status. The data area is left as is. */
export function makeResponse(req: Uint8Array, status: number): Uint8Array {
  const r = req.slice(0, Math.max(req.length, 256));
  setF(r, Smp.method, Method.GetResp);
  if (getF(r, Smp.mgmtClass) === MgmtClass.SubnDirected) {
    setF(r, Smp.direction, 1);
    setF(r, Smp.drStatus, status & 0x7fff);
  } else {
    setF(r, Smp.lidStatus, status);
  }
  return r;
}

/** Put an agent id into the high 32 bits of a TID (as the kernel MAD layer does for requests). */
export function setTidHigh(buf: Uint8Array, tid: bigint, high: number): void {
  setTid(buf, (BigInt(high >>> 0) << 32n) | (tid & 0xffffffffn));
}

export function readMkey(buf: Uint8Array): bigint {
  return readBig(buf, Smp.mkey.bit, Smp.mkey.width);
}

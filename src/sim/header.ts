/** The MAD header fields the simulated fabric reads and writes on every MAD, as byte offsets
 * derived from the field tables of wire/mad.ts (MadHeader, SmpDr): no view object per MAD on the
 * hot path (a view is an allocation each time; the fabric reads a few fields of every MAD several
 * times on its way). Each offset is checked when this module loads: a field that moved off a byte
 * boundary or changed its width is an error here, not a silent misread. */
import { intPlacement } from '../wire/codegen.js';
import { MadHeader, SmpDr } from '../wire/mad.js';
import { LayoutError } from '../wire/errors.js';

function byteField(f: { bit: number; width: number }, name: string, bytes: number): number {
  const p = intPlacement(f);
  if (!p || !p.whole || p.span !== bytes) throw new LayoutError('sim header', `${name} is not a whole ${bytes}-byte field`);
  return p.byte;
}

const H = MadHeader.fields;
const D = SmpDr.fields;
export const MGMT_CLASS = byteField(H.mgmtClass, 'mgmtClass', 1);
export const CLASS_VERSION = byteField(H.classVersion, 'classVersion', 1);
export const METHOD = byteField(H.method, 'method', 1);
const ATTR_ID = byteField(H.attrId, 'attrId', 2);
const ATTR_MOD = byteField(H.attrMod, 'attrMod', 4);
const HOP_POINTER = byteField(D.hopPointer, 'hopPointer', 1);
const HOP_COUNT = byteField(D.hopCount, 'hopCount', 1);
const DR_SLID = byteField(D.drSlid, 'drSlid', 2);
const DR_DLID = byteField(D.drDlid, 'drDlid', 2);
const DIRECTION = intPlacement(D.direction)!;
if (DIRECTION.span !== 1 || DIRECTION.mask !== 1) throw new LayoutError('sim header', 'direction is not one bit');

export const attrIdOf = (b: Uint8Array): number => (b[ATTR_ID]! << 8) | b[ATTR_ID + 1]!;
export const attrModOf = (b: Uint8Array): number => ((b[ATTR_MOD]! << 24) | (b[ATTR_MOD + 1]! << 16) | (b[ATTR_MOD + 2]! << 8) | b[ATTR_MOD + 3]!) >>> 0;
export const hopPointerOf = (b: Uint8Array): number => b[HOP_POINTER]!;
export const setHopPointer = (b: Uint8Array, v: number): void => {
  b[HOP_POINTER] = v;
};
export const hopCountOf = (b: Uint8Array): number => b[HOP_COUNT]!;
export const directionOf = (b: Uint8Array): number => (b[DIRECTION.byte]! >>> DIRECTION.shift) & 1;
export const drSlidOf = (b: Uint8Array): number => (b[DR_SLID]! << 8) | b[DR_SLID + 1]!;
export const drDlidOf = (b: Uint8Array): number => (b[DR_DLID]! << 8) | b[DR_DLID + 1]!;

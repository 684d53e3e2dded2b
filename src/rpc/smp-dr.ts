/**
 * Directed-route SMPs from the local port, built for MadRpc on every discovery Get and programming
 * Set: a copy of one template MAD (encoded once by wire/builders.smpDr, so the fixed
 * fields — versions, class, permissive DrSLID/DrDLID — come from the generic encoder) and the
 * fields that vary written at byte offsets derived from the SmpDr field table. Whatever is out of
 * the ordinary (a value out of range, a path too long, a buffer of the wrong size) goes to the
 * generic encoder, which throws its EncodeError: the bytes and the errors are smpDr's.
 */
import { MAX_DR_HOPS, smpDr } from '../wire/builders.js';
import { MAD_SIZE, SmpDr, SMP_DATA_OFFSET, SMP_DATA_SIZE } from '../wire/mad.js';
import { LayoutError } from '../wire/errors.js';

/** The byte offset of a byte-aligned field of `bits` bits (the table is checked at load). */
function byteOffset(name: keyof typeof SmpDr.fields, bits: number): number {
  const f = SmpDr.fields[name];
  const width = f.kind === 'array' ? f.elem.width : f.width;
  if (f.bit % 8 !== 0 || width !== bits || (f.kind === 'array' && f.stride !== bits)) throw new LayoutError('SmpDr', `${name} is no longer a byte-aligned ${bits}-bit field (rpc/smp-dr reads it as one)`);
  return f.bit >>> 3;
}
const METHOD = byteOffset('method', 8);
const ATTR_ID = byteOffset('attrId', 16);
const ATTR_MOD = byteOffset('attrMod', 32);
const HOP_COUNT = byteOffset('hopCount', 8);
const MKEY = byteOffset('mkey', 64);
const INITIAL_PATH = byteOffset('initialPath', 8);
const U64_MAX = 0xffff_ffff_ffff_ffffn;

/** Every DR SMP's fixed bytes (method, attribute, modifier, path and M_Key zero). */
const TEMPLATE = smpDr([], { method: 0, attrId: 0, attrMod: 0 });

/**
 * A directed-route SMP: the bytes smpDr(path, { method, attrId, attrMod, data, mkey }, into)
 * returns, into `into` (256 bytes, overwritten) or a new buffer. Throws EncodeError as smpDr does.
 */
export function buildSmpDr(method: number, path: readonly number[], attrId: number, attrMod: number, data: Uint8Array | undefined, mkey: bigint, into?: Uint8Array): Uint8Array {
  const n = path.length;
  if (
    n > MAX_DR_HOPS ||
    (method & 0xff) !== method ||
    (attrId & 0xffff) !== attrId ||
    attrMod >>> 0 !== attrMod ||
    (data !== undefined && data.length > SMP_DATA_SIZE) ||
    (into !== undefined && into.length !== MAD_SIZE) ||
    mkey < 0n ||
    mkey > U64_MAX
  ) {
    return generic(method, path, attrId, attrMod, data, mkey, into);
  }
  const b = into ?? new Uint8Array(MAD_SIZE);
  b.set(TEMPLATE);
  for (let i = 0; i < n; i++) {
    const port = path[i]!;
    if ((port & 0xff) !== port) return generic(method, path, attrId, attrMod, data, mkey, into);
    b[INITIAL_PATH + i + 1] = port;
  }
  b[METHOD] = method;
  b[ATTR_ID] = attrId >>> 8;
  b[ATTR_ID + 1] = attrId & 0xff;
  b[ATTR_MOD] = attrMod >>> 24;
  b[ATTR_MOD + 1] = (attrMod >>> 16) & 0xff;
  b[ATTR_MOD + 2] = (attrMod >>> 8) & 0xff;
  b[ATTR_MOD + 3] = attrMod & 0xff;
  b[HOP_COUNT] = n;
  if (mkey !== 0n) {
    const hi = Number(mkey >> 32n);
    const lo = Number(mkey & 0xffff_ffffn);
    for (let i = 0; i < 4; i++) {
      b[MKEY + i] = (hi >>> (24 - 8 * i)) & 0xff;
      b[MKEY + 4 + i] = (lo >>> (24 - 8 * i)) & 0xff;
    }
  }
  if (data !== undefined) b.set(data, SMP_DATA_OFFSET);
  return b;
}

function generic(method: number, path: readonly number[], attrId: number, attrMod: number, data: Uint8Array | undefined, mkey: bigint, into: Uint8Array | undefined): Uint8Array {
  return smpDr(path, { method, attrId, attrMod, ...(data ? { data } : {}), mkey }, into);
}

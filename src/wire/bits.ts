/** Bit-level access to big-endian MAD bytes: the primitives every codec and view reads and writes with.
 * Bit numbering follows the IBA spec: bit 0 is the most significant bit of byte 0. */
export const POW2: number[] = Array.from({ length: 54 }, (_, i) => 2 ** i);

/** Read an unsigned field of up to 32 bits at absolute bit position `pos`. */
export function readBits(b: Uint8Array, pos: number, width: number): number {
  const first = pos >>> 3;
  const end = pos + width;
  if ((pos & 7) === 0 && (width & 7) === 0) {
    let v = 0;
    for (let i = first; i < end >>> 3; i++) v = v * 256 + b[i]!;
    return v;
  }
  const last = (end + 7) >>> 3;
  let v = 0;
  for (let i = first; i < last; i++) v = v * 256 + b[i]!;
  const shift = last * 8 - end;
  return Math.floor(v / POW2[shift]!) % POW2[width]!;
}

/** Write an unsigned field of up to 32 bits at absolute bit position `pos`. */
export function writeBits(b: Uint8Array, pos: number, width: number, value: number): void {
  const first = pos >>> 3;
  const end = pos + width;
  if ((pos & 7) === 0 && (width & 7) === 0) {
    let v = value;
    for (let i = (end >>> 3) - 1; i >= first; i--) {
      b[i] = v & 0xff;
      v = Math.floor(v / 256);
    }
    return;
  }
  const last = (end + 7) >>> 3;
  const shift = last * 8 - end;
  let cur = 0;
  for (let i = first; i < last; i++) cur = cur * 256 + b[i]!;
  // clear then set, in float arithmetic (the span is at most 40 bits)
  const kept = cur - (Math.floor(cur / POW2[shift]!) % POW2[width]!) * POW2[shift]!;
  let v = kept + value * POW2[shift]!;
  for (let i = last - 1; i >= first; i--) {
    b[i] = v % 256;
    v = Math.floor(v / 256);
  }
}

// Aligned 64-bit words are read and written a 32-bit half at a time from the bytes: a DataView
// would need `.buffer`, which V8 materialises (an allocation and a copy) for the small typed arrays
// records are encoded into. Zero, the value most 64-bit fields hold, costs no BigInt arithmetic.
/** The big-endian 32-bit word at byte `o`. */
export function readU32(b: Uint8Array, o: number): number {
  return ((b[o]! << 24) | (b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!) >>> 0;
}
function put32(b: Uint8Array, o: number, v: number): void {
  b[o] = v >>> 24;
  b[o + 1] = (v >>> 16) & 0xff;
  b[o + 2] = (v >>> 8) & 0xff;
  b[o + 3] = v & 0xff;
}
function read64(b: Uint8Array, o: number): bigint {
  const hi = readU32(b, o);
  const lo = readU32(b, o + 4);
  if (hi === 0) return lo === 0 ? 0n : BigInt(lo);
  return (BigInt(hi) << 32n) | BigInt(lo);
}
function write64(b: Uint8Array, o: number, v: bigint): void {
  if (v === 0n) {
    b.fill(0, o, o + 8);
    return;
  }
  put32(b, o, Number((v >> 32n) & 0xffffffffn));
  put32(b, o + 4, Number(v & 0xffffffffn));
}

export function readBig(b: Uint8Array, pos: number, width: number): bigint {
  if ((pos & 7) === 0) {
    const o = pos >>> 3;
    if (width === 64) return read64(b, o);
    if (width === 128) {
      const hi = read64(b, o);
      const lo = read64(b, o + 8);
      return hi === 0n ? lo : (hi << 64n) | lo;
    }
  }
  const first = pos >>> 3;
  const end = pos + width;
  const last = (end + 7) >>> 3;
  let v = 0n;
  for (let i = first; i < last; i++) v = (v << 8n) | BigInt(b[i]!);
  const shift = BigInt(last * 8 - end);
  return (v >> shift) & ((1n << BigInt(width)) - 1n);
}

export function writeBig(b: Uint8Array, pos: number, width: number, value: bigint): void {
  if ((pos & 7) === 0) {
    const o = pos >>> 3;
    if (width === 64) {
      write64(b, o, value & 0xffffffffffffffffn);
      return;
    }
    if (width === 128) {
      if (value === 0n) {
        b.fill(0, o, o + 16);
        return;
      }
      write64(b, o, (value >> 64n) & 0xffffffffffffffffn);
      write64(b, o + 8, value & 0xffffffffffffffffn);
      return;
    }
  }
  const first = pos >>> 3;
  const end = pos + width;
  const last = (end + 7) >>> 3;
  let cur = 0n;
  for (let i = first; i < last; i++) cur = (cur << 8n) | BigInt(b[i]!);
  const shift = BigInt(last * 8 - end);
  const mask = ((1n << BigInt(width)) - 1n) << shift;
  let v = (cur & ~mask) | ((value << shift) & mask);
  for (let i = last - 1; i >= first; i--) {
    b[i] = Number(v & 0xffn);
    v >>= 8n;
  }
}

const BIG_LIMITS: bigint[] = [];
/** 2^width as a bigint (cached: computing it per encoded field was measurable). */
export function bigLimit(width: number): bigint {
  return (BIG_LIMITS[width] ??= 1n << BigInt(width));
}

/**
 * The declarative layout engine. Every MAD structure in ibsm is described once, as an ordered
 * table of fields (name, big-endian bit offset from the start of the structure, bit width, kind);
 * encode, decode, the human-readable dump and the SA component-mask numbering all derive from it.
 *
 * Bit numbering follows the IBA spec: bit 0 is the most significant bit of byte 0.
 *
 * Component masks (SA): every field of a layout is one component, in table order, reserved
 * fields included; an embedded structure (`struct`) contributes its own components in place
 * (PortInfoRecord = RID fields, then every PortInfo field). A field may take several component
 * bits (`cm: n`, e.g. PathRecord's ServiceID is two 32-bit components). An `array` is one
 * component. Matching compares the raw bits of a component in the encoded query and record.
 */
import { DecodeError, EncodeError } from './errors.js';

export type Radix = 'dec' | 'hex';

interface FieldCommon {
  /** Big-endian bit offset from the start of the enclosing structure. */
  readonly bit: number;
  /** Width in bits. */
  readonly width: number;
  /** Label in dumps (the smpquery/saquery name); defaults to the field name. */
  readonly label?: string;
  /** Number of SA component-mask bits this field takes (default 1). */
  readonly cm?: number;
}

export interface UintField extends FieldCommon {
  readonly kind: 'uint';
  readonly radix?: Radix;
  /** Symbolic names for values, shown by dump. */
  readonly names?: Readonly<Record<number, string>>;
}
export interface U64Field extends FieldCommon {
  readonly kind: 'u64';
}
export interface GidField extends FieldCommon {
  readonly kind: 'gid';
}
export interface BytesField extends FieldCommon {
  readonly kind: 'bytes';
}
export interface StringField extends FieldCommon {
  readonly kind: 'string';
}
export interface ReservedField extends FieldCommon {
  readonly kind: 'reserved';
}
export interface ArrayField<E extends ElemField = ElemField> extends FieldCommon {
  readonly kind: 'array';
  readonly elem: E;
  readonly count: number;
  /** Distance in bits between consecutive elements. */
  readonly stride: number;
}
export interface StructField<L extends AnyLayout = AnyLayout> extends FieldCommon {
  readonly kind: 'struct';
  readonly layout: L;
}

export type ElemField = UintField | U64Field | GidField | StructField;
export type FieldSpec = UintField | U64Field | GidField | BytesField | StringField | ReservedField | ArrayField | StructField;
export type FieldTable = Readonly<Record<string, FieldSpec>>;

export type FieldValue<F> = F extends UintField
  ? number
  : F extends U64Field
    ? bigint
    : F extends GidField
      ? bigint
      : F extends BytesField
        ? Uint8Array
        : F extends StringField
          ? string
          : F extends ArrayField<infer E>
            ? FieldValue<E>[]
            : F extends StructField<infer L>
              ? LayoutValue<L>
              : never;

export type ValueOf<T extends FieldTable> = {
  -readonly [K in keyof T as T[K] extends ReservedField ? never : K]: FieldValue<T[K]>;
};
export type DeepPartial<V> = V extends Uint8Array | bigint | number | string
  ? V
  : V extends (infer E)[]
    ? DeepPartial<E>[]
    : { [K in keyof V]?: DeepPartial<V[K]> };

/** One SA component: a bit range of the encoded record. */
export interface Component {
  readonly index: number;
  /** Dotted path of the field, e.g. "portInfo.lid". */
  readonly path: string;
  readonly bit: number;
  readonly width: number;
}

export interface Layout<V> {
  readonly name: string;
  readonly byteLength: number;
  readonly fields: FieldTable;
  /** Decode `byteLength` bytes at `offset`. Throws only DecodeError. */
  decode(buf: Uint8Array, offset?: number): V;
  /** Encode into `buf` at `offset` (a new zeroed buffer when none is given). Every byte of the
   * structure is written (reserved bits as zero). Throws EncodeError for out-of-range values. */
  encode(value: DeepPartial<V>, buf?: Uint8Array, offset?: number): Uint8Array;
  /** The all-zero value. */
  zero(): V;
  /** smpquery-style dump, one "Label:.....value" line per field. */
  dump(value: V, indent?: string): string;
  /** Flattened SA components in component-mask bit order. */
  readonly components: readonly Component[];
  /** Component-mask bits of the named fields (dotted paths for embedded structures). */
  mask(...paths: string[]): bigint;
}
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyLayout = Layout<any>;
export type LayoutValue<L> = L extends Layout<infer V> ? V : never;

// ---------- field builders ----------
type Opts<F> = Omit<F, 'kind' | 'bit' | 'width'>;
type CommonOpts = Pick<FieldCommon, 'label' | 'cm'>;

export function uint(bit: number, width: number, opts: Opts<UintField> = {}): UintField {
  if (width < 1 || width > 32) throw new Error(`uint width ${width} out of 1..32`);
  return { kind: 'uint', bit, width, ...opts };
}
export function hex(bit: number, width: number, opts: Opts<UintField> = {}): UintField {
  return uint(bit, width, { radix: 'hex', ...opts });
}
export function u64(bit: number, width = 64, opts: Opts<U64Field> = {}): U64Field {
  if (width < 1 || width > 64) throw new Error(`u64 width ${width} out of 1..64`);
  return { kind: 'u64', bit, width, ...opts };
}
export function gid(bit: number, opts: Opts<GidField> = {}): GidField {
  return { kind: 'gid', bit, width: 128, ...opts };
}
export function bytes(bit: number, byteCount: number, opts: Opts<BytesField> = {}): BytesField {
  if (bit % 8) throw new Error('bytes fields must be byte aligned');
  return { kind: 'bytes', bit, width: byteCount * 8, ...opts };
}
export function str(bit: number, byteCount: number, opts: Opts<StringField> = {}): StringField {
  if (bit % 8) throw new Error('string fields must be byte aligned');
  return { kind: 'string', bit, width: byteCount * 8, ...opts };
}
export function reserved(bit: number, width: number, opts: Opts<ReservedField> = {}): ReservedField {
  return { kind: 'reserved', bit, width, ...opts };
}
/** `count` elements; `elem.bit` is the first element's offset, `stride` bits apart (default elem width). */
export function array<E extends ElemField>(elem: E, count: number, stride: number = elem.width, opts: CommonOpts = {}): ArrayField<E> {
  return { kind: 'array', bit: elem.bit, width: stride * (count - 1) + elem.width, elem, count, stride, ...opts };
}
export function struct<L extends AnyLayout>(bit: number, layout: L, opts: CommonOpts = {}): StructField<L> {
  if (bit % 8) throw new Error('struct fields must be byte aligned');
  return { kind: 'struct', bit, width: layout.byteLength * 8, layout, ...opts };
}

// ---------- bit access ----------
const POW2: number[] = Array.from({ length: 54 }, (_, i) => 2 ** i);

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

// ---------- the engine ----------
function checkTable(name: string, byteLength: number, fields: FieldTable): void {
  for (const [fname, f] of Object.entries(fields)) {
    const extent = f.bit + f.width;
    if (f.bit < 0 || extent > byteLength * 8) {
      throw new Error(`layout ${name}: field ${fname} (bits ${f.bit}..${extent - 1}) exceeds ${byteLength} bytes`);
    }
  }
}

function zeroOf(f: FieldSpec): unknown {
  switch (f.kind) {
    case 'uint':
      return 0;
    case 'u64':
    case 'gid':
      return 0n;
    case 'bytes':
      return new Uint8Array(f.width / 8);
    case 'string':
      return '';
    case 'array':
      return Array.from({ length: f.count }, () => zeroOf(f.elem));
    case 'struct':
      return f.layout.zero();
    case 'reserved':
      return undefined;
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });
const utf8enc = new TextEncoder();

function decodeField(name: string, fname: string, f: FieldSpec, b: Uint8Array, bitBase: number): unknown {
  const pos = bitBase + f.bit;
  switch (f.kind) {
    case 'uint':
      return readBits(b, pos, f.width);
    case 'u64':
    case 'gid':
      return readBig(b, pos, f.width);
    case 'bytes':
      return b.slice(pos >>> 3, (pos + f.width) >>> 3);
    case 'string': {
      const raw = b.subarray(pos >>> 3, (pos + f.width) >>> 3);
      const nul = raw.indexOf(0);
      return utf8.decode(nul < 0 ? raw : raw.subarray(0, nul));
    }
    case 'array': {
      // Element i sits `i * stride` bits after the first: shift the base, not a copy of the field.
      const out: unknown[] = new Array(f.count);
      for (let i = 0; i < f.count; i++) out[i] = decodeField(name, fname, f.elem, b, bitBase + i * f.stride);
      return out;
    }
    case 'struct':
      return f.layout.decode(b, pos >>> 3);
    case 'reserved':
      return undefined;
  }
}

function encodeField(name: string, fname: string, f: FieldSpec, v: unknown, b: Uint8Array, bitBase: number): void {
  const pos = bitBase + f.bit;
  switch (f.kind) {
    case 'uint': {
      const n = v ?? 0;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= POW2[f.width]!) {
        throw new EncodeError(name, fname, `value ${String(n)} does not fit ${f.width} unsigned bits`);
      }
      writeBits(b, pos, f.width, n);
      return;
    }
    case 'u64':
    case 'gid': {
      const n = v ?? 0n;
      if (typeof n !== 'bigint' || n < 0n || n >= bigLimit(f.width)) {
        throw new EncodeError(name, fname, `value ${String(n)} does not fit ${f.width} unsigned bits (bigint expected)`);
      }
      writeBig(b, pos, f.width, n);
      return;
    }
    case 'bytes': {
      const n = f.width / 8;
      const src = (v ?? new Uint8Array(0)) as Uint8Array;
      if (!(src instanceof Uint8Array) || src.length > n) {
        throw new EncodeError(name, fname, `expected at most ${n} bytes`);
      }
      b.fill(0, pos >>> 3, (pos >>> 3) + n);
      b.set(src, pos >>> 3);
      return;
    }
    case 'string': {
      const n = f.width / 8;
      if (v !== undefined && typeof v !== 'string') throw new EncodeError(name, fname, 'expected a string');
      // Too long (e.g. replacement characters from a NodeDescription that was not UTF-8 on the
      // wire): cut at the last UTF-8 character boundary that fits, as a text field on the wire is.
      let enc = utf8enc.encode((v as string | undefined) ?? '');
      if (enc.length > n) {
        let cut = n;
        while (cut > 0 && (enc[cut]! & 0xc0) === 0x80) cut--;
        enc = enc.subarray(0, cut);
      }
      b.fill(0, pos >>> 3, (pos >>> 3) + n);
      b.set(enc, pos >>> 3);
      return;
    }
    case 'array': {
      const arr = (v ?? []) as unknown[];
      if (!Array.isArray(arr) || arr.length > f.count) {
        throw new EncodeError(name, fname, `expected an array of at most ${f.count} elements`);
      }
      let i = 0;
      try {
        for (; i < f.count; i++) encodeField(name, fname, f.elem, arr[i], b, bitBase + i * f.stride);
      } catch (e) {
        if (e instanceof EncodeError && e.field === fname) throw new EncodeError(name, `${fname}[${i}]`, e.detail);
        throw e;
      }
      return;
    }
    case 'struct':
      f.layout.encode((v ?? {}) as object, b, pos >>> 3);
      return;
    case 'reserved':
      if (f.width <= 32) writeBits(b, pos, f.width, 0);
      else writeBig(b, pos, f.width, 0n);
      return;
  }
}

const BIG_LIMITS: bigint[] = [];
/** 2^width as a bigint (cached: computing it per encoded field was measurable). */
function bigLimit(width: number): bigint {
  return (BIG_LIMITS[width] ??= 1n << BigInt(width));
}

export function formatHex(v: number | bigint, width: number): string {
  return '0x' + v.toString(16).padStart(Math.ceil(width / 4), '0');
}

/** Format a 128-bit GID the way the diags do: prefix and GUID as IPv6-style groups. */
export function formatGid(v: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16).padStart(4, '0'));
  return groups.join(':');
}

function formatValue(f: FieldSpec, v: unknown): string {
  switch (f.kind) {
    case 'uint': {
      const n = v as number;
      const named = f.names?.[n];
      if (named !== undefined) return named;
      return f.radix === 'hex' ? formatHex(n, f.width) : String(n);
    }
    case 'u64':
      return formatHex(v as bigint, f.width);
    case 'gid':
      return formatGid(v as bigint);
    case 'bytes':
      return Array.from(v as Uint8Array, (x) => x.toString(16).padStart(2, '0')).join('');
    case 'string':
      return v as string;
    case 'array':
      return (v as unknown[]).map((e) => (f.elem.kind === 'struct' ? JSON.stringify(e, bigintJson) : formatValue(f.elem, e))).join(' ');
    case 'struct':
    case 'reserved':
      return '';
  }
}

function bigintJson(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? formatHex(v, 64) : v;
}

/** The dotted-label line the diags print: "Label:" padded with dots to column 33. */
export function dumpLine(label: string, value: string, indent = ''): string {
  const head = `${label}:`;
  return `${indent}${head}${'.'.repeat(Math.max(1, 33 - head.length))}${value}`;
}

type Setter = (v: unknown, b: Uint8Array, bitBase: number) => void;

/** One field's writer, specialised once for its kind, width and alignment; it validates exactly as
 * encodeField does (and defers to it for everything but the common aligned integers). */
function makeSetter(name: string, fname: string, f: FieldSpec): Setter {
  const bit = f.bit;
  if (f.kind === 'uint' && (bit & 7) === 0 && (f.width === 8 || f.width === 16 || f.width === 32)) {
    const o = bit >>> 3;
    const w = f.width;
    const limit = POW2[w]!;
    return (v, b, base) => {
      const n = v ?? 0;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= limit) {
        throw new EncodeError(name, fname, `value ${String(n)} does not fit ${w} unsigned bits`);
      }
      const i = (base >>> 3) + o;
      if (w === 8) b[i] = n;
      else if (w === 16) {
        b[i] = n >>> 8;
        b[i + 1] = n & 0xff;
      } else {
        b[i] = n >>> 24;
        b[i + 1] = (n >>> 16) & 0xff;
        b[i + 2] = (n >>> 8) & 0xff;
        b[i + 3] = n & 0xff;
      }
    };
  }
  if (f.kind === 'uint') {
    const w = f.width;
    const limit = POW2[w]!;
    return (v, b, base) => {
      const n = v ?? 0;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= limit) {
        throw new EncodeError(name, fname, `value ${String(n)} does not fit ${w} unsigned bits`);
      }
      if (n !== 0) writeBits(b, base + bit, w, n); // the structure was zero-filled
    };
  }
  if (f.kind === 'u64' || f.kind === 'gid') {
    const w = f.width;
    const limit = bigLimit(w);
    return (v, b, base) => {
      const n = v ?? 0n;
      if (typeof n !== 'bigint' || n < 0n || n >= limit) {
        throw new EncodeError(name, fname, `value ${String(n)} does not fit ${w} unsigned bits (bigint expected)`);
      }
      if (n !== 0n) writeBig(b, base + bit, w, n);
    };
  }
  return (v, b, base) => encodeField(name, fname, f, v, b, base);
}

type Getter = (b: Uint8Array, bitBase: number) => unknown;

/** One field's reader, specialised once for its kind, width and alignment. */
function makeGetter(name: string, fname: string, f: FieldSpec): Getter {
  const bit = f.bit;
  if (f.kind === 'uint' && (bit & 7) === 0) {
    const o = bit >>> 3;
    switch (f.width) {
      case 8:
        return (b, base) => b[(base >>> 3) + o]!;
      case 16:
        return (b, base) => {
          const i = (base >>> 3) + o;
          return (b[i]! << 8) | b[i + 1]!;
        };
      case 32:
        return (b, base) => {
          const i = (base >>> 3) + o;
          return b[i]! * 0x1000000 + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!);
        };
    }
  }
  if (f.kind === 'uint') return (b, base) => readBits(b, base + bit, f.width);
  if (f.kind === 'u64' || f.kind === 'gid') return (b, base) => readBig(b, base + bit, f.width);
  return (b, base) => decodeField(name, fname, f, b, base);
}

/** The decoder of a layout: the field readers, and an object literal in table order, so every
 * decoded value of a layout has one shape. Generated from the table once, at definition. */
function compileDecoder(name: string, entries: Array<[string, FieldSpec]>): (b: Uint8Array, bitBase: number) => Record<string, unknown> {
  const live = entries.filter(([, f]) => f.kind !== 'reserved');
  const getters = live.map(([fname, f]) => makeGetter(name, fname, f));
  const body = `return { ${live.map(([fname], i) => `${JSON.stringify(fname)}: g[${i}](b, base)`).join(', ')} };`;
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function('g', `return function decode${name.replace(/\W/g, '')}(b, base) { ${body} };`)(getters) as (b: Uint8Array, bitBase: number) => Record<string, unknown>;
}

export function defineLayout<T extends FieldTable>(name: string, byteLength: number, fields: T): Layout<ValueOf<T>> {
  checkTable(name, byteLength, fields);
  const entries = Object.entries(fields);

  const components: Component[] = [];
  for (const [fname, f] of entries) {
    if (f.kind === 'struct') {
      for (const c of f.layout.components) {
        components.push({ index: components.length, path: `${fname}.${c.path}`, bit: f.bit + c.bit, width: c.width });
      }
    } else {
      const parts = f.cm ?? 1;
      const w = f.width / parts;
      for (let p = 0; p < parts; p++) {
        components.push({ index: components.length, path: parts > 1 ? `${fname}#${p}` : fname, bit: f.bit + p * w, width: w });
      }
    }
  }

  const decodeAll = compileDecoder(name, entries);
  // Reserved fields need no setter: encode zero-fills the structure first.
  const liveEntries = entries.filter(([, f]) => f.kind !== 'reserved');
  const setterNames = liveEntries.map(([fname]) => fname);
  const setters = liveEntries.map(([fname, f]) => makeSetter(name, fname, f));

  const layout: Layout<ValueOf<T>> = {
    name,
    byteLength,
    fields,
    components,
    decode(buf: Uint8Array, offset = 0): ValueOf<T> {
      if (!(buf instanceof Uint8Array)) throw new DecodeError(name, '', offset, 'input is not a byte array');
      if (!Number.isInteger(offset) || offset < 0 || offset + byteLength > buf.length) {
        throw new DecodeError(name, '', offset, `needs ${byteLength} bytes, ${Math.max(0, buf.length - offset)} available`);
      }
      return decodeAll(buf, offset * 8) as ValueOf<T>;
    },
    encode(value: DeepPartial<ValueOf<T>>, buf?: Uint8Array, offset = 0): Uint8Array {
      const b = buf ?? new Uint8Array(offset + byteLength);
      if (offset < 0 || offset + byteLength > b.length) {
        throw new EncodeError(name, '', `buffer of ${b.length} bytes cannot hold ${byteLength} bytes at offset ${offset}`);
      }
      b.fill(0, offset, offset + byteLength);
      const v = (value ?? {}) as Record<string, unknown>;
      const base = offset * 8;
      for (let i = 0; i < setters.length; i++) setters[i]!(v[setterNames[i]!], b, base);
      return b;
    },
    zero(): ValueOf<T> {
      const out: Record<string, unknown> = {};
      for (const [fname, f] of entries) if (f.kind !== 'reserved') out[fname] = zeroOf(f);
      return out as ValueOf<T>;
    },
    dump(value: ValueOf<T>, indent = ''): string {
      const lines: string[] = [];
      const v = value as Record<string, unknown>;
      for (const [fname, f] of entries) {
        if (f.kind === 'reserved') continue;
        if (f.kind === 'struct') {
          lines.push(f.layout.dump(v[fname], indent));
          continue;
        }
        lines.push(dumpLine(f.label ?? fname, formatValue(f, v[fname]), indent));
      }
      return lines.join('\n');
    },
    mask(...paths: string[]): bigint {
      let m = 0n;
      for (const p of paths) {
        const hits = components.filter((c) => c.path === p || c.path.startsWith(p + '#') || c.path.startsWith(p + '.'));
        if (hits.length === 0) throw new Error(`layout ${name} has no component ${p}`);
        for (const c of hits) m |= 1n << BigInt(c.index);
      }
      return m;
    },
  };
  return layout;
}

/** True when the components selected by `mask` are bit-identical in two encoded records. */
export function componentsMatch(layout: AnyLayout, mask: bigint, a: Uint8Array, aOff: number, b: Uint8Array, bOff: number): boolean {
  for (const c of layout.components) {
    if (!((mask >> BigInt(c.index)) & 1n)) continue;
    if (c.width <= 32) {
      if (readBits(a, aOff * 8 + c.bit, c.width) !== readBits(b, bOff * 8 + c.bit, c.width)) return false;
    } else if ((c.bit & 7) === 0 && (c.width & 7) === 0) {
      const s = c.bit >>> 3;
      const n = c.width >>> 3;
      for (let i = 0; i < n; i++) if (a[aOff + s + i] !== b[bOff + s + i]) return false;
    } else if (readBig(a, aOff * 8 + c.bit, c.width) !== readBig(b, bOff * 8 + c.bit, c.width)) return false;
  }
  return true;
}

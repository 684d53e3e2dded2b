/**
 * Views: a checked window onto the bytes of one structure, beside its decoded value (smoltcp's
 * Packet/Repr split). `View.over(buf, offset)` checks once that the structure fits, then each field
 * of the layout's table is a property: reading it reads just that field from the bytes, assigning
 * it writes just that field (validated as `encode` validates it, EncodeError otherwise). Nothing is
 * decoded up front and the bytes are never copied.
 *
 * The accessors are generated from the layout's own field table, once, when the view is defined
 * (no offset is written by hand): integer fields of up to 32 bits become inline byte arithmetic
 * with their offset, shift and mask as constants, so reading or writing one allocates nothing;
 * 64- and 128-bit fields read as a BigInt (which allocates unless zero); bytes, strings, arrays and
 * embedded structures read and write as their decoded value (a copy). `at`/`setAt` reach one
 * element of an integer array without decoding the rest (inline byte access for arrays of bytes).
 */
import { DecodeError, EncodeError } from './errors.js';
import { POW2, bigLimit, readBig, readBits, writeBig, writeBits } from './bits.js';
import { encodeField, generatedFactory, intPlacement, intReadSource, makeGetter, spanReadSource, spanWriteSource } from './codegen.js';
import type { ArrayField, FieldSpec, FieldTable, ReservedField, TableLayout, UintField, ValueOf } from './fields.js';

type UintArrayKeys<T extends FieldTable> = {
  [K in keyof T]: T[K] extends ArrayField<infer E> ? (E extends UintField ? K : never) : never;
}[keyof T] &
  string;

/** What every view has besides its field properties. */
export interface ViewBase<T extends FieldTable> {
  /** The bytes viewed. */
  readonly buf: Uint8Array;
  /** Byte offset of the structure in `buf`. */
  readonly offset: number;
  /** The whole structure, decoded. */
  decode(): ValueOf<T>;
  /** Element `i` of an integer array field. */
  at(field: UintArrayKeys<T>, i: number): number;
  /** Write element `i` of an integer array field. */
  setAt(field: UintArrayKeys<T>, i: number, v: number): void;
}

/** A view: the field properties of the layout (reserved fields excluded) over the bytes. */
export type View<T extends FieldTable> = ValueOf<T> & ViewBase<T>;

export interface ViewType<T extends FieldTable> {
  readonly layout: TableLayout<T>;
  /** A view of the structure at byte `offset` of `buf`. Throws DecodeError when it does not fit. */
  over(buf: Uint8Array, offset?: number): View<T>;
}

/** The source of a getter and a setter for an integer field of up to 32 bits spanning at most 4
 * bytes (codegen's placement), or undefined when it needs the general bit reader. */
function intAccessors(f: UintField, idx: number): { get: string; set: string } | undefined {
  const p = intPlacement(f);
  if (!p) return undefined;
  const check = `if (typeof v !== 'number' || (v >>> 0) !== v || v > ${p.mask}) bad(${idx}, v);`;
  const set = p.whole
    ? `${check} const b = this.buf, o = this.offset; ${spanWriteSource(p, 'v')}`
    : `${check} const b = this.buf, o = this.offset; const x = ((${spanReadSource(p)}) & ${~(p.mask * POW2[p.shift]!) | 0}) | (v << ${p.shift}); ${spanWriteSource(p, 'x')}`;
  return { get: `const b = this.buf, o = this.offset; return ${intReadSource(p)};`, set };
}

/** Generate the view class of a layout from its field table. */
export function defineView<T extends FieldTable>(layout: TableLayout<T>): ViewType<T> {
  const size = layout.byteLength;
  const name = layout.name;
  // Generated on first use: start-up defines every view but a command uses few of them.
  let Cls: (new (buf: Uint8Array, offset: number) => View<T>) | undefined;
  return {
    layout,
    over(buf: Uint8Array, offset = 0): View<T> {
      if (!(buf instanceof Uint8Array)) throw new DecodeError(name, '', offset, 'input is not a byte array');
      if (!Number.isInteger(offset) || offset < 0 || offset + size > buf.length) {
        throw new DecodeError(name, '', offset, `needs ${size} bytes, ${Math.max(0, buf.length - offset)} available`);
      }
      return new (Cls ??= viewClass(layout))(buf, offset);
    },
  };
}

/** The view class of a layout, generated from its field table. */
function viewClass<T extends FieldTable>(layout: TableLayout<T>): new (buf: Uint8Array, offset: number) => View<T> {
  const name = layout.name;
  const live = Object.entries(layout.fields as FieldTable).filter((e): e is [string, Exclude<FieldSpec, ReservedField>] => e[1].kind !== 'reserved');
  // Closures for what is not generated inline: h[i] reads, s[i] writes field i.
  const h: Array<(b: Uint8Array, o: number) => unknown> = [];
  const s: Array<(b: Uint8Array, o: number, v: unknown) => void> = [];
  const names = live.map(([fname]) => fname);
  const bad = (i: number, v: unknown): never => {
    const f = live[i]![1];
    throw new EncodeError(name, names[i]!, `value ${String(v)} does not fit ${f.width} unsigned bits${f.kind === 'uint' ? '' : ' (bigint expected)'}`);
  };
  let body = '';
  live.forEach(([fname, f], i) => {
    const key = JSON.stringify(fname);
    const int = f.kind === 'uint' ? intAccessors(f, i) : undefined;
    if (int) {
      body += `get [${key}]() { ${int.get} }\nset [${key}](v) { ${int.set} }\n`;
      return;
    }
    if ((f.kind === 'u64' || f.kind === 'gid') && f.width === 64 && (f.bit & 7) === 0) {
      // An aligned 64-bit word: two 32-bit halves read inline; zero (most such fields) costs no BigInt.
      const x = f.bit >>> 3;
      const word = (k: number): string => `((b[o + ${k}] << 24) | (b[o + ${k + 1}] << 16) | (b[o + ${k + 2}] << 8) | b[o + ${k + 3}]) >>> 0`;
      body += `get [${key}]() { const b = this.buf, o = this.offset; const hi = ${word(x)}, lo = ${word(x + 4)}; if (hi === 0) return lo === 0 ? 0n : BigInt(lo); return (BigInt(hi) << 32n) | BigInt(lo); }\n`;
      const limit = bigLimit(64);
      s[i] = (b, o, v) => {
        if (typeof v !== 'bigint' || v < 0n || v >= limit) bad(i, v);
        writeBig(b, o * 8 + f.bit, 64, v as bigint);
      };
      body += `set [${key}](v) { s[${i}](this.buf, this.offset, v); }\n`;
      return;
    }
    if (f.kind === 'uint') {
      h[i] = (b, o) => readBits(b, o * 8 + f.bit, f.width);
      s[i] = (b, o, v) => {
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= POW2[f.width]!) bad(i, v);
        writeBits(b, o * 8 + f.bit, f.width, v as number);
      };
    } else if (f.kind === 'u64' || f.kind === 'gid') {
      const limit = bigLimit(f.width);
      h[i] = (b, o) => readBig(b, o * 8 + f.bit, f.width);
      s[i] = (b, o, v) => {
        if (typeof v !== 'bigint' || v < 0n || v >= limit) bad(i, v);
        writeBig(b, o * 8 + f.bit, f.width, v as bigint);
      };
    } else {
      const g = makeGetter(name, fname, f);
      h[i] = (b, o) => g(b, o * 8);
      s[i] = (b, o, v) => encodeField(name, fname, f, v, b, o * 8);
    }
    body += `get [${key}]() { return h[${i}](this.buf, this.offset); }\nset [${key}](v) { s[${i}](this.buf, this.offset, v); }\n`;
  });

  const arrays = new Map<string, { bit: number; stride: number; width: number; count: number }>();
  for (const [fname, f] of live) {
    if (f.kind === 'array' && f.elem.kind === 'uint') arrays.set(fname, { bit: f.elem.bit, stride: f.stride, width: f.elem.width, count: f.count });
  }
  const arr = (field: string, i: number): { bit: number; stride: number; width: number; count: number } => {
    const a = arrays.get(field);
    if (!a) throw new TypeError(`${name}.${field} is not an integer array`);
    if (!Number.isInteger(i) || i < 0 || i >= a.count) throw new RangeError(`${name}.${field}[${i}] is outside 0..${a.count - 1}`);
    return a;
  };
  const at = function (this: ViewBase<T>, field: string, i: number): number {
    const a = arr(field, i);
    return readBits(this.buf, this.offset * 8 + a.bit + i * a.stride, a.width);
  };
  const setAt = function (this: ViewBase<T>, field: string, i: number, v: number): void {
    const a = arr(field, i);
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v >= POW2[a.width]!) {
      throw new EncodeError(name, `${field}[${i}]`, `value ${String(v)} does not fit ${a.width} unsigned bits`);
    }
    writeBits(this.buf, this.offset * 8 + a.bit + i * a.stride, a.width, v);
  };

  // Arrays of byte-aligned bytes (DR paths, LFT blocks) get inline cases: the walk of a directed
  // route reads and writes its paths on every hop. Other arrays (and errors) take the general path.
  let atCases = '';
  let setAtCases = '';
  for (const [fname, a] of arrays) {
    if (a.width !== 8 || (a.bit & 7) !== 0 || (a.stride & 7) !== 0) continue;
    const key = JSON.stringify(fname);
    const idx = `o + ${a.bit >>> 3} + i${a.stride === 8 ? '' : ` * ${a.stride >>> 3}`}`;
    const inRange = `typeof i === 'number' && (i >>> 0) === i && i < ${a.count}`;
    atCases += `case ${key}: if (${inRange}) { const o = this.offset; return this.buf[${idx}]; } break;\n`;
    setAtCases += `case ${key}: if (${inRange} && typeof v === 'number' && (v >>> 0) === v && v < 256) { const o = this.offset; this.buf[${idx}] = v; return; } break;\n`;
  }
  const cls = `${name.replace(/\W/g, '')}View`;
  const src = `return class ${cls} {
    constructor(buf, offset) { this.buf = buf; this.offset = offset; }
    decode() { return layout.decode(this.buf, this.offset); }
    at(field, i) { switch (field) { ${atCases} } return at.call(this, field, i); }
    setAt(field, i, v) { switch (field) { ${setAtCases} } setAt.call(this, field, i, v); }
    ${body}
  };`;
  return generatedFactory(['h', 's', 'bad', 'layout', 'at', 'setAt'], src)(h, s, bad, layout, at, setAt) as new (buf: Uint8Array, offset: number) => View<T>;
}

/** Code generation of the layout engine: each field's reader and writer, specialised once for its
 * kind, width and alignment, and the decoder of a whole table (an object literal in table order). */
import { EncodeError } from './errors.js';
import { POW2, bigLimit, readBig, readBits, writeBig, writeBits } from './bits.js';
import type { FieldSpec } from './fields.js';

/** The factories of generated code the bundled command carries precompiled (scripts/build-bundle.mjs:
 * those one run of the SM generates, written into the bundle as functions, so V8's code cache
 * holds them compiled and start-up parses none of them). Found by a short key, and used only when
 * the function's own source is exactly the text `new Function` would compile. Absent outside the
 * bundle. */
type Factory = (...args: unknown[]) => unknown;
const PRECOMPILED = (globalThis as { __ibsmCodecs?: ReadonlyMap<string, Factory> }).__ibsmCodecs;
/** Where the bundle's recording run collects [key, source] of what it generates (set only there). */
const RECORD = (globalThis as { __ibsmCodegenRecord?: Array<[string, string]> }).__ibsmCodegenRecord;

/** The factory of generated code: `new Function(...params, body)`, or the bundle's precompiled one
 * of the same source. */
export function generatedFactory(params: readonly string[], body: string): Factory {
  const text = `function (${params.join(', ')}) {\n${body}\n}`;
  const key = `${params.join(',')}:${body.length}:${body.slice(0, 96)}`;
  const pre = PRECOMPILED?.get(key);
  if (pre && pre.toString() === text) return pre;
  RECORD?.push([key, text]);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval
  return new Function(...params, body) as Factory;
}

export function zeroOf(f: FieldSpec): unknown {
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

/** `v` as an unsigned integer of `width` bits below `limit` (POW2[width]); absent is 0. */
function uintOf(name: string, fname: string, width: number, limit: number, v: unknown): number {
  const n = v ?? 0;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n >= limit) throw new EncodeError(name, fname, `value ${String(n)} does not fit ${width} unsigned bits`);
  return n;
}

/** `v` as an unsigned bigint of `width` bits below `limit` (bigLimit(width)); absent is 0. */
function bigOf(name: string, fname: string, width: number, limit: bigint, v: unknown): bigint {
  const n = v ?? 0n;
  if (typeof n !== 'bigint' || n < 0n || n >= limit) throw new EncodeError(name, fname, `value ${String(n)} does not fit ${width} unsigned bits (bigint expected)`);
  return n;
}

export function encodeField(name: string, fname: string, f: FieldSpec, v: unknown, b: Uint8Array, bitBase: number): void {
  const pos = bitBase + f.bit;
  switch (f.kind) {
    case 'uint':
      writeBits(b, pos, f.width, uintOf(name, fname, f.width, POW2[f.width]!, v));
      return;
    case 'u64':
    case 'gid':
      writeBig(b, pos, f.width, bigOf(name, fname, f.width, bigLimit(f.width), v));
      return;
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

export type Setter = (v: unknown, b: Uint8Array, bitBase: number) => void;

/** One field's writer, specialised once for its kind, width and alignment; it validates exactly as
 * encodeField does (and defers to it for everything but the common aligned integers). */
export function makeSetter(name: string, fname: string, f: FieldSpec): Setter {
  const bit = f.bit;
  if (f.kind === 'uint' && (bit & 7) === 0 && (f.width === 8 || f.width === 16 || f.width === 32)) {
    const o = bit >>> 3;
    const w = f.width;
    const limit = POW2[w]!;
    return (v, b, base) => {
      const n = uintOf(name, fname, w, limit, v);
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
      const n = uintOf(name, fname, w, limit, v);
      if (n !== 0) writeBits(b, base + bit, w, n); // the structure was zero-filled
    };
  }
  if (f.kind === 'u64' || f.kind === 'gid') {
    const w = f.width;
    const limit = bigLimit(w);
    return (v, b, base) => {
      const n = bigOf(name, fname, w, limit, v);
      if (n !== 0n) writeBig(b, base + bit, w, n);
    };
  }
  return (v, b, base) => encodeField(name, fname, f, v, b, base);
}

export type Getter = (b: Uint8Array, bitBase: number) => unknown;

/** One field's reader, specialised once for its kind, width and alignment. */
export function makeGetter(name: string, fname: string, f: FieldSpec): Getter {
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

/** Where an unsigned field of up to 32 bits sits in the bytes, when it spans at most 4 of them:
 * its first byte (from the structure's start), how many bytes it touches, how far its last bit is
 * from the end of its last byte, and its mask. Undefined when it needs the general bit reader. */
export interface IntPlacement {
  readonly byte: number;
  readonly span: number;
  readonly shift: number;
  readonly mask: number;
  /** The field is exactly its bytes (no shift, no neighbours). */
  readonly whole: boolean;
}

export function intPlacement(f: { bit: number; width: number }): IntPlacement | undefined {
  if (f.width > 32) return undefined;
  const byte = f.bit >>> 3;
  const end = f.bit + f.width;
  const last = (end - 1) >>> 3;
  const span = last - byte + 1;
  if (span > 4) return undefined;
  const shift = (last + 1) * 8 - end;
  return { byte, span, shift, mask: POW2[f.width]! - 1, whole: shift === 0 && f.width === span * 8 };
}

/** The source of an expression reading the bytes a placement spans, as one unsigned number: `b`
 * names the bytes, `o` the byte offset of the structure. */
export function spanReadSource(p: IntPlacement, b = 'b', o = 'o'): string {
  const parts: string[] = [];
  for (let k = 0; k < p.span; k++) {
    const sh = (p.span - 1 - k) * 8;
    parts.push(sh ? `(${b}[${o} + ${p.byte + k}] << ${sh})` : `${b}[${o} + ${p.byte + k}]`);
  }
  const raw = parts.join(' | ');
  return p.span === 4 ? `((${raw}) >>> 0)` : raw;
}

/** The source of an expression reading the field itself. */
export function intReadSource(p: IntPlacement, b = 'b', o = 'o'): string {
  const raw = spanReadSource(p, b, o);
  return p.whole ? `(${raw})` : `(((${raw}) >>> ${p.shift}) & ${p.mask})`;
}

/** The source of statements writing the number in variable `x` (the whole span: the field shifted
 * into place, merged with its neighbours as the caller needs) over the bytes a placement spans. */
export function spanWriteSource(p: IntPlacement, x: string, b = 'b', o = 'o'): string {
  const w: string[] = [];
  for (let k = 0; k < p.span; k++) {
    const sh = (p.span - 1 - k) * 8;
    w.push(`${b}[${o} + ${p.byte + k}] = ${sh ? `(${x} >>> ${sh}) & 255` : `${x} & 255`};`);
  }
  return w.join(' ');
}

/** The decoder of a layout: an object literal in table order (so every decoded value of a layout
 * has one shape), integer fields read inline with their offsets, shifts and masks as constants,
 * the other kinds through their readers. Generated from the table once, at definition. */
export function compileDecoder(name: string, entries: Array<[string, FieldSpec]>): (b: Uint8Array, bitBase: number) => Record<string, unknown> {
  const live = entries.filter(([, f]) => f.kind !== 'reserved');
  const getters = live.map(([fname, f]) => makeGetter(name, fname, f));
  const props = live.map(([fname, f], i) => {
    const p = f.kind === 'uint' ? intPlacement(f) : undefined;
    return `${JSON.stringify(fname)}: ${p ? intReadSource(p) : `g[${i}](b, base)`}`;
  });
  const body = `const o = base >>> 3; return { ${props.join(', ')} };`;
  return generatedFactory(['g'], `return function decode${name.replace(/\W/g, '')}(b, base) { ${body} };`)(getters) as (b: Uint8Array, bitBase: number) => Record<string, unknown>;
}

/** The encoder of a layout, into bytes the caller has zero-filled: integer fields (and arrays of
 * byte-aligned integers) validated and written inline, exactly as their setters validate and
 * write them, the other kinds through their setters. `v` is the value, `o` the byte offset. */
export function compileEncoder(name: string, entries: Array<[string, FieldSpec]>): (v: Record<string, unknown>, b: Uint8Array, o: number) => void {
  const live = entries.filter(([, f]) => f.kind !== 'reserved');
  const setters: Setter[] = [];
  const fnames = live.map(([fname]) => fname);
  const widths = live.map(([, f]) => (f.kind === 'array' ? f.elem.width : f.width));
  const bad = (i: number, v: unknown, elem?: number): never => {
    throw new EncodeError(name, elem === undefined ? fnames[i]! : `${fnames[i]}[${elem}]`, `value ${String(v)} does not fit ${widths[i]} unsigned bits`);
  };
  const badArray = (i: number): never => {
    const f = live[i]![1] as { count: number };
    throw new EncodeError(name, fnames[i]!, `expected an array of at most ${f.count} elements`);
  };
  const stmts: string[] = [];
  live.forEach(([fname, f], i) => {
    const get = `v[${JSON.stringify(fname)}]`;
    const p = f.kind === 'uint' ? intPlacement(f) : undefined;
    if (p) {
      const check = `if (typeof x !== 'number' || (x >>> 0) !== x || x > ${p.mask}) bad(${i}, x);`;
      const put = p.whole ? spanWriteSource(p, 'x') : `x = ${spanReadSource(p)} | ${p.shift ? `(x * ${POW2[p.shift]})` : 'x'}; ${spanWriteSource(p, 'x')}`;
      stmts.push(`x = ${get}; if (x != null) { ${check} if (x !== 0) { ${put} } }`);
      return;
    }
    if (f.kind === 'array' && f.elem.kind === 'uint' && (f.stride & 7) === 0) {
      const e = intPlacement(f.elem);
      if (e && e.whole) {
        const step = f.stride >>> 3;
        const ep: IntPlacement = { ...e, byte: 0 };
        stmts.push(
          `a = ${get}; if (a != null) { if (!Array.isArray(a) || a.length > ${f.count}) badArray(${i}); ` +
            `for (let k = 0, q = o + ${e.byte}; k < ${f.count}; k++, q += ${step}) { x = a[k]; if (x == null) continue; ` +
            `if (typeof x !== 'number' || (x >>> 0) !== x || x > ${e.mask}) bad(${i}, x, k); ${spanWriteSource(ep, 'x', 'b', 'q')} } }`,
        );
        return;
      }
    }
    setters[i] = makeSetter(name, fname, f);
    stmts.push(`s[${i}](${get}, b, o * 8);`);
  });
  const src = `return function encode${name.replace(/\W/g, '')}(v, b, o) { let x, a; ${stmts.join('\n')} };`;
  return generatedFactory(['s', 'bad', 'badArray'], src)(setters, bad, badArray) as (v: Record<string, unknown>, b: Uint8Array, o: number) => void;
}

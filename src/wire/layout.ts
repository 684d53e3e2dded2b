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
import { ComponentMaskError, DecodeError, EncodeError, LayoutError } from './errors.js';
import { readBig, readBits } from './bits.js';
import { compileDecoder, compileEncoder, zeroOf } from './codegen.js';
import { dumpLine, formatValue } from './format.js';
import type { AnyLayout, Component, DeepPartial, FieldSpec, FieldTable, TableLayout, ValueOf } from './fields.js';

export * from './fields.js';
export { readBits, writeBits, readBig, writeBig, readU32 } from './bits.js';
export { formatHex, formatGid, dumpLine } from './format.js';

// ---------- the engine ----------
/** A table must tile its structure: every bit belongs to exactly one field, reserved bits to an
 * explicit `reserved` field (an array or struct field owns its whole extent). Checked once, at
 * definition, so a mistyped offset fails where the layout is written, not in a golden test. */
function checkTable(name: string, byteLength: number, fields: FieldTable): void {
  const spans: Array<[string, number, number]> = [];
  for (const [fname, f] of Object.entries(fields)) {
    const extent = f.bit + f.width;
    if (!Number.isInteger(f.bit) || f.bit < 0 || extent > byteLength * 8) {
      throw new LayoutError(name, `field ${fname} (bits ${f.bit}..${extent - 1}) exceeds ${byteLength} bytes`);
    }
    spans.push([fname, f.bit, extent]);
  }
  spans.sort((a, b) => a[1] - b[1]);
  let at = 0;
  let prev = '';
  for (const [fname, bit, end] of spans) {
    if (bit > at) throw new LayoutError(name, `bits ${at}..${bit - 1} belong to no field (a gap${prev ? ` after ${prev}` : ''} before ${fname}; declare it reserved)`);
    if (bit < at) throw new LayoutError(name, `field ${fname} (bits ${bit}..${end - 1}) overlaps ${prev} (which ends at bit ${at - 1})`);
    at = end;
    prev = fname;
  }
  if (at !== byteLength * 8) throw new LayoutError(name, `bits ${at}..${byteLength * 8 - 1} belong to no field (a gap at the end${prev ? ` after ${prev}` : ''}; declare it reserved)`);
}

/**
 * A table with one field replaced by others covering exactly its bits, in its place (the order of
 * the table is the order of dumps and components). How a structure that refines a shared header
 * (the DR SMP splits the common header's Status and ClassSpecific) composes it instead of
 * restating it. Throws LayoutError when the replacement does not tile the replaced bits.
 */
export function spliceFields<T extends FieldTable, K extends keyof T & string, R extends FieldTable>(table: T, name: K, replacement: R): Omit<T, K> & R {
  const old = table[name];
  if (!old) throw new LayoutError('spliceFields', `no field ${name} to replace`);
  const parts = Object.values(replacement).sort((a, b) => a.bit - b.bit);
  let at = old.bit;
  for (const f of parts) {
    if (f.bit !== at) throw new LayoutError('spliceFields', `the replacement of ${name} (bits ${old.bit}..${old.bit + old.width - 1}) does not tile it at bit ${at}`);
    at += f.width;
  }
  if (at !== old.bit + old.width) throw new LayoutError('spliceFields', `the replacement of ${name} ends at bit ${at - 1}, ${name} at ${old.bit + old.width - 1}`);
  const out: Record<string, FieldSpec> = {};
  for (const [k, f] of Object.entries(table)) {
    if (k === name) Object.assign(out, replacement);
    else if (k in replacement) throw new LayoutError('spliceFields', `field ${k} is both kept and in the replacement`);
    else out[k] = f;
  }
  return out as Omit<T, K> & R;
}

export function defineLayout<T extends FieldTable>(name: string, byteLength: number, fields: T): TableLayout<T> {
  checkTable(name, byteLength, fields);
  const entries = Object.entries(fields);

  // The components and the mask bits of each path are derived on first use, like the codecs:
  // start-up defines every layout, and only the SA's records are ever matched or masked.
  let components: Component[] | undefined;
  const componentsOf = (): Component[] => {
    if (components) return components;
    const out: Component[] = [];
    for (const [fname, f] of entries) {
      if (f.kind === 'struct') {
        for (const c of f.layout.components) {
          out.push({ index: out.length, path: `${fname}.${c.path}`, bit: f.bit + c.bit, width: c.width });
        }
      } else {
        const parts = f.cm ?? 1;
        // `cm: 0`: the field shares the component before it (several fields of one byte that the
        // component mask numbers as one, as PortInfo byte 56)
        const last = out[out.length - 1];
        if (parts === 0 && last) {
          (last as { width: number }).width = f.bit + f.width - last.bit;
          continue;
        }
        const w = f.width / parts;
        for (let p = 0; p < parts; p++) {
          out.push({ index: out.length, path: parts > 1 ? `${fname}#${p}` : fname, bit: f.bit + p * w, width: w });
        }
      }
    }
    return (components = out);
  };
  // A path names a component, or every component under it: "f" names f#0 and f#1 (a field of
  // several components) and s.x, s.y (an embedded structure). Each path a component's own path
  // cuts at a "." or "#" is such a name; its mask is the OR of the bits of what it names.
  let maskOfPath: Map<string, bigint> | undefined;
  const maskIndex = (): Map<string, bigint> => {
    if (maskOfPath) return maskOfPath;
    const index = new Map<string, bigint>();
    for (const c of componentsOf()) {
      const bit = 1n << BigInt(c.index);
      for (let i = 0; i < c.path.length; i++) {
        const ch = c.path[i];
        if (ch === '.' || ch === '#') {
          const p = c.path.slice(0, i);
          index.set(p, (index.get(p) ?? 0n) | bit);
        }
      }
      index.set(c.path, (index.get(c.path) ?? 0n) | bit);
    }
    return (maskOfPath = index);
  };

  // Generated on first use: start-up defines every layout but a command uses few of them.
  let decodeAll: ((b: Uint8Array, bitBase: number) => Record<string, unknown>) | undefined;
  // Reserved fields need no writer: encode zero-fills the structure first.
  let encodeAll: ((v: Record<string, unknown>, b: Uint8Array, o: number) => void) | undefined;

  const layout: TableLayout<T> = {
    name,
    byteLength,
    fields,
    get components(): Component[] {
      return componentsOf();
    },
    decode(buf: Uint8Array, offset = 0): ValueOf<T> {
      if (!(buf instanceof Uint8Array)) throw new DecodeError(name, '', offset, 'input is not a byte array');
      if (!Number.isInteger(offset) || offset < 0 || offset + byteLength > buf.length) {
        throw new DecodeError(name, '', offset, `needs ${byteLength} bytes, ${Math.max(0, buf.length - offset)} available`);
      }
      return (decodeAll ??= compileDecoder(name, entries))(buf, offset * 8) as ValueOf<T>;
    },
    encode(value: DeepPartial<ValueOf<T>>, buf?: Uint8Array, offset = 0): Uint8Array {
      const b = buf ?? new Uint8Array(offset + byteLength);
      if (offset < 0 || offset + byteLength > b.length) {
        throw new EncodeError(name, '', `buffer of ${b.length} bytes cannot hold ${byteLength} bytes at offset ${offset}`);
      }
      b.fill(0, offset, offset + byteLength);
      (encodeAll ??= compileEncoder(name, entries))((value ?? {}) as Record<string, unknown>, b, offset);
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
      const index = maskIndex();
      let m = 0n;
      for (const p of paths) {
        const bits = index.get(p);
        if (bits === undefined) throw new ComponentMaskError(name, p);
        m |= bits;
      }
      return m;
    },
  };
  return layout;
}

/** Where an array of byte-wide integers packed one a byte sits (the ports of an LFT block, a DR
 * path): its encoded form is its bytes, so it can be copied in and out as bytes. Throws
 * LayoutError when the field is not such an array. */
export function byteArrayOf(layout: AnyLayout, field: string): { offset: number; count: number } {
  const f = (layout.fields as Record<string, FieldSpec>)[field];
  if (!f || f.kind !== 'array' || f.elem.kind !== 'uint' || f.elem.width !== 8 || f.stride !== 8 || (f.elem.bit & 7) !== 0) {
    throw new LayoutError(layout.name, `field ${field} is not an array of bytes`);
  }
  return { offset: f.elem.bit >>> 3, count: f.count };
}

/** Copies an encoded record of a layout into another buffer: `dst` gets `src`'s bytes with the
 * reserved bits cleared. */
export type RecordCopier = (src: Uint8Array, srcOffset: number, dst: Uint8Array, dstOffset: number) => void;

const copiers = new WeakMap<AnyLayout, RecordCopier | null>();

/** The copier of `layout`'s records: what `encode(decode(bytes))` gives (every field's bits as
 * they are, reserved bits zero), made with one byte copy and a mask of the bytes that hold
 * reserved bits, derived once from the field table; without reading each field out and writing it
 * back (many times faster: scripts/bench/README.md, "Figures behind source comments"). Undefined for a layout where the two
 * differ: one with a string field (its decode stops at the first NUL). */
export function recordCopier(layout: AnyLayout): RecordCopier | undefined {
  let c = copiers.get(layout);
  if (c === undefined) {
    c = makeCopier(layout);
    copiers.set(layout, c);
  }
  return c ?? undefined;
}

function makeCopier(layout: AnyLayout): RecordCopier | null {
  const n = layout.byteLength;
  const keep = new Uint8Array(n).fill(0xff);
  const clear = (bit: number, width: number): void => {
    for (let b = bit; b < bit + width; b++) keep[b >>> 3]! &= ~(0x80 >>> (b & 7));
  };
  const walk = (l: AnyLayout, base: number): boolean => {
    for (const f of Object.values(l.fields as Record<string, FieldSpec>)) {
      if (f.kind === 'string') return false;
      if (f.kind === 'reserved') clear(base + f.bit, f.width);
      else if (f.kind === 'struct' && !walk(f.layout, base + f.bit)) return false;
      else if (f.kind === 'array' && f.elem.kind === 'struct') {
        for (let i = 0; i < f.count; i++) if (!walk(f.elem.layout, base + f.elem.bit + i * f.stride)) return false;
      }
    }
    return true;
  };
  if (!walk(layout, 0)) return null;
  const at: number[] = [];
  const mask: number[] = [];
  keep.forEach((m, i) => {
    if (m !== 0xff) at.push(i), mask.push(m);
  });
  const name = layout.name;
  return (src, so, dst, dO) => {
    if (so < 0 || so + n > src.length) throw new DecodeError(name, '', so, `needs ${n} bytes, ${Math.max(0, src.length - so)} available`);
    if (dO < 0 || dO + n > dst.length) throw new EncodeError(name, '', `buffer of ${dst.length} bytes cannot hold ${n} bytes at offset ${dO}`);
    dst.set(so === 0 && src.length === n ? src : src.subarray(so, so + n), dO);
    for (let i = 0; i < at.length; i++) dst[dO + at[i]!]! &= mask[i]!;
  };
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

/** The compiled encoders and decoders (wire/codegen.ts) against the general field readers and
 * writers they replace (readBits/readBig, encodeField), field by field, on every layout of wire/:
 * the bit primitives are the independent witness of the generated offsets, shifts and masks. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { encodeField } from '../src/wire/codegen.js';
import { defineView } from '../src/wire/view.js';
import { readBig, readBits } from '../src/wire/bits.js';
import { EncodeError } from '../src/wire/errors.js';
import type { AnyLayout, FieldSpec } from '../src/wire/fields.js';
import * as mad from '../src/wire/mad.js';
import * as sma from '../src/wire/sma.js';
import * as sa from '../src/wire/sa.js';
import * as saRecords from '../src/wire/sa-records.js';
import * as pma from '../src/wire/pma.js';
import * as notice from '../src/wire/notice.js';
import * as rmpp from '../src/wire/rmpp.js';
import * as cpi from '../src/wire/classportinfo.js';

function isLayout(x: unknown): x is AnyLayout {
  return typeof x === 'object' && x !== null && typeof (x as AnyLayout).encode === 'function' && typeof (x as AnyLayout).byteLength === 'number' && typeof (x as AnyLayout).fields === 'object';
}
const layouts = new Map<string, AnyLayout>();
for (const mod of [mad, sma, sa, saRecords, pma, notice, rmpp, cpi]) for (const v of Object.values(mod)) if (isLayout(v)) layouts.set(v.name, v);

/** A field's value read with the general readers (what the compiled decoder must return). */
function readField(f: FieldSpec, b: Uint8Array, base: number): unknown {
  switch (f.kind) {
    case 'uint':
      return readBits(b, base + f.bit, f.width);
    case 'u64':
    case 'gid':
      return readBig(b, base + f.bit, f.width);
    case 'array':
      return Array.from({ length: f.count }, (_, i) => readField(f.elem, b, base + i * f.stride));
    case 'struct':
      return f.layout.decode(b, (base + f.bit) >>> 3);
    default:
      return undefined; // bytes and strings keep their reader (not generated)
  }
}

describe('compiled codecs', () => {
  it('cover the layouts of wire/', () => {
    expect(layouts.size).toBeGreaterThan(30);
  });

  it('decode every integer field as readBits/readBig read it, at any offset', () => {
    for (const L of layouts.values()) {
      fc.assert(
        fc.property(fc.uint8Array({ minLength: L.byteLength + 3, maxLength: L.byteLength + 3 }), fc.integer({ min: 0, max: 3 }), (bytes, off) => {
          const v = L.decode(bytes, off) as Record<string, unknown>;
          for (const [name, f] of Object.entries(L.fields as Record<string, FieldSpec>)) {
            const want = readField(f, bytes, off * 8);
            if (want !== undefined) expect(v[name], `${L.name}.${name}`).toEqual(want);
          }
        }),
        { numRuns: 30 },
      );
    }
  });

  it('give views that read every integer field as readBits reads it and write it as encodeField writes it', () => {
    // (a view once read a 12-bit field spanning two bytes, PathRecord.QoSClass, without its shift)
    for (const L of layouts.values()) {
      const V = defineView(L);
      const ints = Object.entries(L.fields as Record<string, FieldSpec>).filter(([, f]) => f.kind === 'uint');
      fc.assert(
        fc.property(fc.uint8Array({ minLength: L.byteLength + 3, maxLength: L.byteLength + 3 }), fc.integer({ min: 0, max: 3 }), fc.nat(), (bytes, off, pick) => {
          const v = V.over(bytes, off) as unknown as Record<string, number>;
          for (const [name, f] of ints) expect(v[name], `${L.name}.${name}`).toBe(readBits(bytes, off * 8 + f.bit, f.width));
          if (!ints.length) return;
          const [name, f] = ints[pick % ints.length]!;
          const x = (pick * 2654435761) % 2 ** f.width;
          const want = Uint8Array.from(bytes);
          const cleared = new Uint8Array(want.length);
          encodeField(L.name, name, f, x, cleared, off * 8);
          for (let bit = 0; bit < f.width; bit++) {
            const at = off * 8 + f.bit + bit;
            const m = 0x80 >>> (at & 7);
            want[at >>> 3] = (want[at >>> 3]! & ~m) | (cleared[at >>> 3]! & m);
          }
          v[name] = x;
          expect(bytes).toEqual(want);
        }),
        { numRuns: 20 },
      );
    }
  });

  it('encode what encodeField writes, field by field, and reject what it rejects with the same error', () => {
    for (const L of layouts.values()) {
      fc.assert(
        fc.property(fc.uint8Array({ minLength: L.byteLength, maxLength: L.byteLength }), fc.integer({ min: 0, max: 3 }), (bytes, off) => {
          // a value from random bytes (reserved bits, which encode leaves zero, cleared by the round trip)
          const value = L.decode(bytes) as Record<string, unknown>;
          const got = L.encode(value, new Uint8Array(L.byteLength + off), off);
          const want = new Uint8Array(L.byteLength + off);
          for (const [name, f] of Object.entries(L.fields as Record<string, FieldSpec>)) {
            if (f.kind !== 'reserved') encodeField(L.name, name, f, value[name], want, off * 8);
          }
          expect(got).toEqual(want);
        }),
        { numRuns: 30 },
      );
    }
  });

  it('name the field and the value that does not fit, as encodeField does', () => {
    const pi = sma.PortInfo;
    const probe = (v: Record<string, unknown>): string => {
      try {
        pi.encode(v as never);
      } catch (e) {
        expect(e).toBeInstanceOf(EncodeError);
        return (e as Error).message;
      }
      return 'no error';
    };
    const ref = (name: string, x: unknown): string => {
      try {
        encodeField('PortInfo', name, (pi.fields as Record<string, FieldSpec>)[name]!, x, new Uint8Array(64), 0);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    };
    for (const [name, x] of [['lid', 0x10000], ['lid', -1], ['lmc', 8], ['portState', 1.5], ['localPortNum', 'x'], ['mkey', 1]] as const) {
      expect(probe({ [name]: x }), `${name}=${String(x)}`).toBe(ref(name, x));
      expect(probe({ [name]: x })).not.toBe('no error');
    }
    const lft = sma.LinearForwardingTable;
    expect(() => lft.encode({ ports: [1, 2, 256] })).toThrow(/ports\[2\].*256 does not fit 8 unsigned bits/);
    expect(() => lft.encode({ ports: new Array(65).fill(0) })).toThrow(/at most 64 elements/);
  });
});

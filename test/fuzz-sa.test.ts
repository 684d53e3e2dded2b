import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AnyLayout, FieldSpec, FieldTable } from '../src/wire/layout.js';
import { DecodeError } from '../src/wire/errors.js';
import { decodeRmpp, RmppHeader } from '../src/wire/rmpp.js';
import { ClassPortInfo } from '../src/wire/classportinfo.js';
import {
  decodeSaMad,
  decodeSaRecords,
  encodeSaMad,
  multiPathGids,
  MultiPathRecord,
  SA_RECORDS,
  SaAttr,
  SaHeader,
  SaMad,
  SaMadHeader,
  saRecordCount,
} from '../src/wire/sa.js';

const LAYOUTS: AnyLayout[] = [...Object.values(SA_RECORDS), ClassPortInfo, RmppHeader, SaHeader, SaMadHeader, SaMad];
const RUNS = 150;

// ---------- value generators derived from the field tables ----------

function fieldArb(f: FieldSpec): fc.Arbitrary<unknown> | undefined {
  switch (f.kind) {
    case 'uint':
      return fc.integer({ min: 0, max: 2 ** f.width - 1 });
    case 'u64':
    case 'gid':
      return fc.bigInt({ min: 0n, max: (1n << BigInt(f.width)) - 1n });
    case 'bytes':
      return fc.uint8Array({ minLength: f.width / 8, maxLength: f.width / 8 });
    case 'string':
      return fc.array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength: f.width / 8 }).map((a) => String.fromCharCode(...a));
    case 'array': {
      const e = fieldArb(f.elem)!;
      return fc.array(e, { minLength: f.count, maxLength: f.count });
    }
    case 'struct':
      return valueArb(f.layout.fields);
    case 'reserved':
      return undefined;
  }
}
function valueArb(fields: FieldTable): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, f] of Object.entries(fields)) {
    const a = fieldArb(f);
    if (a) model[name] = a;
  }
  return fc.record(model);
}

/** Bit mask (one byte per byte of the structure) of the reserved bits, recursing into structs. */
function reservedMask(layout: AnyLayout): Uint8Array {
  const m = new Uint8Array(layout.byteLength);
  const mark = (fields: FieldTable, base: number): void => {
    for (const f of Object.values(fields)) {
      if (f.kind === 'reserved') for (let b = base + f.bit; b < base + f.bit + f.width; b++) m[b >>> 3]! |= 0x80 >>> (b & 7);
      else if (f.kind === 'struct') mark(f.layout.fields, base + f.bit);
      else if (f.kind === 'array' && f.elem.kind === 'struct') {
        for (let i = 0; i < f.count; i++) mark(f.elem.layout.fields, base + f.elem.bit + i * f.stride);
      }
    }
  };
  mark(layout.fields, 0);
  return m;
}
function hasString(fields: FieldTable): boolean {
  return Object.values(fields).some((f) => f.kind === 'string' || (f.kind === 'struct' && hasString(f.layout.fields)));
}

/** The only acceptable failure of a decoder on untrusted input. */
function decodesOrDecodeError(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    expect(e.message).toMatch(/^cannot decode /);
  }
}

describe('round trips', () => {
  it.each(LAYOUTS.map((l) => [l.name, l] as const))('%s: decode(encode(v)) == v for generated values', (_n, layout) => {
    fc.assert(
      fc.property(valueArb(layout.fields), fc.integer({ min: 0, max: 16 }), (v, off) => {
        const buf = new Uint8Array(off + layout.byteLength + 3).fill(0x5a);
        layout.encode(v, buf, off);
        expect(layout.decode(buf, off)).toEqual(v);
        expect(buf.subarray(0, off).every((b) => b === 0x5a)).toBe(true);
        expect(buf.subarray(off + layout.byteLength).every((b) => b === 0x5a)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });

  it.each(LAYOUTS.filter((l) => !hasString(l.fields)).map((l) => [l.name, l] as const))(
    '%s: encode(decode(bytes)) == bytes with reserved bits cleared',
    (_n, layout) => {
      const mask = reservedMask(layout);
      fc.assert(
        fc.property(fc.uint8Array({ minLength: layout.byteLength, maxLength: layout.byteLength }), (bytes) => {
          const out = layout.encode(layout.decode(bytes));
          expect(Array.from(out)).toEqual(Array.from(bytes, (b, i) => b & ~mask[i]! & 0xff));
        }),
        { numRuns: RUNS },
      );
    },
  );

  it('SA messages: encodeSaMad/decodeSaMad/decodeSaRecords round-trip records of every layout', () => {
    const entries = Object.entries(SA_RECORDS).filter(([, l]) => !hasString(l.fields));
    for (const [attr, layout] of entries) {
      fc.assert(
        fc.property(fc.array(valueArb(layout.fields), { maxLength: 4 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (recs, mask) => {
          const b = encodeSaMad({ header: { method: 0x92, attrId: Number(attr), tid: 7n }, sa: { componentMask: mask } }, { layout, records: recs });
          const m = decodeSaMad(b);
          expect(m.sa.componentMask).toBe(mask);
          expect(decodeSaRecords(m, layout, recs.length)).toEqual(recs);
        }),
        { numRuns: 30 },
      );
    }
  });
});

// ---------- fuzz: random, short and mutated bytes ----------

const goldenDir = fileURLToPath(new URL('golden/sa/', import.meta.url));
function goldenMads(): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const f of readdirSync(goldenDir).filter((n) => n.endsWith('.txt'))) {
    let cur: number[] | undefined;
    for (const line of readFileSync(goldenDir + f, 'utf8').split('\n')) {
      if (/^SA (Request|Response):/.test(line)) {
        if (cur?.length) out.push(Uint8Array.from(cur));
        cur = [];
      } else if (cur && /^([0-9a-f]{4} ?)+$/.test(line.trim())) {
        for (const w of line.trim().split(/\s+/)) cur.push(parseInt(w.slice(0, 2), 16), parseInt(w.slice(2, 4), 16));
      } else if (cur) {
        if (cur.length) out.push(Uint8Array.from(cur));
        cur = undefined;
      }
    }
    if (cur?.length) out.push(Uint8Array.from(cur));
  }
  return out;
}

function decodeEverything(bytes: Uint8Array, offset: number): void {
  for (const l of LAYOUTS) decodesOrDecodeError(() => l.decode(bytes, offset));
  decodesOrDecodeError(() => decodeRmpp(bytes));
  decodesOrDecodeError(() => {
    const m = decodeSaMad(bytes);
    const layout = SA_RECORDS[m.header.attrId];
    if (layout) {
      decodesOrDecodeError(() => saRecordCount(m, layout));
      decodesOrDecodeError(() => decodeSaRecords(m, layout));
    }
    for (const l of Object.values(SA_RECORDS)) decodesOrDecodeError(() => decodeSaRecords(m, l));
    if (m.header.attrId === SaAttr.MultiPathRecord && m.data.length >= MultiPathRecord.byteLength) {
      decodesOrDecodeError(() => multiPathGids(MultiPathRecord.decode(m.data)));
    }
  });
}

describe('fuzz: decoders return a value or throw DecodeError, nothing else', () => {
  it('random bytes of any length at any offset', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.oneof(fc.constant(0), fc.integer({ min: -4, max: 300 }), fc.double()), (bytes, offset) => {
        decodeEverything(bytes, offset);
      }),
      { numRuns: 300 },
    );
  });

  it('random bytes behind a valid SA header for every attribute', () => {
    const attrs = Object.keys(SA_RECORDS).map(Number);
    fc.assert(
      fc.property(
        fc.constantFrom(...attrs),
        fc.constantFrom(0x81, 0x92, 0x94, 0x12, 0x01, 0x95),
        fc.integer({ min: 0, max: 0xffff }),
        fc.record({ type: fc.integer({ min: 0, max: 255 }), flags: fc.integer({ min: 0, max: 7 }), data2: fc.integer({ min: 0, max: 2 ** 32 - 1 }) }),
        fc.uint8Array({ maxLength: 600 }),
        (attrId, method, attributeOffset, rmpp, data) => {
          const b = encodeSaMad({ header: { attrId, method }, rmpp, sa: { attributeOffset } }, data);
          decodeEverything(b, 0);
          decodeEverything(b.subarray(0, Math.min(b.length, 56 + (data.length >> 1))), 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('captured MADs, mutated and truncated', () => {
    const mads = goldenMads();
    expect(mads.length).toBeGreaterThan(20);
    fc.assert(
      fc.property(
        fc.constantFrom(...mads),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
        fc.nat(),
        (mad, flips, cut) => {
          const b = Uint8Array.from(mad);
          for (const [i, v] of flips) b[i % b.length] = v;
          decodeEverything(b, 0);
          decodeEverything(b.subarray(0, cut % (b.length + 1)), 0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('non-byte-array input is a DecodeError', () => {
    expect(() => decodeSaMad([1, 2, 3] as unknown as Uint8Array)).toThrow(DecodeError);
    expect(() => decodeRmpp('x' as unknown as Uint8Array)).toThrow(DecodeError);
  });
});

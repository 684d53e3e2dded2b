import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readBig, readBits, type AnyLayout } from '../src/wire/layout.js';
import { defineView, type ViewType } from '../src/wire/view.js';
import { DecodeError, EncodeError } from '../src/wire/errors.js';
import { MadHeader, MadHeaderView, SmpDr, SmpDrView, SmpLid, SmpLidView } from '../src/wire/mad.js';
import { RmppHeader, RmppHeaderView } from '../src/wire/rmpp.js';
import { SaHeader, SaHeaderView, SaMadHeader } from '../src/wire/sa.js';
import { LinearForwardingTable, SLtoVLMappingTable } from '../src/wire/sma.js';
import { Trap256Details } from '../src/wire/notice.js';
import { arbValue } from './helpers/arb.js';


// eslint-disable-next-line @typescript-eslint/no-explicit-any
const VIEWS: Array<[string, AnyLayout, ViewType<any>]> = [
  ['MadHeader', MadHeader, MadHeaderView],
  ['SmpLid', SmpLid, SmpLidView],
  ['SmpDr', SmpDr, SmpDrView],
  ['RmppHeader', RmppHeader, RmppHeaderView],
  ['SaHeader', SaHeader, SaHeaderView],
  ['SaMadHeader', SaMadHeader, defineView(SaMadHeader)],
];

describe('views agree with decode/encode on every header layout', () => {
  for (const [name, layout, V] of VIEWS) {
    const live = Object.entries(layout.fields).filter(([, f]) => f.kind !== 'reserved');
    const reservedFields = Object.values(layout.fields).filter((f) => f.kind === 'reserved');
    it(`${name}: every getter reads what encode wrote`, () => {
      fc.assert(
        fc.property(arbValue(layout), fc.nat(16), fc.uint8Array({ minLength: 16, maxLength: 16 }), (value, off, junk) => {
          const buf = new Uint8Array(off + layout.byteLength + 16);
          buf.set(junk.subarray(0, off), 0);
          layout.encode(value, buf, off);
          const v = V.over(buf, off) as unknown as Record<string, unknown>;
          for (const [k] of live) expect(v[k]).toEqual(value[k]);
          expect((v as unknown as { decode(): unknown }).decode()).toEqual(value);
        }),
        { numRuns: 200 },
      );
    });
    it(`${name}: setters write what decode reads, touching nothing else`, () => {
      fc.assert(
        fc.property(arbValue(layout), fc.nat(8), fc.uint8Array({ minLength: layout.byteLength + 16, maxLength: layout.byteLength + 16 }), (value, off, start) => {
          const buf = Uint8Array.from(start);
          const before = Uint8Array.from(buf);
          const v = V.over(buf, off) as unknown as Record<string, unknown>;
          for (const [k] of live) v[k] = value[k];
          expect(layout.decode(buf, off)).toEqual(value);
          // bytes around the structure and its reserved bits are as they were
          expect(Array.from(buf.subarray(0, off))).toEqual(Array.from(before.subarray(0, off)));
          expect(Array.from(buf.subarray(off + layout.byteLength))).toEqual(Array.from(before.subarray(off + layout.byteLength)));
          for (const r of reservedFields) {
            const read = (b: Uint8Array) => (r.width <= 32 ? readBits(b, off * 8 + r.bit, r.width) : readBig(b, off * 8 + r.bit, r.width));
            expect(read(buf)).toEqual(read(before));
          }
        }),
        { numRuns: 200 },
      );
    });
    it(`${name}: setting one field leaves every other field's value`, () => {
      fc.assert(
        fc.property(arbValue(layout), arbValue(layout), fc.nat(live.length - 1), (a, b, i) => {
          const buf = layout.encode(a);
          const [k] = live[i]!;
          (V.over(buf) as unknown as Record<string, unknown>)[k] = b[k];
          expect(layout.decode(buf)).toEqual({ ...a, [k]: b[k] });
        }),
        { numRuns: 200 },
      );
    });
  }
});

describe('view checks', () => {
  it('checks the length once, at creation (DecodeError)', () => {
    expect(() => MadHeaderView.over(new Uint8Array(23))).toThrow(DecodeError);
    expect(() => SmpDrView.over(new Uint8Array(256), 1)).toThrow(/SmpDr/);
    expect(() => RmppHeaderView.over(new Uint8Array(35), 24)).toThrow(DecodeError);
    expect(RmppHeaderView.over(new Uint8Array(36), 24).flags).toBe(0);
  });
  it('rejects out-of-range values as encode does (EncodeError)', () => {
    const h = SmpDrView.over(new Uint8Array(256));
    expect(() => (h.status = 0x8000)).toThrow(EncodeError);
    expect(() => (h.direction = 2)).toThrow(EncodeError);
    expect(() => (h.method = -1)).toThrow(EncodeError);
    expect(() => (h.method = 1.5)).toThrow(EncodeError);
    expect(() => (h.tid = -1n)).toThrow(EncodeError);
    expect(() => ((h as unknown as { tid: number }).tid = 1)).toThrow(EncodeError);
    expect(() => ((h as unknown as { attrMod: bigint }).attrMod = 1n)).toThrow(EncodeError);
    expect(() => h.setAt('initialPath', 1, 256)).toThrow(EncodeError);
    expect(() => h.at('initialPath', 64)).toThrow(RangeError);
  });
  it('reads the DR fields in place, the common header view the same bytes as one status', () => {
    const b = SmpDr.encode({ method: 0x81, direction: 1, status: 0x1c, hopPointer: 2, hopCount: 3, initialPath: [0, 4, 9] });
    const dr = SmpDrView.over(b);
    expect([dr.direction, dr.status, dr.hopPointer, dr.hopCount, dr.at('initialPath', 2)]).toEqual([1, 0x1c, 2, 3, 9]);
    const h = MadHeaderView.over(b);
    expect(h.status).toBe(0x801c);
    expect(h.classSpecific).toBe(0x0203);
    dr.setAt('returnPath', 1, 7);
    expect(SmpDr.decode(b).returnPath[1]).toBe(7);
  });
});

describe('at/setAt on integer arrays', () => {
  // Arrays of bytes take inline cases, others the general bit reader: both must agree with encode/decode.
  const ARRAYS: Array<[AnyLayout, string]> = [
    [SmpDr, 'initialPath'],
    [SmpDr, 'returnPath'],
    [LinearForwardingTable, 'ports'],
    [Trap256Details, 'drReturnPath'],
    [SLtoVLMappingTable, 'vls'],
  ];
  for (const [layout, field] of ARRAYS) {
    const f = layout.fields[field]!;
    if (f.kind !== 'array' || f.elem.kind !== 'uint') throw new Error(`${layout.name}.${field} is not an integer array`);
    const { count } = f;
    const max = 2 ** f.elem.width - 1;
    const V = defineView(layout);
    it(`${layout.name}.${field}: at reads and setAt writes one element, at any offset`, () => {
      fc.assert(
        fc.property(arbValue(layout), fc.nat(8), fc.nat(count - 1), fc.integer({ min: 0, max }), (value, off, i, x) => {
          const buf = new Uint8Array(off + layout.byteLength + 8).fill(0x5a);
          layout.encode(value, buf, off);
          const v = V.over(buf, off) as unknown as { at(f: string, i: number): number; setAt(f: string, i: number, x: number): void };
          const arr = value[field] as number[];
          for (let k = 0; k < count; k++) expect(v.at(field, k)).toBe(arr[k]);
          const before = Uint8Array.from(buf);
          v.setAt(field, i, x);
          expect(layout.decode(buf, off)).toEqual({ ...value, [field]: arr.map((e, k) => (k === i ? x : e)) });
          expect(Array.from(buf.subarray(0, off))).toEqual(Array.from(before.subarray(0, off)));
          expect(Array.from(buf.subarray(off + layout.byteLength))).toEqual(Array.from(before.subarray(off + layout.byteLength)));
        }),
        { numRuns: 100 },
      );
    });
    it(`${layout.name}.${field}: rejects bad indices (RangeError) and values (EncodeError), writing nothing`, () => {
      const buf = new Uint8Array(layout.byteLength);
      const v = V.over(buf) as unknown as { at(f: string, i: unknown): number; setAt(f: string, i: unknown, x: unknown): void };
      for (const i of [-1, count, 1.5, NaN, '1', undefined]) {
        expect(() => v.at(field, i)).toThrow(RangeError);
        expect(() => v.setAt(field, i, 1)).toThrow(RangeError);
      }
      for (const x of [-1, max + 1, 1.5, NaN, '1', 1n, undefined]) expect(() => v.setAt(field, 0, x)).toThrow(EncodeError);
      expect(buf.every((b) => b === 0)).toBe(true);
      expect(() => v.at('nope', 0)).toThrow(TypeError);
      expect(() => v.setAt('nope', 0, 0)).toThrow(TypeError);
    });
  }
});

describe('SMP framings compose the common header', () => {
  it('SmpLid starts with the MadHeader fields themselves; SmpDr refines Status and ClassSpecific only', () => {
    for (const [k, f] of Object.entries(MadHeader.fields)) expect(SmpLid.fields[k as keyof typeof SmpLid.fields]).toBe(f);
    for (const [k, f] of Object.entries(MadHeader.fields)) {
      if (k === 'status' || k === 'classSpecific') continue;
      expect(SmpDr.fields[k as keyof typeof SmpDr.fields]).toBe(f);
    }
    expect(Object.keys(SmpDr.fields).slice(0, 12)).toEqual(['baseVersion', 'mgmtClass', 'classVersion', 'method', 'direction', 'status', 'hopPointer', 'hopCount', 'tid', 'attrId', 'reserved1', 'attrMod']);
  });
});

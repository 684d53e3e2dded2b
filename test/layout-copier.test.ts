/** recordCopier: a record's bytes copied with its reserved bits cleared must be exactly what
 * encoding its decoded value gives. Witness: the layout's own decode then encode, on random bytes
 * (fast-check), for every layout the wire modules export; a layout with a string field has no
 * copier (its decode stops at the first NUL, so the two differ). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { defineLayout, recordCopier, reserved, str, uint, type AnyLayout } from '../src/wire/layout.js';
import { DecodeError, EncodeError } from '../src/wire/errors.js';
import * as sma from '../src/wire/sma.js';
import * as mad from '../src/wire/mad.js';
import * as pma from '../src/wire/pma.js';
import * as saRecords from '../src/wire/sa-records.js';
import * as notice from '../src/wire/notice.js';
import * as router from '../src/wire/router.js';
import * as rmpp from '../src/wire/rmpp.js';
import * as cpi from '../src/wire/classportinfo.js';

const layouts: AnyLayout[] = [];
for (const mod of [sma, mad, pma, saRecords, notice, router, rmpp, cpi]) {
  for (const v of Object.values(mod)) {
    const l = v as Partial<AnyLayout>;
    if (l && typeof l === 'object' && typeof l.byteLength === 'number' && l.fields && typeof l.encode === 'function' && typeof l.decode === 'function') layouts.push(l as AnyLayout);
  }
}

function hasString(l: AnyLayout): boolean {
  return Object.values(l.fields as Record<string, { kind: string; layout?: AnyLayout; elem?: { kind: string; layout?: AnyLayout } }>).some(
    (f) => f.kind === 'string' || (f.kind === 'struct' && hasString(f.layout!)) || (f.kind === 'array' && f.elem!.kind === 'struct' && hasString(f.elem!.layout!)),
  );
}

describe('recordCopier', () => {
  it('finds the wire layouts (PortInfo among them)', () => {
    expect(layouts.length).toBeGreaterThan(20);
    expect(layouts).toContain(sma.PortInfo);
    expect(recordCopier(sma.PortInfo)).toBeDefined();
  });

  it('gives encode(decode(bytes)) for every layout without a string field, at any offsets', () => {
    let checked = 0;
    for (const l of layouts) {
      const copy = recordCopier(l);
      if (hasString(l)) {
        expect(copy, l.name).toBeUndefined();
        continue;
      }
      expect(copy, l.name).toBeDefined();
      checked++;
      fc.assert(
        fc.property(fc.uint8Array({ minLength: l.byteLength + 8, maxLength: l.byteLength + 8 }), fc.integer({ min: 0, max: 8 }), fc.integer({ min: 0, max: 5 }), (src, so, dO) => {
          const want = l.encode(l.decode(src, so) as never);
          const dst = new Uint8Array(l.byteLength + 5).fill(0x5a);
          copy!(src, so, dst, dO);
          expect(dst.subarray(dO, dO + l.byteLength)).toEqual(want);
          // nothing outside the record is touched
          for (let i = 0; i < dst.length; i++) if (i < dO || i >= dO + l.byteLength) expect(dst[i]).toBe(0x5a);
        }),
        { numRuns: 40 },
      );
    }
    expect(checked).toBeGreaterThan(15);
  });

  it('clears exactly the reserved bits of a small table', () => {
    const L = defineLayout('T', 3, { a: uint(0, 5), r: reserved(5, 6), b: uint(11, 13) });
    const out = new Uint8Array(3);
    recordCopier(L)!(Uint8Array.of(0xff, 0xff, 0xff), 0, out, 0);
    // bits 5..10 cleared: byte 0 keeps its top 5 bits, byte 1 loses its top 3
    expect([...out]).toEqual([0xf8, 0x1f, 0xff]);
    expect(recordCopier(defineLayout('S', 4, { s: str(0, 4) }))).toBeUndefined();
  });

  it('refuses a record that does not fit, as decode and encode do', () => {
    const copy = recordCopier(sma.PortInfo)!;
    expect(() => copy(new Uint8Array(63), 0, new Uint8Array(64), 0)).toThrow(DecodeError);
    expect(() => copy(new Uint8Array(64), 0, new Uint8Array(64), 1)).toThrow(EncodeError);
  });
});

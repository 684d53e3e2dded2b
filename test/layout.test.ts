import { describe, expect, it } from 'vitest';
import { defineLayout, uint, u64, readBits, writeBits, readBig, writeBig, array, reserved, str, componentsMatch } from '../src/wire/layout.js';
import { DecodeError, EncodeError } from '../src/wire/errors.js';
import { SmpDr } from '../src/wire/mad.js';

describe('bit access', () => {
  it('reads and writes unaligned fields without touching neighbours', () => {
    for (let pos = 0; pos < 40; pos++) {
      for (const width of [1, 3, 4, 7, 12, 16, 20, 27, 32]) {
        const b = new Uint8Array(12).fill(0xa5);
        const before = Uint8Array.from(b);
        const v = (2 ** width - 1) & 0x5a5a5a5a;
        writeBits(b, pos, width, v >>> 0);
        expect(readBits(b, pos, width)).toBe(v >>> 0);
        // bits outside the field unchanged
        for (let bit = 0; bit < 96; bit++) {
          if (bit >= pos && bit < pos + width) continue;
          expect(readBits(b, bit, 1)).toBe(readBits(before, bit, 1));
        }
      }
    }
  });
  it('handles 64-bit fields', () => {
    const b = new Uint8Array(16);
    writeBig(b, 4, 64, 0x0123456789abcdefn);
    expect(readBig(b, 4, 64)).toBe(0x0123456789abcdefn);
    expect(b[0]).toBe(0x00);
    expect(b[1]).toBe(0x12);
  });
});

describe('defineLayout', () => {
  const L = defineLayout('T', 16, {
    a: uint(0, 4),
    b: uint(4, 12),
    r: reserved(16, 16),
    c: u64(32, 64),
    d: array(uint(96, 4), 4, 4),
    e: str(112, 2),
  });
  it('encodes every byte, reserved as zero, and round-trips', () => {
    const buf = new Uint8Array(20).fill(0xee);
    L.encode({ a: 3, b: 0xabc, c: 5n, d: [1, 2, 3, 4], e: 'hi' }, buf, 2);
    expect(Array.from(buf.subarray(2, 18))).toEqual([0x3a, 0xbc, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5, 0x12, 0x34, 0x68, 0x69]);
    expect(buf[0]).toBe(0xee);
    expect(buf[18]).toBe(0xee);
    expect(L.decode(buf, 2)).toEqual({ a: 3, b: 0xabc, c: 5n, d: [1, 2, 3, 4], e: 'hi' });
  });
  it('rejects short input with a typed error naming the structure', () => {
    expect(() => L.decode(new Uint8Array(15))).toThrow(DecodeError);
    expect(() => L.decode(new Uint8Array(15))).toThrow(/T/);
  });
  it('rejects out-of-range values', () => {
    expect(() => L.encode({ a: 16 })).toThrow(EncodeError);
    expect(() => L.encode({ c: -1n })).toThrow(EncodeError);
  });
  it('numbers components in table order, reserved included', () => {
    expect(L.components.map((c) => c.path)).toEqual(['a', 'b', 'r', 'c', 'd', 'e']);
    expect(L.mask('c', 'e')).toBe((1n << 3n) | (1n << 5n));
    const x = L.encode({ a: 1, b: 2, c: 9n });
    const y = L.encode({ a: 1, b: 3, c: 9n });
    expect(componentsMatch(L, L.mask('a', 'c'), x, 0, y, 0)).toBe(true);
    expect(componentsMatch(L, L.mask('b'), x, 0, y, 0)).toBe(false);
  });
});

describe('SMP framing', () => {
  it('places the DR fields where the spec puts them', () => {
    const b = SmpDr.encode({ baseVersion: 1, mgmtClass: 0x81, classVersion: 1, method: 1, direction: 1, status: 0, hopPointer: 2, hopCount: 3, tid: 0x1122n, attrId: 0x11, drSlid: 0xffff, drDlid: 0xffff, initialPath: [0, 1, 5, 7] });
    expect(b.length).toBe(256);
    expect(b[4]).toBe(0x80);
    expect(b[6]).toBe(2);
    expect(b[7]).toBe(3);
    expect(b[17]).toBe(0x11);
    expect(b[32]).toBe(0xff);
    expect(b[128 + 1]).toBe(1);
    expect(b[128 + 3]).toBe(7);
  });
});

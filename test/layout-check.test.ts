import { describe, expect, it } from 'vitest';
import { array, defineLayout, reserved, struct, uint } from '../src/wire/layout.js';
import { LayoutError } from '../src/wire/errors.js';

describe('defineLayout checks the table tiles the structure', () => {
  it('rejects a gap between fields', () => {
    expect(() => defineLayout('G', 4, { a: uint(0, 8), b: uint(16, 16) })).toThrow(LayoutError);
    expect(() => defineLayout('G', 4, { a: uint(0, 8), b: uint(16, 16) })).toThrow(/bits 8\.\.15 belong to no field/);
  });
  it('rejects a gap at the end', () => {
    expect(() => defineLayout('E', 4, { a: uint(0, 16) })).toThrow(/bits 16\.\.31 .*at the end/);
  });
  it('rejects overlapping fields, whatever their table order', () => {
    expect(() => defineLayout('O', 2, { a: uint(0, 9), b: uint(8, 8) })).toThrow(/overlaps a/);
    expect(() => defineLayout('O', 2, { b: uint(4, 12), a: uint(0, 8) })).toThrow(LayoutError);
  });
  it('rejects a field past the end', () => {
    expect(() => defineLayout('X', 1, { a: uint(0, 16) })).toThrow(/exceeds 1 bytes/);
  });
  it('accepts reserved fields filling the gaps, arrays and structs owning their extent', () => {
    const inner = defineLayout('I', 2, { x: uint(0, 16) });
    const l = defineLayout('OK', 8, { a: uint(0, 4), r: reserved(4, 4), d: array(uint(8, 4), 2, 8), r1: reserved(20, 4), s: struct(24, inner), r2: reserved(40, 24) });
    expect(l.byteLength).toBe(8);
  });
});

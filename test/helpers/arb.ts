/** fast-check arbitraries of valid values, derived from a layout's field table (the fuzz and
 * view tests share them). */
import fc from 'fast-check';
import type { AnyLayout, FieldSpec } from '../../src/wire/layout.js';

/** An arbitrary of valid values, derived from the field table. */
export function arbField(f: FieldSpec): fc.Arbitrary<unknown> {
  switch (f.kind) {
    case 'uint':
      return fc.integer({ min: 0, max: 2 ** f.width - 1 });
    case 'u64':
    case 'gid':
      return fc.bigInt({ min: 0n, max: (1n << BigInt(f.width)) - 1n });
    case 'bytes':
      return fc.uint8Array({ minLength: f.width / 8, maxLength: f.width / 8 });
    case 'string':
      // printable ASCII: one byte per character, no NUL
      return fc.string({ unit: fc.constantFrom(...'abcXYZ019 -_.:/'), maxLength: f.width / 8 });
    case 'array':
      return fc.array(arbField(f.elem), { minLength: f.count, maxLength: f.count });
    case 'struct':
      return arbValue(f.layout);
    case 'reserved':
      return fc.constant(undefined);
  }
}
export function arbValue(l: AnyLayout): fc.Arbitrary<Record<string, unknown>> {
  const rec: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, f] of Object.entries(l.fields)) if (f.kind !== 'reserved') rec[name] = arbField(f);
  return fc.record(rec);
}

/** MadRpc's directed-route SMP builder (rpc/smp-dr, issue #16: a template copy and the varying
 * fields instead of a view per SMP) gives the bytes of the generic encoder (wire/builders.smpDr)
 * for any method, path, attribute, modifier, data and M_Key, into a new or a dirty reused buffer,
 * and throws the generic encoder's EncodeError for anything it would refuse. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { buildSmpDr } from '../src/rpc/smp-dr.js';
import { smpDr, MAX_DR_HOPS } from '../src/wire/builders.js';
import { MAD_SIZE, SmpDr } from '../src/wire/mad.js';

const generic = (method: number, path: number[], attrId: number, attrMod: number, data: Uint8Array | undefined, mkey: bigint, into?: Uint8Array) =>
  smpDr(path, { method, attrId, attrMod, ...(data ? { data } : {}), mkey }, into);

const outcome = (f: () => Uint8Array): { bytes?: number[]; error?: string } => {
  try {
    return { bytes: [...f()] };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
};

const valid = fc.record({
  method: fc.integer({ min: 0, max: 255 }),
  path: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: MAX_DR_HOPS }),
  attrId: fc.integer({ min: 0, max: 0xffff }),
  attrMod: fc.integer({ min: 0, max: 0xffffffff }),
  data: fc.option(fc.uint8Array({ maxLength: 64 }), { nil: undefined }),
  mkey: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n })),
});

// Out-of-range values mixed in: each field now and then something the encoder must refuse.
const odd = fc.oneof(fc.constant(-1), fc.constant(1.5), fc.constant(Number.NaN), fc.constant(2 ** 32), fc.constant(256), fc.constant(0x10000));
const anyInput = fc.record({
  method: fc.oneof(fc.integer({ min: 0, max: 255 }), odd),
  path: fc.array(fc.oneof(fc.integer({ min: 0, max: 255 }), odd), { maxLength: MAX_DR_HOPS + 2 }),
  attrId: fc.oneof(fc.integer({ min: 0, max: 0xffff }), odd),
  attrMod: fc.oneof(fc.integer({ min: 0, max: 0xffffffff }), odd),
  data: fc.option(fc.uint8Array({ maxLength: 66 }), { nil: undefined }),
  mkey: fc.oneof(fc.constant(0n), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.constant(-1n), fc.constant(2n ** 64n)),
  into: fc.option(fc.oneof(fc.uint8Array({ minLength: MAD_SIZE, maxLength: MAD_SIZE }), fc.uint8Array({ maxLength: 8 })), { nil: undefined }),
});

describe('rpc/smp-dr buildSmpDr', () => {
  it('gives the generic encoder’s bytes for every valid SMP, new buffer or dirty reused one', () => {
    fc.assert(
      fc.property(valid, fc.uint8Array({ minLength: MAD_SIZE, maxLength: MAD_SIZE }), (v, dirty) => {
        const want = [...generic(v.method, v.path, v.attrId, v.attrMod, v.data, v.mkey)];
        expect([...buildSmpDr(v.method, v.path, v.attrId, v.attrMod, v.data, v.mkey)]).toEqual(want);
        const into = dirty.slice();
        const got = buildSmpDr(v.method, v.path, v.attrId, v.attrMod, v.data, v.mkey, into);
        expect(got).toBe(into);
        expect([...got]).toEqual(want);
      }),
      { numRuns: 400, seed: 16 },
    );
  });

  it('the fields read back as written (decoded by the SmpDr table)', () => {
    const mad = buildSmpDr(0x02, [1, 7, 36], 0x0019, 0x00010203, Uint8Array.of(9, 8, 7), 0x0123456789abcdefn);
    const d = SmpDr.decode(mad);
    expect(d).toMatchObject({ baseVersion: 1, mgmtClass: 0x81, classVersion: 1, method: 0x02, attrId: 0x0019, attrMod: 0x00010203, hopCount: 3, hopPointer: 0, mkey: 0x0123456789abcdefn, drSlid: 0xffff, drDlid: 0xffff });
    expect([...d.initialPath].slice(0, 5)).toEqual([0, 1, 7, 36, 0]);
    expect([...mad.subarray(64, 68)]).toEqual([9, 8, 7, 0]);
  });

  it('refuses what the generic encoder refuses, with its error, and builds the rest the same', () => {
    let refused = 0;
    fc.assert(
      fc.property(anyInput, (v) => {
        const want = outcome(() => generic(v.method, v.path, v.attrId, v.attrMod, v.data, v.mkey, v.into?.slice()));
        const got = outcome(() => buildSmpDr(v.method, v.path, v.attrId, v.attrMod, v.data, v.mkey, v.into?.slice()));
        expect(got).toEqual(want);
        if (want.error) refused++;
      }),
      { numRuns: 600, seed: 7 },
    );
    expect(refused).toBeGreaterThan(50);
  });
});

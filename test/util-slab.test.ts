/** util/slab.ts: buffers cut from shared slabs behave as fresh Uint8Arrays do (zeroed, disjoint,
 * their own length) and a copy equals slice(). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { allocBytes, copyBytes } from '../src/util/slab.js';

// The built module, in a process of its own (this one has cut slabs already).
const SLAB = pathToFileURL(new URL('../dist/util/slab.js', import.meta.url).pathname).href;

describe('slab buffers', () => {
  it('are zeroed and disjoint, whatever was written to the others', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 1, maxLength: 200 }), (sizes) => {
        const bufs = sizes.map((n) => {
          const b = allocBytes(n);
          expect(b.length).toBe(n);
          expect(b.every((x) => x === 0)).toBe(true);
          b.fill(0xa5);
          return b;
        });
        bufs.forEach((b, i) => {
          b[0] = i & 0xff;
          b[b.length - 1] = i & 0xff;
        });
        bufs.forEach((b, i) => {
          if (b.length === 0) return;
          expect(b[0]).toBe(i & 0xff);
          expect(b[b.length - 1]).toBe(i & 0xff);
          for (let k = 1; k < b.length - 1; k++) if (b[k] !== 0xa5) throw new Error(`buffer ${i} byte ${k} overwritten`);
        });
      }),
      { numRuns: 50 },
    );
  });

  it('an empty buffer first thing in a process (before any slab is cut) is a valid empty view', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', `const { allocBytes } = await import(${JSON.stringify(SLAB)}); const a = allocBytes(0); const b = allocBytes(3); console.log(a.length, b.length, b.every((x) => x === 0))`], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('0 3 true');
  });

  it('copy what slice() copies, into a buffer of their own', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (src) => {
        const c = copyBytes(src);
        expect(c).toEqual(src.slice());
        if (src.length) {
          c[0] = c[0]! ^ 0xff;
          expect(c[0]).not.toBe(src[0]);
        }
      }),
    );
  });
});

/** A layout's components and the mask of a path are derived on first use (start-up, #16); `mask`
 * looks paths up in an index built once. Checked on every layout of wire/ against the definition
 * written out here (the bits of every component whose path is the path, or continues it with "#"
 * or "."), for every path and every prefix of a path, so the index names what the scan named,
 * and refuses what it refused. */
import { describe, expect, it } from 'vitest';
import type { AnyLayout } from '../src/wire/layout.js';
import { defineLayout, struct, uint } from '../src/wire/layout.js';
import * as mad from '../src/wire/mad.js';
import * as sma from '../src/wire/sma.js';
import * as sa from '../src/wire/sa.js';
import * as pma from '../src/wire/pma.js';
import * as notice from '../src/wire/notice.js';
import * as rmpp from '../src/wire/rmpp.js';
import * as router from '../src/wire/router.js';
import * as cpi from '../src/wire/classportinfo.js';

const isLayout = (v: unknown): v is AnyLayout =>
  typeof v === 'object' && v !== null && typeof (v as AnyLayout).mask === 'function' && typeof (v as AnyLayout).byteLength === 'number' && 'fields' in v;

const LAYOUTS = new Map<string, AnyLayout>();
for (const mod of [mad, sma, sa, pma, notice, rmpp, router, cpi] as Record<string, unknown>[]) for (const v of Object.values(mod)) if (isLayout(v)) LAYOUTS.set(v.name, v);

/** The mask of one path by a scan of the components, or undefined where none is named. */
function scanMask(layout: AnyLayout, p: string): bigint | undefined {
  const hits = layout.components.filter((c) => c.path === p || c.path.startsWith(p + '#') || c.path.startsWith(p + '.'));
  if (hits.length === 0) return undefined;
  let m = 0n;
  for (const c of hits) m |= 1n << BigInt(c.index);
  return m;
}

describe('layout component masks', () => {
  it('finds the layouts of wire/', () => {
    for (const n of ['NodeInfo', 'PortInfo', 'PortInfoRecord', 'PathRecord', 'MCMemberRecord', 'ServiceRecord', 'MultiPathRecord']) expect(LAYOUTS.has(n), n).toBe(true);
    expect(LAYOUTS.size).toBeGreaterThan(40);
  });

  it('mask(path) is the bits of the components the path names, for every path and prefix of every layout', () => {
    let checked = 0;
    for (const layout of LAYOUTS.values()) {
      const paths = new Set<string>();
      for (const c of layout.components) for (let i = 1; i <= c.path.length; i++) paths.add(c.path.slice(0, i));
      paths.add('no-such-field');
      for (const p of paths) {
        const want = scanMask(layout, p);
        if (want === undefined) expect(() => layout.mask(p), `${layout.name} ${p}`).toThrow(`layout ${layout.name} has no component ${p}`);
        else expect(layout.mask(p), `${layout.name} ${p}`).toBe(want);
        checked++;
      }
      // several paths OR together
      const all = layout.components.map((c) => c.path);
      expect(layout.mask(...all)).toBe(all.reduce((m, p) => m | scanMask(layout, p)!, 0n));
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('components tile an embedded structure in place, the same array on every read', () => {
    const Inner = defineLayout('Inner', 2, { a: uint(0, 8), b: uint(8, 8, { cm: 2 }) });
    const Outer = defineLayout('Outer', 3, { x: uint(0, 8), s: struct(8, Inner) });
    expect(Outer.components.map((c) => [c.index, c.path, c.bit, c.width])).toEqual([
      [0, 'x', 0, 8],
      [1, 's.a', 8, 8],
      [2, 's.b#0', 16, 4],
      [3, 's.b#1', 20, 4],
    ]);
    expect(Outer.components).toBe(Outer.components);
    expect(Outer.mask('s.b')).toBe(0b1100n);
    expect(Outer.mask('s')).toBe(0b1110n);
    expect(() => Outer.mask('s.')).toThrow('layout Outer has no component s.');
  });
});

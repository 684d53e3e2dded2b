/** rpc/ident.ts: the per-destination window key of a directed route is one per path (numbers for
 * paths of up to 6 hops, strings beyond), never a LID-routed key. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { defaultDestinationKey } from '../src/rpc/ident.js';
import { smpGetDr, smpGetLid } from '../src/wire/builders.js';
import { SmpAttr } from '../src/wire/mad.js';

const key = (path: number[]) => defaultDestinationKey(smpGetDr(path, SmpAttr.NodeInfo), { lid: 0xffff, qpn: 0 });
const pathArb = fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 10 });

describe('destination keys', () => {
  it('are equal for the same path and distinct for distinct paths', () => {
    fc.assert(
      fc.property(pathArb, pathArb, (a, b) => {
        expect(key(a)).toBe(key([...a]));
        const same = a.length === b.length && a.every((x, i) => x === b[i]);
        expect(key(a) === key(b)).toBe(same);
      }),
      { numRuns: 2000 },
    );
    // the cases a base-256 mix-up would merge
    expect(new Set([key([]), key([0]), key([0, 0]), key([1]), key([0, 1]), key([1, 0]), key([255]), key([1, 255])]).size).toBe(8);
  });

  it('are numbers up to 6 hops, strings beyond, and never a LID', () => {
    fc.assert(
      fc.property(pathArb, fc.integer({ min: 0, max: 0xffff }), (p, lid) => {
        const k = key(p);
        expect(typeof k).toBe(p.length <= 6 ? 'number' : 'string');
        if (typeof k === 'number') expect(Number.isSafeInteger(k) && k < 0).toBe(true);
        expect(defaultDestinationKey(smpGetLid(SmpAttr.NodeInfo), { lid, qpn: 0 })).toBe(lid);
        expect(k).not.toBe(lid);
      }),
    );
  });
});

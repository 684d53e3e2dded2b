// emptyLfts: every switch's table over LIDs 0..maxLid, NO_ROUTE but the switch's own LID (port 0),
// each at a 64-byte boundary of one buffer (the verifier's block read takes aligned tables 32 bits
// at a time), and the tables of different switches never overlap.
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { emptyLfts, indexFabric } from '../src/routing/graph.js';

describe('emptyLfts', () => {
  for (const spec of ['gen:fattree2:leaves=3,spines=2,hosts=5', 'gen:fattree3:radix=8', 'gen:torus:3x3x2,hosts=1']) {
    it(`aligned, disjoint, NO_ROUTE but each switch's own LID (${spec})`, () => {
      const fabric = loadFabricSpec(spec);
      assignLids(fabric, { lmc: 0 });
      const ix = indexFabric(fabric);
      const lfts = emptyLfts(ix);
      expect(lfts.length).toBe(ix.nSw);
      const own = new Map<number, number>();
      for (const ep of ix.ends) if (ep.isSwitch && ep.sw >= 0) own.set(ep.sw, ep.lid);
      let prevEnd = -1;
      for (let s = 0; s < ix.nSw; s++) {
        const t = lfts[s]!;
        expect(t.length).toBe(ix.maxLid + 1);
        expect(t.byteOffset % 64).toBe(0);
        expect(t.buffer).toBe(lfts[0]!.buffer);
        expect(t.byteOffset).toBeGreaterThan(prevEnd);
        prevEnd = t.byteOffset + t.length - 1;
        for (let lid = 0; lid <= ix.maxLid; lid++) expect(t[lid]).toBe(lid === own.get(s) ? 0 : 255);
      }
      // a write to one table is seen by no other
      lfts[0]!.fill(7);
      for (let s = 1; s < ix.nSw; s++) expect(lfts[s]!.includes(7)).toBe(false);
    });
  }
});

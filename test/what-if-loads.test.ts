/** The link loads of a what-if case from the entries it changed (routing/incremental-load-delta.ts
 * deltaLoads) against the full computation it replaces (remapLoads, then every touched CA column
 * accounted as it stands, as ensureLoads does) and against computeLoads over the case's tables
 * from scratch: for every switch-to-switch link of three fabrics, with the touched columns as the
 * previous ones (routes cut where the link went: the loads a re-route starts its repairs from) and
 * as the SM's re-route left them; every channel and every counter equal. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { indexFabric } from '../src/routing/graph.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { rerouteIncremental } from '../src/routing/incremental.js';
import { columnReader, columnsOf } from '../src/routing/incremental-columns.js';
import { accountColumn, cachedLoads, computeLoads, remapLoads } from '../src/routing/incremental-load.js';
import { deltaLoads } from '../src/routing/incremental-load-delta.js';
import { failCase, intactOf, linkCases } from '../src/routing/what-if.js';
import { assignLids } from '../src/sm/lids.js';

const FABRICS: Array<[string, string[]]> = [
  ['gen:fattree3:radix=8', ['ftree']],
  ['gen:fattree2:leaves=6,spines=3,hosts=9', ['updn']],
  ['gen:torus:4x4x3,hosts=2', ['updn']],
];

describe('what-if loads from the changed entries', () => {
  for (const [spec, engines] of FABRICS) {
    it(`${spec} (${engines.join(',')}): the same loads and counters as the full computation`, () => {
      const f = loadFabricSpec(spec);
      assignLids(f, { lmc: 0 });
      const r = routeWithFallback(f, engines, { lmc: 0 }).result;
      const intact = intactOf(f, r);
      const kept = cachedLoads(r)!;
      const keptLoad = kept.load.slice();
      const read = columnReader(columnsOf(f, r), kept.ix.swGuid);
      let cases = 0;
      for (const c of linkCases(f)) {
        const nf = failCase(f, c).fabric;
        const ix = indexFabric(nf);
        const sm = rerouteIncremental(f, r, nf, { intact, balanceFactor: Infinity });
        if (!sm.ok) continue;
        const nSw = ix.nSw;
        const after = columnsOf(nf, sm.result).cm;
        const before = columnsOf(f, r).cm;
        // Touched: every column the re-route changed, and every column whose route used the link.
        const touch = new Uint8Array(ix.maxLid + 1);
        for (let l = 1; l <= ix.maxLid; l++) for (let s = 0; s < nSw; s++) if (after[l * nSw + s] !== before[l * nSw + s]) touch[l] = 1;
        for (const cm of [before, after]) {
          const W = ix.maxPorts + 1;
          const full = { load: new Float64Array(ix.adjStart[nSw]!), counters: new Int32Array(nSw * W) };
          remapLoads(kept, read, touch, ix, full.load, full.counters);
          for (let l = 1; l <= ix.maxLid; l++) {
            const o = ix.lidOwner[l]!;
            if (!touch[l] || o < 0 || ix.ends[o]!.isSwitch || ix.ends[o]!.sw < 0) continue;
            accountColumn(ix, cm.subarray(l * nSw, l * nSw + nSw), ix.ends[o]!.sw, 1, full.load, full.counters);
          }
          const load = new Float64Array(full.load.length).fill(-1);
          const counters = new Int32Array(full.counters.length).fill(-1);
          expect(deltaLoads(kept, read, touch, ix, cm, load, counters), c.name).toBe(true);
          expect(Array.from(load), c.name).toEqual(Array.from(full.load));
          expect(Array.from(counters), c.name).toEqual(Array.from(full.counters));
          if (cm === after) {
            // Independent of remapLoads: the case's tables' loads from scratch.
            expect(Array.from(load), c.name).toEqual(Array.from(computeLoads(ix, columnReader(columnsOf(nf, sm.result), ix.swGuid)).load));
          }
        }
        cases++;
      }
      expect(cases).toBeGreaterThan(0);
      // The kept loads are read, not changed.
      expect(Array.from(kept.load)).toEqual(Array.from(keptLoad));
    });
  }
});

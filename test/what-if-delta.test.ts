/** The what-if mode of the incremental re-route (IncrementalOptions.whatIf: the deadlock check
 * from the entries a case changes, routing/incremental-cdg-delta.ts; only the touched columns
 * copied, unchanged tables shared) against the SM's own mode: for every switch-to-switch link
 * and every pair of links at one switch, the same verdict, the same reason and byte-identical
 * tables; and the baseline's tables are left as they were. Any busiest link allowed, so that
 * the re-routes get as far as the deadlock check. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { rerouteIncremental } from '../src/routing/incremental.js';
import { failCase, intactOf, linkCases, type WhatIfCase } from '../src/routing/what-if.js';
import { assignLids } from '../src/sm/lids.js';

const FABRICS: Array<[string, string[]]> = [
  ['gen:fattree3:radix=8', ['ftree']],
  ['gen:fattree2:leaves=6,spines=3,hosts=9', ['updn']],
  ['gen:torus:4x4x3,hosts=2', ['updn']],
];

describe('incremental re-route, what-if mode', () => {
  for (const [spec, engines] of FABRICS) {
    it(`${spec} (${engines.join(',')}): same outcome and tables as the SM's re-route`, () => {
      const f = loadFabricSpec(spec);
      assignLids(f, { lmc: 0 });
      const r = routeWithFallback(f, engines, { lmc: 0 }).result;
      const intact = intactOf(f, r);
      const before = [...r.lfts].map(([n, t]) => [n, t.slice()] as const);
      const links = linkCases(f);
      // Pairs of links that share a switch: detours that can meet.
      const pairs: WhatIfCase[] = [];
      for (let i = 0; i < links.length && pairs.length < 60; i++) {
        const j = links.findIndex((c, k) => k > i && c.links[0]!.guid === links[i]!.links[0]!.guid);
        if (j > 0) pairs.push({ name: `${links[i]!.name} + ${links[j]!.name}`, links: [...links[i]!.links, ...links[j]!.links], nodes: [] });
      }
      let ok = 0;
      let refused = 0;
      for (const c of [...links, ...pairs]) {
        const nf = failCase(f, c).fabric;
        const sm = rerouteIncremental(f, r, nf, { intact, balanceFactor: Infinity });
        const wi = rerouteIncremental(f, r, nf, { intact, balanceFactor: Infinity, whatIf: true });
        expect(wi.ok, c.name).toBe(sm.ok);
        if (!sm.ok || !wi.ok) {
          refused++;
          if (!sm.ok && !wi.ok) expect(wi.reason, c.name).toBe(sm.reason);
          continue;
        }
        ok++;
        expect(wi.stats, c.name).toEqual(sm.stats);
        expect([...wi.result.lfts.keys()]).toEqual([...sm.result.lfts.keys()]);
        for (const [n, t] of sm.result.lfts) expect(Buffer.compare(wi.result.lfts.get(n)!, t), `${c.name}: switch node ${n}`).toBe(0);
      }
      expect(ok).toBeGreaterThan(0);
      expect(ok + refused).toBe(links.length + pairs.length);
      // The baseline's tables (shared by what-if results) are as they were.
      for (const [n, t] of before) expect(Buffer.compare(r.lfts.get(n)!, t)).toBe(0);
    });
  }
});

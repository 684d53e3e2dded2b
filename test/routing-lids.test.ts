/** Every engine routes whatever LIDs the ports have: LIDs need not be consecutive under a leaf (a
 * guid2lid file, hosts added later, router ports), and an engine's fast path for consecutive LIDs
 * must not take a list that only looks consecutive at its ends (ftree once routed [1, 6, 8, 4] as
 * 1..4 and left 6 and 8 unrouted above the leaf). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Fabric } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { endPorts } from '../src/model/snapshot.js';
import { getEngine, verifyRoutes } from '../src/routing/index.js';

/** The fabric with its end ports' LIDs set to `lids` (one per end port, in endPorts order). */
function withLids(spec: string, order: (n: number) => number[]): Fabric {
  const f = loadFabricSpec(spec);
  const eps = endPorts(f).filter((e) => e.linked || e.kind === 'switch');
  const lids = order(eps.length);
  eps.forEach((e, i) => {
    f.nodes[e.node]!.ports[e.kind === 'switch' ? 0 : e.port]!.lid = lids[i]!;
  });
  return f;
}

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=3';

describe('engines route any LID assignment', () => {
  it('ftree, minhop, updn, dfsssp and nue: complete and loop-free for shuffled, gapped LIDs', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 1 << 30 }), { minLength: 64, maxLength: 64 }), fc.integer({ min: 0, max: 3 }), (keys, gap) => {
        // a permutation of 1..n spread out by `gap` (LIDs 1, 1+g+1, ...): never consecutive when gap > 0
        const f = withLids(SPEC, (n) => {
          const idx = Array.from({ length: n }, (_, i) => i).sort((a, b) => keys[a % 64]! - keys[b % 64]! || a - b);
          const out: number[] = [];
          idx.forEach((p, k) => (out[p] = 1 + k * (gap + 1)));
          return out;
        });
        for (const engine of ['ftree', 'minhop', 'updn', 'dfsssp', 'nue']) {
          const r = verifyRoutes(f, getEngine(engine).route(f, { lmc: 0, maxVls: 8 }), { stretch: false });
          expect(r.unreachablePairs, engine).toBe(0);
          expect(r.loopEntries, engine).toBe(0);
        }
      }),
      { numRuns: 40, seed: 17 },
    );
  });

  it('the list that looks consecutive only at its ends: a leaf with LIDs 1, 6, 8 and its own 4', () => {
    // host LIDs chosen so that the first leaf's destinations are [1, 6, 8] + own 4, as a
    // subnet with router ports numbered after the switches gets them
    const f = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=3');
    const byLeaf = new Map<number, number[]>();
    for (const e of endPorts(f)) {
      if (e.kind === 'switch') continue;
      const l = f.nodes[e.node]!.ports[e.port]!.peer!.node;
      byLeaf.set(l, [...(byLeaf.get(l) ?? []), e.node]);
    }
    const [l0, l1] = [...byLeaf.keys()].sort((a, b) => a - b);
    const lidOf = new Map<number, number>();
    byLeaf.get(l0!)!.forEach((n, i) => lidOf.set(n, [1, 6, 8][i]!));
    byLeaf.get(l1!)!.forEach((n, i) => lidOf.set(n, [2, 7, 9][i]!));
    for (const e of endPorts(f)) {
      const p = f.nodes[e.node]!.ports[e.kind === 'switch' ? 0 : e.port]!;
      if (e.kind !== 'switch') p.lid = lidOf.get(e.node)!;
    }
    const sw = f.nodes.map((_n, i) => i).filter((i) => f.nodes[i]!.type === 2);
    const spine = sw.find((i) => i !== l0 && i !== l1)!;
    f.nodes[spine]!.ports[0]!.lid = 3;
    f.nodes[l0!]!.ports[0]!.lid = 4;
    f.nodes[l1!]!.ports[0]!.lid = 5;
    const r = verifyRoutes(f, getEngine('ftree').route(f, { lmc: 0 }), { stretch: false });
    expect(r.unreachablePairs).toBe(0);
    expect(r.loopEntries).toBe(0);
  });
});

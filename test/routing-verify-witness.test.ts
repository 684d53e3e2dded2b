// The verifier's figures against an independent witness: every (source CA port, destination LID)
// route followed hop by hop through the LFTs (no in-trees, no windows, no sharing between LIDs).
// The trees are oversubscribed (more hosts than up links per leaf), so that several CA LIDs of a
// leaf have the same entries at every switch, which the verifier walks once for all of them
// (routing/verify-walk.ts walkSwitch) — and the faults planted here break some of those groups.
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { getEngine, verifyRoutes, type RoutingResult } from '../src/routing/index.js';
import { identitySl2Vl } from '../src/routing/types.js';
import { fabricWithLids } from './helpers/routing-checks.js';
import { witness, witnessCycles } from './helpers/verify-witness.js';

function compare(f: Fabric, lfts: ReadonlyMap<number, Uint8Array>): void {
  const v = verifyRoutes(f, lfts, { maxFailures: 1000 });
  const w = witness(f, lfts);
  expect(v.pairs).toBe(w.pairs);
  expect(v.hops.max).toBe(w.hopMax);
  expect(v.hops.mean).toBeCloseTo(w.hopSum / w.reached, 9);
  const loads = [...w.links.values()];
  expect(v.linkLoad.max).toBe(Math.max(0, ...loads));
  expect(v.linkLoad.mean * v.linkLoad.links).toBeCloseTo(loads.reduce((a, b) => a + b, 0), 6);
  expect(v.unreachablePairs).toBe(w.unreachable);
  if (w.unreachable > 0) expect(v.ok).toBe(false);
  else expect(v.ok).toBe(true);
}

const cloneLfts = (m: ReadonlyMap<number, Uint8Array>): Map<number, Uint8Array> => new Map([...m].map(([k, t]) => [k, Uint8Array.from(t)]));
const byDesc = (f: Fabric, d: string): number => f.nodes.findIndex((n) => n.desc === d);
const portTo = (f: Fabric, a: number, b: number): number => f.nodes[a]!.ports.findIndex((p) => p?.peer?.node === b);
const caLids = (f: Fabric, leaf: number): number[] =>
  f.nodes[leaf]!.ports.flatMap((p) => (p?.peer && !isSwitch(f.nodes[p.peer.node]!) ? [f.nodes[p.peer.node]!.ports[p.peer.port]!.lid!] : []));

describe('verifier against a hop-by-hop witness (oversubscribed fat trees: LIDs with identical columns)', () => {
  for (const [spec, lmc] of [
    ['gen:fattree2:leaves=6,spines=3,hosts=9', 0],
    ['gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6', 0],
    ['gen:fattree2:leaves=4,spines=2,hosts=5', 1],
  ] as const) {
    const f = fabricWithLids(spec, lmc);
    const r = getEngine('ftree').route(f, { lmc });
    const leaf = byDesc(f, 'sw-l1-1');
    const spine = byDesc(f, spec.startsWith('gen:fattree3') ? 'sw-l2-1' : 'sw-l2-0');
    const lids = caLids(f, leaf);
    const other = byDesc(f, 'sw-l1-0');

    it(`${spec} lmc ${lmc}: clean tables`, () => compare(f, r.lfts));

    it(`${spec} lmc ${lmc}: a spine without a forwarding table (every LID of a group fails alike)`, () => {
      const t = cloneLfts(r.lfts);
      t.delete(spine);
      compare(f, t);
      const v = verifyRoutes(f, t, { maxFailures: 10_000 });
      // Each LID that fails is reported with its own LID.
      const failing = new Set(v.failures.filter((x) => x.kind === 'no-lft').map((x) => x.dlid));
      expect(failing.size).toBeGreaterThan(lids.length);
    });

    it(`${spec} lmc ${lmc}: entries missing for two LIDs of one leaf, a wrong port, a loop`, () => {
      const t = cloneLfts(r.lfts);
      t.get(other)![lids[0]!] = 255;
      t.get(other)![lids[lids.length - 1]!] = 255;
      // another leaf delivers lids[1] to one of its own hosts
      const third = byDesc(f, 'sw-l1-2');
      t.get(third)![lids[1]!] = f.nodes[third]!.ports.findIndex((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!));
      // other → spine → other for lids[2]
      t.get(other)![lids[2]!] = portTo(f, other, spine);
      t.get(spine)![lids[2]!] = portTo(f, spine, other);
      compare(f, t);
      const v = verifyRoutes(f, t);
      expect(v.loopLids).toBe(1);
      expect(v.failures.filter((x) => x.kind === 'no-route').map((x) => x.dlid)).toEqual([lids[0], lids[lids.length - 1]]);
    });
  }
});

describe('CDG cycles as the witness finds them, on switches with more than 8 links (bytes of dependency bits skipped whole)', () => {
  for (const [spec, engine] of [
    ['gen:random:switches=24,degree=10,hosts=1,seed=1', 'minhop'],
    ['gen:fattree2:leaves=12,spines=6,hosts=4', 'minhop'],
  ] as const) {
    it(`${spec} ${engine}`, () => {
      const f = fabricWithLids(spec);
      const r = getEngine(engine).route(f, { lmc: 0 });
      const res: RoutingResult = r.sl ? r : { ...r, sl: () => 0, sl2vl: identitySl2Vl(1) };
      const v = verifyRoutes(f, r);
      const w = witnessCycles(f, res);
      expect(new Map(v.cdg.filter((c) => c.dependencies > 0).map((c) => [c.vl, { cyclicComponents: c.cyclicComponents, channelsInCycles: c.channelsInCycles }]))).toEqual(w);
      // The random graph's minhop routes have cycles, the fat tree's none.
      expect([...w.values()].some((c) => c.cyclicComponents > 0)).toBe(spec.includes('random'));
    });
  }
});

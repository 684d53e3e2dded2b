// Issue 17, round 2: the verifier's linear passes against a naive walk of every (source, LID)
// pair on damaged tables; nue balanced like ftree on a big fat tree; the SL asked once per source
// switch gives the same deadlock verdict as asking every source port.
import { describe, expect, it } from 'vitest';
import { fabricWithLids as fabric } from './helpers/routing-checks.js';
import fc from 'fast-check';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { endPorts } from '../src/model/snapshot.js';
import { getEngine, verifyRoutes, type RoutingResult } from '../src/routing/index.js';


/** The reference: follow every CA source port's route to every destination LID hop by hop. */
function naive(f: Fabric, lfts: ReadonlyMap<number, Uint8Array>): { pairs: number; unreachable: number; hopsMax: number; hopsSum: number; reachedCa: number; load: Map<string, number> } {
  const eps = endPorts(f).filter((e) => e.linked && e.lid);
  const cas = eps.filter((e) => e.kind !== 'switch');
  const dests: Array<{ lid: number; node: number; port: number; ca: boolean }> = [];
  for (const e of eps) for (let l = e.lid; l < e.lid + (e.kind === 'switch' ? 1 : 1 << e.lmc); l++) dests.push({ lid: l, node: e.node, port: e.kind === 'switch' ? 0 : e.port, ca: e.kind !== 'switch' });
  let pairs = 0;
  let unreachable = 0;
  let hopsMax = 0;
  let hopsSum = 0;
  let reachedCa = 0;
  const load = new Map<string, number>();
  for (const d of dests) {
    for (const src of cas) {
      if (src.node === d.node && src.port === d.port) continue;
      pairs++;
      let node = f.nodes[src.node]!.ports[src.port]!.peer!.node;
      let hops = 1;
      const links: string[] = [];
      let ok = false;
      for (let step = 0; step <= f.nodes.length; step++) {
        const n = f.nodes[node]!;
        if (!isSwitch(n)) break;
        const t = lfts.get(node);
        const p = t && d.lid < t.length ? t[d.lid]! : 255;
        if (p === 0) {
          ok = !d.ca && node === d.node;
          break;
        }
        if (p === 255 || p > n.numPorts) break;
        const peer = n.ports[p]?.peer;
        if (!peer) break;
        hops++;
        if (isSwitch(f.nodes[peer.node]!)) {
          links.push(`${node}/${p}`);
          node = peer.node;
          continue;
        }
        ok = peer.node === d.node && peer.port === d.port;
        break;
      }
      if (!ok) {
        unreachable++;
        continue;
      }
      if (!d.ca) continue;
      reachedCa++;
      hopsSum += hops;
      hopsMax = Math.max(hopsMax, hops);
      for (const l of links) load.set(l, (load.get(l) ?? 0) + 1);
    }
  }
  return { pairs, unreachable, hopsMax, hopsSum, reachedCa, load };
}

describe('verifier: linear passes agree with a naive walk of every pair', () => {
  it('on damaged tables (random entries rewritten: dead ends, loops, wrong hosts)', () => {
    const specs = ['gen:random:switches=12,degree=3,hosts=2,seed=5', 'gen:fattree2:leaves=4,spines=2,hosts=3', 'gen:torus:3x3,hosts=1'];
    fc.assert(
      fc.property(fc.constantFrom(...specs), fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { maxLength: 12 }), (spec, damage) => {
        const f = fabric(spec, spec.includes('fattree') ? 1 : 0);
        const r = getEngine('minhop').route(f, { lmc: spec.includes('fattree') ? 1 : 0 });
        const sws = [...r.lfts.keys()];
        for (const [a, b, c] of damage) {
          const t = r.lfts.get(sws[a % sws.length]!)!;
          const lid = 1 + (b % (t.length - 1));
          t[lid] = [255, 0, 1 + (c % 6), 40][c % 4]!;
        }
        const v = verifyRoutes(f, r.lfts, { cdg: false });
        const ref = naive(f, r.lfts);
        expect(v.pairs).toBe(ref.pairs);
        expect(v.unreachablePairs).toBe(ref.unreachable);
        expect(v.hops.max).toBe(ref.hopsMax);
        expect(v.hops.mean).toBeCloseTo(ref.reachedCa ? ref.hopsSum / ref.reachedCa : 0, 9);
        const refMax = Math.max(0, ...ref.load.values());
        expect(v.linkLoad.max).toBe(refMax);
        const refSum = [...ref.load.values()].reduce((x, y) => x + y, 0);
        expect(Math.round(v.linkLoad.mean * v.linkLoad.links)).toBe(refSum);
        expect(v.ok).toBe(v.unreachablePairs === 0 && v.unreachableFromSwitches === 0 && v.loopEntries === 0);
      }),
      { numRuns: 60, seed: 17 },
    );
  });
});

describe('nue on a big fat tree (the fallback where ftree does not apply) balances like ftree', () => {
  it('11,664 end ports: busiest link within 1.1x of ftree\'s, deadlock-free on 8 VLs, complete', () => {
    const f = fabric('gen:fattree3:radix=36');
    const vn = verifyRoutes(f, getEngine('nue').route(f, { lmc: 0, maxVls: 8 }), { requireDeadlockFree: true, stretch: false });
    const vf = verifyRoutes(f, getEngine('ftree').route(f, { lmc: 0 }), { stretch: false, cdg: false });
    expect(vn.ok).toBe(true);
    expect(vn.deadlockFree).toBe(true);
    expect(vn.unreachablePairs).toBe(0);
    expect(vn.linkLoad.max).toBeLessThanOrEqual(1.1 * vf.linkLoad.max);
  }, 120_000);
});

describe('SL per source switch (RoutingResult.slBySourceSwitch)', () => {
  it('gives the deadlock verdict and VLs of asking every source port', () => {
    for (const [spec, engine] of [
      ['gen:torus:5x5x5,hosts=1', 'torus'],
      ['gen:torus:5x5,hosts=2', 'dfsssp'],
      ['gen:random:switches=30,degree=4,hosts=3,seed=2', 'nue'],
    ] as const) {
      const f = fabric(spec);
      const r: RoutingResult = getEngine(engine).route(f, { lmc: 0, maxVls: 8 });
      expect(r.slBySourceSwitch).toBe(true);
      expect(r.sl).toBeDefined();
      const fast = verifyRoutes(f, r);
      const slow = verifyRoutes(f, { ...r, slBySourceSwitch: false });
      expect(fast.vlsUsed).toBeGreaterThan(1);
      expect(fast.cdg).toEqual(slow.cdg);
      expect(fast.deadlockFree).toBe(true);
      expect(fast.vlsUsed).toBe(slow.vlsUsed);
    }
  });
});

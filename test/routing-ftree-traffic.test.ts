// ftree on a degraded tree judged by the traffic it carries (#35): effective bisection bandwidth
// (random bisections, routing/traffic.ts) against an independent witness, the reference dfsssp
// (OpenSM's engine, test/helpers/dfsssp-reference.ts), with its busiest link no busier;
// deadlock freedom claimed exactly where the verifier finds no cycle; and a degraded tree beyond
// the converging routes' budget keeps the weighted rotation.
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { DEFAULT_FALLBACK, routeWithFallback, verifyRoutes } from '../src/routing/index.js';
import { evaluateTraffic } from '../src/routing/traffic.js';
import { routeDfssspReference } from './helpers/dfsssp-reference.js';

const SAMPLES = 40;

function fabric(spec: string, edit?: (f: Fabric) => void): Fabric {
  const f = loadFabricSpec(spec);
  edit?.(f);
  assignLids(f, { lmc: 0 });
  return f;
}

/** The EBB mean; every flow's route must arrive. */
function ebb(f: Fabric, lfts: ReadonlyMap<number, ArrayLike<number>>): number {
  const r = evaluateTraffic(f, lfts, { kind: 'ebb' }, { samples: SAMPLES, seed: 1 });
  expect(r.unrouted).toBe(0);
  return r.mean;
}

describe('ftree on a degraded tree: effective bisection bandwidth against the reference dfsssp', () => {
  it('a degraded 3-level tree (every 23rd switch link cut): at least the reference dfsssp, its busiest link no busier', () => {
    const f = fabric('gen:fattree3:radix=8', (g) => cutEvery(g, 23));
    const chain = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 });
    expect(chain.engine).toBe('ftree');
    const v = verifyRoutes(f, chain.result, { stretch: false });
    expect(v.failures).toEqual([]);
    expect(v.unreachablePairs).toBe(0);
    expect(v.loopEntries).toBe(0);
    const ref = routeDfssspReference(f, { lmc: 0 });
    expect(v.linkLoad.max).toBeLessThanOrEqual(verifyRoutes(f, ref, { stretch: false }).linkLoad.max);
    // Deadlock-free as claimed, the routes to switch LIDs that must turn down then up included
    // (84 routes from CAs here; turning where the first CA leaf below the switch is, they closed
    // a cycle of 202 channels: ftree-turns.ts)
    expect(chain.result.deadlockFree).toBe(true);
    expect(v.deadlockFree).toBe(true);
    expect(ebb(f, chain.result.lfts)).toBeGreaterThanOrEqual(ebb(f, ref.lfts));
  }, 60_000);

  it('degraded 3-level trees: ftree claims deadlock freedom exactly where the verifier finds no cycle', () => {
    // every 23rd and 7th link cut: the down-then-up routes find acyclic turns; every 11th and 5th:
    // they cannot, and the result says so
    for (const [drop, free] of [[23, true], [7, true], [11, false], [5, false]] as const) {
      const f = fabric('gen:fattree3:radix=8', (g) => cutEvery(g, drop));
      const r = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 }).result;
      const v = verifyRoutes(f, r, { stretch: false, requireDeadlockFree: false });
      expect(v.unreachablePairs).toBe(0);
      expect(v.deadlockFree).toBe(free);
      expect(r.deadlockFree).toBe(free);
      expect(r.notes.some((n) => /close a channel-dependency cycle/.test(n))).toBe(!free);
    }
  }, 60_000);

  it('a degraded tree beyond the converging routes\' budget (3,456 hosts): the weighted rotation, said so, complete', () => {
    const f = fabric('gen:fattree3:radix=24', (g) => cutEvery(g, 97));
    const chain = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 });
    expect(chain.engine).toBe('ftree');
    expect(chain.result.notes.some((n) => /degraded tree of 3456 CA LIDs: routed by the weighted rotation/.test(n))).toBe(true);
    const v = verifyRoutes(f, chain.result, { stretch: false });
    expect(v.failures).toEqual([]);
    expect(v.unreachablePairs).toBe(0);
    expect(v.loopEntries).toBe(0);
  }, 60_000);
});

/** Cut every `drop`-th switch-to-switch link (node order, then port order), as
 *  scripts/bench/traffic-opensm.mjs does for ft3-degraded. */
function cutEvery(f: Fabric, drop: number): void {
  let k = 0;
  f.nodes.forEach((n, i) => {
    if (!isSwitch(n)) return;
    for (const p of n.ports) {
      if (!p?.peer || !isSwitch(f.nodes[p.peer.node]!) || p.peer.node < i) continue;
      if (++k % drop) continue;
      delete f.nodes[p.peer.node]!.ports[p.peer.port]!.peer;
      delete p.peer;
    }
  });
}

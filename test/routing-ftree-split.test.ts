// ftree on ft3-large (#35: 12 CAs on 8 up links per leaf, 4:1 at the spines), judged by the
// traffic it carries against OpenSM ftree's figures measured on the same fabric
// (scripts/bench/traffic-opensm.mjs --fabrics ft3-large --opensm ftree --seeds 1,2,3,4,5:
// 0.24011 0.23864 0.24018 0.23784 0.23901, median 0.23901), and the structure that gives it,
// walked from the tables here: each destination's routes from other pods come down one path,
// the CAs beyond a multiple of a leaf's up links down two (ftree-split.ts).
import { describe, expect, it } from 'vitest';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { DEFAULT_FALLBACK, routeWithFallback, verifyRoutes } from '../src/routing/index.js';
import { evaluateTraffic } from '../src/routing/traffic.js';

const FT3_LARGE = 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12';

function routed(spec: string) {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc: 0 });
  return { f, chain: routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 }) };
}

describe('ftree on ft3-large: effective bisection bandwidth beside OpenSM ftree', () => {
  const { f, chain } = routed(FT3_LARGE);

  it('EBB at seed 1 at least OpenSM ftree\'s 0.2401, the median of seeds 1..5 at least 0.2389 (OpenSM: 0.2390); verified, deadlock-free, shortest', () => {
    expect(chain.engine).toBe('ftree');
    const v = verifyRoutes(f, chain.result, { requireDeadlockFree: true });
    expect(v.ok).toBe(true);
    expect(v.stretch!.max).toBe(1);
    const ebb = [1, 2, 3, 4, 5].map((seed) => {
      const r = evaluateTraffic(f, chain.result.lfts, { kind: 'ebb' }, { samples: 100, seed });
      expect(r.unrouted).toBe(0);
      return r.mean;
    });
    // the rotation by position gave 0.2272 at seed 1, median 0.2259
    expect(ebb[0]).toBeGreaterThanOrEqual(0.2401);
    expect([...ebb].sort((a, b) => a - b)[2]).toBeGreaterThanOrEqual(0.2389);
  }, 60_000);

  it('the routes from other pods to a destination cross one top switch for 8 of each leaf\'s 12 CAs, two for the others', () => {
    const level = (n: number): number => Number(/sw-l(\d)/.exec(f.nodes[n]!.desc)![1]);
    const leaves = f.nodes.map((_, i) => i).filter((i) => isSwitch(f.nodes[i]!) && level(i) === 1);
    const podOf = (leaf: number): number => Number(f.nodes[leaf]!.desc.slice(6)) >> 4;
    const lfts = chain.result.lfts;
    for (const T of leaves) {
      const tops: number[] = [];
      for (const p of f.nodes[T]!.ports) {
        if (!p?.peer || isSwitch(f.nodes[p.peer.node]!)) continue;
        const lid = f.nodes[p.peer.node]!.ports[p.peer.port]!.lid!;
        const seen = new Set<number>();
        for (const S of leaves) {
          if (podOf(S) === podOf(T)) continue;
          let cur = S;
          for (let hops = 0; cur !== T && hops < 8; hops++) {
            if (level(cur) === 3) seen.add(cur);
            cur = f.nodes[cur]!.ports[lfts.get(cur)![lid]!]!.peer!.node;
          }
          expect(cur).toBe(T);
        }
        tops.push(seen.size);
      }
      expect(tops.sort()).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2]);
    }
  });

  it('leaves whose up links are cabled to other ports: the same EBB, every spine-core link still at the bound 8,064', () => {
    const g = loadFabricSpec(FT3_LARGE);
    // cables moved: ports 13 and 16 of three leaves swapped
    for (const name of ['sw-l1-5', 'sw-l1-40', 'sw-l1-41']) {
      const i = g.nodes.findIndex((n) => n.desc === name);
      const [a, b] = [g.nodes[i]!.ports[13]!, g.nodes[i]!.ports[16]!];
      const [pa, pb] = [a.peer!, b.peer!];
      [a.peer, b.peer] = [pb, pa];
      g.nodes[pb.node]!.ports[pb.port]!.peer = { node: i, port: 13 };
      g.nodes[pa.node]!.ports[pa.port]!.peer = { node: i, port: 16 };
    }
    assignLids(g, { lmc: 0 });
    const r = routeWithFallback(g, DEFAULT_FALLBACK, { lmc: 0 }).result;
    const v = verifyRoutes(g, r, { requireDeadlockFree: true });
    expect(v.ok).toBe(true);
    expect(v.linkLoad.max).toBe(8064);
    const ebb = (fab: typeof g, lfts: typeof r.lfts): number => evaluateTraffic(fab, lfts, { kind: 'ebb' }, { samples: 100, seed: 1 }).mean;
    expect(ebb(g, r.lfts)).toBeCloseTo(ebb(f, chain.result.lfts), 12);
  });

  it('a 2-level tree with 18 CAs on 12 up links keeps the rotation (its incremental re-route moves single routes)', () => {
    expect(chain.result.notes.some((n) => /ftree-split\.ts/.test(n))).toBe(true);
    const two = routed('gen:fattree2:leaves=24,spines=12,hosts=18');
    expect(two.chain.engine).toBe('ftree');
    expect(two.chain.result.notes.some((n) => /ftree-split\.ts/.test(n))).toBe(false);
  });
});

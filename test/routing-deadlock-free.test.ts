// The deadlock-free engines (nue, torus) on every topology class the generators make, checked by
// the verifier (its CDG cycle search, cdg.ts, shares no code with the engines' acyclic.ts), and
// the default chain's choice on each class.
import { describe, expect, it } from 'vitest';
import { expectComplete, fabricWithLids as fabric } from './helpers/routing-checks.js';
import fc from 'fast-check';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { DEADLOCK_FREE_FALLBACK, DEFAULT_FALLBACK, getEngine, routeWithFallback, RoutingNotApplicable, verifyRoutes } from '../src/routing/index.js';
import { torusShape } from '../src/routing/torus.js';
import { indexFabric } from '../src/routing/graph.js';
import { AcyclicCdg, depStarts } from '../src/routing/acyclic.js';



const TORI = ['gen:torus:4x4x3,hosts=1', 'gen:torus:5x5,hosts=2', 'gen:torus:6x6x6,hosts=1', 'gen:torus:2x3x5,hosts=1'];
const MESHES = ['gen:mesh:4x4,hosts=2', 'gen:mesh:3x4x5,hosts=1'];
const RANDOM = ['gen:random:switches=24,degree=4,hosts=2,seed=3', 'gen:random:switches=60,degree=6,hosts=2,seed=9'];
const DRAGONFLIES = ['gen:dragonfly:a=4,p=2,h=2', 'gen:dragonfly:a=3,p=2,h=1,g=4'];
const CLASSES: Array<[string, string[]]> = [['torus', TORI], ['mesh', MESHES], ['random', RANDOM], ['dragonfly', DRAGONFLIES]];

describe('nue: deadlock-free, complete and loop-free within 1, 2, 4 and 8 VLs', () => {
  for (const [cls, specs] of CLASSES) {
    for (const spec of specs) {
      for (const maxVls of [1, 2, 4, 8]) {
        it(`${cls} ${spec}, ${maxVls} VL(s)`, () => {
          const f = fabric(spec);
          expectComplete(f, getEngine('nue').route(f, { lmc: 0, maxVls }), 0, maxVls);
        });
      }
    }
  }
  it('LMC 2: every LID of every range, deadlock-free on 2 VLs', () => {
    const f = fabric('gen:random:switches=24,degree=4,hosts=2,seed=3', 2);
    expectComplete(f, getEngine('nue').route(f, { lmc: 2, maxVls: 2 }), 2, 2);
  });
  it('parallel links and a fat tree (where ftree would apply)', () => {
    for (const spec of ['gen:fattree2:leaves=4,spines=2,hosts=3,links=2', 'gen:fattree3:radix=8']) {
      const f = fabric(spec);
      expectComplete(f, getEngine('nue').route(f, { lmc: 0, maxVls: 4 }), 0, 4);
    }
  });
  it('a torus with a link and a switch missing (not a torus any more) is still routed', () => {
    const f = loadFabricSpec('gen:torus:5x5x3,hosts=1');
    const sw = f.nodes.findIndex((n) => isSwitch(n) && n.desc === 'sw-2-2-1');
    const p = f.nodes[sw]!.ports.findIndex((q, i) => i > 1 && q?.peer && isSwitch(f.nodes[q.peer.node]!));
    const peer = f.nodes[sw]!.ports[p]!.peer!;
    delete f.nodes[peer.node]!.ports[peer.port]!.peer;
    delete f.nodes[sw]!.ports[p]!.peer;
    assignLids(f, { lmc: 0 });
    expect(() => getEngine('torus').route(f, { lmc: 0 })).toThrow(RoutingNotApplicable);
    for (const maxVls of [1, 8]) expectComplete(f, getEngine('nue').route(f, { lmc: 0, maxVls }), 0, maxVls);
  });
  it('the same fabrics have credit loops under minhop (the check can fail)', () => {
    for (const spec of [TORI[2]!, RANDOM[1]!, DRAGONFLIES[0]!]) {
      const f = fabric(spec);
      expect(verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 })).deadlockFree).toBe(false);
    }
  });
  it('balance on 8 VLs: busiest link within 1.1x of minhop (which is not deadlock-free) on a random graph and a torus', () => {
    for (const spec of ['gen:random:switches=60,degree=6,hosts=4,seed=9', 'gen:torus:6x6x6,hosts=2']) {
      const f = fabric(spec);
      const nue = verifyRoutes(f, getEngine('nue').route(f, { lmc: 0, maxVls: 8 }));
      const minhop = verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 }));
      expect(nue.linkLoad.max).toBeLessThanOrEqual(1.1 * minhop.linkLoad.max);
    }
  });
});

describe('torus: detected, dimension-order, deadlock-free within 1, 2, 4 and 8 VLs', () => {
  for (const spec of [...TORI, ...MESHES]) {
    for (const maxVls of [1, 2, 4, 8]) {
      it(`${spec}, ${maxVls} VL(s)`, () => {
        const f = fabric(spec);
        const r = getEngine('torus').route(f, { lmc: 0, maxVls });
        expectComplete(f, r, 0, maxVls);
      });
    }
  }
  it('finds the dimensions (a ring of 4 is two of 2) and whether each wraps', () => {
    const dims = (spec: string): string[] => {
      const s = torusShape(indexFabric(fabric(spec)));
      return s.dims.map((n, i) => `${n}${s.ring[i] ? 'r' : 'l'}`).sort();
    };
    expect(dims('gen:torus:6x6x6,hosts=1')).toEqual(['6r', '6r', '6r']);
    expect(dims('gen:torus:4x4x3,hosts=1')).toEqual(['2l', '2l', '2l', '2l', '3r']);
    expect(dims('gen:mesh:3x4x5,hosts=1')).toEqual(['3l', '4l', '5l']);
    expect(dims('gen:torus:2x3x5,hosts=1')).toEqual(['2l', '3r', '5r']);
  });
  it('coordinates: every link is one step in one dimension, the map is one-to-one', () => {
    const f = fabric('gen:torus:5x4x3,hosts=1');
    const ix = indexFabric(f);
    const s = torusShape(ix);
    const D = s.dims.length;
    const keys = new Set<string>();
    for (let a = 0; a < ix.nSw; a++) keys.add(Array.from(s.coord.subarray(a * D, a * D + D)).join(','));
    expect(keys.size).toBe(ix.nSw);
    for (let a = 0; a < ix.nSw; a++) {
      for (let e = ix.adjStart[a]!; e < ix.adjStart[a + 1]!; e++) {
        const b = ix.adjSw[e]!;
        const steps = s.dims.map((n, i) => {
          const d = Math.abs(s.coord[a * D + i]! - s.coord[b * D + i]!);
          return s.ring[i] ? Math.min(d, n - d) : d;
        });
        expect(steps.filter((x) => x === 1).length).toBe(1);
        expect(steps.filter((x) => x > 1).length).toBe(0);
      }
    }
  });
  it('shortest paths on 2 VLs (every ring has its dateline bit); on 1 VL the rings are routed as lines', () => {
    const f = fabric('gen:torus:6x6x6,hosts=1');
    const r2 = getEngine('torus').route(f, { lmc: 0, maxVls: 2 });
    expect(r2.vlsUsed).toBe(2);
    expect(verifyRoutes(f, r2).stretch!.max).toBe(1);
    const r1 = getEngine('torus').route(f, { lmc: 0, maxVls: 1 });
    expect(r1.vlsUsed).toBe(1);
    expect(r1.notes.join('\n')).toMatch(/3 ring\(s\) routed as lines/);
    expect(verifyRoutes(f, r1).stretch!.max).toBeGreaterThan(1);
  });
  it('busiest link no worse than minhop on a 6x6x6 torus', () => {
    const f = fabric('gen:torus:6x6x6,hosts=2');
    const t = verifyRoutes(f, getEngine('torus').route(f, { lmc: 0, maxVls: 8 }));
    const m = verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 }));
    expect(t.linkLoad.max).toBeLessThanOrEqual(m.linkLoad.max);
  });
  it('refuses what is not a torus or mesh, with a reason', () => {
    for (const spec of [...RANDOM, ...DRAGONFLIES, 'gen:fattree3:radix=8']) {
      const f = fabric(spec);
      expect(() => getEngine('torus').route(f, { lmc: 0 })).toThrow(/not a torus or mesh/);
    }
  });
});

describe('default chain', () => {
  const expectEngine: Array<[string, string]> = [
    ['gen:fattree3:radix=8', 'ftree'],
    ['gen:fattree2:radix=8', 'ftree'],
    ...TORI.map((s): [string, string] => [s, 'torus']),
    ...MESHES.map((s): [string, string] => [s, 'torus']),
    ...RANDOM.map((s): [string, string] => [s, 'nue']),
    ...DRAGONFLIES.map((s): [string, string] => [s, 'nue']),
  ];
  for (const [spec, engine] of expectEngine) {
    it(`${spec} → ${engine}, deadlock-free`, () => {
      const f = fabric(spec);
      const r = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 });
      expect(r.engine).toBe(engine);
      expectComplete(f, r.result, 0, 8);
    });
  }
  it('ends in the always-applicable deadlock-free engine', () => {
    expect(DEFAULT_FALLBACK[DEFAULT_FALLBACK.length - 1]).toBe(DEADLOCK_FREE_FALLBACK);
    for (const name of DEFAULT_FALLBACK) {
      const f = fabric('gen:fattree3:radix=8');
      try {
        expect(getEngine(name).route(f, { lmc: 0 }).deadlockFree).toBe(true);
      } catch (err) {
        expect(err).toBeInstanceOf(RoutingNotApplicable);
      }
    }
  });
});

describe('AcyclicCdg (the engines\' incremental cycle check) against a brute-force search', () => {
  it('tryAdd refuses exactly the dependencies that close a cycle, and undo() takes a batch back', () => {
    const ix = indexFabric(fabric('gen:random:switches=8,degree=3,hosts=0,seed=5'));
    const dep = depStarts(ix);
    const nE = ix.adjStart[ix.nSw]!;
    const pairs: Array<[number, number]> = [];
    for (let a = 0; a < nE; a++) {
      const h = ix.adjSw[a]!;
      for (let b = ix.adjStart[h]!; b < ix.adjStart[h + 1]!; b++) pairs.push([a, b]);
    }
    fc.assert(
      fc.property(fc.array(fc.nat(pairs.length - 1), { minLength: 1, maxLength: 120 }), fc.nat(60), (picks, undoAt) => {
        const g = new AcyclicCdg(ix, dep, Infinity);
        const present = new Set<number>();
        const reaches = (from: number, to: number): boolean => {
          const seen = new Set([from]);
          const stack = [from];
          while (stack.length) {
            const c = stack.pop()!;
            if (c === to) return true;
            for (const p of present) {
              const [x, y] = pairs[p]!;
              if (x === c && !seen.has(y)) {
                seen.add(y);
                stack.push(y);
              }
            }
          }
          return false;
        };
        let snapshot: Set<number> | undefined;
        picks.forEach((p, k) => {
          if (k === undoAt) {
            snapshot = new Set(present);
            g.mark();
          }
          const [a, b] = pairs[p]!;
          const cycle = !present.has(p) && reaches(b, a);
          expect(g.tryAdd(a, b)).toBe(!cycle);
          if (!cycle) present.add(p);
          for (const q of present) expect(g.ord[pairs[q]![0]]!).toBeLessThan(g.ord[pairs[q]![1]]!);
        });
        if (snapshot) {
          g.undo();
          for (let p = 0; p < pairs.length; p++) expect(g.has(pairs[p]![0], pairs[p]![1])).toBe(snapshot.has(p));
        }
      }),
      { numRuns: 60 },
    );
  });
});

// dfsssp's speed-up changed how the tables are computed, not which: on generated fabrics of every
// class (fat trees, tori, meshes, random graphs, dragonflies), with LMC 0..2, with and without a
// tie-break seed and for several VL budgets, the engine's LFTs, SLs, layer count and notes equal
// those of the plain reference implementation (test/helpers/dfsssp-reference.ts), or both refuse
// the fabric with the same reason; and what it returns is complete and deadlock-free by the verifier.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { getEngine, type RoutingResult } from '../src/routing/index.js';
import { RoutingNotApplicable } from '../src/routing/types.js';
import { routeDfssspReference } from './helpers/dfsssp-reference.js';
import { expectComplete, fabricWithLids } from './helpers/routing-checks.js';

type Outcome = { ok: true; r: RoutingResult } | { ok: false; reason: string };

function run(f: () => RoutingResult): Outcome {
  try {
    return { ok: true, r: f() };
  } catch (err) {
    if (!(err instanceof RoutingNotApplicable)) throw err;
    return { ok: false, reason: err.message };
  }
}

/** Same tables, SLs for every (source LID, destination LID), layers and notes. */
function expectSame(spec: string, lmc: number, seed: number | undefined, maxVls: number): Outcome {
  const opts = { lmc, seed, maxVls };
  const got = run(() => getEngine('dfsssp').route(fabricWithLids(spec, lmc), opts));
  const want = run(() => routeDfssspReference(fabricWithLids(spec, lmc), opts));
  expect(got.ok).toBe(want.ok);
  if (!got.ok || !want.ok) {
    expect(got).toEqual(want);
    return got;
  }
  const a = got.r;
  const b = want.r;
  expect(a.maxLid).toBe(b.maxLid);
  expect([...a.lfts.keys()]).toEqual([...b.lfts.keys()]);
  for (const [node, t] of b.lfts) expect(Buffer.from(a.lfts.get(node)!).equals(Buffer.from(t)), `LFT of node ${node}`).toBe(true);
  const slA = new Uint8Array(a.maxLid + 1);
  const slB = new Uint8Array(b.maxLid + 1);
  for (let s = 1; s <= a.maxLid; s++) {
    for (let d = 1; d <= a.maxLid; d++) {
      slA[d] = a.sl!(s, d);
      slB[d] = b.sl!(s, d);
    }
    expect(Buffer.from(slA).equals(Buffer.from(slB)), `SLs from LID ${s}`).toBe(true);
  }
  expect(a.vlsUsed).toBe(b.vlsUsed);
  expect(a.sl2vl).toEqual(b.sl2vl);
  expect(a.notes).toEqual(b.notes);
  return got;
}

describe('dfsssp equals its reference implementation', () => {
  it('on one fabric of each class, LMC 0 and 1, with and without a seed', () => {
    const specs = [
      'gen:fattree3:radix=8',
      'gen:fattree2:links=2,leaves=6,spines=3,hosts=3',
      'gen:torus:4x4x3,hosts=2',
      'gen:mesh:5x4,hosts=2',
      'gen:random:switches=24,degree=4,hosts=2,seed=3',
      'gen:dragonfly:a=4,p=2,h=2',
      // 40 links one hop nearer on a leaf (more than one 32-bit word of minimum set per switch).
      'gen:fattree2:links=2,leaves=3,spines=20,hosts=2',
    ];
    let layered = 0;
    for (const spec of specs) {
      for (const lmc of [0, 1]) {
        for (const seed of [undefined, 7]) {
          const o = expectSame(spec, lmc, seed, 15);
          expect(o.ok, `${spec} lmc ${lmc} seed ${seed}`).toBe(true);
          if (!o.ok) continue;
          if ((o.r.vlsUsed ?? 1) > 1) layered++;
          expectComplete(fabricWithLids(spec, lmc), o.r, lmc, 15);
        }
      }
    }
    // The cyclic classes (torus, mesh, random graph, dragonfly) needed layers: that path was compared too.
    expect(layered).toBeGreaterThanOrEqual(4 * 2 * 2);
  });

  it('refuses the same fabrics with the same reason when the VLs do not suffice', () => {
    const o = expectSame('gen:torus:5x5x3,hosts=1', 0, undefined, 1);
    expect(o.ok).toBe(false);
  });

  it('on random fabrics, LMCs, seeds and VL budgets (property)', () => {
    const spec = fc.oneof(
      fc.record({ half: fc.integer({ min: 3, max: 10 }), deg: fc.integer({ min: 2, max: 5 }), hosts: fc.integer({ min: 1, max: 3 }), seed: fc.integer({ min: 1, max: 1000 }) }).map((x) => `gen:random:switches=${2 * x.half},degree=${x.deg},hosts=${x.hosts},seed=${x.seed}`),
      fc.record({ a: fc.integer({ min: 2, max: 5 }), b: fc.integer({ min: 2, max: 4 }), hosts: fc.integer({ min: 1, max: 2 }) }).map((x) => `gen:torus:${x.a}x${x.b},hosts=${x.hosts}`),
      fc.record({ a: fc.integer({ min: 2, max: 4 }), p: fc.integer({ min: 1, max: 2 }), h: fc.integer({ min: 1, max: 2 }) }).map((x) => `gen:dragonfly:a=${x.a},p=${x.p},h=${x.h}`),
      fc.record({ pods: fc.integer({ min: 2, max: 4 }), leaves: fc.integer({ min: 1, max: 3 }), hosts: fc.integer({ min: 1, max: 3 }) }).map((x) => `gen:fattree3:pods=${x.pods},leaves=${x.leaves},spines=2,cores=4,hosts=${x.hosts}`),
    );
    fc.assert(
      fc.property(spec, fc.integer({ min: 0, max: 2 }), fc.option(fc.integer({ min: 0, max: 99 }), { nil: undefined }), fc.constantFrom(2, 4, 8, 15), (s, lmc, seed, maxVls) => {
        const o = expectSame(s, lmc, seed, maxVls);
        if (o.ok) expectComplete(fabricWithLids(s, lmc), o.r, lmc, maxVls);
      }),
      { numRuns: 60, seed: 17 },
    );
  });
});

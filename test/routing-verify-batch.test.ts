// The verifier's batches (routing/verify-batch.ts): the CA LIDs of one switch whose routes are
// all shortest paths are carried switch by switch for the whole batch, the shortest-path check
// made on the way; a batch with a route that is not one is undone, its columns checked, and the
// others left to the per-LID walk. Witnessed by the hop-by-hop walk (test/helpers/verify-witness.ts)
// and by the verifier itself LID by LID (batch: false), whose full report must be the same.
import { describe, expect, it, vi } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { getEngine, verifyRoutes, type RoutingResult, type VerifyOptions } from '../src/routing/index.js';
import { identitySl2Vl } from '../src/routing/types.js';
import { ColumnBatch } from '../src/routing/verify-batch.js';
import { fabricWithLids } from './helpers/routing-checks.js';
import { verifierDeps, witness, witnessDeps } from './helpers/verify-witness.js';

/** The report with batches, what each batch carry returned (true: carried, false: undone), and
 *  the same report LID by LID. */
function both(f: Fabric, t: RoutingResult | ReadonlyMap<number, Uint8Array>, opts: VerifyOptions = {}): { v: ReturnType<typeof verifyRoutes>; carried: boolean[] } {
  const spy = vi.spyOn(ColumnBatch.prototype, 'carry');
  const v = verifyRoutes(f, t, { maxFailures: 1000, ...opts });
  const carried = spy.mock.results.map((r) => r.value as boolean);
  spy.mockRestore();
  const plain = verifyRoutes(f, t, { maxFailures: 1000, ...opts, batch: false });
  expect(v).toEqual(plain);
  return { v, carried };
}

/** Routes per link, hops and pairs as the hop-by-hop witness's. */
function asWitness(f: Fabric, lfts: ReadonlyMap<number, Uint8Array>, v: ReturnType<typeof verifyRoutes>): void {
  const w = witness(f, lfts);
  const loads = [...w.links.values()];
  expect(v.pairs).toBe(w.pairs);
  expect(v.unreachablePairs).toBe(w.unreachable);
  expect(v.hops.max).toBe(w.hopMax);
  expect(v.hops.mean).toBeCloseTo(w.hopSum / w.reached, 9);
  expect(v.linkLoad.max).toBe(Math.max(0, ...loads));
  expect(v.linkLoad.mean * v.linkLoad.links).toBeCloseTo(loads.reduce((a, b) => a + b, 0), 6);
}

const byDesc = (f: Fabric, d: string): number => f.nodes.findIndex((n) => n.desc === d);
const portTo = (f: Fabric, a: number, b: number): number => f.nodes[a]!.ports.findIndex((p) => p?.peer?.node === b);
const caLids = (f: Fabric, sw: number): number[] =>
  f.nodes[sw]!.ports.flatMap((p) => (p?.peer && !isSwitch(f.nodes[p.peer.node]!) ? [f.nodes[p.peer.node]!.ports[p.peer.port]!.lid!] : []));
const cloneLfts = (m: ReadonlyMap<number, Uint8Array>): Map<number, Uint8Array> => new Map([...m].map(([k, t]) => [k, Uint8Array.from(t)]));

describe('verifier batches: the same report as LID by LID, and as the witness', () => {
  for (const [spec, engine] of [
    ['gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6', 'ftree'],
    // More LIDs than a block, 18 switches: tables read four at a time and one by one.
    ['gen:fattree2:leaves=12,spines=6,hosts=20', 'ftree'],
    ['gen:fattree2:leaves=6,spines=3,hosts=9', 'minhop'],
    ['gen:fattree2:leaves=6,spines=3,hosts=9', 'dfsssp'],
    ['gen:torus:4x4,hosts=3', 'nue'],
    ['gen:torus:4x4,hosts=3', 'updn'],
    ['gen:torus:3x3x3,hosts=2', 'dfsssp'],
  ] as const) {
    it(`${spec} ${engine}`, () => {
      const f = fabricWithLids(spec);
      const r = getEngine(engine).route(f, { lmc: 0 });
      const { v, carried } = both(f, r);
      expect(v.ok).toBe(true);
      // Batches were carried (every engine routes some LIDs over shortest paths here).
      expect(carried).toContain(true);
      asWitness(f, r.lfts, v);
      const res: RoutingResult = r.sl ? r : { ...r, sl: () => 0, sl2vl: identitySl2Vl(1) };
      expect(verifierDeps(v)).toEqual(witnessDeps(f, res));
    });
  }

  it('updn on a torus: batches with a route longer than the shortest are undone, the report unchanged', () => {
    const f = fabricWithLids('gen:torus:6x6,hosts=2');
    const r = getEngine('updn').route(f, { lmc: 0 });
    const { v, carried } = both(f, r);
    expect(carried).toContain(false);
    expect(v.stretch!.pairsAboveShortest).toBeGreaterThan(0);
    asWitness(f, r.lfts, v);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, { ...r, sl: () => 0, sl2vl: identitySl2Vl(1) }));
  });

  it('a detour planted for one LID of a leaf (leaf, spine, other leaf, spine): its batch undone after the leaves were carried', () => {
    const f = fabricWithLids('gen:fattree2:leaves=4,spines=2,hosts=3');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const [T, A, B] = ['sw-l1-0', 'sw-l1-1', 'sw-l1-2'].map((d) => byDesc(f, d)) as [number, number, number];
    const [S1, S2] = ['sw-l2-0', 'sw-l2-1'].map((d) => byDesc(f, d)) as [number, number];
    const d = caLids(f, T)[1]!;
    const t = cloneLfts(r.lfts);
    t.get(A)![d] = portTo(f, A, S1);
    t.get(S1)![d] = portTo(f, S1, B);
    t.get(B)![d] = portTo(f, B, S2);
    t.get(S2)![d] = portTo(f, S2, T);
    const { v, carried } = both(f, t);
    expect(v.ok).toBe(true);
    // The batch of T's LIDs undone once, then carried without d; the other leaves' carried at once.
    expect(carried.filter((c) => !c)).toHaveLength(1);
    expect(carried.filter((c) => c).length).toBeGreaterThan(1);
    expect(v.hops.max).toBe(6);
    // A's hosts, and those of every leaf whose route to d goes over S1.
    expect(v.stretch!.pairsAboveShortest).toBeGreaterThanOrEqual(3);
    asWitness(f, t, v);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, { ...r, lfts: t, sl: () => 0, sl2vl: identitySl2Vl(1) }));
  });

  it('with the SL per destination (as nue): LIDs of one batch on different VLs', () => {
    const f = fabricWithLids('gen:fattree2:leaves=6,spines=3,hosts=9');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const res: RoutingResult = { ...r, sl: (_s, d) => d % 3, slBySourceSwitch: true, sl2vl: identitySl2Vl(3) };
    const { v, carried } = both(f, res);
    expect(carried).toContain(true);
    expect(v.vlsUsed).toBe(3);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, res));
  });

  it('with SLs, every LID on one VL but VL 0 (its bits made at its first dependency, no other VL\'s): the same dependencies as the witness', () => {
    const f = fabricWithLids('gen:fattree2:leaves=6,spines=3,hosts=9');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const res: RoutingResult = { ...r, sl: () => 2, slBySourceSwitch: true, sl2vl: identitySl2Vl(3) };
    const { v, carried } = both(f, res);
    expect(carried).toContain(true);
    expect(v.vlsUsed).toBe(1);
    expect(v.cdg.map((c) => c.vl)).toEqual([2]);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, res));
  });

  it('without stretch or the CDG: the same counts', () => {
    const f = fabricWithLids('gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const { v, carried } = both(f, r, { stretch: false, cdg: false });
    expect(carried).toContain(true);
    expect(v.stretch).toBeUndefined();
    expect(v.cdg).toEqual([]);
    asWitness(f, r.lfts, v);
  });
});

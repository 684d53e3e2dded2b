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
import { FabricBuilder } from '../src/model/generators.js';
import { assignLids } from '../src/sm/lids.js';
import { fabricWithLids } from './helpers/routing-checks.js';
import { verifierDeps, witness, witnessDeps } from './helpers/verify-witness.js';

/** The report with batches, what each batch carry returned (true: carried, false: undone), and
 *  the same report LID by LID. */
function both(f: Fabric, t: RoutingResult | ReadonlyMap<number, Uint8Array>, opts: VerifyOptions = {}): { v: ReturnType<typeof verifyRoutes>; carried: boolean[]; runs: number; twins: number; batches: number } {
  // CA LID batches, and those with a column carried for more than one LID (twins: the same
  // entries at every switch but T's).
  let batches = 0;
  let twins = 0;
  const carry = ColumnBatch.prototype.carry;
  const spy = vi.spyOn(ColumnBatch.prototype, 'carry').mockImplementation(function (this: ColumnBatch, ...a: Parameters<ColumnBatch['carry']>) {
    const ok = carry.apply(this, a);
    batches++;
    if (a[7].subarray(0, a[8]).some((m) => m > 1)) twins++;
    return ok;
  });
  // carryRun: a batch's columns consecutive, one LID each, on one VL (the others: carry's own loop).
  const run = vi.spyOn(ColumnBatch.prototype as unknown as { carryRun: () => boolean }, 'carryRun');
  const v = verifyRoutes(f, t, { maxFailures: 1000, ...opts });
  const carried = spy.mock.results.map((r) => r.value as boolean);
  const runs = run.mock.calls.length;
  spy.mockRestore();
  run.mockRestore();
  const plain = verifyRoutes(f, t, { maxFailures: 1000, ...opts, batch: false });
  expect(v).toEqual(plain);
  return { v, carried, runs, twins, batches };
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
      const { v, carried, runs } = both(f, r);
      expect(v.ok).toBe(true);
      // Batches were carried (every engine routes some LIDs over shortest paths here), as runs.
      expect(carried).toContain(true);
      expect(runs).toBeGreaterThan(0);
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
    const { v, carried, runs } = both(f, res);
    expect(carried).toContain(true);
    // Batches with columns on several VLs: carried by carry's own loop, not as runs.
    expect(runs).toBeLessThan(carried.length);
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

  it('a switch without CAs whose entries are the same for a batch, crossed by the routes to one LID of it only: no dependency for the other', () => {
    // T delivers d1, d2 (hosts h1, h2). Distances to T: M1, M2 1; N 2; X, B 3; A 4. A's routes
    // to d1 go over X, to d2 over B; X sends both to N (one entry for the batch), N d1 to M1 and
    // d2 to M2. So X → N carries routes to d1 only: (X→N, N→M1) is a dependency, (X→N, N→M2) not.
    const b = new FabricBuilder();
    const [T, M1, M2, N, X, A, B] = ['T', 'M1', 'M2', 'N', 'X', 'A', 'B'].map((d) => b.addSwitch(d, 8)) as [number, number, number, number, number, number, number];
    const [h1, h2, ha, hb] = ['h1', 'h2', 'ha', 'hb'].map((d) => b.addCa(d));
    b.link(T, 1, h1!, 1);
    b.link(T, 2, h2!, 1);
    b.link(T, 3, M1, 1);
    b.link(T, 4, M2, 1);
    b.link(M1, 2, N, 1);
    b.link(M2, 2, N, 2);
    b.link(N, 3, X, 1);
    b.link(N, 4, B, 1);
    b.link(X, 2, A, 1);
    b.link(A, 2, B, 2);
    b.link(A, 3, ha!, 1);
    b.link(B, 3, hb!, 1);
    const f = b.build();
    assignLids(f, { lmc: 0 });
    const r = getEngine('minhop').route(f, { lmc: 0 });
    const t = cloneLfts(r.lfts);
    const [d1, d2] = caLids(f, T) as [number, number];
    expect(d2).toBe(d1 + 1);
    // Nothing but A's routes to d1 crosses X → N: A's others go over B (its own, X's excepted).
    const own = new Set([f.nodes[A]!.ports[0]!.lid!, f.nodes[X]!.ports[0]!.lid!, f.nodes[ha!]!.ports[1]!.lid!]);
    const tA = t.get(A)!;
    for (let l = 1; l < tA.length; l++) if (!own.has(l) && tA[l]! > 0) tA[l] = 2;
    tA[d1] = 1;
    t.get(X)![d1] = t.get(X)![d2] = 1;
    t.get(N)![d1] = 1;
    t.get(N)![d2] = 2;
    const { v, carried, runs } = both(f, t);
    expect(v.ok).toBe(true);
    expect(carried).toContain(true);
    expect(runs).toBeGreaterThan(0);
    asWitness(f, t, v);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, { ...r, lfts: t, sl: () => 0, sl2vl: identitySl2Vl(1) }));
  });

  it('with SLs, a VL whose routes make no dependency (two switches, one hop between them): not used, as LID by LID', () => {
    const b = new FabricBuilder();
    const [P, Q] = ['P', 'Q'].map((d) => b.addSwitch(d, 4)) as [number, number];
    b.link(P, 1, Q, 1);
    for (const [sw, n] of [[P, 'p'], [Q, 'q']] as const) for (let i = 0; i < 3; i++) b.link(sw, 2 + i, b.addCa(`${n}${i}`), 1);
    const f = b.build();
    assignLids(f, { lmc: 0 });
    const r = getEngine('minhop').route(f, { lmc: 0 });
    const qLids = new Set(caLids(f, Q));
    // The LIDs of Q's hosts on VL 1, the others on VL 0: no route crosses two switch links.
    const res: RoutingResult = { ...r, sl: (_s, d) => (qLids.has(d) ? 1 : 0), slBySourceSwitch: true, sl2vl: identitySl2Vl(2) };
    const { v, carried, runs } = both(f, res);
    expect(carried).toContain(true);
    expect(runs).toBeGreaterThan(0);
    expect(v.cdg).toEqual([]);
    expect(v.vlsUsed).toBe(1);
  });

  it('twins: ftree on an oversubscribed tree (more hosts than spines), their hashes made without the entries of the switch delivering them', () => {
    const f = fabricWithLids('gen:fattree2:leaves=12,spines=6,hosts=20');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const { v, twins, batches } = both(f, r);
    expect(v.ok).toBe(true);
    // Every leaf's batch (20 hosts over 6 up links) has some.
    expect(batches).toBe(12);
    expect(twins).toBe(batches);
  });
});

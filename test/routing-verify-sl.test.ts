// The verifier's channel dependencies per VL when routes carry SLs, against an independent
// witness: every (source CA port, destination LID) route followed hop by hop through the LFTs,
// its VL taken from sl(source LID, destination LID) and SL2VL, each pair of consecutive
// switch-to-switch links recorded on that VL (no in-trees, no windows, no sharing between LIDs).
// The verifier shares work between LIDs it can prove alike (routing/verify-walk.ts): LIDs of one
// switch with the same entries everywhere AND the same SL from every source off that switch
// (walkSwitch), and LIDs whose sources all route on one VL (the plain carry). The SL functions
// here break those preconditions: twins with the same entries but other SLs, and sources of one
// LID on different VLs; a credit loop that lives only in such twins must still be found.
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { getEngine, verifyRoutes, type RoutingResult } from '../src/routing/index.js';
import { identitySl2Vl } from '../src/routing/types.js';
import { fabricWithLids } from './helpers/routing-checks.js';
import { cas, verifierDeps, witnessDeps, type Ca } from './helpers/verify-witness.js';

/** A ring of 6 switches, 2 hosts each, every switch forwarding every remote LID clockwise: the
 *  two hosts of a switch have the same entries at every switch (twins). */
function clockwiseRing(): { f: Fabric; r: RoutingResult; hosts: Ca[][] } {
  const f = fabricWithLids('gen:torus:6,hosts=2');
  const r = getEngine('updn').route(f, { lmc: 0 });
  const sw = Array.from({ length: 6 }, (_, i) => f.nodes.findIndex((n) => n.desc === `sw-${i}`));
  for (let i = 0; i < 6; i++) {
    const lft = r.lfts.get(sw[i]!)!;
    const cw = f.nodes[sw[i]!]!.ports.findIndex((p) => p?.peer?.node === sw[(i + 1) % 6]);
    for (let lid = 1; lid < lft.length; lid++) if (lft[lid] !== 0 && lft[lid] !== 255 && isSwitch(f.nodes[f.nodes[sw[i]!]!.ports[lft[lid]!]!.peer!.node]!)) lft[lid] = cw;
  }
  const all = cas(f);
  return { f, r, hosts: sw.map((s) => all.filter((c) => c.sw === s)) };
}

/** The clockwise ring with an SL per destination switch (its LID and its hosts'): {0} on SL 0,
 *  {1} on 2, {2, 3} on 1, {4, 5} on 3; no SL's destinations alone make the ring's cycle. */
function ringWithSls(): ReturnType<typeof clockwiseRing> & { slOf: Map<number, number> } {
  const ring = clockwiseRing();
  const { f, hosts } = ring;
  const swLid = (i: number): number => f.nodes.find((n) => n.desc === `sw-${i}`)!.ports[0]!.lid!;
  const slOf = new Map<number, number>();
  const put = (i: number, sl: number): void => {
    slOf.set(swLid(i), sl);
    for (const h of hosts[i]!) slOf.set(h.lid, sl);
  };
  [2, 3].forEach((i) => put(i, 1));
  put(1, 2);
  [4, 5].forEach((i) => put(i, 3));
  put(0, 0);
  return { ...ring, slOf };
}

describe('verifier with SLs: shared walks only where entries and SLs are the same', () => {
  // Every route clockwise: the routes toward switch i's LIDs make every dependency of the ring
  // but the two at i and i + 1 (into and out of the channel i → i + 1), so the routes of one VL
  // form a cycle unless all its destination switches miss a common one ({0}, {1}, {2, 3}, {4, 5}).
  it('a credit loop only on the VL of twin LIDs (same entries, other SL) is found', () => {
    const { f, r, hosts, slOf } = ringWithSls();
    // Switch 0's second host: the same entries as its first at every switch, on VL 1, whose
    // other destinations ({2, 3}) alone make no cycle: with it, VL 1 has the full ring.
    slOf.set(hosts[0]![1]!.lid, 1);
    const split: RoutingResult = { ...r, sl: (_s, d) => slOf.get(d) ?? 0, slBySourceSwitch: true, sl2vl: identitySl2Vl(4), deadlockFree: true };
    const v = verifyRoutes(f, split);
    expect(v.unreachablePairs).toBe(0);
    expect(v.loopEntries).toBe(0);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, split));
    expect(v.cdg.filter((c) => c.cyclicComponents > 0).map((c) => c.vl)).toEqual([1]);
    expect(v.deadlockFree).toBe(false);
    expect(v.ok).toBe(false);
    // Control: the twin on its first host's SL (VL 0): no VL has a cycle, so the one above came
    // from the twin's SL alone.
    const same: RoutingResult = { ...split, sl: (_s, d) => (d === hosts[0]![1]!.lid ? 0 : (slOf.get(d) ?? 0)) };
    const v2 = verifyRoutes(f, same);
    expect(verifierDeps(v2)).toEqual(witnessDeps(f, same));
    expect(v2.deadlockFree).toBe(true);
    expect(v2.ok).toBe(true);
  });

  // An SL2VL that maps every SL to one VL: the SLs make no difference to the channels, so the
  // verifier does not ask them; the dependencies (the whole ring's, a cycle) are on that VL.
  it('SLs all mapped to one VL: not asked, every dependency on that VL', () => {
    const { f, r } = clockwiseRing();
    let asked = 0;
    const sl = (s: number, d: number): number => {
      asked++;
      return (s + d) % 16;
    };
    const oneVl: RoutingResult = { ...r, sl, slBySourceSwitch: false, sl2vl: Array.from({ length: 16 }, () => 3), deadlockFree: true };
    const v = verifyRoutes(f, oneVl);
    const verifierAsked = asked;
    const w = witnessDeps(f, oneVl);
    expect(verifierAsked).toBe(0);
    expect([...w.keys()]).toEqual([3]);
    expect(verifierDeps(v)).toEqual(w);
    expect(v.vlsUsed).toBe(1);
    expect(v.cdg.filter((c) => c.cyclicComponents > 0).map((c) => c.vl)).toEqual([3]);
    expect(v.ok).toBe(false);
    // Control: one SL on another VL (2 VLs used): the SLs are asked again.
    const two: RoutingResult = { ...oneVl, sl2vl: Array.from({ length: 16 }, (_, i) => (i === 5 ? 1 : 3)) };
    asked = 0;
    const v2 = verifyRoutes(f, two);
    expect(asked).toBeGreaterThan(0);
    expect(verifierDeps(v2)).toEqual(witnessDeps(f, two));
  });

  it('the same with the SL per source port (not per source switch)', () => {
    const { f, r, hosts, slOf } = ringWithSls();
    // Switch 0's second host on VL 1 from every source but one port (switch 3's first host),
    // which sends to it on VL 0 as to the first host: the twins' SL vectors differ in one entry.
    const twin = hosts[0]![1]!.lid;
    const odd = hosts[3]![0]!.lid;
    const res: RoutingResult = { ...r, sl: (s, d) => (d === twin ? (s === odd ? 0 : 1) : (slOf.get(d) ?? 0)), slBySourceSwitch: false, sl2vl: identitySl2Vl(4), deadlockFree: true };
    const v = verifyRoutes(f, res);
    expect(verifierDeps(v)).toEqual(witnessDeps(f, res));
    expect(v.cdg.filter((c) => c.cyclicComponents > 0).map((c) => c.vl)).toEqual([1]);
    expect(v.ok).toBe(false);
  });

  for (const [spec, engine] of [
    ['gen:fattree2:leaves=6,spines=3,hosts=9', 'ftree'],
    ['gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6', 'ftree'],
    ['gen:torus:4x4,hosts=3', 'updn'],
  ] as const) {
    const f = fabricWithLids(spec);
    const r = getEngine(engine).route(f, { lmc: 0 });
    const swOf = new Map(cas(f).map((c) => [c.lid, c.sw]));
    const variants: Array<[string, RoutingResult]> = [
      // By destination only (as nue's layers): every source of a LID on one VL; twins on other VLs.
      ['SL by destination', { ...r, sl: (_s, d) => d % 3, slBySourceSwitch: true, sl2vl: identitySl2Vl(3) }],
      // The same, declared (RoutingResult.slByDestination): asked once per LID.
      ['SL by destination, declared', { ...r, sl: (_s, d) => d % 3, slBySourceSwitch: true, slByDestination: true, sl2vl: identitySl2Vl(3) }],
      ['SL by destination, declared, by port', { ...r, sl: (_s, d) => d % 3, slBySourceSwitch: false, slByDestination: true, sl2vl: identitySl2Vl(3) }],
      // By (source switch, destination): sources of one LID on different VLs.
      ['SL by source switch and destination', { ...r, sl: (s, d) => ((swOf.get(s) ?? 0) * 7 + d) % 4, slBySourceSwitch: true, sl2vl: identitySl2Vl(4) }],
      // By source port: the switch's ports disagree.
      ['SL by source port', { ...r, sl: (s, d) => (s * 5 + d * 3) % 4, slBySourceSwitch: false, sl2vl: identitySl2Vl(4) }],
      // SLs onto fewer VLs (SL2VL merges them).
      ['SLs merged by SL2VL', { ...r, sl: (s, d) => (s + d) % 4, slBySourceSwitch: false, sl2vl: [0, 1, 0, 1, ...new Array<number>(12).fill(0)] }],
    ];
    for (const [name, res] of variants) {
      it(`${spec} ${engine}, ${name}: dependencies per VL as the witness's`, () => {
        const v = verifyRoutes(f, res);
        expect(v.unreachablePairs).toBe(0);
        const w = witnessDeps(f, res);
        expect(verifierDeps(v)).toEqual(w);
        expect(v.vlsUsed).toBe(w.size);
        // Route counts are those of the tables alone (SLs change no path).
        const plain = verifyRoutes(f, r.lfts);
        expect(v.linkLoad).toEqual(plain.linkLoad);
        expect(v.lftPortLoad).toEqual(plain.lftPortLoad);
        expect(v.hops).toEqual(plain.hops);
        expect(v.pairs).toBe(plain.pairs);
      });
    }
  }
});

describe('SL by destination (RoutingResult.slByDestination)', () => {
  for (const [spec, engine] of [
    ['gen:torus:4x4x3,hosts=2', 'nue'],
    ['gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6', 'ftree'],
  ] as const) {
    it(`${spec} ${engine}: the same report as asking every source, the SL asked about once per LID`, () => {
      const f = fabricWithLids(spec);
      const r = getEngine(engine).route(f, engine === 'nue' ? { lmc: 0, maxVls: 4 } : { lmc: 0 });
      const base = r.sl ?? ((_s: number, d: number) => d % 3);
      let calls = 0;
      const sl = (s: number, d: number): number => (calls++, base(s, d));
      const sl2vl = r.sl2vl ?? identitySl2Vl(3);
      const undeclared = verifyRoutes(f, { ...r, sl, slBySourceSwitch: true, slByDestination: false, sl2vl });
      const asked = calls;
      calls = 0;
      const declared = verifyRoutes(f, { ...r, sl, slBySourceSwitch: true, slByDestination: true, sl2vl });
      const lids = cas(f).length;
      expect(calls).toBeLessThanOrEqual(4 * lids);
      expect(declared).toEqual(undeclared);
      expect(verifierDeps(declared)).toEqual(witnessDeps(f, { ...r, sl: base, sl2vl }));
      expect(asked).toBeGreaterThan(4 * lids);
    });
  }
  it("nue's result declares it", () => {
    const f = fabricWithLids('gen:torus:4x4x3,hosts=2');
    const r = getEngine('nue').route(f, { lmc: 0, maxVls: 4 });
    expect(r.vlsUsed).toBeGreaterThan(1);
    expect(r.slByDestination).toBe(true);
  });
});

/**
 * ftree on a degraded tree: the routes to one destination converge, and the links stay balanced.
 *
 * On a regular tree destination-mod-k brings every route to a destination down one path, so a
 * link toward a destination carries a fixed set of destinations: in a permutation at most that
 * many flows (ftree-candidates.ts). A rotation spreads a destination's routes over every link
 * into it instead, and a random permutation then meets more flows there (issue #35: effective
 * bisection bandwidth). Where links are missing the digits no longer line up, so here the path is
 * chosen per destination LID, with the routes counted so far per link (`load`):
 * - the chain: from the destination switch T up, each switch's up links in turn (one hop farther
 *   from T), as long as the switch has quota left: the quota is a multiple of its up links (a
 *   leaf with 4 CAs on 3 of 4 up links chains 3 of them), so the chains give each link the same
 *   number of destinations as its peers, and the rest spread by load instead of doubling one;
 * - every other switch (nearest to T first) takes, among its candidates (its shortest up/down
 *   next hops, ftree-candidates.ts), one whose route meets the chain highest, then the one whose
 *   route on to T is the least loaded (each link against its peers), then the least loaded
 *   link, then the rotation: so the routes join the chain as early as they can and run down it
 *   together, and where they cannot, they follow the remaining capacity;
 * - each switch's CAs' routes (one per CA) are counted as soon as it has chosen, so the switches
 *   after it (the rest of this destination's sources) see them.
 * The candidates are those of the up/down routing, so the routes stay up/down (deadlock-free on
 * one VL) and shortest. It costs about CA LIDs × switch-to-switch channels, twice: above
 * CONVERGE_BUDGET (beyond about 2,000 hosts on a 3-level tree) ftree keeps the weighted rotation
 * (ftree-candidates.ts), and says so.
 */
import type { FabricIndex } from './graph.js';
import type { FtreeCandidates } from './ftree-candidates.js';

/** CA LIDs × directed switch-to-switch links up to which a degraded tree's routes converge. */
export const CONVERGE_BUDGET = 2e7;

export class FtreeConverge {
  /** Routes counted so far per directed switch-to-switch link (adjacency entry). */
  private readonly load: Float64Array;
  /** Per switch, for the current LID: the chosen link (adjacency entry; −1: none) and the highest
   *  chain position its route meets. */
  private readonly next: Int32Array;
  private readonly via: Int32Array;
  private readonly chainAt: Int32Array;
  /** Per switch, for the current LID: the sum over the links of its route to T of each one's
   *  load over the mean of its class (links from one level to the next, up or down). */
  private readonly pathCost: Float64Array;
  private readonly linkClass: Int32Array;
  private readonly classSum: Float64Array;
  private readonly classLinks: Float64Array;
  /** Per switch: how many destinations' chains may pass it going up (`quota`: a multiple of its
   *  up links, so its up links get the same number; the rest spread by load), and how many did. */
  private readonly quota: Int32Array;
  private readonly chained: Int32Array;
  /** The destinations routed, in order, with their chains (for `refine`). */
  private readonly routed: Array<{ T: number; lid: number; i: number; chain: number[] }> = [];

  constructor(
    private readonly ix: FabricIndex,
    private readonly c: FtreeCandidates,
  ) {
    const nSw = ix.nSw;
    this.load = new Float64Array(ix.adjStart[nSw]!);
    this.next = new Int32Array(nSw);
    this.via = new Int32Array(nSw);
    this.chainAt = new Int32Array(nSw).fill(-1);
    this.pathCost = new Float64Array(nSw);
    const level = new Int32Array(nSw);
    c.byLevel.forEach((l, k) => l.forEach((x) => (level[x] = k)));
    const nE = ix.adjStart[nSw]!;
    this.linkClass = new Int32Array(nE);
    this.classSum = new Float64Array(2 * c.byLevel.length);
    this.classLinks = new Float64Array(2 * c.byLevel.length);
    for (let x = 0; x < nSw; x++) {
      for (let e = ix.adjStart[x]!; e < ix.adjStart[x + 1]!; e++) {
        const k = 2 * level[x]! + (level[ix.adjSw[e]!]! > level[x]! ? 0 : 1);
        this.linkClass[e] = k;
        this.classLinks[k]!++;
      }
    }
    this.chained = new Int32Array(nSw);
    this.quota = chainQuota(ix, c);
  }

  /** Route the destination with index i at T (after c.prepare(T)) into `lfts[*][lid]` and count
   *  its routes; kept for `refine`. */
  route(T: number, lid: number, i: number, lfts: Uint8Array[]): void {
    const { c, chained, quota } = this;
    const { dist, upStart, upSw } = c;
    // The chain: from T up while the switch has quota left, its next up link in turn.
    const chain = [T];
    for (let prev = T; chained[prev]! < quota[prev]!; ) {
      const lo = upStart[prev]!;
      const n = upStart[prev + 1]! - lo;
      let p = -1;
      for (let t = 0; t < n && p < 0; t++) {
        const q = upSw[lo + ((chained[prev]! + t) % n)]!;
        if (dist[q] === dist[prev]! + 1 && !chain.includes(q)) p = q;
      }
      chained[prev]!++;
      if (p < 0) break;
      chain.push(p);
      prev = p;
    }
    this.routed.push({ T, lid, i, chain });
    this.decide(T, lid, i, lfts, chain);
  }

  /** Once every destination is routed: each again in turn, its routes first taken out of the
   *  counts, so its choices see every other destination's final routes (one pass of rip-up and
   *  re-route; the chains stay). */
  refine(lfts: Uint8Array[]): void {
    const { c, ix, load, classSum, linkClass } = this;
    const { adjSw, portEntry } = ix;
    const width = ix.maxPorts + 1;
    let cur = -1;
    for (const { T, lid, i, chain } of this.routed) {
      if (T !== cur) c.prepare((cur = T), false);
      for (let x = 0; x < c.nR; x++) {
        const s = c.rList[x]!;
        const w = ix.caCount[s]!;
        if (w === 0) continue;
        for (let y = s, hops = 0; y !== T && hops < ix.nSw; hops++) {
          const e = portEntry[y * width + lfts[y]![lid]!]!;
          if (e === undefined || e < 0) break;
          load[e]! -= w;
          classSum[linkClass[e]!]! -= w;
          y = adjSw[e]!;
        }
      }
      this.decide(T, lid, i, lfts, chain);
    }
  }

  /** Every switch of T's part chooses its link to the destination (`chain`: T and the switches
   *  above it the routes should join), its CAs' routes counted as it goes. */
  private decide(T: number, lid: number, i: number, lfts: Uint8Array[], chain: readonly number[]): void {
    const { c, ix, load, next, via, chainAt, pathCost, linkClass, classSum, classLinks } = this;
    const { rList, candLo, candHi, candPort, sigma, nR } = c;
    // a class's candidates name ports: each switch's own link by its port
    const { adjSw, portEntry: entryOf } = ix;
    const width = ix.maxPorts + 1;
    chain.forEach((s, k) => (chainAt[s] = k));
    via[T] = 0;
    next[T] = -1;
    // Every switch of T's part, nearest first: the candidate whose route meets the chain highest,
    // then the one whose route on to T is the least loaded against its links' peers (the sum
    // over its links of the load over the mean of the links between the same levels in the same
    // direction), then the least loaded link, then the rotation.
    pathCost[T] = 0;
    for (let x = 0; x < nR; x++) {
      const s = rList[x]!;
      const lo = candLo[s]!;
      const n = candHi[s]! - lo;
      next[s] = -1;
      if (n <= 0) continue;
      let best = -1;
      let bestVia = -1;
      let bestPath = 0;
      let bestLoad = 0;
      let bestRank = 0;
      for (let q = 0; q < n; q++) {
        const e = entryOf[s * width + candPort[lo + q]!]!;
        const r = adjSw[e]!;
        const v = chainAt[s]! > 0 ? (chainAt[r] === chainAt[s]! - 1 ? 1 : 0) : via[r]!;
        const l = load[e]!;
        const k = linkClass[e]!;
        const path = (l + 1) / (classSum[k]! / classLinks[k]! + 1) + pathCost[r]!;
        const rank = (q - ((i + sigma[s]!) % n) + n) % n;
        if (best < 0 || v > bestVia || (v === bestVia && (path < bestPath || (path === bestPath && (l < bestLoad || (l === bestLoad && rank < bestRank)))))) {
          best = lo + q;
          bestVia = v;
          bestPath = path;
          bestLoad = l;
          bestRank = rank;
        }
      }
      const e = entryOf[s * width + candPort[best]!]!;
      next[s] = e;
      via[s] = chainAt[s]! > 0 ? chainAt[s]! : via[adjSw[e]!]!;
      pathCost[s] = bestPath;
      lfts[s]![lid] = candPort[best]!;
      // this switch's CAs' routes, counted now: the switches after it see them
      const w = ix.caCount[s]!;
      if (w > 0) {
        for (let y = s, f = e; f >= 0; y = adjSw[f]!, f = next[y]!) {
          load[f]! += w;
          classSum[linkClass[f]!]! += w;
        }
      }
    }
    for (const x of chain) chainAt[x] = -1;
  }
}

/** Per switch, the destinations whose chains pass it going up: of a leaf's CA LIDs, of the chains
 *  its down links bring a switch above, as many per up link as the level's most up links take
 *  each (a leaf with 4 CAs on 3 of 4 up links: 1 per link, 3; the fourth's routes spread by
 *  load), so no link above gets more chains than its peers (the rest spread by load). */
function chainQuota(ix: FabricIndex, c: FtreeCandidates): Int32Array {
  const { upStart, upSw, byLevel } = c;
  const arrive = new Int32Array(ix.nSw);
  for (const ep of ix.ends) if (!ep.isSwitch && ep.sw >= 0) arrive[ep.sw]! += 1 << ep.lmc;
  const quota = new Int32Array(ix.nSw);
  for (const level of byLevel) {
    let kMax = 0;
    for (const x of level) kMax = Math.max(kMax, upStart[x + 1]! - upStart[x]!);
    for (const x of level) {
      const n = upStart[x + 1]! - upStart[x]!;
      if (n === 0) continue;
      const per = Math.floor(arrive[x]! / kMax);
      quota[x] = per * n;
      for (let j = upStart[x]!; j < upStart[x + 1]!; j++) arrive[upSw[j]!]! += per;
    }
  }
  return quota;
}

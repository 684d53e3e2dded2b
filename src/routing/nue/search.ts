/** nue's search: a unit's tree on one layer, hop by hop outward from its switch, each switch taking
 *  the least loaded link toward an already routed neighbour whose dependency the layer accepts. */
import type { AcyclicCdg } from '../acyclic.js';
import type { FabricIndex } from '../graph.js';
import type { Components } from './setup.js';
import type { Unit, UnitTree } from './tree.js';

export class LayerSearch {
  /** Per switch: the accumulated load of its path to T. */
  private readonly cost: Float64Array;
  /** Per switch: the level pass (stamp) it was last offered a link in, and its best offer. */
  private readonly touchStamp: Int32Array;
  private readonly bestE: Int32Array;
  private readonly bestC: Float64Array;
  private stamp = 0;
  /** Among links of equal cost, a preference that rotates with the switch and the LIDs routed so
   *  far (on a fat tree the costs tie everywhere: the lowest port would send every destination
   *  the same way). tieRank(s, e) = (e − adjStart[s] + spread + s) mod degree(s), from the switch's
   *  offset (spread + s) mod degree, taken when it is first touched in a round. */
  private readonly tieOff: Int32Array;
  private readonly bestR: Int32Array;
  private readonly candE: number[] = [];
  private readonly candC: number[] = [];
  /** The switches settled in the last level, the next level's, and those offered a link. */
  private frontier: number[] = [];
  private next: number[] = [];
  private readonly touched: number[] = [];

  constructor(
    private readonly ix: FabricIndex,
    private readonly comps: Components,
    private readonly tree: UnitTree,
  ) {
    const nSw = ix.nSw;
    this.cost = new Float64Array(nSw);
    this.touchStamp = new Int32Array(nSw);
    this.bestE = new Int32Array(nSw);
    this.bestC = new Float64Array(nSw);
    this.tieOff = new Int32Array(nSw);
    this.bestR = new Int32Array(nSw);
  }

  /** Route unit u on free layer g, or take back what it added and return false. Writes the unit
   *  tree's `settled`, `outCh` and `lev` (reads `load` and `spread`) and g's dependencies. */
  route(u: Unit, g: AcyclicCdg): boolean {
    const T = u.T;
    const { settled, outCh, lev } = this.tree;
    g.mark();
    lev.fill(-1);
    lev[T] = 0;
    this.cost[T] = 0;
    outCh[T] = -1;
    settled.length = 0;
    settled.push(T);
    this.frontier.length = 0;
    this.frontier.push(T);
    const want = this.comps.compSize[this.comps.comp[T]!]!;
    for (let L = 0; this.frontier.length > 0 && settled.length < want; L++) {
      this.offer();
      this.settle(L, T, g);
      [this.frontier, this.next] = [this.next, this.frontier];
    }
    if (settled.length < want) {
      g.undo();
      return false;
    }
    return true;
  }

  /** One pass over the frontier's links: every unrouted neighbour's cheapest link into it (`touched`,
   *  bestE/bestC/bestR). Reads `lev`, `cost`, `load` and `spread`. */
  private offer(): void {
    const { adjStart, adjSw, adjReverse } = this.ix;
    const { lev, load, spread } = this.tree;
    const { cost, touchStamp, touched, tieOff, bestR, bestE, bestC } = this;
    const stamp = ++this.stamp;
    touched.length = 0;
    for (const n of this.frontier) {
      const cn = cost[n]!;
      for (let e = adjStart[n]!; e < adjStart[n + 1]!; e++) {
        const s = adjSw[e]!;
        if (lev[s]! >= 0) continue;
        const r = adjReverse[e]!;
        if (r < 0) continue;
        const c = cn + load[r]!;
        const a = adjStart[s]!;
        const deg = adjStart[s + 1]! - a;
        if (touchStamp[s] !== stamp) {
          touchStamp[s] = stamp;
          touched.push(s);
          const off = (spread + s) % deg;
          tieOff[s] = off;
          const rank = r - a + off;
          bestR[s] = rank >= deg ? rank - deg : rank;
          bestE[s] = r;
          bestC[s] = c;
          continue;
        }
        const bc = bestC[s]!;
        if (c > bc) continue;
        let rank = r - a + tieOff[s]!;
        if (rank >= deg) rank -= deg;
        if (c < bc || rank < bestR[s]!) {
          bestE[s] = r;
          bestC[s] = c;
          bestR[s] = rank;
        }
      }
    }
  }

  /** Settle the touched switches at level L + 1 on their best link whose dependency g accepts (the
   *  cheapest first, the others in order of cost). Writes `lev`, `cost`, `outCh`, `settled`, `next`. */
  private settle(L: number, T: number, g: AcyclicCdg): void {
    const { adjSw } = this.ix;
    const { settled, outCh, lev } = this.tree;
    const { cost, bestE, bestC, next } = this;
    next.length = 0;
    for (const s of this.touched) {
      const b = bestE[s]!;
      const xb = adjSw[b]!;
      let e = b;
      let c = bestC[s]!;
      if (xb !== T && !g.tryAdd(b, outCh[xb]!)) {
        // The cheapest link would close a cycle: the others in order of cost.
        const k = this.fallback(s, b, L, T, g);
        if (k < 0) continue;
        e = this.candE[k]!;
        c = this.candC[k]!;
      }
      lev[s] = L + 1;
      cost[s] = c;
      outCh[s] = e;
      settled.push(s);
      next.push(s);
    }
  }

  /** s's other links into level L (not b) by cost (ties keep port order) in candE/candC: the index
   *  of the first whose dependency g accepts, or −1. */
  private fallback(s: number, b: number, L: number, T: number, g: AcyclicCdg): number {
    const { adjStart, adjSw } = this.ix;
    const { outCh, lev, load } = this.tree;
    const { cost, candE, candC } = this;
    candE.length = 0;
    candC.length = 0;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const x = adjSw[e]!;
      if (lev[x] !== L || e === b) continue;
      const c = cost[x]! + load[e]!;
      // insertion by cost (ties keep port order)
      let k = candE.length;
      candE.push(e);
      candC.push(c);
      while (k > 0 && candC[k - 1]! > c) {
        candE[k] = candE[k - 1]!;
        candC[k] = candC[k - 1]!;
        k--;
      }
      candE[k] = e;
      candC[k] = c;
    }
    for (let k = 0; k < candE.length; k++) {
      const e = candE[k]!;
      const x = adjSw[e]!;
      if (x !== T && !g.tryAdd(e, outCh[x]!)) continue;
      return k;
    }
    return -1;
  }
}

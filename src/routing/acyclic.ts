/** A channel-dependency graph kept acyclic while dependencies are added (the engine-side
 * counterpart of cdg.ts, which finds cycles in finished tables). Nodes are the directed
 * switch-to-switch channels of a FabricIndex (adjacency entries); a dependency a → b exists when a
 * route enters a switch over a and leaves over b. A topological order of the channels is kept
 * up to date (Pearce & Kelly, "A dynamic topological sort algorithm for directed acyclic graphs",
 * JEA 2006): a dependency that agrees with the order costs O(1); one that does not searches only
 * the channels between its two ends in the order, and is refused when it would close a cycle. */
import type { FabricIndex } from './graph.js';

/** Bit index of dependency (a → b) where b is an adjacency entry of the switch a leads to. */
export function depStarts(ix: FabricIndex): Float64Array {
  const nE = ix.adjStart[ix.nSw]!;
  const out = new Float64Array(nE + 1);
  for (let e = 0; e < nE; e++) {
    const h = ix.adjSw[e]!;
    out[e + 1] = out[e]! + (ix.adjStart[h + 1]! - ix.adjStart[h]!);
  }
  return out;
}

export class AcyclicCdg {
  readonly bits: Uint8Array;
  /** Position of each channel in a topological order of the dependencies present. */
  readonly ord: Int32Array;
  /** Dependencies present (distinct). */
  deps = 0;
  /** Dependencies added since the last mark(), so a refused tree can be taken back. */
  private log: number[] = [];
  private readonly seen: Int32Array;
  private epoch = 0;
  private readonly stack: Int32Array;
  private readonly fwd: number[] = [];
  private readonly bwd: number[] = [];

  /** @param searchLimit channels a reordering may visit; beyond it the dependency is refused
   *  (refusing is always safe: it only narrows the routes this layer accepts). */
  constructor(
    private readonly ix: FabricIndex,
    private readonly depStart: Float64Array,
    private readonly searchLimit = Infinity,
    order?: Int32Array,
  ) {
    const nE = ix.adjStart[ix.nSw]!;
    this.bits = new Uint8Array(Math.ceil(depStart[nE]! / 8) + 1);
    this.ord = order ?? Int32Array.from({ length: nE }, (_, i) => i);
    this.seen = new Int32Array(nE);
    this.stack = new Int32Array(nE + 1);
  }

  private bit(a: number, b: number): number {
    return this.depStart[a]! + (b - this.ix.adjStart[this.ix.adjSw[a]!]!);
  }

  has(a: number, b: number): boolean {
    const i = this.bit(a, b);
    return (this.bits[i >>> 3]! & (1 << (i & 7))) !== 0;
  }

  /** Add a dependency that is known to agree with the current order (initial fill). */
  addOrdered(a: number, b: number): void {
    const i = this.bit(a, b);
    if (this.bits[i >>> 3]! & (1 << (i & 7))) return;
    this.bits[i >>> 3] = this.bits[i >>> 3]! | (1 << (i & 7));
    this.deps++;
  }

  /** Start recording additions (for undo()). */
  mark(): void {
    this.log.length = 0;
  }

  /** Remove every dependency added since mark(). The order stays a valid topological order. */
  undo(): void {
    for (const i of this.log) {
      this.bits[i >>> 3] = this.bits[i >>> 3]! & ~(1 << (i & 7));
      this.deps--;
    }
    this.log.length = 0;
  }

  /** Add a → b unless it closes a cycle; true when the dependency is (now) present. */
  tryAdd(a: number, b: number): boolean {
    const i = this.bit(a, b);
    if (this.bits[i >>> 3]! & (1 << (i & 7))) return true;
    const ord = this.ord;
    const ub = ord[a]!;
    const lb = ord[b]!;
    if (lb < ub && !this.reorder(a, b, lb, ub)) return false;
    this.bits[i >>> 3] = this.bits[i >>> 3]! | (1 << (i & 7));
    this.deps++;
    this.log.push(i);
    return true;
  }

  /** Pearce–Kelly: b comes before a in the order; find what b reaches below a and what reaches a
   *  above b, refuse if b reaches a, else move the first set after the second. */
  private reorder(a: number, b: number, lb: number, ub: number): boolean {
    const { adjStart, adjSw, adjReverse } = this.ix;
    const ord = this.ord;
    const seen = this.seen;
    const stack = this.stack;
    const ep = ++this.epoch;
    const fwd = this.fwd;
    const bwd = this.bwd;
    fwd.length = 0;
    bwd.length = 0;
    // Forward from b over channels with ord < ub.
    let sp = 0;
    stack[sp++] = b;
    seen[b] = ep;
    while (sp > 0) {
      const c = stack[--sp]!;
      fwd.push(c);
      if (fwd.length > this.searchLimit) return false;
      const h = adjSw[c]!;
      const base = this.depStart[c]! - adjStart[h]!;
      for (let f = adjStart[h]!; f < adjStart[h + 1]!; f++) {
        const i = base + f;
        if (!(this.bits[i >>> 3]! & (1 << (i & 7)))) continue;
        if (f === a) return false;
        if (seen[f] === ep || ord[f]! > ub) continue;
        seen[f] = ep;
        stack[sp++] = f;
      }
    }
    // Backward from a over channels with ord > lb.
    const ep2 = ++this.epoch;
    sp = 0;
    stack[sp++] = a;
    seen[a] = ep2;
    while (sp > 0) {
      const c = stack[--sp]!;
      bwd.push(c);
      if (bwd.length > this.searchLimit) return false;
      // Channels g = (x → u) into the tail u of c: reverses of u's out-channels.
      let u = 0;
      const r = adjReverse[c]!;
      u = r >= 0 ? adjSw[r]! : this.tailOf(c);
      for (let hh = adjStart[u]!; hh < adjStart[u + 1]!; hh++) {
        const g = adjReverse[hh]!;
        if (g < 0) continue;
        const i = this.depStart[g]! + (c - adjStart[u]!);
        if (!(this.bits[i >>> 3]! & (1 << (i & 7)))) continue;
        if (seen[g] === ep2 || ord[g]! < lb) continue;
        seen[g] = ep2;
        stack[sp++] = g;
      }
    }
    // New positions: the union of their old positions, backward set first, each in its old order.
    const byOrd = (x: number, y: number): number => ord[x]! - ord[y]!;
    bwd.sort(byOrd);
    fwd.sort(byOrd);
    const slots: number[] = [];
    for (const c of bwd) slots.push(ord[c]!);
    for (const c of fwd) slots.push(ord[c]!);
    slots.sort((x, y) => x - y);
    let k = 0;
    for (const c of bwd) ord[c] = slots[k++]!;
    for (const c of fwd) ord[c] = slots[k++]!;
    return true;
  }

  private tailOf(c: number): number {
    const { adjStart } = this.ix;
    let lo = 0;
    let hi = this.ix.nSw - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (adjStart[mid]! <= c) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}

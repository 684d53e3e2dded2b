/** Incremental re-routing's repairs of a column whose routes are broken (routing/incremental.ts):
 * a switch LID's detours, a CA LID's balanced detours, and the multi-source shortest-path repair
 * from the intact part of the tree. Each works on the ColumnWalk's column after its walk(T). */
import type { FabricIndex } from './graph.js';
import { BROKEN, GOOD, type ColumnWalk } from './incremental-walk.js';
import { NO_ROUTE } from './types.js';

export class ColumnRepair {
  /** CA detours taken (a retry without them is worth it when the result has cycles). */
  detours = 0;
  /** Switches whose entries toward switch LIDs changed, and the switches they now lead to. */
  readonly switchLidSwitches = new Set<number>();
  // detour's BFS
  private readonly bfsFrom: Int32Array;
  private readonly bfsQueue: Int32Array;
  private readonly bfsPrev: Int32Array;
  // The repair's bucket queue (by distance to T) and scratch.
  private readonly buckets: number[][] = [];
  private readonly fixed: Uint8Array;
  private readonly tent: Int32Array;
  private readonly upstream: Float64Array;
  private readonly cands: number[] = [];

  /** `detourLimit`: the most routes a CA detour may put on a link. */
  constructor(
    private readonly ix: FabricIndex,
    private readonly cw: ColumnWalk,
    private readonly detourLimit: number,
  ) {
    const nSw = ix.nSw;
    this.bfsFrom = new Int32Array(nSw);
    this.bfsQueue = new Int32Array(nSw);
    this.bfsPrev = new Int32Array(nSw);
    this.fixed = new Uint8Array(nSw);
    this.tent = new Int32Array(nSw);
    this.upstream = new Float64Array(nSw);
  }

  /** The switches whose own entry is dead (not a loop: a port that leads to no switch). */
  private deadSwitches(): number[] {
    const dead: number[] = [];
    for (let s = 0; s < this.ix.nSw; s++) if (this.cw.state[s] === BROKEN && this.cw.channel(s) < 0) dead.push(s);
    return dead;
  }

  /** A switch LID's column (management traffic, no weight in the link load): only the switches
   *  whose own entry is dead move, each along the shortest detour to a switch whose route works
   *  (the switches on the detour move with it); the switches behind them keep their entries.
   *  False (nothing changed) when the detours do not give a working column. */
  detour(T: number): boolean {
    const { col, state } = this.cw;
    const saved = Uint8Array.from(col);
    for (const u of this.deadSwitches()) {
      if (state[u] === GOOD) continue;
      if (!this.detourFrom(u)) {
        col.set(saved);
        this.cw.walk(T);
        return false;
      }
    }
    if (this.cw.walk(T) === 0) return true;
    col.set(saved);
    this.cw.walk(T);
    return false;
  }

  /** The shortest path (BFS) from u to a GOOD switch, written into `col` (its switches GOOD);
   *  false when there is none. */
  private detourFrom(u: number): boolean {
    const { adjStart, adjSw, adjPort } = this.ix;
    const { col, state } = this.cw;
    const { bfsFrom, bfsQueue, bfsPrev } = this;
    bfsFrom.fill(-1);
    bfsFrom[u] = u;
    let head = 0;
    let tail = 0;
    bfsQueue[tail++] = u;
    let found = -1;
    while (head < tail && found < 0) {
      const x = bfsQueue[head++]!;
      for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
        const y = adjSw[e]!;
        if (bfsFrom[y]! >= 0) continue;
        bfsFrom[y] = e; // reached by channel e (x → y)
        bfsPrev[y] = x;
        if (state[y] === GOOD) {
          found = y;
          break;
        }
        bfsQueue[tail++] = y;
      }
    }
    if (found < 0) return false;
    for (let y = found; y !== u; ) {
      const x = bfsPrev[y]!;
      col[x] = adjPort[bfsFrom[y]!]!;
      state[x] = GOOD;
      y = x;
    }
    return true;
  }

  /** A CA LID's column: each switch whose own entry is dead moves to the neighbour whose working
   *  route (not through it) has the least loaded link once the traffic that reached the switch is
   *  on it; the switches behind it keep their entries. False, with the column, loads and counters
   *  as they were, when a dead switch has no working neighbour or the detour's busiest link would
   *  carry more than the detour limit. */
  caDetour(T: number): boolean {
    const { nSw, adjSw, adjPort } = this.ix;
    const cw = this.cw;
    const { col, state, counters, load, W } = cw;
    const saved = Uint8Array.from(col);
    const moved: { u: number; e: number; w: number }[] = [];
    const undo = (): false => {
      for (let k = moved.length - 1; k >= 0; k--) {
        const { u, e, w } = moved[k]!;
        counters[u * W + adjPort[e]!]!--;
        load[e]! -= w;
        cw.follow(adjSw[e]!, T, (f) => (load[f]! -= w));
      }
      this.detours -= moved.length;
      col.set(saved);
      cw.walk(T);
      return false;
    };
    // The dead switches in order (a switch before the last one moved stays as it was).
    let from = 0;
    for (let guard = 0; guard < nSw; guard++) {
      let u = -1;
      for (let s = from; s < nSw && u < 0; s++) if (state[s] === BROKEN && cw.channel(s) < 0) u = s;
      if (u < 0) return undo(); // broken by a loop, not by a dead entry
      from = u + 1;
      // The CA sources whose route ends at u (all of them broken, u's own included).
      const w = cw.sourcesInto(T, u);
      const best = this.bestDetour(u, T, w);
      if (best < 0) return undo();
      col[u] = adjPort[best]!;
      counters[u * W + col[u]!]!++;
      load[best]! += w;
      cw.follow(adjSw[best]!, T, (f) => (load[f]! += w));
      moved.push({ u, e: best, w });
      this.detours++;
      if (cw.settle(T, u, best) === 0) return true;
    }
    return undo();
  }

  /** u's channel to a GOOD neighbour whose route to T has the least loaded link (then the least
   *  load in all) with w more routes on it; −1 when there is none or it exceeds the limit. */
  private bestDetour(u: number, T: number, w: number): number {
    const { adjStart, adjSw } = this.ix;
    const cw = this.cw;
    const { state, load } = cw;
    let best = -1;
    let bestCost = Infinity;
    let bestSum = Infinity;
    for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) {
      const v = adjSw[e]!;
      if (state[v] !== GOOD) continue;
      {
        // Not up into a switch where a switch LID's route changed (it may come down there and
        // up again: with this detour's turn, a cycle).
        const f = cw.channel(v);
        if (f >= 0 && this.switchLidSwitches.has(adjSw[f]!)) continue;
      }
      let worst = load[e]! + w;
      let sum = worst;
      cw.follow(v, T, (f) => {
        worst = Math.max(worst, load[f]! + w);
        sum += load[f]!;
      });
      if (worst < bestCost || (worst === bestCost && sum < bestSum)) {
        best = e;
        bestCost = worst;
        bestSum = sum;
      }
    }
    return best < 0 || bestCost > this.detourLimit ? -1 : best;
  }

  /** The switches whose route is broken (a dead port, a loop, a path through another broken
   *  switch) re-routed by a multi-source shortest-path search from the intact part of the tree,
   *  LID l toward T; `sign` 1 for a CA LID (its routes counted), 0 for a switch LID. Switches that
   *  cannot reach T keep no route. */
  repair(T: number, l: number, sign: number): void {
    if (!this.cw.distValid) this.cw.walk(T);
    this.unloadBroken(T, sign);
    const buckets = this.seedBuckets();
    const { fixed, tent } = this;
    for (let d = 0; d < buckets.length; d++) {
      const b = buckets[d];
      if (!b) continue;
      for (let k = 0; k < b.length; k++) {
        const u = b[k]!;
        if (fixed[u] || tent[u] !== d) continue;
        this.fixSwitch(u, d, T, l, sign);
        fixed[u] = 1;
        this.relax(u, d);
      }
    }
    const { col, state } = this.cw;
    for (let s = 0; s < this.ix.nSw; s++) if (state[s] !== GOOD) col[s] = NO_ROUTE;
  }

  /** CA sources whose route passed each switch (an estimate of what will come through it: only
   *  broken switches need it, and only broken sources reach them), and the broken part's routes
   *  out of the load and counters. */
  private unloadBroken(T: number, sign: number): void {
    const { nSw, adjSw, caCount } = this.ix;
    const cw = this.cw;
    const { state, counters, load, col, W } = cw;
    const upstream = this.upstream;
    upstream.fill(0);
    for (let s = 0; s < nSw; s++) {
      const w = caCount[s]!;
      if (!w || state[s] !== BROKEN) continue;
      upstream[s]! += w;
      cw.follow(s, T, (e) => (upstream[adjSw[e]!]! += w));
    }
    for (let s = 0; s < nSw; s++) {
      if (state[s] !== BROKEN) continue;
      if (sign && cw.channel(s) >= 0) counters[s * W + col[s]!]!--;
      const w = caCount[s]! * sign;
      if (w) cw.follow(s, T, (e) => (load[e]! -= w));
    }
  }

  /** Good switches are final at their distance; the broken ones start from their good neighbours
   *  (then from each other as they are fixed). Returns the buckets by tentative distance. */
  private seedBuckets(): number[][] {
    const { nSw, adjStart, adjSw } = this.ix;
    const { state, dist } = this.cw;
    const { fixed, tent, buckets } = this;
    fixed.fill(0);
    tent.fill(0x7fffffff);
    buckets.length = 0;
    for (let s = 0; s < nSw; s++) {
      if (state[s] === GOOD) {
        tent[s] = dist[s]!;
        fixed[s] = 1;
      }
    }
    for (let s = 0; s < nSw; s++) {
      if (state[s] === GOOD) continue;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const v = adjSw[e]!;
        if (fixed[v] && tent[v]! + 1 < tent[s]!) tent[s] = tent[v]! + 1;
      }
      if (tent[s]! < 0x7fffffff) (buckets[tent[s]!] ??= []).push(s);
    }
    return buckets;
  }

  /** A broken switch u at distance d: among its fixed neighbours at distance d−1, the one whose
   *  path to T has the least loaded link once u's traffic is on it (then the least load, then the
   *  fewest LIDs on the port); ties rotate with the switch and the LID, so that switches alike
   *  spread. Writes u's entry, its counters and load; u becomes GOOD. */
  private fixSwitch(u: number, d: number, T: number, l: number, sign: number): void {
    const { adjStart, adjSw, adjPort, caCount } = this.ix;
    const cw = this.cw;
    const { col, state, counters, load, W } = cw;
    const { fixed, tent, cands } = this;
    cands.length = 0;
    for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) {
      const v = adjSw[e]!;
      if (fixed[v] && tent[v] === d - 1) cands.push(e);
    }
    const w = this.upstream[u]! * sign;
    let best = -1;
    let bestCost = Infinity;
    let bestSum = Infinity;
    let bestCount = 0;
    const rot = (u + l) % cands.length;
    for (let c = 0; c < cands.length; c++) {
      const e = cands[(c + rot) % cands.length]!;
      let worst = load[e]! + w;
      let sum = worst;
      cw.follow(adjSw[e]!, T, (f) => {
        worst = Math.max(worst, load[f]! + w);
        sum += load[f]!;
      });
      const cnt = counters[u * W + adjPort[e]!]!;
      if (worst < bestCost || (worst === bestCost && (sum < bestSum || (sum === bestSum && cnt < bestCount)))) {
        best = e;
        bestCost = worst;
        bestSum = sum;
        bestCount = cnt;
      }
    }
    col[u] = adjPort[best]!;
    counters[u * W + col[u]!]! += sign;
    const own = caCount[u]! * sign;
    if (own) cw.follow(u, T, (f) => (load[f]! += own));
    state[u] = GOOD;
  }

  /** Relax the broken switches that can reach u (the reverse of u's channels) to distance d + 1. */
  private relax(u: number, d: number): void {
    const { adjStart, adjSw, adjReverse } = this.ix;
    const { fixed, tent, buckets } = this;
    for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) {
      const v = adjSw[e]!;
      if (fixed[v] || adjReverse[e]! < 0) continue;
      if (d + 1 < tent[v]!) {
        tent[v] = d + 1;
        (buckets[d + 1] ??= []).push(v);
      }
    }
  }
}

/**
 * dfsssp's virtual layers: the channel dependency graph (CDG) of the routes, and its cycles broken
 * by moving paths to higher layers. Channels are the switch-to-switch adjacency entries of
 * graph.ts's FabricIndex; the dependency (e1 → e2), e2 leaving the switch e1 enters, has the index
 * depStart[e1] + (e2 - adjStart[head of e1]).
 */
import { swName, type FabricIndex } from './graph.js';
import { RoutingNotApplicable, type RoutingPhase } from './types.js';
import { InternalError } from '../util/errors.js';

/** depStart of the dependency index: channel e's dependencies are depStart[e] .. depStart[e+1]-1. */
export function dependencyStarts(ix: FabricIndex): Int32Array {
  const { adjStart, adjSw } = ix;
  const nE = adjStart[ix.nSw]!;
  const depStart = new Int32Array(nE + 1);
  for (let e = 0; e < nE; e++) depStart[e + 1] = depStart[e]! + (adjStart[adjSw[e]! + 1]! - adjStart[adjSw[e]!]!);
  return depStart;
}

/** A cycle of the CDG: the grey channels stack[j..sp-1], closing back to stack[j]. */
export interface CdgCycle {
  stack: Int32Array;
  j: number;
  sp: number;
}

/**
 * Depth-first search of the CDG whose dependencies are those with `present(index)`, one cycle at
 * a time (`next`). Between two calls the caller may remove dependencies (only): the search goes on
 * from the current root with the grey channels cleared (finished channels stay valid, as
 * dependencies were only removed). Iterative over typed arrays.
 */
export class CycleSearch {
  private readonly color: Uint8Array; // 0 white, 1 grey (on stack), 2 black
  private readonly stackV: Int32Array;
  private readonly stackK: Int32Array;
  private root = -1;
  private sp = 0;
  private found = false;

  constructor(
    private readonly ix: FabricIndex,
    private readonly depStart: Int32Array,
    private readonly present: (i: number) => boolean,
  ) {
    const nE = ix.adjStart[ix.nSw]!;
    this.color = new Uint8Array(nE);
    this.stackV = new Int32Array(nE + 1);
    this.stackK = new Int32Array(nE + 1);
  }

  /** The next cycle, or undefined when the CDG has none left. */
  next(): CdgCycle | undefined {
    const { adjStart, adjSw } = this.ix;
    const { color, stackV, stackK, depStart, present } = this;
    const nE = adjStart[this.ix.nSw]!;
    let sp = this.sp;
    if (this.found) {
      for (let q = 0; q < sp; q++) color[stackV[q]!] = 0;
      color[this.root] = 1;
      stackV[0] = this.root;
      stackK[0] = 0;
      sp = 1;
      this.found = false;
    }
    for (;;) {
      if (sp === 0) {
        let r = this.root + 1;
        while (r < nE && color[r] !== 0) r++;
        this.root = r;
        if (r >= nE) {
          this.sp = 0;
          return undefined;
        }
        stackV[0] = r;
        stackK[0] = 0;
        color[r] = 1;
        sp = 1;
      }
      const v = stackV[sp - 1]!;
      const h = adjSw[v]!;
      const deg = adjStart[h + 1]! - adjStart[h]!;
      let k = stackK[sp - 1]!;
      let descended = false;
      let cycleAt = -1;
      while (k < deg) {
        const kk = k++;
        if (!present(depStart[v]! + kk)) continue;
        const w = adjStart[h]! + kk;
        if (color[w] === 0) {
          stackK[sp - 1] = k;
          stackV[sp] = w;
          stackK[sp] = 0;
          color[w] = 1;
          sp++;
          descended = true;
          break;
        }
        if (color[w] === 1) {
          cycleAt = w;
          break;
        }
      }
      if (descended) continue;
      if (cycleAt >= 0) {
        let j = sp - 1;
        while (stackV[j] !== cycleAt) j--;
        this.sp = sp;
        this.found = true;
        return { stack: stackV, j, sp };
      }
      stackK[sp - 1] = k;
      color[v] = 2;
      sp--;
    }
  }
}

/** True when the CDG with the dependencies set in the bit set `bits` has no cycle. */
export function cdgAcyclic(ix: FabricIndex, depStart: Int32Array, bits: Uint32Array): boolean {
  return new CycleSearch(ix, depStart, (i) => ((bits[i >>> 5]! >>> (i & 31)) & 1) !== 0).next() === undefined;
}

export interface DfssspLayers {
  /** Source switches (those with CAs) in switch order, and switch → index in it (−1: not a source). */
  srcSw: number[];
  srcIdx: Int32Array;
  /** Layer of each (source switch i, destination LID d) path at i * (maxLid + 1) + d. */
  layer: Uint8Array;
  vlsUsed: number;
  cyclesBroken: number;
  moved: number;
}

/** Every (source switch, destination LID) path starts in layer 0; while a layer's CDG has a cycle,
 *  the dependency on it used by the fewest paths is broken by moving its paths to the next layer.
 *  More layers than maxVls → RoutingNotApplicable. `lfts` are the engine's tables (switch index).
 *  A step ('layers') after each credit loop broken. */
export function* assignLayers(ix: FabricIndex, lfts: Uint8Array[], depStart: Int32Array, maxVls: number): Generator<RoutingPhase, DfssspLayers, void> {
  const { nSw, adjStart, adjSw, adjPort, ends, maxLid, caCount } = ix;
  const nE = adjStart[nSw]!;
  const W = ix.maxPorts + 1;
  const srcIdx = new Int32Array(nSw).fill(-1);
  const srcSw: number[] = [];
  for (let s = 0; s < nSw; s++) if (caCount[s]! > 0) srcIdx[s] = srcSw.push(s) - 1;
  const nSrc = srcSw.length;
  const L = maxLid + 1;
  const layer = new Uint8Array(nSrc * L);
  const destSw = new Int32Array(L).fill(-1);
  for (const ep of ends) if (ep.sw >= 0) for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) destSw[d] = ep.sw;
  const depCnt: Int32Array[] = [new Int32Array(depStart[nE]!)];
  const entryOf = (s: number, d: number): number => ix.portEntry[s * W + lfts[s]![d]!]!;

  /** Walk the path of (source switch s → d), adding `delta` to its dependencies in layer `l`. */
  const walk = (s: number, d: number, l: number, delta: number): void => {
    const T = destSw[d]!;
    if (s === T) return;
    const cnt = depCnt[l]!;
    let e1 = entryOf(s, d);
    let x = adjSw[e1]!;
    while (x !== T) {
      const e2 = entryOf(x, d);
      cnt[depStart[e1]! + (e2 - adjStart[x]!)]! += delta;
      e1 = e2;
      x = adjSw[e2]!;
    }
  };
  for (let d = 1; d < L; d++) {
    if (destSw[d]! < 0) continue;
    for (let i = 0; i < nSrc; i++) walk(srcSw[i]!, d, 0, 1);
  }

  // Paths of layer l that use dependency (e1 → e2): move them to layer l + 1.
  const passes = new Int8Array(nSw);
  let moved = 0;
  let vlsUsed = 1;
  const movePaths = (l: number, e1: number, e2: number): void => {
    if (l + 1 >= maxVls) {
      throw new RoutingNotApplicable('dfsssp', `the routes need more than ${maxVls} virtual layers (VLs) to be free of credit loops (a cycle remains in layer ${l} through ${swName(ix, adjSw[e1]!)}); allow more VLs (maxVls, up to the data VLs the ports support) or use updn/ftree`);
    }
    if (!depCnt[l + 1]) depCnt[l + 1] = new Int32Array(depStart[nE]!);
    const x = adjSw[e1]!;
    let y = 0;
    while (adjStart[y + 1]! <= e1) y++;
    const p1 = adjPort[e1]!;
    const p2 = adjPort[e2]!;
    const lx = lfts[x]!;
    const ly = lfts[y]!;
    for (let d = 1; d < L; d++) {
      if (ly[d] !== p1 || lx[d] !== p2 || destSw[d]! < 0) continue;
      const T = destSw[d]!;
      passes.fill(0); // 0 unknown, 1 passes through y→x, -1 does not
      for (let i = 0; i < nSrc; i++) {
        const s = srcSw[i]!;
        if (layer[i * L + d] !== l) continue;
        // Does the path from s go through y (then necessarily y→x)?
        let c = s;
        const trail: number[] = [];
        let res = -1;
        while (true) {
          if (passes[c] !== 0) {
            res = passes[c]!;
            break;
          }
          if (c === y) {
            res = 1;
            break;
          }
          if (c === T) {
            res = -1;
            break;
          }
          trail.push(c);
          c = adjSw[entryOf(c, d)]!;
        }
        for (const t of trail) passes[t] = res;
        if (c === y) passes[y] = 1;
        if (res !== 1) continue;
        walk(s, d, l, -1);
        walk(s, d, l + 1, 1);
        layer[i * L + d] = l + 1;
        if (l + 2 > vlsUsed) vlsUsed = l + 2;
        moved++;
      }
    }
  };

  let cyclesBroken = 0;
  for (let l = 0; l < depCnt.length; l++) {
    const cnt = depCnt[l]!;
    const search = new CycleSearch(ix, depStart, (i) => cnt[i]! > 0);
    for (let c = search.next(); c; c = search.next()) {
      // Break the cycle's weakest dependency.
      const { stack: stackV, j, sp } = c;
      const cycleAt = stackV[j]!;
      let bestA = -1;
      let bestB = -1;
      let bestC = Infinity;
      for (let q = j; q < sp; q++) {
        const a = stackV[q]!;
        const b = q + 1 < sp ? stackV[q + 1]! : cycleAt;
        const n = cnt[depStart[a]! + (b - adjStart[adjSw[a]!]!)]!;
        if (n < bestC) {
          bestC = n;
          bestA = a;
          bestB = b;
        }
      }
      if (!(bestC > 0)) throw new InternalError('dfsssp: internal error, a CDG cycle with an unused dependency');
      movePaths(l, bestA, bestB);
      cyclesBroken++;
      yield 'layers';
    }
  }
  return { srcSw, srcIdx, layer, vlsUsed, cyclesBroken, moved };
}

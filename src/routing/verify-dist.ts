/**
 * The verifier's switch distances (routing/verify.ts: the stretch figures, and the order by
 * distance that shortest-path routes share): a BFS from each destination switch, 32 of them at
 * once (bit k of a switch's word: reached from source k), so that a level costs one pass over the
 * links for all 32 rather than one each. The same distances as graph.ts's bfsSwitches (links
 * followed from each switch's adjacency, as it does).
 */
import type { FabricIndex } from './graph.js';

/** Sources per pass (bits of a word). */
const WIDTH = 32;

export class SwitchDistances {
  /** Distance of switch x from source k of the last `run`: dist[k × nSw + x] (−1: unreachable). */
  private readonly all: Int32Array;
  private readonly frontier: Int32Array;
  private readonly next: Int32Array;
  private readonly seen: Int32Array;
  private readonly srcs = new Int32Array(WIDTH);
  private nSrc = 0;
  private readonly nSw: number;

  constructor(private readonly ix: FabricIndex) {
    const nSw = (this.nSw = ix.nSw);
    this.all = new Int32Array(WIDTH * nSw);
    this.frontier = new Int32Array(nSw);
    this.next = new Int32Array(nSw);
    this.seen = new Int32Array(nSw);
  }

  /** The distances from switch T, among `sources` (ascending switch indices, T one of them):
   *  computed with the next up to 32 of them when T is not among the last run's. A view, valid
   *  until the next call. */
  from(T: number, sources: Int32Array): Int32Array {
    let k = this.srcs.subarray(0, this.nSrc).indexOf(T);
    if (k < 0) {
      let i = sources.indexOf(T);
      if (i < 0) throw new RangeError(`switch ${T} is not a source`);
      this.nSrc = 0;
      while (i < sources.length && this.nSrc < WIDTH) this.srcs[this.nSrc++] = sources[i++]!;
      this.run();
      k = 0;
    }
    return this.all.subarray(k * this.nSw, (k + 1) * this.nSw);
  }

  private run(): void {
    const { all, seen, nSw, srcs, nSrc } = this;
    const { adjStart, adjSw } = this.ix;
    let frontier = this.frontier;
    let next = this.next;
    all.fill(-1);
    frontier.fill(0);
    seen.fill(0);
    for (let k = 0; k < nSrc; k++) {
      const s = srcs[k]!;
      frontier[s]! |= 1 << k;
      seen[s]! |= 1 << k;
      all[k * nSw + s] = 0;
    }
    for (let level = 1; ; level++) {
      next.fill(0);
      for (let u = 0; u < nSw; u++) {
        const f = frontier[u]!;
        if (f === 0) continue;
        for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) next[adjSw[e]!]! |= f;
      }
      let any = false;
      for (let v = 0; v < nSw; v++) {
        let b = next[v]! & ~seen[v]!;
        next[v] = b;
        if (b === 0) continue;
        any = true;
        seen[v]! |= b;
        while (b !== 0) {
          const k = 31 - Math.clz32(b);
          b &= ~(1 << k);
          all[k * nSw + v] = level;
        }
      }
      if (!any) break;
      const t = frontier;
      frontier = next;
      next = t;
    }
  }
}

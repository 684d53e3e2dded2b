/**
 * ftree on a degraded tree: the routes to switch LIDs that must turn down then up, kept free of
 * channel-dependency cycles.
 *
 * Where a link is missing, a switch with CAs may have no up/down route to a switch LID (a leaf
 * that lost its link to the spine of the group of cores above a spine of another pod; the leaves
 * below a spine that lost its link to a core): every route from it there goes down, then up.
 * Those routes carry the CAs' traffic to that switch (the verifier's sources are the CA ports), and
 * routes of two switch LIDs that turn in different places close cycles with the up/down routes
 * (on gen:fattree3:radix=8 with every 23rd switch link cut: 84 such routes, one cyclic component
 * of 202 channels). So on a degraded tree the channel dependencies of the CA sources' routes are
 * kept in an AcyclicCdg (routing/acyclic.ts, ordered up channels by level, then down channels):
 * first every LID routed up/down, then each switch LID's column, whose down-then-up routes may
 * turn at any CA switch below the switch's part (ftree-lids.ts tries them in turn): the first
 * whose dependencies close no cycle is kept. Where none does (or the CA LIDs' own routes close
 * one), the result does not claim deadlock freedom, and says so.
 */
import { AcyclicCdg, depStarts } from './acyclic.js';
import type { FabricIndex } from './graph.js';

/** Channels a reordering of the CDG may visit; beyond it the column is refused (safe: it is then
 *  tried at the next place, or counted as cyclic). */
const SEARCH_LIMIT = 2000;

export class FtreeTurns {
  private readonly cdg: AcyclicCdg;
  private readonly sources: Int32Array;
  private readonly stamp: Int32Array;
  private epoch = 0;
  /** Columns whose dependencies could not all be kept acyclic. */
  cyclic = 0;

  constructor(
    private readonly ix: FabricIndex,
    level: Int32Array,
  ) {
    const { nSw, adjStart, adjSw } = ix;
    const nE = adjStart[nSw]!;
    let levels = 0;
    for (let s = 0; s < nSw; s++) levels = Math.max(levels, level[s]! + 1);
    // up channels by level, then down channels by level, highest first: up/down routes agree
    const key = new Float64Array(nE);
    for (let s = 0; s < nSw; s++) {
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) key[e] = level[adjSw[e]!]! > level[s]! ? level[s]! : 2 * levels - level[s]!;
    }
    const byKey = Array.from({ length: nE }, (_, i) => i).sort((a, b) => key[a]! - key[b]! || a - b);
    const ord = new Int32Array(nE);
    byKey.forEach((e, pos) => (ord[e] = pos));
    this.cdg = new AcyclicCdg(ix, depStarts(ix), SEARCH_LIMIT, ord);
    const src: number[] = [];
    for (let s = 0; s < nSw; s++) if (ix.caCount[s]! > 0) src.push(s);
    this.sources = Int32Array.from(src);
    this.stamp = new Int32Array(nSw);
  }

  /** Add the dependencies of the CA sources' routes toward switch T, switch x's port given by
   *  port(x). All or none: false (and nothing added) when one would close a cycle. */
  tryColumn(T: number, port: (x: number) => number): boolean {
    const { ix, cdg, stamp, sources } = this;
    const { adjSw, portEntry } = ix;
    const W = ix.maxPorts + 1;
    const ep = ++this.epoch;
    cdg.mark();
    for (let i = 0; i < sources.length; i++) {
      let inE = -1;
      for (let u = sources[i]!; u !== T; ) {
        const p = port(u);
        const e = p > 0 && p < W ? portEntry[u * W + p]! : -1;
        if (e < 0) break;
        if (inE >= 0 && !cdg.tryAdd(inE, e)) {
          cdg.undo();
          return false;
        }
        if (stamp[u] === ep) break; // onward from u: added already
        stamp[u] = ep;
        inE = e;
        u = adjSw[e]!;
      }
    }
    return true;
  }

  /** As tryColumn for LID `lid` of finished tables; counts the column when it closes a cycle. */
  addLid(T: number, lid: number, lfts: Uint8Array[]): void {
    if (!this.tryColumn(T, (x) => lfts[x]![lid]!)) this.cyclic++;
  }
}

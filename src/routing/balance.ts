/** The LFT filling step shared by minhop and updn (OpenSM's "port selection" stage):
 *  for one destination switch T, given each switch's distance to T (and which channels are legal),
 *  every switch picks, for every destination LID delivered by T, the least used port among its
 *  legal minimum-distance ports. With LMC > 0 the LIDs of one port prefer next hops on different
 *  systems (system image GUID), then different switches, before falling back to port counts. */
import { destLidsOfSwitch, rng, type FabricIndex } from './graph.js';

export interface Balancer {
  /** Per switch port (s * (maxPorts+1) + port): destination LIDs routed out of it. */
  counters: Int32Array;
  /** Random tie-break source, when seeded. */
  rand?: () => number;
}

export function newBalancer(ix: FabricIndex, seed?: number): Balancer {
  return { counters: new Int32Array(ix.nSw * (ix.maxPorts + 1)), ...(seed !== undefined ? { rand: rng(seed) } : {}) };
}

export interface DestLids {
  end: number[];
  lid: number[];
}

/**
 * Fill the LFT entries of every switch for the LIDs delivered by switch T.
 * @param dist  per switch: distance to T along legal routes (−1 = cannot reach)
 * @param allowed  per adjacency entry: 1 if the channel may be used toward T (undefined: all)
 */
export function fillForDestSwitch(ix: FabricIndex, T: number, lfts: Uint8Array[], bal: Balancer, dist: Int32Array, allowed: Uint8Array | undefined, scratch: DestLids): void {
  destLidsOfSwitch(ix, T, scratch);
  const nL = scratch.lid.length;
  if (nL === 0) return;
  const { adjStart, adjSw, adjPort, ends, swNode } = ix;
  const W = ix.maxPorts + 1;
  const counters = bal.counters;
  const nodes = ix.fabric.nodes;
  // At T itself: deliver.
  const lftT = lfts[T]!;
  for (let i = 0; i < nL; i++) lftT[scratch.lid[i]!] = ends[scratch.end[i]!]!.swPort;

  const cands: number[] = [];
  const W1 = ix.maxPorts + 1;
  const wPort = new Int32Array(W1);
  const wCount = new Int32Array(W1);
  const wByCount = new Int32Array(W1);
  const wActive = new Int32Array(W1);
  const anyLmc = scratch.end.some((e) => ends[e]!.lmc > 0);
  for (let s = 0; s < ix.nSw; s++) {
    if (s === T) continue;
    const ds = dist[s]!;
    if (ds <= 0) continue;
    cands.length = 0;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      if (allowed && !allowed[e]) continue;
      if (dist[adjSw[e]!] === ds - 1) cands.push(e);
    }
    const nc = cands.length;
    if (nc === 0) continue;
    const lft = lfts[s]!;
    const base = s * W;
    const rot = bal.rand ? Math.floor(bal.rand() * nc) : 0;
    if (nc === 1) {
      const p = adjPort[cands[0]!]!;
      for (let i = 0; i < nL; i++) {
        lft[scratch.lid[i]!] = p;
        if (!ends[scratch.end[i]!]!.isSwitch) counters[base + p]!++;
      }
      continue;
    }
    if (!anyLmc) {
      // Each LID takes the least used port, ties to the first in rotation order; a CA LID then
      // adds one to it. The same choices without a scan per LID (water filling): at level v the
      // ports whose count was ≤ v are taken in rotation order, one LID each, then level v + 1.
      let lo = 0x7fffffff;
      let hi = -1;
      for (let k = 0; k < nc; k++) {
        const p = adjPort[cands[(k + rot) % nc]!]!;
        wPort[k] = p;
        const c = counters[base + p]!;
        wCount[k] = c;
        wByCount[k] = k;
        if (c < lo) lo = c;
        if (c > hi) hi = c;
      }
      // By count, then rotation order (insertion sort: nc is a switch's port count; nothing to
      // do when the counts are all equal, as on a regular fabric).
      for (let a = 1; a < nc && lo !== hi; a++) {
        const x = wByCount[a]!;
        let b = a;
        while (b > 0 && (wCount[wByCount[b - 1]!]! > wCount[x]! || (wCount[wByCount[b - 1]!]! === wCount[x]! && wByCount[b - 1]! > x))) {
          wByCount[b] = wByCount[b - 1]!;
          b--;
        }
        wByCount[b] = x;
      }
      let v = wCount[wByCount[0]!]!;
      let nA = 0; // active ports (count ≤ v), in rotation order, in wActive[0 .. nA-1]
      let next = 0; // next in wByCount to activate
      const activate = (): void => {
        while (next < nc && wCount[wByCount[next]!]! <= v) {
          const x = wByCount[next++]!;
          let b = nA++;
          while (b > 0 && wActive[b - 1]! > x) {
            wActive[b] = wActive[b - 1]!;
            b--;
          }
          wActive[b] = x;
        }
      };
      activate();
      let pos = 0;
      for (let i = 0; i < nL; i++) {
        const p = wPort[wActive[pos]!]!;
        lft[scratch.lid[i]!] = p;
        if (ends[scratch.end[i]!]!.isSwitch) continue;
        counters[base + p]!++;
        if (++pos === nA) {
          v++;
          activate();
          pos = 0;
        }
      }
      continue;
    }
    // LMC-aware: per end port, remember the systems and switches already used by its earlier LIDs.
    let curEnd = -1;
    const usedSys = new Set<bigint>();
    const usedSw = new Set<number>();
    for (let i = 0; i < nL; i++) {
      const ei = scratch.end[i]!;
      if (ei !== curEnd) {
        curEnd = ei;
        usedSys.clear();
        usedSw.clear();
      }
      let best = -1;
      let bestScore = Infinity;
      for (let k = 0; k < nc; k++) {
        const e = cands[(k + rot) % nc]!;
        const r = adjSw[e]!;
        const sys = nodes[swNode[r]!]!.systemImageGuid || nodes[swNode[r]!]!.guid;
        const score = (usedSys.has(sys) ? 2 : 0) * 1e9 + (usedSw.has(r) ? 1 : 0) * 1e8 + counters[base + adjPort[e]!]!;
        if (score < bestScore) {
          bestScore = score;
          best = e;
        }
      }
      const p = adjPort[best]!;
      lft[scratch.lid[i]!] = p;
      const r = adjSw[best]!;
      usedSw.add(r);
      usedSys.add(nodes[swNode[r]!]!.systemImageGuid || nodes[swNode[r]!]!.guid);
      if (!ends[ei]!.isSwitch) counters[base + p]!++;
    }
  }
}

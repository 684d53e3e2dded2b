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

/** Per-call scratch of fillForDestSwitch, grown as needed and reused across calls (no arrays
 *  allocated per destination switch). */
interface FillScratch {
  /** Candidate adjacency entries of the switch being filled. */
  cands: Int32Array;
  /** Water filling: port, its count, order by count, active ports in rotation order. */
  wPort: Int32Array;
  wCount: Int32Array;
  wByCount: Int32Array;
  wActive: Int32Array;
  /** Per destination LID of T (scratch.lid's order): 1 when a CA/router LID (counted), 0 for a switch's. */
  counted: Uint8Array;
}
let fillScratch: FillScratch = newFillScratch(64, 64);
function newFillScratch(ports: number, lids: number): FillScratch {
  return { cands: new Int32Array(ports), wPort: new Int32Array(ports), wCount: new Int32Array(ports), wByCount: new Int32Array(ports), wActive: new Int32Array(ports), counted: new Uint8Array(lids) };
}

/**
 * Fill the LFT entries of every switch for the LIDs delivered by switch T.
 * @param dist  per switch: distance to T along legal routes (−1 = cannot reach)
 * @param allowed  per adjacency entry: 1 if the channel may be used toward T (undefined: all)
 *
 * Split into small functions (one-port, water filling, LMC-aware), each with its own type
 * feedback: one large function was recompiled by TurboFan several times per run (deopts on
 * paths reached late), which cost more CPU than the routing itself.
 */
export function fillForDestSwitch(ix: FabricIndex, T: number, lfts: Uint8Array[], bal: Balancer, dist: Int32Array, allowed: Uint8Array | undefined, scratch: DestLids): void {
  destLidsOfSwitch(ix, T, scratch);
  const nL = scratch.lid.length;
  if (nL === 0) return;
  const ends = ix.ends;
  const W = ix.maxPorts + 1;
  if (fillScratch.cands.length < W || fillScratch.counted.length < nL) fillScratch = newFillScratch(Math.max(W, fillScratch.cands.length), Math.max(nL, fillScratch.counted.length));
  const counted = fillScratch.counted;
  let anyLmc = false;
  for (let i = 0; i < nL; i++) {
    const ep = ends[scratch.end[i]!]!;
    counted[i] = ep.isSwitch ? 0 : 1;
    if (ep.lmc > 0) anyLmc = true;
  }
  // At T itself: deliver.
  const lftT = lfts[T]!;
  for (let i = 0; i < nL; i++) lftT[scratch.lid[i]!] = ends[scratch.end[i]!]!.swPort;

  const { adjStart, adjSw, adjPort } = ix;
  const cands = fillScratch.cands;
  const counters = bal.counters;
  const lids = scratch.lid;
  for (let s = 0; s < ix.nSw; s++) {
    if (s === T) continue;
    const ds = dist[s]!;
    if (ds <= 0) continue;
    let nc = 0;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      if (allowed && !allowed[e]) continue;
      if (dist[adjSw[e]!] === ds - 1) cands[nc++] = e;
    }
    if (nc === 0) continue;
    const rot = bal.rand ? Math.floor(bal.rand() * nc) : 0;
    if (nc === 1) fillOnePort(lfts[s]!, adjPort[cands[0]!]!, lids, counted, nL, counters, s * W);
    else if (!anyLmc) fillWater(lfts[s]!, adjPort, cands, nc, rot, lids, counted, nL, counters, s * W);
    else fillLmc(ix, lfts[s]!, cands, nc, rot, scratch, nL, counters, s * W);
  }
}

/** One minimum-hop port: every LID goes out of it. */
function fillOnePort(lft: Uint8Array, p: number, lids: readonly number[], counted: Uint8Array, nL: number, counters: Int32Array, base: number): void {
  let n = 0;
  for (let i = 0; i < nL; i++) {
    lft[lids[i]!] = p;
    n += counted[i]!;
  }
  counters[base + p]! += n;
}

/** Each LID takes the least used port, ties to the first in rotation order; a CA LID then adds
 *  one to it. The same choices without a scan per LID (water filling): at level v the ports whose
 *  count was ≤ v are taken in rotation order, one LID each, then level v + 1. */
function fillWater(lft: Uint8Array, adjPort: Int32Array, cands: Int32Array, nc: number, rot: number, lids: readonly number[], counted: Uint8Array, nL: number, counters: Int32Array, base: number): void {
  const { wPort, wCount, wByCount, wActive } = fillScratch;
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
  // By count, then rotation order (insertion sort: nc is a switch's port count; nothing to do
  // when the counts are all equal, as on a regular fabric).
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
  next = activate(v, next, nc, nA);
  nA = next;
  let pos = 0;
  for (let i = 0; i < nL; i++) {
    const p = wPort[wActive[pos]!]!;
    lft[lids[i]!] = p;
    if (counted[i] === 0) continue;
    counters[base + p]!++;
    if (++pos === nA) {
      v++;
      next = activate(v, next, nc, nA);
      nA = next;
      pos = 0;
    }
  }
}

/** Water filling's step: the ports of count ≤ v from wByCount[next..] join wActive[0 .. nA-1]
 *  (kept in rotation order); returns the new `next` (every activated port is active: nA = next). */
function activate(v: number, next: number, nc: number, nA: number): number {
  const { wCount, wByCount, wActive } = fillScratch;
  while (next < nc && wCount[wByCount[next]!]! <= v) {
    const x = wByCount[next++]!;
    let b = nA++;
    while (b > 0 && wActive[b - 1]! > x) {
      wActive[b] = wActive[b - 1]!;
      b--;
    }
    wActive[b] = x;
  }
  return next;
}

/** LMC-aware: per end port, remember the systems and switches already used by its earlier LIDs. */
function fillLmc(ix: FabricIndex, lft: Uint8Array, cands: Int32Array, nc: number, rot: number, scratch: DestLids, nL: number, counters: Int32Array, base: number): void {
  const { adjSw, adjPort, ends, swNode } = ix;
  const nodes = ix.fabric.nodes;
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

/** The LFT filling step shared by minhop and updn (OpenSM's "port selection" stage):
 *  for one destination switch T, given each switch's distance to T (and which channels are legal),
 *  every switch picks, for every destination LID delivered by T, the least used port among its
 *  legal minimum-distance ports. With LMC > 0 the LIDs of one port prefer next hops on different
 *  systems (system image GUID), then different switches, before falling back to port counts. */
import { bfsSwitches, destLidsOf, rng, type FabricIndex } from './graph.js';
import type { DestGroup } from './route-order.js';
import { ColumnBuffer } from './lft-writers.js';

export interface Balancer {
  /** Per switch port (s * (maxPorts+1) + port): destination LIDs routed out of it. */
  counters: Int32Array;
  /** Random tie-break source, when seeded. */
  rand?: () => number;
  /** The LFT entries, by column (destination LID), written table by table at finishFill(). */
  cols?: ColumnBuffer;
  colsFor?: Uint8Array[];
}

/** Write out the LFT entries fillForDestSwitch buffered: call once after the last destination. */
export function finishFill(bal: Balancer): void {
  bal.cols?.flush();
}

export function newBalancer(ix: FabricIndex, seed?: number): Balancer {
  return { counters: new Int32Array(ix.nSw * (ix.maxPorts + 1)), ...(seed !== undefined ? { rand: rng(seed) } : {}) };
}

/** Up/down routing's legal channels toward T: a switch that reaches T going down (dDown ≥ 0)
 *  takes down channels to switches that do too; any other switch takes up channels; a switch
 *  with `fallback` set (no legal route, management traffic only) takes any channel. */
export interface UpDown {
  /** Per adjacency entry: 1 when the channel goes up. */
  isUp: Uint8Array;
  /** Per switch: hops to T going down only, −1 when it cannot. */
  dDown: Int32Array;
  fallback: Uint8Array;
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
  /** Per destination LID of T: where its entry goes (its column in the buffer, or the LID). */
  idx: number[];
  /** Counting sort's bucket starts. */
  bucket: Int32Array;
}
/** Count spans up to which the ports are sorted by counting. */
const BUCKETS = 32;
let fillScratch: FillScratch = newFillScratch(64, 64);
function newFillScratch(ports: number, lids: number): FillScratch {
  return { cands: new Int32Array(ports), wPort: new Int32Array(ports), wCount: new Int32Array(ports), wByCount: new Int32Array(ports), wActive: new Int32Array(ports), counted: new Uint8Array(lids), idx: [], bucket: new Int32Array(BUCKETS + 2) };
}

/**
 * Fill the LFT entries of every switch for the LIDs of destinations `g` (end ports delivered by
 * switch T = g.sw; route-order.ts), in their order.
 * @param dist  per switch: distance to T along legal routes (−1 = cannot reach)
 * @param updn  which channels may be used toward T (up/down routing; undefined: all): see UpDown
 *
 * Split into small functions (one-port, water filling, LMC-aware), each with its own type
 * feedback: one large function was recompiled by TurboFan several times per run (deopts on
 * paths reached late), which cost more CPU than the routing itself.
 */
export function fillForDestSwitch(ix: FabricIndex, g: DestGroup, lfts: Uint8Array[], bal: Balancer, dist: Int32Array, updn: UpDown | undefined, scratch: DestLids): void {
  const T = g.sw;
  const dst = beginDest(ix, g, lfts, bal, scratch);
  if (!dst) return;
  const { adjStart, adjSw } = ix;
  const cands = fillScratch.cands;
  const rand = g.fixed ? undefined : bal.rand;
  for (let s = 0; s < ix.nSw; s++) {
    if (s === T) continue;
    const ds = dist[s]!;
    if (ds <= 0) continue;
    let nc = 0;
    if (updn && !updn.fallback[s]) {
      const { isUp, dDown } = updn;
      const inD = dDown[s]! >= 0;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const y = adjSw[e]!;
        if (dist[y] !== ds - 1 || (inD ? isUp[e] || dDown[y]! < 0 : !isUp[e])) continue;
        cands[nc++] = e;
      }
    } else {
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) if (dist[adjSw[e]!] === ds - 1) cands[nc++] = e;
    }
    if (nc === 0) continue;
    fillSwitch(ix, dst, lfts, bal, s, nc, rand ? Math.floor(rand() * nc) : 0, scratch);
  }
}

/**
 * minhop's step for destination switch T without a seed, in one pass: the BFS from T, each switch
 * filled as it is reached, from the neighbours it found one hop nearer T (all known by then: the
 * BFS is level by level), in adjacency order: the candidates, the choices and the tables of
 * bfsSwitches then fillForDestSwitch, without a second scan of every switch's adjacency. (With a
 * seed the switches must draw their rotation in index order: fillForDestSwitch.) Leaves `dist`
 * as bfsSwitches does.
 */
export function fillFromDestSwitch(ix: FabricIndex, g: DestGroup, lfts: Uint8Array[], bal: Balancer, dist: Int32Array, queue: Int32Array, scratch: DestLids): void {
  const T = g.sw;
  const dst = beginDest(ix, g, lfts, bal, scratch);
  // nothing to deliver: the distances only
  if (!dst) return bfsSwitches(ix, T, dist, queue);
  dist.fill(-1);
  dist[T] = 0;
  const { adjStart, adjSw } = ix;
  const cands = fillScratch.cands;
  let head = 0;
  let tail = 0;
  queue[tail++] = T;
  while (head < tail) {
    const s = queue[head++]!;
    const ds = dist[s]!;
    const near = ds - 1;
    let nc = 0;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const r = adjSw[e]!;
      const dr = dist[r]!;
      if (dr < 0) {
        dist[r] = ds + 1;
        queue[tail++] = r;
      } else if (dr === near) cands[nc++] = e;
    }
    if (nc === 0) continue; // T itself (delivered by beginDest)
    fillSwitch(ix, dst, lfts, bal, s, nc, 0, scratch);
  }
}

/** Switch s's entries for T's LIDs (dst), from its nc candidates in fillScratch.cands, rotation
 *  rot: one port, LMC-aware, a scan or water filling, as the destination needs. */
function fillSwitch(ix: FabricIndex, dst: DestFill, lfts: Uint8Array[], bal: Balancer, s: number, nc: number, rot: number, scratch: DestLids): void {
  const { nL, inCols, colBuf, W, anyLmc, nCounted } = dst;
  const { cands, counted, idx: lids } = fillScratch;
  const base = s * (ix.maxPorts + 1);
  const counters = bal.counters;
  const lft = inCols ? colBuf : lfts[s]!;
  const b = inCols ? s * W : 0;
  if (nc === 1) fillOnePort(lft, b, ix.adjPort[cands[0]!]!, lids, counted, nL, counters, base);
  else if (anyLmc) fillLmc(ix, lft, b, cands, nc, rot, scratch, lids, nL, counters, base);
  else if (nCounted <= SCAN_MAX_COUNTED) fillScan(lft, b, ix.adjPort, cands, nc, rot, lids, counted, nL, counters, base);
  else fillWater(lft, b, ix.adjPort, cands, nc, rot, lids, counted, nL, counters, base);
}

/** What the fill of one destination switch works with (one object, reused). */
interface DestFill {
  nL: number;
  inCols: boolean;
  colBuf: Uint8Array;
  W: number;
  anyLmc: boolean;
  nCounted: number;
}
const destFill: DestFill = { nL: 0, inCols: false, colBuf: new Uint8Array(0), W: 0, anyLmc: false, nCounted: 0 };

/** The LIDs of g's end ports (scratch), which of them count (fillScratch.counted), where each
 * one's entry goes (fillScratch.idx: its column in the buffer, or the LID), and the entries of
 * T = g.sw written; undefined when they have no LID. */
function beginDest(ix: FabricIndex, g: DestGroup, lfts: Uint8Array[], bal: Balancer, scratch: DestLids): DestFill | undefined {
  const T = g.sw;
  destLidsOf(ix, g.ends, scratch);
  const nL = scratch.lid.length;
  if (nL === 0) return undefined;
  const ends = ix.ends;
  const CW = ix.maxPorts + 1;
  if (fillScratch.cands.length < CW || fillScratch.counted.length < nL) fillScratch = newFillScratch(Math.max(CW, fillScratch.cands.length), Math.max(nL, fillScratch.counted.length));
  const counted = fillScratch.counted;
  let anyLmc = false;
  let nCounted = 0;
  for (let i = 0; i < nL; i++) {
    const ep = ends[scratch.end[i]!]!;
    counted[i] = ep.isSwitch ? 0 : 1;
    nCounted += counted[i]!;
    if (ep.lmc > 0) anyLmc = true;
  }
  // The entries go to a column buffer (every switch's entry for T's LIDs: set below or NO_ROUTE,
  // as each destination switch is filled once), written table by table at finishFill(); directly
  // when T has more LIDs than the buffer holds.
  if (bal.colsFor !== lfts) {
    bal.cols?.flush();
    bal.cols = new ColumnBuffer(lfts, ix.nSw, 512);
    bal.colsFor = lfts;
  }
  const cols = bal.cols!;
  const c0 = cols.reserve(scratch.lid);
  const W = cols.width;
  const idx = fillScratch.idx;
  idx.length = nL;
  for (let i = 0; i < nL; i++) idx[i] = c0 >= 0 ? c0 + i : scratch.lid[i]!;
  const inCols = c0 >= 0;
  const colBuf = cols.buf;
  // At T itself: deliver.
  const lftT = inCols ? colBuf : lfts[T]!;
  const b = inCols ? T * W : 0;
  for (let i = 0; i < nL; i++) lftT[b + idx[i]!] = ends[scratch.end[i]!]!.swPort;
  destFill.nL = nL;
  destFill.inCols = inCols;
  destFill.colBuf = colBuf;
  destFill.W = W;
  destFill.anyLmc = anyLmc;
  destFill.nCounted = nCounted;
  return destFill;
}

/** One minimum-hop port: every LID goes out of it. */
function fillOnePort(lft: Uint8Array, at: number, p: number, lids: readonly number[], counted: Uint8Array, nL: number, counters: Int32Array, base: number): void {
  let n = 0;
  for (let i = 0; i < nL; i++) {
    lft[at + lids[i]!] = p;
    n += counted[i]!;
  }
  counters[base + p]! += n;
}

/** Destinations with at most this many CA/router LIDs are filled by fillScan: a scan of the
 *  candidates per counted LID costs less than water filling's sort (most destination switches of a
 *  fat tree deliver only their own LID, which is not counted: one scan). */
const SCAN_MAX_COUNTED = 2;

/** fillWater's choices by a scan: each LID takes the least used port, ties to the first in
 *  rotation order; a CA LID then adds one to it (a switch LID does not, so the choice only moves
 *  after a counted LID). */
function fillScan(lft: Uint8Array, at: number, adjPort: Int32Array, cands: Int32Array, nc: number, rot: number, lids: readonly number[], counted: Uint8Array, nL: number, counters: Int32Array, base: number): void {
  const { wPort, wCount } = fillScratch;
  for (let k = 0; k < nc; k++) {
    const p = adjPort[cands[(k + rot) % nc]!]!;
    wPort[k] = p;
    wCount[k] = counters[base + p]!;
  }
  let best = 0;
  for (let k = 1; k < nc; k++) if (wCount[k]! < wCount[best]!) best = k;
  for (let i = 0; i < nL; i++) {
    const p = wPort[best]!;
    lft[at + lids[i]!] = p;
    if (counted[i] === 0) continue;
    counters[base + p]!++;
    wCount[best]!++;
    best = 0;
    for (let k = 1; k < nc; k++) if (wCount[k]! < wCount[best]!) best = k;
  }
}

/** Each LID takes the least used port, ties to the first in rotation order; a CA LID then adds
 *  one to it. The same choices without a scan per LID (water filling): at level v the ports whose
 *  count was ≤ v are taken in rotation order, one LID each, then level v + 1. */
function fillWater(lft: Uint8Array, at: number, adjPort: Int32Array, cands: Int32Array, nc: number, rot: number, lids: readonly number[], counted: Uint8Array, nL: number, counters: Int32Array, base: number): void {
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
  // By count, then rotation order: nothing to do when the counts are all equal (a regular
  // fabric, mostly); a counting sort when they span a few values; else insertion sort (nc is a
  // switch's port count). Each gives the one order by (count, rotation index).
  if (lo !== hi && hi - lo < BUCKETS) {
    const at = fillScratch.bucket;
    at.fill(0, 0, hi - lo + 2);
    for (let k = 0; k < nc; k++) at[wCount[k]! - lo + 1]!++;
    for (let b = 1; b <= hi - lo; b++) at[b]! += at[b - 1]!;
    for (let k = 0; k < nc; k++) wByCount[at[wCount[k]! - lo]!++] = k;
  } else {
    for (let a = 1; a < nc && lo !== hi; a++) {
      const x = wByCount[a]!;
      let b = a;
      while (b > 0 && (wCount[wByCount[b - 1]!]! > wCount[x]! || (wCount[wByCount[b - 1]!]! === wCount[x]! && wByCount[b - 1]! > x))) {
        wByCount[b] = wByCount[b - 1]!;
        b--;
      }
      wByCount[b] = x;
    }
  }
  let v = wCount[wByCount[0]!]!;
  let nA = 0; // active ports (count ≤ v), in rotation order, in wActive[0 .. nA-1]
  let next = 0; // next in wByCount to activate
  next = activate(v, next, nc, nA);
  nA = next;
  let pos = 0;
  for (let i = 0; i < nL; i++) {
    const p = wPort[wActive[pos]!]!;
    lft[at + lids[i]!] = p;
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
  const from = next;
  while (next < nc && wCount[wByCount[next]!]! <= v) next++;
  if (next === from) return next;
  if (next - from === 1) {
    // one more: insert it in rotation order
    const x = wByCount[from]!;
    let b = nA;
    while (b > 0 && wActive[b - 1]! > x) {
      wActive[b] = wActive[b - 1]!;
      b--;
    }
    wActive[b] = x;
    return next;
  }
  // several: the active ports are those of count ≤ v, in rotation order
  let a = 0;
  for (let k = 0; k < nc; k++) if (wCount[k]! <= v) wActive[a++] = k;
  return next;
}

/** LMC-aware: per end port, remember the systems and switches already used by its earlier LIDs. */
function fillLmc(ix: FabricIndex, lft: Uint8Array, at: number, cands: Int32Array, nc: number, rot: number, scratch: DestLids, lids: readonly number[], nL: number, counters: Int32Array, base: number): void {
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
    lft[at + lids[i]!] = p;
    const r = adjSw[best]!;
    usedSw.add(r);
    usedSys.add(nodes[swNode[r]!]!.systemImageGuid || nodes[swNode[r]!]!.guid);
    if (!ends[ei]!.isSwitch) counters[base + p]!++;
  }
}

/**
 * dfsssp: deadlock-free single-source shortest paths (after Domke, Hoefler, Nagel; the idea of
 * OpenSM's dfsssp, our implementation).
 *
 * 1. Routes: for every destination LID, minimum-hop paths; among them the one with the least
 *    accumulated link usage (a DP over the shortest-path DAG of the destination switch, weights =
 *    1 + routes already placed on each directed link), then the usage is updated with the number of
 *    CA sources whose route now crosses each link. LIDs of one port (LMC) are routed one after the
 *    other and so spread over different links.
 * 2. Layers (dfsssp-layers.ts): every (source switch, destination LID) path starts in layer 0.
 *    While the channel dependency graph (CDG) of a layer has a cycle, the dependency on that cycle
 *    used by the fewest paths is broken by moving all its paths of that layer to the next layer.
 *    The layer of a path is its SL; SL i maps to VL i on every port. More layers than maxVls →
 *    RoutingNotApplicable. Layer 0's dependencies are collected while routing (a bit set, from
 *    each LID's tree of paths); when they form no cycle (fat trees) nothing is counted or moved.
 *
 * Cost: per destination switch one breadth-first pass; per further LID of that switch a DP over
 * the switches' links one hop nearer that rescans only the switches whose minimum went up (see
 * balancedPaths), plus passes over the switches (typed arrays, no per-route objects); at worst
 * O(LIDs × links) time, O(links + switches × LIDs of one switch) memory besides the tables.
 */
import type { Fabric } from '../model/fabric.js';
import { emptyLfts, indexFabric, lftMap, rng, type FabricIndex } from './graph.js';
import { assignLayers, cdgAcyclic, dependencyStarts, type Layers } from './dfsssp-layers.js';
import { checkLmc } from './minhop.js';
import { identitySl2Vl, RoutingNotApplicable, type RoutingEngine, type RoutingOptions, type RoutingResult } from './types.js';

/** LFT columns staged before they are written to the tables (see balancedPaths). */
const STAGE = 256;

export function routeDfsssp(fabric: Fabric, opts: RoutingOptions): RoutingResult {
  checkLmc('dfsssp', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new RoutingNotApplicable('dfsssp', `maxVls must be 1..15, got ${maxVls}`);
  const ix = indexFabric(fabric);
  const lfts = emptyLfts(ix);
  const rand = opts.seed !== undefined ? rng(opts.seed) : undefined;
  const notes = [...ix.warnings];
  const depStart = dependencyStarts(ix);
  const dep0 = balancedPaths(ix, lfts, depStart, rand, opts.tick);
  // Layer 0 without a credit loop (fat trees): every path stays there. Otherwise the layers are
  // built from the tables' dependency counts.
  let layers: Layers | undefined;
  if (!cdgAcyclic(ix, depStart, dep0)) layers = assignLayers(ix, lfts, depStart, maxVls, opts.tick);
  const vlsUsed = layers?.vlsUsed ?? 1;
  notes.push(`${vlsUsed} layer(s) used of ${maxVls}; ${layers?.cyclesBroken ?? 0} credit loop(s) broken by moving ${layers?.moved ?? 0} path(s) to higher layers`);

  const L = ix.maxLid + 1;
  const lidSw = new Int32Array(L).fill(-1);
  for (const ep of ix.ends) if (ep.sw >= 0) for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) lidSw[d] = ep.sw;
  const sl = (slid: number, dlid: number): number => {
    if (!layers || slid < 0 || slid >= L || dlid < 0 || dlid >= L) return 0;
    const s = lidSw[slid]!;
    const i = s >= 0 ? layers.srcIdx[s]! : -1;
    return i >= 0 ? layers.layer[i * L + dlid]! : 0;
  };
  return {
    engine: 'dfsssp',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    sl,
    slBySourceSwitch: true,
    vlsUsed,
    sl2vl: identitySl2Vl(vlsUsed),
    deadlockFree: true,
    notes,
  };
}

/**
 * Step 1: fills `lfts` with the balanced shortest paths; returns the dependencies of the routes
 * of the source switches (those with CAs) as a bit set over the dependency index (depStart).
 *
 * Per destination switch T, one breadth-first pass numbers the reached switches by BFS position
 * k (k = 0 is T), runs the DP of T's first LID (a switch's candidates, its links one hop nearer
 * to T, are all numbered before it is scanned) and, when T has more LIDs, lists the candidates
 * (q, grouped by k) with their current weights gathered into candW (written back to `weight`
 * after T's LIDs): the DP of the next LIDs is then sequential over typed arrays. Switches only;
 * T's end ports are reached by T's own entries. Ties break on the first candidate (adjacency
 * order) or, seeded, at random.
 *
 * Without a seed the DP of T's next LIDs is incremental, and gives what a full DP would: a
 * candidate's value (its link's weight + the cost of the switch it leads to) never goes down
 * between two LIDs of T (weights only grow, so by induction from T outwards do the costs). Each
 * switch k keeps its minimum set: the candidates whose value equals its cost. Only two things
 * raise a value: the usage pass adds to the weight of k's chosen link (that candidate leaves k's
 * set), and a switch whose cost went up raises every candidate leading to it (they leave their
 * switches' sets). While k's set is not empty, k's cost is unchanged and its first minimum is the
 * set's first candidate (the others are above the cost, and only grow): nothing to scan. When it
 * empties, k is rescanned at the next LID, in BFS order, after every switch one hop nearer is
 * final; if its cost went up, that propagates one hop outwards. In balanced fabrics most switches
 * have tied candidates, so few are rescanned (fat tree of 11,664 end ports: ~3% of the costs change
 * per LID).
 */
function balancedPaths(ix: FabricIndex, lfts: Uint8Array[], depStart: Int32Array, rand: (() => number) | undefined, tick: (() => void) | undefined): Uint32Array {
  const { nSw, adjStart, adjSw, adjPort, ends, caCount } = ix;
  const nE = adjStart[nSw]!;
  const bits = new Uint32Array((depStart[nE]! >>> 5) + 1);
  const weight = new Float64Array(nE).fill(1);
  const dist = new Int32Array(nSw);
  const order = new Int32Array(nSw); // k → switch
  const pos = new Int32Array(nSw); // switch → k
  const caK = new Float64Array(nSw); // k → CAs on that switch
  const cost = new Float64Array(nSw); // by k
  const chosenQ = new Int32Array(nSw); // k → candidate taken (when listed)
  const chosenE = new Int32Array(nSw); // k → link taken (T's only LID)
  const chosenK = new Int32Array(nSw); // k → the next switch's k (T's only LID)
  const acc = new Float64Array(nSw); // k → CA sources behind
  const candLo = new Int32Array(nSw + 1);
  const candE = new Int32Array(nE);
  const candK = new Int32Array(nE);
  const candW = new Float64Array(nE);
  const candDep = new Int32Array(nE); // depBase of the candidate's link
  // depBase[e] + the next link (an adjacency entry of e's head) = index of that dependency.
  const depBase = new Int32Array(nE);
  for (let e = 0; e < nE; e++) depBase[e] = depStart[e]! - adjStart[adjSw[e]!]!;
  const candPort = new Uint8Array(nE);
  // The incremental DP (see above): per k, the candidates at the minimum as a bit set of MW
  // words; whether k must be rescanned; per candidate its switch's k; per k the candidates leading to it.
  let maxAdj = 1;
  for (let s = 0; s < nSw; s++) maxAdj = Math.max(maxAdj, adjStart[s + 1]! - adjStart[s]!);
  const MW = (maxAdj + 31) >>> 5;
  const tie = new Int32Array(nSw * MW);
  const need = new Uint8Array(nSw);
  const ownK = new Int32Array(nE);
  const revLo = new Int32Array(nSw + 1);
  const revFill = new Int32Array(nSw);
  const revQ = new Int32Array(nE);
  /** The first candidate of k's minimum set, -1 when it is empty. */
  const firstTie = (k: number): number => {
    const base = k * MW;
    for (let w = 0; w < MW; w++) {
      const x = tie[base + w]!;
      if (x !== 0) return candLo[k]! + (w << 5) + (31 - Math.clz32(x & -x));
    }
    return -1;
  };
  /** Candidate q's value went up: out of its switch's minimum set; a new first, or a rescan. */
  const dropTie = (q: number): void => {
    const p = ownK[q]!;
    if (need[p]) return;
    const bp = q - candLo[p]!;
    const wi = p * MW + (bp >>> 5);
    const b = 1 << (bp & 31);
    if ((tie[wi]! & b) === 0) return;
    tie[wi]! &= ~b;
    if (chosenQ[p] !== q) return;
    const nq = firstTie(p);
    if (nq < 0) need[p] = 1;
    else chosenQ[p] = nq;
  };
  /** k's minimum, minimum set and first candidate from the current weights and costs; when the
   *  minimum went up, the candidates leading to k leave their switches' minimum sets. */
  const rescan = (k: number): void => {
    const lo = candLo[k]!;
    const hi = candLo[k + 1]!;
    const base = k * MW;
    for (let w = 0; w < MW; w++) tie[base + w] = 0;
    let m = Infinity;
    let best = -1;
    for (let q = lo; q < hi; q++) {
      const c = candW[q]! + cost[candK[q]!]!;
      if (c > m) continue;
      const bp = q - lo;
      if (c < m) {
        m = c;
        best = q;
        if (MW > 1) for (let w = 0; w < MW; w++) tie[base + w] = 0;
        tie[base + (bp >>> 5)] = 1 << (bp & 31);
      } else tie[base + (bp >>> 5)]! |= 1 << (bp & 31);
    }
    chosenQ[k] = best;
    if (m !== cost[k]) {
      cost[k] = m;
      for (let r = revLo[k]!, end = revLo[k + 1]!; r < end; r++) dropTie(revQ[r]!);
    }
  };
  let portBuf = new Uint8Array(0); // j * nSw + k: the port of T's j-th LID on switch order[k]
  let lidBuf = new Int32Array(0);
  // The LFT entries are staged, STAGE columns (LIDs, in routing order) per switch, and written to
  // the tables switch by switch when the stage is full: consecutive destination switches have
  // neighbouring LIDs, so each table is touched once per stage, not once per destination switch.
  let maxNLid = 1;
  for (let T = 0; T < nSw; T++) {
    let n = 0;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) n += 1 << ends[ix.endsOfSw[i]!]!.lmc;
    maxNLid = Math.max(maxNLid, n);
  }
  const B = Math.max(STAGE, maxNLid);
  const stage = new Uint8Array(nSw * B).fill(255);
  const colLid = new Int32Array(B);
  let nCol = 0;
  const runCol = new Int32Array(B + 1);
  const flush = (): void => {
    // Runs of columns with consecutive LIDs: runCol[r] .. runCol[r+1]-1 are LIDs colLid[runCol[r]] ...
    let nRun = 0;
    for (let c = 0; c < nCol; c++) if (c === 0 || colLid[c] !== colLid[c - 1]! + 1) runCol[nRun++] = c;
    runCol[nRun] = nCol;
    for (let s = 0; s < nSw; s++) {
      const t = lfts[s]!;
      const o = s * B;
      for (let r = 0; r < nRun; r++) {
        const c0 = runCol[r]!;
        const off = colLid[c0]! - c0 - o;
        for (let x = o + c0, end = o + runCol[r + 1]!; x < end; x++) t[off + x] = stage[x]!;
      }
    }
    stage.fill(255);
    nCol = 0;
  };
  for (let T = 0; T < nSw; T++) {
    if (ix.endsStart[T + 1]! === ix.endsStart[T]!) continue;
    tick?.();
    let nLid = 0;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) nLid += 1 << ends[ix.endsOfSw[i]!]!.lmc;
    if (portBuf.length < nLid * nSw) portBuf = new Uint8Array(nLid * nSw);
    if (lidBuf.length < nLid) lidBuf = new Int32Array(nLid);
    const list = nLid > 1;
    const inc = list && !rand;
    dist.fill(-1);
    dist[T] = 0;
    order[0] = T;
    pos[T] = 0;
    cost[0] = 0;
    let reach = 1;
    let nc = 0;
    for (let k = 0; k < reach; k++) {
      const s = order[k]!;
      const ds = dist[s]!;
      candLo[k] = nc;
      caK[k] = caCount[s]!;
      let best = -1;
      let bestC = Infinity;
      let ties = 0;
      for (let e = adjStart[s]!, end = adjStart[s + 1]!; e < end; e++) {
        const r = adjSw[e]!;
        const dr = dist[r]!;
        if (dr < 0) {
          dist[r] = ds + 1;
          pos[r] = reach;
          order[reach++] = r;
          continue;
        }
        if (dr !== ds - 1) continue;
        const kr = pos[r]!;
        const w = weight[e]!;
        const c = w + cost[kr]!;
        let newMin = false;
        if (c < bestC) {
          bestC = c;
          best = e;
          ties = 1;
          newMin = true;
        } else if (c === bestC && rand) {
          ties++;
          if (rand() * ties < 1) best = e;
        }
        if (list) {
          if (inc) {
            // k's minimum set, for the incremental DP of the next LIDs.
            const bp = nc - candLo[k]!;
            const base = k * MW;
            if (newMin) {
              if (MW > 1) for (let w = 0; w < MW; w++) tie[base + w] = 0;
              tie[base + (bp >>> 5)] = 1 << (bp & 31);
            } else if (c === bestC) tie[base + (bp >>> 5)]! |= 1 << (bp & 31);
          }
          if (best === e) chosenQ[k] = nc;
          candE[nc] = e;
          candK[nc] = kr;
          candDep[nc] = depBase[e]!;
          ownK[nc] = k;
          candPort[nc] = adjPort[e]!;
          candW[nc++] = w;
        }
      }
      if (k === 0) continue;
      cost[k] = bestC;
      chosenE[k] = best;
      chosenK[k] = pos[adjSw[best]!]!;
      portBuf[k] = adjPort[best]!;
    }
    candLo[reach] = nc;
    if (inc) {
      // Candidates by the switch they lead to (reverse of candLo); the minimum sets are those of
      // the breadth-first pass's DP.
      revLo.fill(0, 0, reach + 1);
      for (let q = 0; q < nc; q++) revLo[candK[q]! + 1]!++;
      for (let k = 0; k < reach; k++) {
        revLo[k + 1]! += revLo[k]!;
        revFill[k] = revLo[k]!;
      }
      for (let q = 0; q < nc; q++) revQ[revFill[candK[q]!]!++] = q;
      need.fill(0, 0, reach);
    }
    let j = -1;
    let routed = false; // a CA LID of T was routed: weights changed
    // A switch's own LID (first of T's) carries no traffic, so without random tie-breaks the next
    // LID sees the same weights and takes the same paths: its ports are copied from this one's.
    let same = false;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const ep = ends[ix.endsOfSw[i]!]!;
      for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) {
        j++;
        lidBuf[j] = d;
        portBuf[j * nSw] = ep.swPort;
        if (j === 0) {
          // routed by the breadth-first pass
        } else if (same) {
          portBuf.copyWithin(j * nSw + 1, (j - 1) * nSw + 1, (j - 1) * nSw + reach);
        } else if (inc) {
          // Incremental: only the switches whose minimum set emptied are scanned again.
          // A switch's choice is final when the sweep reaches it (only switches one hop nearer,
          // all before it, change it).
          const pj = j * nSw;
          for (let k = 1; k < reach; k++) {
            if (need[k] !== 0) {
              need[k] = 0;
              rescan(k);
            }
            portBuf[pj + k] = candPort[chosenQ[k]!]!;
          }
        } else if (rand) {
          const pj = j * nSw;
          for (let k = 1; k < reach; k++) {
            let best = -1;
            let bestC = Infinity;
            let ties = 0;
            for (let q = candLo[k]!, end = candLo[k + 1]!; q < end; q++) {
              const c = candW[q]! + cost[candK[q]!]!;
              if (c < bestC) {
                bestC = c;
                best = q;
                ties = 1;
              } else if (c === bestC) {
                ties++;
                if (rand() * ties < 1) best = q;
              }
            }
            cost[k] = bestC;
            chosenQ[k] = best;
            portBuf[pj + k] = adjPort[candE[best]!]!;
          }
        }
        same = ep.isSwitch && !rand;
        // Farthest first: the CA sources behind each chosen link (added to its weight for a CA
        // destination), and the dependencies of the links that carry a source's route.
        acc.set(caK.subarray(0, reach));
        const usage = !ep.isSwitch;
        if (usage) routed = true;
        if (list) {
          for (let k = reach - 1; k >= 1; k--) {
            const q = chosenQ[k]!;
            const kr = candK[q]!;
            const a = acc[k]!;
            if (a === 0) continue;
            if (usage) {
              candW[q]! += a;
              if (inc) dropTie(q);
            }
            if (kr === 0) continue;
            acc[kr]! += a;
            const di = candDep[q]! + candE[chosenQ[kr]!]!;
            bits[di >>> 5]! |= 1 << (di & 31);
          }
        } else {
          // T's only LID, routed by the breadth-first pass (candidates not listed).
          for (let k = reach - 1; k >= 1; k--) {
            const kr = chosenK[k]!;
            const a = acc[k]!;
            if (usage) weight[chosenE[k]!]! += a;
            if (kr === 0 || a === 0) continue;
            acc[kr]! += a;
            const di = depBase[chosenE[k]!]! + chosenE[kr]!;
            bits[di >>> 5]! |= 1 << (di & 31);
          }
        }
      }
    }
    if (routed && list) for (let q = 0; q < nc; q++) weight[candE[q]!] = candW[q]!;
    // T's columns of the stage (k = 0 is T itself: the ports of its end ports).
    if (nCol + nLid > B) flush();
    for (let k = 0; k < reach; k++) {
      const o = order[k]! * B + nCol;
      for (let jj = 0, x = k; jj < nLid; jj++, x += nSw) stage[o + jj] = portBuf[x]!;
    }
    for (let jj = 0; jj < nLid; jj++) colLid[nCol + jj] = lidBuf[jj]!;
    nCol += nLid;
  }
  flush();
  return bits;
}

export const dfsssp: RoutingEngine = {
  name: 'dfsssp',
  description: 'balanced shortest paths made deadlock-free with virtual layers (SL = layer, SL i → VL i)',
  route: routeDfsssp,
};

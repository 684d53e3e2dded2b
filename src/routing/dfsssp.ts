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
 * Cost: per destination switch one breadth-first pass, per LID one DP over the switches' links
 * one hop nearer (typed arrays, no per-route objects); O(LIDs × links) time, O(links + switches ×
 * LIDs of one switch) memory besides the tables.
 */
import type { Fabric } from '../model/fabric.js';
import { emptyLfts, indexFabric, lftMap, rng, type FabricIndex } from './graph.js';
import { assignLayers, cdgAcyclic, dependencyStarts, type Layers } from './dfsssp-layers.js';
import { checkLmc } from './minhop.js';
import { identitySl2Vl, RoutingNotApplicable, type RoutingEngine, type RoutingOptions, type RoutingResult } from './types.js';

export function routeDfsssp(fabric: Fabric, opts: RoutingOptions): RoutingResult {
  checkLmc('dfsssp', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new RoutingNotApplicable('dfsssp', `maxVls must be 1..15, got ${maxVls}`);
  const ix = indexFabric(fabric);
  const lfts = emptyLfts(ix);
  const rand = opts.seed !== undefined ? rng(opts.seed) : undefined;
  const notes = [...ix.warnings];
  const depStart = dependencyStarts(ix);
  const dep0 = balancedPaths(ix, lfts, depStart, rand);
  // Layer 0 without a credit loop (fat trees): every path stays there. Otherwise the layers are
  // built from the tables' dependency counts.
  let layers: Layers | undefined;
  if (!cdgAcyclic(ix, depStart, dep0)) layers = assignLayers(ix, lfts, depStart, maxVls);
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
 */
function balancedPaths(ix: FabricIndex, lfts: Uint8Array[], depStart: Int32Array, rand: (() => number) | undefined): Uint32Array {
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
  let portBuf = new Uint8Array(0); // k * nLid + j: the port of T's j-th LID on switch order[k]
  let lidBuf = new Int32Array(0);
  let runJ = new Int32Array(1);
  let runLid = new Int32Array(0);
  for (let T = 0; T < nSw; T++) {
    if (ix.endsStart[T + 1]! === ix.endsStart[T]!) continue;
    let nLid = 0;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) nLid += 1 << ends[ix.endsOfSw[i]!]!.lmc;
    if (portBuf.length < nLid * nSw) portBuf = new Uint8Array(nLid * nSw);
    if (lidBuf.length < nLid) {
      lidBuf = new Int32Array(nLid);
      runJ = new Int32Array(nLid + 1);
      runLid = new Int32Array(nLid);
    }
    const list = nLid > 1;
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
        if (c < bestC) {
          bestC = c;
          best = e;
          ties = 1;
        } else if (c === bestC && rand) {
          ties++;
          if (rand() * ties < 1) best = e;
        }
        if (list) {
          if (best === e) chosenQ[k] = nc;
          candE[nc] = e;
          candK[nc] = kr;
          candW[nc++] = w;
        }
      }
      if (k === 0) continue;
      cost[k] = bestC;
      chosenE[k] = best;
      chosenK[k] = pos[adjSw[best]!]!;
      portBuf[k * nLid] = adjPort[best]!;
    }
    candLo[reach] = nc;
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
        lfts[T]![d] = ep.swPort;
        if (j === 0) {
          // routed by the breadth-first pass
        } else if (same) {
          for (let k = 1; k < reach; k++) portBuf[k * nLid + j] = portBuf[k * nLid + j - 1]!;
        } else if (!rand) {
          for (let k = 1; k < reach; k++) {
            const lo = candLo[k]!;
            const hi = candLo[k + 1]!;
            let best = lo;
            let bestC = candW[lo]! + cost[candK[lo]!]!;
            for (let q = lo + 1; q < hi; q++) {
              const c = candW[q]! + cost[candK[q]!]!;
              if (c < bestC) {
                bestC = c;
                best = q;
              }
            }
            cost[k] = bestC;
            chosenQ[k] = best;
            portBuf[k * nLid + j] = adjPort[candE[best]!]!;
          }
        } else {
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
            portBuf[k * nLid + j] = adjPort[candE[best]!]!;
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
            if (usage) candW[q]! += a;
            if (kr === 0 || a === 0) continue;
            acc[kr]! += a;
            const di = depStart[candE[q]!]! - adjStart[order[kr]!]! + candE[chosenQ[kr]!]!;
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
            const di = depStart[chosenE[k]!]! - adjStart[order[kr]!]! + chosenE[kr]!;
            bits[di >>> 5]! |= 1 << (di & 31);
          }
        }
      }
    }
    if (routed && list) for (let q = 0; q < nc; q++) weight[candE[q]!] = candW[q]!;
    // The LFT entries of T's LIDs, switch by switch (T's LIDs are near each other in every table).
    // Runs of consecutive LIDs: runJ[r] .. runJ[r+1]-1 are LIDs runLid[r] ...
    let nRun = 0;
    for (let jj = 0; jj < nLid; jj++) {
      if (jj > 0 && lidBuf[jj] === lidBuf[jj - 1]! + 1) continue;
      runJ[nRun] = jj;
      runLid[nRun++] = lidBuf[jj]!;
    }
    runJ[nRun] = nLid;
    for (let k = 1; k < reach; k++) {
      const t = lfts[order[k]!]!;
      const pb = k * nLid;
      for (let r = 0; r < nRun; r++) {
        const off = runLid[r]! - runJ[r]! - pb;
        for (let x = pb + runJ[r]!, end = pb + runJ[r + 1]!; x < end; x++) t[off + x] = portBuf[x]!;
      }
    }
  }
  return bits;
}

export const dfsssp: RoutingEngine = {
  name: 'dfsssp',
  description: 'balanced shortest paths made deadlock-free with virtual layers (SL = layer, SL i → VL i)',
  route: routeDfsssp,
};

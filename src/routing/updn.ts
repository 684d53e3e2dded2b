/** updn: up-star/down-star routing. Switches are ranked by BFS from the root switches (configured, or
 *  detected like OpenSM: a switch that sees more than 90% of the CAs at one hop distance and no
 *  other distance above 5%, of those the ones with the least eccentricity; when none qualifies, the
 *  most central switch). A link goes "up" toward
 *  the lower (rank, GUID). A legal route is zero or more up hops then zero or more down hops, which keeps the channel dependency
 *  graph acyclic on one VL. Per destination switch T: switches that can reach T going only down
 *  route down (shortest down path); every other switch routes up along the shortest legal path.
 *  Port choice among equal candidates is the minhop balancer. */
import type { Fabric } from '../model/fabric.js';
import { fillForDestSwitch, finishFill, newBalancer, type DestLids, type UpDown } from './balance.js';
import { bfsSwitches, emptyLfts, indexFabric, lftMap, resolveRoots, swName, type FabricIndex } from './graph.js';
import { checkLmc } from './minhop.js';
import { orderDestinations, orderNote, type DestOrder } from './route-order.js';
import { RoutingNotApplicable, runSteps, steppedEngine, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';

/** OpenSM's root detection (a switch sees more than 90% of the CAs at one hop distance and no other
 *  distance above 5%), kept to the passing switches of least eccentricity; returns switch indices
 *  (possibly empty) and the most central switch. */
export function detectRoots(ix: FabricIndex): { roots: number[]; center: number } {
  return runSteps(detectRootsSteps(ix));
}

/** detectRoots in steps: 'roots' before the breadth-first pass from each switch. */
function* detectRootsSteps(ix: FabricIndex): Generator<RoutingPhase, { roots: number[]; center: number }, void> {
  const { nSw, caCount } = ix;
  let cas = 0;
  for (let s = 0; s < nSw; s++) cas += caCount[s]!;
  const thd1 = cas * 0.9;
  const thd2 = cas * 0.05;
  const dist = new Int32Array(nSw);
  const queue = new Int32Array(nSw);
  const roots: number[] = [];
  let center = 0;
  let bestEcc = Infinity;
  let bestSum = Infinity;
  const hist: number[] = [];
  const eccOf = new Map<number, number>();
  for (let s = 0; s < nSw; s++) {
    yield 'roots';
    bfsSwitches(ix, s, dist, queue);
    hist.length = 0;
    let ecc = 0;
    let sum = 0;
    for (let t = 0; t < nSw; t++) {
      const c = caCount[t]!;
      if (!c) continue;
      const d = dist[t]!;
      if (d < 0) {
        ecc = Infinity;
        continue;
      }
      hist[d] = (hist[d] ?? 0) + c;
      if (d > ecc) ecc = d;
      sum += d * c;
    }
    let over1 = 0;
    let over2 = 0;
    for (const h of hist) {
      if ((h ?? 0) > thd1) over1++;
      if ((h ?? 0) > thd2) over2++;
    }
    if (cas > 0 && over1 === 1 && over2 === 1) {
      roots.push(s);
      eccOf.set(s, ecc);
    }
    if (ecc < bestEcc || (ecc === bestEcc && sum < bestSum)) {
      bestEcc = ecc;
      bestSum = sum;
      center = s;
    }
  }
  // In a large fat tree every switch passes the histogram test (its far bar alone holds > 90% of
  // the CAs), so keep only the passing switches of least eccentricity: the top of the tree.
  let minEcc = Infinity;
  for (const r of roots) minEcc = Math.min(minEcc, eccOf.get(r)!);
  return { roots: roots.filter((r) => eccOf.get(r) === minEcc), center };
}

/** Rank switches by BFS from the roots (rank 0); unreachable switches get rank −1. */
export function rankFromRoots(ix: FabricIndex, roots: readonly number[]): Int32Array {
  const rank = new Int32Array(ix.nSw).fill(-1);
  const queue = new Int32Array(ix.nSw);
  let head = 0;
  let tail = 0;
  for (const r of roots) {
    rank[r] = 0;
    queue[tail++] = r;
  }
  while (head < tail) {
    const s = queue[head++]!;
    for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) {
      const r = ix.adjSw[e]!;
      if (rank[r]! < 0) {
        rank[r] = rank[s]! + 1;
        queue[tail++] = r;
      }
    }
  }
  return rank;
}

interface UpdnRun {
  lfts: Uint8Array[];
  /** (switch with CAs, destination switch) pairs without a legal route. */
  unroutable: number;
  /** (switch without CAs, destination switch) pairs routed by plain shortest path instead. */
  fallbackRoutes: number;
}

/** What the up/down rule toward one destination switch needs: the tables' channels' directions
 *  and per-switch scratch, reused switch after switch. */
interface UpdnScratch {
  ix: FabricIndex;
  isUp: Uint8Array;
  dDown: Int32Array;
  eff: Int32Array;
  fallback: Uint8Array;
  queue: Int32Array;
  bucketHead: Int32Array;
  bucketNext: Int32Array;
}

/** The legal distances toward T (eff, dDown, fallback); counts the (switch with CAs, T) pairs
 *  without a legal route and the fallback routes of switches without CAs. */
function legalDistances(c: UpdnScratch, T: number): { unroutable: number; fallbackRoutes: number } {
  const { ix, isUp, dDown, eff, fallback, queue, bucketHead, bucketNext } = c;
  const { nSw, adjStart, adjSw, caCount } = ix;
  // Phase 1: down-only distances (BFS backwards over down links).
  dDown.fill(-1);
  dDown[T] = 0;
  let head = 0;
  let tail = 0;
  queue[tail++] = T;
  while (head < tail) {
    const x = queue[head++]!;
    for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
      // x→y up  ⇔  y→x down
      if (!isUp[e]) continue;
      const y = adjSw[e]!;
      if (dDown[y]! < 0) {
        dDown[y] = dDown[x]! + 1;
        queue[tail++] = y;
      }
    }
  }
  // Phase 2: others go up to the nearest switch that has a legal route (multi-source, unit weights).
  eff.set(dDown);
  bucketHead.fill(-1);
  let maxB = 0;
  for (let s = 0; s < nSw; s++) {
    const d = dDown[s]!;
    if (d < 0) continue;
    bucketNext[s] = bucketHead[d]!;
    bucketHead[d] = s;
    if (d > maxB) maxB = d;
  }
  for (let b = 0; b <= maxB; b++) {
    let x = bucketHead[b]!;
    while (x >= 0) {
      const nx = bucketNext[x]!;
      for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
        // y→x up  ⇔  x→y down
        if (isUp[e]) continue;
        const y = adjSw[e]!;
        if (eff[y]! < 0) {
          eff[y] = b + 1;
          bucketNext[y] = bucketHead[b + 1]!;
          bucketHead[b + 1] = y;
          if (b + 1 > maxB) maxB = b + 1;
        }
      }
      x = nx;
    }
  }
  // Phase 3: switches with no legal route at all (e.g. one root toward another root's LID). No CA
  // route passes through them (every legal next hop has a legal route), so if they have no CAs
  // themselves, a plain shortest path (down then up) only carries their own management traffic.
  fallback.fill(0);
  let unroutable = 0;
  let fallbackRoutes = 0;
  let pending = 0;
  for (let s = 0; s < nSw; s++) {
    if (eff[s]! >= 0) continue;
    if (caCount[s]! > 0) unroutable++;
    else pending++;
  }
  if (pending > 0) {
    for (let b = 0; b <= maxB && pending > 0; b++) {
      // Rebuild bucket b from eff (phase 2 buckets were consumed); O(nSw) per level, rare.
      for (let x = 0; x < nSw; x++) {
        if (eff[x] !== b) continue;
        for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
          const y = adjSw[e]!;
          if (eff[y]! >= 0 || caCount[y]! > 0) continue;
          eff[y] = b + 1;
          fallback[y] = 1;
          fallbackRoutes++;
          pending--;
          if (b + 1 > maxB) maxB = b + 1;
        }
      }
    }
  }
  return { unroutable, fallbackRoutes };
}

/** The up/down tables from `roots`: 'ranks' first (the switches' ranks, the links' directions),
 *  then per destination group 'distances' (the legal distances toward its switch, when it is not
 *  the previous group's) and 'paths' (its LIDs' ports at every switch). */
function* runUpdn(ix: FabricIndex, roots: readonly number[], opts: RoutingOptions): Generator<RoutingPhase, UpdnRun & { order: DestOrder }, void> {
  yield 'ranks';
  const { nSw, adjStart, adjSw, swGuid } = ix;
  const nE = adjStart[nSw]!;
  const rank = rankFromRoots(ix, roots);
  const isUp = new Uint8Array(nE);
  for (let s = 0; s < nSw; s++) {
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const r = adjSw[e]!;
      isUp[e] = rank[r]! < rank[s]! || (rank[r] === rank[s] && swGuid[r]! < swGuid[s]!) ? 1 : 0;
    }
  }
  const lfts = emptyLfts(ix);
  const bal = newBalancer(ix, opts.seed);
  const scratch: DestLids = { end: [], lid: [] };
  // Bucket queue for the second phase (distances < 2 * nSw).
  const c: UpdnScratch = { ix, isUp, dDown: new Int32Array(nSw), eff: new Int32Array(nSw), fallback: new Uint8Array(nSw), queue: new Int32Array(nSw), bucketHead: new Int32Array(2 * nSw + 2), bucketNext: new Int32Array(nSw) };
  const rule: UpDown = { isUp, dDown: c.dDown, fallback: c.fallback };
  let unroutable = 0;
  let fallbackRoutes = 0;
  // Destination switches in turn (or the destinations in the configured order: a switch's rule
  // is worked out again when its destinations come back, and counted once).
  const order = orderDestinations(ix, opts.routeOrder, opts.routeOrderNoScatter);
  const counted = new Uint8Array(nSw);
  let ruleOf = -1;
  for (const g of order.groups) {
    if (ruleOf !== g.sw) {
      yield 'distances';
      const n = legalDistances(c, g.sw);
      ruleOf = g.sw;
      if (!counted[g.sw]) {
        counted[g.sw] = 1;
        unroutable += n.unroutable;
        fallbackRoutes += n.fallbackRoutes;
      }
    }
    yield 'paths';
    fillForDestSwitch(ix, g, lfts, bal, c.eff, rule, scratch);
  }
  finishFill(bal);
  return { lfts, unroutable, fallbackRoutes, order };
}

/** updn in steps: the roots (configured, or detected: 'roots'), then the tables from them
 *  (runUpdn), again from the first root alone when several leave pairs without a legal route. */
export function* updnSteps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> {
  checkLmc('updn', opts);
  const ix = indexFabric(fabric);
  const notes = [...ix.warnings];
  if (ix.nSw === 0) throw new RoutingNotApplicable('updn', 'the fabric has no switches');
  let roots = yield* chooseRoots(ix, opts.roots, notes);
  let run = yield* runUpdn(ix, roots, opts);
  if (run.unroutable > 0 && roots.length > 1) {
    notes.push(`${roots.length} roots leave ${run.unroutable} (switch with CAs, destination switch) pairs without a legal up/down route; retrying with the single root ${swName(ix, roots[0]!)}`);
    roots = [roots[0]!];
    run = yield* runUpdn(ix, roots, opts);
  }
  if (run.unroutable > 0) notes.push(`${run.unroutable} (switch, destination switch) pairs have no route (the fabric is not connected)`);
  if (run.order.listed || run.order.skipped) notes.push(orderNote(run.order));
  if (run.fallbackRoutes > 0) notes.push(`${run.fallbackRoutes} (switch, destination switch) routes go down then up, from switches without CAs that have no legal up/down path (e.g. between roots, as in OpenSM); no CA traffic uses them`);
  return {
    engine: 'updn',
    lfts: lftMap(ix, run.lfts),
    maxLid: ix.maxLid,
    vlsUsed: 1,
    deadlockFree: true,
    roots: roots.map((r) => ix.swGuid[r]!),
    notes,
  };
}

/** The configured roots, else the detected ones, else the most central switch (noted). */
function* chooseRoots(ix: FabricIndex, configured: readonly bigint[] | undefined, notes: string[]): Generator<RoutingPhase, number[], void> {
  if (configured && configured.length > 0) {
    const roots = resolveRoots(ix, 'updn', configured);
    notes.push(`roots (configured): ${roots.map((r) => swName(ix, r)).join(', ')}`);
    return roots;
  }
  const det = yield* detectRootsSteps(ix);
  if (det.roots.length > 0) {
    notes.push(`roots (detected): ${det.roots.length} switch(es)${det.roots.length <= 8 ? ': ' + det.roots.map((r) => swName(ix, r)).join(', ') : ''}`);
    return det.roots;
  }
  notes.push(`no root detected by CA hop histogram; using the most central switch ${swName(ix, det.center)} as the single root`);
  return [det.center];
}

export const updn: RoutingEngine = steppedEngine({
  name: 'updn',
  description: 'up/down from root switches (configured or detected): deadlock-free on one VL, any topology',
  takesRouteOrder: true,
  steps: updnSteps,
});

export const routeUpdn = updn.route;

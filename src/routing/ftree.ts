/**
 * ftree: fat-tree routing (the OpenSM ftree idea, our implementation).
 *
 * Topology check: leaves are the switches with CAs (or, with configured roots, the switches
 * farthest from them); every switch gets a level (leaves 0); every switch-to-switch link must join
 * adjacent levels; every non-top switch needs up links; switches of one level must have the same
 * number of up- and down-going port groups (ports to one remote switch) of the same size, as
 * OpenSM requires. Otherwise RoutingNotApplicable.
 *
 * Routing, per destination LID (leaves in order, their CA ports in port order):
 *  - main path: from the destination's leaf go up, each time through the up port whose link has
 *    carried the fewest destinations down so far; the top switch reached is this destination's
 *    root. Destinations with the same index on different leaves thus take the same spine, and the
 *    hosts of one leaf take distinct spines (optimal for shift patterns on full trees).
 *  - every ancestor of the leaf routes down (main-path switches along the main path);
 *  - every other switch routes up, to a parent at the least distance, preferring parents whose
 *    route joins the main path, then the up port with the fewest up-going routes.
 * All CA-to-CA routes are up then down: no credit loops. Routes between top switches (switch
 * LIDs only, management traffic) go down then up, as no up/down path exists between them.
 * LMC > 0: each LID of a port is routed as its own destination, so they take different roots.
 */
import type { Fabric } from '../model/fabric.js';
import { emptyLfts, indexFabric, lftMap, resolveRoots, swName, type FabricIndex } from './graph.js';
import { checkLmc } from './minhop.js';
import { RoutingNotApplicable, type RoutingEngine, type RoutingOptions, type RoutingResult } from './types.js';

const NA = (reason: string): RoutingNotApplicable => new RoutingNotApplicable('ftree', reason);

export interface FatTreeShape {
  /** Level per switch: 0 = leaf, top = levels - 1. */
  level: Int32Array;
  levels: number;
  /** Per switch, adjacency entries going up / down (port order). */
  up: number[][];
  down: number[][];
}

/** Detect and check the fat tree; throws RoutingNotApplicable with the first rule broken. */
export function fatTreeShape(ix: FabricIndex, roots?: readonly bigint[]): FatTreeShape {
  const { nSw, adjStart, adjSw, caCount } = ix;
  if (nSw === 0) throw NA('the fabric has no switches');
  const level = new Int32Array(nSw).fill(-1);
  const queue = new Int32Array(nSw);
  let head = 0;
  let tail = 0;
  const bfs = (): void => {
    while (head < tail) {
      const s = queue[head++]!;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const r = adjSw[e]!;
        if (level[r]! < 0) {
          level[r] = level[s]! + 1;
          queue[tail++] = r;
        }
      }
    }
  };
  if (roots && roots.length > 0) {
    const rs = resolveRoots(ix, 'ftree', roots);
    for (const r of rs) {
      level[r] = 0;
      queue[tail++] = r;
    }
    bfs();
    let H = 0;
    for (let s = 0; s < nSw; s++) H = Math.max(H, level[s]!);
    for (let s = 0; s < nSw; s++) if (level[s]! >= 0) level[s] = H - level[s]!;
    for (let s = 0; s < nSw; s++) {
      if (caCount[s]! > 0 && level[s] !== 0) throw NA(`switch ${swName(ix, s)} has CAs but is ${level[s]} level(s) above the lowest switches from the configured roots: CAs must hang off leaf switches only`);
    }
  } else {
    for (let s = 0; s < nSw; s++) {
      if (caCount[s]! > 0) {
        level[s] = 0;
        queue[tail++] = s;
      }
    }
    if (tail === 0) throw NA('no switch has CAs attached, so there are no leaf switches');
    bfs();
  }
  let top = 0;
  for (let s = 0; s < nSw; s++) {
    if (level[s]! < 0) throw NA(`switch ${swName(ix, s)} is not connected to the rest of the tree`);
    top = Math.max(top, level[s]!);
  }
  const levels = top + 1;
  if (levels < 2 || levels > 8) throw NA(`the tree has ${levels} level(s); ftree handles 2 to 8`);
  const up: number[][] = [];
  const down: number[][] = [];
  for (let s = 0; s < nSw; s++) {
    const u: number[] = [];
    const d: number[] = [];
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const r = adjSw[e]!;
      const dl = level[r]! - level[s]!;
      if (dl === 1) u.push(e);
      else if (dl === -1) d.push(e);
      else throw NA(`link ${swName(ix, s)} port ${ix.adjPort[e]} → ${swName(ix, r)} joins switches on levels ${level[s]} and ${level[r]}: a fat tree links adjacent levels only`);
    }
    if (level[s]! < top && u.length === 0) throw NA(`switch ${swName(ix, s)} on level ${level[s]} has no up links but is not a top switch`);
    up.push(u);
    down.push(d);
  }
  // Regularity per level: number of up/down port groups and ports per group.
  const groups = (s: number, entries: number[]): number[] => {
    const m = new Map<number, number>();
    for (const e of entries) m.set(adjSw[e]!, (m.get(adjSw[e]!) ?? 0) + 1);
    return [...m.values()];
  };
  for (const dir of ['up', 'down'] as const) {
    const seen = new Map<number, { s: number; groups: number; sizes: string }>();
    for (let s = 0; s < nSw; s++) {
      const l = level[s]!;
      if ((dir === 'up' && l === top) || (dir === 'down' && l === 0)) continue;
      const g = groups(s, dir === 'up' ? up[s]! : down[s]!);
      const sizes = [...new Set(g)].sort((a, b) => a - b).join('/');
      const ref = seen.get(l);
      if (!ref) {
        seen.set(l, { s, groups: g.length, sizes });
        continue;
      }
      if (ref.groups !== g.length || ref.sizes !== sizes) {
        throw NA(`level ${l} is irregular: switch ${swName(ix, s)} has ${g.length} ${dir}-going port group(s) of ${sizes} port(s), switch ${swName(ix, ref.s)} has ${ref.groups} of ${ref.sizes}`);
      }
      if (sizes.includes('/')) throw NA(`switch ${swName(ix, s)} has ${dir}-going port groups of different sizes (${sizes})`);
    }
  }
  return { level, levels, up, down };
}

export function routeFtree(fabric: Fabric, opts: RoutingOptions): RoutingResult {
  checkLmc('ftree', opts);
  const ix = indexFabric(fabric);
  const shape = fatTreeShape(ix, opts.roots);
  const { nSw, adjSw, adjPort, adjRemotePort, adjReverse, ends } = ix;
  const { level, up, down } = shape;
  const nE = ix.adjStart[nSw]!;
  const lfts = emptyLfts(ix);
  const downCnt = new Int32Array(nE); // on an up entry s→p: destinations routed down p→s
  const upCnt = new Int32Array(nE); // on an up entry s→p: routes going up through it

  // Up-going port groups: entries of one switch to the same parent share a group counter.
  const upGroup = new Int32Array(nE).fill(-1);
  let nGroups = 0;
  for (let sw = 0; sw < nSw; sw++) {
    const first = new Map<number, number>();
    for (const e of up[sw]!) {
      const p = adjSw[e]!;
      let g = first.get(p);
      if (g === undefined) first.set(p, (g = nGroups++));
      upGroup[e] = g;
    }
  }
  const groupDown = new Int32Array(nGroups);

  // Switches by level, top first.
  const byLevel: number[][] = Array.from({ length: shape.levels }, () => []);
  for (let s = 0; s < nSw; s++) byLevel[level[s]!]!.push(s);

  // ---- per destination switch T: ancestors, distances, and a baseline port on every switch ----
  // (the route a switch takes when no main-path preference applies: ancestors go down toward T,
  // others up to a parent at the least distance). Shared by all LIDs delivered by T.
  const ancStamp = new Int32Array(nSw).fill(-1);
  const dist = new Int32Array(nSw);
  const basePort = new Uint8Array(nSw);
  const queue = new Int32Array(nSw);
  let tEpoch = 0;
  let preparedFor = -1;
  let downUpRoutes = 0;
  const prepare = (T: number, forCa: boolean): void => {
    if (preparedFor === T) return;
    preparedFor = T;
    const ep = ++tEpoch;
    basePort.fill(255);
    dist.fill(-1);
    dist[T] = 0;
    ancStamp[T] = ep;
    let h = 0;
    let t = 0;
    queue[t++] = T;
    while (h < t) {
      const s = queue[h++]!;
      for (const e of up[s]!) {
        const p = adjSw[e]!;
        if (ancStamp[p] !== ep) {
          ancStamp[p] = ep;
          dist[p] = dist[s]! + 1;
          queue[t++] = p;
        }
      }
    }
    for (let i = 1; i < t; i++) {
      const a = queue[i]!;
      for (const f of down[a]!) {
        const c = adjSw[f]!;
        if (ancStamp[c] === ep && dist[c] === dist[a]! - 1) {
          basePort[a] = adjPort[f]!;
          break;
        }
      }
    }
    const deferred: number[] = [];
    for (let l = shape.levels - 1; l >= 0; l--) {
      for (const s of byLevel[l]!) {
        if (ancStamp[s] === ep) continue;
        let best = -1;
        for (const e of up[s]!) {
          const dp = dist[adjSw[e]!]!;
          if (dp >= 0 && (best < 0 || dp < dist[adjSw[best]!]!)) best = e;
        }
        if (best < 0) {
          deferred.push(s);
          continue;
        }
        basePort[s] = adjPort[best]!;
        dist[s] = dist[adjSw[best]!]! + 1;
      }
    }
    if (deferred.length === 0) return;
    if (forCa) {
      throw NA(`switch ${swName(ix, deferred[0]!)} has no up/down route to leaf ${swName(ix, T)}: its ancestors do not reach that leaf going down, so this is not a fat tree`);
    }
    // Switch LIDs only: remaining switches (other top switches, and switches below only them) take a
    // shortest path through routed switches (down, then up): BFS seeded with every routed switch.
    const buckets: number[][] = [];
    for (let x = 0; x < nSw; x++) if (dist[x]! >= 0) (buckets[dist[x]!] ??= []).push(x);
    for (let b = 0; b < buckets.length; b++) {
      for (const x of buckets[b] ?? []) {
        for (let e = ix.adjStart[x]!; e < ix.adjStart[x + 1]!; e++) {
          const y = adjSw[e]!;
          const back = adjReverse[e]!;
          if (dist[y]! >= 0 || back < 0) continue;
          basePort[y] = adjPort[back]!;
          dist[y] = b + 1;
          downUpRoutes++;
          (buckets[b + 1] ??= []).push(y);
        }
      }
    }
  };

  // ---- per destination LID ----
  let caLeaves = 0;
  for (const s of byLevel[0]!) if (ix.caCount[s]! > 0) caLeaves++;
  const flagStamp = new Int32Array(nSw).fill(-1);
  const candE = new Int32Array(nSw);
  const flaggedAt: number[][] = Array.from({ length: shape.levels }, () => []);
  const mainAt = new Int32Array(shape.levels);
  let dEpoch = 0;
  let slowDests = 0;

  const routeDest = (d: number, T: number, deliverPort: number, count: boolean): void => {
    prepare(T, count);
    const ep = ++dEpoch;
    const aep = tEpoch;
    for (let s = 0; s < nSw; s++) lfts[s]![d] = basePort[s]!;
    lfts[T]![d] = deliverPort;
    // Main path.
    mainAt.fill(-1);
    let cur = T;
    flagStamp[T] = ep;
    mainAt[level[T]!] = T;
    while (up[cur]!.length > 0) {
      // Least loaded port group (parallel links to one parent), then least loaded port in it.
      let best = -1;
      for (const e of up[cur]!) {
        if (best < 0) best = e;
        else {
          const g = groupDown[upGroup[e]!]!;
          const gb = groupDown[upGroup[best]!]!;
          if (g < gb || (g === gb && downCnt[e]! < downCnt[best]!)) best = e;
        }
      }
      if (count) {
        downCnt[best]!++;
        groupDown[upGroup[best]!]!++;
      }
      const p = adjSw[best]!;
      lfts[p]![d] = adjRemotePort[best]!;
      flagStamp[p] = ep;
      mainAt[level[p]!] = p;
      cur = p;
    }
    // Non-ancestors below flagged switches join the main path: top-down, each takes the least used
    // up link to a flagged parent at its least distance.
    let flaggedLeaves = 0;
    for (let l = shape.levels - 1; l >= 1; l--) {
      const below = flaggedAt[l - 1]!;
      below.length = 0;
      const pushFrom = (p: number): void => {
        for (const f of down[p]!) {
          const c = adjSw[f]!;
          if (ancStamp[c] === aep || dist[c] !== dist[p]! + 1) continue;
          const u = adjReverse[f]!;
          if (flagStamp[c] !== ep) {
            flagStamp[c] = ep;
            candE[c] = u;
            below.push(c);
          } else if (upCnt[u]! < upCnt[candE[c]!]! || (upCnt[u] === upCnt[candE[c]!] && u < candE[c]!)) candE[c] = u;
        }
      };
      if (mainAt[l]! >= 0) pushFrom(mainAt[l]!);
      for (const p of flaggedAt[l]!) pushFrom(p);
      for (const c of below) {
        const u = candE[c]!;
        lfts[c]![d] = adjPort[u]!;
        if (count) upCnt[u]!++;
        if (l - 1 === 0 && ix.caCount[c]! > 0) flaggedLeaves++;
      }
    }
    flaggedAt[shape.levels - 1]!.length = 0;
    if (!count || flaggedLeaves >= caLeaves - (ix.caCount[T]! > 0 ? 1 : 0)) return;
    // Irregular case: some leaves with CAs do not reach the main path at their least distance.
    // Their up routes carry CA traffic, so balance them by up-link load (top-down).
    slowDests++;
    for (let l = shape.levels - 2; l >= 0; l--) {
      for (const s of byLevel[l]!) {
        if (ancStamp[s] === aep || flagStamp[s] === ep) continue;
        let best = -1;
        for (const e of up[s]!) {
          if (dist[adjSw[e]!] !== dist[s]! - 1) continue;
          if (best < 0 || upCnt[e]! < upCnt[best]!) best = e;
        }
        if (best < 0) continue;
        lfts[s]![d] = adjPort[best]!;
        upCnt[best]!++;
      }
    }
  };

  // CA destinations: leaves in switch order, ports in the leaf's port order.
  for (const leaf of byLevel[0]!) {
    const eps: number[] = [];
    for (let i = ix.endsStart[leaf]!; i < ix.endsStart[leaf + 1]!; i++) if (!ends[ix.endsOfSw[i]!]!.isSwitch) eps.push(ix.endsOfSw[i]!);
    eps.sort((a, b) => ends[a]!.swPort - ends[b]!.swPort);
    for (const ei of eps) {
      const ep = ends[ei]!;
      for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) routeDest(l, leaf, ep.swPort, true);
    }
  }
  // Switch LIDs.
  for (const ep of ends) if (ep.isSwitch && ep.sw >= 0) routeDest(ep.lid, ep.sw, 0, false);

  const notes = [...ix.warnings];
  notes.push(`fat tree: ${shape.levels} levels, ${byLevel.map((b, l) => `level ${l}: ${b.length}`).join(', ')} switches`);
  if (slowDests > 0) notes.push(`${slowDests} destination(s) needed load-balanced up routes off the main path (the tree is not fully populated)`);
  if (downUpRoutes > 0) notes.push(`${downUpRoutes} switch-to-switch routes between top-level switches go down then up (no up/down path exists; switch management traffic only)`);
  return {
    engine: 'ftree',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    vlsUsed: 1,
    deadlockFree: true,
    roots: byLevel[shape.levels - 1]!.map((s) => ix.swGuid[s]!),
    notes,
  };
}

export const ftree: RoutingEngine = {
  name: 'ftree',
  description: 'fat-tree routing (2 to 8 levels, regular trees): balanced for shift patterns, deadlock-free on one VL',
  route: routeFtree,
};

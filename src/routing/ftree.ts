/**
 * ftree: fat-tree routing (the OpenSM ftree idea, our implementation), balanced to the optimum
 * on regular trees and routed, not refused, when degraded.
 *
 * Topology check: leaves are the switches with CAs (or, with configured roots, the switches
 * farthest from them); every switch gets a level (leaves 0); every switch-to-switch link must join
 * adjacent levels; every non-top switch needs up links; every switch with CAs must reach every
 * leaf by an up/down route. Otherwise RoutingNotApplicable. Levels whose switches differ in their
 * up/down links (a link or switch missing) are routed and noted (OpenSM: "not a fat tree").
 *
 * Routing, per destination leaf T: the ancestors of T (switches that reach it going down) may go
 * down to a child one hop nearer, every other switch up to a parent one hop nearer (up/down, so
 * no credit loops on one VL). Per destination LID i (leaves in order, their ports in port order,
 * the LIDs of a port consecutive), a switch at position σ in its level takes its candidate
 * (i + σ) mod count. So one switch deals its destinations evenly over its up links, and the
 * routes to one destination leave the switches of a level over every up link in turn: they
 * arrive over every link into the destination's leaf, and each level above carries its share
 * (OpenSM's ftree sends all routes to one destination down one link into its leaf). On the
 * generators' trees this meets the lower bound (test/helpers/fat-tree-bound.ts). LMC > 0: the
 * LIDs of a port leave every switch over different links. In a degraded tree the rotation is
 * weighted by how many candidates each next hop has, so traffic follows the remaining capacity.
 * Switches without CAs that have no up/down route (between top switches, around a missing link)
 * go down then up; no CA route uses them.
 */
import type { Fabric } from '../model/fabric.js';
import { csr, emptyLfts, indexFabric, lftMap, resolveRoots, swName, type FabricIndex } from './graph.js';
import { downClasses, switchClasses } from './ftree-classes.js';
import { ColumnBuffer, RunWriter } from './lft-writers.js';
import { checkLmc } from './minhop.js';
import { RoutingNotApplicable, type RoutingEngine, type RoutingOptions, type RoutingResult } from './types.js';

const NA = (reason: string): RoutingNotApplicable => new RoutingNotApplicable('ftree', reason);

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export interface FatTreeShape {
  /** Level per switch: 0 = leaf, top = levels - 1. */
  level: Int32Array;
  levels: number;
  /** Per switch, adjacency entries going up / down (port order). */
  up: number[][];
  down: number[][];
  /** Where levels differ in their up/down links (a degraded tree), a few examples; empty when regular. */
  irregular: string[];
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
  // Regularity per level (OpenSM refuses irregular trees; here they are routed, and said so).
  const groups = (entries: number[]): number => new Set(entries.map((e) => adjSw[e]!)).size;
  const irregular: string[] = [];
  for (const dir of ['up', 'down'] as const) {
    const seen = new Map<number, { s: number; groups: number; ports: number }>();
    for (let s = 0; s < nSw; s++) {
      const l = level[s]!;
      if ((dir === 'up' && l === top) || (dir === 'down' && l === 0)) continue;
      const list = dir === 'up' ? up[s]! : down[s]!;
      const g = groups(list);
      const ref = seen.get(l);
      if (!ref) seen.set(l, { s, groups: g, ports: list.length });
      else if ((ref.groups !== g || ref.ports !== list.length) && irregular.length < 3) {
        irregular.push(`level ${l}: switch ${swName(ix, s)} has ${list.length} ${dir}-going port(s) to ${g} switch(es), switch ${swName(ix, ref.s)} ${ref.ports} to ${ref.groups}`);
      }
    }
  }
  return { level, levels, up, down, irregular };
}

export function routeFtree(fabric: Fabric, opts: RoutingOptions): RoutingResult {
  checkLmc('ftree', opts);
  const ix = indexFabric(fabric);
  const shape = fatTreeShape(ix, opts.roots);
  const { nSw, adjSw, adjPort, adjRemotePort, adjReverse, ends } = ix;
  const { level } = shape;
  const nE = ix.adjStart[nSw]!;
  // Up and down entries of each switch as flat arrays (the hot loops below run once per destination switch).
  const { start: upStart, list: upList } = csr(shape.up);
  const { start: downStart, list: downList } = csr(shape.down);
  // The switch and port each up/down entry leads to (one load less in the loops over them).
  const upSw = upList.map((e) => adjSw[e]!);
  const upPort = Uint8Array.from(upList, (e) => adjPort[e]!);
  const downSw = downList.map((e) => adjSw[e]!);
  const lfts = emptyLfts(ix);
  // Switches by level, and each switch's position in its level (the rotation offset).
  const byLevel: number[][] = Array.from({ length: shape.levels }, () => []);
  const sigma = new Int32Array(nSw);
  for (let s = 0; s < nSw; s++) sigma[s] = byLevel[level[s]!]!.push(s) - 1;

  // ---- per destination switch T: distances and every switch's candidate ports ----
  // Ancestors of T (switches that reach it going down) may go down to a child one hop nearer;
  // every other switch goes up to a parent one hop nearer along up/down routes. Shared by all
  // LIDs delivered by T.
  const ancStamp = new Int32Array(nSw).fill(-1);
  /** Switches with an up/down route to T (stamped with T's epoch), listed in `rList[0 .. nR-1]`:
   *  T's ancestors first (nearest first), then the switches below them, by level from the top. */
  const inR = new Int32Array(nSw).fill(-1);
  const rList = new Int32Array(nSw);
  let nR = 0;
  let nAnc = 0;
  const dist = new Int32Array(nSw);
  const candLo = new Int32Array(nSw);
  const candHi = new Int32Array(nSw);
  const cand = new Int32Array(nE + nSw);
  const candPort = new Uint8Array(nE + nSw);
  const queue = new Int32Array(nSw);
  const cls = switchClasses(nSw, level, upStart, upSw, upPort, downStart, downSw);
  // Switches by their down links (switch and port, in order), for the ancestors' candidates.
  const downClass = downClasses(nSw, downStart, downList, adjSw, adjPort);
  const dcStamp = new Int32Array(nSw).fill(-1);
  const dcWant = new Int32Array(nSw);
  const dcLo = new Int32Array(nSw);
  const dcHi = new Int32Array(nSw);
  /** Per switch: the version of its candidate list (its class's; −1 for an ancestor of T). */
  const swVer = new Int32Array(nSw).fill(-1);
  let tEpoch = 0;
  let downUpRoutes = 0;
  /** Distances and candidates toward T, for T's ancestors and the switches below them (the only
   *  ones with up/down routes to T). */
  const prepare = (T: number): void => {
    const ep = ++tEpoch;
    dist.fill(-1);
    dist[T] = 0;
    ancStamp[T] = ep;
    inR[T] = ep;
    nR = 0;
    let h = 0;
    let t = 0;
    queue[t++] = T;
    while (h < t) {
      const s = queue[h++]!;
      const ds = dist[s]! + 1;
      for (let j = upStart[s]!, end = upStart[s + 1]!; j < end; j++) {
        const p = upSw[j]!;
        if (ancStamp[p] !== ep) {
          ancStamp[p] = ep;
          inR[p] = ep;
          dist[p] = ds;
          queue[t++] = p;
          rList[nR++] = p;
        }
      }
    }
    nAnc = nR;
    // Ancestors: down to children one hop nearer that are ancestors too (or T). Switches with the
    // same down links at the same distance have the same candidates: computed once.
    let k = 0;
    for (let i = 0; i < nAnc; i++) {
      const s = rList[i]!;
      swVer[s] = -1;
      const want = dist[s]! - 1;
      const dc = downClass[s]!;
      if (dcStamp[dc] === ep && dcWant[dc] === want) {
        candLo[s] = dcLo[dc]!;
        candHi[s] = dcHi[dc]!;
        continue;
      }
      candLo[s] = k;
      for (let j = downStart[s]!, end = downStart[s + 1]!; j < end; j++) {
        const e = downList[j]!;
        const r = adjSw[e]!;
        if (dist[r] === want && ancStamp[r] === ep) {
          candPort[k] = adjPort[e]!;
          if (weighted) cand[k] = e;
          k++;
        }
      }
      candHi[s] = k;
      dcStamp[dc] = ep;
      dcWant[dc] = want;
      dcLo[dc] = candLo[s]!;
      dcHi[dc] = k;
    }
    // Everything below T and its ancestors (a switch with a parent in the part), by level from
    // the top: up to the nearest parents (distance and candidates in one scan). Once per class:
    // its members have the same parents and up links.
    const { order, parStart, parList, memStart, memList, ver, pat, patN, width } = cls;
    for (let ci = 0; ci < order.length; ci++) {
      const c = order[ci]!;
      let any = false;
      for (let j = parStart[c]!, end = parStart[c + 1]!; j < end && !any; j++) any = inR[parList[j]!] === ep;
      if (!any) continue;
      const s0 = memList[memStart[c]!]!;
      const lo = k;
      let best = -1;
      for (let j = upStart[s0]!, end = upStart[s0 + 1]!; j < end; j++) {
        const dp = dist[upSw[j]!]!;
        if (dp < 0) continue;
        if (best < 0 || dp < best) {
          best = dp;
          k = lo;
        }
        if (dp === best) {
          candPort[k] = upPort[j]!;
          if (weighted) cand[k] = upList[j]!;
          k++;
        }
      }
      // best ≥ 0: a parent is in the part and has a distance (−1 only with one-sided links)
      const d = best + 1;
      // The list's version changes when its ports do (RunWriter extends runs of equal lists).
      const n = k - lo;
      let same = n === patN[c];
      for (let x = 0; x < n && same; x++) same = pat[c * width + x] === candPort[lo + x];
      if (!same) {
        ver[c] = ++cls.versions;
        patN[c] = n;
        pat.set(candPort.subarray(lo, k), c * width);
      }
      for (let j = memStart[c]!, end = memStart[c + 1]!; j < end; j++) {
        const s = memList[j]!;
        if (inR[s] === ep) continue; // T or an ancestor
        inR[s] = ep;
        rList[nR++] = s;
        candLo[s] = lo;
        candHi[s] = k;
        dist[s] = d;
        swVer[s] = ver[c]!;
      }
    }
    buildWeights();
  };
  /** The first switch with CAs that a BFS down from T and its ancestors (in their order) finds
   *  (after prepare(T)): the CA switch nearest the front of T's part, by discovery; −1 if none. */
  const bfsStamp = new Int32Array(nSw).fill(-1);
  const firstCaSwitchBelow = (T: number): number => {
    const ep = tEpoch;
    let h = 0;
    let t = 0;
    queue[t++] = T;
    bfsStamp[T] = ep;
    for (let i = 0; i < nAnc; i++) {
      queue[t++] = rList[i]!;
      bfsStamp[rList[i]!] = ep;
    }
    while (h < t) {
      const x = queue[h++]!;
      for (let j = downStart[x]!, end = downStart[x + 1]!; j < end; j++) {
        const c = downSw[j]!;
        if (bfsStamp[c] === ep) continue;
        bfsStamp[c] = ep;
        if (ix.caCount[c]! > 0) return c;
        queue[t++] = c;
      }
    }
    return -1;
  };
  /** Switches without an up/down route to T (after prepare). */
  const outside = (): number[] => {
    const out: number[] = [];
    for (let s = 0; s < nSw; s++) if (inR[s] !== tEpoch) out.push(s);
    return out;
  };

  /** Switch LIDs only: switches with no up/down route (other top switches, and switches below only
   *  them) take a shortest path through routed switches (down, then up). */
  const fallbackPort = new Uint8Array(nSw);
  const fallback = (deferred: number[]): void => {
    // Rounds: a pending switch next to one with a route takes it (one hop longer), so every
    // route still ends at T without a loop.
    let pending = deferred;
    while (pending.length > 0) {
      const left: number[] = [];
      for (const y of pending) {
        let best = -1;
        for (let e = ix.adjStart[y]!; e < ix.adjStart[y + 1]!; e++) {
          const x = adjSw[e]!;
          if (dist[x]! >= 0 && (best < 0 || dist[x]! < dist[adjSw[best]!]!)) best = e;
        }
        if (best < 0) left.push(y);
        else {
          fallbackPort[y] = adjPort[best]!;
          dist[y] = dist[adjSw[best]!]! + 1;
          downUpRoutes++;
        }
      }
      if (left.length === pending.length) break; // not connected: left without a route
      pending = left;
    }
  };

  // ---- per destination LID: rotate through the candidates ----
  // Destination i at switch s takes candidate (i + position of s in its level) mod count. One
  // switch spreads its destinations evenly over its up links; one destination is reached from the
  // switches of a level over every up link in turn, so its routes arrive over every link into
  // its leaf and the levels above carry the same share (the leaf-to-leaf shift of OpenSM's ftree
  // sends all of them down one link). LIDs of one port (LMC) are consecutive destinations, so
  // they leave every switch over different links.
  let index = 0;
  // In a degraded tree the candidates of a switch may lead to parents with fewer onward links
  // (a spine that lost a core): there the rotation is weighted by each candidate's own number of
  // candidates, interleaved (smooth weighted round robin), so traffic follows capacity.
  const weighted = shape.irregular.length > 0;
  const seqLo = new Int32Array(nSw);
  const seqHi = new Int32Array(nSw);
  let seq = new Uint8Array(0);
  const buildWeights = (): void => {
    if (!weighted) return;
    const parts: Uint8Array[] = [];
    let total = 0;
    const w: number[] = [];
    const cur: number[] = [];
    for (let i = 0; i < nR; i++) {
      const s = rList[i]!;
      seqLo[s] = seqHi[s] = total;
      const a = candLo[s]!;
      const n = candHi[s]! - a;
      if (n < 2) continue;
      w.length = 0;
      let g = 0;
      let same = true;
      for (let k = 0; k < n; k++) {
        const r = adjSw[cand[a + k]!]!;
        const c = Math.max(1, inR[r] === tEpoch ? candHi[r]! - candLo[r]! : 1);
        w.push(c);
        g = gcd(g, c);
        if (c !== w[0]) same = false;
      }
      if (same) continue;
      let W = 0;
      for (let k = 0; k < n; k++) W += (w[k]! /= g);
      const out = new Uint8Array(W);
      cur.length = 0;
      for (let k = 0; k < n; k++) cur.push(0);
      for (let j = 0; j < W; j++) {
        let best = 0;
        for (let k = 0; k < n; k++) {
          cur[k]! += w[k]!;
          if (cur[k]! > cur[best]!) best = k;
        }
        cur[best]! -= W;
        out[j] = best;
      }
      parts.push(out);
      total += W;
      seqHi[s] = total;
    }
    seq = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      seq.set(p, off);
      off += p.length;
    }
  };
  /** The port switch s takes for destination index i. */
  const pick = (s: number, i: number): number => {
    const a = candLo[s]!;
    const W = weighted ? seqHi[s]! - seqLo[s]! : 0;
    if (W > 0) return candPort[a + seq[seqLo[s]! + ((i + sigma[s]!) % W)]!]!;
    return candPort[a + ((i + sigma[s]!) % (candHi[s]! - a))]!;
  };
  /** Route the LIDs of T (lids[j] delivered on ports[j]); CA LIDs take consecutive destination
   *  indices, a switch LID (no data traffic) the next one without advancing. Switches outside T's
   *  up/down part take the fallback port. Before this, T's LIDs are NO_ROUTE in every table but
   *  T's own (each LID is routed once), which ColumnBuffer's columns start from. */
  const runs = new RunWriter(lfts, nSw, ix.maxPorts + 1);
  const cols = new ColumnBuffer(lfts, nSw);
  const routeLids = (T: number, lids: number[], ports: number[], caCount: number, fallbackOf: number[] | undefined): void => {
    const i0 = index;
    index += caCount;
    const n = lids.length;
    if (n === 0) return;
    const l0 = lids[0]!;
    // The first m LIDs are l0 .. l0+m-1 (the CA LIDs usually are consecutive; the leaf's own LID
    // at the end, a router port's or a gap may not be): checked entry by entry, not by the ends.
    let m = 1;
    while (m < n && lids[m] === l0 + m) m++;
    if (weighted) {
      for (let j = 0; j < n; j++) lfts[T]![lids[j]!] = ports[j]!;
      for (let i = 0; i < nR; i++) {
        const s = rList[i]!;
        const a = candLo[s]!;
        const nc = candHi[s]! - a;
        if (nc <= 0) continue;
        const t = lfts[s]!;
        for (let j = 0; j < n; j++) t[lids[j]!] = pick(s, i0 + j);
      }
      if (fallbackOf) for (const s of fallbackOf) for (let j = 0; j < n; j++) lfts[s]![lids[j]!] = fallbackPort[s]!;
      return;
    }
    // LIDs l0 .. l0+m-1: pick(s, i0 + j) as runs of the rotation; the others by column.
    const tT = lfts[T]!;
    for (let j = 0; j < m; j++) tT[l0 + j] = ports[j]!;
    for (let i = 0; i < nR; i++) {
      const s = rList[i]!;
      const a = candLo[s]!;
      const nc = candHi[s]! - a;
      if (nc > 0) runs.add(s, l0, m, candPort, a, nc, (i0 + sigma[s]!) % nc, swVer[s]!);
    }
    if (fallbackOf) for (const s of fallbackOf) lfts[s]!.fill(fallbackPort[s]!, l0, l0 + m);
    for (let j = m; j < n; j++) {
      const c = cols.column(lids[j]!);
      const { buf, width: W } = cols;
      buf[T * W + c] = ports[j]!;
      for (let i = 0; i < nR; i++) {
        const s = rList[i]!;
        const a = candLo[s]!;
        const nc = candHi[s]! - a;
        if (nc > 0) buf[s * W + c] = candPort[a + ((i0 + sigma[s]! + j) % nc)]!;
      }
      if (fallbackOf) for (const s of fallbackOf) buf[s * W + c] = fallbackPort[s]!;
    }
  };

  // CA destinations: leaves in switch order, ports in the leaf's port order. With compute nodes
  // named (cn/io GUID files), the CNs first, then the other CAs in a second round with their own
  // rotation: each group is balanced on its own, the I/O traffic does not shift the CNs' routes.
  const cnSet = opts.cnGuids?.length ? new Set(opts.cnGuids) : undefined;
  const ioSet = opts.ioGuids?.length ? new Set(opts.ioGuids) : undefined;
  const isCn = (ei: number): boolean => {
    const g = ends[ei]!.guid;
    return cnSet ? cnSet.has(g) : !ioSet?.has(g);
  };
  const groups: Array<(ei: number) => boolean> = cnSet || ioSet ? [isCn, (ei) => !isCn(ei)] : [() => true];
  const ownDone = new Set<number>();
  const routeGroup = (inGroup: (ei: number) => boolean): void => {
    index = 0;
    for (const leaf of byLevel[0]!) {
      const eps: number[] = [];
      for (let i = ix.endsStart[leaf]!; i < ix.endsStart[leaf + 1]!; i++) eps.push(ix.endsOfSw[i]!);
      eps.sort((a, b) => ends[a]!.swPort - ends[b]!.swPort);
      const cas = eps.filter((ei) => !ends[ei]!.isSwitch && inGroup(ei));
      if (cas.length === 0) continue;
      prepare(leaf);
      // A switch without an up/down route to the leaf is never on a CA's route to it (no switch
      // picks it as a next hop); one with CAs of its own means the tree is cut.
      const deferred = nR + 1 < nSw ? outside() : [];
      const cut = deferred.find((s) => ix.caCount[s]! > 0);
      if (cut !== undefined) {
        throw NA(`switch ${swName(ix, cut)} has no up/down route to leaf ${swName(ix, leaf)}: its ancestors do not reach that leaf going down, so this is not a fat tree`);
      }
      if (deferred.length > 0) fallback(deferred);
      const lids: number[] = [];
      const ports: number[] = [];
      for (const ei of cas) {
        const ep = ends[ei]!;
        for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
          lids.push(l);
          ports.push(ep.swPort);
        }
      }
      const caLids = lids.length;
      // the leaf's own LID goes with the first group that has CAs there
      const own = ownDone.has(leaf) ? undefined : eps.find((ei) => ends[ei]!.isSwitch);
      ownDone.add(leaf);
      if (own !== undefined) {
        lids.push(ends[own]!.lid);
        ports.push(0);
      }
      routeLids(leaf, lids, ports, caLids, deferred.length > 0 ? deferred : undefined);
    }
  };
  for (const g of groups) routeGroup(g);
  runs.flushAll();
  cols.flush();
  // Switch LIDs of the other switches (management traffic): switches without an up/down route
  // follow their route to a CA below T (whose route joins T's part and stays in it): the first
  // CA LID of the first switch with CAs in T's part (CA switches are leaves, so none is T's
  // ancestor: the first one the BFS down finds). The CA entries are final now; the last column
  // read is kept (consecutive switch LIDs mostly copy from the same CA LID).
  const firstCaLid = new Int32Array(nSw).fill(-1);
  for (const ep of ends) if (!ep.isSwitch && ep.sw >= 0 && firstCaLid[ep.sw]! < 0) firstCaLid[ep.sw] = ep.lid;
  const copied = new Uint8Array(nSw);
  let copiedLid = -1;
  for (const ep of ends) {
    if (!ep.isSwitch || ep.sw < 0 || (level[ep.sw] === 0 && ix.caCount[ep.sw]! > 0)) continue;
    prepare(ep.sw);
    const ca = firstCaSwitchBelow(ep.sw);
    const copyFrom = ca >= 0 ? firstCaLid[ca]! : -1;
    let fb: number[] | undefined;
    if (copyFrom < 0 && nR + 1 < nSw) {
      fb = outside();
      fallback(fb);
    }
    if (copyFrom >= 0) downUpRoutes += nSw - nR - 1;
    // As routeLids(ep.sw, [ep.lid], [0], 0, fb), but switches outside the part copy copyFrom's entry.
    const c = cols.column(ep.lid);
    const { buf, width: W } = cols;
    buf[ep.sw * W + c] = 0;
    for (let i = 0; i < nR; i++) {
      const x = rList[i]!;
      if (candHi[x]! > candLo[x]!) buf[x * W + c] = pick(x, index);
    }
    if (copyFrom >= 0 && nR + 1 < nSw) {
      if (copiedLid !== copyFrom) {
        for (let x = 0; x < nSw; x++) copied[x] = lfts[x]![copyFrom]!;
        copiedLid = copyFrom;
      }
      for (let x = 0; x < nSw; x++) if (inR[x] !== tEpoch) buf[x * W + c] = copied[x]!;
    } else if (fb) for (const x of fb) buf[x * W + c] = fallbackPort[x]!;
  }
  cols.flush();

  const notes = [...ix.warnings];
  if (groups.length > 1) notes.push(`compute nodes balanced first: ${ends.filter((e, i) => !e.isSwitch && isCn(i)).length} CN ports, ${ends.filter((e, i) => !e.isSwitch && !isCn(i)).length} other CA ports after them`);
  notes.push(`fat tree: ${shape.levels} levels, ${byLevel.map((b, l) => `level ${l}: ${b.length}`).join(', ')} switches`);
  if (shape.irregular.length > 0) notes.push(`the tree is irregular (degraded): ${shape.irregular.join('; ')}`);
  if (downUpRoutes > 0) notes.push(`${downUpRoutes} routes from switches without CAs go down then up (no up/down path exists, e.g. between top-level switches or around a missing link; no CA route uses them)`);
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

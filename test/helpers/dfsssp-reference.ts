/**
 * The reference dfsssp for test/routing-dfsssp-reference.test.ts: the engine as it was before its
 * speed-up (commit 78e9e97's src/routing/dfsssp.ts, unchanged but for the imports and the name):
 * one DP over each destination's shortest-path DAG per LID, the layer-0 channel dependencies
 * counted by walking every (source switch, LID) path through the tables. Slow and plain, so the
 * optimised engine can be compared with it table for table.
 */
import type { Fabric } from '../../src/model/fabric.js';
import { bfsSwitches, emptyLfts, indexFabric, lftMap, rng, swName } from '../../src/routing/graph.js';
import { checkLmc } from '../../src/routing/minhop.js';
import { identitySl2Vl, RoutingNotApplicable, type RoutingOptions, type RoutingResult } from '../../src/routing/types.js';

export function routeDfssspReference(fabric: Fabric, opts: RoutingOptions): RoutingResult {
  checkLmc('dfsssp', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new RoutingNotApplicable('dfsssp', `maxVls must be 1..15, got ${maxVls}`);
  const ix = indexFabric(fabric);
  const { nSw, adjStart, adjSw, adjPort, ends, maxLid, caCount } = ix;
  const nE = adjStart[nSw]!;
  const W = ix.maxPorts + 1;
  const lfts = emptyLfts(ix);
  const rand = opts.seed !== undefined ? rng(opts.seed) : undefined;
  const notes = [...ix.warnings];

  // ---- 1. balanced shortest paths ----
  const weight = new Float64Array(nE).fill(1);
  const dist = new Int32Array(nSw);
  const order = new Int32Array(nSw);
  const cost = new Float64Array(nSw);
  const choice = new Int32Array(nSw);
  const acc = new Float64Array(nSw);
  const candLo = new Int32Array(nSw + 1);
  const candE = new Int32Array(nE);
  const candR = new Int32Array(nE);
  let portBuf = new Uint8Array(0);
  for (let T = 0; T < nSw; T++) {
    if (ix.endsStart[T + 1]! === ix.endsStart[T]!) continue;
    bfsSwitches(ix, T, dist, order); // order = BFS queue: increasing distance
    let reach = 0;
    for (let s = 0; s < nSw; s++) if (dist[s]! >= 0) reach++;
    // Every reached switch's links one hop nearer to T (the same for all of T's LIDs).
    let nc = 0;
    for (let k = 1; k < reach; k++) {
      const s = order[k]!;
      const want = dist[s]! - 1;
      candLo[k] = nc;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const r = adjSw[e]!;
        if (dist[r] !== want) continue;
        candE[nc] = e;
        candR[nc++] = r;
      }
    }
    candLo[reach] = nc;
    let nLid = 0;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const ep = ends[ix.endsOfSw[i]!]!;
      nLid += 1 << ep.lmc;
    }
    if (portBuf.length < nLid * nSw) portBuf = new Uint8Array(nLid * nSw);
    let j = -1;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const ei = ix.endsOfSw[i]!;
      const ep = ends[ei]!;
      for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) {
        j++;
        lfts[T]![d] = ep.swPort;
        cost[T] = 0;
        choice[T] = -1;
        const pb = j * nSw;
        for (let k = 1; k < reach; k++) {
          const s = order[k]!;
          let best = -1;
          let bestC = Infinity;
          let ties = 0;
          for (let q = candLo[k]!, end = candLo[k + 1]!; q < end; q++) {
            const e = candE[q]!;
            const c = weight[e]! + cost[candR[q]!]!;
            if (c < bestC) {
              bestC = c;
              best = e;
              ties = 1;
            } else if (c === bestC && rand) {
              ties++;
              if (rand() * ties < 1) best = e;
            }
          }
          cost[s] = bestC;
          choice[s] = best;
          portBuf[pb + s] = adjPort[best]!;
        }
        if (ep.isSwitch) continue;
        // Usage update: CA sources behind each switch (farthest first).
        for (let k = 0; k < reach; k++) acc[order[k]!] = caCount[order[k]!]! - (order[k] === T ? 1 : 0);
        for (let k = reach - 1; k >= 1; k--) {
          const s = order[k]!;
          const e = choice[s]!;
          weight[e]! += acc[s]!;
          acc[adjSw[e]!]! += acc[s]!;
        }
      }
    }
    // The LFT entries of T's LIDs, switch by switch (T's LIDs are near each other in every table).
    for (let k = 1; k < reach; k++) {
      const s = order[k]!;
      const t = lfts[s]!;
      let jj = 0;
      for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
        const ep = ends[ix.endsOfSw[i]!]!;
        for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) t[d] = portBuf[jj++ * nSw + s]!;
      }
    }
  }

  // ---- 2. layers ----
  const srcIdx = new Int32Array(nSw).fill(-1);
  const srcSw: number[] = [];
  for (let s = 0; s < nSw; s++) if (caCount[s]! > 0) srcIdx[s] = srcSw.push(s) - 1;
  const nSrc = srcSw.length;
  const L = maxLid + 1;
  const layer = new Uint8Array(nSrc * L);
  const destSw = new Int32Array(L).fill(-1);
  for (const ep of ends) if (ep.sw >= 0) for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) destSw[d] = ep.sw;
  const depStart = new Int32Array(nE + 1);
  for (let e = 0; e < nE; e++) depStart[e + 1] = depStart[e]! + (adjStart[adjSw[e]! + 1]! - adjStart[adjSw[e]!]!);
  const depCnt: Int32Array[] = [new Int32Array(depStart[nE]!)];
  const entryOf = (s: number, d: number): number => ix.portEntry[s * W + lfts[s]![d]!]!;

  /** Walk the path of (source switch s → d), adding `delta` to its dependencies in layer `l`. */
  const walk = (s: number, d: number, l: number, delta: number): void => {
    const T = destSw[d]!;
    if (s === T) return;
    const cnt = depCnt[l]!;
    let e1 = entryOf(s, d);
    let x = adjSw[e1]!;
    while (x !== T) {
      const e2 = entryOf(x, d);
      cnt[depStart[e1]! + (e2 - adjStart[x]!)]! += delta;
      e1 = e2;
      x = adjSw[e2]!;
    }
  };
  for (let d = 1; d < L; d++) {
    if (destSw[d]! < 0) continue;
    for (let i = 0; i < nSrc; i++) walk(srcSw[i]!, d, 0, 1);
  }

  // Paths of layer l that use dependency (e1 → e2): move them to layer l + 1.
  const passes = new Int8Array(nSw);
  let moved = 0;
  const movePaths = (l: number, e1: number, e2: number): void => {
    if (l + 1 >= maxVls) {
      throw new RoutingNotApplicable('dfsssp', `the routes need more than ${maxVls} virtual layers (VLs) to be free of credit loops (a cycle remains in layer ${l} through ${swName(ix, adjSw[e1]!)}); allow more VLs (maxVls, up to the data VLs the ports support) or use updn/ftree`);
    }
    if (!depCnt[l + 1]) depCnt[l + 1] = new Int32Array(depStart[nE]!);
    const x = adjSw[e1]!;
    let y = 0;
    while (adjStart[y + 1]! <= e1) y++;
    const p1 = adjPort[e1]!;
    const p2 = adjPort[e2]!;
    const lx = lfts[x]!;
    const ly = lfts[y]!;
    for (let d = 1; d < L; d++) {
      if (ly[d] !== p1 || lx[d] !== p2 || destSw[d]! < 0) continue;
      const T = destSw[d]!;
      passes.fill(0); // 0 unknown, 1 passes through y→x, -1 does not
      for (let i = 0; i < nSrc; i++) {
        const s = srcSw[i]!;
        if (layer[i * L + d] !== l) continue;
        // Does the path from s go through y (then necessarily y→x)?
        let c = s;
        const trail: number[] = [];
        let res = -1;
        while (true) {
          if (passes[c] !== 0) {
            res = passes[c]!;
            break;
          }
          if (c === y) {
            res = 1;
            break;
          }
          if (c === T) {
            res = -1;
            break;
          }
          trail.push(c);
          c = adjSw[entryOf(c, d)]!;
        }
        for (const t of trail) passes[t] = res;
        if (c === y) passes[y] = 1;
        if (res !== 1) continue;
        walk(s, d, l, -1);
        walk(s, d, l + 1, 1);
        layer[i * L + d] = l + 1;
        moved++;
      }
    }
  };

  let cyclesBroken = 0;
  const color = new Uint8Array(nE); // 0 white, 1 grey (on stack), 2 black
  const stackV = new Int32Array(nE + 1);
  const stackK = new Int32Array(nE + 1);
  for (let l = 0; l < depCnt.length; l++) {
    const cnt = depCnt[l]!;
    color.fill(0);
    for (let root = 0; root < nE; root++) {
      if (color[root] !== 0) continue;
      let sp = 0;
      stackV[0] = root;
      stackK[0] = 0;
      color[root] = 1;
      sp = 1;
      while (sp > 0) {
        const v = stackV[sp - 1]!;
        const h = adjSw[v]!;
        const deg = adjStart[h + 1]! - adjStart[h]!;
        let k = stackK[sp - 1]!;
        let descended = false;
        let cycleAt = -1;
        while (k < deg) {
          const kk = k++;
          if (cnt[depStart[v]! + kk]! <= 0) continue;
          const w = adjStart[h]! + kk;
          if (color[w] === 0) {
            stackK[sp - 1] = k;
            stackV[sp] = w;
            stackK[sp] = 0;
            color[w] = 1;
            sp++;
            descended = true;
            break;
          }
          if (color[w] === 1) {
            cycleAt = w;
            break;
          }
        }
        if (descended) continue;
        if (cycleAt >= 0) {
          // Cycle: stack from cycleAt to top, closing back to cycleAt. Break its weakest dependency.
          let j = sp - 1;
          while (stackV[j] !== cycleAt) j--;
          let bestA = -1;
          let bestB = -1;
          let bestC = Infinity;
          for (let q = j; q < sp; q++) {
            const a = stackV[q]!;
            const b = q + 1 < sp ? stackV[q + 1]! : cycleAt;
            const c = cnt[depStart[a]! + (b - adjStart[adjSw[a]!]!)]!;
            if (c < bestC) {
              bestC = c;
              bestA = a;
              bestB = b;
            }
          }
          if (!(bestC > 0)) throw new Error('dfsssp: internal error, a CDG cycle with an unused dependency');
          movePaths(l, bestA, bestB);
          cyclesBroken++;
          // Dependencies were only removed from this layer, so finished (black) channels stay valid;
          // restart the walk from this root with the path (grey) channels cleared.
          for (let q = 0; q < sp; q++) color[stackV[q]!] = 0;
          color[root] = 1;
          stackV[0] = root;
          stackK[0] = 0;
          sp = 1;
          continue;
        }
        stackK[sp - 1] = k;
        color[v] = 2;
        sp--;
      }
    }
  }

  let vlsUsed = 1;
  for (let i = 0; i < layer.length; i++) if (layer[i]! + 1 > vlsUsed) vlsUsed = layer[i]! + 1;
  notes.push(`${vlsUsed} layer(s) used of ${maxVls}; ${cyclesBroken} credit loop(s) broken by moving ${moved} path(s) to higher layers`);

  const lidSw = new Int32Array(L).fill(-1);
  for (const ep of ends) if (ep.sw >= 0) for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) lidSw[d] = ep.sw;
  const sl = (slid: number, dlid: number): number => {
    if (slid < 0 || slid >= L || dlid < 0 || dlid >= L) return 0;
    const s = lidSw[slid]!;
    const i = s >= 0 ? srcIdx[s]! : -1;
    return i >= 0 ? layer[i * L + dlid]! : 0;
  };
  return {
    engine: 'dfsssp',
    lfts: lftMap(ix, lfts),
    maxLid,
    sl,
    slBySourceSwitch: true,
    vlsUsed,
    sl2vl: identitySl2Vl(vlsUsed),
    deadlockFree: true,
    notes,
  };
}

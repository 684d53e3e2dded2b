/**
 * nue: deadlock-free routing for any connected topology within the VLs given (1..15), in the class
 * of Nue (Domke, Hoefler, Matsuoka, HPDC 2016; our implementation).
 *
 * Routes are chosen on the channel dependency graph (CDG) so that every VL's CDG is acyclic by
 * construction, not layered afterwards. Each VL keeps an acyclic CDG with a dynamic topological
 * order (acyclic.ts). A destination (a group of LIDs of one switch) is routed on one VL by a
 * hop-by-hop search outward from its switch: each switch, in order of hop distance, takes the
 * least loaded link (accumulated routes per link along the path) toward an already routed
 * neighbour whose dependency can be added without closing a cycle. A destination that cannot
 * reach every switch this way on a VL is taken back and tried on the next.
 * Escape paths (as in Nue): VL 0 holds the dependencies of a BFS spanning tree's routes from the
 * start; a destination that fits no VL is routed along the tree on VL 0, so a connected fabric is
 * never refused, whatever the VL count. Switch LIDs of switches without CAs (management traffic
 * only) also take the tree.
 * The SL of a route is the VL of its destination LID (SL i → VL i on every port).
 * Destinations with many LIDs are split into groups routed one after the other (each LID its own
 * group when the fabric is small enough; fewer groups keep large fabrics near-linear). Within a
 * group every LID gets its own tree: each switch rotates, LID by LID, through its links one hop
 * nearer in the group's search (checked against the layer's CDG like the search's own choice),
 * so the LIDs of one port (LMC > 0) and of one switch spread over parallel links; on a fat tree
 * this balances like ftree (11,664 end ports: busiest link 11,646 routes, as ftree).
 */
import type { Fabric } from '../model/fabric.js';
import { AcyclicCdg, depStarts } from './acyclic.js';
import { ColumnBuffer } from './lft-writers.js';
import { bfsSwitches, emptyLfts, indexFabric, lftMap, resolveRoots, swName, type FabricIndex } from './graph.js';
import { checkLmc } from './minhop.js';
import { centralSwitch, updnOrder } from './nue-order.js';
import { identitySl2Vl, RoutingNotApplicable, type RoutingEngine, type RoutingOptions, type RoutingResult } from './types.js';

/** Channel visits the search may spend in total before destinations are grouped (keeps big fabrics fast). */
const SEARCH_BUDGET = 3e7;
/** Channels one cycle check may visit before it refuses the dependency (bounds the worst case). */
const SEARCH_LIMIT = 200;

interface Unit {
  T: number;
  lids: number[];
  /** CA LIDs among them (routes counted per link). */
  caLids: number;
}

export function routeNue(fabric: Fabric, opts: RoutingOptions): RoutingResult {
  checkLmc('nue', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new RoutingNotApplicable('nue', `maxVls must be 1..15, got ${maxVls}`);
  const ix = indexFabric(fabric);
  const { nSw, adjStart, adjSw, adjPort, ends, caCount, swGuid } = ix;
  if (nSw === 0) throw new RoutingNotApplicable('nue', 'the fabric has no switches');
  const nE = adjStart[nSw]!;
  const depStart = depStarts(ix);
  const notes = [...ix.warnings];
  const lfts = emptyLfts(ix);
  const vlOf = new Uint8Array(ix.maxLid + 1);

  // Connected components (a destination must reach every switch of its own component).
  const comp = new Int32Array(nSw).fill(-1);
  const compSize: number[] = [];
  {
    const q = new Int32Array(nSw);
    for (let s0 = 0; s0 < nSw; s0++) {
      if (comp[s0]! >= 0) continue;
      const c = compSize.length;
      let h = 0;
      let t = 0;
      q[t++] = s0;
      comp[s0] = c;
      while (h < t) {
        const s = q[h++]!;
        for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
          const r = adjSw[e]!;
          if (comp[r]! < 0) {
            comp[r] = c;
            q[t++] = r;
          }
        }
      }
      compSize.push(t);
    }
    if (compSize.length > 1) notes.push(`the switches form ${compSize.length} disconnected parts: routes stay within each part`);
  }

  // ---- escape paths: a BFS spanning tree from one central root per component ----
  const roots: number[] = opts.roots && opts.roots.length > 0 ? resolveRoots(ix, 'nue', opts.roots).slice(0, 1) : [centralSwitch(ix)];
  for (let c = 0; c < compSize.length; c++) {
    if (roots.some((r) => comp[r] === c)) continue;
    for (let s = 0; s < nSw; s++) if (comp[s] === c) {
      roots.push(s);
      break;
    }
  }
  const rootDist = new Int32Array(nSw).fill(-1);
  /** Tree channel from each switch to its parent (−1 at a root). */
  const treeUp = new Int32Array(nSw).fill(-1);
  const isTree = new Uint8Array(nE);
  {
    const q = new Int32Array(nSw);
    let h = 0;
    let t = 0;
    for (const r of roots) {
      rootDist[r] = 0;
      q[t++] = r;
    }
    while (h < t) {
      const s = q[h++]!;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const r = adjSw[e]!;
        const back = ix.adjReverse[e]!;
        if (rootDist[r]! >= 0 || back < 0) continue;
        rootDist[r] = rootDist[s]! + 1;
        treeUp[r] = back;
        isTree[e] = 1;
        isTree[back] = 1;
        q[t++] = r;
      }
    }
  }

  const load = new Float64Array(nE);
  const outCh = new Int32Array(nSw).fill(-1);
  const settled: number[] = [];
  const acc = new Float64Array(nSw);

  /** Write the LFT entries and link loads of a routed unit (outCh of every settled switch). */
  // Every switch's entry for a routed LID is set (the settled switches, T) or stays NO_ROUTE
  // (another component): the entries go through columns, written table by table.
  const cols = new ColumnBuffer(lfts, nSw, 512);
  const W = cols.width;
  const tPort = (d: number): number => ends[ix.lidOwner[d]!]!.swPort;
  const commit = (u: Unit, vl: number): void => {
    const { T, lids } = u;
    for (const d of lids) {
      const c = cols.column(d);
      const buf = cols.buf;
      buf[T * W + c] = tPort(d);
      vlOf[d] = vl;
      for (let i = 1; i < settled.length; i++) {
        const s = settled[i]!;
        buf[s * W + c] = adjPort[outCh[s]!]!;
      }
    }
    if (u.caLids === 0) return;
    for (const s of settled) acc[s] = caCount[s]!;
    for (let i = settled.length - 1; i >= 1; i--) {
      const s = settled[i]!;
      const e = outCh[s]!;
      load[e]! += acc[s]! * u.caLids;
      acc[adjSw[e]!]! += acc[s]!;
    }
  };

  /** Route and commit the LIDs of a unit routed on layer g (routeOnLayer left its tree in outCh and
   *  the hop levels in lev) one by one, each over its own tree: every switch rotates, LID by LID,
   *  through its links to switches one level nearer (all of them shortest in the layer's search),
   *  taking the first whose dependency the layer accepts. Traffic to one switch's LIDs then
   *  spreads over parallel links (on a fat tree: every uplink of a leaf, every link into the
   *  destination's leaf), not one tree per unit. A LID none of whose rotations fits keeps the
   *  unit's tree (its dependencies are in the layer). */
  // By position i in `settled` (T at 0), so the loops per LID read their arrays in order: the
  // candidates' range, rotation and own choice; per LID the chosen channel and the position of
  // the switch it leads to; the accumulated CA count.
  const posOf = new Int32Array(nSw);
  const lo = new Int32Array(nSw);
  const ncOf = new Int32Array(nSw);
  const rotOf = new Int32Array(nSw);
  const rotJ = new Int32Array(nSw);
  const rowOf = new Int32Array(nSw);
  const caOf = new Int32Array(nSw);
  const outE = new Int32Array(nSw);
  const outC = new Int32Array(nSw);
  const upPos = new Int32Array(nSw);
  const accI = new Int32Array(nSw);
  /** Per candidate: its channel, the position of the switch it leads to, its port, and the base
   *  of its dependency bits (bit of (e → b) = base + b). */
  const candList = new Int32Array(nE);
  const candPos = new Int32Array(nE);
  const candPortOf = new Uint8Array(nE);
  // (32-bit when the bit indices fit, as they do but in fabrics far beyond the LID space's)
  const candBit = depStart[nE]! < 2 ** 31 - 2 ** 20 ? new Int32Array(nE) : new Float64Array(nE);
  /** Routes added per candidate during a unit (integers: summed in any order they are exact),
   *  added to `load` per channel at its end. */
  const candLoad = new Float64Array(nE);
  let spread = 0;
  const commitSpread = (u: Unit, vl: number, g: AcyclicCdg): void => {
    const T = u.T;
    const n = settled.length;
    let k = 0;
    posOf[T] = 0;
    caOf[0] = caCount[T]!;
    for (let i = 1; i < n; i++) {
      const s = settled[i]!;
      posOf[s] = i;
      lo[i] = k;
      const want = lev[s]! - 1;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const x = adjSw[e]!;
        if (lev[x] !== want) continue;
        if (e === outCh[s]) rotOf[i] = k - lo[i]!; // the search's own (least loaded) choice
        candList[k] = e;
        candPos[k] = posOf[x]!; // x is settled before s (one level nearer)
        candPortOf[k] = adjPort[e]!;
        candBit[k] = depStart[e]! - adjStart[x]!;
        k++;
      }
      const nc = k - lo[i]!;
      ncOf[i] = nc;
      // LID j's rotation (j + spread + s) mod nc, stepped per LID
      rotJ[i] = (spread + s) % nc;
      rowOf[i] = s * W;
      caOf[i] = caCount[s]!;
    }
    const lids = u.lids;
    const nL = lids.length;
    const bits = g.bits;
    const single = u.caLids <= 1;
    for (let j = 0; j < nL; j++) {
      const d = lids[j]!;
      const col = cols.column(d);
      const buf = cols.buf;
      let i = 1;
      for (; i < n; i++) {
        const a = lo[i]!;
        const nc = ncOf[i]!;
        // A unit of one CA LID takes the search's (least loaded) choice; in a larger one LID j
        // takes candidate j + s (+ LIDs routed so far): the offsets keep the switches of one
        // level, and successive units, from choosing alike (on a fat tree, where the loads tie,
        // the search would send them all the same way).
        const rj = rotJ[i]!;
        rotJ[i] = rj + 1 === nc ? 0 : rj + 1;
        let r = single ? rotOf[i]! : rj;
        let t = 0;
        for (; t < nc; t++, r = r + 1 === nc ? 0 : r + 1) {
          const c = a + r;
          const px = candPos[c]!;
          // T itself; else the dependency is usually there already (tested inline; tryAdd otherwise)
          if (px !== 0) {
            const bit = candBit[c]! + outE[px]!;
            if (!(bits[bit >>> 3]! & (1 << (bit & 7))) && !g.tryAdd(candList[c]!, outE[px]!)) continue;
          }
          outE[i] = candList[c]!;
          outC[i] = c;
          upPos[i] = px;
          buf[rowOf[i]! + col] = candPortOf[c]!;
          break;
        }
        if (t === nc) break;
      }
      if (i < n) {
        // No rotation fits at switch i: the unit's own tree (its dependencies are in the layer).
        for (let q = i + 1; q < n; q++) {
          const r = rotJ[q]! + 1;
          rotJ[q] = r === ncOf[q] ? 0 : r;
        }
        for (let q = 1; q < n; q++) {
          const e = outCh[settled[q]!]!;
          outE[q] = e;
          outC[q] = lo[q]! + rotOf[q]!;
          upPos[q] = posOf[adjSw[e]!]!;
          buf[rowOf[q]! + col] = adjPort[e]!;
        }
      }
      vlOf[d] = vl;
      buf[T * W + col] = tPort(d);
      if (j >= u.caLids) continue;
      accI.set(caOf);
      for (let i = n - 1; i >= 1; i--) {
        const a = accI[i]!;
        candLoad[outC[i]!]! += a;
        accI[upPos[i]!]! += a;
      }
    }
    for (let c = 0; c < k; c++) {
      const x = candLoad[c]!;
      if (x === 0) continue;
      load[candList[c]!]! += x;
      candLoad[c] = 0;
    }
    spread += nL;
  };

  // Escape routes toward T: the spanning tree's unique paths (BFS from T over tree channels).
  const tq = new Int32Array(nSw);
  const tSeen = new Int32Array(nSw).fill(-1);
  let tEpoch = 0;
  // The tree's channels of each switch (in adjacency order).
  const treeStart = new Int32Array(nSw + 1);
  for (let x = 0; x < nSw; x++) {
    let c = 0;
    for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) c += isTree[e]!;
    treeStart[x + 1] = treeStart[x]! + c;
  }
  const treeList = new Int32Array(treeStart[nSw]!);
  for (let x = 0, k = 0; x < nSw; x++) for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) if (isTree[e]) treeList[k++] = e;
  const routeEscape = (u: Unit): void => {
    const T = u.T;
    const ep = ++tEpoch;
    settled.length = 0;
    let h = 0;
    let t = 0;
    tq[t++] = T;
    tSeen[T] = ep;
    while (h < t) {
      const x = tq[h++]!;
      settled.push(x);
      for (let j = treeStart[x]!; j < treeStart[x + 1]!; j++) {
        const e = treeList[j]!;
        const y = adjSw[e]!;
        if (tSeen[y] === ep) continue;
        tSeen[y] = ep;
        outCh[y] = ix.adjReverse[e]!;
        tq[t++] = y;
      }
    }
  };

  // ---- layers (VL 0..maxVls−1) ----
  // Layer 0 holds every dependency of the escape paths from the start (they form no cycle: the
  // tree's routes are up/down from its root), so a destination that fits no layer can always use
  // them. Every layer starts from the up/down order of its own root (roots spread by farthest-point
  // sampling), and destinations try the layers of the nearest roots first: their shortest-path
  // trees then mostly agree with the layer's order, which keeps the cycle checks short.
  const layers: AcyclicCdg[] = [];
  const layerDist: Int32Array[] = [];
  {
    const q = new Int32Array(nSw);
    const height = new Int32Array(nSw).fill(-1);
    let h = 0;
    let t = 0;
    for (let s = 0; s < nSw; s++) if (caCount[s]! > 0) {
      height[s] = 0;
      q[t++] = s;
    }
    while (h < t) {
      const x = q[h++]!;
      for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
        const y = adjSw[e]!;
        if (height[y]! < 0) {
          height[y] = height[x]! + 1;
          q[t++] = y;
        }
      }
    }
    for (let s = 0; s < nSw; s++) if (height[s]! < 0) height[s] = 0;
    const minD = new Int32Array(nSw).fill(0x7fffffff);
    const far = (d: Int32Array): number => {
      for (let s = 0; s < nSw; s++) if (d[s]! >= 0 && d[s]! < minD[s]!) minD[s] = d[s]!;
      let f = 0;
      for (let s = 1; s < nSw; s++) if (minD[s]! > minD[f]!) f = s;
      return f;
    };
    const esc = new AcyclicCdg(ix, depStart, SEARCH_LIMIT, updnOrder(ix, new Int32Array(nSw), rootDist));
    for (let s = 0; s < nSw; s++) {
      for (let a = adjStart[s]!; a < adjStart[s + 1]!; a++) {
        if (!isTree[a]) continue;
        const x = adjSw[a]!;
        for (let b = adjStart[x]!; b < adjStart[x + 1]!; b++) if (isTree[b] && adjSw[b] !== s) esc.addOrdered(a, b);
      }
    }
    layers.push(esc);
    layerDist.push(rootDist);
    let r = far(rootDist);
    for (let v = 1; v < maxVls; v++) {
      const d = new Int32Array(nSw);
      bfsSwitches(ix, r, d, q);
      for (let s = 0; s < nSw; s++) if (d[s]! < 0) d[s] = nSw;
      layerDist.push(d);
      layers.push(new AcyclicCdg(ix, depStart, SEARCH_LIMIT, updnOrder(ix, height, d)));
      r = far(d);
    }
  }
  const lev = new Int32Array(nSw);
  const cost = new Float64Array(nSw);
  const touchStamp = new Int32Array(nSw);
  const bestE = new Int32Array(nSw);
  const bestC = new Float64Array(nSw);
  let stamp = 0;
  const candE: number[] = [];
  const candC: number[] = [];
  let frontier: number[] = [];
  let next: number[] = [];
  const touched: number[] = [];

  /** Among links of equal cost, a preference that rotates with the switch and the LIDs routed so
   *  far (on a fat tree the costs tie everywhere: the lowest port would send every destination
   *  the same way). */
  /** tieRank(s, e) = (e − adjStart[s] + spread + s) mod degree(s), from the switch's offset
   *  (spread + s) mod degree, taken when it is first touched in a round. */
  const tieOff = new Int32Array(nSw);
  const bestR = new Int32Array(nSw);
  /** Route unit u on free layer g, or take back what it added and return false. */
  const adjReverse = ix.adjReverse;
  const routeOnLayer = (u: Unit, g: AcyclicCdg): boolean => {
    const T = u.T;
    g.mark();
    lev.fill(-1);
    lev[T] = 0;
    cost[T] = 0;
    outCh[T] = -1;
    settled.length = 0;
    settled.push(T);
    frontier.length = 0;
    frontier.push(T);
    const want = compSize[comp[T]!]!;
    for (let L = 0; frontier.length > 0 && settled.length < want; L++) {
      stamp++;
      touched.length = 0;
      // One pass over the frontier's links: every unrouted neighbour's cheapest link into it.
      for (const n of frontier) {
        const cn = cost[n]!;
        for (let e = adjStart[n]!; e < adjStart[n + 1]!; e++) {
          const s = adjSw[e]!;
          if (lev[s]! >= 0) continue;
          const r = adjReverse[e]!;
          if (r < 0) continue;
          const c = cn + load[r]!;
          const a = adjStart[s]!;
          const deg = adjStart[s + 1]! - a;
          if (touchStamp[s] !== stamp) {
            touchStamp[s] = stamp;
            touched.push(s);
            const off = (spread + s) % deg;
            tieOff[s] = off;
            const rank = r - a + off;
            bestR[s] = rank >= deg ? rank - deg : rank;
            bestE[s] = r;
            bestC[s] = c;
            continue;
          }
          const bc = bestC[s]!;
          if (c > bc) continue;
          let rank = r - a + tieOff[s]!;
          if (rank >= deg) rank -= deg;
          if (c < bc || rank < bestR[s]!) {
            bestE[s] = r;
            bestC[s] = c;
            bestR[s] = rank;
          }
        }
      }
      next.length = 0;
      for (const s of touched) {
        const b = bestE[s]!;
        const xb = adjSw[b]!;
        if (xb === T || g.tryAdd(b, outCh[xb]!)) {
          lev[s] = L + 1;
          cost[s] = bestC[s]!;
          outCh[s] = b;
          settled.push(s);
          next.push(s);
          continue;
        }
        // The cheapest link would close a cycle: the others in order of cost.
        candE.length = 0;
        candC.length = 0;
        for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
          const x = adjSw[e]!;
          if (lev[x] !== L || e === b) continue;
          const c = cost[x]! + load[e]!;
          // insertion by cost (ties keep port order)
          let k = candE.length;
          candE.push(e);
          candC.push(c);
          while (k > 0 && candC[k - 1]! > c) {
            candE[k] = candE[k - 1]!;
            candC[k] = candC[k - 1]!;
            k--;
          }
          candE[k] = e;
          candC[k] = c;
        }
        for (let k = 0; k < candE.length; k++) {
          const e = candE[k]!;
          const x = adjSw[e]!;
          if (x !== T && !g.tryAdd(e, outCh[x]!)) continue;
          lev[s] = L + 1;
          cost[s] = candC[k]!;
          outCh[s] = e;
          settled.push(s);
          next.push(s);
          break;
        }
      }
      [frontier, next] = [next, frontier];
    }
    if (settled.length < want) {
      g.undo();
      return false;
    }
    return true;
  };

  // ---- destinations ----
  let caSw = 0;
  let maxLidsPerSw = 0;
  const caLidsOf: number[][] = [];
  for (let T = 0; T < nSw; T++) {
    const l: number[] = [];
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const ep = ends[ix.endsOfSw[i]!]!;
      if (ep.isSwitch) continue;
      for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) l.push(d);
    }
    caLidsOf.push(l);
    if (l.length > 0) caSw++;
    maxLidsPerSw = Math.max(maxLidsPerSw, l.length);
  }
  const groups = Math.max(1, Math.min(maxLidsPerSw, Math.floor(SEARCH_BUDGET / Math.max(1, caSw * nE))));
  const swLid = new Int32Array(nSw);
  for (const ep of ends) if (ep.isSwitch && ep.sw >= 0) swLid[ep.sw] = ep.lid;
  const units: Unit[] = [];
  for (let gi = 0; gi < groups; gi++) {
    for (let T = 0; T < nSw; T++) {
      const l = caLidsOf[T]!;
      // LIDs in order, dealt round-robin: consecutive LIDs (one port's LMC range) land in different groups.
      const lids = l.filter((_, j) => j % groups === gi);
      if (lids.length === 0) continue;
      const own = gi === 0 ? swLid[T]! : 0;
      units.push({ T, lids: own > 0 ? [...lids, own] : lids, caLids: lids.length });
    }
  }
  // Layers by the distance of their root to the destination (ties in rotation), layer 0 last: its
  // escape dependencies leave it the least room.
  const layerOrder = (T: number, rot: number): number[] => {
    const n = layers.length - 1;
    const idx = Array.from({ length: n }, (_, i) => i + 1);
    const r = (a: number): number => (((a - 1 - rot) % n) + n) % n;
    idx.sort((a, b) => layerDist[a]![T]! - layerDist[b]![T]! || r(a) - r(b));
    idx.push(0);
    return idx;
  };
  const perVl = new Array<number>(maxVls).fill(0);
  let escaped = 0;
  let rot = 0;
  for (const u of units) {
    opts.tick?.();
    let done = false;
    const pref = layerOrder(u.T, rot++);
    for (let k = 0; k < pref.length && !done; k++) {
      const v = pref[k]!;
      if (routeOnLayer(u, layers[v]!)) {
        commitSpread(u, v, layers[v]!);
        perVl[v]!++;
        done = true;
      }
    }
    if (done) continue;
    routeEscape(u);
    commit(u, 0);
    perVl[0]!++;
    escaped++;
  }
  // Switch LIDs ride with their switch's first CA group; those of switches without CAs
  // (management traffic only) use the escape layer.
  for (const ep of ends) {
    if (!ep.isSwitch || ep.sw < 0 || caLidsOf[ep.sw]!.length > 0) continue;
    const u: Unit = { T: ep.sw, lids: [ep.lid], caLids: 0 };
    routeEscape(u);
    commit(u, 0);
  }
  cols.flush();

  let vlsUsed = 1;
  for (let v = 0; v < maxVls; v++) if (perVl[v]! > 0) vlsUsed = Math.max(vlsUsed, v + 1);
  notes.push(`escape paths on VL 0: spanning tree from ${roots.map((r) => swName(ix, r)).join(', ')}`);
  notes.push(`${units.length} destination group(s) (${groups} per switch at most): ${perVl.map((n, v) => `VL ${v}: ${n}`).filter((_, v) => v < vlsUsed).join(', ')}${escaped > 0 ? `; ${escaped} fitted no layer and use the escape paths` : ''}`);
  const L = ix.maxLid + 1;
  return {
    engine: 'nue',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    // Routes on one VL need no SLs: the engine leaves them (and QoS's) alone then.
    ...(vlsUsed > 1 ? { sl: (_slid: number, dlid: number): number => (dlid >= 0 && dlid < L ? vlOf[dlid]! : 0), slBySourceSwitch: true, slByDestination: true, sl2vl: identitySl2Vl(vlsUsed) } : {}),
    vlsUsed,
    deadlockFree: true,
    roots: roots.map((r) => swGuid[r]!),
    notes,
  };
}

export const nue: RoutingEngine = {
  name: 'nue',
  description: 'deadlock-free on any connected topology within maxVls VLs (1..15): routes chosen on an acyclic CDG per VL, balanced by routes per link (Nue class)',
  route: routeNue,
};

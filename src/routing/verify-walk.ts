/**
 * The verifier's walk of the routes toward one destination LID (routing/verify.ts sets it up and
 * writes the report). For one LID the routes from all switches form an in-tree (or fail), so a
 * LID costs a few linear passes over typed arrays of the switches:
 *
 * - The entries are read from routing/verify-windows.ts: for LID d, each switch's next switch
 *   and link (or why there is none), for 64 LIDs at a time.
 * - routing/verify-tree.ts resolves the in-tree: each switch visited once, the delivering ones
 *   listed each before the switch it forwards to (`order`), the ones that fail (a broken entry
 *   on their way, a loop) with where and why.
 * - Along `order` the sources' counts (and VL masks) are carried downstream; then, switch by
 *   switch in index order, each channel's routes and the channel dependency each switch creates
 *   are recorded; one pass over the switches with CAs counts hops and stretch (by (hops,
 *   shortest) pair: exact, and in no particular order).
 * - With SLs, each source switch (or source port) is asked its SL once per LID (not at all when
 *   the SL→VL table maps every SL to one VL: the SLs then make no difference); when every
 *   source's route starts on one VL (and the SL2VL is the same on every hop), all of the LID's
 *   dependencies are on that VL and it is carried as without SLs.
 * - CA LIDs of one switch T whose decoded entries are the same at every switch (compared in
 *   full) and, with SLs, whose sources off T ask the same SL for each (compared in full) have the
 *   same routes on the same VLs: one walk stands for all of them (walkSwitch), unless its routes
 *   fail. T's own sources are left out of that comparison: their routes cross no switch-to-switch
 *   link, so they make no channel dependency.
 */
import type { PortSl2Vl } from '../model/routes.js';
import { fmtGuid, swName, type EndPort, type FabricIndex } from './graph.js';
import { describe } from './verify-report.js';
import { InTree, K_LOOP, ST_OK, sortByDist } from './verify-tree.js';
import { LftWindows } from './verify-windows.js';
import type { FailureKind, RouteFailure } from './verify.js';

/** By verify-tree.ts's K_* index. */
const KINDS: FailureKind[] = ['no-lft', 'no-route', 'bad-port', 'port-down', 'loop', 'wrong-destination', 'not-attached'];

/** (hops, shortest hops) pairs below this are counted in a flat table, the others in a map. */
const HOPS_TAB = 64;

export interface WalkOptions {
  sl?: (slid: number, dlid: number) => number;
  slBySwitch: boolean;
  sl2vl: readonly number[];
  byPorts?: ReadonlyMap<number, PortSl2Vl>;
  doStretch: boolean;
  doCdg: boolean;
  maxFailures: number;
}

type Groups = Map<number, { switches: number; sources: number }>;

export class LidWalker {
  // ---- results ----
  lids = 0;
  pairs = 0;
  unreachablePairs = 0;
  unreachableFromSwitches = 0;
  get loopEntries(): number {
    return this.tree.loopEntries;
  }
  get loopLids(): number {
    return this.tree.loopLids;
  }
  failureGroups = 0;
  readonly failures: RouteFailure[] = [];
  /** Per VL, the dependency bits (channel e of switch x, to e2 of e's far end n: bit
   *  xBase[x] + (e − adjStart[x]) × xStride[x] + e2 − adjStart[n]), and how many are set. */
  readonly depBits: (Uint8Array | undefined)[] = new Array(16);
  readonly vlSeen = new Int32Array(16);
  /** Per-hop VLs: dependencies per (VL, next VL) pair, and the VLs seen. */
  readonly pairBits: (Uint8Array | undefined)[] = new Array(256);
  hopVls = 0;
  /** CA sources reaching a CA destination, by (hops, shortest hops; 0: not computed). */
  private readonly hopTab = new Float64Array(HOPS_TAB * HOPS_TAB);
  private readonly hopMap = new Map<number, number>();

  // ---- fabric ----
  private readonly ends: EndPort[];
  private readonly nSw: number;
  private readonly caCount: Int32Array;
  /** Switches with CA/router ports (the sources). */
  private readonly srcSw: Int32Array;
  private readonly srcEnd0: Int32Array;
  private readonly portTabs: (PortSl2Vl | undefined)[] = [];
  private readonly totalSources: number;
  /** Per switch x, its first dependency bit and the bits per channel (its neighbours' largest degree). */
  private readonly xBase: Float64Array;
  private readonly xStride: Int32Array;
  /** Per channel (adjacency entry) e: at 2e its routes, added into `routesTotal` before they
   *  could overflow; at 2e + 1 the CA destination LIDs whose delivering routes lead over it
   *  (side by side: one cache line for both). */
  private readonly routes: Uint32Array;
  private readonly routesTotal: Float64Array;
  private routesRoom = 0;
  /** The decoded entries (routing/verify-windows.ts). */
  private readonly wins: LftWindows;
  private readonly win: Int32Array;

  // ---- per-destination scratch ----
  /** The in-tree of the LID being walked (routing/verify-tree.ts). */
  private readonly tree: InTree;
  private readonly lids_: number[] = [];
  private readonly owners_: number[] = [];
  private rep_ = new Int32Array(0);
  private twinTries = 0;
  private twins = 0;
  /** Hash-equal CA LIDs whose columns (or SL vectors) were not the same. */
  private hashMisses = 0;
  private mult_ = new Int32Array(0);
  /** The SL vectors of the LIDs of one switch (walkSwitch), `slLen` entries each. */
  private slv_ = new Uint8Array(0);
  private readonly slLen: number;
  /** The SL vector of a LID walked without walkSwitch's. */
  private readonly slTmp: Uint8Array;
  private readonly acc: Int32Array;
  private readonly accBase: Int32Array;
  private readonly mask: Int32Array;
  private readonly vsl: Int32Array;
  /** The switches by distance to the delivering switch being walked, farthest first (walkSwitch, with `dist`). */
  private readonly byDist: Int32Array;
  private readonly distCount: Int32Array;
  private byDistOf = -1;
  /** With SLs and one SL→VL table, the VL every SL maps to when it is the same for all 16 (the
   *  SLs then do not matter to the channel dependencies: they are not asked), else −1. */
  private readonly oneVl: number;

  constructor(
    private readonly ix: FabricIndex,
    lftByNode: ReadonlyMap<number, Uint8Array>,
    private readonly o: WalkOptions,
  ) {
    const { nSw, ends, adjStart, adjSw } = ix;
    const nE = adjStart[nSw]!;
    this.nSw = nSw;
    this.ends = ends;
    this.caCount = ix.caCount;
    const src: number[] = [];
    for (let s = 0; s < nSw; s++) if (ix.caCount[s]! > 0) src.push(s);
    this.srcSw = Int32Array.from(src);
    // One source port per switch (its SL stands for the others when the SL is by source switch).
    this.srcEnd0 = new Int32Array(nSw).fill(-1);
    for (let s = 0; s < nSw; s++) {
      for (let i = ix.endsStart[s]!; i < ix.endsStart[s + 1]!; i++) {
        const ei = ix.endsOfSw[i]!;
        if (ends[ei]!.isSwitch) continue;
        if (this.srcEnd0[s]! < 0) this.srcEnd0[s] = ei;
      }
    }
    this.totalSources = ends.filter((e) => !e.isSwitch).length;
    this.xBase = new Float64Array(nSw + 1);
    this.xStride = new Int32Array(nSw);
    for (let x = 0; x < nSw; x++) {
      let st = 0;
      for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) st = Math.max(st, adjStart[adjSw[e]! + 1]! - adjStart[adjSw[e]!]!);
      this.xStride[x] = st;
      this.xBase[x + 1] = this.xBase[x]! + (adjStart[x + 1]! - adjStart[x]!) * st;
    }
    this.routes = new Uint32Array(2 * nE);
    this.routesTotal = new Float64Array(nE);
    if (o.byPorts) for (let s = 0; s < nSw; s++) this.portTabs.push(o.byPorts.get(ix.swNode[s]!));
    this.wins = new LftWindows(ix, lftByNode);
    this.win = this.wins.win;
    this.tree = new InTree(nSw, this.wins);
    this.slLen = o.slBySwitch ? this.srcSw.length : this.totalSources;
    this.slTmp = new Uint8Array(o.sl ? this.slLen : 0);
    this.acc = new Int32Array(nSw);
    this.accBase = Int32Array.from(ix.caCount);
    this.mask = new Int32Array(nSw);
    this.vsl = o.byPorts ? new Int32Array(nSw * 16) : new Int32Array(0);
    this.byDist = new Int32Array(nSw);
    this.distCount = new Int32Array(nSw + 2);
    let one = o.sl && !o.byPorts ? (o.sl2vl[0] ?? 0) & 15 : -1;
    for (let v = 1; v < 16 && one >= 0; v++) if (((o.sl2vl[v] ?? 0) & 15) !== one) one = -1;
    this.oneVl = one;
  }

  /** Routes (CA to CA) and CA destination LIDs per adjacency entry. */
  linkLoads(): { routes: Float64Array; lids: Float64Array } {
    this.flushRoutes();
    const { routes, routesTotal } = this;
    return { routes: routesTotal, lids: Float64Array.from(routesTotal, (_, e) => routes[2 * e + 1]!) };
  }

  private flushRoutes(): void {
    const { routes, routesTotal } = this;
    for (let e = 0; e < routesTotal.length; e++) {
      routesTotal[e]! += routes[2 * e]!;
      routes[2 * e] = 0;
    }
    this.routesRoom = 0xffffffff;
  }

  /** The dependency bits' layout as routing/cdg.ts reads it: channel e's first bit (and the total). */
  depStarts(): Float64Array {
    const { adjStart } = this.ix;
    const nE = adjStart[this.nSw]!;
    const out = new Float64Array(nE + 1);
    for (let x = 0; x < this.nSw; x++) for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) out[e] = this.xBase[x]! + (e - adjStart[x]!) * this.xStride[x]!;
    out[nE] = this.xBase[this.nSw]!;
    return out;
  }

  /** Hop and stretch figures over the reachable CA-to-CA pairs. */
  hopFigures(): { reached: number; hopSum: number; hopMax: number; stretchSum: number; stretchMax: number; above: number } {
    const f = { reached: 0, hopSum: 0, hopMax: 0, stretchSum: 0, stretchMax: 0, above: 0 };
    const add = (h: number, sh: number, n: number): void => {
      f.reached += n;
      f.hopSum += n * h;
      if (h > f.hopMax) f.hopMax = h;
      if (sh === 0) return;
      const str = h / sh;
      f.stretchSum += n * str;
      if (str > f.stretchMax) f.stretchMax = str;
      if (h > sh) f.above += n;
    };
    for (let i = 0; i < this.hopTab.length; i++) if (this.hopTab[i]) add(Math.floor(i / HOPS_TAB), i % HOPS_TAB, this.hopTab[i]!);
    const big = (this.nSw + 3) * 2;
    for (const [k, n] of [...this.hopMap].sort((a, b) => a[0] - b[0])) add(Math.floor(k / big), k % big, n);
    return f;
  }

  private hopVl(s: number, inP: number, outP: number, sl_: number): number {
    const t = this.portTabs[s];
    return t && inP < t.stride && outP < t.stride ? t.vl[(inP * t.stride + outP) * 16 + sl_]! & 15 : this.o.sl2vl[sl_]! & 15;
  }

  /** LID d, owned by end port `owner`, delivered by switch T (−1: not attached); `dist` the
   *  switch distances to T (or undefined without stretch figures). With m > 1 the routes stand
   *  for m − 1 more LIDs whose entries are the same at every switch and whose sources' SLs are
   *  the same (see walkSwitch), unless some fail: returns false then, and they are to be walked
   *  one by one. `slAt`: where walkSwitch holds d's SL vector (slVector), −1: none. */
  walk(d: number, T: number, owner: number, dist: Int32Array | undefined, m = 1, slAt = -1): boolean {
    this.lids++;
    const dest = this.ends[owner]!;
    const destIsCa = !dest.isSwitch;
    const destSelf = destIsCa ? 1 : 0;
    const nSw = this.nSw;
    this.pairs += this.totalSources - destSelf;
    if (T < 0) {
      // Not attached to any switch: nothing can reach it.
      this.unreachablePairs += this.totalSources - destSelf;
      this.unreachableFromSwitches += nSw;
      this.failureGroups++;
      if (this.failures.length < this.o.maxFailures) {
        this.failures.push({ kind: 'not-attached', dlid: d, at: fmtGuid(dest.guid), detail: `LID ${d} belongs to port ${fmtGuid(dest.guid)}, which is not attached to a switch`, switches: nSw, sources: this.totalSources - destSelf });
      }
      return false;
    }
    const b = this.wins.column(d);
    if (dist && this.byDistOf !== T) {
      sortByDist(dist, this.byDist, this.distCount);
      this.byDistOf = T;
    }
    const nFail = this.tree.resolve(d, dest, destIsCa, b, dist ? this.byDist : undefined);
    if (nFail > 0) m = 1;
    if (destIsCa) {
      if (this.routesRoom < this.totalSources * m) this.flushRoutes();
      this.routesRoom -= this.totalSources * m;
    }
    const first = this.tree.orderStart;
    const vl = this.sources(d, T, owner, destIsCa, b, slAt);
    this.figures(T, destIsCa, destSelf, dist, m);
    if (this.o.byPorts) this.carryPerHop(destIsCa, b, first, m);
    else if (vl >= 0) this.carry(destIsCa, b, first, m, vl);
    else this.carryMasks(destIsCa, b, first, m);
    if (nFail > 0) this.failed(d, T, destIsCa, dest, nFail);
    return nFail === 0;
  }

  /** The LIDs delivered by switch T, in port order (`dist`: as for walk). CA LIDs whose entries
   *  are the same at every switch (compared in full, after a hash) and, with SLs, whose sources
   *  off T ask the same SL for both (compared in full: slVector) have the same routes, on the
   *  same VLs hop by hop: the first of them is walked for all (unless its routes fail), the
   *  others counted. */
  walkSwitch(T: number, dist: Int32Array | undefined): void {
    const { ix, ends, lids_, owners_ } = this;
    lids_.length = 0;
    owners_.length = 0;
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const oi = ix.endsOfSw[i]!;
      const ep = ends[oi]!;
      for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
        lids_.push(l);
        owners_.push(oi);
      }
    }
    const n = lids_.length;
    // Hashing costs a pass per LID: given up when 1,024 CA LIDs had no twin.
    if (this.twinTries >= 1024 && this.twins === 0) this.wins.hashing = false;
    if (n < 2 || !this.wins.hashing) {
      for (let i = 0; i < n; i++) this.walk(lids_[i]!, T, owners_[i]!, dist);
      return;
    }
    // Group the CA LIDs: rep[i] = the first LID with the same entries (i itself when none), mult = group sizes.
    const rep = (this.rep_ = this.rep_.length >= n ? this.rep_ : new Int32Array(2 * n));
    const mult = (this.mult_ = this.mult_.length >= n ? this.mult_ : new Int32Array(2 * n));
    const K = this.o.sl && this.oneVl < 0 ? this.slLen : 0;
    const slv = (this.slv_ = this.slv_.length >= n * K ? this.slv_ : new Uint8Array(2 * n * K));
    const byHash = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      rep[i] = i;
      mult[i] = 1;
      const d = lids_[i]!;
      const dest = ends[owners_[i]!]!;
      if (dest.isSwitch) continue;
      this.twinTries++;
      const h = K > 0 ? Math.imul(this.wins.hashColumn(d), 31) ^ this.slVector(d, T, slv, i * K) : this.wins.hashColumn(d);
      const cands = byHash.get(h);
      if (!cands) {
        byHash.set(h, [i]);
        continue;
      }
      // Same entries everywhere (T's included: both deliver to a CA), and T's leads to this LID's port.
      const r = this.wins.leadsTo(T, this.wins.port(T, d), dest) ? cands.find((c) => sameRow(slv, c * K, i * K, K) && this.wins.sameColumn(lids_[c]!, d)) : undefined;
      // Columns the sampled hash did not tell apart: hash every switch from the next window on.
      if (r === undefined && ++this.hashMisses > 64 + this.twins) this.wins.hashStride = 1;
      if (r === undefined) cands.push(i);
      else {
        rep[i] = r;
        mult[r]!++;
        this.twins++;
      }
    }
    const alone = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const r = rep[i]!;
      const at = K > 0 && !ends[owners_[i]!]!.isSwitch ? i * K : -1;
      if (r === i) {
        if (!this.walk(lids_[i]!, T, owners_[i]!, dist, mult[i]!, at)) alone[i] = 1;
      } else if (alone[r]) this.walk(lids_[i]!, T, owners_[i]!, dist, 1, at);
      else {
        this.lids++;
        this.pairs += this.totalSources - 1;
      }
    }
  }

  /** The SL each source off switch T asks for its route to d (one per source switch when the SL
   *  depends on the switch only, else one per source port), into out[at ..]; returns their hash.
   *  T's own sources are left out: their routes cross no switch-to-switch channel, so their
   *  SLs make no channel dependency. */
  private slVector(d: number, T: number, out: Uint8Array, at: number): number {
    const { srcSw, srcEnd0, ends } = this;
    const sl = this.o.sl!;
    const { endsStart, endsOfSw } = this.ix;
    let h = 0x811c9dc5;
    let k = at;
    for (let i = 0; i < srcSw.length; i++) {
      const s = srcSw[i]!;
      if (this.o.slBySwitch) {
        const v = s === T ? 0 : sl(ends[srcEnd0[s]!]!.lid, d) & 15;
        out[k++] = v;
        h = Math.imul(h ^ v, 16777619);
        continue;
      }
      for (let j = endsStart[s]!; j < endsStart[s + 1]!; j++) {
        const se = ends[endsOfSw[j]!]!;
        if (se.isSwitch) continue;
        const v = s === T ? 0 : sl(se.lid, d) & 15;
        out[k++] = v;
        h = Math.imul(h ^ v, 16777619);
      }
    }
    return h;
  }

  /** Failure groups of d (distinct break point × kind), in the order the failing switches were found. */
  private failed(d: number, T: number, destIsCa: boolean, dest: EndPort, nFail: number): void {
    const { failList, failAt, failKind, failPort } = this.tree;
    const caCount = this.caCount;
    this.unreachableFromSwitches += nFail;
    const groups: Groups = new Map();
    for (let i = nFail - 1; i >= 0; i--) {
      const x = failList[i]!;
      const own = caCount[x]! - (x === T && destIsCa ? 1 : 0);
      const key = failAt[x]! * 8 + failKind[x]!;
      const g = groups.get(key) ?? { switches: 0, sources: 0 };
      g.switches++;
      g.sources += own;
      groups.set(key, g);
    }
    for (const [key, g] of groups) {
      this.failureGroups++;
      if (this.failures.length >= this.o.maxFailures) break;
      const at = Math.floor(key / 8);
      const kind = KINDS[key % 8]!;
      const port = kind === 'loop' ? undefined : failPort[at]!;
      this.failures.push({ kind, dlid: d, at: swName(this.ix, at), ...(port !== undefined && port >= 0 ? { port } : {}), detail: describe(this.ix, kind, d, at, port, dest.guid), switches: g.switches, sources: g.sources });
    }
  }

  /** Sources that reach d or not; hops and stretch of the reachable CA-to-CA pairs. */
  private figures(T: number, destIsCa: boolean, destSelf: number, dist: Int32Array | undefined, m: number): void {
    const { srcSw, caCount, hopTab } = this;
    const { state, hops } = this.tree;
    let unreachable = 0;
    for (let i = 0; i < srcSw.length; i++) {
      const x = srcSw[i]!;
      const own = caCount[x]! - (x === T && destIsCa ? 1 : 0);
      if (own <= 0) continue;
      if (state[x] !== ST_OK) {
        unreachable += own;
        continue;
      }
      if (!destIsCa) continue;
      const h = hops[x]! + 1;
      const sh = dist && dist[x]! >= 0 ? dist[x]! + destSelf + 1 : 0;
      if (h < HOPS_TAB && sh < HOPS_TAB) hopTab[h * HOPS_TAB + sh]! += own * m;
      else {
        const k = h * (this.nSw + 3) * 2 + sh;
        this.hopMap.set(k, (this.hopMap.get(k) ?? 0) + own * m);
      }
    }
    this.unreachablePairs += unreachable;
  }

  /** The sources at each switch (acc) and, with SLs, the VL masks of their routes to d (mask, or
   *  vsl per hop). Returns the VL of every route to d when it is one VL for all of them (no SLs:
   *  VL 0; `carry` then needs no masks), else −1. T's own sources are left out of the masks:
   *  their routes cross no switch-to-switch channel (T's entry for d delivers), so they make no
   *  channel dependency. */
  private sources(d: number, T: number, owner: number, destIsCa: boolean, b: number, slAt: number): number {
    const { acc, srcSw, ends, caCount, win, mask } = this;
    const { sl, slBySwitch, sl2vl, doCdg, byPorts } = this.o;
    acc.set(this.accBase);
    if (destIsCa) acc[T]!--;
    if (!doCdg || (!sl && !byPorts)) return 0;
    if (this.oneVl >= 0) return this.oneVl;
    const srcStart = this.ix.endsStart;
    const srcList = this.ix.endsOfSw;
    if (byPorts) {
      const vsl = this.vsl;
      vsl.fill(0);
      for (let k = 0; k < srcSw.length; k++) {
        const s = srcSw[k]!;
        if (caCount[s]! - (s === T && destIsCa ? 1 : 0) <= 0) continue;
        const c = win[b + s]!;
        if (c < 0) continue;
        const outP = this.ix.adjPort[this.ix.adjStart[s]! + (c & 255)]!;
        let slS = -1;
        for (let i = srcStart[s]!; i < srcStart[s + 1]!; i++) {
          const se = ends[srcList[i]!]!;
          if (se.isSwitch || srcList[i] === owner) continue;
          const v = !sl ? 0 : slBySwitch && slS >= 0 ? slS : sl(se.lid, d) & 15;
          if (slBySwitch) slS = v;
          vsl[s * 16 + this.hopVl(s, se.swPort, outP, v)]! |= 1 << v;
        }
      }
      return -1;
    }
    // The SLs, per source switch or per source port (slVector's order), asked once per LID.
    let vec: Uint8Array = this.slv_;
    let k = slAt;
    if (k < 0) {
      vec = this.slTmp;
      k = 0;
      this.slVector(d, T, vec, 0);
    }
    // The one mask of every source switch (0: none yet, −1: they differ). `mask` is 0 but at
    // the source switches, each written here (carryMasks clears what it spreads).
    let one = 0;
    for (let i = 0; i < srcSw.length; i++) {
      const s = srcSw[i]!;
      let ms = 0;
      if (slBySwitch) ms = 1 << (sl2vl[vec[k++]!]! & 15);
      else {
        for (let j = srcStart[s]!; j < srcStart[s + 1]!; j++) if (!ends[srcList[j]!]!.isSwitch) ms |= 1 << (sl2vl[vec[k++]!]! & 15);
      }
      if (s === T) ms = 0;
      mask[s] = ms;
      if (ms !== 0) one = one === 0 ? ms : one === ms ? one : -1;
    }
    // One VL for every source (a single bit): the routes carry no other VL downstream.
    return one > 0 && (one & (one - 1)) === 0 ? 31 - Math.clz32(one) : -1;
  }

  private depsOf(vl: number): Uint8Array {
    return (this.depBits[vl] ??= new Uint8Array(Math.ceil(this.xBase[this.nSw]! / 8) + 1));
  }

  /** From the sources toward the destination (`order`): the sources passing each switch; then,
   *  switch by switch in index order (the per-channel counts and dependency bits are laid out by
   *  switch: read in sequence, not at random), routes and CA LIDs per channel, and the
   *  dependencies of the channels that carry traffic, every route on VL `vl` (without SLs VL 0,
   *  its dependency bits made at once; with SLs at the first dependency, as carryMasks). */
  private carry(destIsCa: boolean, b: number, first: number, m: number, vl: number): void {
    const { win, xBase, xStride, acc, routes, nSw } = this;
    const { order, state } = this.tree;
    const adjStart = this.ix.adjStart;
    const doCdg = this.o.doCdg;
    let bits = doCdg ? (this.o.sl ? this.depBits[vl] : this.depsOf(vl)) : undefined;
    let seen = 0;
    if (this.tree.sorted) {
      // The order is by distance, each distance in index order: one pass, the sources of each
      // switch complete when it is reached, its tables read almost in sequence.
      for (let i = first; i < nSw; i++) {
        const x = order[i]!;
        const c = win[b + x]!;
        if (c < 0) continue;
        const a = acc[x]!;
        const n = c >>> 8;
        acc[n]! += a;
        if (destIsCa) {
          const e2 = 2 * (adjStart[x]! + (c & 255));
          routes[e2]! += a * m;
          routes[e2 + 1]! += m;
        }
        if (a === 0 || !doCdg) continue;
        const c2 = win[b + n]!;
        if (c2 < 0) continue;
        bits ??= this.depsOf(vl);
        const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
        const byte = bit >>> 3;
        const bv = 1 << (bit & 7);
        if (!(bits[byte]! & bv)) {
          bits[byte] = bits[byte]! | bv;
          seen++;
        }
      }
      this.vlSeen[vl]! += seen;
      return;
    }
    for (let i = first; i < nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c >= 0) acc[c >>> 8]! += acc[x]!;
    }
    for (let x = 0; x < nSw; x++) {
      if (state[x] !== ST_OK) continue;
      const c = win[b + x]!;
      if (c < 0) continue;
      const a = acc[x]!;
      if (destIsCa) {
        const e2 = 2 * (adjStart[x]! + (c & 255));
        routes[e2]! += a * m;
        routes[e2 + 1]! += m;
      }
      if (a === 0 || !doCdg) continue;
      const c2 = win[b + (c >>> 8)]!;
      if (c2 < 0) continue;
      bits ??= this.depsOf(vl);
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      if (!(bits[byte]! & bv)) {
        bits[byte] = bits[byte]! | bv;
        seen++;
      }
    }
    this.vlSeen[vl]! += seen;
  }

  /** As `carry`, with the VL masks of the sources' SLs carried downstream. */
  private carryMasks(destIsCa: boolean, b: number, first: number, m: number): void {
    const { win, xBase, xStride, acc, routes, mask, vlSeen, nSw } = this;
    const { order, state } = this.tree;
    const adjStart = this.ix.adjStart;
    const doCdg = this.o.doCdg;
    for (let i = first; i < nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      acc[c >>> 8]! += acc[x]!;
      mask[c >>> 8]! |= mask[x]!;
    }
    for (let x = 0; x < nSw; x++) {
      if (state[x] !== ST_OK) continue;
      const c = win[b + x]!;
      if (c < 0) continue;
      if (destIsCa) {
        const e2 = 2 * (adjStart[x]! + (c & 255));
        routes[e2]! += acc[x]! * m;
        routes[e2 + 1]! += m;
      }
      const m0 = mask[x]!;
      if (m0 === 0 || !doCdg) continue;
      const c2 = win[b + (c >>> 8)]!;
      if (c2 < 0) continue;
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      let mv = m0;
      while (mv) {
        const vl = 31 - Math.clz32(mv);
        mv &= ~(1 << vl);
        const bits = this.depsOf(vl);
        if (!(bits[byte]! & bv)) {
          bits[byte] = bits[byte]! | bv;
          vlSeen[vl]!++;
        }
      }
    }
    mask.fill(0);
  }

  /** As `carry`, when the VL changes hop by hop (per-port SL2VL): dependencies (e, VL) → (e2, VL'). */
  private carryPerHop(destIsCa: boolean, b: number, first: number, m: number): void {
    const { win, xBase, xStride, acc, routes, vsl, pairBits } = this;
    const order = this.tree.order;
    const { adjStart, adjPort, adjRemotePort } = this.ix;
    const doCdg = this.o.doCdg;
    const size = Math.ceil(xBase[this.nSw]! / 8) + 1;
    let hopVls = this.hopVls;
    for (let i = first; i < this.nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      const n = c >>> 8;
      const e = adjStart[x]! + (c & 255);
      if (destIsCa) {
        routes[2 * e]! += acc[x]! * m;
        routes[2 * e + 1]! += m;
      }
      acc[n]! += acc[x]!;
      if (!doCdg) continue;
      // The VL of each SL on n's out channel from the port it comes in by.
      for (let v1 = 0; v1 < 16; v1++) if (vsl[x * 16 + v1]) hopVls |= 1 << v1;
      const c2 = win[b + n]!;
      if (c2 < 0) continue;
      const inP = adjRemotePort[e]!;
      const outP = adjPort[adjStart[n]! + (c2 & 255)]!;
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      for (let v1 = 0; v1 < 16; v1++) {
        let mv = vsl[x * 16 + v1]!;
        while (mv) {
          const s_ = 31 - Math.clz32(mv);
          mv &= ~(1 << s_);
          const v2 = this.hopVl(n, inP, outP, s_);
          vsl[n * 16 + v2]! |= 1 << s_;
          hopVls |= 1 << v2;
          const pb = (pairBits[v1 * 16 + v2] ??= new Uint8Array(size));
          pb[byte] = pb[byte]! | bv;
        }
      }
    }
    this.hopVls = hopVls;
  }
}

/** Whether a[i .. i + k − 1] equals a[j .. j + k − 1]. */
function sameRow(a: Uint8Array, i: number, j: number, k: number): boolean {
  for (let t = 0; t < k; t++) if (a[i + t] !== a[j + t]) return false;
  return true;
}

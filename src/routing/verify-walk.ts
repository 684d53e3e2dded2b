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
 * - Along `order` the sources' counts (and VL masks) are carried downstream, each channel's
 *   routes and the channel dependency each switch creates recorded on the way
 *   (routing/verify-channels.ts); one pass over the switches with CAs counts hops and stretch
 *   (by (hops, shortest) pair: exact, and in no particular order).
 * - With SLs, each source switch (or source port) is asked its SL once per LID (routing/verify-sls.ts; not at all when
 *   the SL→VL table maps every SL to one VL: the SLs then make no difference); when every
 *   source's route starts on one VL (and the SL2VL is the same on every hop), all of the LID's
 *   dependencies are on that VL and it is carried as without SLs.
 * - CA LIDs of one switch T whose decoded entries are the same at every switch (compared in
 *   full) and, with SLs, whose sources off T ask the same SL for each (compared in full) have the
 *   same routes on the same VLs: one walk stands for all of them (walkSwitch), unless its routes
 *   fail. T's own sources are left out of that comparison: their routes cross no switch-to-switch
 *   link, so they make no channel dependency.
 * - Before all that, T's CA LIDs whose routes are all shortest paths to T (on one VL each) are
 *   walked in batches switch by switch (routing/verify-walk-batch.ts over routing/verify-batch.ts's
 *   columns); the rest as above.
 */
import type { PortSl2Vl } from '../model/routes.js';
import { fmtGuid, swName, type IndexedEndPort, type FabricIndex } from './graph.js';
import { describe } from './verify-report.js';
import { InTree, ST_OK, sortByDist } from './verify-tree.js';
import { LftWindows } from './verify-windows.js';
import { BatchedWalk } from './verify-walk-batch.js';
import { ChannelCounts } from './verify-channels.js';
import { SourceSls } from './verify-sls.js';
import type { FailureKind, RouteFailure } from './verify.js';

/** By verify-tree.ts's K_* index. */
const KINDS: FailureKind[] = ['no-lft', 'no-route', 'bad-port', 'port-down', 'loop', 'wrong-destination', 'not-attached'];

/** (hops, shortest hops) pairs below this are counted in a flat table, the others in a map. */
const HOPS_TAB = 64;

export interface WalkOptions {
  sl?: (slid: number, dlid: number) => number;
  slBySwitch: boolean;
  /** `sl` depends on the destination LID only: asked once per LID (routing/verify-sls.ts). */
  slByDest?: boolean;
  sl2vl: readonly number[];
  byPorts?: ReadonlyMap<number, PortSl2Vl>;
  doStretch: boolean;
  doCdg: boolean;
  maxFailures: number;
  /** CA LIDs in batches where their routes are shortest paths (routing/verify-batch.ts). */
  batch: boolean;
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
  /** Routes, CA LIDs and dependencies per channel. */
  readonly ch: ChannelCounts;
  /** CA sources reaching a CA destination, by (hops, shortest hops; 0: not computed). */
  private readonly hopTab = new Float64Array(HOPS_TAB * HOPS_TAB);
  private readonly hopMap = new Map<number, number>();

  // ---- fabric ----
  private readonly ends: IndexedEndPort[];
  private readonly nSw: number;
  private readonly caCount: Int32Array;
  /** Switches with CA/router ports (the sources). */
  private readonly srcSw: Int32Array;
  private readonly portTabs: (PortSl2Vl | undefined)[] = [];
  private readonly totalSources: number;
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
  /** The SLs of the sources (routing/verify-sls.ts). */
  private readonly sls: SourceSls;
  /** The SL vectors of the LIDs of one switch (walkSwitch), `sls.len` entries each. */
  private slv_ = new Uint8Array(0);
  private readonly acc: Int32Array;
  private readonly accBase: Int32Array;
  private readonly mask: Int32Array;
  private readonly vsl: Int32Array;
  /** The switches by distance to the delivering switch being walked, farthest first (walkSwitch, with `dist`). */
  private readonly byDist: Int32Array;
  private readonly distCount: Int32Array;
  private byDistOf = -1;
  /** Whether every switch is reachable from the switch whose `byDist` it is (else no LID of it
   *  has shortest paths from every switch: no batch). */
  private byDistAll = false;
  /** T's CA LIDs in batches where their routes are shortest paths (routing/verify-walk-batch.ts). */
  private readonly batched: BatchedWalk;
  constructor(
    private readonly ix: FabricIndex,
    lftByNode: ReadonlyMap<number, Uint8Array>,
    private readonly o: WalkOptions,
  ) {
    const { nSw, ends } = ix;
    this.nSw = nSw;
    this.ends = ends;
    this.caCount = ix.caCount;
    const src: number[] = [];
    for (let s = 0; s < nSw; s++) if (ix.caCount[s]! > 0) src.push(s);
    this.srcSw = Int32Array.from(src);
    this.totalSources = ends.filter((e) => !e.isSwitch).length;
    this.sls = new SourceSls(ix, this.srcSw, this.totalSources, o);
    this.ch = new ChannelCounts(ix);
    if (o.byPorts) for (let s = 0; s < nSw; s++) this.portTabs.push(o.byPorts.get(ix.swNode[s]!));
    this.wins = new LftWindows(ix, lftByNode);
    this.win = this.wins.win;
    this.tree = new InTree(nSw, this.wins);
    this.acc = new Int32Array(nSw);
    this.accBase = Int32Array.from(ix.caCount);
    this.mask = new Int32Array(nSw);
    this.vsl = o.byPorts ? new Int32Array(nSw * 16) : new Int32Array(0);
    this.byDist = new Int32Array(nSw);
    this.distCount = new Int32Array(nSw + 2);
    this.batched = new BatchedWalk(ix, this.wins, this.sls, this.ch, o, this.totalSources);
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
   *  switch distances to T (or undefined: not computed). With m > 1 the routes stand
   *  for m − 1 more LIDs whose entries are the same at every switch and whose sources' SLs are
   *  the same (see walkSwitch), unless some fail: returns false then, and they are to be walked
   *  one by one. `slAt`: where walkSwitch holds d's SL vector (sls.vector), −1: none. */
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
    if (dist) this.sortBy(T, dist);
    const nFail = this.tree.resolve(d, dest, destIsCa, b, dist ? this.byDist : undefined);
    if (nFail > 0) m = 1;
    const first = this.tree.orderStart;
    const vl = this.sources(d, T, owner, destIsCa, b, slAt);
    this.figures(T, destIsCa, destSelf, dist, m);
    const { win, acc, ch } = this;
    const { order } = this.tree;
    const doCdg = this.o.doCdg;
    if (this.o.byPorts) ch.carryPerHop(this.ix, win, b, order, first, acc, this.vsl, destIsCa, m, doCdg, (s, i, o, v) => this.hopVl(s, i, o, v));
    else if (vl >= 0) ch.carry(win, b, order, first, acc, destIsCa, m, vl, doCdg, this.o.sl !== undefined);
    else ch.carryMasks(win, b, order, first, acc, this.mask, destIsCa, m, doCdg);
    if (nFail > 0) this.failed(d, T, destIsCa, dest, nFail);
    return nFail === 0;
  }

  /** The LIDs delivered by switch T, in port order (`dist`: as for walk). CA LIDs whose entries
   *  are the same at every switch (compared in full, after a hash) and, with SLs, whose sources
   *  off T ask the same SL for both (compared in full: sls.vector) have the same routes, on the
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
    if (dist && this.batched.wanted()) {
      this.sortBy(T, dist);
      if (this.byDistAll) this.batched.run(T, dist, this.byDist, lids_, owners_, this);
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
    const K = this.o.sl && this.sls.oneVl < 0 ? this.sls.len : 0;
    const slv = (this.slv_ = this.slv_.length >= n * K ? this.slv_ : new Uint8Array(2 * n * K));
    const byHash = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      rep[i] = i;
      mult[i] = 1;
      const d = lids_[i]!;
      const dest = ends[owners_[i]!]!;
      if (dest.isSwitch) continue;
      this.twinTries++;
      const h = K > 0 ? Math.imul(this.wins.hashColumn(d), 31) ^ this.sls.vector(d, T, slv, i * K) : this.wins.hashColumn(d);
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

  /** Failure groups of d (distinct break point × kind), in the order the failing switches were found. */
  private failed(d: number, T: number, destIsCa: boolean, dest: IndexedEndPort, nFail: number): void {
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
      const sh = this.o.doStretch && dist && dist[x]! >= 0 ? dist[x]! + destSelf + 1 : 0;
      if (h < HOPS_TAB && sh < HOPS_TAB) hopTab[h * HOPS_TAB + sh]! += own * m;
      else this.addHops(h, sh, own * m);
    }
    this.unreachablePairs += unreachable;
  }

  /** n CA-to-CA routes of h hops (sh: the shortest, 0 when not computed). */
  private addHops(h: number, sh: number, n: number): void {
    if (h < HOPS_TAB && sh < HOPS_TAB) this.hopTab[h * HOPS_TAB + sh]! += n;
    else {
      const k = h * (this.nSw + 3) * 2 + sh;
      this.hopMap.set(k, (this.hopMap.get(k) ?? 0) + n);
    }
  }

  /** The switches by distance to T (byDist; sorted once per T), and whether all are reachable. */
  private sortBy(T: number, dist: Int32Array): void {
    if (this.byDistOf === T) return;
    sortByDist(dist, this.byDist, this.distCount);
    this.byDistOf = T;
    let all = true;
    for (let x = 0; x < this.nSw; x++) if (dist[x]! < 0) all = false;
    this.byDistAll = all;
  }

  /** M CA LIDs delivered by T, reached from every source over a shortest path (dist + 2 links). */
  batchFigures(T: number, dist: Int32Array, M: number): void {
    const { srcSw, caCount } = this;
    for (let i = 0; i < srcSw.length; i++) {
      const x = srcSw[i]!;
      const own = caCount[x]! - (x === T ? 1 : 0);
      if (own <= 0) continue;
      const h = dist[x]! + 2;
      this.addHops(h, this.o.doStretch ? h : 0, own * M);
    }
    this.lids += M;
    this.pairs += M * (this.totalSources - 1);
  }

  /** The sources at each switch (acc) and, with SLs, the VL masks of their routes to d (mask, or
   *  vsl per hop). Returns the VL of every route to d when it is one VL for all of them (no SLs:
   *  VL 0; `carry` then needs no masks), else −1. T's own sources are left out of the masks:
   *  their routes cross no switch-to-switch channel (T's entry for d delivers), so they make no
   *  channel dependency. */
  private sources(d: number, T: number, owner: number, destIsCa: boolean, b: number, slAt: number): number {
    const { acc, srcSw, ends, caCount, win, mask } = this;
    const { sl, slBySwitch, doCdg, byPorts } = this.o;
    acc.set(this.accBase);
    if (destIsCa) acc[T]!--;
    if (!doCdg || (!sl && !byPorts)) return 0;
    if (this.sls.oneVl >= 0) return this.sls.oneVl;
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
    // The SLs, per source switch or per source port (sls.vector's order), asked once per LID.
    let vec: Uint8Array = this.slv_;
    let k = slAt;
    if (k < 0) {
      vec = this.sls.tmp;
      k = 0;
      this.sls.vector(d, T, vec, 0);
    }
    // `mask` is 0 but at the source switches, each written here (carryMasks clears what it spreads).
    return this.sls.vl(vec, k, T, mask);
  }
}

/** Whether a[i .. i + k − 1] equals a[j .. j + k − 1]. */
function sameRow(a: Uint8Array, i: number, j: number, k: number): boolean {
  for (let t = 0; t < k; t++) if (a[i + t] !== a[j + t]) return false;
  return true;
}

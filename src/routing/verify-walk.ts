/**
 * The verifier's walk of the routes toward one destination LID (routing/verify.ts sets it up and
 * writes the report). For one LID the routes from all switches form an in-tree (or fail), so a
 * LID costs a few linear passes over typed arrays of the switches:
 *
 * - The entries are read from routing/verify-windows.ts: for LID d, each switch's next switch
 *   and link (or why there is none), for 64 LIDs at a time.
 * - Every switch's route is followed until it meets a switch already resolved (memoisation):
 *   each switch is visited once; the delivering ones are listed each before the switch it
 *   forwards to (`order`), the ones that fail (a broken entry on their way, a loop) with where
 *   and why.
 * - Along `order` the sources' counts (and VL masks) are carried downstream, recording each
 *   channel's routes and the channel dependency each switch creates; one pass over the switches
 *   with CAs counts hops and stretch (by (hops, shortest) pair: exact, and in no particular order).
 * - CA LIDs of one switch whose decoded entries are the same at every switch (compared in full)
 *   have the same routes: one walk stands for all of them (walkSwitch), unless its routes fail.
 */
import type { PortSl2Vl } from '../model/routes.js';
import { fmtGuid, swName, type EndPort, type FabricIndex } from './graph.js';
import { describe } from './verify-report.js';
import { C_BAD, C_CA, C_NO_LFT, C_NO_ROUTE, C_SELF, LftWindows } from './verify-windows.js';
import type { FailureKind, RouteFailure } from './verify.js';

const ST_UNKNOWN = 0;
const ST_BUSY = 1;
const ST_OK = 2;
const ST_FAIL = 3;
const KINDS: FailureKind[] = ['no-lft', 'no-route', 'bad-port', 'port-down', 'loop', 'wrong-destination', 'not-attached'];
const K_NO_LFT = 0;
const K_NO_ROUTE = 1;
const K_BAD_PORT = 2;
const K_DOWN = 3;
const K_LOOP = 4;
const K_WRONG = 5;

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
  loopEntries = 0;
  loopLids = 0;
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
  private readonly srcEnd1: Int32Array;
  private readonly portTabs: (PortSl2Vl | undefined)[] = [];
  private readonly totalSources: number;
  /** Per switch x, its first dependency bit and the bits per channel (its neighbours' largest degree). */
  private readonly xBase: Float64Array;
  private readonly xStride: Int32Array;
  /** Routes per channel (adjacency entry), added into `routesTotal` before they could overflow. */
  private readonly routes: Uint32Array;
  private readonly routesTotal: Float64Array;
  private routesRoom = 0;
  /** The decoded entries (routing/verify-windows.ts). */
  private readonly wins: LftWindows;
  private readonly win: Int32Array;

  // ---- per-destination scratch ----
  private readonly state: Uint8Array;
  private readonly hops: Int32Array;
  private readonly failKind: Uint8Array;
  private readonly failAt: Int32Array;
  private readonly failPort: Int32Array;
  private readonly order: Int32Array;
  /** Where the delivering switches start in `order` (resolve lists them at its end, each before the switch it forwards to). */
  private orderStart = 0;
  private readonly lids_: number[] = [];
  private readonly owners_: number[] = [];
  private rep_ = new Int32Array(0);
  private twinTries = 0;
  private twins = 0;
  private mult_ = new Int32Array(0);
  private readonly failList: Int32Array;
  private readonly stack: Int32Array;
  private readonly acc: Int32Array;
  private readonly accBase: Int32Array;
  private readonly mask: Int32Array;
  private readonly vsl: Int32Array;

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
    // One source port per switch (and a second one, for when the first is the destination).
    this.srcEnd0 = new Int32Array(nSw).fill(-1);
    this.srcEnd1 = new Int32Array(nSw).fill(-1);
    for (let s = 0; s < nSw; s++) {
      for (let i = ix.endsStart[s]!; i < ix.endsStart[s + 1]!; i++) {
        const ei = ix.endsOfSw[i]!;
        if (ends[ei]!.isSwitch) continue;
        if (this.srcEnd0[s]! < 0) this.srcEnd0[s] = ei;
        else if (this.srcEnd1[s]! < 0) this.srcEnd1[s] = ei;
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
    this.routes = new Uint32Array(nE);
    this.routesTotal = new Float64Array(nE);
    if (o.byPorts) for (let s = 0; s < nSw; s++) this.portTabs.push(o.byPorts.get(ix.swNode[s]!));
    this.wins = new LftWindows(ix, lftByNode);
    this.win = this.wins.win;
    this.state = new Uint8Array(nSw);
    this.hops = new Int32Array(nSw);
    this.failKind = new Uint8Array(nSw);
    this.failAt = new Int32Array(nSw);
    this.failPort = new Int32Array(nSw);
    this.order = new Int32Array(nSw);
    this.failList = new Int32Array(nSw);
    this.stack = new Int32Array(nSw + 1);
    this.acc = new Int32Array(nSw);
    this.accBase = Int32Array.from(ix.caCount);
    this.mask = new Int32Array(nSw);
    this.vsl = o.byPorts ? new Int32Array(nSw * 16) : new Int32Array(0);
  }

  /** Routes (CA to CA) and CA destination LIDs per adjacency entry. */
  linkLoads(): { routes: Float64Array; lids: Float64Array } {
    this.flushRoutes();
    return { routes: this.routesTotal, lids: Float64Array.from(this.wins.lidCount) };
  }

  private flushRoutes(): void {
    const { routes, routesTotal } = this;
    for (let e = 0; e < routes.length; e++) routesTotal[e]! += routes[e]!;
    routes.fill(0);
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
   *  for m − 1 more LIDs whose entries are the same at every switch (see walkSwitch), unless some
   *  fail: returns false then, and they are to be walked one by one. */
  walk(d: number, T: number, owner: number, dist: Int32Array | undefined, m = 1): boolean {
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
    const nFail = this.resolve(d, dest, destIsCa, b);
    if (nFail > 0) m = 1;
    if (destIsCa) {
      if (this.routesRoom < this.totalSources * m) this.flushRoutes();
      this.routesRoom -= this.totalSources * m;
    }
    const first = this.orderStart;
    this.sources(d, T, owner, destIsCa, b);
    this.figures(T, destIsCa, destSelf, dist, m);
    if (this.o.byPorts) this.carryPerHop(destIsCa, b, first);
    else if (this.o.sl) this.carryMasks(destIsCa, b, first);
    else this.carry(destIsCa, b, first, m);
    if (nFail > 0) this.failed(d, T, destIsCa, dest, nFail, b);
    return nFail === 0;
  }

  /** The LIDs delivered by switch T, in port order (`dist`: as for walk). Without SLs, CA LIDs
   *  whose entries are the same at every switch (compared in full, after a hash) have the same
   *  routes: the first of them is walked for all (unless its routes fail), the others counted. */
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
    if (this.o.sl || this.o.byPorts || n < 2 || (this.twinTries >= 1024 && this.twins === 0)) {
      for (let i = 0; i < n; i++) this.walk(lids_[i]!, T, owners_[i]!, dist);
      return;
    }
    // Group the CA LIDs: rep[i] = the first LID with the same entries (i itself when none), mult = group sizes.
    const rep = (this.rep_ = this.rep_.length >= n ? this.rep_ : new Int32Array(2 * n));
    const mult = (this.mult_ = this.mult_.length >= n ? this.mult_ : new Int32Array(2 * n));
    const byHash = new Map<number, number[]>();
    for (let i = 0; i < n; i++) {
      rep[i] = i;
      mult[i] = 1;
      const d = lids_[i]!;
      const dest = ends[owners_[i]!]!;
      if (dest.isSwitch) continue;
      this.twinTries++;
      const h = this.wins.hashColumn(d);
      const cands = byHash.get(h);
      if (!cands) {
        byHash.set(h, [i]);
        continue;
      }
      // Same entries everywhere (T's included: both deliver to a CA), and T's leads to this LID's port.
      const r = this.wins.leadsTo(T, this.wins.port(T, d), dest) ? cands.find((c) => this.wins.sameColumn(lids_[c]!, d)) : undefined;
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
      if (r === i) {
        if (!this.walk(lids_[i]!, T, owners_[i]!, dist, mult[i]!)) alone[i] = 1;
      } else if (alone[r]) this.walk(lids_[i]!, T, owners_[i]!, dist);
      else {
        this.lids++;
        this.pairs += this.totalSources - 1;
      }
    }
  }

  /** Follow every switch's route to d until it meets a resolved switch: states, hops, and
   *  `failList` (the switches whose route fails, with where and why; returns how many). */
  private resolve(d: number, dest: EndPort, destIsCa: boolean, b: number): number {
    const { win, state, hops, failList, stack, failKind, failAt, failPort, nSw, order } = this;
    state.fill(ST_UNKNOWN);
    let nFail = 0;
    let pos = nSw;
    let lidLooped = false;
    let loopEntries = 0;
    for (let s0 = 0; s0 < nSw; s0++) {
      if (state[s0] !== ST_UNKNOWN) continue;
      let len = 0;
      let cur = s0;
      let top: number;
      for (;;) {
        top = state[cur]!;
        if (top !== ST_UNKNOWN) break;
        state[cur] = ST_BUSY;
        stack[len++] = cur;
        const c = win[b + cur]!;
        if (c >= 0) {
          cur = c >>> 8;
          continue;
        }
        // The route ends here: delivered, or failed.
        let kind = -1;
        if (c === C_SELF) {
          if (!destIsCa && dest.sw === cur) hops[cur] = 0;
          else kind = K_WRONG;
        } else if (c === C_CA) {
          if (this.wins.leadsTo(cur, this.wins.port(cur, d), dest)) hops[cur] = 1;
          else kind = K_WRONG;
        } else kind = c === C_NO_LFT ? K_NO_LFT : c === C_NO_ROUTE ? K_NO_ROUTE : c === C_BAD ? K_BAD_PORT : K_DOWN;
        len--;
        if (kind >= 0) {
          state[cur] = top = ST_FAIL;
          failKind[cur] = kind;
          failAt[cur] = cur;
          failPort[cur] = kind === K_NO_LFT ? -1 : this.wins.port(cur, d);
          failList[nFail++] = cur;
        } else {
          state[cur] = top = ST_OK;
          order[--pos] = cur;
        }
        break;
      }
      if (top === ST_OK) {
        // Unwind: each switch one hop farther than the one it forwards to.
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          state[x] = ST_OK;
          hops[x] = hops[win[b + x]! >>> 8]! + 1;
          order[--pos] = x;
        }
      } else if (top === ST_BUSY) {
        // A loop (at cur): every switch on the stack ends in it.
        lidLooped = true;
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          state[x] = ST_FAIL;
          failKind[x] = K_LOOP;
          failAt[x] = cur;
          failPort[x] = -1;
          loopEntries++;
          failList[nFail++] = x;
        }
      } else {
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          const n = win[b + x]! >>> 8;
          state[x] = ST_FAIL;
          failKind[x] = failKind[n]!;
          failAt[x] = failAt[n]!;
          failPort[x] = failPort[n]!;
          if (failKind[x] === K_LOOP) loopEntries++;
          failList[nFail++] = x;
        }
      }
    }
    if (lidLooped) this.loopLids++;
    this.loopEntries += loopEntries;
    this.orderStart = pos;
    return nFail;
  }

  /** Failure groups of d (distinct break point × kind), in the order the failing switches were found. */
  private failed(d: number, T: number, destIsCa: boolean, dest: EndPort, nFail: number, b: number): void {
    const { failList, failAt, failKind, failPort, caCount, win } = this;
    const lidCount = this.wins.lidCount;
    const adjStart = this.ix.adjStart;
    this.unreachableFromSwitches += nFail;
    const groups: Groups = new Map();
    for (let i = nFail - 1; i >= 0; i--) {
      const x = failList[i]!;
      const c = win[b + x]!;
      if (destIsCa && c >= 0) lidCount[adjStart[x]! + (c & 255)]!--;
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
    const { srcSw, caCount, state, hops, hopTab } = this;
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

  /** The sources at each switch (acc) and, with SLs, the VL masks of their routes to d (mask, or vsl per hop). */
  private sources(d: number, T: number, owner: number, destIsCa: boolean, b: number): void {
    const { acc, nSw, ends, caCount, win } = this;
    const { sl, slBySwitch, sl2vl, doCdg, byPorts } = this.o;
    acc.set(this.accBase);
    if (destIsCa) acc[T]!--;
    if (!doCdg || (!sl && !byPorts)) return;
    const { srcEnd0, srcEnd1, mask } = this;
    const srcStart = this.ix.endsStart;
    const srcList = this.ix.endsOfSw;
    const vsl = this.vsl;
    if (byPorts) vsl.fill(0);
    else mask.fill(0);
    for (let s = 0; s < nSw; s++) {
      if (caCount[s]! - (s === T && destIsCa ? 1 : 0) <= 0) continue;
      if (byPorts) {
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
      } else if (slBySwitch) {
        // The SL depends on the source's switch only: one source port stands for all of them.
        const slid = srcEnd0[s] !== owner ? ends[srcEnd0[s]!]!.lid : ends[srcEnd1[s]!]!.lid;
        mask[s] = 1 << (sl2vl[sl!(slid, d) & 15]! & 15);
      } else {
        for (let i = srcStart[s]!; i < srcStart[s + 1]!; i++) {
          const se = ends[srcList[i]!]!;
          if (se.isSwitch || srcList[i] === owner) continue;
          mask[s]! |= 1 << (sl2vl[sl!(se.lid, d) & 15]! & 15);
        }
      }
    }
  }

  private depsOf(vl: number): Uint8Array {
    return (this.depBits[vl] ??= new Uint8Array(Math.ceil(this.xBase[this.nSw]! / 8) + 1));
  }

  /** From the sources toward the destination (`order`): routes per channel, and the
   *  dependencies (one VL: every route on VL 0) of the channels that carry traffic. */
  private carry(destIsCa: boolean, b: number, first: number, m: number): void {
    const { order, win, xBase, xStride, acc, routes } = this;
    const adjStart = this.ix.adjStart;
    const bits = this.o.doCdg ? this.depsOf(0) : undefined;
    let seen = 0;
    for (let i = first; i < this.nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      const n = c >>> 8;
      const e = adjStart[x]! + (c & 255);
      const a = acc[x]!;
      if (destIsCa) routes[e]! += a * m;
      if (a === 0) continue;
      acc[n]! += a;
      const c2 = win[b + n]!;
      if (c2 < 0 || !bits) continue;
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      if (!(bits[byte]! & bv)) {
        bits[byte] = bits[byte]! | bv;
        seen++;
      }
    }
    this.vlSeen[0]! += seen;
  }

  /** As `carry`, with the VL masks of the sources' SLs carried downstream. */
  private carryMasks(destIsCa: boolean, b: number, first: number): void {
    const { order, win, xBase, xStride, acc, routes, mask, vlSeen } = this;
    const adjStart = this.ix.adjStart;
    const doCdg = this.o.doCdg;
    for (let i = first; i < this.nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      const n = c >>> 8;
      const e = adjStart[x]! + (c & 255);
      const a = acc[x]!;
      if (destIsCa) routes[e]! += a;
      acc[n]! += a;
      const m0 = mask[x]!;
      if (m0 === 0 || !doCdg) continue;
      mask[n]! |= m0;
      const c2 = win[b + n]!;
      if (c2 < 0) continue;
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      let m = m0;
      while (m) {
        const vl = 31 - Math.clz32(m);
        m &= ~(1 << vl);
        const bits = this.depsOf(vl);
        if (!(bits[byte]! & bv)) {
          bits[byte] = bits[byte]! | bv;
          vlSeen[vl]!++;
        }
      }
    }
  }

  /** As `carry`, when the VL changes hop by hop (per-port SL2VL): dependencies (e, VL) → (e2, VL'). */
  private carryPerHop(destIsCa: boolean, b: number, first: number): void {
    const { order, win, xBase, xStride, acc, routes, vsl, pairBits } = this;
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
      if (destIsCa) routes[e]! += acc[x]!;
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
        let m = vsl[x * 16 + v1]!;
        while (m) {
          const s_ = 31 - Math.clz32(m);
          m &= ~(1 << s_);
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

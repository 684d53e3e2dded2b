/**
 * Route verifier for ANY set of linear forwarding tables (computed by an engine, or read back from
 * switches): reachability, loops, hop counts and stretch against shortest paths, channel-dependency
 * (CDG) cycles per VL, and per-link route counts.
 *
 * Cost: for one destination LID the routes from all switches form an in-tree (or fail), so each
 * LID takes a few linear passes over typed arrays of the switches — O(switches) per LID: the
 * entries of 64 consecutive LIDs are copied from every LFT at once (cache-friendly), each
 * switch's entry is decoded to a channel, the in-tree is walked breadth first from the
 * destination, and only the switches it does not reach are followed one by one to find where
 * their route breaks. Plus one BFS per destination switch of CAs for the shortest-path figures.
 * Sources are CA/router ports (counted through their switch); switches are also checked as
 * sources for reachability.
 */
import type { Fabric } from '../model/fabric.js';
import { bfsSwitches, fmtGuid, indexFabric, swName, type FabricIndex } from './graph.js';
import { cdgCycles, vcdgCycles, type CdgReport } from './cdg.js';
import { describe, loadStats, summarize } from './verify-report.js';
import type { PortSl2Vl } from '../model/routes.js';

export type { CdgReport };
import type { RoutingResult } from './types.js';

export type FailureKind = 'no-lft' | 'no-route' | 'bad-port' | 'port-down' | 'loop' | 'wrong-destination' | 'not-attached';

export interface RouteFailure {
  kind: FailureKind;
  dlid: number;
  /** Where the route breaks: switch name (GUID and description). */
  at: string;
  port?: number;
  detail: string;
  /** Switches whose route to dlid ends in this failure. */
  switches: number;
  /** CA/router source ports whose route to dlid ends in this failure. */
  sources: number;
}

export interface LoadStats {
  /** Directed switch-to-switch links counted. */
  links: number;
  min: number;
  max: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  /** Up to 10 equal-width buckets between min and max. */
  distribution: Array<{ from: number; to: number; links: number }>;
}

export interface VerifyReport {
  ok: boolean;
  switches: number;
  /** CA/router ports with a LID (the traffic sources). */
  endPorts: number;
  /** Destination LIDs checked (CA/router LMC ranges and switch LIDs). */
  lids: number;
  /** (source CA/router port, destination LID) pairs checked, excluding a port to its own LIDs. */
  pairs: number;
  unreachablePairs: number;
  /** (switch, LID) pairs whose route fails (switches as sources). */
  unreachableFromSwitches: number;
  /** (switch, LID) pairs whose route loops, and the number of LIDs with a loop. */
  loopEntries: number;
  loopLids: number;
  /** Failure groups (distinct LID × break point) and the first few of them. */
  failureGroups: number;
  failures: RouteFailure[];
  /** Hops (links crossed, source port to destination port) over reachable CA-to-CA pairs. */
  hops: { max: number; mean: number };
  /** Route hops / shortest possible hops, over reachable CA-to-CA pairs (absent with stretch: false). */
  stretch?: { max: number; mean: number; pairsAboveShortest: number };
  /** Per VL used by the routes. */
  cdg: CdgReport[];
  deadlockFree: boolean;
  /** Number of VLs the routes use (per the SLs and SL2VL given). */
  vlsUsed: number;
  /** CA-to-CA routes per directed switch-to-switch link. */
  linkLoad: LoadStats;
  /** CA destination LIDs per switch-to-switch output port (what LFT balancing equalises). */
  lftPortLoad: LoadStats;
  summary: string[];
}

export interface VerifyOptions {
  /** SL per (source LID, destination LID); absent: every route on SL 0. */
  sl?: (slid: number, dlid: number) => number;
  /** `sl` depends only on the switch the source is attached to (and the destination LID): the
   * verifier then asks it once per source switch, not once per source port. */
  slBySourceSwitch?: boolean;
  /** Uniform SL→VL table (16 entries); absent: identity. */
  sl2vl?: readonly number[];
  /** Per-switch SL→VL by (in port, out port) (node index → table; switches without one use
   * `sl2vl`): the VL then changes hop by hop and the CDG is over (link, VL) channels. */
  sl2vlByPorts?: ReadonlyMap<number, PortSl2Vl>;
  /** Count CDG cycles as a verification failure (default: the RoutingResult's deadlockFree claim, else false). */
  requireDeadlockFree?: boolean;
  /** Failure samples kept (default 50). */
  maxFailures?: number;
  /** Compute shortest-path stretch (one BFS per destination switch; default true). */
  stretch?: boolean;
  /** Build the channel dependency graph (default true). */
  cdg?: boolean;
}

const ST_UNKNOWN = 0;
const ST_BUSY = 1;
const ST_OK = 2;
const ST_FAIL = 3;
// Outcomes of an LFT entry that does not lead to another switch.
const C_CA = -1;
const C_SELF = -2;
const C_NO_ROUTE = -3;
const C_NO_LFT = -4;
const C_BAD = -5;
const C_DOWN = -6;
const KINDS: FailureKind[] = ['no-lft', 'no-route', 'bad-port', 'port-down', 'loop', 'wrong-destination', 'not-attached'];
const K_NO_LFT = 0;
const K_NO_ROUTE = 1;
const K_BAD_PORT = 2;
const K_DOWN = 3;
const K_LOOP = 4;
const K_WRONG = 5;

function isResult(t: RoutingResult | ReadonlyMap<number, Uint8Array>): t is RoutingResult {
  return (t as RoutingResult).lfts instanceof Map && typeof (t as RoutingResult).engine === 'string';
}

export function verifyRoutes(fabric: Fabric, tables: RoutingResult | ReadonlyMap<number, Uint8Array>, opts: VerifyOptions = {}): VerifyReport {
  const res = isResult(tables) ? tables : undefined;
  const lftByNode = res ? res.lfts : (tables as ReadonlyMap<number, Uint8Array>);
  const sl = opts.sl ?? res?.sl;
  const slBySwitch = opts.sl ? opts.slBySourceSwitch === true : res?.slBySourceSwitch === true;
  const sl2vl = opts.sl2vl ?? res?.sl2vl ?? Array.from({ length: 16 }, (_, i) => i);
  const byPorts = opts.sl2vlByPorts ?? (opts.sl2vl ? undefined : res?.sl2vlByPorts);
  const requireDf = opts.requireDeadlockFree ?? res?.deadlockFree ?? false;
  const maxFailures = opts.maxFailures ?? 50;
  const doStretch = opts.stretch !== false;
  const doCdg = opts.cdg !== false;

  const ix = indexFabric(fabric);
  const { nSw, ends, adjStart, adjSw, portEntry, swNumPorts } = ix;
  const W = ix.maxPorts + 1;
  const nodes = fabric.nodes;
  const nEntries = adjStart[nSw]!;
  const lft: (Uint8Array | undefined)[] = [];
  const hasLft = new Uint8Array(nSw);
  for (let s = 0; s < nSw; s++) {
    const t = lftByNode.get(ix.swNode[s]!);
    lft.push(t);
    if (t) hasLft[s] = 1;
  }
  const COLS = 64;
  const col = new Uint8Array(COLS * nSw);
  const caCount = ix.caCount;
  // One source port per switch (and a second one, for when the first is the destination).
  const srcEnd0 = new Int32Array(nSw).fill(-1);
  const srcEnd1 = new Int32Array(nSw).fill(-1);
  for (let s = 0; s < nSw; s++) {
    for (let i = ix.endsStart[s]!; i < ix.endsStart[s + 1]!; i++) {
      const ei = ix.endsOfSw[i]!;
      if (ends[ei]!.isSwitch) continue;
      if (srcEnd0[s]! < 0) srcEnd0[s] = ei;
      else if (srcEnd1[s]! < 0) srcEnd1[s] = ei;
    }
  }

  // Sources per switch (CA/router ports) and their base LIDs.
  const caEnds = ends.filter((e) => !e.isSwitch);
  const srcStart = ix.endsStart;
  const srcList = ix.endsOfSw;

  // CDG storage: one bit-array per VL over (in-channel, out-channel local index).
  const depStart = new Float64Array(nEntries + 1);
  for (let e = 0; e < nEntries; e++) {
    const h = adjSw[e]!;
    depStart[e + 1] = depStart[e]! + (adjStart[h + 1]! - adjStart[h]!);
  }
  const depBits: (Uint8Array | undefined)[] = new Array(16);
  // Per-hop VLs (sl2vlByPorts): each switch's table, the SLs reaching each switch per VL of its
  // out channel (vsl[s * 16 + vl]), dependencies per (VL, next VL) pair, the VLs seen.
  const hopTab: (PortSl2Vl | undefined)[] = [];
  if (byPorts) for (let s = 0; s < nSw; s++) hopTab.push(byPorts.get(ix.swNode[s]!));
  const vsl = byPorts ? new Int32Array(nSw * 16) : new Int32Array(0);
  const pairBits: (Uint8Array | undefined)[] = new Array(256);
  let hopVls = 0;
  const hopVl = (s: number, inP: number, outP: number, sl_: number): number => {
    const t = hopTab[s];
    return t && inP < t.stride && outP < t.stride ? t.vl[(inP * t.stride + outP) * 16 + sl_]! & 15 : sl2vl[sl_]! & 15;
  };
  const vlSeen = new Int32Array(16);

  // Per-destination scratch.
  const state = new Uint8Array(nSw);
  const hops = new Int32Array(nSw);
  const failKind = new Uint8Array(nSw);
  const failAt = new Int32Array(nSw);
  const failPort = new Int32Array(nSw);
  const order = new Int32Array(nSw);
  const stack = new Int32Array(nSw + 1);
  const acc = new Float64Array(nSw);
  const mask = new Int32Array(nSw);
  const dist = new Int32Array(nSw);
  const queue = new Int32Array(nSw);

  // Peer of every switch port: node and port (−1 when unconnected).
  const peerNode = new Int32Array(nSw * W).fill(-1);
  const peerPort = new Int32Array(nSw * W).fill(-1);
  for (let s = 0; s < nSw; s++) {
    const n = nodes[ix.swNode[s]!]!;
    for (let p = 1; p < n.ports.length && p < W; p++) {
      const peer = n.ports[p]?.peer;
      if (!peer) continue;
      peerNode[s * W + p] = peer.node;
      peerPort[s * W + p] = peer.port;
    }
  }
  // What each switch port's entry leads to: the channel (adjacency entry ≥ 0), or a C_* outcome.
  const code = new Int32Array(nSw * W);
  for (let s = 0; s < nSw; s++) {
    code[s * W] = C_SELF;
    for (let p = 1; p < W; p++) {
      const i = s * W + p;
      code[i] = p > swNumPorts[s]! ? C_BAD : peerNode[i]! < 0 ? C_DOWN : portEntry[i]! >= 0 ? portEntry[i]! : C_CA;
    }
  }
  const out = new Int32Array(nSw);
  const kids = new Int32Array(nSw + 1);
  const kidList = new Int32Array(nSw);
  const linkLoad = new Float64Array(nEntries);
  const lftLoad = new Float64Array(nEntries);

  let lids = 0;
  let pairs = 0;
  let unreachablePairs = 0;
  let unreachableFromSwitches = 0;
  let loopEntries = 0;
  let loopLids = 0;
  let failureGroups = 0;
  const failures: RouteFailure[] = [];
  let hopSum = 0;
  let hopMax = 0;
  let reachedPairs = 0;
  let stretchSum = 0;
  let stretchMax = 0;
  let aboveShortest = 0;

  const totalSources = caEnds.length;
  let bfsFor = -1;

  const checkLid = (d: number, T: number, owner: number, colOff: number): void => {
    lids++;
    const dest = ends[owner]!;
    const destIsCa = !dest.isSwitch;
    const destSelf = destIsCa ? 1 : 0;
    pairs += totalSources - destSelf;
    if (T < 0) {
      // Not attached to any switch: nothing can reach it.
      unreachablePairs += totalSources - destSelf;
      unreachableFromSwitches += nSw;
      failureGroups++;
      if (failures.length < maxFailures) {
        failures.push({ kind: 'not-attached', dlid: d, at: fmtGuid(dest.guid), detail: `LID ${d} belongs to port ${fmtGuid(dest.guid)}, which is not attached to a switch`, switches: nSw, sources: totalSources - destSelf });
      }
      return;
    }
    // Locals (not the closure's variables) in the loops below: V8 keeps them in registers.
    const out_ = out, kids_ = kids, kidList_ = kidList, col_ = col, code_ = code, adjSw_ = adjSw, adjStart_ = adjStart, state_ = state, hops_ = hops,
      order_ = order, stack_ = stack, acc_ = acc, mask_ = mask, caCount_ = caCount, dist_ = dist, linkLoad_ = linkLoad, lftLoad_ = lftLoad,
      depStart_ = depStart, hasLft_ = hasLft, peerNode_ = peerNode, peerPort_ = peerPort, failKind_ = failKind, failAt_ = failAt,
      failPort_ = failPort, vlSeen_ = vlSeen, depBits_ = depBits, sl2vl_ = sl2vl, srcEnd0_ = srcEnd0, srcEnd1_ = srcEnd1, srcStart_ = srcStart,
      srcList_ = srcList, ends_ = ends, nSw_ = nSw, W_ = W;
    let hopSum_ = 0, reachedPairs_ = 0, hopMax_ = 0, stretchSum_ = 0, stretchMax_ = 0, aboveShortest_ = 0, unreachableFromSwitches_ = 0,
      unreachablePairs_ = 0, loopEntries_ = 0;
    // Pass 1, switches in order: the channel (or the outcome) each switch's entry for d leads to,
    // and how many switches forward d to each switch.
    kids_.fill(0);
    for (let x = 0; x < nSw_; x++) {
      const p = col_[x * COLS + colOff]!;
      const c = p < W_ ? code_[x * W_ + p]! : p === 255 ? (hasLft_[x] ? C_NO_ROUTE : C_NO_LFT) : C_BAD;
      out_[x] = c;
      if (c >= 0) kids_[adjSw_[c]! + 1]!++;
    }
    // Pass 2: the in-tree of d, breadth first from T: every switch reached delivers d; `order`
    // lists them destination first. (Switches forwarding d to a switch are grouped by it first.)
    for (let x = 0; x < nSw_; x++) kids_[x + 1]! += kids_[x]!;
    for (let x = 0; x < nSw_; x++) {
      const c = out_[x]!;
      if (c >= 0) kidList_[kids_[adjSw_[c]!]!++] = x;
    }
    // kids[r] is now the end of r's children; r's start is kids[r - 1] (0 for r = 0).
    state_.fill(ST_UNKNOWN);
    let nOrder = 0;
    const tc = out_[T]!;
    const tp = col_[T * COLS + colOff]!;
    if (tc === C_SELF ? !destIsCa : tc === C_CA && peerNode_[T * W_ + tp] === dest.node && peerPort_[T * W_ + tp] === dest.port) {
      state_[T] = ST_OK;
      hops_[T] = tc === C_SELF ? 0 : 1;
      order_[nOrder++] = T;
      for (let h = 0; h < nOrder; h++) {
        const r = order_[h]!;
        const hr = hops_[r]! + 1;
        for (let i = r > 0 ? kids_[r - 1]! : 0, end = kids_[r]!; i < end; i++) {
          const x = kidList_[i]!;
          state_[x] = ST_OK;
          hops_[x] = hr;
          order_[nOrder++] = x;
        }
      }
    }
    // The switches not reached fail (a broken entry on their way, or a loop): find where, by
    // following each one's route with memoisation. They go after the reached ones in `order`.
    let lidLooped = false;
    for (let s0 = 0; nOrder < nSw_ && s0 < nSw_; s0++) {
      if (state_[s0] !== ST_UNKNOWN) continue;
      let len = 0;
      let cur = s0;
      let inheritFrom = -1;
      let loopAt = -1;
      for (;;) {
        const st = state_[cur]!;
        if (st === ST_BUSY) {
          loopAt = cur;
          break;
        }
        if (st !== ST_UNKNOWN) {
          inheritFrom = cur;
          break;
        }
        state_[cur] = ST_BUSY;
        stack_[len++] = cur;
        const c = out_[cur]!;
        if (c >= 0) {
          cur = adjSw_[c]!;
          continue;
        }
        let kind = -1;
        const port = col_[cur * COLS + colOff]!;
        if (c === C_SELF) {
          if (cur === T && !destIsCa) hops_[cur] = 0;
          else kind = K_WRONG;
        } else if (c === C_CA) {
          if (peerNode_[cur * W_ + port] === dest.node && peerPort_[cur * W_ + port] === dest.port) hops_[cur] = 1;
          else kind = K_WRONG;
        } else kind = c === C_NO_LFT ? K_NO_LFT : c === C_NO_ROUTE ? K_NO_ROUTE : c === C_BAD ? K_BAD_PORT : K_DOWN;
        if (kind >= 0) {
          state_[cur] = ST_FAIL;
          failKind_[cur] = kind;
          failAt_[cur] = cur;
          failPort_[cur] = kind === K_NO_LFT ? -1 : port;
        } else state_[cur] = ST_OK;
        break;
      }
      // Unwind.
      let top = len - 1;
      if (loopAt >= 0) {
        lidLooped = true;
        for (let i = len - 1; i >= 0; i--) {
          const x = stack_[i]!;
          state_[x] = ST_FAIL;
          failKind_[x] = K_LOOP;
          failAt_[x] = loopAt;
          failPort_[x] = -1;
          loopEntries_++;
          order_[nOrder++] = x;
        }
        continue;
      }
      if (inheritFrom < 0) {
        // Top of the stack resolved itself (delivered or failed).
        order_[nOrder++] = stack_[top]!;
        top--;
      }
      for (let i = top; i >= 0; i--) {
        const x = stack_[i]!;
        const n = adjSw_[out_[x]!]!;
        const sn = state_[n]!;
        state_[x] = sn;
        hops_[x] = hops_[n]! + 1;
        if (sn === ST_FAIL) {
          failKind_[x] = failKind_[n]!;
          failAt_[x] = failAt_[n]!;
          failPort_[x] = failPort_[n]!;
          if (failKind_[x] === K_LOOP) loopEntries_++;
        }
        order_[nOrder++] = x;
      }
    }
    if (lidLooped) loopLids++;

    // One BFS per destination switch (its LIDs are checked one after the other).
    if (doStretch && destIsCa && bfsFor !== T) {
      bfsSwitches(ix, T, dist_, queue);
      bfsFor = T;
    }

    // Sources at each switch, VL masks.
    if (byPorts) vsl.fill(0);
    for (let s = 0; s < nSw_; s++) {
      let c = caCount_[s]!;
      if (s === T && destIsCa) c--;
      acc_[s] = c;
      mask_[s] = 0;
      if (byPorts) {
        if (c <= 0 || !doCdg) continue;
        const outP = col_[s * COLS + colOff]!;
        if (out_[s]! < 0) continue;
        let slS = -1;
        for (let i = srcStart_[s]!; i < srcStart_[s + 1]!; i++) {
          const se = ends_[srcList_[i]!]!;
          if (se.isSwitch || srcList_[i] === owner) continue;
          const v = !sl ? 0 : slBySwitch && slS >= 0 ? slS : sl(se.lid, d) & 15;
          if (slBySwitch) slS = v;
          vsl[s * 16 + hopVl(s, se.swPort, outP, v)]! |= 1 << v;
        }
      } else if (c > 0 && doCdg) {
        if (!sl) mask_[s] = 1;
        else if (slBySwitch) {
          // The SL depends on the source's switch only: one source port stands for all of them.
          const slid = srcEnd0_[s] !== owner ? ends_[srcEnd0_[s]!]!.lid : ends_[srcEnd1_[s]!]!.lid;
          mask_[s] = 1 << (sl2vl_[sl(slid, d) & 15]! & 15);
        } else {
          for (let i = srcStart_[s]!; i < srcStart_[s + 1]!; i++) {
            const se = ends_[srcList_[i]!]!;
            if (se.isSwitch || srcList_[i] === owner) continue;
            mask_[s] |= 1 << (sl2vl_[sl(se.lid, d) & 15]! & 15);
          }
        }
      }
    }
    // Pass 3, sources before the switches they feed: failures, hops, traffic and VL masks carried downstream.
    let groups: Map<number, { switches: number; sources: number }> | undefined;
    for (let i = nOrder - 1; i >= 0; i--) {
      const x = order_[i]!;
      const own = caCount_[x]! - (x === T && destIsCa ? 1 : 0);
      if (state_[x] === ST_FAIL) {
        unreachableFromSwitches_++;
        unreachablePairs_ += own;
        const key = failAt_[x]! * 8 + failKind_[x]!;
        groups ??= new Map();
        const g = groups.get(key) ?? { switches: 0, sources: 0 };
        g.switches++;
        g.sources += own;
        groups.set(key, g);
        continue;
      }
      // Reachable. Hop, stretch and load figures count data traffic: CA/router destinations only.
      if (own > 0 && destIsCa) {
        const h = hops_[x]! + 1;
        reachedPairs_ += own;
        hopSum_ += own * h;
        if (h > hopMax_) hopMax_ = h;
        if (doStretch && dist_[x]! >= 0) {
          const sh = dist_[x]! + destSelf + 1;
          const str = h / sh;
          stretchSum_ += own * str;
          if (str > stretchMax_) stretchMax_ = str;
          if (h > sh) aboveShortest_ += own;
        }
      }
      const e = out_[x]!;
      if (e < 0) continue;
      const n = adjSw_[e]!;
      acc_[n]! += acc_[x]!;
      mask_[n]! |= mask_[x]!;
      if (byPorts && doCdg) {
        // The VL of each SL on n's out channel from the port it comes in by: dependencies (e, VL) → (e2, VL').
        for (let v1 = 0; v1 < 16; v1++) if (vsl[x * 16 + v1]) hopVls |= 1 << v1;
        const e2 = out_[n]!;
        if (e2 < 0) continue;
        const inP = peerPort_[x * W_ + col_[x * COLS + colOff]!]!;
        const outP = col_[n * COLS + colOff]!;
        const bit = depStart_[e]! + (e2 - adjStart_[n]!);
        const byte = bit >>> 3;
        const bv = 1 << (bit & 7);
        for (let v1 = 0; v1 < 16; v1++) {
          let m = vsl[x * 16 + v1]!;
          if (!m) continue;
          while (m) {
            const s_ = 31 - Math.clz32(m);
            m &= ~(1 << s_);
            const v2 = hopVl(n, inP, outP, s_);
            vsl[n * 16 + v2]! |= 1 << s_;
            hopVls |= 1 << v2;
            let b = pairBits[v1 * 16 + v2];
            if (!b) b = pairBits[v1 * 16 + v2] = new Uint8Array(Math.ceil(depStart_[nEntries]! / 8) + 1);
            if (!(b[byte]! & bv)) b[byte] = b[byte]! | bv;
          }
        }
      }
    }
    // Pass 4, switches in order again (the channels in order): routes per link and channel dependencies.
    for (let x = 0; x < nSw_; x++) {
      const e = out_[x]!;
      if (e < 0 || state_[x] !== ST_OK) continue;
      if (destIsCa) {
        linkLoad_[e]! += acc_[x]!;
        lftLoad_[e]!++;
      }
      const m0 = mask_[x]!;
      if (m0 === 0) continue;
      const n = adjSw_[e]!;
      const e2 = out_[n]!;
      if (e2 < 0) continue;
      const bit = depStart_[e]! + (e2 - adjStart_[n]!);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      let m = m0;
      while (m) {
        const vl = 31 - Math.clz32(m);
        m &= ~(1 << vl);
        let b = depBits_[vl];
        if (!b) b = depBits_[vl] = new Uint8Array(Math.ceil(depStart_[nEntries]! / 8) + 1);
        if (!(b[byte]! & bv)) {
          b[byte] = b[byte]! | bv;
          vlSeen_[vl]!++;
        }
      }
    }
    hopSum += hopSum_; reachedPairs += reachedPairs_; stretchSum += stretchSum_; aboveShortest += aboveShortest_; unreachableFromSwitches += unreachableFromSwitches_; unreachablePairs += unreachablePairs_; loopEntries += loopEntries_;
    if (hopMax_ > hopMax) hopMax = hopMax_;
    if (stretchMax_ > stretchMax) stretchMax = stretchMax_;
    for (const [key, g] of groups ?? []) {
      failureGroups++;
      if (failures.length >= maxFailures) break;
      const at = Math.floor(key / 8);
      const kind = KINDS[key % 8]!;
      const port = kind === 'loop' ? undefined : failPort[at]!;
      failures.push({ kind, dlid: d, at: swName(ix, at), ...(port !== undefined && port >= 0 ? { port } : {}), detail: describe(ix, kind, d, at, port, dest.guid), switches: g.switches, sources: g.sources });
    }
  };

  // Walk destinations grouped by delivering switch (one BFS per switch), then unattached ones.
  // The LFT entries of up to COLS consecutive LIDs are first copied from every switch into `col`
  // (switch-major, COLS bytes per switch), so that following one LID from every switch stays in a
  // small buffer instead of touching one cache line of every switch's LFT.
  const chunkLid: number[] = [];
  const chunkOwner: number[] = [];
  const flush = (T: number): void => {
    const k = chunkLid.length;
    const d0 = chunkLid[0]!;
    for (let s = 0; s < nSw; s++) {
      const t = lft[s];
      const o = s * COLS;
      if (t && d0 + k <= t.length) for (let j = 0; j < k; j++) col[o + j] = t[d0 + j]!;
      else for (let j = 0; j < k; j++) col[o + j] = t && d0 + j < t.length ? t[d0 + j]! : 255;
    }
    for (let j = 0; j < k; j++) checkLid(d0 + j, T, chunkOwner[j]!, j);
    chunkLid.length = 0;
    chunkOwner.length = 0;
  };
  // Chunks are runs of consecutive LIDs (one copy per switch).
  const add = (T: number, l: number, oi: number): void => {
    if (chunkLid.length > 0 && l !== chunkLid[chunkLid.length - 1]! + 1) flush(T);
    chunkLid.push(l);
    chunkOwner.push(oi);
    if (chunkLid.length === COLS) flush(T);
  };
  for (let T = 0; T < nSw; T++) {
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const oi = ix.endsOfSw[i]!;
      const ep = ends[oi]!;
      for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) add(T, l, oi);
    }
    if (chunkLid.length > 0) flush(T);
  }
  ends.forEach((ep, oi) => {
    if (ep.sw < 0) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) add(-1, l, oi);
  });
  if (chunkLid.length > 0) flush(-1);

  // CDG per VL.
  const cdg: CdgReport[] = byPorts ? vcdgCycles(ix, pairBits, depStart) : [];
  let vlsUsed = 0;
  if (byPorts) for (let v = 0; v < 16; v++) if (hopVls & (1 << v)) vlsUsed++;
  for (let vl = 0; vl < 16 && !byPorts; vl++) {
    const b = depBits[vl];
    if (!b) continue;
    vlsUsed++;
    cdg.push(cdgCycles(ix, vl, b, depStart, vlSeen[vl]!));
  }
  if (vlsUsed === 0) vlsUsed = 1;
  const deadlockFree = cdg.every((c) => c.cyclicComponents === 0);

  const ok = unreachablePairs === 0 && unreachableFromSwitches === 0 && loopEntries === 0 && (!requireDf || deadlockFree);
  const report: VerifyReport = {
    ok,
    switches: nSw,
    endPorts: caEnds.length,
    lids,
    pairs,
    unreachablePairs,
    unreachableFromSwitches,
    loopEntries,
    loopLids,
    failureGroups,
    failures,
    hops: { max: hopMax, mean: reachedPairs ? hopSum / reachedPairs : 0 },
    ...(doStretch ? { stretch: { max: stretchMax, mean: reachedPairs ? stretchSum / reachedPairs : 0, pairsAboveShortest: aboveShortest } } : {}),
    cdg,
    deadlockFree,
    vlsUsed,
    linkLoad: loadStats(linkLoad),
    lftPortLoad: loadStats(lftLoad),
    summary: [],
  };
  report.summary = summarize(report, requireDf);
  return report;
}

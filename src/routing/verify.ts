/**
 * Route verifier for ANY set of linear forwarding tables (computed by an engine, or read back from
 * switches): reachability, loops, hop counts and stretch against shortest paths, channel-dependency
 * (CDG) cycles per VL, and per-link route counts.
 *
 * Cost: for one destination LID the routes from all switches form an in-tree (or fail), so each
 * destination is followed from every switch once with memoisation — O(switches) per LID, plus one
 * BFS per destination switch for the shortest-path figures. Sources are CA/router ports (counted
 * through their switch); switches are also checked as sources for reachability.
 */
import type { Fabric } from '../model/fabric.js';
import { bfsSwitches, fmtGuid, indexFabric, swName, type FabricIndex } from './graph.js';
import { cdgCycles, type CdgReport } from './cdg.js';

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
  /** Uniform SL→VL table (16 entries); absent: identity. */
  sl2vl?: readonly number[];
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
  const sl2vl = opts.sl2vl ?? res?.sl2vl ?? Array.from({ length: 16 }, (_, i) => i);
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
  for (let s = 0; s < nSw; s++) lft.push(lftByNode.get(ix.swNode[s]!));

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
  const vlSeen = new Int32Array(16);

  // Per-destination scratch.
  const state = new Uint8Array(nSw);
  const next = new Int32Array(nSw);
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

  const checkLid = (d: number, T: number, owner: number): void => {
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
    state.fill(ST_UNKNOWN);
    let nOrder = 0;
    let lidLooped = false;
    for (let s0 = 0; s0 < nSw; s0++) {
      if (state[s0] !== ST_UNKNOWN) continue;
      let len = 0;
      let cur = s0;
      // Outcome of the walk: resolvedAt = node whose result the stack inherits, or a terminal failure/delivery on the top.
      let inheritFrom = -1;
      let loopAt = -1;
      for (;;) {
        const st = state[cur]!;
        if (st === ST_BUSY) {
          loopAt = cur;
          break;
        }
        if (st !== ST_UNKNOWN) {
          inheritFrom = cur;
          break;
        }
        state[cur] = ST_BUSY;
        stack[len++] = cur;
        next[cur] = -1;
        const t = lft[cur];
        let kind = -1;
        let port = -1;
        if (!t) kind = K_NO_LFT;
        else {
          port = d < t.length ? t[d]! : 255;
          if (port === 0) {
            if (cur === T && !destIsCa) {
              state[cur] = ST_OK;
              hops[cur] = 0;
            } else kind = K_WRONG;
          } else if (port === 255) kind = K_NO_ROUTE;
          else if (port > swNumPorts[cur]!) kind = K_BAD_PORT;
          else {
            const pn = peerNode[cur * W + port]!;
            if (pn < 0) kind = K_DOWN;
            else {
              const r = ix.swOfNode[pn]!;
              if (r >= 0) {
                next[cur] = r;
                cur = r;
                continue;
              }
              if (pn === dest.node && peerPort[cur * W + port] === dest.port) {
                state[cur] = ST_OK;
                hops[cur] = 1;
              } else kind = K_WRONG;
            }
          }
        }
        if (kind >= 0) {
          state[cur] = ST_FAIL;
          failKind[cur] = kind;
          failAt[cur] = cur;
          failPort[cur] = port;
        }
        break;
      }
      // Unwind.
      let top = len - 1;
      if (loopAt >= 0) {
        lidLooped = true;
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          state[x] = ST_FAIL;
          failKind[x] = K_LOOP;
          failAt[x] = loopAt;
          failPort[x] = -1;
          loopEntries++;
          order[nOrder++] = x;
        }
        continue;
      }
      if (inheritFrom < 0) {
        // Top of the stack resolved itself (delivered or failed).
        order[nOrder++] = stack[top]!;
        top--;
      }
      for (let i = top; i >= 0; i--) {
        const x = stack[i]!;
        const n = next[x]!;
        state[x] = state[n]!;
        hops[x] = hops[n]! + 1;
        failKind[x] = failKind[n]!;
        failAt[x] = failAt[n]!;
        failPort[x] = failPort[n]!;
        if (state[x] === ST_FAIL && failKind[x] === K_LOOP) loopEntries++;
        order[nOrder++] = x;
      }
    }
    if (lidLooped) loopLids++;

    // One BFS per destination switch (its LIDs are checked one after the other).
    if (doStretch && bfsFor !== T) {
      bfsSwitches(ix, T, dist, queue);
      bfsFor = T;
    }

    // Sources at each switch, VL masks.
    for (let s = 0; s < nSw; s++) {
      let c = ix.caCount[s]!;
      if (s === T && destIsCa) c--;
      acc[s] = c;
      mask[s] = 0;
      if (c > 0 && doCdg) {
        if (!sl) mask[s] = 1;
        else {
          for (let i = srcStart[s]!; i < srcStart[s + 1]!; i++) {
            const se = ends[srcList[i]!]!;
            if (se.isSwitch || srcList[i] === owner) continue;
            mask[s] |= 1 << (sl2vl[sl(se.lid, d) & 15]! & 15);
          }
        }
      }
    }
    // Failure groups per break point.
    let groups: Map<number, { switches: number; sources: number }> | undefined;
    for (let i = nOrder - 1; i >= 0; i--) {
      const x = order[i]!;
      const own = ix.caCount[x]! - (x === T && destIsCa ? 1 : 0);
      if (state[x] === ST_FAIL) {
        unreachableFromSwitches++;
        unreachablePairs += own;
        const key = failAt[x]! * 8 + failKind[x]!;
        groups ??= new Map();
        const g = groups.get(key) ?? { switches: 0, sources: 0 };
        g.switches++;
        g.sources += own;
        groups.set(key, g);
        continue;
      }
      // Reachable. Hop, stretch and load figures count data traffic: CA/router destinations only.
      if (own > 0 && destIsCa) {
        const h = hops[x]! + 1;
        reachedPairs += own;
        hopSum += own * h;
        if (h > hopMax) hopMax = h;
        if (doStretch && dist[x]! >= 0) {
          const sh = dist[x]! + destSelf + 1;
          const str = h / sh;
          stretchSum += own * str;
          if (str > stretchMax) stretchMax = str;
          if (h > sh) aboveShortest += own;
        }
      }
      const n = next[x]!;
      if (n < 0) continue;
      const a = acc[x]!;
      const e = portEntry[x * W + lft[x]![d]!]!;
      if (destIsCa) {
        linkLoad[e]! += a;
        lftLoad[e]!++;
      }
      acc[n]! += a;
      if (doCdg && mask[x] !== 0) {
        mask[n] |= mask[x]!;
        const nn = next[n]!;
        if (nn >= 0 && state[n] === ST_OK) {
          const e2 = portEntry[n * W + lft[n]![d]!]!;
          const bit = depStart[e]! + (e2 - adjStart[n]!);
          let m = mask[x]!;
          while (m) {
            const vl = 31 - Math.clz32(m);
            m &= ~(1 << vl);
            let b = depBits[vl];
            if (!b) b = depBits[vl] = new Uint8Array(Math.ceil(depStart[nEntries]! / 8) + 1);
            const byte = Math.floor(bit / 8);
            const bv = 1 << (bit % 8);
            if (!(b[byte]! & bv)) {
              b[byte] = b[byte]! | bv;
              vlSeen[vl]!++;
            }
          }
        }
      }
    }
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
  for (let T = 0; T < nSw; T++) {
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const oi = ix.endsOfSw[i]!;
      const ep = ends[oi]!;
      for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) checkLid(l, T, oi);
    }
  }
  ends.forEach((ep, oi) => {
    if (ep.sw < 0) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) checkLid(l, -1, oi);
  });

  // CDG per VL.
  const cdg: CdgReport[] = [];
  let vlsUsed = 0;
  for (let vl = 0; vl < 16; vl++) {
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

function describe(ix: FabricIndex, kind: FailureKind, d: number, at: number, port: number | undefined, destGuid: bigint): string {
  const sw = swName(ix, at);
  switch (kind) {
    case 'no-lft':
      return `switch ${sw} has no forwarding table`;
    case 'no-route':
      return `switch ${sw} has no LFT entry for LID ${d} (port ${fmtGuid(destGuid)})`;
    case 'bad-port':
      return `switch ${sw} forwards LID ${d} to port ${port}, beyond its ${ix.swNumPorts[at]} ports`;
    case 'port-down':
      return `switch ${sw} forwards LID ${d} to port ${port}, which has no link`;
    case 'loop':
      return `routes to LID ${d} loop through switch ${sw}`;
    case 'wrong-destination':
      return port === 0
        ? `switch ${sw} delivers LID ${d} to its own port 0, but the LID belongs to port ${fmtGuid(destGuid)}`
        : `switch ${sw} forwards LID ${d} out of port ${port} to a node that does not own it (owner ${fmtGuid(destGuid)})`;
    case 'not-attached':
      return `LID ${d} is not attached to a switch`;
  }
}

function loadStats(load: Float64Array): LoadStats {
  const n = load.length;
  if (n === 0) return { links: 0, min: 0, max: 0, mean: 0, p50: 0, p90: 0, p99: 0, distribution: [] };
  const sorted = Float64Array.from(load).sort();
  const min = sorted[0]!;
  const max = sorted[n - 1]!;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  const pct = (p: number): number => sorted[Math.min(n - 1, Math.floor(p * (n - 1)))]!;
  const buckets = max === min ? 1 : Math.min(10, max - min + 1);
  const width = (max - min + 1) / buckets;
  const distribution = Array.from({ length: buckets }, (_, i) => ({ from: Math.ceil(min + i * width), to: Math.ceil(min + (i + 1) * width) - 1, links: 0 }));
  for (let i = 0; i < n; i++) distribution[Math.min(buckets - 1, Math.floor((sorted[i]! - min) / width))]!.links++;
  return { links: n, min, max, mean: sum / n, p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), distribution };
}

function summarize(r: VerifyReport, requireDf: boolean): string[] {
  const out: string[] = [];
  out.push(r.unreachablePairs === 0 && r.unreachableFromSwitches === 0 ? `reachability: OK (${r.pairs} CA pairs, ${r.switches} switches × ${r.lids} LIDs)` : `reachability: ${r.unreachablePairs} of ${r.pairs} CA pairs and ${r.unreachableFromSwitches} switch×LID routes fail`);
  out.push(r.loopEntries === 0 ? 'loops: none' : `loops: ${r.loopLids} LIDs loop (${r.loopEntries} switch×LID routes)`);
  const cyc = r.cdg.filter((c) => c.cyclicComponents > 0);
  out.push(cyc.length === 0 ? `deadlock: CDG acyclic on ${r.vlsUsed} VL(s)` : `deadlock: CDG cycles on VL ${cyc.map((c) => c.vl).join(',')}${requireDf ? ' (required deadlock-free)' : ''}`);
  return out;
}

/**
 * Route verifier for ANY set of linear forwarding tables (computed by an engine, or read back from
 * switches): reachability, loops, hop counts and stretch against shortest paths, channel-dependency
 * (CDG) cycles per VL, and per-link route counts.
 *
 * Cost: for one destination LID the routes from all switches form an in-tree (or fail), so each
 * LID takes a few linear passes over typed arrays of the switches — O(switches) per LID: the
 * entries of 64 consecutive LIDs are copied from every LFT at once (cache-friendly), each
 * switch's entry is decoded to a channel, and the in-tree resolved: in one pass over the
 * switches by distance to the destination when the routes are shortest paths, else each route
 * followed until it meets a resolved switch (routing/verify-tree.ts); the CA LIDs of one switch
 * whose routes are all shortest paths, in batches switch by switch (routing/verify-batch.ts).
 * Plus one BFS per destination switch of CAs, for the shortest-path figures and that order (32
 * at a time: routing/verify-dist.ts).
 * Sources are CA/router ports (counted through their switch); switches are also checked as
 * sources for reachability.
 */
import type { Fabric } from '../model/fabric.js';
import { indexFabric } from './graph.js';
import { SwitchDistances } from './verify-dist.js';
import { cdgCycles, vcdgCycles, type CdgReport } from './cdg.js';
import { loadStats, summarize } from './verify-report.js';
import { LidWalker } from './verify-walk.js';
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
  /** `sl` depends only on the destination LID: the verifier asks it once per LID. */
  slByDestination?: boolean;
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
  /** Walk the CA LIDs of a switch whose routes are all shortest paths in batches, switch by
   *  switch (routing/verify-batch.ts; default true). false: LID by LID only (the same report:
   *  a witness for tests and benchmarks). */
  batch?: boolean;
}

function isResult(t: RoutingResult | ReadonlyMap<number, Uint8Array>): t is RoutingResult {
  return (t as RoutingResult).lfts instanceof Map && typeof (t as RoutingResult).engine === 'string';
}

export function verifyRoutes(fabric: Fabric, tables: RoutingResult | ReadonlyMap<number, Uint8Array>, opts: VerifyOptions = {}): VerifyReport {
  const res = isResult(tables) ? tables : undefined;
  const lftByNode = res ? res.lfts : (tables as ReadonlyMap<number, Uint8Array>);
  const sl = opts.sl ?? res?.sl;
  const slBySwitch = opts.sl ? opts.slBySourceSwitch === true : res?.slBySourceSwitch === true;
  const slByDest = opts.sl ? opts.slByDestination === true : res?.slByDestination === true;
  const sl2vl = opts.sl2vl ?? res?.sl2vl ?? Array.from({ length: 16 }, (_, i) => i);
  const byPorts = opts.sl2vlByPorts ?? (opts.sl2vl ? undefined : res?.sl2vlByPorts);
  const requireDf = opts.requireDeadlockFree ?? res?.deadlockFree ?? false;
  const doStretch = opts.stretch !== false;
  const doCdg = opts.cdg !== false;

  const ix = indexFabric(fabric);
  const { nSw, ends } = ix;
  const w = new LidWalker(ix, lftByNode, { sl, slBySwitch, slByDest, sl2vl, byPorts, doStretch, doCdg, maxFailures: opts.maxFailures ?? 50, batch: opts.batch !== false });

  // Destinations by delivering switch (one BFS per switch with CAs: the stretch figures, and the
  // order by distance that shortest-path routes share), then the LIDs of ports not attached to a
  // switch.
  const withCas: number[] = [];
  for (let T = 0; T < nSw; T++) if (ix.caCount[T]! > 0) withCas.push(T);
  const sources = Int32Array.from(withCas);
  const dists = new SwitchDistances(ix);
  for (let T = 0; T < nSw; T++) w.walkSwitch(T, ix.caCount[T]! > 0 ? dists.from(T, sources) : undefined);
  ends.forEach((ep, oi) => {
    if (ep.sw < 0) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) w.walk(l, -1, oi, undefined);
  });

  // CDG per VL.
  const { ch } = w;
  const depStart = ch.depStarts();
  const cdg: CdgReport[] = byPorts ? vcdgCycles(ix, ch.pairBits, depStart) : [];
  let vlsUsed = 0;
  if (byPorts) for (let v = 0; v < 16; v++) if (ch.hopVls & (1 << v)) vlsUsed++;
  for (let vl = 0; vl < 16 && !byPorts; vl++) {
    const b = ch.depBits[vl];
    if (!b) continue;
    vlsUsed++;
    cdg.push(cdgCycles(ix, vl, b, depStart, ch.vlSeen[vl]!));
  }
  if (vlsUsed === 0) vlsUsed = 1;
  const deadlockFree = cdg.every((c) => c.cyclicComponents === 0);

  const loads = ch.linkLoads();
  const h = w.hopFigures();
  const ok = w.unreachablePairs === 0 && w.unreachableFromSwitches === 0 && w.loopEntries === 0 && (!requireDf || deadlockFree);
  const report: VerifyReport = {
    ok,
    switches: nSw,
    endPorts: ends.filter((e) => !e.isSwitch).length,
    lids: w.lids,
    pairs: w.pairs,
    unreachablePairs: w.unreachablePairs,
    unreachableFromSwitches: w.unreachableFromSwitches,
    loopEntries: w.loopEntries,
    loopLids: w.loopLids,
    failureGroups: w.failureGroups,
    failures: w.failures,
    hops: { max: h.hopMax, mean: h.reached ? h.hopSum / h.reached : 0 },
    ...(doStretch ? { stretch: { max: h.stretchMax, mean: h.reached ? h.stretchSum / h.reached : 0, pairsAboveShortest: h.above } } : {}),
    cdg,
    deadlockFree,
    vlsUsed,
    linkLoad: loadStats(loads.routes),
    lftPortLoad: loadStats(loads.lids),
    summary: [],
  };
  report.summary = summarize(report, requireDf);
  return report;
}

/** What-if (issue #33 item 3), pure: fail each case (a link, a switch, a named set: routing/
 * what-if-cases.ts) in turn and re-route as the running SM would, then judge the new tables.
 *
 * Per case, from the baseline (the tables the SM holds, over its fabric):
 *  1. the fabric once the case has failed (failCase: the links down, the switches gone, what is no
 *     longer reachable from the SM's node dropped, LIDs as they were);
 *  2. the re-route the SM's local sweep (sm/local-sweep.ts) does: the incremental re-route
 *     (routing/incremental.ts) from the baseline, back to the intact routing where it works, when
 *     the change is local (no switch gone: a switch that does not answer makes the SM sweep in
 *     full; at most `maxLocalChanges` links down); else, or when its guarantees do not hold, the
 *     configured engine chain in full (routeWithFallback, then the deadlock-free fallback as the SM
 *     does when none applies);
 *  3. the judgement: the LFT blocks (64 entries) and entries that differ from the baseline's, by
 *     switch GUID; the end ports and LIDs lost (dropped with what failed), and the CA→LID pairs
 *     no longer routed; the verifier's report (routing/verify.ts: reachability, loops, deadlock
 *     freedom, busiest link, hops and stretch against the baseline's). With `verify: 'fast'`, an
 *     incremental re-route that dropped nothing is judged by its own guarantees instead (every
 *     touched column walked to its destination, the channel dependencies checked when the engine
 *     claimed deadlock freedom on one VL, the busiest link from the load it keeps): no hop figures,
 *     O(changed columns) instead of O(switches × LIDs).
 * The cases run one at a time from a generator (`whatIfSteps`): a caller can give the event loop
 * back between two of them. */
import type { Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { rerouteIncremental, intactRouting, type IntactRouting } from './incremental.js';
import { cachedLoads } from './incremental-load.js';
import { releaseScratch } from './incremental-columns.js';
import { DEADLOCK_FREE_FALLBACK, routeWithFallback } from './registry.js';
import { NO_ROUTE, RoutingError, RoutingNotApplicable, type RoutingOptions, type RoutingResult } from './types.js';
import { verifyRoutes, type VerifyReport } from './verify.js';
import { failCase, type WhatIfCase } from './what-if-cases.js';

export { linkCases, switchCases, parseWhatIf, failCase, WhatIfError, WHAT_IF_SYNTAX, type WhatIfCase } from './what-if-cases.js';

/** LFT entries per block (the LinearForwardingTable attribute). */
const LFT_BLOCK = 64;

export interface WhatIfOptions {
  /** The engine chain the SM routes with, and its options. */
  engines: readonly string[];
  routing: RoutingOptions;
  /** The routing incremental re-routes return to (the SM's last full re-route); default: the
   *  baseline itself. */
  intact?: IntactRouting;
  /** The SM's node GUID: what is not reachable from it is dropped. Default: the part of the
   *  fabric with the most end ports. */
  anchor?: bigint;
  /** Links down a local sweep handles (sm/local-sweep.ts LOCAL_MAX_CHANGES); more: a full re-route. */
  maxLocalChanges?: number;
  /** 'full' (default): the verifier over the whole of each case's tables; 'fast': see above. */
  verify?: 'full' | 'fast';
  /** The baseline's figures, when the caller has them already (whatIfBaseline). */
  baseline?: WhatIfBaseline;
  /** Keep each case's tables and fabric in its result (tests compare them with the SM's). */
  keepTables?: boolean;
}

export interface LftChanges {
  /** Switches with at least one entry changed, blocks and entries changed. */
  switches: number;
  blocks: number;
  entries: number;
}

export interface WhatIfCaseResult {
  case: string;
  /** How the SM would re-route: incrementally, or the engine chain in full (and why). */
  reroute: 'incremental' | 'full';
  why?: string;
  engine: string;
  /** End ports (CA/router ports with a LID) dropped with what failed, and their LIDs. */
  lostEndPorts: number;
  lostLids: number;
  /** CA→LID pairs routed before and not after (an end port dropped, or no longer reached); pairs
   *  toward the LIDs of switches that went are not counted. */
  lostPairs: number;
  /** Verified: every remaining pair reached, no loop, deadlock-free where the engine claims it. */
  ok: boolean;
  deadlockFree: boolean;
  /** verify 'fast' with an engine that does not claim deadlock freedom: not checked. */
  deadlockUnchecked?: true;
  unreachablePairs: number;
  loopEntries: number;
  /** CA-to-CA routes on the busiest directed switch-to-switch link. */
  busiestLink: number;
  /** Hops and stretch over the CA-to-CA pairs (absent with verify 'fast'). */
  hops?: { max: number; mean: number };
  stretch?: { max: number; mean: number };
  lft: LftChanges;
  /** The verifier's report (verify 'full'). */
  report?: VerifyReport;
  ms: number;
  /** With keepTables. */
  fabric?: Fabric;
  routing?: RoutingResult;
}

export interface WhatIfBaseline {
  engine: string;
  switches: number;
  endPorts: number;
  pairs: number;
  busiestLink: number;
  hops: { max: number; mean: number };
  stretch: { max: number; mean: number };
  deadlockFree: boolean;
}

export interface WhatIfSummary {
  baseline: WhatIfBaseline;
  cases: number;
  incremental: number;
  full: number;
  /** Cases whose tables fail verification (pairs lost, loops, or not deadlock-free when claimed). */
  failed: number;
  /** Cases that lose CA→LID pairs. */
  losing: number;
  /** The worst cases (up to `WORST` each), by pairs lost, busiest link, mean hops, LFT blocks. */
  worst: { lostPairs: WorstCase[]; busiestLink: WorstCase[]; meanHops: WorstCase[]; lftBlocks: WorstCase[] };
  ms: number;
}

export interface WorstCase {
  case: string;
  value: number;
}

/** Worst cases kept per figure. */
export const WORST = 5;

/** The baseline's figures (the verifier over the tables as they are). */
export function whatIfBaseline(fabric: Fabric, routing: RoutingResult, report = verifyRoutes(fabric, routing)): WhatIfBaseline {
  return { engine: routing.engine, switches: report.switches, endPorts: report.endPorts, pairs: report.pairs, busiestLink: report.linkLoad.max, hops: report.hops, stretch: { max: report.stretch?.max ?? 0, mean: report.stretch?.mean ?? 0 }, deadlockFree: report.deadlockFree };
}

/** `routing` over `fabric` as the intact routing: from the load a re-route or the SM's own intact
 *  routing kept with it when there is one (nothing recomputed), else computed and kept with it
 *  (routing/incremental.ts intactRouting: the same figures the SM would keep). */
export function intactOf(fabric: Fabric, routing: RoutingResult): IntactRouting {
  const kept = cachedLoads(routing);
  if (!kept) return intactRouting(fabric, routing);
  let busiestLink = 0;
  for (const v of kept.load) if (v > busiestLink) busiestLink = v;
  return { fabric, routing, busiestLink };
}

/** LFT entries and blocks of `after` that differ from `before`, by switch GUID (a switch that
 *  left the fabric is not counted: nothing is written to it; a missing entry is NO_ROUTE). */
export function lftChanges(beforeFabric: Fabric, before: RoutingResult, afterFabric: Fabric, after: RoutingResult): LftChanges {
  const prev = new Map<bigint, Uint8Array>();
  for (const [n, t] of before.lfts) prev.set(beforeFabric.nodes[n]!.guid, t);
  const out: LftChanges = { switches: 0, blocks: 0, entries: 0 };
  for (const [n, t] of after.lfts) {
    const p = prev.get(afterFabric.nodes[n]!.guid);
    // A table shared with the baseline (what-if: every entry stays) is not compared.
    if (p === t || (p && p.length === t.length && Buffer.compare(p, t) === 0)) continue;
    let any = false;
    const len = Math.max(t.length, p?.length ?? 0);
    const at = (x: Uint8Array | undefined, l: number): number => (x && l < x.length ? x[l]! : NO_ROUTE);
    const plain = p !== undefined && p.length === t.length;
    for (let b = 0; b < len; b += LFT_BLOCK) {
      let diff = 0;
      const end = Math.min(b + LFT_BLOCK, len);
      if (plain) for (let l = b; l < end; l++) diff += t[l] !== p[l] ? 1 : 0;
      else for (let l = b; l < end; l++) diff += at(t, l) !== at(p, l) ? 1 : 0;
      if (!diff) continue;
      any = true;
      out.blocks++;
      out.entries += diff;
    }
    if (any) out.switches++;
  }
  return out;
}

/** Route `fabric` with the chain, then the deadlock-free fallback when none of it applies (as the
 *  SM's sweeper does). */
function routeFull(fabric: Fabric, o: WhatIfOptions): { result: RoutingResult; engine: string } {
  try {
    return routeWithFallback(fabric, o.engines, o.routing);
  } catch (e) {
    if (!(e instanceof RoutingNotApplicable) || (o.engines.length === 1 && o.engines[0] === DEADLOCK_FREE_FALLBACK)) throw e;
    return routeWithFallback(fabric, [DEADLOCK_FREE_FALLBACK], o.routing);
  }
}

/** One case: the fabric failed, re-routed as the SM would, judged. */
export function whatIfCase(fabric: Fabric, routing: RoutingResult, base: WhatIfBaseline, c: WhatIfCase, o: WhatIfOptions & { intact: IntactRouting }, now: () => number = () => 0): WhatIfCaseResult {
  const t0 = now();
  const failed = failCase(fabric, c, o.anchor);
  const nf = failed.fabric;
  const droppedEnds = failed.dropped.filter((n) => n.type !== NodeType.Switch).reduce((k, n) => k + n.ports.filter((p) => p?.lid).length, 0);
  const droppedSwitchLids = failed.dropped.filter((n) => n.type === NodeType.Switch).reduce((k, n) => k + (n.ports[0]?.lid ? 1 << (n.ports[0].lmc ?? 0) : 0), 0);
  const lostLids = failed.dropped.reduce((k, n) => k + n.ports.reduce((m, p) => m + (p?.lid ? 1 << (p.lmc ?? 0) : 0), 0), 0);
  let reroute: WhatIfCaseResult['reroute'] = 'incremental';
  let why: string | undefined;
  let result: RoutingResult;
  let engine: string;
  let inc: ReturnType<typeof rerouteIncremental> | undefined;
  if (c.nodes.length) why = 'a switch that goes does not answer: the SM sweeps in full';
  else if (failed.downLinks > (o.maxLocalChanges ?? 16)) why = `${failed.downLinks} links down (more than ${o.maxLocalChanges ?? 16}): the SM sweeps in full`;
  else {
    inc = rerouteIncremental(fabric, routing, nf, { intact: o.intact, whatIf: true });
    if (!inc.ok) why = inc.reason;
  }
  if (inc?.ok) {
    result = inc.result;
    engine = result.engine;
  } else {
    reroute = 'full';
    let r: ReturnType<typeof routeFull>;
    try {
      r = routeFull(nf, o);
    } catch (e) {
      // No engine routes what is left (nor the fallback): the case says so, the others go on.
      if (!(e instanceof RoutingError)) throw e;
      const none: WhatIfCaseResult = { case: c.name, reroute, why: `no engine routes the fabric left: ${e.message}`, engine: 'none', lostEndPorts: droppedEnds, lostLids, lostPairs: base.pairs, ok: false, deadlockFree: false, unreachablePairs: 0, loopEntries: 0, busiestLink: 0, lft: { switches: 0, blocks: 0, entries: 0 }, ms: now() - t0 };
      return none;
    }
    result = r.result;
    engine = r.engine;
  }
  const lft = lftChanges(fabric, routing, nf, result);
  const fast = o.verify === 'fast' && inc?.ok === true && failed.dropped.length === 0;
  let out: WhatIfCaseResult;
  if (fast) {
    const s = inc!.ok ? inc!.stats : undefined;
    out = { case: c.name, reroute, engine, lostEndPorts: 0, lostLids: 0, lostPairs: 0, ok: true, deadlockFree: result.deadlockFree === true, ...(result.deadlockFree === true ? {} : { deadlockUnchecked: true as const }), unreachablePairs: 0, loopEntries: 0, busiestLink: s?.busiestLink ?? 0, lft, ms: 0 };
  } else {
    const report = verifyRoutes(nf, result);
    // Pairs toward the LIDs of switches that went are not counted (only management traffic goes
    // there, and it goes with them); pairs from and to end ports dropped are.
    const lostPairs = base.pairs - report.pairs - droppedSwitchLids * report.endPorts + report.unreachablePairs;
    out = { case: c.name, reroute, engine, lostEndPorts: droppedEnds, lostLids, lostPairs, ok: report.ok, deadlockFree: report.deadlockFree, unreachablePairs: report.unreachablePairs, loopEntries: report.loopEntries, busiestLink: report.linkLoad.max, hops: report.hops, ...(report.stretch ? { stretch: { max: report.stretch.max, mean: report.stretch.mean } } : {}), lft, report, ms: 0 };
  }
  if (why !== undefined) out.why = why;
  if (o.keepTables) Object.assign(out, { fabric: nf, routing: result });
  out.ms = now() - t0;
  return out;
}

/** The cases in turn, one result per step; returns the summary. `now` (ms) times each case. */
export function* whatIfSteps(fabric: Fabric, routing: RoutingResult, cases: readonly WhatIfCase[], o: WhatIfOptions, now: () => number = () => 0): Generator<WhatIfCaseResult, WhatIfSummary, void> {
  const t0 = now();
  // The baseline is not modified (each case works on its own copy); as intact routing it keeps the
  // load and dependencies the incremental re-routes start from (as the SM's does).
  const intact = o.intact ?? intactOf(fabric, routing);
  const base = o.baseline ?? whatIfBaseline(fabric, routing);
  const s: WhatIfSummary = { baseline: base, cases: 0, incremental: 0, full: 0, failed: 0, losing: 0, worst: { lostPairs: [], busiestLink: [], meanHops: [], lftBlocks: [] }, ms: 0 };
  const worst = (list: WorstCase[], name: string, value: number, floor: number): void => {
    if (!(value > floor)) return;
    list.push({ case: name, value });
    list.sort((a, b) => b.value - a.value);
    if (list.length > WORST) list.pop();
  };
  try {
    for (const c of cases) {
      const r = whatIfCase(fabric, routing, base, c, { ...o, intact }, now);
      s.cases++;
      s[r.reroute]++;
      if (!r.ok) s.failed++;
      if (r.lostPairs > 0) s.losing++;
      worst(s.worst.lostPairs, r.case, r.lostPairs, 0);
      worst(s.worst.busiestLink, r.case, r.busiestLink, base.busiestLink);
      if (r.hops) worst(s.worst.meanHops, r.case, r.hops.mean, base.hops.mean);
      worst(s.worst.lftBlocks, r.case, r.lft.blocks, 0);
      yield r;
    }
  } finally {
    // The column buffer the cases shared (incremental.ts, what-if mode) is not kept with the
    // routing (the running SM's).
    releaseScratch(routing);
  }
  s.ms = now() - t0;
  return s;
}

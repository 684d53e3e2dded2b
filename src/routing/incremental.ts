/** Incremental re-routing (pure): after a local change of the fabric (a link down or back up),
 * keep every (switch, destination LID) entry whose route still reaches its destination and
 * re-route only the destinations whose routes crossed what failed.
 *
 * Per destination LID the LFT entries of all switches form an in-tree toward the switch that
 * delivers the LID. For each LID, in order:
 *  1. the intact routing's column (the last full re-route, remembered by the caller) is used as it
 *     was when every switch's route in it works again: a link that comes back restores exactly the
 *     intact tables, with no churn in between;
 *  2. otherwise the previous column is kept where it works; where only switches whose own entry
 *     is dead need to move (a detour to a neighbour whose route works, the switches behind them
 *     keeping their entries) and the busiest link stays within the bound, they alone move;
 *  3. otherwise the switches whose route is broken (a
 *     dead port, a loop, a path through another broken switch) are re-routed by a multi-source
 *     shortest-path search from the intact part of the tree: each broken switch takes, among its
 *     neighbours closest to the destination, the port with the fewest CA destinations so far (the
 *     balancing of OpenSM's minhop). Every broken switch points to a strictly closer switch and
 *     the kept part does not cross a broken one, so the result is loop-free by construction.
 * The result is then verified (routing/verify.ts: reachability, loops, the CDG per VL when the
 * engine claimed deadlock freedom) and its busiest link compared with the intact fabric's; when a
 * guarantee does not hold the caller falls back to a full re-route of its engine chain.
 *
 * Tables are matched by switch GUID, so nodes that left the fabric (a host whose cable went down)
 * do not confuse the numbering. */
import type { Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { indexFabric, fmtGuid, type FabricIndex } from './graph.js';
import { NO_ROUTE, RoutingNotApplicable, type RoutingResult } from './types.js';
import { verifyRoutes, type VerifyReport } from './verify.js';
import type { CdgReport } from './cdg.js';
import { channelsKept, columnReader, columnsOf, countDiffering, keepColumns, lidGuids, markDiffering, nodeIndexByGuid, ownersChanged, scratchColumns, tablesByGuid, writeColumn } from './incremental-columns.js';
import { cachedDeps, cyclesReason, incrementalCdg, keepDeps, singleVlCdg, type DepCounts } from './incremental-cdg.js';
import { addsNoCycle, hasCycle } from './incremental-cdg-delta.js';
import { InternalError } from '../util/errors.js';
import { cachedLoads, keepLoads, remapLoads } from './incremental-load.js';
import { deltaLoads } from './incremental-load-delta.js';
import { derivedFrom, indexLinksDown } from './incremental-index.js';
import { ColumnRepair } from './incremental-repair.js';
import type { IncrementalOptions, IncrementalOutcome, IncrementalStats } from './incremental-types.js';
import { ColumnWalk, cutEntries, wholeColumns } from './incremental-walk.js';

export { singleVlCdg };
export type { IntactRouting, IncrementalOptions, IncrementalOutcome, IncrementalStats } from './incremental-types.js';
export { intactRouting, rehearse, rehearsalSteps, routesPerLink } from './incremental-intact.js';

/**
 * Re-route `fabric` from `prev` (the tables programmed over `prevFabric`). Returns the new routing
 * or why the guarantees cannot be kept (the caller then runs its full engine chain).
 */
export function rerouteIncremental(prevFabric: Fabric, prev: RoutingResult, fabric: Fabric, opts: IncrementalOptions = {}): IncrementalOutcome {
  // Detours turn down then up; two of them (a switch LID's detour, a CA LID's) can close a
  // channel-dependency cycle: tried again with switch LIDs repaired in full, then without CA
  // detours, then without any.
  let out = reroute(prevFabric, prev, fabric, opts);
  const cyclic = (o: Outcome): boolean => !o.ok && o.reason.includes('channel-dependency cycles');
  if (cyclic(out) && out.detours > 0 && opts.detourSwitchLids !== false) out = reroute(prevFabric, prev, fabric, { ...opts, detourSwitchLids: false });
  if (cyclic(out) && out.detours > 0) out = reroute(prevFabric, prev, fabric, { ...opts, detourCaLids: false });
  if (cyclic(out) && opts.detourSwitchLids !== false) out = reroute(prevFabric, prev, fabric, { ...opts, detourCaLids: false, detourSwitchLids: false });
  const { detours: _d, switchLidSwitches: _s, explain, ...outcome } = out;
  if (explain && !outcome.ok) outcome.reason = explain();
  return outcome as IncrementalOutcome;
}

/** An outcome and what a retry needs: the CA detours taken, the switches whose entries toward
 * switch LIDs changed (and the switches they now lead to). */
type Outcome = IncrementalOutcome & { detours: number; switchLidSwitches: Set<number>; explain?: () => string };

/** One re-route, in phases: the inputs (the fabric's index and the previous tables by switch:
 * `start`), the columns that can need work (`touchedColumns`), each touched column restored, kept
 * or repaired (`routeColumn`), the tables (`tables`), and the guarantees checked (`check`). The
 * fields are the state the phases share. */
class Reroute {
  private readonly W: number;
  private readonly prevLids: Map<number, bigint>;
  private readonly intactT: (Uint8Array | undefined)[] | undefined;
  private readonly intactLids: Map<number, bigint> | undefined;
  /** Per LID: 1 when its column can need work (every other column is the previous one as it was). */
  private readonly touch: Uint8Array;
  /** Column-major (LID × switch) readers of the previous and the intact tables. */
  private readonly readPrev: (l: number, out: Uint8Array) => void;
  private readonly readIntact: ((l: number, out: Uint8Array) => void) | undefined;
  private readonly pcol: Uint8Array;
  private readonly icol: Uint8Array;
  /** The tables being built, column-major; the previous ones to start with. */
  private readonly outCM: Uint8Array;
  private readonly cw: ColumnWalk;
  private readonly repair: ColumnRepair;
  /** `outCM` holds the touched columns only (what-if: see the constructor). */
  private readonly partial: boolean;
  /** Whether `load` and `counters` hold the tables as they stand (ensureLoads). */
  private loaded = false;
  /** `ensureLoads` left the walk's column as it was (the loads from the changed entries). */
  private loadsByDelta = false;
  /** The intact routing is the previous one (its columns are the previous ones). */
  private readonly intactIsPrev: boolean;
  /** What-if, the intact routing the previous one, links gone only: per LID its switch + 1 when
   *  every route of the previous column reached it, and the entries whose channel went (a walk
   *  of such a column searches back from those: ColumnWalk.walkCut). */
  private readonly cut: { sw: Int32Array; port: Int32Array; whole: Int32Array } | undefined;
  /** The broken switches restoreIntact's walk found in the column it left, or -1 (no walk). */
  private intactBroken = -1;
  /** Partial: the touched entries (LID × switches + switch) that differ from the previous ones. */
  private readonly diffs: number[] = [];
  private changedEntries = 0;
  private reroutedLids = 0;
  private restoredLids = 0;
  /** Touched columns kept as they were (the intact one did not work, the previous one does). */
  private keptLids = 0;

  private constructor(
    private readonly ix: FabricIndex,
    private readonly prevFabric: Fabric,
    private readonly prev: RoutingResult,
    private readonly fabric: Fabric,
    private readonly opts: IncrementalOptions,
    private readonly prevT: Uint8Array[],
  ) {
    const { nSw, maxLid } = ix;
    this.W = ix.maxPorts + 1;
    const intact = opts.intact;
    if (intact) {
      const by = tablesByGuid(intact.fabric, intact.routing);
      this.intactT = ix.swGuid.map((g) => by.get(g));
      this.intactLids = lidGuids(intact.fabric);
    }
    this.prevLids = lidGuids(prevFabric);
    this.intactIsPrev = intact !== undefined && intact.routing === prev && intact.fabric === prevFabric;
    this.touch = this.touchedColumns();
    const intactT = this.intactT;
    this.readPrev = columnReader(columnsOf(prevFabric, prev), ix.swGuid);
    this.readIntact = intactT && intactT.every((t) => t !== undefined) ? columnReader(columnsOf(intact!.fabric, intact!.routing), ix.swGuid) : undefined;
    this.pcol = new Uint8Array(nSw);
    this.icol = new Uint8Array(nSw);
    const pc = columnsOf(prevFabric, prev);
    const same = pc.maxLid === maxLid && pc.guids.length === nSw && pc.guids.every((g, i) => g === ix.swGuid[i]);
    // A what-if result reads only its touched columns (the loads and dependencies kept, the tables
    // the previous ones): the others are not copied, and the buffer is the one the previous
    // routing's cases share (nothing reads a column not touched, nor keeps it).
    const singleVl = prev.deadlockFree === true && !prev.sl && (prev.vlsUsed ?? 1) <= 1;
    this.partial = opts.whatIf === true && same && cachedLoads(prev) !== undefined && (!singleVl || cachedDeps(prev) !== undefined) && prevT.every((t) => t.length === maxLid + 1);
    this.outCM = this.partial ? scratchColumns(prev, (maxLid + 1) * nSw) : new Uint8Array((maxLid + 1) * nSw);
    if (this.partial) {
      for (let l = 0; l <= maxLid; l++) if (this.touch[l]) this.outCM.set(pc.cm.subarray(l * nSw, l * nSw + nSw), l * nSw);
    } else if (same) this.outCM.set(pc.cm);
    else for (let l = 0; l <= maxLid; l++) this.readPrev(l, this.outCM.subarray(l * nSw, l * nSw + nSw));
    this.cw = new ColumnWalk(ix);
    const kept = this.partial && this.intactIsPrev ? cachedLoads(prev)!.ix : undefined;
    const ch = kept && kept.maxLid === maxLid ? channelsKept(kept, ix) : undefined;
    this.cut = ch ? { ...cutEntries(kept!, ch.newOf), whole: wholeColumns(prev, kept!, columnReader(pc, kept!.swGuid)) } : undefined;
    this.repair = new ColumnRepair(ix, this.cw, (opts.balanceFactor ?? 1.2) * (opts.intact?.busiestLink ?? Infinity));
  }

  /** The inputs: the fabric's index and every switch's previous table, or the outcome that says
   *  why there are none. */
  static start(prevFabric: Fabric, prev: RoutingResult, fabric: Fabric, opts: IncrementalOptions): Reroute | Outcome {
    const refused = (reason: string): Outcome => ({ ok: false, reason, detours: 0, switchLidSwitches: new Set() });
    let ix: FabricIndex;
    try {
      // What-if: from the previous fabric's index where the case only took links down.
      const base = opts.whatIf ? cachedLoads(prev)?.ix : undefined;
      ix = (base?.fabric === prevFabric ? indexLinksDown(base, fabric) : undefined) ?? indexFabric(fabric);
    } catch (e) {
      if (e instanceof RoutingNotApplicable) return refused(e.reason);
      throw e;
    }
    const prevBy = tablesByGuid(prevFabric, prev);
    const prevT: Uint8Array[] = [];
    for (let s = 0; s < ix.nSw; s++) {
      const t = prevBy.get(ix.swGuid[s]!);
      if (!t) return refused(`switch ${fmtGuid(ix.swGuid[s]!)} has no previous table (new switch)`);
      prevT.push(t);
    }
    return new Reroute(ix, prevFabric, prev, fabric, opts, prevT);
  }

  /** The outcome with what a retry needs. */
  private done(o: IncrementalOutcome & { explain?: () => string }): Outcome {
    return { ...o, detours: this.repair.detours, switchLidSwitches: this.repair.switchLidSwitches };
  }

  /** The columns that can need work: an entry on a port that no longer leads where it led, a LID
   *  whose owner changed, a column where the intact routing differs from the previous one. */
  private touchedColumns(): Uint8Array {
    const { ix, prevFabric, fabric, prevT, W } = this;
    const { nSw, maxLid, lidOwner, ends } = ix;
    const touch = new Uint8Array(maxLid + 1);
    const prevIdx = nodeIndexByGuid(prevFabric);
    const deadPort = new Uint8Array(W);
    // An index derived from the previous fabric's: the same numbering, a node not copied is as it was.
    const derived = derivedFrom(ix) === prevFabric;
    for (let s = 0; s < nSw; s++) {
      const cur = fabric.nodes[ix.swNode[s]!]!;
      if (derived && cur === prevFabric.nodes[ix.swNode[s]!]) continue;
      const was = prevFabric.nodes[prevIdx.get(ix.swGuid[s]!)!]!;
      deadPort.fill(0);
      let any = false;
      for (let p = 1; p < was.ports.length && p < W; p++) {
        const a = was.ports[p]?.peer;
        if (!a || prevFabric.nodes[a.node]!.type !== NodeType.Switch) continue; // a CA leaving changes its LID's owner
        const b = cur.ports[p]?.peer;
        if (!b || fabric.nodes[b.node]!.guid !== prevFabric.nodes[a.node]!.guid || b.port !== a.port) {
          deadPort[p] = 1;
          any = true;
        }
      }
      if (!any) continue;
      const t = prevT[s]!;
      for (let l = 1; l < t.length && l <= maxLid; l++) if (t[l]! < W && deadPort[t[l]!]) touch[l] = 1;
    }
    for (const l of ownersChanged(this.prevLids, lidOwner, ends, derived)) touch[l] = 1;
    if (this.intactT && this.opts.intact!.routing !== this.prev) {
      for (let s = 0; s < nSw; s++) {
        const it = this.intactT[s];
        if (it) markDiffering(it, prevT[s]!, maxLid, touch);
      }
    }
    return touch;
  }

  /** The previous column of LID l into the walk's column (NO_ROUTE when its owner changed). */
  private prevCol(l: number, owner: bigint): void {
    if (this.prevLids.get(l) === owner) this.readPrev(l, this.cw.col);
    else this.cw.col.fill(NO_ROUTE);
  }

  /** The loads and counters of the tables as they stand (computed once, when a repair first
   *  needs them; a column restored before that is already in `outCM`): the previous routing's
   *  kept load without the touched columns, and the touched columns as they stand. */
  private ensureLoads(): void {
    if (this.loaded) return;
    this.loaded = true;
    const { ix, touch, outCM, cw } = this;
    const { nSw, maxLid, lidOwner, ends } = ix;
    const kept = cachedLoads(this.prev);
    // What-if: from the changed entries only (routing/incremental-load-delta.ts), where covered.
    if (kept && this.partial && deltaLoads(kept, columnReader(columnsOf(this.prevFabric, this.prev), kept.ix.swGuid), touch, ix, outCM, cw.load, cw.counters)) {
      this.loadsByDelta = true;
      return;
    }
    if (kept) remapLoads(kept, columnReader(columnsOf(this.prevFabric, this.prev), kept.ix.swGuid), touch, ix, cw.load, cw.counters);
    for (let l = 1; l <= maxLid; l++) {
      const o = lidOwner[l]!;
      if ((kept && !touch[l]) || o < 0 || ends[o]!.isSwitch || ends[o]!.sw < 0) continue;
      cw.col.set(outCM.subarray(l * nSw, l * nSw + nSw));
      cw.account(ends[o]!.sw, 1);
    }
  }

  /** Every touched column, switch LIDs first: the CA detours that follow know where their routes
   *  changed. */
  routeColumns(): void {
    const { maxLid, lidOwner, ends } = this.ix;
    const order: number[] = [];
    for (let pass = 0; pass < 2; pass++) for (let l = 1; l <= maxLid; l++) if ((lidOwner[l]! >= 0 && ends[lidOwner[l]!]!.isSwitch) === (pass === 0)) order.push(l);
    for (const l of order) this.routeColumn(l);
  }

  /** LID l's column: 1. the intact column, where its owner is the same port and every route in it
   *  works; else 2. the previous column where it works, the rest repaired (detours, then the
   *  shortest-path repair). Writes it into `outCM`, and counts what changed. */
  private routeColumn(l: number): void {
    const { ix, outCM, cw, pcol } = this;
    const { nSw, lidOwner, ends } = ix;
    const o = lidOwner[l]!;
    if (o < 0) {
      if (!this.touch[l]) return;
      if (this.partial) {
        const pcm = columnsOf(this.prevFabric, this.prev).cm;
        for (let s = 0, b = l * nSw; s < nSw; s++) if (pcm[b + s] !== NO_ROUTE) this.diffs.push(b + s);
      }
      outCM.fill(NO_ROUTE, l * nSw, l * nSw + nSw);
      return;
    }
    if (!this.touch[l]) return;
    const ep = ends[o]!;
    this.readPrev(l, pcol);
    const T = ep.sw;
    if (T < 0) return;
    const isCa = !ep.isSwitch;
    if (!this.restoreIntact(l, T, ep.guid, ep.swPort, isCa)) this.keepOrRepair(l, T, ep.guid, ep.swPort, isCa);
    const col = cw.col;
    outCM.set(col, l * nSw);
    if (!isCa) {
      for (let s = 0; s < nSw; s++) {
        if (pcol[s] === col[s]) continue;
        this.repair.switchLidSwitches.add(s);
        const e = cw.channel(s);
        if (e >= 0) this.repair.switchLidSwitches.add(ix.adjSw[e]!);
      }
    }
    if (this.partial) {
      const { diffs } = this;
      const n = diffs.length;
      for (let s = 0, b = l * nSw; s < nSw; s++) if (pcol[s] !== col[s]) diffs.push(b + s);
      this.changedEntries += diffs.length - n;
    } else this.changedEntries += countDiffering(pcol, col);
  }

  /** Step 1: the intact column into the walk's column when every route in it works (the loads
   *  moved from the previous column to it once they are kept). False: not usable (after a walk
   *  that found broken switches, `intactBroken` says how many). */
  private restoreIntact(l: number, T: number, guid: bigint, swPort: number, isCa: boolean): boolean {
    const { readIntact, icol, pcol, cw } = this;
    this.intactBroken = -1;
    if (!(readIntact && this.intactLids!.get(l) === guid && (readIntact(l, icol), icol[T] === swPort))) return false;
    cw.col.set(icol);
    const cut = this.cut;
    const broken = cut && cut.whole[l] === T + 1 ? cw.walkCut(T, cut.sw, cut.port) : cw.walk(T);
    if (broken !== 0) {
      this.intactBroken = broken;
      return false;
    }
    let differs = false;
    for (let s = 0; s < this.ix.nSw; s++) if (pcol[s] !== cw.col[s]) differs = true;
    if (differs) {
      this.restoredLids++;
      if (isCa && this.loaded) {
        this.prevCol(l, guid);
        cw.account(T, -1);
        cw.col.set(icol);
        cw.account(T, 1);
      }
    }
    return true;
  }

  /** Step 2: the previous column where it works; the broken switches by a detour where allowed
   *  and it works, else by the shortest-path repair. */
  private keepOrRepair(l: number, T: number, guid: bigint, swPort: number, isCa: boolean): void {
    const { cw, repair, opts } = this;
    const walked = this.intactBroken;
    const wasLoaded = this.loaded;
    this.ensureLoads();
    // The intact column is the previous one with T's entry: restoreIntact's walk of it stands
    // (unless ensureLoads worked in the walk's column).
    let brokenCount = walked;
    if (!(walked > 0 && this.intactIsPrev && (wasLoaded || this.loadsByDelta))) {
      this.prevCol(l, guid);
      cw.col[T] = swPort;
      brokenCount = cw.walk(T);
    }
    if (brokenCount === 0) this.keptLids++;
    if (brokenCount > 0 && !isCa && opts.detourSwitchLids !== false && repair.detour(T)) {
      this.reroutedLids++;
    } else if (brokenCount > 0 && isCa && opts.detourCaLids !== false && repair.caDetour(T)) {
      this.reroutedLids++;
    } else if (brokenCount > 0) {
      this.reroutedLids++;
      repair.repair(T, l, isCa ? 1 : 0);
    }
  }

  /** The tables: the previous ones where every column is (copied), the touched columns written;
   *  switch LIDs delivered at their switch. Entries of LIDs that left the fabric count as changed
   *  where they held a route. */
  tables(): RoutingResult {
    const { ix, prevT, outCM, touch, prev } = this;
    const { nSw, maxLid, ends, lidOwner } = ix;
    const copy = prevT.every((t) => t.length === maxLid + 1);
    // What-if: a switch whose entries all stay shares the previous table (the writes below write
    // what it holds).
    const changed = this.partial ? this.changedSwitches() : undefined;
    const tables = Array.from({ length: nSw }, (_, s) => (changed && !changed[s] ? prevT[s]! : copy ? prevT[s]!.slice() : new Uint8Array(maxLid + 1)));
    if (changed) this.writeChanged(tables);
    else for (let l = 0; l <= maxLid; l++) if (!copy || touch[l]) writeColumn(tables, outCM, l);
    for (const e of ends) {
      if (!e.isSwitch || e.sw < 0) continue;
      tables[e.sw]![e.lid] = 0;
      outCM[e.lid * nSw + e.sw] = 0;
    }
    const gone: number[] = [];
    for (let l = 1, top = Math.max(maxLid, ...prevT.map((t) => t.length - 1)); l <= top; l++) if (l > maxLid || lidOwner[l]! < 0) gone.push(l);
    for (const t of prevT) for (const l of gone) if (l < t.length && t[l] !== NO_ROUTE) this.changedEntries++;
    const lfts = new Map<number, Uint8Array>();
    tables.forEach((t, s) => lfts.set(ix.swNode[s]!, t));
    const roots = prev.roots;
    const result: RoutingResult = {
      engine: prev.engine,
      lfts,
      maxLid,
      ...(prev.sl ? { sl: prev.sl } : {}),
      ...(prev.vlsUsed !== undefined ? { vlsUsed: prev.vlsUsed } : {}),
      ...(prev.sl2vl ? { sl2vl: prev.sl2vl } : {}),
      ...(prev.sl2vlByPorts ? { sl2vlByPorts: prev.sl2vlByPorts } : {}),
      ...(prev.deadlockFree !== undefined ? { deadlockFree: prev.deadlockFree } : {}),
      ...(roots ? { roots } : {}),
      notes: [...ix.warnings, `incremental: ${this.reroutedLids} LIDs re-routed, ${this.restoredLids} restored, ${this.changedEntries} entries changed`],
    };
    if (!this.partial) keepColumns(result, { guids: [...ix.swGuid], cm: outCM, maxLid });
    return result;
  }

  /** Per switch: 1 when a touched column or its own LID's delivery changes its table (partial:
   *  the previous tables are the previous columns, in the same order). */
  private changedSwitches(): Uint8Array {
    const { ix, prevT } = this;
    const nSw = ix.nSw;
    const changed = new Uint8Array(nSw);
    for (const i of this.diffs) changed[i % nSw] = 1;
    for (const e of ix.ends) if (e.isSwitch && e.sw >= 0 && prevT[e.sw]![e.lid] !== 0) changed[e.sw] = 1;
    return changed;
  }

  /** Partial: the touched entries that differ into the tables (the others hold them already). */
  private writeChanged(tables: Uint8Array[]): void {
    const { outCM } = this;
    const nSw = this.ix.nSw;
    for (const i of this.diffs) tables[i % nSw]![(i - (i % nSw)) / nSw] = outCM[i]!;
  }

  /** Guarantees. Every column touched was walked to its destination from every switch that can
   *  reach it (or repaired until it was); the others are the previous ones over links that are
   *  still there: loop-free and complete by construction. Back to the intact routing (every
   *  touched column restored), the intact routing's verification holds. Otherwise the link load is
   *  the one maintained above and, where the engine claimed deadlock freedom, the channel
   *  dependencies are checked again (routing/verify.ts). Keeps what the next re-route starts from. */
  check(result: RoutingResult): Outcome {
    const { opts, prev } = this;
    const intact = opts.intact;
    const factor = opts.balanceFactor ?? 1.2;
    const backToIntact = this.readIntact !== undefined && this.reroutedLids === 0 && this.keptLids === 0;
    let busiestLink = intact?.busiestLink ?? 0;
    if (!backToIntact) {
      this.ensureLoads();
      busiestLink = 0;
      for (const v of this.cw.load) if (v > busiestLink) busiestLink = v;
    }
    const stats: IncrementalStats = { changedEntries: this.changedEntries, reroutedLids: this.reroutedLids, restoredLids: this.restoredLids, busiestLink, intactBusiestLink: intact?.busiestLink ?? 0 };
    let report: VerifyReport | undefined;
    let deps: DepCounts | undefined;
    if (!backToIntact && prev.deadlockFree === true && !prev.sl && (prev.vlsUsed ?? 1) <= 1) {
      const cdg = this.singleVlDeps();
      // What-if, cycles known: the example (incrementalCdg's) only for the outcome that is shown.
      if (cdg === 'cycles') return this.done({ ok: false, reason: cyclesReason(), stats, explain: () => cyclesReason(this.exampleCycle()) });
      deps = cdg.deps;
      if (cdg.report.cyclicComponents > 0) return this.done({ ok: false, reason: cyclesReason(cdg.report.exampleCycle), stats });
    } else if (!backToIntact && prev.deadlockFree === true) {
      report = verifyRoutes(this.fabric, result, { stretch: false, requireDeadlockFree: true });
      if (!report.ok) {
        const why = report.loopEntries ? `${report.loopEntries} looping entries` : report.unreachablePairs || report.unreachableFromSwitches ? `${report.unreachablePairs} CA pairs and ${report.unreachableFromSwitches} switch routes unreachable` : 'channel-dependency cycles (not deadlock-free)';
        return this.done({ ok: false, reason: `incremental re-route rejected: ${why}`, stats, report });
      }
    }
    if (intact && intact.busiestLink > 0 && busiestLink > factor * intact.busiestLink) {
      return this.done({ ok: false, reason: `incremental re-route rejected: busiest link ${busiestLink} routes > ${factor} × intact ${intact.busiestLink}`, stats, ...(report ? { report } : {}) });
    }
    // What the next re-route starts from: this one's load and dependencies (the intact ones when
    // back to the intact tables).
    const intactLoads = backToIntact ? cachedLoads(intact!.routing) : undefined;
    const intactDeps = backToIntact ? cachedDeps(intact!.routing) : undefined;
    if (this.loaded) keepLoads(result, { ix: this.ix, load: this.cw.load, counters: this.cw.counters });
    else if (intactLoads) keepLoads(result, intactLoads);
    if (deps) keepDeps(result, deps);
    else if (intactDeps) keepDeps(result, intactDeps);
    return this.done({ ok: true, result, stats, ...(report ? { report } : {}) });
  }

  /** One VL: the channel dependencies of the CA sources' routes, checked for cycles (from the
   *  previous routing's kept dependencies when there are some). */
  private singleVlDeps(): { report: CdgReport; deps?: DepCounts } | 'cycles' {
    const kept = cachedDeps(this.prev);
    if (!kept) return { report: singleVlCdg(this.ix, this.outCM) };
    const read = columnReader(columnsOf(this.prevFabric, this.prev), kept.ix.swGuid);
    // A result no re-route starts from: only what the touched columns add is searched (the
    // dependencies are not counted, nor kept); when that may close a cycle, whether one closes
    // (an attempt with cycles that is tried again never shows its example).
    if (this.opts.whatIf) {
      const none = { report: { vl: 0, dependencies: 0, cyclicComponents: 0, channelsInCycles: 0 } };
      if (addsNoCycle(kept, read, this.touch, this.ix, this.outCM)) return none;
      const cycles = hasCycle(kept, read, this.touch, this.ix, this.outCM);
      if (cycles !== undefined) return cycles ? 'cycles' : none;
    }
    return this.exactCdg();
  }

  /** The example of the cycles hasCycle found (the exact check's). */
  private exampleCycle(): string[] | undefined {
    const { report } = this.exactCdg();
    if (!(report.cyclicComponents > 0)) throw new InternalError('incremental re-route: the exact one-VL check finds no cycle where hasCycle found one');
    return report.exampleCycle;
  }

  /** The one-VL check from the previous routing's kept dependencies, with its report. */
  private exactCdg(): { report: CdgReport; deps: DepCounts } {
    const kept = cachedDeps(this.prev)!;
    const inc = incrementalCdg(kept, columnReader(columnsOf(this.prevFabric, this.prev), kept.ix.swGuid), this.touch, this.ix, this.outCM);
    return { report: inc.report, deps: inc.deps };
  }
}

function reroute(prevFabric: Fabric, prev: RoutingResult, fabric: Fabric, opts: IncrementalOptions): Outcome {
  const r = Reroute.start(prevFabric, prev, fabric, opts);
  if (!(r instanceof Reroute)) return r;
  r.routeColumns();
  return r.check(r.tables());
}

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
import { columnReader, columnsOf, countDiffering, keepColumns, lidGuids, markDiffering, routeEnd, tablesByGuid, writeColumn } from './incremental-columns.js';
import { cachedDeps, incrementalCdg, keepDeps, singleVlCdg, type DepCounts } from './incremental-cdg.js';
import { cachedLoads, keepLoads, remapLoads } from './incremental-load.js';
import type { IncrementalOptions, IncrementalOutcome, IncrementalStats } from './incremental-types.js';

export { singleVlCdg };
export type { IntactRouting, IncrementalOptions, IncrementalOutcome, IncrementalStats } from './incremental-types.js';
export { intactRouting, rehearse, rehearsalSteps, routesPerLink } from './incremental-intact.js';

const UNKNOWN = 0;
const BUSY = 1;
const GOOD = 2;
const BROKEN = 3;

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
  const { detours: _d, switchLidSwitches: _s, ...outcome } = out;
  return outcome as IncrementalOutcome;
  return out;
}

/** An outcome and what a retry needs: the CA detours taken, the switches whose entries toward
 * switch LIDs changed (and the switches they now lead to). */
type Outcome = IncrementalOutcome & { detours: number; switchLidSwitches: Set<number> };

function reroute(prevFabric: Fabric, prev: RoutingResult, fabric: Fabric, opts: IncrementalOptions): Outcome {
  const done = (o: IncrementalOutcome): Outcome => ({ ...o, detours, switchLidSwitches });
  let detours = 0;
  const switchLidSwitches = new Set<number>();
  let ix: FabricIndex;
  try {
    ix = indexFabric(fabric);
  } catch (e) {
    if (e instanceof RoutingNotApplicable) return done({ ok: false, reason: e.reason });
    throw e;
  }
  const { nSw, adjStart, adjSw, adjPort, adjReverse, portEntry, ends, lidOwner, maxLid } = ix;
  const W = ix.maxPorts + 1;
  const prevBy = tablesByGuid(prevFabric, prev);
  const prevT: Uint8Array[] = [];
  for (let s = 0; s < nSw; s++) {
    const t = prevBy.get(ix.swGuid[s]!);
    if (!t) return done({ ok: false, reason: `switch ${fmtGuid(ix.swGuid[s]!)} has no previous table (new switch)` });
    prevT.push(t);
  }
  const intact = opts.intact;
  let intactT: (Uint8Array | undefined)[] | undefined;
  let intactLids: Map<number, bigint> | undefined;
  if (intact) {
    const by = tablesByGuid(intact.fabric, intact.routing);
    intactT = ix.swGuid.map((g) => by.get(g));
    intactLids = lidGuids(intact.fabric);
  }
  const prevLids = lidGuids(prevFabric);

  // The columns that can need work: an entry on a port that no longer leads where it led, a LID
  // whose owner changed, a column where the intact routing differs from the previous one. Every
  // other column is the previous one as it was.
  const touch = new Uint8Array(maxLid + 1);
  const prevIdx = new Map(prevFabric.nodes.map((n, i) => [n.guid, i]));
  const deadPort = new Uint8Array(W);
  for (let s = 0; s < nSw; s++) {
    const was = prevFabric.nodes[prevIdx.get(ix.swGuid[s]!)!]!;
    const cur = fabric.nodes[ix.swNode[s]!]!;
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
  for (let l = 1; l <= maxLid; l++) {
    const o = lidOwner[l]!;
    if (prevLids.get(l) !== (o >= 0 ? ends[o]!.guid : undefined)) touch[l] = 1;
  }
  if (intactT && intact!.routing !== prev) {
    for (let s = 0; s < nSw; s++) {
      const it = intactT[s];
      const t = prevT[s]!;
      if (!it) continue;
      markDiffering(it, t, maxLid, touch);
    }
  }

  // Column-major (LID × switch) views of the previous and the intact tables.
  const readPrev = columnReader(columnsOf(prevFabric, prev), ix.swGuid);
  const readIntact = intactT && intactT.every((t) => t !== undefined) ? columnReader(columnsOf(intact!.fabric, intact!.routing), ix.swGuid) : undefined;
  const pcol = new Uint8Array(nSw);
  const icol = new Uint8Array(nSw);
  /** The tables being built, column-major; the previous ones to start with. */
  const outCM = new Uint8Array((maxLid + 1) * nSw);
  {
    const pc = columnsOf(prevFabric, prev);
    if (pc.maxLid === maxLid && pc.guids.length === nSw && pc.guids.every((g, i) => g === ix.swGuid[i])) outCM.set(pc.cm);
    else for (let l = 0; l <= maxLid; l++) readPrev(l, outCM.subarray(l * nSw, l * nSw + nSw));
  }
  const col = new Uint8Array(nSw);
  const caCount = ix.caCount;
  /** Follow column `col` from switch `s` toward T, calling `f` with each channel crossed; stops at
   * T, a port that leads to no switch, or after nSw hops (a loop). */
  const follow = (s: number, T: number, f: (e: number) => void): void => {
    for (let hop = 0; s !== T && hop < nSw; hop++) {
      const p = col[s]!;
      const e = p > 0 && p < W ? portEntry[s * W + p]! : -1;
      if (e < 0) return;
      f(e);
      s = adjSw[e]!;
    }
  };
  // CA-to-CA routes per directed channel, as the tables being built have them (the verifier's
  // linkLoad), and CA destination LIDs per switch port (OpenSM's minhop balance counters).
  const load = new Float64Array(adjStart[nSw]!);
  const counters = new Int32Array(nSw * W);
  /** Add (sign +1) or remove (-1) the routes of the CA sources of column `col` toward T. */
  const account = (T: number, sign: number): void => {
    for (let s = 0; s < nSw; s++) {
      const p = col[s]!;
      if (s !== T && p > 0 && p < W && portEntry[s * W + p]! >= 0) counters[s * W + p]! += sign;
      const w = caCount[s]!;
      if (w && s !== T) follow(s, T, (e) => (load[e]! += sign * w));
    }
  };
  const prevCol = (l: number, owner: bigint): void => {
    const same = prevLids.get(l) === owner;
    if (same) readPrev(l, col);
    else col.fill(NO_ROUTE);
  };
  /** The loads and counters of the tables as they stand (computed once, when a repair first
   * needs them; a column restored before that is already in `tables`): the previous routing's
   * kept load without the touched columns, and the touched columns as they stand. */
  let loaded = false;
  const ensureLoads = (): void => {
    if (loaded) return;
    loaded = true;
    const kept = cachedLoads(prev);
    if (kept) remapLoads(kept, columnReader(columnsOf(prevFabric, prev), kept.ix.swGuid), touch, ix, load, counters);
    for (let l = 1; l <= maxLid; l++) {
      const o = lidOwner[l]!;
      if ((kept && !touch[l]) || o < 0 || ends[o]!.isSwitch || ends[o]!.sw < 0) continue;
      col.set(outCM.subarray(l * nSw, l * nSw + nSw));
      account(ends[o]!.sw, 1);
    }
  };

  const state = new Uint8Array(nSw);
  const dist = new Int32Array(nSw);
  const stack = new Int32Array(nSw + 1);
  /** Follow column `col` toward T from every switch; fills state (GOOD/BROKEN) and dist; returns
   * the number of broken switches. */
  const walk = (T: number): number => {
    state.fill(UNKNOWN);
    state[T] = GOOD;
    dist[T] = 0;
    let broken = 0;
    for (let s0 = 0; s0 < nSw; s0++) {
      if (state[s0] !== UNKNOWN) continue;
      let sp = 0;
      let s = s0;
      let end: number;
      for (;;) {
        state[s] = BUSY;
        stack[sp++] = s;
        const p = col[s]!;
        const e = p > 0 && p < W ? portEntry[s * W + p]! : -1;
        if (e < 0) {
          end = BROKEN;
          break;
        }
        const nx = adjSw[e]!;
        if (state[nx] === UNKNOWN) {
          s = nx;
          continue;
        }
        end = state[nx] === GOOD ? GOOD : BROKEN; // BUSY: a loop
        if (end === GOOD) dist[s] = dist[nx]! + 1;
        break;
      }
      for (let k = sp - 1; k >= 0; k--) {
        const u = stack[k]!;
        state[u] = end;
        if (end === GOOD && k < sp - 1) dist[u] = dist[stack[k + 1]!]! + 1;
        if (end === BROKEN) broken++;
      }
    }
    return broken;
  };

  /** A switch LID's column (management traffic, no weight in the link load): only the switches
   * whose own entry is dead move, each along the shortest detour to a switch whose route works
   * (the switches on the detour move with it); the switches behind them keep their entries.
   * False (nothing changed) when the detours do not give a working column. */
  const bfsFrom = new Int32Array(nSw);
  const bfsQueue = new Int32Array(nSw);
  const bfsPrev = new Int32Array(nSw);
  const detour = (T: number): boolean => {
    const dead: number[] = [];
    for (let s = 0; s < nSw; s++) {
      const p = col[s]!;
      if (state[s] === BROKEN && !(p > 0 && p < W && portEntry[s * W + p]! >= 0)) dead.push(s);
    }
    const saved = Uint8Array.from(col);
    for (const u of dead) {
      if (state[u] === GOOD) continue;
      bfsFrom.fill(-1);
      bfsFrom[u] = u;
      let head = 0;
      let tail = 0;
      bfsQueue[tail++] = u;
      let found = -1;
      while (head < tail && found < 0) {
        const x = bfsQueue[head++]!;
        for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
          const y = adjSw[e]!;
          if (bfsFrom[y]! >= 0) continue;
          bfsFrom[y] = e; // reached by channel e (x → y)
          bfsPrev[y] = x;
          if (state[y] === GOOD) {
            found = y;
            break;
          }
          bfsQueue[tail++] = y;
        }
      }
      if (found < 0) {
        col.set(saved);
        walk(T);
        return false;
      }
      for (let y = found; y !== u; ) {
        const x = bfsPrev[y]!;
        col[x] = adjPort[bfsFrom[y]!]!;
        state[x] = GOOD;
        y = x;
      }
    }
    if (walk(T) === 0) return true;
    col.set(saved);
    walk(T);
    return false;
  };

  /** A CA LID's column: each switch whose own entry is dead moves to the neighbour whose working
   * route (not through it) has the least loaded link once the traffic that reached the switch is
   * on it; the switches behind it keep their entries. False, with the column, loads and counters
   * as they were, when a dead switch has no working neighbour or the detour's busiest link would
   * carry more than `balanceFactor` times the intact busiest link. */
  const detourLimit = (opts.balanceFactor ?? 1.2) * (opts.intact?.busiestLink ?? Infinity);
  const caDetour = (T: number): boolean => {
    const saved = Uint8Array.from(col);
    const moved: { u: number; e: number; w: number }[] = [];
    const undo = (): false => {
      for (let k = moved.length - 1; k >= 0; k--) {
        const { u, e, w } = moved[k]!;
        counters[u * W + adjPort[e]!]!--;
        load[e]! -= w;
        follow(adjSw[e]!, T, (f) => (load[f]! -= w));
      }
      detours -= moved.length;
      col.set(saved);
      walk(T);
      return false;
    };
    for (let guard = 0; guard < nSw; guard++) {
      let u = -1;
      for (let s = 0; s < nSw && u < 0; s++) {
        const p = col[s]!;
        if (state[s] === BROKEN && !(p > 0 && p < W && portEntry[s * W + p]! >= 0)) u = s;
      }
      if (u < 0) return undo(); // broken by a loop, not by a dead entry
      // The CA sources whose route ends at u (all of them broken, u's own included).
      let w = 0;
      for (let s = 0; s < nSw; s++) if (caCount[s]! && state[s] === BROKEN && routeEnd(col, s, T, ix) === u) w += caCount[s]!;
      let best = -1;
      let bestCost = Infinity;
      let bestSum = Infinity;
      for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) {
        const v = adjSw[e]!;
        if (state[v] !== GOOD) continue;
        {
          // Not up into a switch where a switch LID's route changed (it may come down there and
          // up again: with this detour's turn, a cycle).
          const p = col[v]!;
          const f = p > 0 && p < W ? portEntry[v * W + p]! : -1;
          if (f >= 0 && switchLidSwitches.has(adjSw[f]!)) continue;
        }
        let worst = load[e]! + w;
        let sum = worst;
        follow(v, T, (f) => {
          worst = Math.max(worst, load[f]! + w);
          sum += load[f]!;
        });
        if (worst < bestCost || (worst === bestCost && sum < bestSum)) {
          best = e;
          bestCost = worst;
          bestSum = sum;
        }
      }
      if (best < 0 || bestCost > detourLimit) return undo();
      col[u] = adjPort[best]!;
      counters[u * W + col[u]!]!++;
      load[best]! += w;
      follow(adjSw[best]!, T, (f) => (load[f]! += w));
      moved.push({ u, e: best, w });
      detours++;
      if (walk(T) === 0) return true;
    }
    return undo();
  };

  // The repair's bucket queue (by distance to T) and scratch.
  const buckets: number[][] = [];
  const fixed = new Uint8Array(nSw);
  const tent = new Int32Array(nSw);
  const upstream = new Float64Array(nSw);
  const cands: number[] = [];
  let changedEntries = 0;
  let reroutedLids = 0;
  let restoredLids = 0;
  /** Touched columns kept as they were (the intact one did not work, the previous one does). */
  let keptLids = 0;
  // Switch LIDs first: the CA detours that follow know where their routes changed.
  const order: number[] = [];
  for (let pass = 0; pass < 2; pass++) for (let l = 1; l <= maxLid; l++) if ((lidOwner[l]! >= 0 && ends[lidOwner[l]!]!.isSwitch) === (pass === 0)) order.push(l);
  for (const l of order) {
    const o = lidOwner[l]!;
    if (o < 0) {
      if (touch[l]) outCM.fill(NO_ROUTE, l * nSw, l * nSw + nSw);
      continue;
    }
    if (!touch[l]) continue;
    const ep = ends[o]!;
    readPrev(l, pcol);
    const T = ep.sw;
    if (T < 0) continue;
    const isCa = !ep.isSwitch;
    const sign = isCa ? 1 : 0;
    // 1. The intact column, where its owner is the same port and every route in it works.
    let useIntact = false;
    if (readIntact && intactLids!.get(l) === ep.guid && (readIntact(l, icol), icol[T] === ep.swPort)) {
      col.set(icol);
      useIntact = walk(T) === 0;
    }
    if (useIntact) {
      let differs = false;
      for (let s = 0; s < nSw; s++) if (pcol[s] !== col[s]) differs = true;
      if (differs) {
        restoredLids++;
        if (sign && loaded) {
          prevCol(l, ep.guid);
          account(T, -1);
          col.set(icol);
          account(T, 1);
        }
      }
    } else {
      // 2. The previous column where it works; repair the rest.
      ensureLoads();
      prevCol(l, ep.guid);
      col[T] = ep.swPort;
      const brokenCount = walk(T);
      if (brokenCount === 0) keptLids++;
      if (brokenCount > 0 && !isCa && opts.detourSwitchLids !== false && detour(T)) {
        reroutedLids++;
      } else if (brokenCount > 0 && isCa && opts.detourCaLids !== false && caDetour(T)) {
        reroutedLids++;
      } else if (brokenCount > 0) {
        reroutedLids++;
        // CA sources whose route passed each switch (an estimate of what will come through it),
        // and the broken part's routes out of the load.
        // (Only broken switches need it, and only broken sources reach them: whatever routes
        // through a broken switch is broken.)
        upstream.fill(0);
        for (let s = 0; s < nSw; s++) {
          const w = caCount[s]!;
          if (!w || state[s] !== BROKEN) continue;
          upstream[s]! += w;
          follow(s, T, (e) => (upstream[adjSw[e]!]! += w));
        }
        for (let s = 0; s < nSw; s++) {
          if (state[s] !== BROKEN) continue;
          const p = col[s]!;
          if (sign && p > 0 && p < W && portEntry[s * W + p]! >= 0) counters[s * W + p]!--;
          const w = caCount[s]! * sign;
          if (w) follow(s, T, (e) => (load[e]! -= w));
        }
        fixed.fill(0);
        tent.fill(0x7fffffff);
        buckets.length = 0;
        // Good switches are final at their distance; the broken ones start from their good
        // neighbours, then from each other as they are fixed.
        for (let s = 0; s < nSw; s++) {
          if (state[s] === GOOD) {
            tent[s] = dist[s]!;
            fixed[s] = 1;
          }
        }
        for (let s = 0; s < nSw; s++) {
          if (state[s] === GOOD) continue;
          for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
            const v = adjSw[e]!;
            if (fixed[v] && tent[v]! + 1 < tent[s]!) tent[s] = tent[v]! + 1;
          }
          if (tent[s]! < 0x7fffffff) (buckets[tent[s]!] ??= []).push(s);
        }
        for (let d = 0; d < buckets.length; d++) {
          const b = buckets[d];
          if (!b) continue;
          for (let k = 0; k < b.length; k++) {
            const u = b[k]!;
            if (fixed[u] || tent[u] !== d) continue;
            {
              // A broken switch: among its fixed neighbours at distance d-1, the one whose path
              // to T has the least loaded link once this switch's traffic is on it.
              cands.length = 0;
              for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) {
                const v = adjSw[e]!;
                if (fixed[v] && tent[v] === d - 1) cands.push(e);
              }
              const w = upstream[u]! * sign;
              let best = -1;
              let bestCost = Infinity;
              let bestSum = Infinity;
              let bestCount = 0;
              // Ties rotate with the switch and the LID, so that switches alike spread.
              const rot = (u + l) % cands.length;
              for (let c = 0; c < cands.length; c++) {
                const e = cands[(c + rot) % cands.length]!;
                let worst = load[e]! + w;
                let sum = worst;
                follow(adjSw[e]!, T, (f) => {
                  worst = Math.max(worst, load[f]! + w);
                  sum += load[f]!;
                });
                const cnt = counters[u * W + adjPort[e]!]!;
                if (worst < bestCost || (worst === bestCost && (sum < bestSum || (sum === bestSum && cnt < bestCount)))) {
                  best = e;
                  bestCost = worst;
                  bestSum = sum;
                  bestCount = cnt;
                }
              }
              col[u] = adjPort[best]!;
              counters[u * W + col[u]!]! += sign;
              const own = caCount[u]! * sign;
              if (own) follow(u, T, (f) => (load[f]! += own));
              state[u] = GOOD;
            }
            fixed[u] = 1;
            // Relax the broken switches that can reach u (the reverse of u's channels).
            for (let e = adjStart[u]!; e < adjStart[u + 1]!; e++) {
              const v = adjSw[e]!;
              if (fixed[v] || adjReverse[e]! < 0) continue;
              if (d + 1 < tent[v]!) {
                tent[v] = d + 1;
                (buckets[d + 1] ??= []).push(v);
              }
            }
          }
        }
        // Switches that cannot reach T at all keep no route.
        for (let s = 0; s < nSw; s++) if (state[s] !== GOOD) col[s] = NO_ROUTE;

      }
    }
    outCM.set(col, l * nSw);
    if (!isCa) {
      for (let s = 0; s < nSw; s++) {
        if (pcol[s] === col[s]) continue;
        switchLidSwitches.add(s);
        const p = col[s]!;
        const e = p > 0 && p < W ? portEntry[s * W + p]! : -1;
        if (e >= 0) switchLidSwitches.add(adjSw[e]!);
      }
    }
    changedEntries += countDiffering(pcol, col);
  }
  // The tables: the previous ones where every column is (copied), the touched columns written.
  const copy = prevT.every((t) => t.length === maxLid + 1);
  const tables = Array.from({ length: nSw }, (_, s) => (copy ? prevT[s]!.slice() : new Uint8Array(maxLid + 1)));
  for (let l = 0; l <= maxLid; l++) if (!copy || touch[l]) writeColumn(tables, outCM, l);
  for (const e of ends) {
    if (!e.isSwitch || e.sw < 0) continue;
    tables[e.sw]![e.lid] = 0;
    outCM[e.lid * nSw + e.sw] = 0;
  }
  // Entries of LIDs that left the fabric count as changed where they held a route.
  const gone: number[] = [];
  for (let l = 1, top = Math.max(maxLid, ...prevT.map((t) => t.length - 1)); l <= top; l++) if (l > maxLid || lidOwner[l]! < 0) gone.push(l);
  for (const t of prevT) for (const l of gone) if (l < t.length && t[l] !== NO_ROUTE) changedEntries++;

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
    notes: [...ix.warnings, `incremental: ${reroutedLids} LIDs re-routed, ${restoredLids} restored, ${changedEntries} entries changed`],
  };
  keepColumns(result, { guids: [...ix.swGuid], cm: outCM, maxLid });
  // Guarantees. Every column touched was walked to its destination from every switch that can
  // reach it (or repaired until it was); the others are the previous ones over links that are
  // still there: loop-free and complete by construction. Back to the intact routing (every
  // touched column restored), the intact routing's verification holds. Otherwise the link load is
  // the one maintained above and, where the engine claimed deadlock freedom, the channel
  // dependencies are checked again (routing/verify.ts).
  const factor = opts.balanceFactor ?? 1.2;
  const backToIntact = readIntact !== undefined && reroutedLids === 0 && keptLids === 0;
  let busiestLink = intact?.busiestLink ?? 0;
  if (!backToIntact) {
    ensureLoads();
    busiestLink = 0;
    for (const v of load) if (v > busiestLink) busiestLink = v;
  }
  const stats: IncrementalStats = { changedEntries, reroutedLids, restoredLids, busiestLink, intactBusiestLink: intact?.busiestLink ?? 0 };
  let report: VerifyReport | undefined;
  let deps: DepCounts | undefined;
  if (!backToIntact && prev.deadlockFree === true && !prev.sl && (prev.vlsUsed ?? 1) <= 1) {
    // One VL: the channel dependencies of the CA sources' routes, checked for cycles.
    const kept = cachedDeps(prev);
    let cdg: CdgReport;
    if (kept) {
      const inc = incrementalCdg(kept, columnReader(columnsOf(prevFabric, prev), kept.ix.swGuid), touch, ix, outCM);
      cdg = inc.report;
      deps = inc.deps;
    } else cdg = singleVlCdg(ix, outCM);
    if (cdg.cyclicComponents > 0) return done({ ok: false, reason: `incremental re-route rejected: channel-dependency cycles (not deadlock-free): ${cdg.exampleCycle?.join(' → ') ?? ''}`, stats });
  } else if (!backToIntact && prev.deadlockFree === true) {
    report = verifyRoutes(fabric, result, { stretch: false, requireDeadlockFree: true });
    if (!report.ok) {
      const why = report.loopEntries ? `${report.loopEntries} looping entries` : report.unreachablePairs || report.unreachableFromSwitches ? `${report.unreachablePairs} CA pairs and ${report.unreachableFromSwitches} switch routes unreachable` : 'channel-dependency cycles (not deadlock-free)';
      return done({ ok: false, reason: `incremental re-route rejected: ${why}`, stats, report });
    }
  }
  if (intact && intact.busiestLink > 0 && busiestLink > factor * intact.busiestLink) {
    return done({ ok: false, reason: `incremental re-route rejected: busiest link ${busiestLink} routes > ${factor} × intact ${intact.busiestLink}`, stats, ...(report ? { report } : {}) });
  }
  // What the next re-route starts from: this one's load and dependencies (the intact ones when
  // back to the intact tables).
  const intactLoads = backToIntact ? cachedLoads(intact!.routing) : undefined;
  const intactDeps = backToIntact ? cachedDeps(intact!.routing) : undefined;
  if (loaded) keepLoads(result, { ix, load, counters });
  else if (intactLoads) keepLoads(result, intactLoads);
  if (deps) keepDeps(result, deps);
  else if (intactDeps) keepDeps(result, intactDeps);
  return done({ ok: true, result, stats, ...(report ? { report } : {}) });
}

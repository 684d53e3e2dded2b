/**
 * dfsssp: deadlock-free single-source shortest paths (after Domke, Hoefler, Nagel; the idea of
 * OpenSM's dfsssp, our implementation).
 *
 * 1. Routes: for every destination LID, minimum-hop paths; among them the one with the least
 *    accumulated link usage (a DP over the shortest-path DAG of the destination switch, weights =
 *    1 + routes already placed on each directed link), then the usage is updated with the number of
 *    CA sources whose route now crosses each link. LIDs of one port (LMC) are routed one after the
 *    other and so spread over different links.
 * 2. Layers (dfsssp-layers.ts): every (source switch, destination LID) path starts in layer 0.
 *    While the channel dependency graph (CDG) of a layer has a cycle, the dependency on that cycle
 *    used by the fewest paths is broken by moving all its paths of that layer to the next layer.
 *    The layer of a path is its SL; SL i maps to VL i on every port. More layers than maxVls →
 *    RoutingNotApplicable. Layer 0's dependencies are collected while routing (a bit set, from
 *    each LID's tree of paths); when they form no cycle (fat trees) nothing is counted or moved.
 *
 * Cost: per destination switch one breadth-first pass; per further LID of that switch a DP over
 * the switches' links one hop nearer that rescans only the switches whose minimum went up (see
 * dfsssp-paths.ts), plus passes over the switches (typed arrays, no per-route objects); at worst
 * O(LIDs × links) time, O(links + switches × LIDs of one switch) memory besides the tables.
 */
import type { Fabric } from '../model/fabric.js';
import { emptyLfts, indexFabric, lftMap, rng } from './graph.js';
import { BalancedPaths } from './dfsssp-paths.js';
import { assignLayers, cdgAcyclic, dependencyStarts, type DfssspLayers } from './dfsssp-layers.js';
import { checkLmc } from './minhop.js';
import { orderDestinations, orderNote } from './route-order.js';
import { identitySl2Vl, RoutingNotApplicable, steppedEngine, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';

/** dfsssp in steps: 'paths' before each destination group, 'layers' after each credit loop broken. */
export function* dfssspSteps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> {
  checkLmc('dfsssp', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new RoutingNotApplicable('dfsssp', `maxVls must be 1..15, got ${maxVls}`);
  const ix = indexFabric(fabric);
  const lfts = emptyLfts(ix);
  const rand = opts.seed !== undefined ? rng(opts.seed) : undefined;
  const notes = [...ix.warnings];
  const depStart = dependencyStarts(ix);
  const order = orderDestinations(ix, opts.routeOrder, opts.routeOrderNoScatter);
  if (order.listed || order.skipped) notes.push(orderNote(order));
  const dep0 = yield* new BalancedPaths(ix, lfts, depStart, rand).steps(order.groups);
  // Layer 0 without a credit loop (fat trees): every path stays there. Otherwise the layers are
  // built from the tables' dependency counts.
  let layers: DfssspLayers | undefined;
  if (!cdgAcyclic(ix, depStart, dep0)) layers = yield* assignLayers(ix, lfts, depStart, maxVls);
  const vlsUsed = layers?.vlsUsed ?? 1;
  notes.push(`${vlsUsed} layer(s) used of ${maxVls}; ${layers?.cyclesBroken ?? 0} credit loop(s) broken by moving ${layers?.moved ?? 0} path(s) to higher layers`);

  const L = ix.maxLid + 1;
  const lidSw = new Int32Array(L).fill(-1);
  for (const ep of ix.ends) if (ep.sw >= 0) for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) lidSw[d] = ep.sw;
  const sl = (slid: number, dlid: number): number => {
    if (!layers || slid < 0 || slid >= L || dlid < 0 || dlid >= L) return 0;
    const s = lidSw[slid]!;
    const i = s >= 0 ? layers.srcIdx[s]! : -1;
    return i >= 0 ? layers.layer[i * L + dlid]! : 0;
  };
  return {
    engine: 'dfsssp',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    sl,
    slBySourceSwitch: true,
    vlsUsed,
    sl2vl: identitySl2Vl(vlsUsed),
    deadlockFree: true,
    notes,
  };
}

export const dfsssp: RoutingEngine = steppedEngine({
  name: 'dfsssp',
  description: 'balanced shortest paths made deadlock-free with virtual layers (SL = layer, SL i → VL i)',
  takesRouteOrder: true,
  steps: dfssspSteps,
});

export const routeDfsssp = dfsssp.route;

/** minhop: shortest paths (BFS from every destination switch, O(switches × links)) with OpenSM's
 *  port balancing — among a switch's minimum-hop ports to a LID, take the one with the fewest
 *  destination LIDs so far — and LMC path diversity. Not deadlock-free on fabrics with cycles. */
import type { Fabric } from '../model/fabric.js';
import { fillForDestSwitch, fillFromDestSwitch, finishFill, newBalancer, type DestLids } from './balance.js';
import { bfsSwitches, emptyLfts, indexFabric, lftMap } from './graph.js';
import { orderDestinations, orderNote } from './route-order.js';
import { RoutingNotApplicable, steppedEngine, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';

export function checkLmc(engine: string, opts: RoutingOptions): void {
  if (!Number.isInteger(opts.lmc) || opts.lmc < 0 || opts.lmc > 7) throw new RoutingNotApplicable(engine, `LMC must be an integer 0..7, got ${opts.lmc}`);
}

/** minhop in steps: 'paths' before each destination group (the breadth-first pass from its
 *  switch, when it is not the previous group's, and its LIDs' ports at every switch). */
export function* minhopSteps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> {
  checkLmc('minhop', opts);
  const ix = indexFabric(fabric);
  const lfts = emptyLfts(ix);
  const bal = newBalancer(ix, opts.seed);
  const dist = new Int32Array(ix.nSw);
  const queue = new Int32Array(ix.nSw);
  const scratch: DestLids = { end: [], lid: [] };
  const order = orderDestinations(ix, opts.routeOrder, opts.routeOrderNoScatter);
  let bfsOf = -1;
  for (const g of order.groups) {
    yield 'paths';
    if (bal.rand) {
      // the distances to T are kept while consecutive groups go to T
      if (bfsOf !== g.sw) bfsSwitches(ix, g.sw, dist, queue);
      bfsOf = g.sw;
      fillForDestSwitch(ix, g, lfts, bal, dist, undefined, scratch);
    } else fillFromDestSwitch(ix, g, lfts, bal, dist, queue, scratch);
  }
  finishFill(bal);
  return { engine: 'minhop', lfts: lftMap(ix, lfts), maxLid: ix.maxLid, vlsUsed: 1, deadlockFree: false, notes: [...ix.warnings, ...(order.listed || order.skipped ? [orderNote(order)] : [])] };
}

export const minhop: RoutingEngine = steppedEngine({
  name: 'minhop',
  description: 'shortest paths, balanced by per-port LID counts (OpenSM minhop); not deadlock-free on cyclic fabrics',
  takesRouteOrder: true,
  steps: minhopSteps,
});

export const routeMinhop = minhop.route;

/** The intact routing incremental re-routing returns to (routing/incremental.ts): a full
 * re-route remembered with its busiest link, its load and its channel dependencies, and a
 * rehearsal of the re-routes to come. */
import { cloneFabric, type Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { indexFabric } from './graph.js';
import type { RoutingResult } from './types.js';
import { columnReader, columnsOf } from './incremental-columns.js';
import { depCounts, keepDeps } from './incremental-cdg.js';
import { computeLoads, keepLoads } from './incremental-load.js';
import { rerouteIncremental } from './incremental.js';
import type { IncrementalOutcome, IntactRouting } from './incremental-types.js';
import { InternalError } from '../util/errors.js';

/** Remember a full re-route as the intact routing, with its busiest link (the most CA-to-CA
 * routes on a directed switch-to-switch link: verify's linkLoad.max, from the load kept). */
export function intactRouting(fabric: Fabric, routing: RoutingResult): IntactRouting {
  // Ready for the re-routes to come: its columns and its load.
  const ix = indexFabric(fabric);
  const read = columnReader(columnsOf(fabric, routing), ix.swGuid);
  const loads = computeLoads(ix, read);
  keepLoads(routing, loads);
  if (routing.deadlockFree === true && !routing.sl && (routing.vlsUsed ?? 1) <= 1) keepDeps(routing, depCounts(ix, read));
  let busiestLink = 0;
  for (const v of loads.load) if (v > busiestLink) busiestLink = v;
  return { fabric, routing, busiestLink };
}

/** Routes per link, as everything that shows them counts them (the log's busiest link, `ibsm
 * status`, the metrics, the web view and the topology pictures): the CA-to-CA routes (one per
 * source CA port and destination LID) over a directed switch-to-switch link, by the switch port
 * they leave by, keyed `<switch GUID>:<port>` (GUID as bigint's decimal). The same figures as
 * routing/verify.ts's linkLoad (test/reroute-incremental.test.ts checks it). */
export function routesPerLink(fabric: Fabric, routing: RoutingResult): Map<string, number> {
  const ix = indexFabric(fabric);
  const { load } = computeLoads(ix, columnReader(columnsOf(fabric, routing), ix.swGuid));
  const out = new Map<string, number>();
  for (let s = 0; s < ix.nSw; s++) for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) out.set(`${ix.swGuid[s]}:${ix.adjPort[e]}`, load[e]!);
  return out;
}

/** A rehearsal of the re-routes to come, on copies (nothing is kept): one switch-to-switch link
 * of a switch with CAs goes down and comes back. The first run of the re-routing code is several
 * times slower than the next ones (the JavaScript engine optimizes what has run); run once the SM
 * is idle, the re-route of a real failure runs at full speed. Returns the rehearsal's outcomes. */
export function rehearse(intact: IntactRouting): IncrementalOutcome[] {
  const out: IncrementalOutcome[] = [];
  for (const step of rehearsalSteps(intact)) {
    const o = step();
    out.push(o);
    if (!o.ok) break;
  }
  return out;
}

/** The rehearsal in its steps (the link down, then back), each run on its own so that a caller
 * can let the event loop turn between them (a signal waits for one step, not the whole). A step
 * after one that failed is not to be run. */
export function rehearsalSteps(intact: IntactRouting): Array<() => IncrementalOutcome> {
  const f = intact.fabric;
  const sw = f.nodes.findIndex((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && f.nodes[p.peer.node]!.type !== NodeType.Switch) && n.ports.some((p) => p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch));
  if (sw < 0) return [];
  const pn = f.nodes[sw]!.ports.findIndex((p, i) => i > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
  let broken: typeof f | undefined;
  let down: IncrementalOutcome | undefined;
  return [
    () => {
      broken = cloneFabric(f);
      const peer = broken.nodes[sw]!.ports[pn]!.peer!;
      broken.nodes[sw]!.ports[pn]!.peer = undefined;
      broken.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
      // Whatever the balance (a small fabric may lose half its uplinks): the code is what runs.
      return (down = rerouteIncremental(f, intact.routing, broken, { intact, balanceFactor: Infinity }));
    },
    () => {
      if (!down?.ok) throw new InternalError('rehearsal: the step back runs only after the step down succeeded');
      return rerouteIncremental(broken!, down.result, f, { intact, balanceFactor: Infinity });
    },
  ];
}

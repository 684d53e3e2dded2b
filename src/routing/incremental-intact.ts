/** The intact routing incremental re-routing returns to (routing/incremental.ts): a full
 * re-route remembered with its busiest link, its load and its channel dependencies, and a
 * rehearsal of the re-routes to come. */
import { cloneFabric, type Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { indexFabric } from './graph.js';
import type { RoutingResult } from './types.js';
import { verifyRoutes } from './verify.js';
import { columnReader, columnsOf } from './incremental-columns.js';
import { depCounts, keepDeps } from './incremental-cdg.js';
import { computeLoads, keepLoads } from './incremental-load.js';
import { rerouteIncremental } from './incremental.js';
import type { IncrementalOutcome, IntactRouting } from './incremental-types.js';

/** Remember a full re-route as the intact routing (verifies it once for its busiest link). */
export function intactRouting(fabric: Fabric, routing: RoutingResult): IntactRouting {
  const rep = verifyRoutes(fabric, routing, { stretch: false, cdg: false });
  // Ready for the re-routes to come: its columns and its load.
  const ix = indexFabric(fabric);
  const read = columnReader(columnsOf(fabric, routing), ix.swGuid);
  keepLoads(routing, computeLoads(ix, read));
  if (routing.deadlockFree === true && !routing.sl && (routing.vlsUsed ?? 1) <= 1) keepDeps(routing, depCounts(ix, read));
  return { fabric, routing, busiestLink: rep.linkLoad.max };
}

/** A rehearsal of the re-routes to come, on copies (nothing is kept): one switch-to-switch link
 * of a switch with CAs goes down and comes back. The first run of the re-routing code is several
 * times slower than the next ones (the JavaScript engine optimizes what has run); run once the SM
 * is idle, the re-route of a real failure runs at full speed. Returns the rehearsal's outcomes. */
export function rehearse(intact: IntactRouting): IncrementalOutcome[] {
  const f = intact.fabric;
  const sw = f.nodes.findIndex((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && f.nodes[p.peer.node]!.type !== NodeType.Switch) && n.ports.some((p) => p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch));
  if (sw < 0) return [];
  const pn = f.nodes[sw]!.ports.findIndex((p, i) => i > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
  const broken = cloneFabric(f);
  const peer = broken.nodes[sw]!.ports[pn]!.peer!;
  broken.nodes[sw]!.ports[pn]!.peer = undefined;
  broken.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
  // Whatever the balance (a small fabric may lose half its uplinks): the code is what runs.
  const down = rerouteIncremental(f, intact.routing, broken, { intact, balanceFactor: Infinity });
  if (!down.ok) return [down];
  return [down, rerouteIncremental(broken, down.result, f, { intact, balanceFactor: Infinity })];
}

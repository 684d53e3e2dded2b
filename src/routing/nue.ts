/**
 * nue: deadlock-free routing for any connected topology within the VLs given (1..15), in the class
 * of Nue (Domke, Hoefler, Matsuoka, HPDC 2016; our implementation).
 *
 * Routes are chosen on the channel dependency graph (CDG) so that every VL's CDG is acyclic by
 * construction, not layered afterwards. Each VL keeps an acyclic CDG with a dynamic topological
 * order (acyclic.ts). A destination (a group of LIDs of one switch) is routed on one VL by a
 * hop-by-hop search outward from its switch: each switch, in order of hop distance, takes the
 * least loaded link (accumulated routes per link along the path) toward an already routed
 * neighbour whose dependency can be added without closing a cycle. A destination that cannot
 * reach every switch this way on a VL is taken back and tried on the next.
 * Escape paths (as in Nue): VL 0 holds the dependencies of a BFS spanning tree's routes from the
 * start; a destination that fits no VL is routed along the tree on VL 0, so a connected fabric is
 * never refused, whatever the VL count. Switch LIDs of switches without CAs (management traffic
 * only) also take the tree.
 * The SL of a route is the VL of its destination LID (SL i → VL i on every port).
 * Destinations with many LIDs are split into groups routed one after the other (each LID its own
 * group when the fabric is small enough; fewer groups keep large fabrics near-linear). Within a
 * group every LID gets its own tree: each switch rotates, LID by LID, through its links one hop
 * nearer in the group's search (checked against the layer's CDG like the search's own choice),
 * so the LIDs of one port (LMC > 0) and of one switch spread over parallel links; on a fat tree
 * this balances like ftree (scripts/bench/README.md, "Figures behind source comments").
 */
import type { Fabric } from '../model/fabric.js';
import { depStarts } from './acyclic.js';
import { ColumnBuffer } from './lft-writers.js';
import { emptyLfts, indexFabric, lftMap, swName, type FabricIndex } from './graph.js';
import { checkLmc } from './minhop.js';
import { EscapeRoutes } from './nue/escape.js';
import { LayerSearch } from './nue/search.js';
import { buildLayers, components, escapeRoots, escapeTree, layerOrder, type NueLayers } from './nue/setup.js';
import { UnitTree } from './nue/tree.js';
import { destinationUnits, lidRange, type Units } from './nue/units.js';
import { UnitWriter } from './nue/writer.js';
import { identitySl2Vl, RoutingNotApplicable, steppedEngine, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';

/** nue's phases in order: set-up (components, escape tree, layers: nue/setup.ts), destinations
 *  (nue/units.ts), each unit on the first layer that takes it (nue/search.ts, nue/writer.ts) or
 *  the escape paths (nue/escape.ts), then the result. A step ('units') before each unit. */
export function* nueSteps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> {
  checkLmc('nue', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new RoutingNotApplicable('nue', `maxVls must be 1..15, got ${maxVls}`);
  const ix = indexFabric(fabric);
  if (ix.nSw === 0) throw new RoutingNotApplicable('nue', 'the fabric has no switches');
  const depStart = depStarts(ix);
  const notes = [...ix.warnings];
  const lfts = emptyLfts(ix);
  const vlOf = new Uint8Array(ix.maxLid + 1);
  const comps = components(ix, notes);
  const roots = escapeRoots(ix, comps, opts.roots);
  const esc = escapeTree(ix, roots);
  const layers = buildLayers(ix, depStart, maxVls, esc);
  const tree = new UnitTree(ix);
  const cols = new ColumnBuffer(lfts, ix.nSw, 512);
  const writer = new UnitWriter(ix, depStart, cols, vlOf, tree);
  const escape = new EscapeRoutes(ix, esc.isTree, tree);
  const search = new LayerSearch(ix, comps, tree);
  const units = destinationUnits(ix);
  const { perVl, escaped } = yield* routeUnits(units, layers, search, writer, escape, maxVls);
  switchLidsOnEscape(ix, units, writer, escape);
  cols.flush();
  return result(ix, lfts, vlOf, roots, units, perVl, escaped, notes);
}

/** Each unit on the first layer (in layerOrder) whose search reaches its component, spread over
 *  it; else on the escape paths (VL 0). A step before each unit. Returns the units per VL. */
function* routeUnits({ units }: Units, layers: NueLayers, search: LayerSearch, writer: UnitWriter, escape: EscapeRoutes, maxVls: number): Generator<RoutingPhase, { perVl: number[]; escaped: number }, void> {
  const perVl = new Array<number>(maxVls).fill(0);
  let escaped = 0;
  let rot = 0;
  for (const u of units) {
    yield 'units';
    let done = false;
    const pref = layerOrder(layers, u.T, rot++);
    for (let k = 0; k < pref.length && !done; k++) {
      const v = pref[k]!;
      const g = layers.layers[v]!;
      if (search.route(u, g)) {
        writer.commitSpread(u, v, g);
        perVl[v]!++;
        done = true;
      }
    }
    if (done) continue;
    escape.route(u.T);
    writer.commit(u, 0);
    perVl[0]!++;
    escaped++;
  }
  return { perVl, escaped };
}

/** Switch LIDs ride with their switch's first CA group; those of switches without CAs
 *  (management traffic only) use the escape layer. */
function switchLidsOnEscape(ix: FabricIndex, { caLidsOf }: Units, writer: UnitWriter, escape: EscapeRoutes): void {
  for (const ep of ix.ends) {
    if (!ep.isSwitch || ep.sw < 0 || caLidsOf[ep.sw]!.length > 0) continue;
    escape.route(ep.sw);
    writer.commit({ T: ep.sw, lids: lidRange(ep), caLids: 0 }, 0);
  }
}

/** The tables, the SL of each destination LID (its VL) and the notes. */
function result(ix: FabricIndex, lfts: Uint8Array[], vlOf: Uint8Array, roots: number[], { units, groups }: Units, perVl: number[], escaped: number, notes: string[]): RoutingResult {
  let vlsUsed = 1;
  for (let v = 0; v < perVl.length; v++) if (perVl[v]! > 0) vlsUsed = Math.max(vlsUsed, v + 1);
  notes.push(`escape paths on VL 0: spanning tree from ${roots.map((r) => swName(ix, r)).join(', ')}`);
  notes.push(`${units.length} destination group(s) (${groups} per switch at most): ${perVl.map((n, v) => `VL ${v}: ${n}`).filter((_, v) => v < vlsUsed).join(', ')}${escaped > 0 ? `; ${escaped} fitted no layer and use the escape paths` : ''}`);
  const L = ix.maxLid + 1;
  return {
    engine: 'nue',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    // Routes on one VL need no SLs: the engine leaves them (and QoS's) alone then.
    ...(vlsUsed > 1 ? { sl: (_slid: number, dlid: number): number => (dlid >= 0 && dlid < L ? vlOf[dlid]! : 0), slBySourceSwitch: true, slByDestination: true, sl2vl: identitySl2Vl(vlsUsed) } : {}),
    vlsUsed,
    deadlockFree: true,
    roots: roots.map((r) => ix.swGuid[r]!),
    notes,
  };
}
export const nue: RoutingEngine = steppedEngine({
  name: 'nue',
  description: 'deadlock-free on any connected topology within maxVls VLs (1..15): routes chosen on an acyclic CDG per VL, balanced by routes per link (Nue class)',
  steps: nueSteps,
});

export const routeNue = nue.route;

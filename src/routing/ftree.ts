/**
 * ftree: fat-tree routing (the OpenSM ftree idea, our implementation), balanced to the optimum
 * on regular trees and routed, not refused, when degraded.
 *
 * Topology check: leaves are the switches with CAs (or, with configured roots, the switches
 * farthest from them); every switch gets a level (leaves 0); every switch-to-switch link must join
 * adjacent levels; every non-top switch needs up links; every switch with CAs must reach every
 * leaf by an up/down route. Otherwise RoutingNotApplicable. Levels whose switches differ in their
 * up/down links (a link or switch missing) are routed and noted (OpenSM: "not a fat tree").
 *
 * Routing, per destination leaf T: the ancestors of T (switches that reach it going down) may go
 * down to a child one hop nearer, every other switch up to a parent one hop nearer (up/down, so
 * no credit loops on one VL). Per destination LID i (leaves in order, their ports in port order,
 * the LIDs of a port consecutive), a switch takes its candidate by one of two rules
 * (ftree-candidates.ts, `div` and `sigma`):
 * - destination-mod-k where it splits the destinations evenly (a regular tree without parallel
 *   links, every leaf's CAs a multiple of its up-links, issue #35): a switch of level l takes
 *   candidate floor(i / k_0·…·k_{l-1}) mod k_l, the same at every switch of the level, as
 *   OpenSM's ftree. The routes to one destination come down one path, and a shift of the hosts
 *   in destination order meets no other flow on any link: all-to-all at full bandwidth on a
 *   non-blocking tree (routing/traffic.ts measures it; scripts/bench/traffic-opensm.mjs).
 * - elsewhere a switch at position σ in its level takes (i + σ) mod count: the routes to one
 *   destination leave the switches of a level over every up link in turn, so they arrive over
 *   every link into the destination's leaf (a leaf with 12 hosts and 8 up-links would otherwise
 *   get 1 or 2 destinations' routes per link).
 * Either way one switch deals its destinations evenly over its up links; on the generators'
 * trees the busiest link meets the lower bound (test/helpers/fat-tree-bound.ts). LMC > 0: the
 * LIDs of a port leave every switch over different links. In a degraded tree each CA LID's
 * routes are chosen on their own (ftree-converge.ts): they join one chain of links down to the
 * destination where they can, the least loaded links where they cannot, so a link toward a
 * destination carries few destinations and traffic follows the remaining capacity.
 * Switches without CAs that have no up/down route (between top switches, around a missing link)
 * go down then up; on a regular tree no CA route uses them. On a degraded tree the CAs' routes to
 * some switch LIDs must turn down then up too: they turn where they close no channel-dependency
 * cycle, and where they cannot the result claims no deadlock freedom (ftree-turns.ts).
 */
import type { Fabric } from '../model/fabric.js';
import { emptyLfts, indexFabric, lftMap, type FabricIndex } from './graph.js';
import { FtreeCandidates } from './ftree-candidates.js';
import { FtreeLids } from './ftree-lids.js';
import { fatTreeShape, type FatTreeShape } from './ftree-shape.js';
import { checkLmc } from './minhop.js';
import { steppedEngine, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';

export { fatTreeShape, type FatTreeShape } from './ftree-shape.js';

/** ftree's phases in order: 'levels' (the topology check: ftree-shape.ts, and the candidates'
 *  set-up: ftree-candidates.ts), 'lids' before each leaf's CA destinations of each group (ftree-lids.ts,
 *  over the candidates toward that leaf), 'switch-lids' before the other
 *  switches' LIDs, then the result. */
export function* ftreeSteps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> {
  checkLmc('ftree', opts);
  yield 'levels';
  const ix = indexFabric(fabric);
  const shape = fatTreeShape(ix, opts.roots);
  const lfts = emptyLfts(ix);
  const cands = new FtreeCandidates(ix, shape);
  const writer = new FtreeLids(ix, cands, lfts);
  const groups = caGroups(ix, opts);
  for (const g of groups.inGroup) yield* writer.routeGroup(g);
  writer.flush();
  yield 'switch-lids';
  writer.routeSwitchLids(shape.level);
  return result(ix, shape, cands, lfts, groups, writer.notes, writer.deadlockFree);
}

interface CaGroups {
  /** The CA groups in the order they are balanced. */
  inGroup: Array<(ei: number) => boolean>;
  isCn: (ei: number) => boolean;
}

/** With compute nodes named (cn/io GUID files), the CNs first, then the other CAs in a second
 *  round with their own rotation: each group is balanced on its own, the I/O traffic does not
 *  shift the CNs' routes. Otherwise one group. */
function caGroups(ix: FabricIndex, opts: RoutingOptions): CaGroups {
  const cnSet = opts.cnGuids?.length ? new Set(opts.cnGuids) : undefined;
  const ioSet = opts.ioGuids?.length ? new Set(opts.ioGuids) : undefined;
  const isCn = (ei: number): boolean => {
    const g = ix.ends[ei]!.guid;
    return cnSet ? cnSet.has(g) : !ioSet?.has(g);
  };
  return { inGroup: cnSet || ioSet ? [isCn, (ei) => !isCn(ei)] : [() => true], isCn };
}

/** The tables, the top switches as roots, and the notes. */
function result(ix: FabricIndex, shape: FatTreeShape, cands: FtreeCandidates, lfts: Uint8Array[], { inGroup, isCn }: CaGroups, more: string[], deadlockFree: boolean): RoutingResult {
  const { ends } = ix;
  const { byLevel, downUpRoutes } = cands;
  const notes = [...ix.warnings];
  if (inGroup.length > 1) notes.push(`compute nodes balanced first: ${ends.filter((e, i) => !e.isSwitch && isCn(i)).length} CN ports, ${ends.filter((e, i) => !e.isSwitch && !isCn(i)).length} other CA ports after them`);
  notes.push(`fat tree: ${shape.levels} levels, ${byLevel.map((b, l) => `level ${l}: ${b.length}`).join(', ')} switches`);
  if (shape.irregular.length > 0) notes.push(`the tree is irregular (degraded): ${shape.irregular.join('; ')}`);
  notes.push(...more);
  if (downUpRoutes > 0) {
    const fromCas = cands.weighted ? 'on this degraded tree CA routes to switch LIDs may use them, turned where they close no cycle if they can: ftree-turns.ts' : 'no CA route uses them';
    notes.push(`${downUpRoutes} routes from switches without CAs go down then up (no up/down path exists, e.g. between top-level switches or around a missing link; ${fromCas})`);
  }
  return {
    engine: 'ftree',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    vlsUsed: 1,
    deadlockFree,
    roots: byLevel[shape.levels - 1]!.map((s) => ix.swGuid[s]!),
    notes,
  };
}
export const ftree: RoutingEngine = steppedEngine({
  name: 'ftree',
  description: 'fat-tree routing (2 to 8 levels, regular trees): balanced for shift patterns, deadlock-free on one VL',
  steps: ftreeSteps,
});

export const routeFtree = ftree.route;

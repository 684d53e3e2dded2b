/** Taking over a fabric another SM routed (issue #27): keep its forwarding tables when they are as
 * good as this SM's own, so a takeover of an unchanged fabric rewrites no LFT block.
 *
 * The first heavy sweep of an SM that has programmed nothing reads every switch's LFT back
 * (sm/plan-tables.ts `planLftReads`). When every switch was read whole, the tables read are
 * verified as any routing is (routing/verify.ts: every LID reachable from every switch and end
 * port over ACTIVE links, no loop, deadlock-free on one VL when the configured engine promises
 * it) and their busiest link compared with this SM's own routes': adopted when it carries at
 * most the incremental re-route's balance factor (1.2×) the routes of ours. Engines whose routes
 * use SLs (several VLs) are never adopted over: another SM's tables do not carry their layers.
 * Adopted tables are this SM's routing until the next full re-route (a change to the fabric that
 * the incremental re-route cannot absorb, a reload that changes the routing options). Pure: no
 * I/O. */
import type { Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import type { RoutingResult } from '../model/routes.js';
import { fabricFingerprint, type DiscoveryResult } from '../model/snapshot.js';
import { verifyRoutes } from '../routing/verify.js';
import { LFT_BLOCK_SIZE } from '../wire/sma.js';
import type { Programmed } from './programmed.js';

/** The busiest link of adopted tables may carry at most this many times the routes of this SM's
 * own busiest link (the incremental re-route's default balance factor, routing/incremental.ts). */
export const ADOPT_BALANCE_FACTOR = 1.2;

export type LftAdoption =
  | { adopted: true; routing: RoutingResult; busiest: number; ours: number; deadlockFree: boolean; lids: number }
  | { adopted: false; reason: string };

/** Decide whether the LFTs read back (`read`: the GUIDs of the switches read this sweep) replace
 * `ours` (this sweep's computed routes, up to `maxLid`). */
export function adoptReadLfts(fabric: Fabric, ours: RoutingResult, maxLid: number, programmed: Programmed, read: ReadonlySet<bigint>): LftAdoption {
  if ((ours.vlsUsed ?? 1) > 1 || ours.sl2vlByPorts) return { adopted: false, reason: `${ours.engine}'s routes use ${ours.vlsUsed ?? 1} VLs (SLs the tables read back do not carry)` };
  const blocks = Math.floor(maxLid / LFT_BLOCK_SIZE) + 1;
  const lfts = new Map<number, Uint8Array>();
  for (let i = 0; i < fabric.nodes.length; i++) {
    const n = fabric.nodes[i]!;
    if (n.type !== NodeType.Switch) continue;
    if (!ours.lfts.has(i)) return { adopted: false, reason: `switch ${n.desc} has no linear forwarding table` };
    const st = programmed.lfts.get(n.guid);
    if (!read.has(n.guid) || !st) return { adopted: false, reason: `switch ${n.desc} was not read back (this SM programmed it, or it holds no table)` };
    for (let b = 0; b < blocks; b++) if (!st.known[b]) return { adopted: false, reason: `switch ${n.desc}: LFT block ${b} not read (its LinearFDBTop is below LID ${maxLid})` };
    lfts.set(i, st.table.slice(0, maxLid + 1));
  }
  const needDf = ours.deadlockFree === true;
  const theirs = verifyRoutes(fabric, lfts, { requireDeadlockFree: needDf, stretch: false, cdg: needDf, maxFailures: 1 });
  if (!theirs.ok) return { adopted: false, reason: `the tables read back do not verify: ${theirs.summary.join('; ')}` };
  const mine = verifyRoutes(fabric, ours, { stretch: false, cdg: false, maxFailures: 1 });
  const busiest = theirs.linkLoad.max;
  const limit = ADOPT_BALANCE_FACTOR * mine.linkLoad.max;
  if (busiest > limit) return { adopted: false, reason: `their busiest link carries ${busiest} routes, more than ${ADOPT_BALANCE_FACTOR} × ${mine.linkLoad.max} of ${ours.engine}'s` };
  const routing: RoutingResult = { engine: ours.engine, lfts, maxLid, deadlockFree: theirs.deadlockFree, notes: [...ours.notes, 'forwarding tables adopted from the previous master'] };
  return { adopted: true, routing, busiest, ours: mine.linkLoad.max, deadlockFree: theirs.deadlockFree, lids: theirs.lids };
}

/** The LID of the SM that ran the fabric before, when another port than this SM's (the SM port's
 * MasterSMLID as discovered, before this sweep's Sets): only another SM's tables are adopted. A
 * restart of this SM on its own port applies its configured routing (the engine may have changed). */
export function previousMaster(disc: DiscoveryResult): number | undefined {
  const pi = disc.nodes[disc.smNode]?.portInfo[disc.smPort];
  return pi && pi.masterSmLid !== 0 && pi.masterSmLid !== pi.lid ? pi.masterSmLid : undefined;
}

/** The tables another SM left, adopted by a heavy sweep and kept by the next ones while the fabric
 * (nodes, links, LIDs: its fingerprint) is the one they were adopted on. */
export class ForeignTables {
  private kept?: { fp: bigint; routing: RoutingResult };

  forget(): void {
    this.kept = undefined;
  }

  /** The routing a heavy sweep programs: the adopted tables when `reads` (the LFT blocks read back
   * this sweep, when another SM ran the fabric) verify and balance as well as `ours`, the kept ones
   * on an unchanged fabric, else `ours`. `adoption` when a decision was made this sweep. */
  choose(fabric: Fabric, ours: RoutingResult, maxLid: number, programmed: Programmed, reads: ReadonlyArray<{ guid: bigint }>): { routing: RoutingResult; adoption?: LftAdoption } {
    if (reads.length) {
      const adoption = adoptReadLfts(fabric, ours, maxLid, programmed, new Set(reads.map((r) => r.guid)));
      this.kept = adoption.adopted ? { fp: fabricFingerprint(fabric), routing: adoption.routing } : undefined;
      return { routing: adoption.adopted ? adoption.routing : ours, adoption };
    }
    if (this.kept && this.kept.routing.maxLid === maxLid && this.kept.fp === fabricFingerprint(fabric)) return { routing: this.kept.routing };
    this.kept = undefined;
    return { routing: ours };
  }
}

/** Types of incremental re-routing (routing/incremental.ts). */
import type { Fabric } from '../model/fabric.js';
import type { RoutingResult } from './types.js';
import type { VerifyReport } from './verify.js';

/** The routing of the intact fabric (the last full re-route) and its busiest link. */
export interface IntactRouting {
  readonly fabric: Fabric;
  readonly routing: RoutingResult;
  /** CA-to-CA routes on the busiest directed switch-to-switch link (verify's linkLoad.max). */
  readonly busiestLink: number;
}

export interface IncrementalOptions {
  /** The routing to return to where it works again, and the balance reference. */
  intact?: IntactRouting;
  /** Switch LIDs (management traffic) repaired by the shortest detour from where their route
   * broke (default); false: repaired as CA destinations are. */
  detourSwitchLids?: boolean;
  /** CA LIDs first tried the same way, each switch whose own entry is dead moving to a neighbour
   * whose route works (the switches behind it keep their entries), when the busiest link of the
   * detour stays within `balanceFactor` of the intact one (default); false: every switch whose
   * route is broken is re-routed. */
  detourCaLids?: boolean;
  /** The busiest link may carry at most this many times the intact busiest link (default 1.2). */
  balanceFactor?: number;
  /** The result is judged and dropped, never re-routed from (what-if, routing/what-if.ts): the
   *  one-VL deadlock check searches only the dependencies the touched columns add
   *  (routing/incremental-cdg-delta.ts), and the result keeps no dependencies. Same tables. */
  whatIf?: boolean;
}

export interface IncrementalStats {
  /** (switch, LID) entries that differ from the previous tables. */
  changedEntries: number;
  /** LIDs whose column was repaired (some switch's route was broken). */
  reroutedLids: number;
  /** LIDs whose column went back to the intact routing's. */
  restoredLids: number;
  /** Busiest link after, and the intact reference (0 when no intact routing was given). */
  busiestLink: number;
  intactBusiestLink: number;
}

export type IncrementalOutcome =
  | { ok: true; result: RoutingResult; stats: IncrementalStats; report?: VerifyReport }
  | { ok: false; reason: string; stats?: IncrementalStats; report?: VerifyReport };

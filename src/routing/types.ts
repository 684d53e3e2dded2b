/** Routing engine interfaces. Engines are pure: Fabric (with LIDs assigned) + options → tables. */
import { IbsmError } from '../util/errors.js';
import type { Fabric } from '../model/fabric.js';

export { NO_ROUTE, type RoutingResult } from '../model/routes.js';
import type { RoutingResult } from '../model/routes.js';

export interface RoutingOptions {
  /** LMC the end ports were given (the engine reads each port's own lid/lmc; this is informative and checked). */
  lmc: number;
  /** Root switch GUIDs for updn/ftree. A CA/router port or node GUID stands for the switch it is attached to. */
  roots?: readonly bigint[];
  /** Seed for engines that randomise tie-breaks (minhop/updn/dfsssp). Without it ties break on the lowest port. */
  seed?: number;
  /** Virtual layers (VLs) available for dfsssp (default 8, max 15). */
  maxVls?: number;
  /** ftree: compute-node port GUIDs (OpenSM's cn_guid_file). CN destinations are balanced among
   * themselves first; the other CAs (I/O nodes, `ioGuids` or every CA not a CN) after them, with
   * their own rotation, so they do not disturb the CNs' balance. */
  cnGuids?: readonly bigint[];
  /** ftree: I/O-node port GUIDs (OpenSM's io_guid_file); without cnGuids every other CA is a CN. */
  ioGuids?: readonly bigint[];
  /** Port GUIDs whose destinations are routed first, in this order (OpenSM's
   * guid_routing_order_file; engines with `takesRouteOrder`: minhop, updn, dfsssp). Earlier
   * destinations get the least loaded ports. */
  routeOrder?: readonly bigint[];
  /** The listed destinations break ties without the seed's randomness (OpenSM's
   * guid_routing_order_no_scatter). */
  routeOrderNoScatter?: boolean;
}

export interface RoutingEngine {
  readonly name: string;
  /** One line for --help listings. */
  readonly description: string;
  /** The engine routes destinations in RoutingOptions.routeOrder's order; others ignore it. */
  readonly takesRouteOrder?: boolean;
  route(fabric: Fabric, opts: RoutingOptions): RoutingResult;
  /** The same routing as named phases, for the engines that can run for seconds (dfsssp, nue):
   * the generator yields the name of the phase it is in between units of work (a destination
   * switch, a credit loop broken) and returns what `route` returns. The caller may do what it
   * likes between two steps without touching the fabric (an SM reports progress there, and lets
   * V8's optimizing compiler go: cli/tiering.ts); `route` runs the steps through (runSteps). */
  steps?(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void>;
}

/** The name of a phase a stepped engine is in: 'paths' and 'layers' (dfsssp), 'units' (nue). */
export type RoutingPhase = 'paths' | 'layers' | 'units';

/** Run an engine's steps to the end, calling `between` (if given) at each step; its result. */
export function runSteps(steps: Generator<RoutingPhase, RoutingResult, void>, between?: (phase: RoutingPhase) => void): RoutingResult {
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
    between?.(s.value);
  }
}

export class RoutingError extends IbsmError {
  override readonly name: string = 'RoutingError';
}

/** The engine cannot route this fabric (wrong topology, options it does not support, not enough VLs):
 *  the registry falls back to the next engine in the list. */
export class RoutingNotApplicable extends RoutingError {
  override readonly name = 'RoutingNotApplicable';
  constructor(
    readonly engine: string,
    readonly reason: string,
  ) {
    super(`${engine}: ${reason}`);
  }
}

/** Uniform identity SL→VL table for `layers` layers: SL i → VL i for i < layers, other SLs → VL 0. */
export function identitySl2Vl(layers: number): number[] {
  return Array.from({ length: 16 }, (_, sl) => (sl < layers ? sl : 0));
}

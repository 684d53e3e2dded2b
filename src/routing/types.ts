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

/** What an engine is made of: its routing as named phases. A site engine given to registerEngine
 *  is one of these (steps only); steppedEngine derives `route` from `steps`, so every engine
 *  routes the same stepped and run through. */
export interface EngineSteps {
  readonly name: string;
  /** One line for --help listings. */
  readonly description: string;
  /** The engine routes destinations in RoutingOptions.routeOrder's order; others ignore it. */
  readonly takesRouteOrder?: boolean;
  /** The routing as named phases: the generator yields the name of the phase it is in between
   *  units of work (a destination switch or group, a credit loop broken) and returns the tables.
   *  The caller may do what it likes between two steps without touching the fabric (an SM
   *  reports progress there, and lets V8's optimizing compiler go: cli/tiering.ts); nothing of it
   *  is in the engine's options. */
  steps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void>;
}

/** A routing engine: its steps, and `route`, the steps run through (runSteps), derived in one
 *  place (steppedEngine): no engine writes `route` itself. */
export interface RoutingEngine extends EngineSteps {
  route(fabric: Fabric, opts: RoutingOptions): RoutingResult;
}

/** The engine of `def`: its steps, and `route` running them through. */
export function steppedEngine(def: EngineSteps): RoutingEngine {
  const steps = (fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> => def.steps(fabric, opts);
  return {
    name: def.name,
    description: def.description,
    ...(def.takesRouteOrder !== undefined ? { takesRouteOrder: def.takesRouteOrder } : {}),
    steps,
    route: (fabric, opts) => runSteps(steps(fabric, opts)),
  };
}

/** The name of the phase an engine is in, yielded between two units of work:
 *  - 'roots': updn's root detection, before the breadth-first pass from each switch;
 *  - 'ranks': updn's switch ranks from the roots and its links' up/down directions;
 *  - 'levels': ftree's topology check (ftree-shape.ts: leaves, levels, the up/down links);
 *  - 'coordinates': torus's grid detection (dimensions, each switch's coordinates);
 *  - 'distances': updn's legal up/down distances toward one destination switch;
 *  - 'paths': the routes toward one destination group (minhop, updn, torus, dfsssp);
 *  - 'lids': ftree's CA destinations of one group (compute nodes, then the others);
 *  - 'switch-lids': ftree's routes to the switches' own LIDs;
 *  - 'layers': dfsssp, after each credit loop broken by moving paths to the next layer;
 *  - 'units': nue, before each destination unit (a group of LIDs of one switch);
 *  - 'vls': torus's SLs and per-port SL2VL tables (the datelines). */
export type RoutingPhase = 'roots' | 'ranks' | 'levels' | 'coordinates' | 'distances' | 'paths' | 'lids' | 'switch-lids' | 'layers' | 'units' | 'vls';

/** Run an engine's steps (or a phase's: updn's detectRoots) to the end, calling `between` (if
 *  given) at each step; its result. */
export function runSteps<R = RoutingResult>(steps: Generator<RoutingPhase, R, void>, between?: (phase: RoutingPhase) => void): R {
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

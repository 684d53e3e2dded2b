/** Routing engine interfaces. Engines are pure: Fabric (with LIDs assigned) + options → tables. */
import type { Fabric } from '../model/fabric.js';

/** LFT entry meaning "no route" (the value a switch treats as drop). */
export const NO_ROUTE = 255;

export interface RoutingOptions {
  /** LMC the end ports were given (the engine reads each port's own lid/lmc; this is informative and checked). */
  lmc: number;
  /** Root switch GUIDs for updn/ftree. A CA/router port or node GUID stands for the switch it is attached to. */
  roots?: readonly bigint[];
  /** Seed for engines that randomise tie-breaks (minhop/updn/dfsssp). Without it ties break on the lowest port. */
  seed?: number;
  /** Virtual layers (VLs) available for dfsssp (default 8, max 15). */
  maxVls?: number;
}

export interface RoutingResult {
  engine: string;
  /** Switch node index (into fabric.nodes) → LFT indexed by LID: out port; 0 = the switch's own LID; 255 = no route. */
  lfts: Map<number, Uint8Array>;
  maxLid: number;
  /** SL to use from source LID to destination LID (engines that layer routes for deadlock freedom). */
  sl?: (slid: number, dlid: number) => number;
  /** Number of VLs (layers) the routes need; 1 when absent. */
  vlsUsed?: number;
  /** SL→VL table (16 entries) to program identically on every switch port pair and CA port. */
  sl2vl?: readonly number[];
  /** True when the engine guarantees an acyclic channel-dependency graph per VL (verify checks it). */
  deadlockFree?: boolean;
  /** Root switch GUIDs the engine used (updn/ftree). */
  roots?: bigint[];
  notes: string[];
}

export interface RoutingEngine {
  readonly name: string;
  /** One line for --help listings. */
  readonly description: string;
  route(fabric: Fabric, opts: RoutingOptions): RoutingResult;
}

export class RoutingError extends Error {
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

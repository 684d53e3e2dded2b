/** What routing produces: the unicast forwarding state of a fabric. A data type only; the engines
 * that compute it live in `src/routing/`, the SM programs it, the SA answers from it. */

/** LFT entry meaning "no route" (the value a switch treats as drop). */
export const NO_ROUTE = 255;

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

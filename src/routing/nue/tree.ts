/** The state nue's phases share while routing one unit (a group of LIDs of one destination switch). */
import type { FabricIndex } from '../graph.js';

export interface Unit {
  T: number;
  lids: number[];
  /** CA LIDs among them (routes counted per link). */
  caLids: number;
}

/** The unit's tree toward T and the fabric's link loads. The search (LayerSearch) and the escape
 *  paths (EscapeRoutes) write `settled`, `outCh` and (the search) `lev`; the writers (UnitWriter)
 *  read them and add to `load` and `spread`. */
export class UnitTree {
  /** Switches of the unit's tree, T first, in the order they were reached. */
  readonly settled: number[] = [];
  /** Per switch: the channel it forwards on toward T (−1 at T). */
  readonly outCh: Int32Array;
  /** Per switch: its hop level in the last search (−1: not reached). */
  readonly lev: Int32Array;
  /** Routes per channel so far (read by the search's costs). */
  readonly load: Float64Array;
  /** LIDs routed so far by the spreading writer: the offset of every rotation (tie-breaks, candidates). */
  spread = 0;

  constructor(ix: FabricIndex) {
    const nSw = ix.nSw;
    this.outCh = new Int32Array(nSw).fill(-1);
    this.lev = new Int32Array(nSw);
    this.load = new Float64Array(ix.adjStart[nSw]!);
  }
}

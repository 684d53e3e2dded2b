/** nue's writers: a routed unit's LFT entries (through column buffers, written table by table),
 *  its LIDs' VLs and the routes it adds per link. */
import type { AcyclicCdg } from '../acyclic.js';
import type { FabricIndex } from '../graph.js';
import type { ColumnBuffer } from '../lft-writers.js';
import type { Unit, UnitTree } from './tree.js';

export class UnitWriter {
  /** Per switch: CAs behind its subtree while loads are added up (commit). */
  private readonly acc: Float64Array;
  // Per position i in `settled` (T at 0), so the loops per LID read their arrays in order: the
  // candidates' range, rotation and own choice; per LID the chosen channel and the position of
  // the switch it leads to; the accumulated CA count.
  private readonly posOf: Int32Array;
  private readonly lo: Int32Array;
  private readonly ncOf: Int32Array;
  private readonly rotOf: Int32Array;
  private readonly rotJ: Int32Array;
  private readonly rowOf: Int32Array;
  private readonly caOf: Int32Array;
  private readonly outE: Int32Array;
  private readonly outC: Int32Array;
  private readonly upPos: Int32Array;
  private readonly accI: Int32Array;
  /** Per candidate: its channel, the position of the switch it leads to, its port, and the base
   *  of its dependency bits (bit of (e → b) = base + b). */
  private readonly candList: Int32Array;
  private readonly candPos: Int32Array;
  private readonly candPortOf: Uint8Array;
  private readonly candBit: Int32Array | Float64Array;
  /** Routes added per candidate during a unit (integers: summed in any order they are exact),
   *  added to `load` per channel at its end. */
  private readonly candLoad: Float64Array;

  /** `vlOf` (per LID) is written with each LID's VL. */
  constructor(
    private readonly ix: FabricIndex,
    private readonly depStart: Float64Array,
    private readonly cols: ColumnBuffer,
    private readonly vlOf: Uint8Array,
    private readonly tree: UnitTree,
  ) {
    const nSw = ix.nSw;
    const nE = ix.adjStart[nSw]!;
    this.acc = new Float64Array(nSw);
    this.posOf = new Int32Array(nSw);
    this.lo = new Int32Array(nSw);
    this.ncOf = new Int32Array(nSw);
    this.rotOf = new Int32Array(nSw);
    this.rotJ = new Int32Array(nSw);
    this.rowOf = new Int32Array(nSw);
    this.caOf = new Int32Array(nSw);
    this.outE = new Int32Array(nSw);
    this.outC = new Int32Array(nSw);
    this.upPos = new Int32Array(nSw);
    this.accI = new Int32Array(nSw);
    this.candList = new Int32Array(nE);
    this.candPos = new Int32Array(nE);
    this.candPortOf = new Uint8Array(nE);
    // (32-bit when the bit indices fit, as they do but in fabrics far beyond the LID space's)
    this.candBit = depStart[nE]! < 2 ** 31 - 2 ** 20 ? new Int32Array(nE) : new Float64Array(nE);
    this.candLoad = new Float64Array(nE);
  }

  private tPort(d: number): number {
    return this.ix.ends[this.ix.lidOwner[d]!]!.swPort;
  }

  /** Every LID of u over the unit tree as it is (`settled`, `outCh`: the escape paths) on VL vl;
   *  adds its CA LIDs' routes to `load`. Every switch's entry for a routed LID is set (the settled
   *  switches, T) or stays NO_ROUTE (another component). */
  commit(u: Unit, vl: number): void {
    const { T, lids } = u;
    const { cols, vlOf, acc } = this;
    const { adjPort, adjSw, caCount } = this.ix;
    const { settled, outCh, load } = this.tree;
    const W = cols.width;
    for (const d of lids) {
      const c = cols.column(d);
      const buf = cols.buf;
      buf[T * W + c] = this.tPort(d);
      vlOf[d] = vl;
      for (let i = 1; i < settled.length; i++) {
        const s = settled[i]!;
        buf[s * W + c] = adjPort[outCh[s]!]!;
      }
    }
    if (u.caLids === 0) return;
    for (const s of settled) acc[s] = caCount[s]!;
    for (let i = settled.length - 1; i >= 1; i--) {
      const s = settled[i]!;
      const e = outCh[s]!;
      load[e]! += acc[s]! * u.caLids;
      acc[adjSw[e]!]! += acc[s]!;
    }
  }

  /** Route and commit the LIDs of a unit routed on layer g (LayerSearch left its tree in `outCh`
   *  and the hop levels in `lev`) one by one, each over its own tree: every switch rotates, LID by
   *  LID, through its links to switches one level nearer (all of them shortest in the layer's
   *  search), taking the first whose dependency the layer accepts. Traffic to one switch's LIDs
   *  then spreads over parallel links (on a fat tree: every uplink of a leaf, every link into the
   *  destination's leaf), not one tree per unit. A LID none of whose rotations fits keeps the
   *  unit's tree (its dependencies are in the layer). Adds to `load` and `spread`. */
  commitSpread(u: Unit, vl: number, g: AcyclicCdg): void {
    const k = this.candidates(u.T);
    const nL = u.lids.length;
    for (let j = 0; j < nL; j++) this.spreadLid(u, j, vl, g);
    const { candLoad, candList } = this;
    const load = this.tree.load;
    for (let c = 0; c < k; c++) {
      const x = candLoad[c]!;
      if (x === 0) continue;
      load[candList[c]!]! += x;
      candLoad[c] = 0;
    }
    this.tree.spread += nL;
  }

  /** Per settled switch (by position): its candidates (links one level nearer) and where its
   *  rotation starts. Reads `settled`, `lev`, `outCh`, `spread`; returns the candidate count. */
  private candidates(T: number): number {
    const { adjStart, adjSw, adjPort, caCount } = this.ix;
    const { settled, lev, outCh, spread } = this.tree;
    const { posOf, lo, rotOf, candList, candPos, candPortOf, candBit, ncOf, rotJ, rowOf, caOf, depStart } = this;
    const W = this.cols.width;
    const n = settled.length;
    let k = 0;
    posOf[T] = 0;
    caOf[0] = caCount[T]!;
    for (let i = 1; i < n; i++) {
      const s = settled[i]!;
      posOf[s] = i;
      lo[i] = k;
      const want = lev[s]! - 1;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const x = adjSw[e]!;
        if (lev[x] !== want) continue;
        if (e === outCh[s]) rotOf[i] = k - lo[i]!; // the search's own (least loaded) choice
        candList[k] = e;
        candPos[k] = posOf[x]!; // x is settled before s (one level nearer)
        candPortOf[k] = adjPort[e]!;
        candBit[k] = depStart[e]! - adjStart[x]!;
        k++;
      }
      const nc = k - lo[i]!;
      ncOf[i] = nc;
      // LID j's rotation (j + spread + s) mod nc, stepped per LID
      rotJ[i] = (spread + s) % nc;
      rowOf[i] = s * W;
      caOf[i] = caCount[s]!;
    }
    return k;
  }

  /** LID j of u: its entry at every switch (a rotation's candidate, or the unit's tree when none
   *  fits), its VL, and (a CA LID) its routes per candidate in candLoad. */
  private spreadLid(u: Unit, j: number, vl: number, g: AcyclicCdg): void {
    const { adjSw, adjPort } = this.ix;
    const { settled, outCh } = this.tree;
    const { lo, ncOf, rotJ, rotOf, candPos, candBit, candList, candPortOf, outE, outC, upPos, rowOf, posOf, cols } = this;
    const n = settled.length;
    const bits = g.bits;
    const single = u.caLids <= 1;
    const d = u.lids[j]!;
    const col = cols.column(d);
    const buf = cols.buf;
    let i = 1;
    for (; i < n; i++) {
      const a = lo[i]!;
      const nc = ncOf[i]!;
      // A unit of one CA LID takes the search's (least loaded) choice; in a larger one LID j
      // takes candidate j + s (+ LIDs routed so far): the offsets keep the switches of one
      // level, and successive units, from choosing alike (on a fat tree, where the loads tie,
      // the search would send them all the same way).
      const rj = rotJ[i]!;
      rotJ[i] = rj + 1 === nc ? 0 : rj + 1;
      let r = single ? rotOf[i]! : rj;
      let t = 0;
      for (; t < nc; t++, r = r + 1 === nc ? 0 : r + 1) {
        const c = a + r;
        const px = candPos[c]!;
        // T itself; else the dependency is usually there already (tested inline; tryAdd otherwise)
        if (px !== 0) {
          const bit = candBit[c]! + outE[px]!;
          if (!(bits[bit >>> 3]! & (1 << (bit & 7))) && !g.tryAdd(candList[c]!, outE[px]!)) continue;
        }
        outE[i] = candList[c]!;
        outC[i] = c;
        upPos[i] = px;
        buf[rowOf[i]! + col] = candPortOf[c]!;
        break;
      }
      if (t === nc) break;
    }
    if (i < n) {
      // No rotation fits at switch i: the unit's own tree (its dependencies are in the layer).
      for (let q = i + 1; q < n; q++) {
        const r = rotJ[q]! + 1;
        rotJ[q] = r === ncOf[q] ? 0 : r;
      }
      for (let q = 1; q < n; q++) {
        const e = outCh[settled[q]!]!;
        outE[q] = e;
        outC[q] = lo[q]! + rotOf[q]!;
        upPos[q] = posOf[adjSw[e]!]!;
        buf[rowOf[q]! + col] = adjPort[e]!;
      }
    }
    this.vlOf[d] = vl;
    buf[u.T * cols.width + col] = this.tPort(d);
    if (j >= u.caLids) return;
    this.addLidLoad(n);
  }

  /** A CA LID's routes per candidate: the CAs behind each switch of its tree (outC, upPos). */
  private addLidLoad(n: number): void {
    const { accI, caOf, candLoad, outC, upPos } = this;
    accI.set(caOf);
    for (let i = n - 1; i >= 1; i--) {
      const a = accI[i]!;
      candLoad[outC[i]!]! += a;
      accI[upPos[i]!]! += a;
    }
  }
}

/** dfsssp's step 1 (routing/dfsssp.ts): the balanced shortest paths toward every destination LID,
 * destination switch by destination switch, with the dependencies of the source switches' routes. */
import type { FabricIndex } from './graph.js';
import type { DestGroup } from './route-order.js';
import type { RoutingPhase } from './types.js';

/** LFT columns staged before they are written to the tables (see stageColumns). */
const STAGE = 256;

/**
 * Step 1 (`BalancedPaths.steps`): fills `lfts` with the balanced shortest paths; returns the dependencies of the routes
 * of the source switches (those with CAs) as a bit set over the dependency index (depStart).
 *
 * Per destination switch T, one breadth-first pass numbers the reached switches by BFS position
 * k (k = 0 is T), runs the DP of T's first LID (a switch's candidates, its links one hop nearer
 * to T, are all numbered before it is scanned) and, when T has more LIDs, lists the candidates
 * (q, grouped by k) with their current weights gathered into candW (written back to `weight`
 * after T's LIDs): the DP of the next LIDs is then sequential over typed arrays. Switches only;
 * T's end ports are reached by T's own entries. Ties break on the first candidate (adjacency
 * order) or, seeded, at random.
 *
 * Without a seed the DP of T's next LIDs is incremental, and gives what a full DP would: a
 * candidate's value (its link's weight + the cost of the switch it leads to) never goes down
 * between two LIDs of T (weights only grow, so by induction from T outwards do the costs). Each
 * switch k keeps its minimum set: the candidates whose value equals its cost. Only two things
 * raise a value: the usage pass adds to the weight of k's chosen link (that candidate leaves k's
 * set), and a switch whose cost went up raises every candidate leading to it (they leave their
 * switches' sets). While k's set is not empty, k's cost is unchanged and its first minimum is the
 * set's first candidate (the others are above the cost, and only grow): nothing to scan. When it
 * empties, k is rescanned at the next LID, in BFS order, after every switch one hop nearer is
 * final; if its cost went up, that propagates one hop outwards. In balanced fabrics most switches
 * have tied candidates, so few are rescanned (scripts/bench/README.md, "Figures behind source comments").
 */
export class BalancedPaths {
  private readonly nSw: number;
  /** The dependencies of the source switches' routes: a bit set over the dependency index. */
  private readonly bits: Uint32Array;
  /** Per link: 1 + the CA routes placed on it so far. */
  private readonly weight: Float64Array;
  // Per destination switch T: the BFS (dist, order: k → switch, pos: switch → k), per k the CAs
  // on its switch, its cost, the candidate it takes (when listed), the link and next switch's k it
  // takes (T's only LID), and the CA sources behind it.
  private readonly dist: Int32Array;
  private readonly order: Int32Array;
  private readonly pos: Int32Array;
  private readonly caK: Float64Array;
  private readonly cost: Float64Array;
  private readonly chosenQ: Int32Array;
  private readonly chosenE: Int32Array;
  private readonly chosenK: Int32Array;
  private readonly acc: Float64Array;
  /** Switches reached from T, and candidates listed (k's are candLo[k] .. candLo[k+1]). */
  private reach = 0;
  private nc = 0;
  /** Per candidate: its link, the k it leads to, its weight (written back to `weight` after T's
   *  LIDs), the depBase of its link, its port. */
  private readonly candLo: Int32Array;
  private readonly candE: Int32Array;
  private readonly candK: Int32Array;
  private readonly candW: Float64Array;
  private readonly candDep: Int32Array;
  private readonly candPort: Uint8Array;
  /** depBase[e] + the next link (an adjacency entry of e's head) = index of that dependency. */
  private readonly depBase: Int32Array;
  // The incremental DP (see above): per k, the candidates at the minimum as a bit set of MW
  // words; whether k must be rescanned; per candidate its switch's k; per k the candidates leading to it.
  private readonly MW: number;
  private readonly tie: Int32Array;
  private readonly need: Uint8Array;
  private readonly ownK: Int32Array;
  private readonly revLo: Int32Array;
  private readonly revFill: Int32Array;
  private readonly revQ: Int32Array;
  /** j * nSw + k: the port of T's j-th LID on switch order[k]; T's LIDs. */
  private portBuf = new Uint8Array(0);
  private lidBuf = new Int32Array(0);
  // The LFT entries are staged, B columns (LIDs, in routing order) per switch, and written to the
  // tables switch by switch when the stage is full: consecutive destination switches have
  // neighbouring LIDs, so each table is touched once per stage, not once per destination switch.
  private readonly B: number;
  private readonly stage: Uint8Array;
  private readonly colLid: Int32Array;
  private nCol = 0;
  private readonly runCol: Int32Array;
  /** The tie-breaks of the destinations being routed: `seeded`, or none (a fixed group). */
  private rand: (() => number) | undefined;

  /** Writes `lfts` (run). */
  constructor(
    private readonly ix: FabricIndex,
    private readonly lfts: Uint8Array[],
    depStart: Int32Array,
    private readonly seeded: (() => number) | undefined,
  ) {
    this.rand = seeded;
    const { nSw, adjStart, adjSw, ends } = ix;
    this.nSw = nSw;
    const nE = adjStart[nSw]!;
    this.bits = new Uint32Array((depStart[nE]! >>> 5) + 1);
    this.weight = new Float64Array(nE).fill(1);
    this.dist = new Int32Array(nSw);
    this.order = new Int32Array(nSw);
    this.pos = new Int32Array(nSw);
    this.caK = new Float64Array(nSw);
    this.cost = new Float64Array(nSw);
    this.chosenQ = new Int32Array(nSw);
    this.chosenE = new Int32Array(nSw);
    this.chosenK = new Int32Array(nSw);
    this.acc = new Float64Array(nSw);
    this.candLo = new Int32Array(nSw + 1);
    this.candE = new Int32Array(nE);
    this.candK = new Int32Array(nE);
    this.candW = new Float64Array(nE);
    this.candDep = new Int32Array(nE);
    this.depBase = new Int32Array(nE);
    for (let e = 0; e < nE; e++) this.depBase[e] = depStart[e]! - adjStart[adjSw[e]!]!;
    this.candPort = new Uint8Array(nE);
    let maxAdj = 1;
    for (let s = 0; s < nSw; s++) maxAdj = Math.max(maxAdj, adjStart[s + 1]! - adjStart[s]!);
    this.MW = (maxAdj + 31) >>> 5;
    this.tie = new Int32Array(nSw * this.MW);
    this.need = new Uint8Array(nSw);
    this.ownK = new Int32Array(nE);
    this.revLo = new Int32Array(nSw + 1);
    this.revFill = new Int32Array(nSw);
    this.revQ = new Int32Array(nE);
    let maxNLid = 1;
    for (let T = 0; T < nSw; T++) {
      let n = 0;
      for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) n += 1 << ends[ix.endsOfSw[i]!]!.lmc;
      maxNLid = Math.max(maxNLid, n);
    }
    const B = (this.B = Math.max(STAGE, maxNLid));
    this.stage = new Uint8Array(nSw * B).fill(255);
    this.colLid = new Int32Array(B);
    this.runCol = new Int32Array(B + 1);
  }

  /** The destinations in turn, each destination switch's end ports together (or in the
   *  configured order: route-order.ts), a step ('paths') before each group; fills the tables and
   *  returns the dependency bits. */
  *steps(groups: readonly DestGroup[]): Generator<RoutingPhase, Uint32Array, void> {
    for (const g of groups) {
      yield 'paths';
      this.rand = g.fixed ? undefined : this.seeded;
      this.routeSwitch(g);
    }
    this.flush();
    return this.bits;
  }

  /** The LIDs of g's end ports (delivered by T = g.sw): the breadth-first pass (and its DP: the
   *  first LID), then each further LID, then the weights written back and the columns staged. */
  private routeSwitch(g: DestGroup): void {
    const { ix, nSw } = this;
    const ends = ix.ends;
    const T = g.sw;
    let nLid = 0;
    for (let i = 0; i < g.ends.length; i++) nLid += 1 << ends[g.ends[i]!]!.lmc;
    if (this.portBuf.length < nLid * nSw) this.portBuf = new Uint8Array(nLid * nSw);
    if (this.lidBuf.length < nLid) this.lidBuf = new Int32Array(nLid);
    const list = nLid > 1;
    const inc = list && !this.rand;
    this.breadthFirst(T, list, inc);
    if (inc) this.reverseCandidates();
    const routed = this.routeLids(g, list, inc);
    if (routed && list) for (let q = 0; q < this.nc; q++) this.weight[this.candE[q]!] = this.candW[q]!;
    this.stageColumns(nLid);
  }

  /** One breadth-first pass from T: numbers the reached switches by BFS position k (`order`,
   *  `pos`, `reach`), runs the DP of T's first LID (portBuf row 0, cost, chosenE/chosenK) and,
   *  when `list`, lists the candidates (candLo .. candPort, `nc`), with k's minimum set when `inc`. */
  private breadthFirst(T: number, list: boolean, inc: boolean): void {
    const { adjStart, adjSw, adjPort, caCount } = this.ix;
    const { dist, order, pos, cost, candLo, caK, weight, rand, tie, MW, chosenQ, candE, candK, candDep, depBase, ownK, candPort, candW, chosenE, chosenK, portBuf } = this;
    dist.fill(-1);
    dist[T] = 0;
    order[0] = T;
    pos[T] = 0;
    cost[0] = 0;
    let reach = 1;
    let nc = 0;
    for (let k = 0; k < reach; k++) {
      const s = order[k]!;
      const ds = dist[s]!;
      candLo[k] = nc;
      caK[k] = caCount[s]!;
      let best = -1;
      let bestC = Infinity;
      let ties = 0;
      for (let e = adjStart[s]!, end = adjStart[s + 1]!; e < end; e++) {
        const r = adjSw[e]!;
        const dr = dist[r]!;
        if (dr < 0) {
          dist[r] = ds + 1;
          pos[r] = reach;
          order[reach++] = r;
          continue;
        }
        if (dr !== ds - 1) continue;
        const kr = pos[r]!;
        const w = weight[e]!;
        const c = w + cost[kr]!;
        let newMin = false;
        if (c < bestC) {
          bestC = c;
          best = e;
          ties = 1;
          newMin = true;
        } else if (c === bestC && rand) {
          ties++;
          if (rand() * ties < 1) best = e;
        }
        if (list) {
          if (inc) {
            // k's minimum set, for the incremental DP of the next LIDs.
            const bp = nc - candLo[k]!;
            const base = k * MW;
            if (newMin) {
              if (MW > 1) for (let w = 0; w < MW; w++) tie[base + w] = 0;
              tie[base + (bp >>> 5)] = 1 << (bp & 31);
            } else if (c === bestC) tie[base + (bp >>> 5)]! |= 1 << (bp & 31);
          }
          if (best === e) chosenQ[k] = nc;
          candE[nc] = e;
          candK[nc] = kr;
          candDep[nc] = depBase[e]!;
          ownK[nc] = k;
          candPort[nc] = adjPort[e]!;
          candW[nc++] = w;
        }
      }
      if (k === 0) continue;
      cost[k] = bestC;
      chosenE[k] = best;
      chosenK[k] = pos[adjSw[best]!]!;
      portBuf[k] = adjPort[best]!;
    }
    candLo[reach] = nc;
    this.reach = reach;
    this.nc = nc;
  }

  /** Candidates by the switch they lead to (revLo, revQ: the reverse of candLo); the minimum sets
   *  are those of the breadth-first pass's DP, no switch to rescan. */
  private reverseCandidates(): void {
    const { revLo, revFill, revQ, candK, reach, nc } = this;
    revLo.fill(0, 0, reach + 1);
    for (let q = 0; q < nc; q++) revLo[candK[q]! + 1]!++;
    for (let k = 0; k < reach; k++) {
      revLo[k + 1]! += revLo[k]!;
      revFill[k] = revLo[k]!;
    }
    for (let q = 0; q < nc; q++) revQ[revFill[candK[q]!]!++] = q;
    this.need.fill(0, 0, reach);
  }

  /** T's LIDs in order (lidBuf, portBuf row j): the first routed by the breadth-first pass, the
   *  next by the incremental DP (or, seeded, a full one), a switch's own LID's successor copied
   *  from it; then each LID's usage and dependencies. Returns whether a CA LID was routed (the
   *  weights changed). */
  private routeLids(g: DestGroup, list: boolean, inc: boolean): boolean {
    const { ix, nSw, portBuf, lidBuf, reach, rand } = this;
    const ends = ix.ends;
    let j = -1;
    let routed = false;
    // A switch's own LID (first of T's) carries no traffic, so without random tie-breaks the next
    // LID sees the same weights and takes the same paths: its ports are copied from this one's.
    let same = false;
    for (let i = 0; i < g.ends.length; i++) {
      const ep = ends[g.ends[i]!]!;
      for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) {
        j++;
        lidBuf[j] = d;
        portBuf[j * nSw] = ep.swPort;
        if (j === 0) {
          // routed by the breadth-first pass
        } else if (same) {
          portBuf.copyWithin(j * nSw + 1, (j - 1) * nSw + 1, (j - 1) * nSw + reach);
        } else if (inc) {
          this.incrementalDp(j * nSw);
        } else if (rand) {
          this.randomDp(j * nSw, rand);
        }
        same = ep.isSwitch && !rand;
        const usage = !ep.isSwitch;
        if (usage) routed = true;
        if (list) this.listedUsage(usage, inc);
        else this.onlyLidUsage(usage);
      }
    }
    return routed;
  }

  /** Incremental: only the switches whose minimum set emptied are scanned again. A switch's choice
   *  is final when the sweep reaches it (only switches one hop nearer, all before it, change it).
   *  Writes the LID's ports at portBuf[pj + k]. */
  private incrementalDp(pj: number): void {
    const { need, portBuf, candPort, chosenQ, reach } = this;
    for (let k = 1; k < reach; k++) {
      if (need[k] !== 0) {
        need[k] = 0;
        this.rescan(k);
      }
      portBuf[pj + k] = candPort[chosenQ[k]!]!;
    }
  }

  /** Seeded: a full DP over the listed candidates, ties broken at random. */
  private randomDp(pj: number, rand: () => number): void {
    const { candLo, candW, cost, candK, chosenQ, portBuf, candE, reach } = this;
    const adjPort = this.ix.adjPort;
    for (let k = 1; k < reach; k++) {
      let best = -1;
      let bestC = Infinity;
      let ties = 0;
      for (let q = candLo[k]!, end = candLo[k + 1]!; q < end; q++) {
        const c = candW[q]! + cost[candK[q]!]!;
        if (c < bestC) {
          bestC = c;
          best = q;
          ties = 1;
        } else if (c === bestC) {
          ties++;
          if (rand() * ties < 1) best = q;
        }
      }
      cost[k] = bestC;
      chosenQ[k] = best;
      portBuf[pj + k] = adjPort[candE[best]!]!;
    }
  }

  /** Farthest first: the CA sources behind each chosen candidate (added to its weight for a CA
   *  destination: `usage`), and the dependencies of the links that carry a source's route. */
  private listedUsage(usage: boolean, inc: boolean): void {
    const { acc, caK, chosenQ, candK, candW, candDep, candE, bits, reach } = this;
    acc.set(caK.subarray(0, reach));
    for (let k = reach - 1; k >= 1; k--) {
      const q = chosenQ[k]!;
      const kr = candK[q]!;
      const a = acc[k]!;
      if (a === 0) continue;
      if (usage) {
        candW[q]! += a;
        if (inc) this.dropTie(q);
      }
      if (kr === 0) continue;
      acc[kr]! += a;
      const di = candDep[q]! + candE[chosenQ[kr]!]!;
      bits[di >>> 5]! |= 1 << (di & 31);
    }
  }

  /** As listedUsage, for T's only LID, routed by the breadth-first pass (candidates not listed). */
  private onlyLidUsage(usage: boolean): void {
    const { acc, caK, chosenK, chosenE, weight, depBase, bits, reach } = this;
    acc.set(caK.subarray(0, reach));
    for (let k = reach - 1; k >= 1; k--) {
      const kr = chosenK[k]!;
      const a = acc[k]!;
      if (usage) weight[chosenE[k]!]! += a;
      if (kr === 0 || a === 0) continue;
      acc[kr]! += a;
      const di = depBase[chosenE[k]!]! + chosenE[kr]!;
      bits[di >>> 5]! |= 1 << (di & 31);
    }
  }

  /** The first candidate of k's minimum set, -1 when it is empty. */
  private firstTie(k: number): number {
    const { tie, MW } = this;
    const base = k * MW;
    for (let w = 0; w < MW; w++) {
      const x = tie[base + w]!;
      if (x !== 0) return this.candLo[k]! + (w << 5) + (31 - Math.clz32(x & -x));
    }
    return -1;
  }

  /** Candidate q's value went up: out of its switch's minimum set; a new first, or a rescan. */
  private dropTie(q: number): void {
    const { ownK, need, candLo, tie, MW, chosenQ } = this;
    const p = ownK[q]!;
    if (need[p]) return;
    const bp = q - candLo[p]!;
    const wi = p * MW + (bp >>> 5);
    const b = 1 << (bp & 31);
    if ((tie[wi]! & b) === 0) return;
    tie[wi]! &= ~b;
    if (chosenQ[p] !== q) return;
    const nq = this.firstTie(p);
    if (nq < 0) need[p] = 1;
    else chosenQ[p] = nq;
  }

  /** k's minimum, minimum set and first candidate from the current weights and costs; when the
   *  minimum went up, the candidates leading to k leave their switches' minimum sets. */
  private rescan(k: number): void {
    const { candLo, tie, MW, candW, cost, candK, chosenQ, revLo, revQ } = this;
    const lo = candLo[k]!;
    const hi = candLo[k + 1]!;
    const base = k * MW;
    for (let w = 0; w < MW; w++) tie[base + w] = 0;
    let m = Infinity;
    let best = -1;
    for (let q = lo; q < hi; q++) {
      const c = candW[q]! + cost[candK[q]!]!;
      if (c > m) continue;
      const bp = q - lo;
      if (c < m) {
        m = c;
        best = q;
        if (MW > 1) for (let w = 0; w < MW; w++) tie[base + w] = 0;
        tie[base + (bp >>> 5)] = 1 << (bp & 31);
      } else tie[base + (bp >>> 5)]! |= 1 << (bp & 31);
    }
    chosenQ[k] = best;
    if (m !== cost[k]) {
      cost[k] = m;
      for (let r = revLo[k]!, end = revLo[k + 1]!; r < end; r++) this.dropTie(revQ[r]!);
    }
  }

  /** T's columns into the stage (k = 0 is T itself: the ports of its end ports), flushed first
   *  when they do not fit. */
  private stageColumns(nLid: number): void {
    if (this.nCol + nLid > this.B) this.flush();
    const { order, B, nSw, stage, portBuf, colLid, lidBuf, nCol, reach } = this;
    for (let k = 0; k < reach; k++) {
      const o = order[k]! * B + nCol;
      for (let jj = 0, x = k; jj < nLid; jj++, x += nSw) stage[o + jj] = portBuf[x]!;
    }
    for (let jj = 0; jj < nLid; jj++) colLid[nCol + jj] = lidBuf[jj]!;
    this.nCol = nCol + nLid;
  }

  /** The staged columns into the tables, switch by switch: runs of columns with consecutive LIDs
   *  (runCol[r] .. runCol[r+1]-1 are LIDs colLid[runCol[r]] ...). */
  private flush(): void {
    const { runCol, colLid, nSw, lfts, B, stage, nCol } = this;
    let nRun = 0;
    for (let c = 0; c < nCol; c++) if (c === 0 || colLid[c] !== colLid[c - 1]! + 1) runCol[nRun++] = c;
    runCol[nRun] = nCol;
    for (let s = 0; s < nSw; s++) {
      const t = lfts[s]!;
      const o = s * B;
      for (let r = 0; r < nRun; r++) {
        const c0 = runCol[r]!;
        const off = colLid[c0]! - c0 - o;
        for (let x = o + c0, end = o + runCol[r + 1]!; x < end; x++) t[off + x] = stage[x]!;
      }
    }
    stage.fill(255);
    this.nCol = 0;
  }
}

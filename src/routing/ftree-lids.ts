/** ftree's tables, per destination LID: rotate through the candidates (FtreeCandidates).
 *
 * Destination i at switch s takes candidate (i + position of s in its level) mod count. One
 * switch spreads its destinations evenly over its up links; one destination is reached from the
 * switches of a level over every up link in turn, so its routes arrive over every link into
 * its leaf and the levels above carry the same share (the leaf-to-leaf shift of OpenSM's ftree
 * sends all of them down one link). LIDs of one port (LMC) are consecutive destinations, so
 * they leave every switch over different links. On a regular 3-level tree whose leaves' CAs are
 * not a multiple of their up links, a leaf's CA LIDs are routed by ftree-split.ts instead (each
 * destination down one path from the other pods, the extra CAs split). */
import { swName, type FabricIndex } from './graph.js';
import type { FtreeCandidates } from './ftree-candidates.js';
import { CONVERGE_BUDGET, FtreeConverge } from './ftree-converge.js';
import { NA } from './ftree-shape.js';
import { FtreeSplit } from './ftree-split.js';
import { FtreeTurns } from './ftree-turns.js';
import { ColumnBuffer, RunWriter } from './lft-writers.js';
import type { RoutingPhase } from './types.js';

export class FtreeLids {
  /** The next CA destination index (the rotation's i). */
  private index = 0;
  private readonly runs: RunWriter;
  private readonly cols: ColumnBuffer;
  /** Leaves whose own LID is routed (with their first group that has CAs). */
  private readonly ownDone = new Set<number>();
  /** Degraded trees: the CA LIDs' routes, chosen per LID (within CONVERGE_BUDGET). */
  private readonly converge?: FtreeConverge;
  /** For the result's notes. */
  readonly notes: string[] = [];
  /** Degraded trees: the CA sources' channel dependencies, kept acyclic (ftree-turns.ts). */
  private turns?: FtreeTurns;
  /** Regular 3-level trees whose leaves' CAs are not a multiple of their up links: each
   *  destination's routes down one path, the extra CAs split (ftree-split.ts). */
  private readonly split?: FtreeSplit;
  private splitOn = false;

  /** False where a degraded tree's routes close a channel-dependency cycle (ftree-turns.ts). */
  get deadlockFree(): boolean {
    return !this.turns || this.turns.cyclic === 0;
  }

  /** Writes `lfts`. */
  constructor(
    private readonly ix: FabricIndex,
    private readonly c: FtreeCandidates,
    private readonly lfts: Uint8Array[],
  ) {
    this.runs = new RunWriter(lfts, ix.nSw, ix.maxPorts + 1);
    this.cols = new ColumnBuffer(lfts, ix.nSw);
    this.split = FtreeSplit.plan(ix, c);
    if (c.weighted) {
      let caLids = 0;
      for (const ep of ix.ends) if (!ep.isSwitch) caLids += 1 << ep.lmc;
      if (caLids * ix.adjStart[ix.nSw]! <= CONVERGE_BUDGET) this.converge = new FtreeConverge(ix, c);
      else this.notes.push(`degraded tree of ${caLids} CA LIDs: routed by the weighted rotation (the converging routes cost CA LIDs × switch links, above ${CONVERGE_BUDGET.toExponential()} here)`);
    }
  }

  /** CA destinations of one group (`inGroup`): leaves in switch order, ports in the leaf's port
   *  order, each group with its own rotation from index 0 (with compute nodes named, the CNs
   *  first, then the other CAs: each group balanced on its own). A step ('lids') before each
   *  leaf with CAs of the group. */
  *routeGroup(inGroup: (ei: number) => boolean): Generator<RoutingPhase, void, void> {
    const { ix, c } = this;
    const ends = ix.ends;
    this.index = 0;
    // the split balances every CA together: with CN/IO groups the rotation, group by group
    this.splitOn = ends.every((ep, ei) => ep.isSwitch || ep.sw < 0 || inGroup(ei));
    for (const leaf of c.byLevel[0]!) {
      const eps: number[] = [];
      for (let i = ix.endsStart[leaf]!; i < ix.endsStart[leaf + 1]!; i++) eps.push(ix.endsOfSw[i]!);
      eps.sort((a, b) => ends[a]!.swPort - ends[b]!.swPort);
      const cas = eps.filter((ei) => !ends[ei]!.isSwitch && inGroup(ei));
      if (cas.length === 0) continue;
      yield 'lids';
      c.prepare(leaf);
      // A switch without an up/down route to the leaf is never on a CA's route to it (no switch
      // picks it as a next hop); one with CAs of its own means the tree is cut.
      const deferred = c.nR + 1 < c.nSw ? c.outside() : [];
      const cut = deferred.find((s) => ix.caCount[s]! > 0);
      if (cut !== undefined) {
        throw NA(`switch ${swName(ix, cut)} has no up/down route to leaf ${swName(ix, leaf)}: its ancestors do not reach that leaf going down, so this is not a fat tree`);
      }
      if (deferred.length > 0) c.fallback(deferred);
      const lids: number[] = [];
      const ports: number[] = [];
      for (const ei of cas) {
        const ep = ends[ei]!;
        for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
          lids.push(l);
          ports.push(ep.swPort);
        }
      }
      const caLids = lids.length;
      // the leaf's own LID goes with the first group that has CAs there
      const own = this.ownDone.has(leaf) ? undefined : eps.find((ei) => ends[ei]!.isSwitch);
      this.ownDone.add(leaf);
      if (own !== undefined) {
        const o = ends[own]!;
        for (let l = o.lid; l < o.lid + (1 << o.lmc); l++) {
          lids.push(l);
          ports.push(0);
        }
      }
      this.routeLids(leaf, lids, ports, caLids, deferred.length > 0 ? deferred : undefined);
    }
  }

  /** The CA groups' entries are final: write out what is buffered. */
  flush(): void {
    this.converge?.refine(this.lfts);
    this.runs.flushAll();
    this.cols.flush();
  }

  /** Route the LIDs of T (lids[j] delivered on ports[j]); CA LIDs take consecutive destination
   *  indices, a switch LID (no data traffic) the next one without advancing. Switches outside T's
   *  up/down part take the fallback port. Before this, T's LIDs are NO_ROUTE in every table but
   *  T's own (each LID is routed once), which ColumnBuffer's columns start from. */
  private routeLids(T: number, lids: number[], ports: number[], caCount: number, fallbackOf: number[] | undefined): void {
    const i0 = this.index;
    this.index += caCount;
    const n = lids.length;
    if (n === 0) return;
    const { lfts, c } = this;
    if (c.weighted) {
      for (let j = 0; j < n; j++) lfts[T]![lids[j]!] = ports[j]!;
      // CA LIDs: converging routes (ftree-converge.ts); the switch's own LID (and every LID beyond
      // the budget): the weighted rotation
      const conv = this.converge;
      if (conv) for (let j = 0; j < caCount; j++) conv.route(T, lids[j]!, i0 + j, lfts);
      const { nR, rList, candLo, candHi } = c;
      for (let i = 0; i < nR; i++) {
        const s = rList[i]!;
        if (candHi[s]! - candLo[s]! <= 0) continue;
        const t = lfts[s]!;
        for (let j = conv ? caCount : 0; j < n; j++) t[lids[j]!] = c.pick(s, i0 + j);
      }
      if (fallbackOf) for (const s of fallbackOf) for (let j = 0; j < n; j++) lfts[s]![lids[j]!] = c.fallbackPort[s]!;
      return;
    }
    if (this.split && this.splitOn && !fallbackOf && caCount === this.ix.caCount[T]) {
      for (let j = 0; j < n; j++) lfts[T]![lids[j]!] = ports[j]!;
      if (this.split.leaves++ === 0) this.notes.push('each destination\'s routes from other pods come down one path; the CAs beyond a multiple of a leaf\'s up links split over two (ftree-split.ts)');
      this.split.route(T, lids.slice(0, caCount), i0, lfts);
      for (let j = caCount; j < n; j++) this.routeColumn(T, lids[j]!, ports[j]!, i0 + j, fallbackOf);
      return;
    }
    const l0 = lids[0]!;
    // The first m LIDs are l0 .. l0+m-1 (the CA LIDs usually are consecutive; the leaf's own LID
    // at the end, a router port's or a gap may not be): checked entry by entry, not by the ends.
    let m = 1;
    while (m < n && lids[m] === l0 + m) m++;
    this.routeRun(T, l0, m, ports, i0, fallbackOf);
    for (let j = m; j < n; j++) this.routeColumn(T, lids[j]!, ports[j]!, i0 + j, fallbackOf);
  }

  /** LIDs l0 .. l0+m-1 (destination indices from i0): runs of the rotation (unweighted). */
  private routeRun(T: number, l0: number, m: number, ports: number[], i0: number, fallbackOf: number[] | undefined): void {
    const { lfts, runs } = this;
    const { rList, candLo, candHi, candPort, sigma, div, swVer, fallbackPort } = this.c;
    const tT = lfts[T]!;
    for (let j = 0; j < m; j++) tT[l0 + j] = ports[j]!;
    for (let i = 0, nR = this.c.nR; i < nR; i++) {
      const s = rList[i]!;
      const a = candLo[s]!;
      const nc = candHi[s]! - a;
      if (nc <= 0) continue;
      const d = div[s]!;
      if (d === 1 || nc === 1) runs.add(s, l0, m, candPort, a, nc, (i0 + sigma[s]!) % nc, swVer[s]!);
      else {
        // destination-mod-k above level 0: the digit changes every d destinations
        const t = lfts[s]!;
        for (let j = 0; j < m; j++) t[l0 + j] = candPort[a + ((Math.floor((i0 + j) / d) + sigma[s]!) % nc)]!;
      }
    }
    if (fallbackOf) for (const s of fallbackOf) lfts[s]!.fill(fallbackPort[s]!, l0, l0 + m);
  }

  /** One LID (destination index i) by column (unweighted). */
  private routeColumn(T: number, lid: number, port: number, i: number, fallbackOf: number[] | undefined): void {
    const { rList, candLo, candHi, candPort, sigma, div, fallbackPort } = this.c;
    const cols = this.cols;
    const col = cols.column(lid);
    const { buf, width: W } = cols;
    buf[T * W + col] = port;
    for (let r = 0, nR = this.c.nR; r < nR; r++) {
      const s = rList[r]!;
      const a = candLo[s]!;
      const nc = candHi[s]! - a;
      if (nc > 0) buf[s * W + col] = candPort[a + ((Math.floor(i / div[s]!) + sigma[s]!) % nc)]!;
    }
    if (fallbackOf) for (const s of fallbackOf) buf[s * W + col] = fallbackPort[s]!;
  }

  /** Switch LIDs of the other switches (management traffic), after the CA groups: switches without
   *  an up/down route follow their route to a CA below T (whose route joins T's part and stays in
   *  it): the first CA LID of the first switch with CAs in T's part (CA switches are leaves, so
   *  none is T's ancestor: the first one the BFS down finds). The CA entries are final now; the
   *  last column read is kept (consecutive switch LIDs mostly copy from the same CA LID). On a
   *  degraded tree, where the CAs' routes there turn down then up: the first of the CA switches
   *  below T's part (up to TURN_CANDIDATES) whose routes close no channel-dependency cycle
   *  (ftree-turns.ts). */
  routeSwitchLids(level: Int32Array): void {
    const { ix, c, cols, lfts } = this;
    const { nSw, ends } = ix;
    const firstCaLid = new Int32Array(nSw).fill(-1);
    for (const ep of ends) if (!ep.isSwitch && ep.sw >= 0 && firstCaLid[ep.sw]! < 0) firstCaLid[ep.sw] = ep.lid;
    const routed = (ep: (typeof ends)[number]): boolean => !ep.isSwitch || (level[ep.sw] === 0 && ix.caCount[ep.sw]! > 0);
    const turns = c.weighted ? (this.turns = new FtreeTurns(ix, level)) : undefined;
    if (turns) for (const ep of ends) if (ep.sw >= 0 && routed(ep)) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) turns.addLid(ep.sw, l, lfts);
    const copied = new Uint8Array(nSw);
    let copiedLid = -1;
    for (const ep of ends) {
      if (ep.sw < 0 || routed(ep)) continue;
      c.prepare(ep.sw);
      const cas = c.caSwitchesBelow(ep.sw, turns ? TURN_CANDIDATES : 1);
      const copyFrom = cas.length > 0 ? firstCaLid[cas[0]!]! : -1;
      let fb: number[] | undefined;
      if (copyFrom < 0 && c.nR + 1 < nSw) {
        fb = c.outside();
        c.fallback(fb);
      }
      if (copyFrom >= 0) c.downUpRoutes += nSw - c.nR - 1;
      // As routeLids(ep.sw, [ep.lid], [0], 0, fb), but switches outside the part copy copyFrom's
      // entry; every LID of the switch's range (lmc_esp0) alike.
      for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
        const col = cols.column(l);
        const { buf, width: W } = cols;
        buf[ep.sw * W + col] = 0;
        const { rList, candLo, candHi, nR, inR, tEpoch } = c;
        const index = this.index;
        for (let i = 0; i < nR; i++) {
          const x = rList[i]!;
          if (candHi[x]! > candLo[x]!) buf[x * W + col] = c.pick(x, index);
        }
        if (copyFrom >= 0 && nR + 1 < nSw) {
          if (copiedLid !== copyFrom) {
            for (let x = 0; x < nSw; x++) copied[x] = lfts[x]![copyFrom]!;
            copiedLid = copyFrom;
          }
          for (let x = 0; x < nSw; x++) if (inR[x] !== tEpoch) buf[x * W + col] = copied[x]!;
        } else if (fb) for (const x of fb) buf[x * W + col] = c.fallbackPort[x]!;
        if (!turns) continue;
        const port = (x: number): number => buf[x * W + col]!;
        let ok = turns.tryColumn(ep.sw, port);
        // the next CA switch below T's part to turn at, until one closes no cycle
        for (let k = 1; !ok && copyFrom >= 0 && k <= cas.length; k++) {
          const from = firstCaLid[cas[k % cas.length]!]!;
          for (let x = 0; x < nSw; x++) if (inR[x] !== tEpoch) buf[x * W + col] = lfts[x]![from]!;
          if (k < cas.length) ok = turns.tryColumn(ep.sw, port);
        }
        if (!ok) turns.cyclic++;
      }
    }
    cols.flush();
    if (turns && turns.cyclic > 0) this.notes.push(`degraded tree: the CAs' routes to ${turns.cyclic} LIDs close a channel-dependency cycle (routes to switch LIDs that must turn down then up, wherever they turn: ftree-turns.ts): not deadlock-free`);
  }
}

/** CA switches below a switch LID's part tried as the place its down-then-up routes turn. */
const TURN_CANDIDATES = 16;

/** The verifier's batched walk (routing/verify-walk.ts, with routing/verify-batch.ts's columns): a
 * delivering switch's CA LIDs in batches, switch by switch, where their routes are all shortest
 * paths to it, each LID's on one VL; what does not qualify is left to the per-LID walk. */
import type { IndexedEndPort, FabricIndex } from './graph.js';
import type { LftWindows } from './verify-windows.js';
import { BATCH, BATCH_SHIFT, ColumnBatch, MAX_LINKS } from './verify-batch.js';
import type { ChannelCounts } from './verify-channels.js';
import type { SourceSls } from './verify-sls.js';
import type { WalkOptions } from './verify-walk.js';

/** Where a carried batch's hop figures go (the LidWalker). */
export interface BatchSink {
  /** M CA LIDs delivered by T, reached from every source over a shortest path (dist + 2 links). */
  batchFigures(T: number, dist: Int32Array, M: number): void;
}

export class BatchedWalk {
  /** The columns (routing/verify-batch.ts); its columns' LIDs, owners, VLs, multiplicities. */
  private readonly batch: ColumnBatch;
  /** No per-port SL2VL, no switch with more links than a batch's entry can name. */
  private readonly batchable: boolean;
  private readonly bLids = new Int32Array(BATCH);
  private readonly bOwners = new Int32Array(BATCH);
  private readonly bCol = new Int32Array(BATCH);
  private readonly bCols = new Int32Array(BATCH);
  private readonly bVls = new Int32Array(BATCH);
  private readonly bMult = new Int32Array(BATCH);
  private readonly bVl = new Int32Array(BATCH);
  /** Batched columns tried and left to the per-LID walk (batches given up when most are). */
  private batchTries = 0;
  private batchMisses = 0;
  private batchTwinTries = 0;
  private batchTwins = 0;
  private batchHashMisses = 0;
  /** Batches carried, and those undone (a route not a shortest path): checked first when often. */
  private batchRuns = 0;
  private batchAborts = 0;
  /** The switch delivering each LID (−1: none). */
  private readonly lidSw: Int32Array;
  private batchHashStride = 4;
  private readonly ends: readonly IndexedEndPort[];

  constructor(
    ix: FabricIndex,
    private readonly wins: LftWindows,
    private readonly sls: SourceSls,
    private readonly ch: ChannelCounts,
    private readonly o: WalkOptions,
    totalSources: number,
  ) {
    this.ends = ix.ends;
    this.batch = new ColumnBatch(ix, wins.lft);
    let maxLinks = 0;
    for (let x = 0; x < ix.nSw; x++) maxLinks = Math.max(maxLinks, ix.adjStart[x + 1]! - ix.adjStart[x]!);
    this.batchable = o.batch && !o.byPorts && maxLinks <= MAX_LINKS && totalSources < 65536;
    wins.hashOnLoad = !this.batchable;
    this.lidSw = new Int32Array(ix.maxLid + 1).fill(-1);
    for (const ep of ix.ends) if (ep.sw >= 0) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc) && l <= ix.maxLid; l++) this.lidSw[l] = ep.sw;
  }

  /** Whether batches are worth trying: batchable, and not most columns left to the per-LID walk. */
  wanted(): boolean {
    return this.batchable && (this.batchTries < 1024 || 2 * this.batchMisses <= this.batchTries);
  }

  /** T's CA LIDs (taken from lids_ / owners_; `byDist` sorted for T, every switch reaching it) in batches switch by switch
   *  where their routes are all shortest paths to T, each LID's on one VL; the others are left in
   *  lids_ / owners_, in their order, for the per-LID walk. A batch: up to BATCH LIDs of two consecutive blocks. */
  run(T: number, dist: Int32Array, byDist: Int32Array, lids_: number[], owners_: number[], sink: BatchSink): void {
    const { ends, bLids, bOwners } = this;
    const n = lids_.length;
    let keep = 0;
    let B = 0;
    for (let i = 0; i <= n; i++) {
      const oi = i < n ? owners_[i]! : -1;
      if (oi >= 0 && ends[oi]!.isSwitch) {
        lids_[keep] = lids_[i]!;
        owners_[keep++] = oi;
        continue;
      }
      // A batch: up to BATCH LIDs of two consecutive blocks (see ColumnBatch.dec).
      const blk = i < n ? lids_[i]! >>> BATCH_SHIFT : 0;
      const b0 = bLids[0]! >>> BATCH_SHIFT;
      if (B > 0 && (oi < 0 || B === BATCH || blk < b0 || blk > b0 + 1)) {
        keep = this.batchOf(T, dist, byDist, B, keep, lids_, owners_, sink);
        B = 0;
      }
      if (oi < 0) break;
      bLids[B] = lids_[i]!;
      bOwners[B++] = oi;
    }
    lids_.length = keep;
    owners_.length = keep;
  }

  /** One batch (bLids / bOwners[0 .. B − 1], LIDs of two consecutive blocks): the columns that qualify
   *  carried (twins, with the same entries at every switch and the same VL, once for all), the
   *  others appended to lids_ / owners_ at `keep`; returns the new end. The carry checks that
   *  the routes are shortest paths as it goes (and undoes the batch when one is not): the
   *  columns are checked first only when that was seldom so. */
  private batchOf(T: number, dist: Int32Array, byDist: Int32Array, B: number, keep: number, lids_: number[], owners_: number[], sink: BatchSink): number {
    const { batch, bLids, bOwners, bCol, bCols, bVls, bMult, bVl, ends, wins } = this;
    const hashing = this.batchTwinTries < 1024 || this.batchTwins > 0;
    for (let j = 0; j < B; j++) {
      batch.ensure(bLids[j]!, this.lidSw, hashing ? this.batchHashStride : 0);
      bCol[j] = bLids[j]! & (2 * BATCH - 1);
    }
    const dec = batch.dec;
    let checked = this.batchRuns >= 64 && 8 * this.batchAborts > this.batchRuns;
    batch.check(dec, bCol, B, T, dist, !checked);
    // T's entry leads to the LID's own port; the LID's sources are on one VL.
    for (let j = 0; j < B; j++) {
      this.batchTries++;
      const ok = !batch.bad[j] && wins.leadsTo(T, wins.port(T, bLids[j]!), ends[bOwners[j]!]!);
      bVl[j] = ok ? this.sls.lidVl(bLids[j]!, T) : -1;
    }
    for (let pass = 0; pass < 2; pass++) {
      let nC = 0;
      let M = 0;
      const byHash = hashing ? new Map<number, number[]>() : undefined;
      for (let j = 0; j < B; j++) {
        const vl = bVl[j]!;
        if (vl < 0) continue;
        M++;
        if (byHash) {
          if (pass === 0) this.batchTwinTries++;
          const h = batch.hashOf(bCol[j]!);
          const cands = byHash.get(h);
          const r = cands?.find((k) => bVls[k] === vl && batch.sameColumns(dec, bCols[k]!, bCol[j]!, T));
          if (r !== undefined) {
            bMult[r]!++;
            if (pass === 0) this.batchTwins++;
            continue;
          }
          if (cands) {
            cands.push(nC);
            if (++this.batchHashMisses > 64 + this.batchTwins) this.batchHashStride = 1;
          } else byHash.set(h, [nC]);
        }
        bCols[nC] = bCol[j]!;
        bVls[nC] = vl;
        bMult[nC++] = 1;
      }
      if (nC === 0) break;
      if (pass === 0) this.batchRuns++;
      if (batch.carry(this.ch, dec, byDist, T, dist, bCols, bVls, bMult, nC, this.o.doCdg, this.o.sl !== undefined)) {
        sink.batchFigures(T, dist, M);
        break;
      }
      // Some route is not a shortest path: check every column, carry those that are (once:
      // checked columns are carried whole, else all are left to the per-LID walk).
      this.batchAborts++;
      if (checked || pass > 0) {
        bVl.fill(-1, 0, B);
        break;
      }
      checked = true;
      batch.check(dec, bCol, B, T, dist, false);
      for (let j = 0; j < B; j++) if (batch.bad[j]) bVl[j] = -1;
    }
    for (let j = 0; j < B; j++) {
      if (bVl[j]! >= 0) continue;
      this.batchMisses++;
      lids_[keep] = bLids[j]!;
      owners_[keep++] = bOwners[j]!;
    }
    return keep;
  }
}

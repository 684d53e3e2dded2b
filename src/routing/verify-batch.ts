/**
 * The verifier's walk of a batch of CA LIDs delivered by one switch T, switch by switch
 * (routing/verify-walk.ts's walkSwitch hands them over). The LFT entries are read switch-major,
 * 64 LIDs at a time (each switch's entries for the 64 side by side, one cache line of its table
 * read once for all of them, four tables at a time), and decoded as they are used through a
 * per-switch table (port → the index of the link among the switch's links).
 * Where every switch's route to a LID is a shortest path to T (its entry leads to a switch one
 * hop nearer T, by `dist`; T's delivers to a CA) the routes need no in-tree resolved: the
 * switches by distance to T, farthest first, are an order of every such LID, and the counts are
 * carried along it for all the LIDs of the batch at once. So a switch's sources, channel counts
 * and dependency bits stay in the cache across the LIDs of the batch, rather than each being
 * touched once per LID over all the switches.
 *
 * Columns all on one VL (the most common) are carried by carryRun: their sources kept by column
 * as in `dec`, a switch whose entry is the same for all of them carried at once.
 *
 * A column (LID) that is not all shortest paths, with an entry that leads to no switch, or with
 * T's entry not leading to the LID's port (checked by the caller), is left to the per-LID walk
 * (`bad`), which finds and reports what is wrong as it always did.
 */
import type { FabricIndex } from './graph.js';
import { ROUTE_SCALE, type ChannelCounts } from './verify-channels.js';

/** LIDs per block (a power of two: blocks are aligned), and at most per batch. */
export const BATCH_SHIFT = 6;
export const BATCH = 1 << BATCH_SHIFT;
/** Decoded entries that are not a link to another switch: to a CA port, anything else. */
export const E_CA = 254;
const E_NONE = 255;
const EMPTY = new Uint8Array(0);
/** In next256: the entry leads to no switch (switches are fewer: one LID each). */
const NO_SWITCH = 0xffff;
/** Switches with more links than this have no batches (their link indices would not fit a byte). */
export const MAX_LINKS = 254;
/** Entries per switch in `dec`: two blocks of BATCH LIDs (an even and an odd one). */
const ROW = 2 * BATCH;

export class ColumnBatch {
  /** The LFT entries (port bytes) of two blocks of 64 LIDs, an even and an odd one (the LIDs of
   *  a switch, consecutive, are in one or two blocks side by side): switch x and LID d at
   *  x × ROW + (d mod ROW). */
  readonly dec: Uint8Array;
  /** `dec` and the tables as 32-bit words (a table not aligned to them: undefined). */
  private readonly dec32: Uint32Array;
  private readonly lft32: (Uint32Array | undefined)[];
  /** Per half of the rows, the block it holds (−1: none), the hash stride its hashes were made
   *  with (0: none), and the hashes (by d mod ROW). */
  private readonly blockOf = new Int32Array(2).fill(-1);
  private readonly blockHash = new Int32Array(2);
  private readonly hashes = new Int32Array(ROW);
  /** switch × `stride` + port byte → link index, E_CA or E_NONE. */
  private readonly code: Uint8Array;
  private readonly stride: number;
  /** Column k's sources arriving at switch x from upstream, at x × nC + k (carryRun: column j
   *  of `dec` at x × ROW + j; 0 between batches; 16 bits: there are fewer sources than unicast
   *  LIDs). */
  private readonly acc: Uint16Array;
  /** The dependency bits a carry set (and their VLs), to be cleared when it is undone. */
  private readonly log: Uint32Array;
  private readonly logVl: Uint8Array;
  /** Per column of the last `check`: not all shortest paths to T (or T's entry not to a CA). */
  readonly bad = new Uint8Array(BATCH);
  private readonly nSw: number;
  /** The switch delivering each LID of the block being read (−1: none), the least and the
   *  greatest of them. */
  private readonly own = new Int32Array(BATCH);
  private ownMin = 0;
  private ownMax = -1;
  /** Per switch, for the columns of carryRun: the code of its entry when it is the same for
   *  all of them, else −1. */
  private readonly uni: Int32Array;
  /** `code` with 256 entries per switch (any port byte, no bounds test), and the switch each
   *  entry leads to (NO_SWITCH: none). */
  private readonly code256: Uint8Array;
  private readonly next256: Uint16Array;

  constructor(
    private readonly ix: FabricIndex,
    private readonly lft: readonly (Uint8Array | undefined)[],
  ) {
    const { nSw, portEntry, swNumPorts, adjStart } = ix;
    const W = ix.maxPorts + 1;
    this.nSw = nSw;
    const stride = (this.stride = Math.min(W, 256));
    const code = (this.code = new Uint8Array(nSw * stride).fill(E_NONE));
    for (let s = 0; s < nSw; s++) {
      const n = ix.fabric.nodes[ix.swNode[s]!]!;
      for (let p = 1; p < W && p <= swNumPorts[s]!; p++) {
        const e = portEntry[s * W + p]!;
        code[s * stride + p] = !n.ports[p]?.peer ? E_NONE : e >= 0 ? e - adjStart[s]! : E_CA;
      }
    }
    this.dec = new Uint8Array(nSw * ROW);
    this.dec32 = new Uint32Array(this.dec.buffer);
    // A table's entries as 32-bit words where its bytes are aligned to them (the words of a
    // block copied as the same bytes: both views in the machine's byte order).
    this.lft32 = lft.map((t) => (t && t.byteOffset % 4 === 0 ? new Uint32Array(t.buffer, t.byteOffset, t.length >>> 2) : undefined));
    this.acc = new Uint16Array(nSw * ROW);
    this.uni = new Int32Array(nSw);
    this.code256 = new Uint8Array(nSw * 256).fill(E_NONE);
    this.next256 = new Uint16Array(nSw * 256).fill(NO_SWITCH);
    for (let s = 0; s < nSw; s++) {
      for (let p = 0; p < stride; p++) {
        const c = (this.code256[s * 256 + p] = code[s * stride + p]!);
        if (c < E_CA) this.next256[s * 256 + p] = ix.adjSw[adjStart[s]! + c]!;
      }
    }
    this.log = new Uint32Array(nSw * BATCH);
    this.logVl = new Uint8Array(nSw * BATCH);
  }

  /** The entries of the block of LID d in `dec` (255 where a table has none), read when not
   *  there; with hashStride > 0, the hash of each of its LIDs over the entries of every
   *  hashStride-th switch but its own (lidSw), made with the block's read (read again if it
   *  was read without). */
  ensure(d: number, lidSw: Int32Array, hashStride: number): void {
    const w = d >>> BATCH_SHIFT;
    const half = w & 1;
    if (this.blockOf[half] === w && (hashStride === 0 || this.blockHash[half] === hashStride)) return;
    this.blockOf[half] = w;
    this.blockHash[half] = hashStride;
    const { nSw, lft, hashes, dec, own } = this;
    const d0 = w << BATCH_SHIFT;
    const h0 = half * BATCH;
    hashes.fill(0x811c9dc5 | 0, h0, h0 + BATCH);
    let lo = nSw;
    let hi = -1;
    for (let j = 0; j < BATCH; j++) {
      const o = (own[j] = d0 + j < lidSw.length ? lidSw[d0 + j]! : -1);
      if (o >= 0 && o < lo) lo = o;
      if (o > hi) hi = o;
    }
    this.ownMin = lo;
    this.ownMax = hi;
    const end = d0 + BATCH;
    const { lft32, dec32 } = this;
    const w0 = d0 >>> 2;
    for (let x = 0; x < nSw; x++) {
      const r = x * ROW + h0;
      // Four tables at a time when they are long enough: their cache lines are fetched together
      // (each is a line of another table, most often not in the cache); 32 bits at a time from
      // tables that allow it (the engines' tables are, emptyLfts in graph.ts; a caller's may not be).
      const t0 = lft[x];
      const t1 = lft[x + 1];
      const t2 = lft[x + 2];
      const t3 = lft[x + 3];
      if (x + 3 < nSw && t0 && t1 && t2 && t3 && end <= t0.length && end <= t1.length && end <= t2.length && end <= t3.length) {
        const u0 = lft32[x];
        const u1 = lft32[x + 1];
        const u2 = lft32[x + 2];
        const u3 = lft32[x + 3];
        if (u0 && u1 && u2 && u3) {
          const q = r >>> 2;
          for (let j = 0; j < BATCH / 4; j++) {
            dec32[q + j] = u0[w0 + j]!;
            dec32[q + ROW / 4 + j] = u1[w0 + j]!;
            dec32[q + ROW / 2 + j] = u2[w0 + j]!;
            dec32[q + (3 * ROW) / 4 + j] = u3[w0 + j]!;
          }
        } else {
          for (let j = 0; j < BATCH; j++) {
            dec[r + j] = t0[d0 + j]!;
            dec[r + ROW + j] = t1[d0 + j]!;
            dec[r + 2 * ROW + j] = t2[d0 + j]!;
            dec[r + 3 * ROW + j] = t3[d0 + j]!;
          }
        }
        for (let i = 0; i < 4; i++) this.hashRow(x + i, h0, hashStride);
        x += 3;
        continue;
      }
      if (t0 && end <= t0.length) for (let j = 0; j < BATCH; j++) dec[r + j] = t0[d0 + j]!;
      else for (let j = 0; j < BATCH; j++) dec[r + j] = t0 && d0 + j < t0.length ? t0[d0 + j]! : 255;
      this.hashRow(x, h0, hashStride);
    }
  }

  /** Switch x's entries (at h0 in its row) into the hashes of the LIDs it does not deliver, when
   *  x is a hashStride-th switch. */
  private hashRow(x: number, h0: number, hashStride: number): void {
    if (hashStride === 0 || x % hashStride !== 0) return;
    const { dec, hashes, own } = this;
    const r = x * ROW + h0;
    // (A switch delivering none of the block's LIDs: every column, without the test.)
    if (x < this.ownMin || x > this.ownMax) for (let j = 0; j < BATCH; j++) hashes[h0 + j] = Math.imul(hashes[h0 + j]! ^ dec[r + j]!, 16777619);
    else for (let j = 0; j < BATCH; j++) if (own[j] !== x) hashes[h0 + j] = Math.imul(hashes[h0 + j]! ^ dec[r + j]!, 16777619);
  }

  /** The hash of column j (LID d mod ROW) of `dec`, as its block's read made it. */
  hashOf(j: number): number {
    return this.hashes[j]!;
  }

  /** For the columns cols[0 .. B − 1] of `dec` (LIDs delivered by T): bad[k] when the
   *  entry of a switch x ≠ T leads to no switch at dist[x] − 1 (none when x is unreachable:
   *  dist −1), or T's to no CA (or x has no table). */
  check(dec: Uint8Array, cols: Int32Array, B: number, T: number, dist: Int32Array, onlyT: boolean): void {
    const { bad, nSw, lft, code, stride: st } = this;
    const { adjStart, adjSw } = this.ix;
    bad.fill(0, 0, B);
    for (let x = 0; x < nSw; x++) {
      if (!lft[x]) {
        bad.fill(1, 0, B);
        return;
      }
      const r = x * ROW;
      const cx = x * st;
      if (x === T) {
        for (let k = 0; k < B; k++) {
          const p = dec[r + cols[k]!]!;
          if (p >= st || code[cx + p] !== E_CA) bad[k] = 1;
        }
        continue;
      }
      if (onlyT) continue;
      const ax = adjStart[x]!;
      const dx1 = dist[x]! - 1;
      for (let k = 0; k < B; k++) {
        const p = dec[r + cols[k]!]!;
        const c = p < st ? code[cx + p]! : E_NONE;
        if (c >= E_CA || dist[adjSw[ax + c]!] !== dx1) bad[k] = 1;
      }
    }
  }

  /** Whether columns i and j of `dec` (both `check`ed without `bad`) have the same entry
   *  at every switch but T (whose lead each to its own port). For such columns, the same port
   *  byte is the same link. */
  sameColumns(dec: Uint8Array, i: number, j: number, T: number): boolean {
    const end = this.nSw * ROW;
    const rT = T * ROW;
    for (let r = 0; r < end; r += ROW) if (dec[r + i] !== dec[r + j] && r !== rT) return false;
    return true;
  }

  /** Carry the columns cols[0 .. nC − 1] of `dec` (T's entries `check`ed; each LID's
   *  routes on VL vls[k], standing for mult[k] LIDs) along `order` (the switches by distance to
   *  T, farthest first): sources per switch (caCount at the switch, plus what comes from
   *  upstream), routes and CA LIDs per channel, and the dependencies of the channels that carry
   *  traffic (`lazyBits`: a VL's bits made at its first dependency, else before). Returns false
   *  when an entry is not a shortest path to T (or leads to no switch): what the batch counted
   *  is then undone, for the caller to `check` the columns and carry those that qualify. */
  carry(ch: ChannelCounts, dec: Uint8Array, order: Int32Array, T: number, dist: Int32Array, cols: Int32Array, vls: Int32Array, mult: Int32Array, nC: number, doCdg: boolean, lazyBits: boolean): boolean {
    // carryRun: one VL, the dependency bits' offsets in 32 bits.
    if (ch.xBase[this.nSw]! < 2 ** 31) {
      const vl = vls[0]!;
      let k = 1;
      while (k < nC && vls[k] === vl) k++;
      if (k === nC) return this.carryRun(ch, dec, order, T, dist, cols, mult, nC, vl, doCdg, lazyBits);
    }
    const { acc, nSw, code, stride: st } = this;
    const { adjStart, adjSw, caCount } = this.ix;
    const { xBase, xStride, routes, depBits, vlSeen } = ch;
    let made = 0;
    for (let k = 0; k < nC && doCdg; k++) {
      const vl = vls[k]!;
      if (lazyBits || depBits[vl]) continue;
      ch.depsOf(vl);
      made |= 1 << vl;
    }
    const { log, logVl } = this;
    let logN = 0;
    let failAt = -1;
    let failK = 0;
    rows: for (let i = 0; i < nSw; i++) {
      const x = order[i]!;
      if (x === T) continue;
      const r = x * ROW;
      const cx = x * st;
      const ra = x * nC;
      const own = caCount[x]!;
      const ax = adjStart[x]!;
      const bx = xBase[x]!;
      const sx = xStride[x]!;
      const dx1 = dist[x]! - 1;
      for (let k = 0; k < nC; k++) {
        const j = cols[k]!;
        const p = dec[r + j]!;
        const c = p < st ? code[cx + p]! : E_NONE;
        const e = ax + c;
        const n = c < E_CA ? adjSw[e]! : -1;
        if (n < 0 || dist[n] !== dx1) {
          failAt = i;
          failK = k;
          break rows;
        }
        const a = acc[ra + k]! + own;
        acc[ra + k] = 0;
        acc[n * nC + k]! += a;
        routes[e]! += (a * ROUTE_SCALE + 1) * mult[k]!;
        if (a === 0 || !doCdg || n === T) continue;
        const c2 = code[n * st + dec[n * ROW + j]!]!;
        const vl = vls[k]!;
        let bits = depBits[vl];
        if (!bits) {
          bits = ch.depsOf(vl);
          made |= 1 << vl;
        }
        const bit = bx + c * sx + c2;
        const byte = bit >>> 3;
        const bv = 1 << (bit & 7);
        if (!(bits[byte]! & bv)) {
          bits[byte] = bits[byte]! | bv;
          vlSeen[vl]!++;
          log[logN] = bit;
          logVl[logN++] = vl;
        }
      }
    }
    if (failAt >= 0) {
      this.undo(ch, dec, order, T, cols, mult, nC, failAt, failK, logN, made);
      return false;
    }
    // T's sources (arriving from upstream) are delivered: nothing to carry on.
    for (let k = 0; k < nC; k++) acc[T * nC + k] = 0;
    return true;
  }

  /** `carry` for columns all on VL vl: the same counts, bits and undo. The sources per switch
   *  by column (x × ROW + j, as in `dec`), the dependency bits' offsets in 32 bits; columns
   *  j0, j0 + 1, … (mod ROW) each for one LID (`run`: the most common) read without `cols` and
   *  `mult`. A switch whose entry is the same for all the columns (uni) is carried at once: one
   *  next switch, one channel to count. */
  private carryRun(ch: ChannelCounts, dec: Uint8Array, order: Int32Array, T: number, dist: Int32Array, cols: Int32Array, mult: Int32Array, nC: number, vl: number, doCdg: boolean, lazyBits: boolean): boolean {
    const { acc, nSw, code256, next256, uni, log, logVl } = this;
    const { adjStart, adjSw, caCount } = this.ix;
    const { xBase, xStride, routes, vlSeen } = ch;
    const M = ROW - 1;
    const j0 = cols[0]!;
    let run = true;
    for (let k = 0; k < nC; k++) if (cols[k] !== ((j0 + k) & M) || mult[k] !== 1) run = false;
    // Made here (and dropped after) when lazy and the carry makes no dependency on vl.
    const had = ch.depBits[vl] !== undefined;
    const bits = doCdg ? ch.depsOf(vl) : EMPTY;
    // (One column: every switch, carried as any other.)
    if (nC === 1) uni.fill(-1);
    else {
      for (let x = 0; x < nSw; x++) {
        const r = x * ROW;
        const p = dec[r + j0]!;
        let k = 1;
        while (k < nC && dec[r + (run ? (j0 + k) & M : cols[k]!)] === p) k++;
        uni[x] = k < nC ? -1 : code256[(x << 8) + p]!;
      }
    }
    let logN = 0;
    let seen = 0;
    let failAt = -1;
    let failK = 0;
    rows: for (let i = 0; i < nSw; i++) {
      const x = order[i]!;
      if (x === T) continue;
      const r = x * ROW;
      const cx = x << 8;
      const own = caCount[x]!;
      const ax = adjStart[x]!;
      const bx = xBase[x]! | 0;
      const sx = xStride[x]!;
      const dx1 = dist[x]! - 1;
      const u = uni[x]!;
      if (u >= 0) {
        const n = u < E_CA ? adjSw[ax + u]! : -1;
        if (n < 0 || dist[n] !== dx1) {
          failAt = i;
          break;
        }
        const rn = n * ROW;
        let sa = 0;
        let sum = 0;
        let ms = 0;
        for (let k = 0; k < nC; k++) {
          const j = run ? (j0 + k) & M : cols[k]!;
          const a = acc[r + j]! + own;
          acc[rn + j]! += a;
          const m = run ? 1 : mult[k]!;
          sa += a;
          sum += a * m;
          ms += m;
        }
        routes[ax + u]! += sum * ROUTE_SCALE + ms;
        if (sa === 0 || !doCdg || n === T) {
          for (let k = 0; k < nC; k++) acc[r + (run ? (j0 + k) & M : cols[k]!)] = 0;
          continue;
        }
        const un = uni[n]!;
        const cn = n << 8;
        const bu = bx + u * sx;
        let last = -1;
        for (let k = 0; k < nC; k++) {
          const j = run ? (j0 + k) & M : cols[k]!;
          const a = acc[r + j]! + own;
          acc[r + j] = 0;
          if (a === 0) continue;
          const bit = bu + (un >= 0 ? un : code256[cn + dec[rn + j]!]!);
          if (bit === last) continue;
          last = bit;
          const byte = bit >>> 3;
          const bv = 1 << (bit & 7);
          if (!(bits[byte]! & bv)) {
            bits[byte] = bits[byte]! | bv;
            seen++;
            log[logN++] = bit;
          }
        }
        continue;
      }
      for (let k = 0; k < nC; k++) {
        const j = run ? (j0 + k) & M : cols[k]!;
        const p = dec[r + j]!;
        const c = code256[cx + p]!;
        const e = ax + c;
        // (From the port byte, not from c: two loads side by side, not one after the other.)
        const n = next256[cx + p]!;
        if (n === NO_SWITCH || dist[n] !== dx1) {
          failAt = i;
          failK = k;
          break rows;
        }
        const a = acc[r + j]! + own;
        acc[r + j] = 0;
        const rn = n * ROW;
        acc[rn + j]! += a;
        routes[e]! += run ? a * ROUTE_SCALE + 1 : (a * ROUTE_SCALE + 1) * mult[k]!;
        if (a === 0 || !doCdg || n === T) continue;
        const bit = bx + c * sx + code256[(n << 8) + dec[rn + j]!]!;
        const byte = bit >>> 3;
        const bv = 1 << (bit & 7);
        if (!(bits[byte]! & bv)) {
          bits[byte] = bits[byte]! | bv;
          seen++;
          log[logN++] = bit;
        }
      }
    }
    vlSeen[vl]! += seen;
    const made = doCdg && !had ? 1 << vl : 0;
    if (failAt >= 0) {
      logVl.fill(vl, 0, logN);
      this.undo(ch, dec, order, T, cols, mult, nC, failAt, failK, logN, made);
      return false;
    }
    if (made && lazyBits && seen === 0) ch.depBits[vl] = undefined;
    for (let k = 0; k < nC; k++) acc[T * ROW + cols[k]!] = 0;
    return true;
  }

  /** Undo a carry stopped at order[i0], column k0: the routes counted before (recounted the same
   *  way), the dependency bits it set (logN of them), the VLs' bits it made (`made`). */
  private undo(ch: ChannelCounts, dec: Uint8Array, order: Int32Array, T: number, cols: Int32Array, mult: Int32Array, nC: number, i0: number, k0: number, logN: number, made: number): void {
    const { acc, code, stride: st, log, logVl } = this;
    const { adjStart, adjSw, caCount } = this.ix;
    const { routes, depBits, vlSeen } = ch;
    const nSw = this.nSw;
    // (carryRun leaves its sources by column, x × ROW + j: all of acc cleared.)
    acc.fill(0);
    for (let i = 0; i <= i0; i++) {
      const x = order[i]!;
      if (x === T) continue;
      const r = x * ROW;
      const cx = x * st;
      const ra = x * nC;
      const ax = adjStart[x]!;
      for (let k = 0; k < (i === i0 ? k0 : nC); k++) {
        const e = ax + code[cx + dec[r + cols[k]!]!]!;
        const a = acc[ra + k]! + caCount[x]!;
        acc[adjSw[e]! * nC + k]! += a;
        routes[e]! -= (a * ROUTE_SCALE + 1) * mult[k]!;
      }
    }
    acc.fill(0, 0, nSw * nC);
    for (let l = 0; l < logN; l++) {
      const bits = depBits[logVl[l]!]!;
      bits[log[l]! >>> 3] = bits[log[l]! >>> 3]! & ~(1 << (log[l]! & 7));
      vlSeen[logVl[l]!]!--;
    }
    for (let vl = 0; vl < 16; vl++) if (made & (1 << vl)) depBits[vl] = undefined;
  }
}

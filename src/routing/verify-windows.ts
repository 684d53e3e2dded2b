/**
 * The verifier's view of the forwarding tables (routing/verify-walk.ts walks it): the LFT entries
 * read 64 LIDs at a time from every switch (one cache line of each table, not one per LID) and
 * decoded into `win`, LID-major: for each switch, the switch its entry leads to and the index of
 * that link among its links (n × 256 + index), or a C_* outcome. A few such windows are kept
 * (LRU): destinations are walked by delivering switch, whose own LID and CA LIDs are in
 * different windows. A window reloaded holds the same entries (it is read from the tables again).
 * As a window is first read, the CA destination LIDs per channel are counted.
 */
import type { EndPort, FabricIndex } from './graph.js';

// Outcomes of an LFT entry that does not lead to another switch.
export const C_CA = -1;
export const C_SELF = -2;
export const C_NO_ROUTE = -3;
export const C_NO_LFT = -4;
export const C_BAD = -5;
export const C_DOWN = -6;

/** LIDs per window (a power of two: windows are aligned), windows kept. */
const WIN_SHIFT = 6;
const WIN = 1 << WIN_SHIFT;
const WINDOWS = 3;

export class LftWindows {
  /** The decoded entries: LID d of the window in slot k, switch x, at (k × WIN + d mod WIN) × nSw + x. */
  readonly win: Int32Array;
  /** CA destination LIDs per channel (adjacency entry) whose entry leads over it, in the windows read so far. */
  readonly lidCount: Int32Array;
  private readonly nSw: number;
  private readonly W: number;
  private readonly lft: (Uint8Array | undefined)[] = [];
  /** switch * W + port → what the entry leads to: n × 256 + link index, or a C_* outcome. */
  private readonly code: Int32Array;
  private readonly winOf = new Int32Array(WINDOWS).fill(-1);
  private readonly winUsed = new Float64Array(WINDOWS);
  private winClock = 0;
  private readonly isCaLid: Uint8Array;
  private readonly counted: Uint8Array;
  /** Sum of bytes read ahead (kept so that the reads are not optimised away). */
  private pf = 0;

  constructor(
    private readonly ix: FabricIndex,
    lftByNode: ReadonlyMap<number, Uint8Array>,
  ) {
    const { nSw, ends, portEntry, swNumPorts, adjStart, adjSw } = ix;
    const W = (this.W = ix.maxPorts + 1);
    this.nSw = nSw;
    for (let s = 0; s < nSw; s++) this.lft.push(lftByNode.get(ix.swNode[s]!));
    this.code = new Int32Array(nSw * W);
    for (let s = 0; s < nSw; s++) {
      const n = ix.fabric.nodes[ix.swNode[s]!]!;
      this.code[s * W] = C_SELF;
      for (let p = 1; p < W; p++) {
        const i = s * W + p;
        const e = portEntry[i]!;
        this.code[i] = p > swNumPorts[s]! ? C_BAD : !n.ports[p]?.peer ? C_DOWN : e >= 0 ? adjSw[e]! * 256 + (e - adjStart[s]!) : C_CA;
      }
    }
    this.lidCount = new Int32Array(adjStart[nSw]!);
    this.isCaLid = new Uint8Array(ix.maxLid + 1);
    for (const ep of ends) if (!ep.isSwitch && ep.sw >= 0) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc) && l <= ix.maxLid; l++) this.isCaLid[l] = 1;
    this.counted = new Uint8Array((ix.maxLid >>> WIN_SHIFT) + 1);
    this.win = new Int32Array(WINDOWS * WIN * nSw);
  }

  /** Offset in `win` of LID d's decoded entries (switch x at offset + x), reading its window. */
  column(d: number): number {
    const w = d >>> WIN_SHIFT;
    let slot = -1;
    for (let i = 0; i < WINDOWS; i++) if (this.winOf[i] === w) slot = i;
    if (slot < 0) {
      slot = 0;
      for (let i = 1; i < WINDOWS; i++) if (this.winUsed[i]! < this.winUsed[slot]!) slot = i;
      this.load(slot, w << WIN_SHIFT);
      this.winOf[slot] = w;
    }
    this.winUsed[slot] = ++this.winClock;
    return (slot * WIN + (d & (WIN - 1))) * this.nSw;
  }

  private load(slot: number, d0: number): void {
    const { nSw, W, code, win, lft, isCaLid, lidCount } = this;
    const adjStart = this.ix.adjStart;
    const o = slot * WIN * nSw;
    const count = this.counted[d0 >>> WIN_SHIFT] === 0;
    this.counted[d0 >>> WIN_SHIFT] = 1;
    let pf = 0;
    for (let x = 0; x < nSw; x++) {
      const t = lft[x];
      // Start reading the next switch's table (another cache line, often another page).
      const tn = lft[x + 1];
      if (tn !== undefined && d0 < tn.length) pf += tn[d0]!;
      const row = x * W;
      if (t && d0 + WIN <= t.length) {
        for (let j = 0, i = o + x; j < WIN; j++, i += nSw) {
          const p = t[d0 + j]!;
          win[i] = p < W ? code[row + p]! : p === 255 ? C_NO_ROUTE : C_BAD;
        }
      } else {
        for (let j = 0, i = o + x; j < WIN; j++, i += nSw) {
          const p = t && d0 + j < t.length ? t[d0 + j]! : 255;
          win[i] = p < W ? code[row + p]! : p === 255 ? (t ? C_NO_ROUTE : C_NO_LFT) : C_BAD;
        }
      }
      if (!count) continue;
      const e0 = adjStart[x]!;
      for (let j = 0, i = o + x; j < WIN; j++, i += nSw) {
        const c = win[i]!;
        if (c >= 0 && isCaLid[d0 + j] === 1) lidCount[e0 + (c & 255)]!++;
      }
    }
    this.pf = pf;
  }

  /** The port byte of switch x's entry for d (255 when there is none). */
  port(x: number, d: number): number {
    const t = this.lft[x];
    return t && d < t.length ? t[d]! : 255;
  }

  /** Whether switch s's port `port` leads to end port `dest`. */
  leadsTo(s: number, port: number, dest: EndPort): boolean {
    const peer = this.ix.fabric.nodes[this.ix.swNode[s]!]!.ports[port]?.peer;
    return peer !== undefined && peer.node === dest.node && peer.port === dest.port;
  }

  hashColumn(d: number): number {
    const { win, nSw } = this;
    const b = this.column(d);
    let h = 0x811c9dc5;
    for (let x = 0; x < nSw; x++) h = Math.imul(h ^ win[b + x]!, 16777619);
    return h;
  }

  /** Whether LIDs d1 and d2 have the same decoded entry at every switch. */
  sameColumn(d1: number, d2: number): boolean {
    const b1 = this.column(d1);
    const b2 = this.column(d2); // evicts another window than d1's (LRU, ≥ 2 windows)
    const { win, nSw } = this;
    for (let x = 0; x < nSw; x++) if (win[b1 + x] !== win[b2 + x]) return false;
    return true;
  }
}

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
const WINDOWS = 4;
/** Switches read together (16 entries of `win`: one cache line). */
const BLOCK = 16;
const EMPTY = new Uint8Array(0);

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
  /** The tables of the block of switches being read. */
  private readonly tb: Uint8Array[] = new Array<Uint8Array>(BLOCK).fill(EMPTY);

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

  /** Read LIDs d0 .. d0 + WIN − 1 into window `slot`, switches in blocks of BLOCK: each LID's
   *  entries of a block go to one cache line of `win`, and a block touches BLOCK tables and WIN
   *  lines of `win` (not WIN pages per switch). */
  private load(slot: number, d0: number): void {
    const { nSw, W, code, win, lft, isCaLid, lidCount, tb } = this;
    const adjStart = this.ix.adjStart;
    const o = slot * WIN * nSw;
    const count = this.counted[d0 >>> WIN_SHIFT] === 0;
    this.counted[d0 >>> WIN_SHIFT] = 1;
    for (let x0 = 0; x0 < nSw; x0 += BLOCK) {
      const x1 = Math.min(nSw, x0 + BLOCK);
      let fast = true;
      for (let x = x0; x < x1; x++) {
        const t = lft[x];
        if (!t || d0 + WIN > t.length) fast = false;
        tb[x - x0] = t ?? EMPTY;
      }
      for (let j = 0; j < WIN; j++) {
        const d = d0 + j;
        const ca = count && isCaLid[d] === 1;
        for (let x = x0, i = o + j * nSw + x0; x < x1; x++, i++) {
          const t = tb[x - x0]!;
          let c: number;
          if (fast) {
            const p = t[d]!;
            c = p < W ? code[x * W + p]! : p === 255 ? C_NO_ROUTE : C_BAD;
          } else {
            const p = d < t.length ? t[d]! : 255;
            c = p < W ? code[x * W + p]! : p === 255 ? (lft[x] ? C_NO_ROUTE : C_NO_LFT) : C_BAD;
          }
          win[i] = c;
          if (ca && c >= 0) lidCount[adjStart[x]! + (c & 255)]!++;
        }
      }
    }
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

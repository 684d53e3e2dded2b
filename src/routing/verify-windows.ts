/**
 * The verifier's view of the forwarding tables (routing/verify-walk.ts walks it): the LFT entries
 * read 64 LIDs at a time from every switch (one cache line of each table, not one per LID) and
 * decoded into `win`, LID-major: for each switch, the switch its entry leads to and the index of
 * that link among its links (n × 256 + index), or a C_* outcome. A few such windows are kept
 * (LRU): destinations are walked by delivering switch, whose own LID and CA LIDs are in
 * different windows. A window reloaded holds the same entries (it is read from the tables again).
 * Decoding is one lookup per entry: each switch has a table from port byte to outcome, one entry
 * per port it can have (bytes above: 255 no route, the others a bad port), so that the tables of
 * all the switches stay in the cache while a window is read.
 */
import type { IndexedEndPort, FabricIndex } from './graph.js';

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

export class LftWindows {
  /** The decoded entries: LID d of the window in slot k, switch x, at (k × WIN + d mod WIN) × nSw + x. */
  readonly win: Int32Array;
  private readonly nSw: number;
  /** Per switch, its LFT (routing/verify-batch.ts decodes from these too). */
  readonly lft: (Uint8Array | undefined)[] = [];
  /** switch × `stride` + port byte (≤ the fabric's largest port number) → what the entry leads
   *  to: n × 256 + link index, or a C_* outcome. */
  readonly code: Int32Array;
  readonly stride: number;
  /** While set, a window read also hashes each LID's decoded entries (hashColumn), those of
   *  every `hashStride`-th switch: a hash is only a filter (equal columns are compared in full),
   *  one that costs a quarter of the decoding. */
  hashing = true;
  hashStride = 4;
  /** Hash on the window's read (else hashColumn hashes a column when asked): off when most CA
   *  LIDs are walked in batches (routing/verify-batch.ts), the windows then mostly read for
   *  switch LIDs. */
  hashOnLoad = true;
  /** Per window slot and LID, the hash of its decoded entries (valid when `hashed` is set for the slot). */
  private readonly hash = new Int32Array(WINDOWS * WIN);
  private readonly hashed = new Uint8Array(WINDOWS);
  private readonly winOf = new Int32Array(WINDOWS).fill(-1);
  private readonly winUsed = new Float64Array(WINDOWS);
  private winClock = 0;

  constructor(
    private readonly ix: FabricIndex,
    lftByNode: ReadonlyMap<number, Uint8Array>,
  ) {
    const { nSw, portEntry, swNumPorts, adjStart, adjSw } = ix;
    const W = ix.maxPorts + 1;
    this.nSw = nSw;
    for (let s = 0; s < nSw; s++) this.lft.push(lftByNode.get(ix.swNode[s]!));
    const stride = (this.stride = Math.min(W, 256));
    const code = (this.code = new Int32Array(nSw * stride).fill(C_BAD));
    for (let s = 0; s < nSw; s++) {
      const n = ix.fabric.nodes[ix.swNode[s]!]!;
      const o = s * stride;
      code[o] = C_SELF;
      if (stride > 255) code[o + 255] = C_NO_ROUTE;
      for (let p = 1; p < W && p <= swNumPorts[s]!; p++) {
        const e = portEntry[s * W + p]!;
        code[o + p] = !n.ports[p]?.peer ? C_DOWN : e >= 0 ? adjSw[e]! * 256 + (e - adjStart[s]!) : C_CA;
      }
    }
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

  /** Read LIDs d0 .. d0 + WIN − 1 into window `slot`, switch by switch: a switch's WIN entries
   *  are one cache line of its table, written one to each of WIN lines of `win`, which the next
   *  switches fill on (16 switches to a line). */
  private load(slot: number, d0: number): void {
    const { nSw, code, win, lft, stride } = this;
    const o = slot * WIN * nSw;
    const hashing = this.hashing && this.hashOnLoad;
    this.hashed[slot] = hashing ? 1 : 0;
    if (hashing) {
      this.loadHashing(slot, d0);
      return;
    }
    for (let x = 0; x < nSw; x++) {
      const t = lft[x];
      const i0 = o + x;
      if (!t) {
        for (let j = 0, i = i0; j < WIN; j++, i += nSw) win[i] = C_NO_LFT;
        continue;
      }
      const cx = x * stride;
      if (d0 + WIN <= t.length) {
        for (let j = 0, i = i0; j < WIN; j++, i += nSw) {
          const p = t[d0 + j]!;
          win[i] = p < stride ? code[cx + p]! : p === 255 ? C_NO_ROUTE : C_BAD;
        }
      } else {
        for (let j = 0, i = i0; j < WIN; j++, i += nSw) win[i] = d0 + j < t.length ? decode(code, cx, stride, t[d0 + j]!) : C_NO_ROUTE;
      }
    }
  }

  /** As `load`, hashing each LID's entries on the way (FNV-1a over every `hashStride`-th switch
   *  in order). */
  private loadHashing(slot: number, d0: number): void {
    const { nSw, code, win, lft, hash, stride: st } = this;
    const o = slot * WIN * nSw;
    const h0 = slot * WIN;
    hash.fill(0x811c9dc5 | 0, h0, h0 + WIN);
    const stride = this.hashStride;
    for (let x = 0; x < nSw; x++) {
      const t = lft[x];
      const cx = x * st;
      const hashed = x % stride === 0;
      if (t && d0 + WIN <= t.length) {
        if (!hashed) {
          for (let j = 0, i = o + x; j < WIN; j++, i += nSw) {
            const p = t[d0 + j]!;
            win[i] = p < st ? code[cx + p]! : p === 255 ? C_NO_ROUTE : C_BAD;
          }
          continue;
        }
        for (let j = 0, i = o + x; j < WIN; j++, i += nSw) {
          const p = t[d0 + j]!;
          const c = p < st ? code[cx + p]! : p === 255 ? C_NO_ROUTE : C_BAD;
          win[i] = c;
          hash[h0 + j] = Math.imul(hash[h0 + j]! ^ c, 16777619);
        }
        continue;
      }
      for (let j = 0, i = o + x; j < WIN; j++, i += nSw) {
        const c = !t ? C_NO_LFT : d0 + j < t.length ? decode(code, cx, st, t[d0 + j]!) : C_NO_ROUTE;
        win[i] = c;
        if (hashed) hash[h0 + j] = Math.imul(hash[h0 + j]! ^ c, 16777619);
      }
    }
  }

  /** The port byte of switch x's entry for d (255 when there is none). */
  port(x: number, d: number): number {
    const t = this.lft[x];
    return t && d < t.length ? t[d]! : 255;
  }

  /** Whether switch s's port `port` leads to end port `dest`. */
  leadsTo(s: number, port: number, dest: IndexedEndPort): boolean {
    const peer = this.ix.fabric.nodes[this.ix.swNode[s]!]!.ports[port]?.peer;
    return peer !== undefined && peer.node === dest.node && peer.port === dest.port;
  }

  /** A hash of LID d's decoded entries (from its window's read, or computed now). */
  hashColumn(d: number): number {
    const { win, nSw } = this;
    const b = this.column(d);
    const slot = Math.floor(b / (WIN * nSw));
    if (this.hashed[slot]) return this.hash[slot * WIN + (d & (WIN - 1))]!;
    let h = 0x811c9dc5 | 0;
    for (let x = 0; x < nSw; x += this.hashStride) h = Math.imul(h ^ win[b + x]!, 16777619);
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

/** The outcome of port byte p at the switch whose table starts at cx. */
function decode(code: Int32Array, cx: number, stride: number, p: number): number {
  return p < stride ? code[cx + p]! : p === 255 ? C_NO_ROUTE : C_BAD;
}

/**
 * A simulated switch's forwarding state: Linear (LFT), Random (RFT) and Multicast (MFT)
 * forwarding tables plus the SwitchInfo fields that steer forwarding (LinearFDBTop, DefaultPort,
 * the default multicast ports). Pure data structures: no I/O, no MAD parsing.
 *
 * The LFT is one byte array per switch, grown by whole blocks up to the highest block written (or
 * announced by LinearFDBTop), and MFT storage is allocated per 32-entry block on first write, so a
 * fabric of thousands of switches with 48K-entry LFT caps costs only what the SM programs. Every
 * lookup is O(1) (the RFT is indexed by LID on write).
 */
import { LFT_BLOCK_SIZE, MFT_BLOCK_SIZE, MFT_PORTS_PER_POSITION, RFT_BLOCK_SIZE } from '../wire/sma.js';

/** LFT entry meaning "no route" (the reset value). */
export const LFT_NO_ROUTE = 0xff;
export const MULTICAST_LID_BASE = 0xc000;
export const MULTICAST_LID_TOP = 0xfffe;
export const UNICAST_LID_MAX = 0xbfff;
/** Largest LID count the LFT can address (LIDs 0..0xBFFF). */
export const MAX_LINEAR_FDB_CAP = 0xc000;
const NO_LFT = new Uint8Array(0);

export interface ForwardingCaps {
  /** SwitchInfo.LinearFDBCap (0 = the switch has no LFT). */
  linearFdbCap: number;
  /** SwitchInfo.RandomFDBCap (0 = no RFT). */
  randomFdbCap: number;
  /** SwitchInfo.MulticastFDBCap (0 = no MFT). */
  multicastFdbCap: number;
  /** Number of external ports (ports 1..numPorts). */
  numPorts: number;
}

export type { RftEntry } from '../model/routes.js';
import type { RftEntry } from '../model/routes.js';

export class SwitchForwarding {
  readonly caps: ForwardingCaps;
  linearFdbTop = 0;
  defaultPort = 0;
  defaultMulticastPrimaryPort = 0;
  defaultMulticastNotPrimaryPort = 0;
  /** MulticastFDBTop (only enforced when `enforceMulticastFdbTop`). */
  multicastFdbTop = 0;
  enforceMulticastFdbTop = false;
  /** The LFT as one byte array (entry = egress port, 0xff = unprogrammed), grown by whole blocks
   * as blocks are written (or LinearFDBTop announces them): one store per switch instead of one
   * object per 64-entry block. `lftBlocksHeld` is its length in blocks. */
  private lft = NO_LFT;
  private readonly lftCapBlocks: number;
  /** RFT entries by block (16 each), and the LID → port index they imply. */
  private readonly rftBlocks = new Map<number, RftEntry[]>();
  private readonly rftIndex = new Map<number, number>();
  /** MFT storage: per 32-MLID block, 32 entries x 16 positions of 16-bit masks. */
  private readonly mft = new Map<number, Uint16Array>();
  private readonly positions: number;

  constructor(caps: ForwardingCaps) {
    this.caps = caps;
    this.lftCapBlocks = Math.ceil(caps.linearFdbCap / LFT_BLOCK_SIZE);
    this.positions = Math.floor(caps.numPorts / MFT_PORTS_PER_POSITION) + 1;
  }

  // ---------- LFT ----------
  get lftBlockCount(): number {
    return this.lftCapBlocks;
  }
  /** Blocks the LFT store holds now (the rest read as unprogrammed). */
  get lftBlocksHeld(): number {
    return this.lft.length / LFT_BLOCK_SIZE;
  }
  /** Make room for blocks 0..`block` (doubling, up to LinearFDBCap): LinearFDBTop says how far the SM will write. */
  reserveLft(block: number): void {
    const held = this.lft.length / LFT_BLOCK_SIZE;
    if (block < held || block >= this.lftCapBlocks) return;
    const n = Math.min(this.lftCapBlocks, Math.max(block + 1, held * 2, 4));
    const next = new Uint8Array(n * LFT_BLOCK_SIZE).fill(LFT_NO_ROUTE);
    next.set(this.lft);
    this.lft = next;
  }
  /** Copy LFT block `block` (64 entries; unprogrammed and beyond-cap entries read 0xff) to `dst` at
   * `off`; false when the block is out of range. */
  readLftBlock(block: number, dst: Uint8Array, off: number): boolean {
    if (!Number.isInteger(block) || block < 0 || block >= this.lftCapBlocks) return false;
    const lo = block * LFT_BLOCK_SIZE;
    const t = this.lft;
    if (lo < t.length) for (let i = 0; i < LFT_BLOCK_SIZE; i++) dst[off + i] = t[lo + i]!;
    else dst.fill(LFT_NO_ROUTE, off, off + LFT_BLOCK_SIZE);
    return true;
  }
  /** Write LFT block `block` from the 64 bytes of `src` at `off`; false when the block is out of
   * range. Entries beyond LinearFDBCap are ignored (they stay 0xff). */
  writeLftBlock(block: number, src: Uint8Array, off: number): boolean {
    if (!Number.isInteger(block) || block < 0 || block >= this.lftCapBlocks) return false;
    const lo = block * LFT_BLOCK_SIZE;
    if (lo >= this.lft.length) {
      let any = false;
      for (let i = 0; i < LFT_BLOCK_SIZE && !any; i++) any = src[off + i] !== LFT_NO_ROUTE;
      if (!any) return true;
      this.reserveLft(block);
    }
    const n = Math.min(LFT_BLOCK_SIZE, this.caps.linearFdbCap - lo);
    const t = this.lft;
    // a whole block in one native copy (through a view made by the constructor: half what
    // subarray costs), a partial one byte by byte
    if (n === LFT_BLOCK_SIZE && off + LFT_BLOCK_SIZE <= src.length) t.set(new Uint8Array(src.buffer, src.byteOffset + off, LFT_BLOCK_SIZE), lo);
    else for (let i = 0; i < n; i++) t[lo + i] = src[off + i]!;
    return true;
  }
  /** The 64 entries of an LFT block as numbers; undefined when the block is out of range. */
  getLftBlock(block: number): number[] | undefined {
    const b = new Uint8Array(LFT_BLOCK_SIZE);
    return this.readLftBlock(block, b, 0) ? Array.from(b) : undefined;
  }
  /** Write an LFT block from numbers; returns false when the block is out of range. */
  setLftBlock(block: number, ports: readonly number[]): boolean {
    const b = new Uint8Array(LFT_BLOCK_SIZE).fill(LFT_NO_ROUTE);
    for (let i = 0; i < LFT_BLOCK_SIZE && i < ports.length; i++) b[i] = ports[i]! & 0xff;
    return this.writeLftBlock(block, b, 0);
  }
  /** The raw LFT entry for a LID (0xff when unprogrammed), ignoring LinearFDBTop. */
  lftEntry(lid: number): number {
    if (lid < 0 || lid >= this.lft.length) return LFT_NO_ROUTE;
    return this.lft[lid]!;
  }
  /** A copy of the whole LFT up to LinearFDBCap (for inspection). */
  lftSnapshot(): Uint8Array {
    const out = new Uint8Array(this.caps.linearFdbCap).fill(LFT_NO_ROUTE);
    out.set(this.lft.subarray(0, Math.min(this.lft.length, out.length)));
    return out;
  }

  // ---------- RFT ----------
  get rftBlockCount(): number {
    return Math.ceil(this.caps.randomFdbCap / RFT_BLOCK_SIZE);
  }
  getRftBlock(block: number): RftEntry[] | undefined {
    if (!Number.isInteger(block) || block < 0 || block >= this.rftBlockCount) return undefined;
    const b = this.rftBlocks.get(block);
    return Array.from({ length: RFT_BLOCK_SIZE }, (_, i) => ({ ...(b?.[i] ?? { lid: 0, valid: 0, lmc: 0, port: 0 }) }));
  }
  setRftBlock(block: number, entries: readonly RftEntry[]): boolean {
    if (!Number.isInteger(block) || block < 0 || block >= this.rftBlockCount) return false;
    const old = this.rftBlocks.get(block);
    if (old) for (const e of old) if (e.valid) for (let l = 0; l < 1 << e.lmc; l++) this.rftIndex.delete(e.lid + l);
    const next = Array.from({ length: RFT_BLOCK_SIZE }, (_, i) => ({ ...(entries[i] ?? { lid: 0, valid: 0, lmc: 0, port: 0 }) }));
    this.rftBlocks.set(block, next);
    for (const e of next) if (e.valid) for (let l = 0; l < 1 << e.lmc; l++) this.rftIndex.set(e.lid + l, e.port);
    return true;
  }

  // ---------- MFT ----------
  get mftBlockCount(): number {
    return Math.ceil(this.caps.multicastFdbCap / MFT_BLOCK_SIZE);
  }
  get mftPositionCount(): number {
    return this.positions;
  }
  /** The 32 port masks of (block, position); undefined when out of range. */
  getMftBlock(block: number, position: number): number[] | undefined {
    if (block < 0 || block >= this.mftBlockCount || position < 0 || position >= this.positions) return undefined;
    const b = this.mft.get(block);
    const out = new Array<number>(MFT_BLOCK_SIZE).fill(0);
    if (b) for (let i = 0; i < MFT_BLOCK_SIZE; i++) out[i] = b[i * 16 + position]!;
    return out;
  }
  setMftBlock(block: number, position: number, masks: readonly number[]): boolean {
    if (block < 0 || block >= this.mftBlockCount || position < 0 || position >= this.positions) return false;
    let b = this.mft.get(block);
    if (!b) {
      b = new Uint16Array(MFT_BLOCK_SIZE * 16);
      this.mft.set(block, b);
    }
    const base = MULTICAST_LID_BASE + block * MFT_BLOCK_SIZE;
    for (let i = 0; i < MFT_BLOCK_SIZE; i++) {
      // entries beyond the table cap are read-only zero; port bits beyond numPorts are dropped
      let m = base + i - MULTICAST_LID_BASE < this.caps.multicastFdbCap ? (masks[i] ?? 0) & 0xffff : 0;
      const firstPort = position * 16;
      if (firstPort + 15 > this.caps.numPorts) m &= (1 << Math.max(0, this.caps.numPorts - firstPort + 1)) - 1;
      b[i * 16 + position] = m;
    }
    return true;
  }
  /** Ports in the MFT entry of a multicast LID (may include port 0); empty when unprogrammed. */
  mftPorts(mlid: number): number[] {
    const idx = mlid - MULTICAST_LID_BASE;
    if (idx < 0 || idx >= this.caps.multicastFdbCap) return [];
    const b = this.mft.get(Math.floor(idx / MFT_BLOCK_SIZE));
    if (!b) return [];
    const e = idx % MFT_BLOCK_SIZE;
    const out: number[] = [];
    for (let pos = 0; pos < this.positions; pos++) {
      const m = b[e * 16 + pos]!;
      if (!m) continue;
      for (let bit = 0; bit < 16; bit++) if (m & (1 << bit)) out.push(pos * 16 + bit);
    }
    return out;
  }

  // ---------- lookups ----------
  /**
   * Exit port for a unicast DLID, or undefined when the packet must be discarded: above
   * LinearFDBTop or the table, an unprogrammed (0xff) entry, or a port that does not exist.
   * With no LFT, the RFT is consulted and unmatched LIDs go to DefaultPort.
   */
  unicastPort(dlid: number): number | undefined {
    if (this.caps.linearFdbCap > 0) {
      if (dlid > this.linearFdbTop || dlid >= this.caps.linearFdbCap) return undefined;
      const p = this.lftEntry(dlid);
      return p <= this.caps.numPorts ? p : undefined;
    }
    if (this.caps.randomFdbCap > 0) {
      const p = this.rftIndex.get(dlid) ?? this.defaultPort;
      return p <= this.caps.numPorts ? p : undefined;
    }
    return undefined;
  }

  /**
   * Exit ports for a multicast DLID arriving on `inPort`: the MFT entry minus the arrival port,
   * or the default multicast ports when the entry is empty or beyond the table.
   */
  multicastPorts(mlid: number, inPort: number): number[] {
    let ports = this.enforceMulticastFdbTop && mlid > this.multicastFdbTop ? [] : this.mftPorts(mlid);
    if (ports.length === 0) {
      const p = inPort === this.defaultMulticastPrimaryPort ? this.defaultMulticastNotPrimaryPort : this.defaultMulticastPrimaryPort;
      ports = p >= 1 && p <= this.caps.numPorts ? [p] : [];
    }
    return ports.filter((p) => p !== inPort);
  }
}

export function isMulticastLid(lid: number): boolean {
  return lid >= MULTICAST_LID_BASE && lid <= MULTICAST_LID_TOP;
}

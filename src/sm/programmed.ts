/** What the SM has written and believes the fabric holds, and the one description of a write.
 *
 * Planners (sm/plan-*.ts) compare what a sweep wants with this state and return `SmpWrite`s; the
 * apply step (sm/apply.ts) sends them and calls `record` for each one the SMA acknowledged, so
 * this state only ever holds what a switch or port confirmed. Nothing here does I/O. */
import { byteArrayOf } from '../wire/layout.js';
import { LFT_BLOCK_SIZE, LinearForwardingTable } from '../wire/sma.js';
import { MftCache, type MftWrite } from './mft-blocks.js';

/** What a write changes once acknowledged. PortInfo and SwitchInfo answers update the sweep's
 * view of the node (what the SMA now holds); table writes update the shadows below. */
export type WriteEffect =
  | { kind: 'portInfo'; node: number; port: number }
  | { kind: 'switchInfo'; node: number }
  | { kind: 'pkeys'; key: string; block: number; blocks: number; sig: string }
  | { kind: 'vl'; key: string; sig: string; parts: number }
  | { kind: 'lft'; guid: bigint; block: number }
  | { kind: 'rft'; guid: bigint; block: number; sig: string }
  | { kind: 'mft'; write: MftWrite }
  // Writes outside the sweeps' tables (nothing recorded here): their callers keep what they wrote.
  | { kind: 'guidInfo'; portGuid: bigint; block: number }
  | { kind: 'routerLid'; portGuid: bigint; block: number }
  | { kind: 'smInfo'; guid: bigint }
  // vport hook (sm/vport-phases.ts): VirtualizationInfo (index -1) or a vport's VPortInfo
  | { kind: 'vport'; portGuid: bigint; index: number };

/** One SMP Set a planner asks for. `data` is the encoded attribute. Directed route along `path`,
 * or LID-routed to `lid` when given (router tables, SMInfo to an SM known only by its LID). */
export interface SmpWrite {
  path: readonly number[];
  lid?: number;
  attr: number;
  mod: number;
  data: Uint8Array;
  effect: WriteEffect;
  /** The M_Key to present, when not the SM's own (a port's key read from its PortInfo). */
  mkey?: bigint;
}

/** Where an LFT block's 64 ports sit in the encoded LinearForwardingTable (from its field table). */
export const LFT_PORTS = byteArrayOf(LinearForwardingTable, 'ports');
/** The encoded LinearForwardingTable is its 64 port bytes and nothing else. */
const LFT_WHOLE = LFT_PORTS.offset === 0 && LFT_PORTS.count === LFT_BLOCK_SIZE;

/** What the SM believes a switch's LFT holds: entry i is `table[i]` (255, no route, past its end)
 * wherever block i/64 is `known`. Once a routing's blocks are planned for the switch, `table` is that
 * routing's own array (`borrowed`), shared and never written through: a routing result is not
 * changed once made, the blocks acknowledged are its bytes, and an own copy would be a second set
 * of the fabric's tables (522 switches × 10,242 LIDs: 5.4 MB of a 10k-node fabric's peak RSS,
 * issue #32). A block that comes to differ from it (read back, or acknowledged from another table)
 * makes the shadow copy it first (`Programmed.own`). */
export interface LftShadow {
  table: Uint8Array;
  known: Uint8Array;
  /** `table` is a routing result's array, not the shadow's own. */
  borrowed: boolean;
}

/** Entry `i` of an LFT array: 255 (no route) past its end. */
const lftEntry = (t: Uint8Array, i: number): number => (i < t.length ? t[i]! : 0xff);

/** True when block `b` of LFT arrays `x` and `y` holds the same entries (255 past either's end). */
export function sameLftBlock(x: Uint8Array, y: Uint8Array, b: number): boolean {
  if (x === y) return true;
  for (let i = b * LFT_BLOCK_SIZE, end = i + LFT_BLOCK_SIZE; i < end; i++) if (lftEntry(x, i) !== lftEntry(y, i)) return false;
  return true;
}

/** A shadow's own table of `blocks` blocks: the entries of `from` (if any), 255 after them. */
function ownTable(from: Uint8Array | undefined, blocks: number): Uint8Array {
  const t = new Uint8Array(blocks * LFT_BLOCK_SIZE).fill(0xff);
  if (from) t.set(from.subarray(0, t.length));
  return t;
}

/** True when the encoded LinearForwardingTable `d` is block `at`/64 of `table`: a view of its bytes
 * (what the planner sends), or the same entries. */
function holdsBlock(table: Uint8Array, at: number, d: Uint8Array): boolean {
  if (LFT_WHOLE && d.buffer === table.buffer && d.byteOffset === table.byteOffset + at) return true;
  for (let i = 0; i < LFT_BLOCK_SIZE; i++) if (d[LFT_PORTS.offset + i] !== lftEntry(table, at + i)) return false;
  return true;
}

/** A P_Key table the spec's reset leaves: full-member 0xFFFF at index 0, zeros after. */
export const RESET_PKEY_SIG = String(0xffff);

export class Programmed {
  /** LFT contents by switch GUID. */
  readonly lfts = new Map<bigint, LftShadow>();
  /** RFT blocks by switch GUID: each block's contents as a comparable signature. */
  readonly rfts = new Map<bigint, string[]>();
  /** P_Key tables by port key (`<node guid>/<port>`), as a comparable signature. */
  readonly pkeys = new Map<string, string>();
  /** SL2VL/VLArb programming done for a VL layout, by port key (`<guid>/<port>` or `<guid>/sw`). */
  readonly vl = new Map<string, string>();
  /** MFT blocks by switch GUID. */
  readonly mft = new MftCache();
  /** Writes acknowledged so far toward a table whose every part must land (P_Key blocks, VL parts). */
  private readonly partial = new Map<string, { sig: string; left: number }>();

  /** The LFT shadow of a switch, grown to `blocks` blocks (new blocks unknown). */
  lftShadow(guid: bigint, blocks: number): LftShadow {
    let st = this.lfts.get(guid);
    if (!st || st.known.length < blocks) {
      const grown: LftShadow = { table: ownTable(st?.table, blocks), known: new Uint8Array(blocks), borrowed: false };
      if (st) grown.known.set(st.known);
      this.lfts.set(guid, (st = grown));
    }
    return st;
  }

  /** The LFT shadow of a switch about to be programmed from `table` (a routing result's array,
   * `blocks` blocks): from now on a view of that array. A block known to hold something else is
   * unknown again (the planner writes it either way, known and different or unknown); one
   * acknowledged from `table` is known at no copy. */
  lftShadowOver(guid: bigint, blocks: number, table: Uint8Array): LftShadow {
    let st = this.lfts.get(guid);
    if (!st) {
      this.lfts.set(guid, (st = { table, known: new Uint8Array(blocks), borrowed: true }));
      return st;
    }
    if (st.known.length < blocks) {
      const known = new Uint8Array(blocks);
      known.set(st.known);
      st.known = known;
    }
    if (st.table !== table) {
      const { known } = st;
      for (let b = 0; b < known.length; b++) if (known[b] && !sameLftBlock(st.table, table, b)) known[b] = 0;
      st.table = table;
      st.borrowed = true;
    }
    return st;
  }

  /** The shadow's table as its own copy (before a block unlike the borrowed array is set in it). */
  private own(st: LftShadow): Uint8Array {
    if (st.borrowed) {
      st.table = ownTable(st.table, st.known.length);
      st.borrowed = false;
    }
    return st.table;
  }

  /** An LFT block read back from a switch this SM had no shadow of: what it holds now. */
  learnLft(guid: bigint, block: number, blocks: number, data: Uint8Array): void {
    const st = this.lftShadow(guid, blocks);
    this.own(st).set(data.subarray(LFT_PORTS.offset, LFT_PORTS.offset + LFT_BLOCK_SIZE), block * LFT_BLOCK_SIZE);
    st.known[block] = 1;
  }

  /** A switch found reset (LinearFDBTop 0): nothing written to its tables is there any more. Its
   * P_Key tables are back to the reset default. */
  switchReset(guid: bigint, ports: number): void {
    this.lfts.delete(guid);
    this.rfts.delete(guid);
    this.mft.forget(guid);
    this.vl.delete(`${guid}/sw`);
    for (let p = 0; p <= ports; p++) this.pkeys.set(`${guid}/${p}`, RESET_PKEY_SIG);
  }

  /** Another SM masters the subnet (this one stands by): it may write any table, so nothing
   * written before is known to be there any more; the next sweep as master reads the LFTs back. */
  forgetAll(): void {
    for (const m of [this.lfts, this.rfts, this.pkeys, this.vl, this.partial]) m.clear();
    this.mft.clear();
  }

  /** A port found in its reset state (no LID): default P_Key table, VL tables unknown. */
  portReset(key: string): void {
    this.pkeys.set(key, RESET_PKEY_SIG);
    this.vl.delete(key);
  }

  /** A write the SMA acknowledged (table effects only; the sweep handles PortInfo/SwitchInfo). */
  record(w: SmpWrite): void {
    const e = w.effect;
    switch (e.kind) {
      case 'lft': {
        const st = this.lfts.get(e.guid);
        if (!st || e.block >= st.known.length) return;
        const d = w.data;
        const at = e.block * LFT_BLOCK_SIZE;
        if (st.borrowed && holdsBlock(st.table, at, d)) {
          st.known[e.block] = 1; // the block written is the borrowed table's: nothing to copy
          return;
        }
        const t = this.own(st);
        // an attribute that is exactly its 64 port bytes is copied whole (native, no view made);
        // else byte by byte, no subarray view per block
        if (LFT_WHOLE && d.length === LFT_BLOCK_SIZE) t.set(d, at);
        else for (let i = 0, from = LFT_PORTS.offset; i < LFT_BLOCK_SIZE; i++) t[at + i] = d[from + i]!;
        st.known[e.block] = 1;
        return;
      }
      case 'rft': {
        let st = this.rfts.get(e.guid);
        if (!st) this.rfts.set(e.guid, (st = []));
        st[e.block] = e.sig;
        return;
      }
      case 'mft':
        this.mft.commit(e.write);
        return;
      case 'pkeys':
      case 'vl':
        this.whole(e.kind, e.key, e.sig, e.kind === 'pkeys' ? e.blocks : e.parts);
        return;
      default:
        return;
    }
  }

  /** A write that failed: the table it belonged to is unknown again (the next sweep rewrites it). */
  failed(w: SmpWrite): void {
    const e = w.effect;
    if (e.kind === 'pkeys') {
      this.pkeys.delete(e.key);
      this.partial.delete(`pkeys:${e.key}`);
    } else if (e.kind === 'vl') {
      this.vl.delete(e.key);
      this.partial.delete(`vl:${e.key}`);
    }
  }

  /** Count one acknowledged part of a multi-part table; its signature is stored once all landed. */
  private whole(kind: 'pkeys' | 'vl', key: string, sig: string, parts: number): void {
    const pk = `${kind}:${key}`;
    let p = this.partial.get(pk);
    if (!p || p.sig !== sig) this.partial.set(pk, (p = { sig, left: parts }));
    if (--p.left > 0) return;
    this.partial.delete(pk);
    (kind === 'pkeys' ? this.pkeys : this.vl).set(key, sig);
  }
}

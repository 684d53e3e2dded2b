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

/** What the SM believes a switch's LFT holds: the table it wrote and which 64-entry blocks are known. */
export interface LftShadow {
  table: Uint8Array;
  known: Uint8Array;
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
      const grown: LftShadow = { table: new Uint8Array(blocks * LFT_BLOCK_SIZE).fill(0xff), known: new Uint8Array(blocks) };
      if (st) {
        grown.table.set(st.table);
        grown.known.set(st.known);
      }
      this.lfts.set(guid, (st = grown));
    }
    return st;
  }

  /** An LFT block read back from a switch this SM had no shadow of: what it holds now. */
  learnLft(guid: bigint, block: number, blocks: number, data: Uint8Array): void {
    const st = this.lftShadow(guid, blocks);
    st.table.set(data.subarray(LFT_PORTS.offset, LFT_PORTS.offset + LFT_BLOCK_SIZE), block * LFT_BLOCK_SIZE);
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
        const t = st.table;
        const d = w.data;
        const at = e.block * LFT_BLOCK_SIZE;
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

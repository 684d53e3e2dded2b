/** What routing produces: the unicast forwarding state of a fabric. A data type only; the engines
 * that compute it live in `src/routing/`, the SM programs it, the SA answers from it. */

/** LFT entry meaning "no route" (the value a switch treats as drop). */
export const NO_ROUTE = 255;

export interface RoutingResult {
  engine: string;
  /** Switch node index (into fabric.nodes) → LFT indexed by LID: out port; 0 = the switch's own LID; 255 = no route. */
  lfts: Map<number, Uint8Array>;
  maxLid: number;
  /** SL to use from source LID to destination LID (engines that layer routes for deadlock freedom). */
  sl?: (slid: number, dlid: number) => number;
  /** `sl` depends only on the switch the source port is attached to (and the destination LID). */
  slBySourceSwitch?: boolean;
  /** `sl` depends only on the destination LID (one layer per destination, as nue's): the verifier
   * asks it once per LID. */
  slByDestination?: boolean;
  /** Number of VLs (layers) the routes need; 1 when absent. */
  vlsUsed?: number;
  /** SL→VL table (16 entries) to program identically on every switch port pair and CA port
   * (with `sl2vlByPorts`: on the CA ports only). */
  sl2vl?: readonly number[];
  /** Per-switch SL→VL by (in port, out port), for engines whose routes change VL on the way
   * (torus datelines): switch node index → table; absent: `sl2vl` on every switch port pair. */
  sl2vlByPorts?: Map<number, PortSl2Vl>;
  /** True when the engine guarantees an acyclic channel-dependency graph per VL (verify checks it). */
  deadlockFree?: boolean;
  /** Root switch GUIDs the engine used (updn/ftree). */
  roots?: bigint[];
  notes: string[];
}

/** A switch's SL→VL tables by (in port, out port): `vl[((inPort * stride) + outPort) * 16 + sl]`,
 * stride = the switch's port count + 1 (port 0 included). */
export interface PortSl2Vl {
  stride: number;
  vl: Uint8Array;
}

/** The 16-entry SL→VL table of one (in port, out port) pair. */
export function portSl2Vl(t: PortSl2Vl, inPort: number, outPort: number): Uint8Array {
  const o = (inPort * t.stride + outPort) * 16;
  return t.vl.subarray(o, o + 16);
}

// ---------------------------------------------------------------- random forwarding tables

/** A RandomForwardingTable entry (the wire's RandomForwardingEntry, without its reserved bits). */
export interface RftEntry {
  lid: number;
  valid: number;
  lmc: number;
  port: number;
}

export const RFT_ENTRIES_PER_BLOCK = 16;
const INVALID_ENTRY: RftEntry = { lid: 0, valid: 0, lmc: 0, port: 0 };

/** A block of 16 invalid entries (what clears a block). */
export function emptyRftBlock(): RftEntry[] {
  return Array.from({ length: RFT_ENTRIES_PER_BLOCK }, () => INVALID_ENTRY);
}

/** A switch that forwards unicast by its RandomForwardingTable: it has one and no linear table
 * (IBA 18.2.4.3.2: a switch implements one of the two). */
export function isRftSwitch(si: { linearFdbCap: number; randomFdbCap: number }): boolean {
  return si.linearFdbCap === 0 && si.randomFdbCap > 0;
}

/** The RFT blocks that hold an LFT-shaped table (LID → port, up to `maxLid`): one valid entry per
 * routed LID (LMC 0: the LIDs of an LMC range may leave by different ports), 16 per block, the
 * last block padded with invalid entries. Entries beyond `cap` do not fit and are left out. */
export function rftBlocksOf(table: Uint8Array, maxLid: number, cap: number): { blocks: RftEntry[][]; unplaced: number } {
  const entries: RftEntry[] = [];
  let unplaced = 0;
  for (let lid = 1; lid <= Math.min(maxLid, table.length - 1); lid++) {
    const port = table[lid]!;
    if (port === NO_ROUTE) continue;
    if (entries.length >= cap) unplaced++;
    else entries.push({ lid, valid: 1, lmc: 0, port });
  }
  const blocks: RftEntry[][] = [];
  for (let i = 0; i < entries.length; i += RFT_ENTRIES_PER_BLOCK) {
    const b = emptyRftBlock();
    entries.slice(i, i + RFT_ENTRIES_PER_BLOCK).forEach((e, j) => (b[j] = e));
    blocks.push(b);
  }
  return { blocks, unplaced };
}

/** The LFT-shaped table (LID → port, NO_ROUTE where no valid entry) that RFT blocks express, as a
 * verifier reads a switch's random table. */
export function tableOfRft(blocks: readonly (readonly RftEntry[])[], maxLid: number): Uint8Array {
  const t = new Uint8Array(maxLid + 1).fill(NO_ROUTE);
  for (const b of blocks) for (const e of b) if (e.valid) for (let l = e.lid; l < e.lid + (1 << e.lmc) && l <= maxLid; l++) t[l] = e.port;
  return t;
}

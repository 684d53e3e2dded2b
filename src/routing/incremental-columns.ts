/** Column-major views of routing tables for incremental re-routing (routing/incremental.ts): per
 * destination LID, the entries of every switch side by side, switches matched by node GUID (nodes
 * that left the fabric do not confuse the numbering). */
import type { Fabric } from '../model/fabric.js';
import { indexEndPorts } from '../model/snapshot.js';
import type { FabricIndex } from './graph.js';
import { NO_ROUTE, type RoutingResult } from './types.js';

/** A routing's tables column-major (LID × switch, switches in `guids` order): a destination's
 * column is contiguous. Kept per routing result (results are never changed). */
export interface Columns {
  guids: bigint[];
  cm: Uint8Array;
  maxLid: number;
}
const columnsCache = new WeakMap<RoutingResult, Columns>();

export function columnsOf(f: Fabric, r: RoutingResult): Columns {
  let c = columnsCache.get(r);
  if (c) return c;
  const rows = [...r.lfts].filter(([ni]) => f.nodes[ni]).sort((a, b) => a[0] - b[0]);
  const n = rows.length;
  const maxLid = r.maxLid;
  const cm = new Uint8Array((maxLid + 1) * n).fill(NO_ROUTE);
  rows.forEach(([, t], s) => {
    const len = Math.min(t.length, maxLid + 1);
    for (let l = 0; l < len; l++) cm[l * n + s] = t[l]!;
  });
  columnsCache.set(r, (c = { guids: rows.map(([ni]) => f.nodes[ni]!.guid), cm, maxLid }));
  return c;
}

/** Remember the columns a re-route built for its result (the next re-route reads them). */
export function keepColumns(r: RoutingResult, c: Columns): void {
  columnsCache.set(r, c);
}

/** Reads columns of `c` in the switch order `guids` (a copy when the orders agree, else a gather). */
export function columnReader(c: Columns, guids: readonly bigint[]): (l: number, out: Uint8Array) => void {
  const n = guids.length;
  const same = c.guids.length === n && c.guids.every((g, i) => g === guids[i]);
  const at = new Map(c.guids.map((g, i) => [g, i]));
  const map = Int32Array.from(guids, (g) => at.get(g) ?? -1);
  const w = c.guids.length;
  return (l, out) => {
    if (l > c.maxLid) out.fill(NO_ROUTE);
    else if (same) out.set(c.cm.subarray(l * n, l * n + n));
    else for (let s = 0; s < n; s++) out[s] = map[s]! < 0 ? NO_ROUTE : c.cm[l * w + map[s]!]!;
  };
}

/** Tables of `r` by switch node GUID. */
export function tablesByGuid(f: Fabric, r: RoutingResult): Map<bigint, Uint8Array> {
  const m = new Map<bigint, Uint8Array>();
  for (const [ni, t] of r.lfts) {
    const n = f.nodes[ni];
    if (n) m.set(n.guid, t);
  }
  return m;
}

/** Port GUID owning each LID in `f` (kept per fabric: re-routes read it for the previous and the
 * intact fabric, snapshots that do not change once published). */
export function lidGuids(f: Fabric): Map<number, bigint> {
  let m = lidCache.get(f);
  if (m) return m;
  m = new Map<number, bigint>();
  for (const ep of indexEndPorts(f).endPorts) if (ep.lid && ep.linked) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) m.set(l, ep.guid);
  lidCache.set(f, m);
  return m;
}
const lidCache = new WeakMap<Fabric, Map<number, bigint>>();

/** Node index of each node GUID in `f` (kept per fabric, as lidGuids). */
export function nodeIndexByGuid(f: Fabric): ReadonlyMap<bigint, number> {
  let m = nodeIdxCache.get(f);
  if (!m) nodeIdxCache.set(f, (m = new Map(f.nodes.map((n, i) => [n.guid, i] as const))));
  return m;
}
const nodeIdxCache = new WeakMap<Fabric, Map<bigint, number>>();

// Small loops of the re-route on their own (optimized after a few calls, where the long one-shot
// re-route would run them unoptimized).

/** Mark the LIDs whose entry differs between two tables of a switch. */
export function markDiffering(a: Uint8Array, b: Uint8Array, maxLid: number, touch: Uint8Array): void {
  for (let l = 1; l <= maxLid; l++) if ((a[l] ?? NO_ROUTE) !== (b[l] ?? NO_ROUTE)) touch[l] = 1;
}

export function countDiffering(a: Uint8Array, b: Uint8Array): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}

/** Column l of column-major `cm` into the row-major tables. */
export function writeColumn(tables: Uint8Array[], cm: Uint8Array, l: number): void {
  const n = tables.length;
  for (let s = 0, b = l * n; s < n; s++) tables[s]![l] = cm[b + s]!;
}

/** When `ix` is `o` with links gone (the same switches in the same order and the same ports;
 * every channel of `ix` one of `o`'s, by port, to the same switch): per channel of `o` its number
 * in `ix` (-1: its link went), and back. Else undefined. */
export function channelsKept(o: FabricIndex, ix: FabricIndex): { newOf: Int32Array; oldOf: Int32Array } | undefined {
  const nSw = o.nSw;
  if (ix.nSw !== nSw || ix.maxPorts !== o.maxPorts) return undefined;
  for (let s = 0; s < nSw; s++) if (ix.swGuid[s] !== o.swGuid[s]) return undefined;
  const W = o.maxPorts + 1;
  const newOf = new Int32Array(o.adjStart[nSw]!).fill(-1);
  const oldOf = new Int32Array(ix.adjStart[nSw]!);
  for (let s = 0; s < nSw; s++) {
    for (let f = ix.adjStart[s]!; f < ix.adjStart[s + 1]!; f++) {
      const e = o.portEntry[s * W + ix.adjPort[f]!]!;
      if (e < 0 || o.adjSw[e] !== ix.adjSw[f]) return undefined;
      newOf[e] = f;
      oldOf[f] = e;
    }
  }
  return { newOf, oldOf };
}

/** The column-major buffer what-if cases of routing `r` share (partial re-routes). */
export function scratchColumns(r: RoutingResult, size: number): Uint8Array {
  let b = scratch.get(r);
  if (!b || b.length !== size) scratch.set(r, (b = new Uint8Array(size)));
  return b;
}
const scratch = new WeakMap<RoutingResult, Uint8Array>();

/** The buffer of `r`'s cases let go (a what-if done: the SM's routing does not keep it). */
export function releaseScratch(r: RoutingResult): void {
  scratch.delete(r);
}

/** The LIDs whose owner is not the one `prevLids` says (the same for every index derived from the
 *  previous fabric's, which shares its end ports: kept per end-port list then). */
export function ownersChanged(prevLids: Map<number, bigint>, lidOwner: Int32Array, ends: FabricIndex['ends'], keep: boolean): readonly number[] {
  const kept = keep ? ownersCache.get(ends) : undefined;
  if (kept) return kept;
  const out: number[] = [];
  for (let l = 1; l < lidOwner.length; l++) if (prevLids.get(l) !== (lidOwner[l]! >= 0 ? ends[lidOwner[l]!]!.guid : undefined)) out.push(l);
  if (keep) ownersCache.set(ends, out);
  return out;
}
const ownersCache = new WeakMap<FabricIndex['ends'], number[]>();

/** The one-VL deadlock check of incremental re-routing (routing/incremental.ts): the channel
 * dependencies of the CA sources' routes in column-major tables, checked for cycles. A routing's
 * dependencies are kept with it (how many LIDs have each), so that the next re-route follows only
 * the columns it touched. */
import type { FabricIndex } from './graph.js';
import { cdgCycles, type CdgReport } from './cdg.js';
import type { RoutingResult } from './types.js';

/** The channel-dependency graph of one VL for column-major tables `cm` (LID × switch): a
 * dependency from channel (u → n) to (n → m) wherever a CA source's route toward some LID crosses
 * u, n and m in turn (the verifier's definition), and its cyclic components (routing/cdg.ts). */
export function singleVlCdg(ix: FabricIndex, cm: Uint8Array): CdgReport {
  const { nSw, adjStart, adjSw, portEntry, ends, lidOwner, maxLid, caCount } = ix;
  const W = ix.maxPorts + 1;
  const nEntries = adjStart[nSw]!;
  const depStart = new Float64Array(nEntries + 1);
  for (let e = 0; e < nEntries; e++) depStart[e + 1] = depStart[e]! + (adjStart[adjSw[e]! + 1]! - adjStart[adjSw[e]!]!);
  const ds = Int32Array.from(depStart);
  const bits = new Uint8Array(Math.ceil(depStart[nEntries]! / 8) + 1);
  let deps = 0;
  const sources: number[] = [];
  for (let s = 0; s < nSw; s++) if (caCount[s]! > 0) sources.push(s);
  const scratch = newScratch(nSw);
  const src = Int32Array.from(sources);
  for (let l = 1; l <= maxLid; l++) {
    const o = lidOwner[l]!;
    if (o < 0) continue;
    const T = ends[o]!.sw;
    if (T < 0) continue;
    deps += lidDeps(ix, W, cm, l, T, src, ds, bits, scratch);
  }
  return cdgCycles(ix, 0, bits, depStart, deps);
}

/** Per column: the switches the sources' routes cross (stamped with the epoch of the call), each with its channel. */
export interface Scratch {
  stamp: Int32Array;
  ent: Int32Array;
  list: Int32Array;
  epoch: number;
}
export const newScratch = (n: number): Scratch => ({ stamp: new Int32Array(n), ent: new Int32Array(n), list: new Int32Array(n), epoch: 0 });

/** The channels the CA sources' routes of one column cross (column at `base` of `cm`, toward
 * switch T): fills sc.list (switches) and sc.ent (their channels); returns how many. */
export function crossed(ix: FabricIndex, W: number, cm: Uint8Array, base: number, T: number, sources: Int32Array, sc: Scratch): number {
  const { adjSw, portEntry } = ix;
  const { stamp, ent, list } = sc;
  const ep = ++sc.epoch;
  let k = 0;
  for (let i = 0; i < sources.length; i++) {
    for (let u = sources[i]!; u !== T && stamp[u] !== ep; ) {
      stamp[u] = ep;
      list[k++] = u;
      const p = cm[base + u]!;
      const e = p > 0 && p < W ? portEntry[u * W + p]! : -1;
      ent[u] = e;
      if (e < 0) break;
      u = adjSw[e]!;
    }
  }
  return k;
}

/** Add `sign` to the count of each dependency of one column (see `crossed`). */
export function countDeps(ix: FabricIndex, W: number, cm: Uint8Array, base: number, T: number, sources: Int32Array, ds: Int32Array, counts: Int32Array, sign: number, sc: Scratch): void {
  const k = crossed(ix, W, cm, base, T, sources, sc);
  const { adjSw, adjStart } = ix;
  const { ent, list } = sc;
  for (let i = 0; i < k; i++) {
    const e = ent[list[i]!]!;
    if (e < 0) continue;
    const n = adjSw[e]!;
    if (n === T) continue;
    const e2 = ent[n]!;
    if (e2 < 0) continue;
    counts[ds[e]! + (e2 - adjStart[n]!)]! += sign;
  }
}

/** A routing's channel dependencies: per dependency slot (ds[e] + outgoing channel of e's head),
 * how many LIDs' routes have it, over the index of the routing's fabric. */
export interface DepCounts {
  readonly ix: FabricIndex;
  readonly counts: Int32Array;
}
const depCache = new WeakMap<RoutingResult, DepCounts>();
export const keepDeps = (r: RoutingResult, d: DepCounts): void => void depCache.set(r, d);
export const cachedDeps = (r: RoutingResult): DepCounts | undefined => depCache.get(r);

export function depStarts(ix: FabricIndex): Float64Array {
  const { nSw, adjStart, adjSw } = ix;
  const n = adjStart[nSw]!;
  const d = new Float64Array(n + 1);
  for (let e = 0; e < n; e++) d[e + 1] = d[e]! + (adjStart[adjSw[e]! + 1]! - adjStart[adjSw[e]!]!);
  return d;
}

export function sourcesOf(ix: FabricIndex): Int32Array {
  const out: number[] = [];
  for (let s = 0; s < ix.nSw; s++) if (ix.caCount[s]! > 0) out.push(s);
  return Int32Array.from(out);
}

/** The dependencies of every column (`read` fills a column in `ix` switch order). */
export function depCounts(ix: FabricIndex, read: (l: number, out: Uint8Array) => void): DepCounts {
  const W = ix.maxPorts + 1;
  const ds = Int32Array.from(depStarts(ix));
  const counts = new Int32Array(ds[ds.length - 1]!);
  const src = sourcesOf(ix);
  const sc = newScratch(ix.nSw);
  const col = new Uint8Array(ix.nSw);
  for (let l = 1; l <= ix.maxLid; l++) {
    const o = ix.lidOwner[l]!;
    if (o < 0 || ix.ends[o]!.sw < 0) continue;
    read(l, col);
    countDeps(ix, W, col, 0, ix.ends[o]!.sw, src, ds, counts, 1, sc);
  }
  return { ix, counts };
}

/**
 * The one-VL check of column-major tables `cm` over `ix` whose columns are `from`'s routing but
 * where `touch` marks them (`read` gives `from`'s columns in its own switch order): `from`'s
 * counts without its touched columns, moved to `ix`'s numbering (switches by GUID, channels by
 * port), plus the touched columns of `cm`. The same report as singleVlCdg, and the counts.
 */
export function incrementalCdg(from: DepCounts, read: (l: number, out: Uint8Array) => void, touch: Uint8Array, ix: FabricIndex, cm: Uint8Array): { report: CdgReport; deps: DepCounts } {
  const o = from.ix;
  const Wo = o.maxPorts + 1;
  const Wn = ix.maxPorts + 1;
  const dso = Int32Array.from(depStarts(o));
  const old = from.counts.slice();
  {
    const src = sourcesOf(o);
    const sc = newScratch(o.nSw);
    const col = new Uint8Array(o.nSw);
    for (let l = 1; l <= o.maxLid; l++) {
      const k = o.lidOwner[l]!;
      if (!touch[l] || k < 0 || o.ends[k]!.sw < 0) continue;
      read(l, col);
      countDeps(o, Wo, col, 0, o.ends[k]!.sw, src, dso, old, -1, sc);
    }
  }
  // Channels of `o` in `ix`'s numbering (-1: gone or leading elsewhere).
  const at = new Map(ix.swGuid.map((g, i) => [g, i]));
  const map = new Int32Array(o.adjStart[o.nSw]!).fill(-1);
  for (let s = 0; s < o.nSw; s++) {
    const n = at.get(o.swGuid[s]!);
    if (n === undefined) continue;
    for (let e = o.adjStart[s]!; e < o.adjStart[s + 1]!; e++) {
      const p = o.adjPort[e]!;
      const f = p < Wn ? ix.portEntry[n * Wn + p]! : -1;
      if (f >= 0 && ix.swGuid[ix.adjSw[f]!] === o.swGuid[o.adjSw[e]!]) map[e] = f;
    }
  }
  const depStart = depStarts(ix);
  const ds = Int32Array.from(depStart);
  const counts = new Int32Array(ds[ds.length - 1]!);
  for (let e = 0; e < map.length; e++) {
    const f = map[e]!;
    if (f < 0) continue;
    const h = o.adjSw[e]!;
    const hn = ix.adjSw[f]!;
    for (let k = o.adjStart[h]!; k < o.adjStart[h + 1]!; k++) {
      const c = old[dso[e]! + (k - o.adjStart[h]!)]!;
      const g = map[k]!;
      if (c && g >= 0) counts[ds[f]! + (g - ix.adjStart[hn]!)]! += c;
    }
  }
  const src = sourcesOf(ix);
  const sc = newScratch(ix.nSw);
  for (let l = 1; l <= ix.maxLid; l++) {
    const k = ix.lidOwner[l]!;
    if (!touch[l] || k < 0 || ix.ends[k]!.sw < 0) continue;
    countDeps(ix, Wn, cm, l * ix.nSw, ix.ends[k]!.sw, src, ds, counts, 1, sc);
  }
  const bits = new Uint8Array(Math.ceil(counts.length / 8) + 1);
  let deps = 0;
  for (let i = 0; i < counts.length; i++) {
    if (counts[i]! > 0) {
      bits[i >> 3] = bits[i >> 3]! | (1 << (i & 7));
      deps++;
    }
  }
  return { report: cdgCycles(ix, 0, bits, depStart, deps), deps: { ix, counts } };
}

/** The dependencies of LID l's column (toward switch T) set in `bits`; returns how many were new.
 * On its own so that it is optimized after a few LIDs. */
function lidDeps(ix: FabricIndex, W: number, cm: Uint8Array, l: number, T: number, sources: Int32Array, ds: Int32Array, bits: Uint8Array, sc: Scratch): number {
  const { nSw, adjStart, adjSw } = ix;
  const k = crossed(ix, W, cm, l * nSw, T, sources, sc);
  const { ent, list } = sc;
  let deps = 0;
  for (let i = 0; i < k; i++) {
    const u = list[i]!;
    const e = ent[u]!;
    if (e < 0) continue;
    const n = adjSw[e]!;
    if (n === T) continue;
    const e2 = ent[n]!; // n is on the route from u, so it was crossed too
    if (e2 < 0) continue;
    const bit = ds[e]! + (e2 - adjStart[n]!);
    const byte = bit >> 3;
    const bv = 1 << (bit & 7);
    if (!(bits[byte]! & bv)) {
      bits[byte] = bits[byte]! | bv;
      deps++;
    }
  }
  return deps;
}

/** Why a re-route with channel-dependency cycles is refused (`example`: one cycle's channels). */
export function cyclesReason(example?: readonly string[]): string {
  return `incremental re-route rejected: channel-dependency cycles (not deadlock-free): ${example?.join(' → ') ?? ''}`;
}

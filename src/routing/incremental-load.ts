/** Link load of a routing as incremental re-routing (routing/incremental.ts) keeps it: CA-to-CA
 * routes per directed switch-to-switch channel (the verifier's linkLoad) and CA destination LIDs
 * per switch port (OpenSM's minhop balance counters), over the index of the routing's fabric.
 * Kept per routing result, so that a re-route starts from the previous routing's load instead of
 * following every route again: only the columns it touches are followed. */
import type { FabricIndex } from './graph.js';
import type { RoutingResult } from './types.js';

export interface Loads {
  readonly ix: FabricIndex;
  readonly load: Float64Array;
  readonly counters: Int32Array;
}
const cache = new WeakMap<RoutingResult, Loads>();

export function keepLoads(r: RoutingResult, l: Loads): void {
  cache.set(r, l);
}
export function cachedLoads(r: RoutingResult): Loads | undefined {
  return cache.get(r);
}

/** Add (sign +1) or remove (-1) the routes of the CA sources of column `col` (switches in `ix`
 * order) toward switch T. */
export function accountColumn(ix: FabricIndex, col: Uint8Array, T: number, sign: number, load: Float64Array, counters: Int32Array): void {
  const { nSw, portEntry, adjSw, caCount } = ix;
  const W = ix.maxPorts + 1;
  for (let s = 0; s < nSw; s++) {
    if (s === T) continue;
    const p = col[s]!;
    if (p > 0 && p < W && portEntry[s * W + p]! >= 0) counters[s * W + p]! += sign;
    const w = caCount[s]!;
    if (!w) continue;
    for (let u = s, hop = 0; u !== T && hop < nSw; hop++) {
      const q = col[u]!;
      const e = q > 0 && q < W ? portEntry[u * W + q]! : -1;
      if (e < 0) break;
      load[e]! += sign * w;
      u = adjSw[e]!;
    }
  }
}

/** The load of every CA destination's column (`read` fills a column in `ix` switch order). */
export function computeLoads(ix: FabricIndex, read: (l: number, out: Uint8Array) => void): Loads {
  const load = new Float64Array(ix.adjStart[ix.nSw]!);
  const counters = new Int32Array(ix.nSw * (ix.maxPorts + 1));
  const col = new Uint8Array(ix.nSw);
  for (let l = 1; l <= ix.maxLid; l++) {
    const o = ix.lidOwner[l]!;
    if (o < 0 || ix.ends[o]!.isSwitch || ix.ends[o]!.sw < 0) continue;
    read(l, col);
    accountColumn(ix, col, ix.ends[o]!.sw, 1, load, counters);
  }
  return { ix, load, counters };
}

/** `from` without the columns marked in `skip` (`read` gives `from`'s columns in its switch
 * order), in `ix`'s numbering: switches by GUID, channels by port where they lead to the same
 * switch as before. The skipped columns are the caller's to add. */
export function remapLoads(from: Loads, read: (l: number, out: Uint8Array) => void, skip: Uint8Array, ix: FabricIndex, load: Float64Array, counters: Int32Array): void {
  const o = from.ix;
  const base = from.load.slice();
  const baseC = from.counters.slice();
  const col = new Uint8Array(o.nSw);
  for (let l = 1; l <= o.maxLid; l++) {
    if (!skip[l]) continue;
    const k = o.lidOwner[l]!;
    if (k < 0 || o.ends[k]!.isSwitch || o.ends[k]!.sw < 0) continue;
    read(l, col);
    accountColumn(o, col, o.ends[k]!.sw, -1, base, baseC);
  }
  const at = new Map(ix.swGuid.map((g, i) => [g, i]));
  const Wo = o.maxPorts + 1;
  const Wn = ix.maxPorts + 1;
  load.fill(0);
  counters.fill(0);
  for (let s = 0; s < o.nSw; s++) {
    const n = at.get(o.swGuid[s]!);
    if (n === undefined) continue;
    for (let e = o.adjStart[s]!; e < o.adjStart[s + 1]!; e++) {
      const p = o.adjPort[e]!;
      if (p >= Wn) continue;
      const f = ix.portEntry[n * Wn + p]!;
      if (f < 0 || ix.swGuid[ix.adjSw[f]!] !== o.swGuid[o.adjSw[e]!]) continue;
      load[f] = base[e]!;
      counters[n * Wn + p] = baseC[s * Wo + p]!;
    }
  }
}

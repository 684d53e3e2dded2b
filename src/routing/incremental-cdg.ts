/** The one-VL deadlock check of incremental re-routing (routing/incremental.ts): the channel
 * dependencies of the CA sources' routes in column-major tables, checked for cycles. */
import type { FabricIndex } from './graph.js';
import { cdgCycles, type CdgReport } from './cdg.js';

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
  const scratch: Scratch = { stamp: new Int32Array(nSw), ent: new Int32Array(nSw), list: new Int32Array(nSw) };
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

/** Per LID: the switches the sources' routes cross (stamped with the LID), each with its channel. */
interface Scratch {
  stamp: Int32Array;
  ent: Int32Array;
  list: Int32Array;
}

/** The dependencies of LID l's column (toward switch T) set in `bits`; returns how many were new.
 * On its own so that it is optimized after a few LIDs. */
function lidDeps(ix: FabricIndex, W: number, cm: Uint8Array, l: number, T: number, sources: Int32Array, ds: Int32Array, bits: Uint8Array, sc: Scratch): number {
  const { nSw, adjStart, adjSw, portEntry } = ix;
  const { stamp, ent, list } = sc;
  const base = l * nSw;
  let k = 0;
  for (let i = 0; i < sources.length; i++) {
    for (let u = sources[i]!; u !== T && stamp[u] !== l; ) {
      stamp[u] = l;
      list[k++] = u;
      const p = cm[base + u]!;
      const e = p > 0 && p < W ? portEntry[u * W + p]! : -1;
      ent[u] = e;
      if (e < 0) break;
      u = adjSw[e]!;
    }
  }
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

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
  const bits = new Uint8Array(Math.ceil(depStart[nEntries]! / 8) + 1);
  let deps = 0;
  const sources: number[] = [];
  for (let s = 0; s < nSw; s++) if (caCount[s]! > 0) sources.push(s);
  const used = new Uint8Array(nSw);
  const entry = (u: number, base: number): number => {
    const p = cm[base + u]!;
    return p > 0 && p < W ? portEntry[u * W + p]! : -1;
  };
  for (let l = 1; l <= maxLid; l++) {
    const o = lidOwner[l]!;
    if (o < 0) continue;
    const T = ends[o]!.sw;
    if (T < 0) continue;
    const base = l * nSw;
    used.fill(0);
    for (const s0 of sources) {
      for (let u = s0, hop = 0; u !== T && !used[u] && hop < nSw; hop++) {
        used[u] = 1;
        const e = entry(u, base);
        if (e < 0) break;
        u = adjSw[e]!;
      }
    }
    for (let u = 0; u < nSw; u++) {
      if (!used[u] || u === T) continue;
      const e = entry(u, base);
      if (e < 0) continue;
      const n = adjSw[e]!;
      if (n === T) continue;
      const e2 = entry(n, base);
      if (e2 < 0) continue;
      const bit = depStart[e]! + (e2 - adjStart[n]!);
      const byte = Math.floor(bit / 8);
      const bv = 1 << (bit % 8);
      if (!(bits[byte]! & bv)) {
        bits[byte] = bits[byte]! | bv;
        deps++;
      }
    }
  }
  return cdgCycles(ix, 0, bits, depStart, deps);
}

/** Where nue's layers start: the central switch that roots the escape tree, and the up/down
 *  order of the channels each layer's dynamic topological order begins from. */
import { bfsSwitches, type FabricIndex } from './graph.js';

/** A central switch: the middle of a double-sweep BFS diameter path (three BFS runs). */
export function centralSwitch(ix: FabricIndex): number {
  const n = ix.nSw;
  const da = new Int32Array(n);
  const db = new Int32Array(n);
  const q = new Int32Array(n);
  const far = (d: Int32Array): number => {
    let best = 0;
    for (let s = 0; s < n; s++) if (d[s]! > d[best]!) best = s;
    return best;
  };
  bfsSwitches(ix, 0, da, q);
  const a = far(da);
  bfsSwitches(ix, a, da, q);
  const b = far(da);
  bfsSwitches(ix, b, db, q);
  let best = a;
  let bestEcc = Infinity;
  for (let s = 0; s < n; s++) {
    if (da[s]! < 0) continue;
    const ecc = Math.max(da[s]!, db[s]!);
    if (ecc < bestEcc) {
      bestEcc = ecc;
      best = s;
    }
  }
  return best;
}

/** A topological order of up/down dependencies: switches ranked by height (hops from the nearest
 *  switch with CAs; highest first), then by `dist` (hops from a root), then GUID; up channels
 *  (toward a lower rank) from the lowest-ranked tail inward, then down channels outward. On a
 *  fat tree the up/down routes of this order are its shortest paths. */
export function updnOrder(ix: FabricIndex, height: Int32Array, dist: Int32Array): Int32Array {
  const { nSw, adjStart, adjSw, swGuid } = ix;
  const nE = adjStart[nSw]!;
  const key = (s: number): number => -height[s]! * (nSw + 1) + dist[s]!;
  const sw = Array.from({ length: nSw }, (_, i) => i).sort((a, b) => key(a) - key(b) || (swGuid[a]! < swGuid[b]! ? -1 : swGuid[a]! > swGuid[b]! ? 1 : 0));
  const pos = new Int32Array(nSw);
  sw.forEach((s, i) => (pos[s] = i));
  const ord = new Int32Array(nE);
  let k = 0;
  for (let i = nSw - 1; i >= 0; i--) {
    const s = sw[i]!;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) if (pos[adjSw[e]!]! < i) ord[e] = k++;
  }
  for (let i = 0; i < nSw; i++) {
    const s = sw[i]!;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) if (pos[adjSw[e]!]! > i) ord[e] = k++;
  }
  return ord;
}

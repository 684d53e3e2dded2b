/** nue's set-up phases: the switches' connected components, the escape tree (a BFS spanning
 *  tree from one central root per component) and the layers' acyclic CDGs. Each reads the fabric
 *  index (and what the phase before it returned) and returns fresh arrays. */
import { AcyclicCdg } from '../acyclic.js';
import { bfsSwitches, resolveRoots, type FabricIndex } from '../graph.js';
import { centralSwitch, updnOrder } from '../nue-order.js';

/** Channels one cycle check may visit before it refuses the dependency (bounds the worst case). */
const SEARCH_LIMIT = 200;

export interface Components {
  /** Per switch: its component. */
  comp: Int32Array;
  /** Per component: its switch count. */
  compSize: number[];
}

/** Connected components (a destination must reach every switch of its own component). Reads the
 *  adjacency; writes a note to `notes` when there is more than one. */
export function components(ix: FabricIndex, notes: string[]): Components {
  const { nSw, adjStart, adjSw } = ix;
  const comp = new Int32Array(nSw).fill(-1);
  const compSize: number[] = [];
  const q = new Int32Array(nSw);
  for (let s0 = 0; s0 < nSw; s0++) {
    if (comp[s0]! >= 0) continue;
    const c = compSize.length;
    let h = 0;
    let t = 0;
    q[t++] = s0;
    comp[s0] = c;
    while (h < t) {
      const s = q[h++]!;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const r = adjSw[e]!;
        if (comp[r]! < 0) {
          comp[r] = c;
          q[t++] = r;
        }
      }
    }
    compSize.push(t);
  }
  if (compSize.length > 1) notes.push(`the switches form ${compSize.length} disconnected parts: routes stay within each part`);
  return { comp, compSize };
}

/** The escape tree's roots: the configured root (its first) or the central switch, then the first
 *  switch of every component that has none. Reads the components. */
export function escapeRoots(ix: FabricIndex, { comp, compSize }: Components, configured: readonly bigint[] | undefined): number[] {
  const roots: number[] = configured && configured.length > 0 ? resolveRoots(ix, 'nue', configured).slice(0, 1) : [centralSwitch(ix)];
  for (let c = 0; c < compSize.length; c++) {
    if (roots.some((r) => comp[r] === c)) continue;
    for (let s = 0; s < ix.nSw; s++) if (comp[s] === c) {
      roots.push(s);
      break;
    }
  }
  return roots;
}

export interface EscapeTree {
  /** Per switch: hops from its component's root. */
  rootDist: Int32Array;
  /** Per channel: 1 when it (or its reverse) is a tree link. */
  isTree: Uint8Array;
}

/** The BFS spanning tree from the roots (escape paths: their routes are up/down from the root). */
export function escapeTree(ix: FabricIndex, roots: readonly number[]): EscapeTree {
  const { nSw, adjStart, adjSw } = ix;
  const rootDist = new Int32Array(nSw).fill(-1);
  const isTree = new Uint8Array(adjStart[nSw]!);
  const q = new Int32Array(nSw);
  let h = 0;
  let t = 0;
  for (const r of roots) {
    rootDist[r] = 0;
    q[t++] = r;
  }
  while (h < t) {
    const s = q[h++]!;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const r = adjSw[e]!;
      const back = ix.adjReverse[e]!;
      if (rootDist[r]! >= 0 || back < 0) continue;
      rootDist[r] = rootDist[s]! + 1;
      isTree[e] = 1;
      isTree[back] = 1;
      q[t++] = r;
    }
  }
  return { rootDist, isTree };
}

export interface NueLayers {
  /** One acyclic CDG per VL; layer 0 holds the escape paths' dependencies from the start. */
  layers: AcyclicCdg[];
  /** Per layer: each switch's hop distance from the layer's root. */
  layerDist: Int32Array[];
}

/** The layers (VL 0..maxVls−1). Layer 0 holds every dependency of the escape paths from the start
 *  (they form no cycle: the tree's routes are up/down from its root), so a destination that fits no
 *  layer can always use them. Every layer starts from the up/down order of its own root (roots
 *  spread by farthest-point sampling), and destinations try the layers of the nearest roots first:
 *  their shortest-path trees then mostly agree with the layer's order, which keeps the cycle checks
 *  short. Reads the escape tree. */
export function buildLayers(ix: FabricIndex, depStart: Float64Array, maxVls: number, { rootDist, isTree }: EscapeTree): NueLayers {
  const { nSw, adjStart, adjSw } = ix;
  const q = new Int32Array(nSw);
  const height = caHeights(ix, q);
  const minD = new Int32Array(nSw).fill(0x7fffffff);
  const far = (d: Int32Array): number => {
    for (let s = 0; s < nSw; s++) if (d[s]! >= 0 && d[s]! < minD[s]!) minD[s] = d[s]!;
    let f = 0;
    for (let s = 1; s < nSw; s++) if (minD[s]! > minD[f]!) f = s;
    return f;
  };
  const esc = new AcyclicCdg(ix, depStart, SEARCH_LIMIT, updnOrder(ix, new Int32Array(nSw), rootDist));
  for (let s = 0; s < nSw; s++) {
    for (let a = adjStart[s]!; a < adjStart[s + 1]!; a++) {
      if (!isTree[a]) continue;
      const x = adjSw[a]!;
      for (let b = adjStart[x]!; b < adjStart[x + 1]!; b++) if (isTree[b] && adjSw[b] !== s) esc.addOrdered(a, b);
    }
  }
  const layers = [esc];
  const layerDist = [rootDist];
  let r = far(rootDist);
  for (let v = 1; v < maxVls; v++) {
    const d = new Int32Array(nSw);
    bfsSwitches(ix, r, d, q);
    for (let s = 0; s < nSw; s++) if (d[s]! < 0) d[s] = nSw;
    layerDist.push(d);
    layers.push(new AcyclicCdg(ix, depStart, SEARCH_LIMIT, updnOrder(ix, height, d)));
    r = far(d);
  }
  return { layers, layerDist };
}

/** Per switch: hops to the nearest switch with CAs (0 where none is reachable). */
function caHeights(ix: FabricIndex, q: Int32Array): Int32Array {
  const { nSw, adjStart, adjSw, caCount } = ix;
  const height = new Int32Array(nSw).fill(-1);
  let h = 0;
  let t = 0;
  for (let s = 0; s < nSw; s++) if (caCount[s]! > 0) {
    height[s] = 0;
    q[t++] = s;
  }
  while (h < t) {
    const x = q[h++]!;
    for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) {
      const y = adjSw[e]!;
      if (height[y]! < 0) {
        height[y] = height[x]! + 1;
        q[t++] = y;
      }
    }
  }
  for (let s = 0; s < nSw; s++) if (height[s]! < 0) height[s] = 0;
  return height;
}

/** Layers by the distance of their root to the destination T (ties in rotation `rot`), layer 0
 *  last: its escape dependencies leave it the least room. */
export function layerOrder({ layers, layerDist }: NueLayers, T: number, rot: number): number[] {
  const n = layers.length - 1;
  const idx = Array.from({ length: n }, (_, i) => i + 1);
  const r = (a: number): number => (((a - 1 - rot) % n) + n) % n;
  idx.sort((a, b) => layerDist[a]![T]! - layerDist[b]![T]! || r(a) - r(b));
  idx.push(0);
  return idx;
}

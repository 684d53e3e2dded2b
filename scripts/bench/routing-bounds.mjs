// Lower bounds of the busiest link from the topology alone, and the measured load per layer of a
// fat tree, for routing-quality.mjs. Loads are CA-to-CA routes per directed switch-to-switch link,
// as the verifier counts them (dist/routing/incremental-load.js computeLoads: the same count,
// per link).
//
// - Levels: 0 for switches with CAs, then the hop distance from the nearest such switch (a fat
//   tree's leaves, spines, cores; a torus or a random graph with hosts everywhere is all level 0).
// - Cut bound of layer k (links between levels k and k+1): every connected group G of switches of
//   level ≤ k sends h(G)·(N − h(G)) routes out (h: its CAs, N: all CAs), and they leave only over
//   G's links to higher levels, so the busiest of those carries ≥ h(G)·(N − h(G)) / links(G).
//   On ft3-large: a leaf, 12·1,524 / 8 uplinks = 2,286; a pod, 192·1,344 / 32 = 8,064.
// - Mean bound (any topology): every route crosses at least its shortest switch-to-switch hop
//   count, so the mean load, and with it the max, is ≥ Σ over CA pairs of shortest hops / links.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const LAYER_NAMES = ['leaf–spine', 'spine–core', 'core–L3', 'L3–L4'];

export async function loadBoundsModules(distDir) {
  const imp = (p) => import(pathToFileURL(path.join(distDir, p)).href);
  const [graph, loads] = await Promise.all([imp('routing/graph.js'), imp('routing/incremental-load.js')]);
  return { indexFabric: graph.indexFabric, bfsSwitches: graph.bfsSwitches, computeLoads: loads.computeLoads };
}

/** Levels, per-layer cut bounds and the mean bound of `fabric` (with LIDs: a read-back fabric). */
export function topologyBounds(m, fabric) {
  const ix = m.indexFabric(fabric);
  const { nSw, adjStart, adjSw, caCount } = ix;
  const N = caCount.reduce((a, b) => a + b, 0);
  const level = new Int32Array(nSw).fill(-1);
  const queue = new Int32Array(nSw);
  let head = 0;
  let tail = 0;
  for (let s = 0; s < nSw; s++) if (caCount[s] > 0) ((level[s] = 0), (queue[tail++] = s));
  while (head < tail) {
    const s = queue[head++];
    for (let e = adjStart[s]; e < adjStart[s + 1]; e++) if (level[adjSw[e]] < 0) ((level[adjSw[e]] = level[s] + 1), (queue[tail++] = adjSw[e]));
  }
  const top = level.reduce((a, b) => Math.max(a, b), 0);
  const layers = [];
  for (let k = 0; k < top; k++) {
    // Connected groups of switches of level ≤ k (union-find over their links).
    const parent = Int32Array.from({ length: nSw }, (_, i) => i);
    const find = (x) => {
      while (parent[x] !== x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (let s = 0; s < nSw; s++) {
      if (level[s] < 0 || level[s] > k) continue;
      for (let e = adjStart[s]; e < adjStart[s + 1]; e++) {
        const t = adjSw[e];
        if (level[t] >= 0 && level[t] <= k) parent[find(s)] = find(t);
      }
    }
    const hosts = new Float64Array(nSw);
    const cut = new Float64Array(nSw);
    for (let s = 0; s < nSw; s++) {
      if (level[s] < 0 || level[s] > k) continue;
      const r = find(s);
      hosts[r] += caCount[s];
      for (let e = adjStart[s]; e < adjStart[s + 1]; e++) if (level[adjSw[e]] > k) cut[r]++;
    }
    let bound = 0;
    let groups = 0;
    for (let r = 0; r < nSw; r++) {
      if (!cut[r]) continue;
      groups++;
      bound = Math.max(bound, Math.ceil((hosts[r] * (N - hosts[r])) / cut[r]));
    }
    layers.push({ k, name: LAYER_NAMES[k] ?? `L${k}–L${k + 1}`, cutBound: bound, groups });
  }
  // Mean bound: Σ caCount[s]·caCount[t]·dist(s, t) / directed switch-to-switch links.
  const dist = new Int32Array(nSw);
  let hops = 0;
  for (let s = 0; s < nSw; s++) {
    if (!caCount[s]) continue;
    m.bfsSwitches(ix, s, dist, queue);
    for (let t = 0; t < nSw; t++) if (caCount[t] && dist[t] > 0) hops += caCount[s] * caCount[t] * dist[t];
  }
  const links = adjStart[nSw];
  const meanBound = links ? Math.ceil(hops / links) : 0;
  const bound = Math.max(meanBound, ...layers.map((l) => l.cutBound));
  return { ix, level, top, layers, meanBound, bound, hosts: N, links };
}

/** The busiest link overall and per layer (links between levels k and k+1) of `lfts` (node
 * index → LFT) on the fabric `b` was computed for. */
export function loadByLayer(m, b, lfts) {
  const { ix, level } = b;
  const tables = Array.from({ length: ix.nSw }, (_, s) => lfts.get(ix.swNode[s]));
  const { load } = m.computeLoads(ix, (l, col) => {
    for (let s = 0; s < ix.nSw; s++) col[s] = tables[s] && l < tables[s].length ? tables[s][l] : 255;
  });
  const perLayer = new Float64Array(Math.max(b.top, 1));
  let max = 0;
  for (let s = 0; s < ix.nSw; s++) {
    for (let e = ix.adjStart[s]; e < ix.adjStart[s + 1]; e++) {
      const v = load[e];
      if (v > max) max = v;
      const k = Math.min(level[s], level[ix.adjSw[e]]);
      if (b.top > 0 && k >= 0 && v > perLayer[k]) perLayer[k] = v;
    }
  }
  return { max, perLayer: b.top > 0 ? [...perLayer] : [] };
}

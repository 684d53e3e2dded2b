/** minhop's port balancing (routing/balance.ts: a scan per LID for destination switches with few
 * CA LIDs, water filling for the others; unseeded, each switch filled as the BFS reaches it,
 * seeded after the BFS in index order) against a reference written from the rule alone: for
 * each destination switch in turn, every other switch gives each of its LIDs, in order, the least
 * used of its minimum-hop ports (ties to the first in rotation order, the rotation drawn from the
 * seeded PRNG per switch as minhop draws it), and a CA LID adds one to that port's count. Plain
 * BFS and scans, no shared code but the fabric index and its destination LID order. Fabrics with
 * uneven counts (random graphs, degraded and oversubscribed trees) and 0..40 CA LIDs per leaf. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { routeMinhop } from '../src/routing/minhop.js';
import { destLidsOf, indexFabric, rng } from '../src/routing/graph.js';
import type { Fabric } from '../src/model/fabric.js';

function reference(fabric: Fabric, seed?: number): Map<number, Uint8Array> {
  const ix = indexFabric(fabric);
  const rand = seed !== undefined ? rng(seed) : undefined;
  const lft: Uint8Array[] = [];
  for (let s = 0; s < ix.nSw; s++) lft.push(new Uint8Array(ix.maxLid + 1).fill(255));
  for (const ep of ix.ends) if (ep.isSwitch && ep.sw >= 0) lft[ep.sw]![ep.lid] = 0;
  const count: number[][] = [];
  for (let s = 0; s < ix.nSw; s++) count.push(new Array(ix.maxPorts + 1).fill(0));
  const dest = { end: [] as number[], lid: [] as number[] };
  for (let T = 0; T < ix.nSw; T++) {
    destLidsOf(ix, ix.endsOfSw.subarray(ix.endsStart[T]!, ix.endsStart[T + 1]!), dest);
    if (dest.lid.length === 0) continue;
    const dist = new Array(ix.nSw).fill(-1);
    dist[T] = 0;
    const queue = [T];
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) {
        const r = ix.adjSw[e]!;
        if (dist[r] < 0) {
          dist[r] = dist[s] + 1;
          queue.push(r);
        }
      }
    }
    dest.lid.forEach((l, i) => (lft[T]![l] = ix.ends[dest.end[i]!]!.swPort));
    for (let s = 0; s < ix.nSw; s++) {
      if (s === T || dist[s] <= 0) continue;
      const cands: number[] = [];
      for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) if (dist[ix.adjSw[e]!] === dist[s] - 1) cands.push(e);
      if (cands.length === 0) continue;
      const rot = rand ? Math.floor(rand() * cands.length) : 0;
      const ports = cands.map((_, k) => ix.adjPort[cands[(k + rot) % cands.length]!]!);
      dest.lid.forEach((l, i) => {
        let best = 0;
        for (let k = 1; k < ports.length; k++) if (count[s]![ports[k]!]! < count[s]![ports[best]!]!) best = k;
        lft[s]![l] = ports[best]!;
        if (!ix.ends[dest.end[i]!]!.isSwitch) count[s]![ports[best]!]!++;
      });
    }
  }
  const m = new Map<number, Uint8Array>();
  lft.forEach((t, s) => m.set(ix.swNode[s]!, t));
  return m;
}

function unlinkSome(f: Fabric, every: number): Fabric {
  let n = 0;
  for (const node of f.nodes) {
    if (node.type !== 2) continue;
    for (const p of node.ports) {
      if (!p?.peer || f.nodes[p.peer.node]!.type !== 2 || n++ % every) continue;
      delete f.nodes[p.peer.node]!.ports[p.peer.port]!.peer;
      delete p.peer;
    }
  }
  return f;
}

const FABRICS: Array<[string, () => Fabric]> = [
  ['fat tree, 6 CA LIDs a leaf', () => loadFabricSpec('gen:fattree3:radix=12')],
  ['fat tree, 1 CA LID a leaf', () => loadFabricSpec('gen:fattree2:leaves=8,spines=4,hosts=1')],
  ['fat tree, 2 CA LIDs a leaf, degraded', () => unlinkSome(loadFabricSpec('gen:fattree2:leaves=8,spines=4,hosts=2'), 5)],
  ['oversubscribed tree, 9 a leaf', () => loadFabricSpec('gen:fattree2:leaves=6,spines=3,hosts=9')],
  ['fat tree, 40 a leaf', () => loadFabricSpec('gen:fattree2:leaves=4,spines=8,hosts=40')],
  ['random graph, 3 a switch', () => loadFabricSpec('gen:random:switches=40,degree=5,hosts=3,seed=7')],
  ['random graph, 1 a switch, degraded', () => unlinkSome(loadFabricSpec('gen:random:switches=60,degree=6,hosts=1,seed=2'), 7)],
  ['torus', () => loadFabricSpec('gen:torus:4x4x3,hosts=2')],
];

describe('minhop port balancing against the rule', () => {
  for (const [name, make] of FABRICS) {
    for (const seed of [undefined, 3]) {
      it(`${name}${seed !== undefined ? `, seed ${seed}` : ''}`, () => {
        const f = make();
        assignLids(f, { lmc: 0 });
        const got = routeMinhop(f, { lmc: 0, ...(seed !== undefined ? { seed } : {}) }).lfts;
        const want = reference(f, seed);
        expect(got.size).toBe(want.size);
        for (const [node, t] of want) expect(Buffer.from(got.get(node)!).equals(Buffer.from(t)), `switch ${f.nodes[node]!.desc}`).toBe(true);
      });
    }
  }
});

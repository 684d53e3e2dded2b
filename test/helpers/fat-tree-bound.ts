import type { Fabric } from '../../src/model/fabric.js';
import { isSwitch } from '../../src/model/fabric.js';

/** A lower bound on the busiest switch-to-switch link of any destination-based routing of a fat
 * tree where every host sends to every other host: for each level l and each connected part C of
 * the switches at levels ≤ l (levels by hop distance from the switches with hosts), the routes
 * leaving C (hosts in C × hosts outside) share C's links to level l + 1. At the leaves the
 * routes to one destination LID all leave over one link (the table is per destination), so a
 * leaf's bound is hosts × ⌈outside LIDs / up links⌉. Independent of the engines' code. */
export function fatTreeLinkBound(f: Fabric, lmc = 0): number {
  const nodes = f.nodes;
  const hostsAt = new Map<number, number>();
  let N = 0;
  nodes.forEach((n) => {
    if (isSwitch(n)) return;
    for (const p of n.ports) if (p?.peer && isSwitch(nodes[p.peer.node]!)) {
      hostsAt.set(p.peer.node, (hostsAt.get(p.peer.node) ?? 0) + 1);
      N++;
    }
  });
  const level = new Map<number, number>();
  let frontier = [...hostsAt.keys()];
  for (const s of frontier) level.set(s, 0);
  for (let l = 1; frontier.length; l++) {
    const next: number[] = [];
    for (const s of frontier) for (const p of nodes[s]!.ports) {
      const r = p?.peer?.node;
      if (r === undefined || !isSwitch(nodes[r]!) || level.has(r)) continue;
      level.set(r, l);
      next.push(r);
    }
    frontier = next;
  }
  const top = Math.max(...level.values());
  let bound = 0;
  for (const [leaf, h] of hostsAt) {
    const up = nodes[leaf]!.ports.filter((p) => p?.peer && level.get(p.peer.node) === 1).length;
    if (up > 0) bound = Math.max(bound, h * Math.ceil(((N - h) << lmc) / up));
  }
  for (let l = 1; l < top; l++) {
    const seen = new Set<number>();
    for (const [s0, ls] of level) {
      if (ls > l || seen.has(s0)) continue;
      let hosts = 0;
      let upLinks = 0;
      const stack = [s0];
      seen.add(s0);
      while (stack.length) {
        const s = stack.pop()!;
        hosts += hostsAt.get(s) ?? 0;
        for (const p of nodes[s]!.ports) {
          const r = p?.peer?.node;
          if (r === undefined || !level.has(r)) continue;
          const lr = level.get(r)!;
          if (lr === l + 1 && level.get(s) === l) upLinks++;
          if (lr <= l && !seen.has(r)) {
            seen.add(r);
            stack.push(r);
          }
        }
      }
      if (upLinks > 0) bound = Math.max(bound, (hosts * (N - hosts) << lmc) / upLinks);
    }
  }
  return bound;
}

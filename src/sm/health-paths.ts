/** Directed-route paths around isolated links (health hook): a node whose DR path crosses an
 * isolated link is given the lexicographically smallest shortest path over the cut fabric, so a
 * local sweep that follows does not reach it over a link that may be bouncing (a quarantined
 * flapping link would otherwise break the path at every bounce and call for a full heavy sweep).
 * A node the cut leaves unreachable keeps its path (an isolated link still carries SMPs in INIT);
 * so does a CA or router the new path would enter by another port. Pure. */
import { NodeType } from '../wire/mad.js';
import type { Fabric } from '../model/fabric.js';
import type { DiscoveryResult } from '../model/snapshot.js';

/** Whether `path` from the SM's node crosses one of `ports` (`node:port` over `f`, not cut). */
function crosses(f: Fabric, smNode: number, path: readonly number[], ports: ReadonlySet<string>): boolean {
  let cur = smNode;
  for (let k = 0; k < path.length; k++) {
    const p = path[k]!;
    if (ports.has(`${cur}:${p}`)) return true;
    const peer = f.nodes[cur]?.ports[p]?.peer;
    if (!peer) return false;
    cur = peer.node;
  }
  return false;
}

/** `disc.nodes` with new paths for the nodes whose path crosses `ports` (a copy where any
 * changes; `cut` is `disc.fabric` with `ports` unlinked). */
export function pathsAround(disc: DiscoveryResult, cut: Fabric, ports: ReadonlySet<string>): DiscoveryResult['nodes'] {
  const stale = disc.nodes.map((d) => ports.size > 0 && crosses(disc.fabric, disc.smNode, d.path, ports));
  if (!stale.some(Boolean)) return disc.nodes;
  // BFS over the cut fabric, ports ascending: the first path found is the smallest shortest one.
  const path = new Map<number, { path: number[]; enter: number }>([[disc.smNode, { path: disc.nodes[disc.smNode]!.path, enter: 0 }]]);
  const queue = [disc.smNode];
  for (let qi = 0; qi < queue.length; qi++) {
    const u = queue[qi]!;
    if (u !== disc.smNode && cut.nodes[u]!.type !== NodeType.Switch) continue; // only switches forward
    cut.nodes[u]!.ports.forEach((p, pn) => {
      if (pn === 0 || !p?.peer || path.has(p.peer.node)) return;
      path.set(p.peer.node, { path: [...path.get(u)!.path, pn], enter: p.peer.port });
      queue.push(p.peer.node);
    });
  }
  return disc.nodes.map((d, i) => {
    const np = path.get(i);
    if (!stale[i] || !np) return d;
    const sw = cut.nodes[i]!.type === NodeType.Switch;
    if (!sw && np.enter !== d.nodeInfo.localPortNum) return d;
    const portPaths = sw ? [np.path] : d.portPaths.map((pp, pn) => (pn === np.enter ? np.path : pp));
    return { ...d, path: np.path, portPaths, depth: np.path.length };
  });
}

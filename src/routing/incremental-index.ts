/** The index (routing/graph.ts indexFabric) of a fabric that is a previous one with switch-to-switch
 * links down, derived from the previous fabric's index: the links' channels taken out of the
 * adjacency, everything else (switches, end ports, LIDs, sources) shared. What a what-if case's
 * re-route reads (routing/what-if.ts: failCase keeps the numbering and shares the nodes it did not
 * touch), in O(channels) instead of the whole fabric indexed again. */
import type { Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import type { FabricIndex } from './graph.js';

/**
 * indexFabric(fabric), from `base` (the index of a fabric with the same nodes in the same order),
 * when `fabric` differs from it only by switch-to-switch links down (a port's peer gone on a
 * switch whose peer was a switch); else undefined (index it in full).
 */
export function indexLinksDown(base: FabricIndex, fabric: Fabric): FabricIndex | undefined {
  const was = base.fabric.nodes;
  const now = fabric.nodes;
  if (now.length !== was.length) return undefined;
  const W = base.maxPorts + 1;
  const { nSw, swOfNode } = base;
  const down = new Uint8Array(nSw * W);
  let any = false;
  for (let i = 0; i < now.length; i++) {
    const n = now[i]!;
    const b = was[i]!;
    if (n === b) continue;
    if (n.guid !== b.guid || n.type !== b.type || n.numPorts !== b.numPorts || n.ports.length !== b.ports.length) return undefined;
    for (let p = 0; p < n.ports.length; p++) {
      const x = n.ports[p];
      const y = b.ports[p];
      if (x === y) continue;
      if (!x || !y || x.lid !== y.lid || x.lmc !== y.lmc || x.guid !== y.guid) return undefined;
      if (x.peer?.node === y.peer?.node && x.peer?.port === y.peer?.port) continue;
      // Only a switch's link to a switch may go.
      if (x.peer || !y.peer || n.type !== NodeType.Switch || swOfNode[y.peer.node]! < 0) return undefined;
      down[swOfNode[i]! * W + p] = 1;
      any = true;
    }
  }
  if (!any) return derived({ ...base, fabric }, base);
  const { adjStart: aS, adjPort: aP, adjSw: aW, adjRemotePort: aR } = base;
  const n = aS[nSw]!;
  const adjStart = new Int32Array(nSw + 1);
  const adjPort = new Int32Array(n);
  const adjSw = new Int32Array(n);
  const adjRemotePort = new Int32Array(n);
  const portEntry = new Int32Array(nSw * W).fill(-1);
  let f = 0;
  for (let s = 0; s < nSw; s++) {
    adjStart[s] = f;
    for (let e = aS[s]!; e < aS[s + 1]!; e++) {
      if (down[s * W + aP[e]!]) continue;
      adjPort[f] = aP[e]!;
      adjSw[f] = aW[e]!;
      adjRemotePort[f] = aR[e]!;
      portEntry[s * W + aP[e]!] = f;
      f++;
    }
  }
  adjStart[nSw] = f;
  const adjReverse = new Int32Array(f).fill(-1);
  for (let i = 0; i < f; i++) if (adjRemotePort[i]! <= base.maxPorts) adjReverse[i] = portEntry[adjSw[i]! * W + adjRemotePort[i]!]!;
  return derived({ ...base, fabric, adjStart, adjPort: adjPort.slice(0, f), adjSw: adjSw.slice(0, f), adjRemotePort: adjRemotePort.slice(0, f), adjReverse, portEntry }, base);
}

/** The fabric of the index an index was derived from (indexLinksDown), or undefined. */
export function derivedFrom(ix: FabricIndex): Fabric | undefined {
  return bases.get(ix);
}
const bases = new WeakMap<FabricIndex, Fabric>();
function derived(ix: FabricIndex, base: FabricIndex): FabricIndex {
  bases.set(ix, base.fabric);
  return ix;
}

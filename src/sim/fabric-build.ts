/** Building the simulated fabric's nodes from a Fabric (sim/fabric.ts): the SMA state of every node
 * in one port store, the lookup maps filled, the links cabled (not yet trained). */
import type { Fabric } from '../model/fabric.js';
import { buildSimNode, PortStore, slotsOf, type SimNode, type SimPort } from './node.js';
import { SimFabricError, type ResolvedSimFabricOptions } from './fabric-types.js';

/** The fabric's lookup maps, filled as the nodes are built (the first node of a GUID or description wins). */
export interface SimNodeMaps {
  readonly byGuid: Map<bigint, SimNode>;
  readonly byDesc: Map<string, SimNode>;
  readonly byPortGuid: Map<bigint, SimPort>;
}

/** The nodes of `fabric`, cabled; switches in `rftSwitches` get a RandomForwardingTable only. */
export function buildSimNodes(fabric: Fabric, opts: ResolvedSimFabricOptions, rftSwitches: ReadonlySet<bigint> | undefined, idx: SimNodeMaps): SimNode[] {
  let slots = 0;
  for (const fn of fabric.nodes) slots += slotsOf(fn);
  const store = new PortStore(slots, opts.partitionCap);
  let slot0 = 0;
  const nodes = fabric.nodes.map((fn, i) => {
    const caps = rftSwitches?.has(fn.guid) ? { ...opts, linearFdbCap: 0, randomFdbCap: opts.randomFdbCap || 4096 } : opts;
    const node = buildSimNode(fn, i, caps, idx.byPortGuid, store, slot0);
    slot0 += slotsOf(fn);
    if (!idx.byGuid.has(fn.guid)) idx.byGuid.set(fn.guid, node);
    if (!idx.byDesc.has(fn.desc)) idx.byDesc.set(fn.desc, node);
    return node;
  });
  // cable the links, then train them (a cold fabric: every cabled port comes up in INIT)
  fabric.nodes.forEach((fn, i) => {
    fn.ports.forEach((fp, pn) => {
      if (!fp?.peer) return;
      const a = nodes[i]!.ports[pn];
      const b = nodes[fp.peer.node]?.ports[fp.peer.port];
      if (!a || !b) throw new SimFabricError(`node ${i} (${fn.desc}) port ${pn}: peer ${fp.peer.node}/${fp.peer.port} does not exist`);
      a.peer = b;
    });
  });
  return nodes;
}

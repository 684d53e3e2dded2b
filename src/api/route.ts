/** The route between two end ports of a snapshot, walked hop by hop through its LFTs. */
import { snapshotPorts, type EndPort, type Snapshot } from '../model/snapshot.js';
import { NO_ROUTE } from '../model/routes.js';
import { NodeType } from '../wire/mad.js';
import { formatGuid } from '../util/guid.js';

/** An end port: its port GUID (a switch's node GUID names its port 0), a LID, or a NodeDescription. */
export type PortSpec = bigint | number | string;

export interface RouteHop {
  nodeGuid: bigint;
  nodeDescription: string;
  /** The port the packet enters by (0 at the source). */
  inPort: number;
  /** The port it leaves by (0 at the destination). */
  outPort: number;
}

export interface Route {
  slid: number;
  dlid: number;
  /** Every node from the source to the destination. */
  hops: RouteHop[];
  /** Switches crossed. */
  switches: number;
}

export class RouteError extends Error {
  override readonly name = 'RouteError';
}

function resolve(snap: Snapshot, p: PortSpec): EndPort {
  const ix = snapshotPorts(snap);
  let ep: EndPort | undefined;
  if (typeof p === 'number') ep = ix.byLid(p);
  else if (typeof p === 'bigint') {
    ep = ix.byGuid.get(p);
    if (!ep) {
      const ni = snap.fabric.nodes.findIndex((n) => n.guid === p);
      if (ni >= 0) ep = ix.byNode[ni]![0];
    }
  } else {
    const ni = snap.fabric.nodes.findIndex((n) => n.desc === p);
    if (ni >= 0) ep = ix.byNode[ni]!.find((e) => e.linked) ?? ix.byNode[ni]![0];
  }
  if (!ep || !ep.lid) throw new RouteError(`no end port with a LID is ${typeof p === 'bigint' ? `${formatGuid(p)}` : JSON.stringify(p)} in sweep ${snap.sweep}`);
  return ep;
}

/** Walk from `from` to `to` (its base LID) through the routing result's LFTs. */
export function routeBetween(snap: Snapshot, from: PortSpec, to: PortSpec): Route {
  const src = resolve(snap, from);
  const dst = resolve(snap, to);
  const f = snap.fabric;
  const dlid = dst.lid;
  const hops: RouteHop[] = [];
  let node = src.node;
  let inPort = 0;
  let outPort = src.port;
  let switches = 0;
  for (let guard = 0; guard <= f.nodes.length + 1; guard++) {
    const n = f.nodes[node]!;
    if (node === dst.node) {
      if (n.type === NodeType.Switch) switches++;
      hops.push({ nodeGuid: n.guid, nodeDescription: n.desc, inPort, outPort: 0 });
      return { slid: src.lid, dlid, hops, switches };
    }
    if (n.type === NodeType.Switch) {
      switches++;
      const lft = snap.routing.lfts.get(node);
      const out = lft?.[dlid];
      if (out === undefined || out === NO_ROUTE || out === 0) throw new RouteError(`no route to LID ${dlid} at switch ${n.desc} (0x${n.guid.toString(16)})`);
      outPort = out;
    }
    hops.push({ nodeGuid: n.guid, nodeDescription: n.desc, inPort, outPort });
    const peer = n.ports[outPort]?.peer;
    if (!peer) throw new RouteError(`the route to LID ${dlid} leaves ${n.desc} by port ${outPort}, which has no link`);
    node = peer.node;
    inPort = peer.port;
  }
  throw new RouteError(`the route from LID ${src.lid} to LID ${dlid} loops`);
}

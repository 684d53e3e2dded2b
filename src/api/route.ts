/** The route between two end ports of a snapshot, walked hop by hop through its LFTs. */
import { IbsmError } from '../util/errors.js';
import { snapshotPorts, type EndPort, type ReadonlySnapshot, type Snapshot } from '../model/snapshot.js';
import { walkLfts } from '../model/lft-walk.js';
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

export class RouteError extends IbsmError {
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

/** Walk from `from` to `to` (its base LID) through the routing result's LFTs (model/lft-walk).
 * `snapshot` is only read (`sm.snapshot` as the API gives it, read-only, is taken as it is). */
export function routeBetween(snapshot: Snapshot | ReadonlySnapshot, from: PortSpec, to: PortSpec): Route {
  const snap = snapshot as Snapshot;
  const src = resolve(snap, from);
  const dst = resolve(snap, to);
  const f = snap.fabric;
  const dlid = dst.lid;
  const w = walkLfts(f, snap.routing.lfts, src, dlid, dst);
  if (!w.ok) {
    const n = f.nodes[w.node]!;
    switch (w.reason) {
      case 'noRoute':
        throw new RouteError(`no route to LID ${dlid} at switch ${n.desc} (0x${n.guid.toString(16)})`);
      case 'noLink':
        throw new RouteError(`the route to LID ${dlid} leaves ${n.desc} by port ${w.port}, which has no link`);
      case 'notOwner':
        throw new RouteError(`the route to LID ${dlid} enters ${n.desc} by port ${w.port}, which does not own that LID`);
      case 'loop':
        throw new RouteError(`the route from LID ${src.lid} to LID ${dlid} loops`);
    }
  }
  const hops = w.hops.map((h): RouteHop => ({ nodeGuid: f.nodes[h.node]!.guid, nodeDescription: f.nodes[h.node]!.desc, inPort: h.inPort, outPort: h.outPort }));
  const switches = w.hops.filter((h) => f.nodes[h.node]!.type === NodeType.Switch).length;
  return { slid: src.lid, dlid, hops, switches };
}

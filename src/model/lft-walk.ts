/** The one walk of a unicast route through the switches' LFTs, from an end port to a destination
 * LID, as a packet takes it: out of the source port, through each switch's LFT entry, across each
 * link, until it enters the port that owns the LID. Used by the SA (PathRecords, sa/path.ts) and
 * by the API's route (api/route.ts). Pure. */
import { NodeType } from '../wire/mad.js';
import type { Fabric } from './fabric.js';
import { NO_ROUTE } from './routes.js';

/** One node the route passes: the port it came in by (0 at the source) and the port it leaves by
 * (0 at the destination). */
export interface WalkHop {
  node: number;
  inPort: number;
  outPort: number;
}

export type LftWalk =
  | { ok: true; hops: WalkHop[] }
  /** `noLink`: `node`'s port `port` leads nowhere; `noRoute`: switch `node` has no (valid) entry
   * for the LID; `notOwner`: the route entered end node `node` by a port that does not own the
   * LID; `loop`: no arrival after visiting every node once. `hops`: the walk so far. */
  | { ok: false; hops: WalkHop[]; reason: 'noLink' | 'noRoute' | 'notOwner' | 'loop'; node: number; port: number };

/** Walk from `src` (a CA/router port, or a switch's port 0) to `dlid`, owned by `dst`. `onLink`
 * sees every link crossed, from (node, port) to its peer. A loop-free route visits a node at most
 * once, so the walk gives up after as many hops as there are nodes. */
export function walkLfts(
  fabric: Fabric,
  lfts: ReadonlyMap<number, ArrayLike<number>>,
  src: { node: number; port: number },
  dlid: number,
  dst: { node: number; port: number },
  onLink?: (node: number, port: number, peer: { node: number; port: number }) => void,
): LftWalk {
  const hops: WalkHop[] = [];
  let node = src.node;
  let inPort = 0;
  for (let visited = 0; visited <= fabric.nodes.length; visited++) {
    const n = fabric.nodes[node]!;
    const isSwitch = n.type === NodeType.Switch;
    // Arrived: a switch at its port 0, an end node at the port that owns the LID (or the source
    // itself when it is the destination).
    if (node === dst.node && (isSwitch || inPort === dst.port || (visited === 0 && src.port === dst.port))) {
      hops.push({ node, inPort, outPort: 0 });
      return { ok: true, hops };
    }
    let out: number;
    if (isSwitch) {
      out = lfts.get(node)?.[dlid] ?? NO_ROUTE;
      if (out === NO_ROUTE || out === 0 || out > n.numPorts) return { ok: false, hops, reason: 'noRoute', node, port: out };
    } else if (visited === 0) {
      out = src.port;
    } else {
      return { ok: false, hops, reason: 'notOwner', node, port: inPort };
    }
    hops.push({ node, inPort, outPort: out });
    const peer = n.ports[out]?.peer;
    if (!peer) return { ok: false, hops, reason: 'noLink', node, port: out };
    onLink?.(node, out, peer);
    node = peer.node;
    inPort = peer.port;
  }
  return { ok: false, hops, reason: 'loop', node, port: inPort };
}

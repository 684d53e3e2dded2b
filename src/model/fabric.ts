/** The fabric graph: one type for what a topology file or generator describes, what a
 * directed-route sweep discovers, and what routing engines consume (with LIDs filled in). */
import { NodeType } from '../wire/mad.js';

export type NodeKind = (typeof NodeType)[keyof typeof NodeType];

export interface PeerRef {
  /** Index into Fabric.nodes. */
  node: number;
  port: number;
}

export interface FabricPort {
  num: number;
  guid: bigint;
  /** The port at the other end of the link; absent when nothing is connected. */
  peer?: PeerRef;
  /** Link width as ibnetdiscover names it (1x, 4x, 8x, 12x) and speed (SDR, DDR, QDR, FDR, EDR, HDR...). */
  width?: string;
  speed?: string;
  /** Base LID (0 until assigned). For a switch only port 0 has a LID. */
  lid?: number;
  lmc?: number;
}

export interface FabricNode {
  type: NodeKind;
  guid: bigint;
  systemImageGuid: bigint;
  /** NodeDescription (in ibsim .net files: the quoted node name). */
  desc: string;
  numPorts: number;
  vendorId: number;
  deviceId: number;
  /** Indexed by port number. Index 0 is a switch's management port (always present on switches,
   * absent on CAs and routers). Unconnected physical ports are present without a peer. */
  ports: (FabricPort | undefined)[];
}

export interface Fabric {
  nodes: FabricNode[];
}

export function isSwitch(n: FabricNode): boolean {
  return n.type === NodeType.Switch;
}

/** A copy that shares nothing mutable with `f` (nodes, ports and peer references). */
export function cloneFabric(f: Fabric): Fabric {
  return { nodes: f.nodes.map((n) => ({ ...n, ports: n.ports.map((p) => (p ? { ...p, peer: p.peer ? { ...p.peer } : undefined } : undefined)) })) };
}

/** Every link once, as [a, b] with (a.node, a.port) < (b.node, b.port). */
export function links(f: Fabric): Array<[PeerRef, PeerRef]> {
  const out: Array<[PeerRef, PeerRef]> = [];
  f.nodes.forEach((n, ni) => {
    n.ports.forEach((p, pi) => {
      if (!p?.peer) return;
      const a = { node: ni, port: pi };
      const b = p.peer;
      if (a.node < b.node || (a.node === b.node && a.port < b.port)) out.push([a, b]);
    });
  });
  return out;
}

/** Check that every peer reference is mutual and in range; returns problems (empty when sound). */
export function checkFabric(f: Fabric): string[] {
  const errs: string[] = [];
  f.nodes.forEach((n, ni) => {
    n.ports.forEach((p, pi) => {
      if (!p?.peer) return;
      const q = f.nodes[p.peer.node]?.ports[p.peer.port];
      if (!q) errs.push(`node ${ni} port ${pi}: peer ${p.peer.node}/${p.peer.port} does not exist`);
      else if (q.peer?.node !== ni || q.peer.port !== pi) errs.push(`node ${ni} port ${pi}: link is not mutual`);
    });
  });
  return errs;
}

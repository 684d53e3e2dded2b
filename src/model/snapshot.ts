/** One sweep's view of the subnet, shared by the SM, routing, the SA and multicast: the fabric as
 * discovered (with LIDs), what the SMAs reported, the routes, and the one index of its end ports.
 *
 * A snapshot is built by the SM at the end of a heavy sweep and never changed afterwards; a newer
 * sweep makes a new one. Everything derived from it (the end-port index here, the SA's per-snapshot
 * caches) is therefore computed once per snapshot and keyed by the snapshot object. */
import { NodeType } from '../wire/mad.js';
import type { NodeInfo, PortInfo, SwitchInfo } from '../wire/sma.js';
import type { Fabric, FabricNode, NodeKind, PeerRef } from './fabric.js';
import type { RoutingResult } from './routes.js';
import type { DeepReadonly } from '../util/deep-readonly.js';

// ---------------------------------------------------------------- end ports

/** A node's role in partition rules and P_Key tables. */
export type PortKind = 'ca' | 'switch' | 'router';

export function portKind(type: NodeKind | number): PortKind {
  return type === NodeType.Switch ? 'switch' : type === NodeType.Router ? 'router' : 'ca';
}

/** Is port `pn` of `n` an end port: a switch's port 0 (its management port), or a CA/router port
 * (1..N)? The one definition every layer uses. Whether it is linked or has a LID is the caller's
 * further question. */
export function isEndPort(n: FabricNode, pn: number): boolean {
  return n.type === NodeType.Switch ? pn === 0 : pn !== 0;
}

/** An end port of a fabric. */
export interface EndPort {
  node: number;
  port: number;
  guid: bigint;
  /** Base LID (0 when none is assigned). */
  lid: number;
  /** LMC (a switch's port 0: 0). */
  lmc: number;
  kind: PortKind;
  /** A CA/router port with a cable; a switch's port 0 always counts as linked. */
  linked: boolean;
}

/** Every end port of `fabric` as it is now, in node then port order (not cached: LID assignment
 * reads it before it fills the LIDs in). */
export function endPorts(fabric: Fabric): EndPort[] {
  const out: EndPort[] = [];
  fabric.nodes.forEach((n, ni) => {
    const kind = portKind(n.type);
    n.ports.forEach((p, pn) => {
      if (!p || !isEndPort(n, pn)) return;
      const sw = kind === 'switch';
      out.push({ node: ni, port: pn, guid: p.guid, lid: p.lid ?? 0, lmc: p.lmc ?? 0, kind, linked: sw || p.peer !== undefined });
    });
  });
  return out;
}

/** End ports by LID, GUID and node: the one index of a snapshot. */
export interface EndPortIndex {
  /** Every end port, in node then port order. */
  readonly endPorts: readonly EndPort[];
  /** End ports of each node. */
  readonly byNode: readonly (readonly EndPort[])[];
  /** By port GUID (the first port with a GUID, should two share one). */
  readonly byGuid: ReadonlyMap<bigint, EndPort>;
  /** The end port owning a LID (any LID of its LMC range). */
  byLid(lid: number): EndPort | undefined;
  /** The end port at (node, port), if that is one. */
  at(node: number, port: number): EndPort | undefined;
}

export function indexEndPorts(fabric: Fabric): EndPortIndex {
  const all = endPorts(fabric);
  // Each node's list made at its length (one end port, most often): a list grown by push from
  // empty leaves room for ~17 (10k nodes: ~1.5 MB of live heap).
  const count = new Uint32Array(fabric.nodes.length);
  for (const ep of all) count[ep.node]!++;
  const byNode: EndPort[][] = Array.from(count, (c) => new Array<EndPort>(c));
  count.fill(0);
  const byGuid = new Map<bigint, EndPort>();
  const lidMap = new Map<number, EndPort>();
  for (const ep of all) {
    byNode[ep.node]![count[ep.node]!++] = ep;
    if (!byGuid.has(ep.guid)) byGuid.set(ep.guid, ep);
    if (ep.lid) for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) lidMap.set(l, ep);
  }
  return {
    endPorts: all,
    byNode,
    byGuid,
    byLid: (lid) => lidMap.get(lid),
    at: (node, port) => byNode[node]?.find((e) => e.port === port),
  };
}

/** The LIDs of an end port's LMC range. */
export function lidRange(ep: EndPort): [number, number] {
  return [ep.lid, ep.lid + (1 << ep.lmc) - 1];
}

// ---------------------------------------------------------------- what the SMAs reported

/** One node as a sweep found it: how to reach it and the attributes its SMA returned. */
export interface DiscoveredNode {
  /** DR path from the SM to this node: the lexicographically smallest shortest one (for a
   * CA/router, to whichever of its ports is nearest; see sm/discovery.ts). */
  path: number[];
  /** NodeInfo as read through `path`: LocalPortNum (and, for a CA/router, PortGUID) are those of
   * the port `path` enters the node by. */
  nodeInfo: NodeInfo;
  switchInfo?: SwitchInfo;
  /** PortInfo by port number (switch: 0..N; CA/router: the ports reached). What a sweep reads is
   * kept in its wire bytes behind a view (model/port-info.ts: spread one only through
   * `portInfoValue`). */
  portInfo: (PortInfo | undefined)[];
  /** For CAs/routers: the DR path that reaches each port (the lexicographically smallest shortest
   * one). Switches: index 0 only (every port is reached via `path`). */
  portPaths: (number[] | undefined)[];
  /** BFS depth (hops from the SM's node). */
  depth: number;
}

export interface DiscoveryResult {
  /** Nodes numbered by node GUID, ascending (the same on every run and from every SM port). */
  fabric: Fabric;
  /** Parallel to `fabric.nodes`. */
  nodes: DiscoveredNode[];
  /** The SM's node (index into `fabric.nodes`: wherever its GUID sorts, not necessarily 0) and port. */
  smNode: number;
  smPort: number;
  smps: number;
  maxDepth: number;
}

// ---------------------------------------------------------------- the snapshot

export interface Snapshot {
  readonly fabric: Fabric;
  readonly discovery: DiscoveryResult;
  readonly routing: RoutingResult;
  readonly maxLid: number;
  readonly smLid: number;
  /** Heavy sweep number that produced it (1 for the first). */
  readonly sweep: number;
}

/** A snapshot as the API hands it out (`IbsmSm.snapshot`, the `subnetUp` event): read-only all
 * the way down, so that a program cannot change the SM's view (util/deep-readonly.ts). */
export type ReadonlySnapshot = DeepReadonly<Snapshot>;

const indexCache = new WeakMap<Snapshot | ReadonlySnapshot, EndPortIndex>();

/** The end-port index of a snapshot (built once per snapshot; it only reads the snapshot). */
export function snapshotPorts(snap: Snapshot | ReadonlySnapshot): EndPortIndex {
  let idx = indexCache.get(snap);
  if (!idx) indexCache.set(snap, (idx = indexEndPorts(snap.fabric as Fabric)));
  return idx;
}

/** The SM's own end port in a snapshot. */
export function smPortOf(snap: Snapshot): EndPort | undefined {
  return snapshotPorts(snap).at(snap.discovery.smNode, snap.discovery.smPort);
}

/** A digest of a fabric as an SM manages it: every node (GUID, type), every linked end port (GUID,
 * LID, LMC) and every link (by node GUID and port), in the fabric's node order (canonical: by node
 * GUID). Two SMs whose views of a subnet have the same fingerprint see the same nodes, links and
 * LIDs: a standby whose own discovery has its master's fingerprint can take the subnet over from
 * that view (sm/sweep.ts `Sweeper.takeover`). 64-bit FNV-1a; not a security measure. */
export function fabricFingerprint(fabric: Fabric): bigint {
  const M = 0xffff_ffff_ffff_ffffn;
  let h = 0xcbf2_9ce4_8422_2325n;
  const mix = (v: bigint): void => {
    h = ((h ^ (v & M)) * 0x100_0000_01b3n) & M;
  };
  for (const n of fabric.nodes) {
    mix(n.guid);
    mix(BigInt(n.type));
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const end = isEndPort(n, pn);
      if (end && (n.type === NodeType.Switch || p.peer)) mix((BigInt(pn) << 48n) | (BigInt(p.lmc ?? 0) << 32n) | BigInt(p.lid ?? 0));
      if (p.peer) {
        mix(fabric.nodes[p.peer.node]!.guid);
        mix((BigInt(pn) << 16n) | BigInt(p.peer.port));
      }
    });
  }
  return h;
}

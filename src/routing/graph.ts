/** A compact, array-based index of a Fabric for routing and verification: switches numbered 0..nSw-1,
 *  switch-to-switch links as a CSR adjacency (one entry per directed link = one channel), and the
 *  destination LIDs with the switch port that delivers each. Built once per run; O(nodes + ports). */
import { isSwitch, type Fabric } from '../model/fabric.js';
import { endPorts as fabricEndPorts } from '../model/snapshot.js';
import { NodeType } from '../wire/mad.js';
import { RoutingNotApplicable } from './types.js';
import { Rng } from '../util/rng.js';
import { formatGuid } from '../util/guid.js';

/** An end port as FabricIndex holds it: what routing needs of it, switch-indexed (derived from
 * model/snapshot.ts's end ports; a distinct name from the public `EndPort`). */
export interface IndexedEndPort {
  node: number;
  port: number;
  guid: bigint;
  /** Base LID and LMC (switch port 0: 0 unless lmc_esp0 gave its enhanced port 0 the LMC). */
  lid: number;
  lmc: number;
  isSwitch: boolean;
  /** Switch (index into FabricIndex switch arrays) that delivers to this port; -1 when not attached to a switch. */
  sw: number;
  /** Out port on that switch (0 for a switch's own port 0). */
  swPort: number;
  /** Node GUID and system image GUID of the node (for LMC path diversity decisions elsewhere). */
  nodeGuid: bigint;
}

export interface FabricIndex {
  fabric: Fabric;
  nSw: number;
  /** switch index → node index */
  swNode: Int32Array;
  /** node index → switch index, -1 for CAs/routers */
  swOfNode: Int32Array;
  swGuid: bigint[];
  /** Highest port number of each switch (LFT entries must be ≤ this). */
  swNumPorts: Int32Array;
  /** Largest swNumPorts (+1 gives the width of per-port arrays). */
  maxPorts: number;
  /** CSR adjacency of switch-to-switch links: entries adjStart[s] .. adjStart[s+1]-1. Each entry is a directed channel. */
  adjStart: Int32Array;
  adjPort: Int32Array;
  adjSw: Int32Array;
  adjRemotePort: Int32Array;
  /** Entry index of the reverse channel. */
  adjReverse: Int32Array;
  /** s * (maxPorts+1) + port → adjacency entry, -1 when that port does not lead to a switch. */
  portEntry: Int32Array;
  /** End ports (CA/router ports with a LID, every switch's port 0 with a LID). */
  ends: IndexedEndPort[];
  /** LID → index in ends, -1 when unassigned. Length maxLid+1. */
  lidOwner: Int32Array;
  maxLid: number;
  /** CSR of end ports per delivering switch: endsOfSw[endsStart[s] .. endsStart[s+1]-1] (switch's own port 0 first). */
  endsStart: Int32Array;
  endsOfSw: Int32Array;
  /** Number of CA/router end ports attached to each switch (the traffic sources). */
  caCount: Int32Array;
  /** Problems found while indexing (ports without LIDs, CAs not attached to a switch), for notes. */
  warnings: string[];
}

/** A GUID as 0x and 16 hex digits (util/guid's formatGuid: one text form of a GUID). */
export const fmtGuid = formatGuid;

export function swName(ix: FabricIndex, s: number): string {
  const n = ix.fabric.nodes[ix.swNode[s]!]!;
  return `${fmtGuid(n.guid)}${n.desc ? ` "${n.desc}"` : ''}`;
}

export function indexFabric(fabric: Fabric): FabricIndex {
  const nodes = fabric.nodes;
  const swOfNode = new Int32Array(nodes.length).fill(-1);
  const swNodeList: number[] = [];
  nodes.forEach((n, i) => {
    if (isSwitch(n)) {
      swOfNode[i] = swNodeList.length;
      swNodeList.push(i);
    }
  });
  const nSw = swNodeList.length;
  const swNode = Int32Array.from(swNodeList);
  const swGuid = swNodeList.map((i) => nodes[i]!.guid);
  const swNumPorts = new Int32Array(nSw);
  let maxPorts = 0;
  let nEntries = 0;
  for (let s = 0; s < nSw; s++) {
    const n = nodes[swNode[s]!]!;
    const np = Math.max(n.numPorts, n.ports.length - 1, 0);
    swNumPorts[s] = np;
    if (np > maxPorts) maxPorts = np;
    for (let p = 1; p < n.ports.length; p++) {
      const peer = n.ports[p]?.peer;
      if (peer && swOfNode[peer.node]! >= 0) nEntries++;
    }
  }
  const W = maxPorts + 1;
  const adjStart = new Int32Array(nSw + 1);
  const adjPort = new Int32Array(nEntries);
  const adjSw = new Int32Array(nEntries);
  const adjRemotePort = new Int32Array(nEntries);
  const adjReverse = new Int32Array(nEntries).fill(-1);
  const portEntry = new Int32Array(nSw * W).fill(-1);
  let e = 0;
  for (let s = 0; s < nSw; s++) {
    adjStart[s] = e;
    const n = nodes[swNode[s]!]!;
    for (let p = 1; p < n.ports.length; p++) {
      const peer = n.ports[p]?.peer;
      if (!peer) continue;
      const r = swOfNode[peer.node]!;
      if (r < 0) continue;
      adjPort[e] = p;
      adjSw[e] = r;
      adjRemotePort[e] = peer.port;
      portEntry[s * W + p] = e;
      e++;
    }
  }
  adjStart[nSw] = e;
  for (let i = 0; i < nEntries; i++) {
    const r = adjSw[i]!;
    if (adjRemotePort[i]! <= maxPorts) adjReverse[i] = portEntry[r * W + adjRemotePort[i]!]!;
  }

  // End ports and LIDs.
  const warnings: string[] = [];
  const ends: IndexedEndPort[] = [];
  let maxLid = 0;
  for (const e of fabricEndPorts(fabric)) {
    if (!e.linked) continue;
    const n = nodes[e.node]!;
    if (e.kind === 'switch') {
      if (!e.lid) {
        warnings.push(`switch ${fmtGuid(n.guid)} has no LID: it is not routed to`);
        continue;
      }
      ends.push({ node: e.node, port: 0, guid: e.guid, lid: e.lid, lmc: e.lmc, isSwitch: true, sw: swOfNode[e.node]!, swPort: 0, nodeGuid: n.guid });
      maxLid = Math.max(maxLid, e.lid + (1 << e.lmc) - 1);
      continue;
    }
    if (!e.lid) {
      warnings.push(`port ${fmtGuid(e.guid)} (${n.desc || fmtGuid(n.guid)} port ${e.port}) has no LID: it is not routed to`);
      continue;
    }
    const peer = n.ports[e.port]!.peer!;
    const sw = swOfNode[peer.node]!;
    if (sw < 0) warnings.push(`port ${fmtGuid(e.guid)} (${n.desc || fmtGuid(n.guid)} port ${e.port}) is not attached to a switch`);
    ends.push({ node: e.node, port: e.port, guid: e.guid, lid: e.lid, lmc: e.lmc, isSwitch: false, sw, swPort: sw >= 0 ? peer.port : 0, nodeGuid: n.guid });
    maxLid = Math.max(maxLid, e.lid + (1 << e.lmc) - 1);
  }
  const lidOwner = new Int32Array(maxLid + 1).fill(-1);
  ends.forEach((ep, i) => {
    for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
      if (lidOwner[l]! >= 0) {
        const other = ends[lidOwner[l]!]!;
        throw new RoutingNotApplicable('routing', `LID ${l} is assigned to both port ${fmtGuid(other.guid)} and port ${fmtGuid(ep.guid)}: reassign LIDs first`);
      }
      lidOwner[l] = i;
    }
  });
  const endsStart = new Int32Array(nSw + 1);
  const caCount = new Int32Array(nSw);
  for (const ep of ends) if (ep.sw >= 0) endsStart[ep.sw + 1]!++;
  for (let s = 0; s < nSw; s++) endsStart[s + 1]! += endsStart[s]!;
  const fill = endsStart.slice(0, nSw);
  const endsOfSw = new Int32Array(endsStart[nSw]!);
  // Switch's own port 0 first, then attached ports in end order.
  ends.forEach((ep, i) => {
    if (ep.sw >= 0 && ep.isSwitch) endsOfSw[fill[ep.sw]!++] = i;
  });
  ends.forEach((ep, i) => {
    if (ep.sw >= 0 && !ep.isSwitch) {
      endsOfSw[fill[ep.sw]!++] = i;
      caCount[ep.sw]!++;
    }
  });
  return {
    fabric, nSw, swNode, swOfNode, swGuid, swNumPorts, maxPorts, adjStart, adjPort, adjSw, adjRemotePort, adjReverse, portEntry,
    ends, lidOwner, maxLid, endsStart, endsOfSw, caCount, warnings,
  };
}

/** Resolve configured root GUIDs (switch node GUID, switch port GUID, or a CA/router node/port GUID → its switch). */
export function resolveRoots(ix: FabricIndex, engine: string, roots: readonly bigint[]): number[] {
  const out = new Set<number>();
  for (const g of roots) {
    let found = -1;
    ix.fabric.nodes.forEach((n, ni) => {
      if (found >= 0) return;
      const portMatch = n.ports.findIndex((p) => p?.guid === g);
      if (n.guid !== g && portMatch < 0) return;
      if (n.type === NodeType.Switch) {
        found = ix.swOfNode[ni]!;
        return;
      }
      const p = n.ports[portMatch >= 0 ? portMatch : n.ports.findIndex((q) => q?.peer !== undefined)];
      const peerSw = p?.peer ? ix.swOfNode[p.peer.node]! : -1;
      if (peerSw >= 0) found = peerSw;
    });
    if (found < 0) throw new RoutingNotApplicable(engine, `root GUID ${fmtGuid(g)} is not a switch in this fabric, nor a port attached to one`);
    out.add(found);
  }
  return [...out].sort((a, b) => a - b);
}

/** Hop distances between switches by BFS from `src` (−1 = unreachable). `dist` and `queue` are caller-owned scratch. */
export function bfsSwitches(ix: FabricIndex, src: number, dist: Int32Array, queue: Int32Array): void {
  dist.fill(-1);
  dist[src] = 0;
  let head = 0;
  let tail = 0;
  queue[tail++] = src;
  const { adjStart, adjSw } = ix;
  while (head < tail) {
    const s = queue[head++]!;
    const d = dist[s]! + 1;
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const r = adjSw[e]!;
      if (dist[r]! < 0) {
        dist[r] = d;
        queue[tail++] = r;
      }
    }
  }
}

/** Empty LFTs (all NO_ROUTE, own LID → 0) for every switch: views of one buffer (one allocation,
 *  not one per switch, which at thousands of switches costs more in GC than the filling). */
/** Lists (one per item) as one flat array: item i's entries at list[start[i] .. start[i + 1]). */
export function csr(lists: readonly (readonly number[])[]): { start: Int32Array; list: Int32Array } {
  const n = lists.length;
  const start = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) start[i + 1] = start[i]! + lists[i]!.length;
  const list = new Int32Array(start[n]!);
  for (let i = 0; i < n; i++) list.set(lists[i]!, start[i]!);
  return { start, list };
}

/** Every switch's table (LIDs 0 .. maxLid, NO_ROUTE but its own LID's port 0), one buffer for
 *  all, each table at a 64-byte boundary: a cache line holds one table's entries only, and the
 *  verifier reads a table 32 bits at a time (verify-batch.ts). */
export function emptyLfts(ix: FabricIndex): Uint8Array[] {
  const out: Uint8Array[] = [];
  const len = ix.maxLid + 1;
  const stride = (len + 63) & ~63;
  const all = new Uint8Array(stride * ix.nSw).fill(255);
  for (let s = 0; s < ix.nSw; s++) out.push(all.subarray(s * stride, s * stride + len));
  for (const ep of ix.ends) if (ep.isSwitch && ep.sw >= 0) out[ep.sw]![ep.lid] = 0;
  return out;
}

export function lftMap(ix: FabricIndex, lfts: Uint8Array[]): Map<number, Uint8Array> {
  const m = new Map<number, Uint8Array>();
  lfts.forEach((t, s) => m.set(ix.swNode[s]!, t));
  return m;
}

/** A seeded source of uniform numbers in [0, 1) (the project's one PRNG, src/util/rng.ts). */
export function rng(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

/** The destination LIDs of end ports `ends` (ix.ends indices, e.g. a switch's run of endsOfSw),
 *  in that order, each port's LIDs in LID order, split into (end index, lid) pairs. */
export function destLidsOf(ix: FabricIndex, ends: ArrayLike<number>, out: { end: number[]; lid: number[] }): void {
  out.end.length = 0;
  out.lid.length = 0;
  for (let i = 0; i < ends.length; i++) {
    const ei = ends[i]!;
    const ep = ix.ends[ei]!;
    for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
      out.end.push(ei);
      out.lid.push(l);
    }
  }
}

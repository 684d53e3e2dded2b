/** The heavy sweep: a directed-route discovery of the fabric from the SM's port.
 *
 * Level-synchronous BFS. Per switch: NodeDescription, SwitchInfo and PortInfo of every port
 * (0..N); per CA/router port: the NodeInfo that found it and its PortInfo; NodeDescription once per
 * CA/router node; one NodeInfo probe per link (on a bipartite fabric such as a fat tree every link
 * is probed exactly once; links between two nodes at the same BFS depth may be probed from both
 * sides in the same round). Ports are only probed when their PortInfo shows the link up.
 *
 * The result is canonical: it depends on neither the order answers arrive in (concurrent SMPs) nor
 * on where the SM sits, beyond what must. Nodes are numbered by node GUID (ascending), so two SMs
 * on one fabric (master and standby) see the same node indices and so compute the same LIDs and
 * routes. Every DR path is recomputed after the sweep from the SM's node over the discovered links
 * (breadth-first, ports in increasing order, only out of ports whose link is up, only through
 * switches): each node's `path` and each CA/router port's `portPaths` entry is the
 * lexicographically smallest shortest path, whichever answer happened to find it first. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { NodeDescription, NodeInfo, SwitchInfo, type PortInfo } from '../wire/sma.js';
import { getPortInfo } from './port-info-get.js';
import type { Fabric, FabricNode, FabricPort, NodeKind } from '../model/fabric.js';
import type { DiscoveredNode, DiscoveryResult } from '../model/snapshot.js';
import { speedName, widthName } from '../model/rates.js';
import { keepPortInfo } from '../model/port-info.js';
import type { SmpClient } from './smp-client.js';
import { pump } from '../util/pump.js';
import { formatGuid } from '../util/guid.js';
import { IbsmError } from '../util/errors.js';
import { probeOnSlot, readCasOnSlot, readPortsOnSlot, type SlotSweep } from './discovery-slot.js';

export type { DiscoveredNode, DiscoveryResult } from '../model/snapshot.js';

export interface DiscoveryOptions {
  /** Called after each BFS level (for progress output). */
  onProgress?: (p: { depth: number; nodes: number; switches: number; smps: number }) => void;
  /** A node that could not be read (left out of this sweep), or a port whose far side could not
   * be probed (its link left out). The sweep logs and counts it; the next sweep tries again. */
  onSkip?: (s: DiscoverySkip) => void;
  /** What the management ports (a switch's port 0, CA and router ports) said of
   * IsExtendedSpeedsSupported at the last sweep, by port GUID: how their PortInfo is read
   * (AttributeModifier bit 31, sm/port-info-get.ts). */
  extendedSpeeds?: ReadonlyMap<bigint, boolean>;
  /** Health hook: a port (its node's GUID, its number) not to probe: it leads to a node held
   * unresponsive (sm/health-unresponsive.ts), which a probe of its own watches; its link is left
   * out of this sweep without waiting for its timeouts. */
  skipProbe?: (guid: bigint, port: number) => boolean;
}

/** What discovery left out, and why. */
export interface DiscoverySkip {
  /** node: unreadable; link: its far side unreadable; duplicate: the far side answers with the
   * GUID of a node found already, elsewhere (two nodes with one GUID): the second is left out. */
  kind: 'node' | 'link' | 'duplicate';
  /** The node read (kind node) or the node whose port was probed (kind link). */
  guid: bigint;
  desc: string;
  /** kind link: the port probed. */
  port?: number;
  /** The node's LID as it reported it (0 when unknown). */
  lid: number;
  path: readonly number[];
  /** kind duplicate: the path the node with that GUID was found at first. */
  first?: readonly number[];
  error: unknown;
}

export class DiscoveryError extends IbsmError {
  override readonly name = 'DiscoveryError';
}

const MAX_HOPS = 63;
/** Switches of a BFS level read at once (a switch is ~38 SMPs: more than the RPC's window is
 * always queued), CAs and routers read at once (2 SMPs each: 16 of them would keep only 32
 * requests outstanding, too few to keep the wire busy at a fat tree's last level), and far-side
 * probes (one SMP each) started at once. */
const NODE_READS_IN_PROGRESS = 16;
const CA_READS_IN_PROGRESS = 64;
const PROBES_IN_PROGRESS = 512;
/** The ports to probe through a node with none (a CA, a router). */
const NO_PORTS: readonly number[] = Object.freeze([]);

export async function discover(smp: SmpClient, opts: DiscoveryOptions = {}): Promise<DiscoveryResult> {
  const sent0 = smp.sent;
  const sweep = new DiscoverySweep(smp, opts);
  // Hop 0: the SM's own node.
  const local = await sweep.getNodeInfo([]);
  if (local.nodeType !== NodeType.Switch && local.localPortNum === 0) throw new DiscoveryError('the local CA reported LocalPortNum 0');
  sweep.addNode(local, [], 0);
  const smPort = local.nodeType === NodeType.Switch ? 0 : local.localPortNum;
  await sweep.bfs(sent0);
  const { fabric, nodes, skipped } = sweep;
  const kept = skipped.size ? leaveOut(fabric, nodes, skipped) : { fabric, nodes };
  const canon = canonicalize(kept.fabric, kept.nodes, 0, smPort);
  return { fabric: canon.fabric, nodes: canon.nodes, smNode: canon.smNode, smPort, smps: smp.sent - sent0, maxDepth: canon.maxDepth };
}

const decodeNodeInfo = (b: Uint8Array): NodeInfo => NodeInfo.decode(b);

/** One discovery sweep: the fabric and what was read of each node, as the BFS finds them. */
class DiscoverySweep implements SlotSweep {
  readonly fabric: Fabric = { nodes: [] };
  readonly nodes: DiscoveredNode[] = [];
  private readonly byGuid = new Map<bigint, number>();
  /** Nodes whose details could not be read: left out of this sweep (no probe goes through them). */
  readonly skipped = new Set<number>();
  private readonly ext: ReadonlyMap<bigint, boolean> | undefined;

  constructor(
    readonly smp: SmpClient,
    private readonly opts: DiscoveryOptions,
  ) {
    this.ext = opts.extendedSpeeds;
  }

  // one `then` per SMP (no async frame): a sweep sends one of these per port; a PortInfo is kept
  // in its wire bytes (model/port-info.ts), not decoded
  knownExt(portGuid: bigint): boolean | undefined {
    return this.ext?.get(portGuid);
  }

  getNodeInfo(path: number[]): Promise<NodeInfo> {
    return this.smp.getDr(path, SmpAttr.NodeInfo, 0).then(decodeNodeInfo);
  }

  addNode(ni: NodeInfo, path: number[], depth: number): number {
    const idx = this.fabric.nodes.length;
    const sw = ni.nodeType === NodeType.Switch;
    const node: FabricNode = {
      type: ni.nodeType as NodeKind,
      guid: ni.nodeGuid,
      systemImageGuid: ni.systemImageGuid,
      desc: '',
      numPorts: ni.numPorts,
      vendorId: ni.vendorId,
      deviceId: ni.deviceId,
      ports: new Array(ni.numPorts + 1).fill(undefined),
    };
    if (sw) for (let p = 0; p <= ni.numPorts; p++) node.ports[p] = newPort(p, ni.portGuid);
    else node.ports[ni.localPortNum] = newPort(ni.localPortNum, ni.portGuid);
    this.fabric.nodes.push(node);
    // Each sized to the node's ports up front (holes until filled): an empty array given an entry
    // at index 1 grows room for ~19 (~260 bytes a CA, twice; 10k nodes: 2.7 MB of live heap)
    const d: DiscoveredNode = { path, nodeInfo: ni, portInfo: new Array(ni.numPorts + 1), portPaths: new Array(ni.numPorts + 1), depth };
    d.portPaths[sw ? 0 : ni.localPortNum] = path;
    this.nodes.push(d);
    this.byGuid.set(ni.nodeGuid, idx);
    return idx;
  }

  applyPortInfo(idx: number, port: number, pi: PortInfo): void {
    this.nodes[idx]!.portInfo[port] = pi;
    const fp = this.fabric.nodes[idx]!.ports[port]!;
    // A link's width/speed is only meaningful while it is up (a down port reports stale values).
    if ((port !== 0 || this.fabric.nodes[idx]!.type !== NodeType.Switch) && pi.portState >= PortState.Init) {
      fp.width = widthName(pi.linkWidthActive);
      fp.speed = speedName(pi.linkSpeedActive, pi.linkSpeedExtActive, pi.linkSpeedExtActive2);
    }
    fp.lid = pi.lid;
    fp.lmc = pi.lmc;
  }

  private nodeLid(idx: number): number {
    const n = this.fabric.nodes[idx]!;
    const d = this.nodes[idx]!;
    return d.portInfo[n.type === NodeType.Switch ? 0 : d.nodeInfo.localPortNum]?.lid ?? 0;
  }

  /** Read a node's details; returns the ports to probe. A node that cannot be read is left out. */
  private async readNode(idx: number): Promise<number[]> {
    try {
      return await this.readNodeOnce(idx);
    } catch (error) {
      if (idx === 0) throw error; // the SM's own node: nothing to sweep without it
      this.skipped.add(idx);
      const n = this.fabric.nodes[idx]!;
      this.opts.onSkip?.({ kind: 'node', guid: n.guid, desc: n.desc, lid: this.nodeLid(idx), path: this.nodes[idx]!.path, error });
      return [];
    }
  }

  private async readNodeOnce(idx: number): Promise<number[]> {
    const d = this.nodes[idx]!;
    const n = this.fabric.nodes[idx]!;
    const jobs: Promise<unknown>[] = [];
    jobs.push(this.smp.getDr(d.path, SmpAttr.NodeDescription, 0).then((b) => (n.desc = NodeDescription.decode(b).description)));
    if (n.type === NodeType.Switch) {
      jobs.push(this.smp.getDr(d.path, SmpAttr.SwitchInfo, 0).then((b) => (d.switchInfo = SwitchInfo.decode(b))));
      // port 0 first: its CapabilityMask decides AttributeModifier bit 31 for the external ports
      jobs.push(
        getPortInfo(this.smp, d.path, 0, keepPortInfo, undefined, this.knownExt(n.ports[0]!.guid)).then((pi0) => {
          this.applyPortInfo(idx, 0, pi0);
          return this.readPorts(idx, d.path, n.numPorts, pi0);
        }),
      );
      await settleAll(jobs);
      const probe: number[] = [];
      for (let p = 1; p <= n.numPorts; p++) {
        const pi = d.portInfo[p]!;
        if (pi.portState >= PortState.Init && !n.ports[p]!.peer) probe.push(p);
      }
      return probe;
    }
    const entry = d.nodeInfo.localPortNum;
    jobs.push(getPortInfo(this.smp, d.path, entry, keepPortInfo, undefined, this.knownExt(n.ports[entry]!.guid)).then((pi) => this.applyPortInfo(idx, entry, pi)));
    await settleAll(jobs);
    // Only the SM's own CA is left through its port; other CAs/routers do not forward SMPs.
    if (idx === 0 && d.portInfo[entry]!.portState >= PortState.Init) return [entry];
    return [];
  }

  /** The PortInfo of a switch's external ports 1..`numPorts`, bit 31 as port 0's mask says.
   * Through the client's callback slot where it has one (no promise or closure per port: these
   * are half a discovery's SMPs); rejects with the first failure once every answer is in. */
  private readPorts(idx: number, path: readonly number[], numPorts: number, pi0: PortInfo): Promise<void> {
    const smp = this.smp;
    if (!smp.getDrTo) {
      const ports: Promise<unknown>[] = [];
      for (let p = 1; p <= numPorts; p++) ports.push(getPortInfo(smp, path, p, keepPortInfo, pi0).then((pi) => this.applyPortInfo(idx, p, pi)));
      return settleAll(ports);
    }
    return readPortsOnSlot(this, idx, path, numPorts, pi0);
  }

  private link(a: number, ap: number, b: number, bp: number): void {
    this.fabric.nodes[a]!.ports[ap]!.peer = { node: b, port: bp };
    this.fabric.nodes[b]!.ports[bp]!.peer = { node: a, port: ap };
  }

  /** The DR path to probe the far side of node `idx` port `p`, or undefined when it is not to be
   * probed (linked from the other side meanwhile, or the health hook says so). Throws
   * DiscoveryError past MAX_HOPS. */
  probePath(idx: number, p: number): number[] | undefined {
    if (this.fabric.nodes[idx]!.ports[p]!.peer) return undefined; // linked from the other side meanwhile
    if (this.opts.skipProbe?.(this.fabric.nodes[idx]!.guid, p)) return undefined; // health hook
    const path = this.nodes[idx]!.path.concat(p); // (concat: an array of its length; a spread leaves room for ~17)
    if (path.length > MAX_HOPS) throw new DiscoveryError(`fabric deeper than ${MAX_HOPS} hops at node 0x${this.fabric.nodes[idx]!.guid.toString(16)}`);
    return path;
  }

  /** A probe of node `idx` port `p` (at `path`) got no NodeInfo: that link is left out. */
  probeFailed(idx: number, p: number, path: readonly number[], error: unknown): void {
    this.opts.onSkip?.({ kind: 'link', guid: this.fabric.nodes[idx]!.guid, desc: this.fabric.nodes[idx]!.desc, port: p, lid: this.nodeLid(idx), path, error });
  }

  /** What a probe's NodeInfo `ni` says: a newly found node's index, or undefined (a known node
   * linked, a duplicate left out); a promise for a further port of a known CA (its PortInfo read,
   * never rejected: a failure leaves the CA out). */
  probed(idx: number, p: number, path: number[], depth: number, ni: NodeInfo): number | undefined | Promise<void> {
    if (this.fabric.nodes[idx]!.ports[p]!.peer) return undefined;
    const known = this.byGuid.get(ni.nodeGuid);
    const rp = ni.localPortNum;
    if (known === undefined) {
      const nidx = this.addNode(ni, path, depth);
      this.link(idx, p, nidx, rp);
      return nidx;
    }
    const kn = this.fabric.nodes[known]!;
    // The port it answered through is linked elsewhere already: another node with the same GUID.
    const there = kn.ports[rp]?.peer;
    if (there && (there.node !== idx || there.port !== p)) {
      this.opts.onSkip?.({ kind: 'duplicate', guid: ni.nodeGuid, desc: kn.desc, port: rp, lid: this.nodeLid(known), path, first: this.nodes[known]!.path, error: new DiscoveryError(`two nodes answer with GUID ${formatGuid(ni.nodeGuid)}`) });
      return undefined;
    }
    if (kn.type === NodeType.Switch) {
      if (!kn.ports[rp]!.peer) this.link(idx, p, known, rp);
      return undefined;
    }
    // A further port of a known CA/router.
    if (!kn.ports[rp]) {
      kn.ports[rp] = newPort(rp, ni.portGuid);
      this.nodes[known]!.portPaths[rp] = path;
      this.link(idx, p, known, rp);
      return getPortInfo(this.smp, path, rp, keepPortInfo, undefined, this.knownExt(ni.portGuid)).then(
        (pi) => this.applyPortInfo(known, rp, pi),
        (error: unknown) => {
          this.skipped.add(known); // a CA port we cannot read: the CA waits for the next sweep
          this.opts.onSkip?.({ kind: 'node', guid: kn.guid, desc: kn.desc, lid: this.nodeLid(known), path, error });
        },
      );
    }
    if (!kn.ports[rp]!.peer) this.link(idx, p, known, rp);
    return undefined;
  }

  /** A CA or router that could not be read: left out of this sweep, named. */
  skipNode(idx: number, path: readonly number[], error: unknown): void {
    this.skipped.add(idx);
    const n = this.fabric.nodes[idx]!;
    this.opts.onSkip?.({ kind: 'node', guid: n.guid, desc: n.desc, lid: this.nodeLid(idx), path, error });
  }

  /** Probe the far side of node `idx` port `p` (the promise path); returns a newly found node
   * index, if any. */
  private async probe(idx: number, p: number, depth: number): Promise<number | undefined> {
    const path = this.probePath(idx, p);
    if (!path) return undefined;
    let ni: NodeInfo;
    try {
      ni = await this.getNodeInfo(path);
    } catch (error) {
      this.probeFailed(idx, p, path, error);
      return undefined;
    }
    const x = this.probed(idx, p, path, depth, ni);
    if (typeof x === 'object') await x;
    return typeof x === 'number' ? x : undefined;
  }

  /** Probe every port of `toProbe[k]` of `level[k]`, PROBES_IN_PROGRESS at a time; resolves with
   * the nodes found (in the order their answers came). Through the client's callback slot where
   * it has one (no promise, async frame or closure per probe), else through probe(). Rejects with
   * the first error (a fabric too deep) once the probes in flight are in. */
  private probeLevel(level: readonly number[], toProbe: readonly (readonly number[])[], depth: number): Promise<number[]> {
    const next: number[] = [];
    const smp = this.smp;
    if (!smp.getDrTo) {
      const probe = (idx: number, p: number): Promise<void> => this.probe(idx, p, depth).then((found) => void (found !== undefined && next.push(found)));
      return pump(
        (function* () {
          for (let k = 0; k < level.length; k++) for (const p of toProbe[k]!) yield () => probe(level[k]!, p);
        })(),
        PROBES_IN_PROGRESS,
      ).then(() => next);
    }
    return probeOnSlot(this, level, toProbe, depth, PROBES_IN_PROGRESS);
  }

  /** The BFS from the SM's node (index 0), level by level. */
  async bfs(sent0: number): Promise<void> {
    const readNode = (idx: number): Promise<number[]> => this.readNode(idx);
    let frontier = [0];
    let depth = 0;
    while (frontier.length) {
      // A BFS level is read and probed a bounded number of nodes and ports at a time (util/pump):
      // starting all of a level's SMPs at once kept ~24k requests, promises and closures alive at
      // 11,664 hosts, and every scavenge copied them (GC was 27 % of the discovery).
      const level = frontier;
      const toProbe: (readonly number[])[] = new Array<readonly number[]>(level.length).fill(NO_PORTS); // a CA's stays so (readCasOnSlot)
      const nodes = this.fabric.nodes;
      const reads = (switches: boolean) =>
        (function* () {
          for (let k = 0; k < level.length; k++) if ((nodes[level[k]!]!.type === NodeType.Switch) === switches) yield () => readNode(level[k]!).then((ps) => void (toProbe[k] = ps));
        })();
      await Promise.all([pump(reads(true), NODE_READS_IN_PROGRESS), this.smp.getDrTo && depth > 0 ? readCasOnSlot(this, level, CA_READS_IN_PROGRESS) : pump(reads(false), CA_READS_IN_PROGRESS)]);
      const next = await this.probeLevel(level, toProbe, depth + 1);
      this.opts.onProgress?.({
        depth,
        nodes: this.fabric.nodes.length,
        switches: this.fabric.nodes.filter((n) => n.type === NodeType.Switch).length,
        smps: this.smp.sent - sent0,
      });
      frontier = next.sort((a, b) => a - b);
      depth++;
    }
  }
}

/** A port as discovery fills it in, every field there from the start (one object shape, the
 * fields in the object: no property store added per port as the sweep fills them). */
function newPort(num: number, guid: bigint): FabricPort {
  return { num, guid, peer: undefined, width: undefined, speed: undefined, lid: undefined, lmc: undefined };
}

/** Every job settled; rejects with the first failure (after all settled, so none is left
 * running into the next BFS level). */
async function settleAll(jobs: Promise<unknown>[]): Promise<void> {
  const rs = await Promise.allSettled(jobs);
  for (const r of rs) if (r.status === 'rejected') throw r.reason;
}

/** The fabric without the nodes in `out` (and without the links to them). Node 0 stays first. */
function leaveOut(fabric: Fabric, nodes: DiscoveredNode[], out: ReadonlySet<number>): { fabric: Fabric; nodes: DiscoveredNode[] } {
  const idx = new Map<number, number>();
  const fnodes: FabricNode[] = [];
  const dnodes: DiscoveredNode[] = [];
  fabric.nodes.forEach((n, i) => {
    if (out.has(i)) return;
    idx.set(i, fnodes.length);
    fnodes.push(n);
    dnodes.push(nodes[i]!);
  });
  for (const n of fnodes) {
    for (const p of n.ports) {
      if (!p?.peer) continue;
      const to = idx.get(p.peer.node);
      if (to === undefined) delete p.peer;
      else p.peer = { node: to, port: p.peer.port };
    }
  }
  return { fabric: { ...fabric, nodes: fnodes }, nodes: dnodes };
}

/** Renumber by node GUID and recompute every DR path and depth from the SM's node, so the result
 * does not depend on which answer arrived first (see the module comment). */
export function canonicalize(fabric: Fabric, nodes: DiscoveredNode[], smOld: number, smPort: number): { fabric: Fabric; nodes: DiscoveredNode[]; smNode: number; maxDepth: number } {
  const n = fabric.nodes.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => {
    const ga = fabric.nodes[a]!.guid;
    const gb = fabric.nodes[b]!.guid;
    return ga < gb ? -1 : ga > gb ? 1 : 0;
  });
  const newIdx = new Array<number>(n);
  order.forEach((old, i) => (newIdx[old] = i));
  const fnodes = order.map((old) => fabric.nodes[old]!);
  for (const fn of fnodes) for (const p of fn.ports) if (p?.peer) p.peer = { node: newIdx[p.peer.node]!, port: p.peer.port };
  const dnodes = order.map((old) => nodes[old]!);
  const smNode = newIdx[smOld]!;

  // Breadth-first from the SM's node; the queue holds nodes in the lexicographic order of their
  // paths, so the first path found to a node or port is the smallest of the shortest ones.
  const found = new Array<boolean>(n).fill(false);
  const paths: number[][] = new Array(n);
  const depths = new Array<number>(n).fill(0);
  const entries = new Array<number>(n).fill(0);
  const portPaths: (number[] | undefined)[][] = fnodes.map((fn) => new Array(fn.numPorts + 1)); // sized as addNode's
  const sm = fnodes[smNode]!;
  const smSwitch = sm.type === NodeType.Switch;
  found[smNode] = true;
  paths[smNode] = [];
  entries[smNode] = smPort;
  portPaths[smNode]![smSwitch ? 0 : smPort] = [];
  const up = (i: number, p: number): boolean => (dnodes[i]!.portInfo[p]?.portState ?? PortState.Down) >= PortState.Init;
  const queue = [smNode];
  for (let h = 0; h < queue.length; h++) {
    const u = queue[h]!;
    const un = fnodes[u]!;
    // SMPs leave a CA/router only by the SM's own port; only switches forward.
    const exits = un.type === NodeType.Switch ? Array.from({ length: un.numPorts }, (_, k) => k + 1) : u === smNode ? [smPort] : [];
    for (const p of exits) {
      const peer = un.ports[p]?.peer;
      if (!peer || !up(u, p)) continue;
      const v = peer.node;
      const path = paths[u]!.concat(p);
      const vSwitch = fnodes[v]!.type === NodeType.Switch;
      if (!vSwitch && !portPaths[v]![peer.port]) portPaths[v]![peer.port] = path;
      if (found[v]) continue;
      found[v] = true;
      paths[v] = path;
      depths[v] = depths[u]! + 1;
      entries[v] = peer.port;
      if (vSwitch) {
        portPaths[v]![0] = path;
        queue.push(v);
      }
    }
  }

  let maxDepth = 0;
  const out = dnodes.map((d, i): DiscoveredNode => {
    if (!found[i]) {
      // Unreachable over the links as recorded (cannot happen: discovery crossed them); keep what the sweep found.
      maxDepth = Math.max(maxDepth, d.depth);
      return d;
    }
    maxDepth = Math.max(maxDepth, depths[i]!);
    const fn = fnodes[i]!;
    const sw = fn.type === NodeType.Switch;
    const entry = entries[i]!;
    const nodeInfo = i === smNode ? d.nodeInfo : { ...d.nodeInfo, localPortNum: entry, portGuid: sw ? d.nodeInfo.portGuid : fn.ports[entry]!.guid };
    const pp = portPaths[i]!;
    // A CA port the sweep reached but this walk did not (it cannot happen either): keep the sweep's path.
    if (!sw) d.portPaths.forEach((p, k) => p && !pp[k] && (pp[k] = p));
    return { ...d, path: paths[i]!, nodeInfo, portPaths: pp, depth: depths[i]! };
  });
  return { fabric: { ...fabric, nodes: fnodes }, nodes: out, smNode, maxDepth };
}

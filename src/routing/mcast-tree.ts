/**
 * Multicast forwarding: one spanning tree per multicast group over the switches that connect its
 * member ports, turned into per-switch MulticastForwardingTable port masks. Pure: a Fabric (with
 * LIDs), the unicast forwarding tables and the groups in, masks and blocks out.
 *
 * The tree: a root switch is chosen among the switches (the smallest worst-case hop count to the
 * member switches, ties to the lowest node index), then every member switch is grafted onto the
 * tree along the unicast route toward the root's LID (the LFTs), stopping at the first switch
 * already in the tree. Each switch therefore has exactly one parent link, so the union is a tree:
 * a packet injected anywhere in it reaches every tree switch exactly once. Where the unicast route
 * is missing or would revisit a switch of the walk, the graft falls back to a shortest path toward
 * the root (BFS parents), which strictly shortens at every hop.
 *
 * A switch's mask for the MLID: its parent port, the ports down to its children (the exact link
 * each child grafted on, parallel links matter), the ports to member CAs/routers attached to it,
 * and port 0 when the switch's own port is a member. A switch forwards to every port in the mask
 * except the one the packet came in on.
 */
import { isSwitch, type Fabric } from '../model/fabric.js';
import { NO_ROUTE } from '../model/routes.js';
import type { PeerRef } from '../model/fabric.js';
import { IbsmError } from '../util/errors.js';


/** First multicast LID. */
export const MCAST_LID_BASE = 0xc000;
/** Highest multicast LID (0xffff is the permissive LID). */
export const MCAST_LID_MAX = 0xfffe;
/** MLIDs per MFT block. */
export const MFT_BLOCK_MLIDS = 32;
/** Ports per MFT position. */
export const MFT_POSITION_PORTS = 16;
/** One group as the MFT computation needs it. */
export interface McastGroupPorts {
  mlid: number;
  /** Member end ports (CA/router ports, or a switch's port 0). Duplicates are ignored. */
  members: readonly PeerRef[];
}

export interface McastTree {
  mlid: number;
  /** Root switch (node index); undefined when no member is attached to a switch. */
  root: number | undefined;
  /** Switch node index → parent switch node index (root absent). */
  parent: Map<number, number>;
  /** Switch node index → port mask (bit n = port n). */
  masks: Map<number, bigint>;
}

export interface MftPlan {
  /** Switch node index → (MLID → port mask). Switches without any group are absent. */
  bySwitch: Map<number, Map<number, bigint>>;
  trees: Map<number, McastTree>;
  /** Members that could not be connected (not attached to a switch, unknown port). */
  notes: string[];
}

export class MftError extends IbsmError {
  override readonly name = 'MftError';
}

// ---------------------------------------------------------------- trees

interface SwitchGraph {
  /** node index → list of [local port, peer switch node, peer port] */
  adj: Map<number, Array<[number, number, number]>>;
}

function switchGraph(fabric: Fabric): SwitchGraph {
  const adj = new Map<number, Array<[number, number, number]>>();
  fabric.nodes.forEach((n, ni) => {
    if (!isSwitch(n)) return;
    const list: Array<[number, number, number]> = [];
    n.ports.forEach((p, pi) => {
      if (!p?.peer || pi === 0) return;
      const peer = fabric.nodes[p.peer.node];
      if (peer && isSwitch(peer) && p.peer.node !== ni) list.push([pi, p.peer.node, p.peer.port]);
    });
    adj.set(ni, list);
  });
  return { adj };
}

/** BFS hop distances from `src` over switch links (-1 unreachable), cached per call. */
class Distances {
  private readonly cache = new Map<number, Int32Array>();
  constructor(
    private readonly g: SwitchGraph,
    private readonly nNodes: number,
  ) {}
  from(src: number): Int32Array {
    let d = this.cache.get(src);
    if (d) return d;
    d = new Int32Array(this.nNodes).fill(-1);
    d[src] = 0;
    const q = [src];
    for (let h = 0; h < q.length; h++) {
      const s = q[h]!;
      for (const [, t] of this.g.adj.get(s) ?? []) {
        if (d[t] === -1) {
          d[t] = d[s]! + 1;
          q.push(t);
        }
      }
    }
    this.cache.set(src, d);
    return d;
  }
}

/** Where a member port is delivered: the switch and its out port (0 for the switch's own port). */
function attachment(fabric: Fabric, m: PeerRef): PeerRef | undefined {
  const n = fabric.nodes[m.node];
  if (!n) return undefined;
  if (isSwitch(n)) return m.port === 0 ? { node: m.node, port: 0 } : undefined;
  const peer = n.ports[m.port]?.peer;
  if (!peer) return undefined;
  const pn = fabric.nodes[peer.node];
  return pn && isSwitch(pn) ? { node: peer.node, port: peer.port } : undefined;
}

const MAX_ROOT_SAMPLES = 64;

function chooseRoot(memberSwitches: number[], switches: number[], dist: Distances): number | undefined {
  // Sample at most MAX_ROOT_SAMPLES member switches (evenly) to bound the BFS work.
  const sorted = [...memberSwitches].sort((a, b) => a - b);
  const step = Math.max(1, Math.ceil(sorted.length / MAX_ROOT_SAMPLES));
  const samples = sorted.filter((_, i) => i % step === 0);
  const tables = samples.map((s) => dist.from(s));
  let best: number | undefined;
  let bestMax = Infinity;
  let bestSum = Infinity;
  for (const s of switches) {
    let mx = 0;
    let sum = 0;
    let ok = true;
    for (const t of tables) {
      const d = t[s]!;
      if (d < 0) {
        ok = false;
        break;
      }
      if (d > mx) mx = d;
      sum += d;
    }
    if (!ok) continue;
    if (mx < bestMax || (mx === bestMax && sum < bestSum)) {
      best = s;
      bestMax = mx;
      bestSum = sum;
    }
  }
  return best;
}

type Lfts = ReadonlyMap<number, Uint8Array>;

/** Build one group's tree. */
export function buildTree(fabric: Fabric, lfts: Lfts | undefined, group: McastGroupPorts, notes: string[] = [], ctx?: { g: SwitchGraph; dist: Distances; switches: number[] }): McastTree {
  const g = ctx?.g ?? switchGraph(fabric);
  const dist = ctx?.dist ?? new Distances(g, fabric.nodes.length);
  const switches = ctx?.switches ?? [...g.adj.keys()];
  const tree: McastTree = { mlid: group.mlid, root: undefined, parent: new Map(), masks: new Map() };
  const delivery = new Map<number, Set<number>>();
  for (const m of group.members) {
    const at = attachment(fabric, m);
    if (!at) {
      notes.push(`MLID 0x${group.mlid.toString(16)}: member node ${m.node} port ${m.port} is not attached to a switch; not in the tree`);
      continue;
    }
    let set = delivery.get(at.node);
    if (!set) delivery.set(at.node, (set = new Set()));
    set.add(at.port);
  }
  if (delivery.size === 0) return tree;
  const memberSwitches = [...delivery.keys()];
  const root = chooseRoot(memberSwitches, switches, dist);
  if (root === undefined) {
    notes.push(`MLID 0x${group.mlid.toString(16)}: member switches are not all connected; no tree`);
    return tree;
  }
  tree.root = root;
  const rootLid = fabric.nodes[root]!.ports[0]?.lid ?? 0;
  const dRoot = dist.from(root);
  const inTree = new Set<number>([root]);
  /** node → [port to parent, parent node, parent's port to this node] */
  const up = new Map<number, [number, number, number]>();

  const viaLft = (s: number): [number, number, number] | undefined => {
    if (!lfts || !rootLid) return undefined;
    const lft = lfts.get(s);
    const out = lft && rootLid < lft.length ? lft[rootLid]! : NO_ROUTE;
    if (out === NO_ROUTE || out === 0) return undefined;
    return g.adj.get(s)?.find((e) => e[0] === out);
  };
  const viaBfs = (s: number): [number, number, number] | undefined => {
    const ds = dRoot[s]!;
    let best: [number, number, number] | undefined;
    for (const e of g.adj.get(s) ?? []) if (dRoot[e[1]] === ds - 1 && (!best || e[0] < best[0])) best = e;
    return best;
  };

  // Graft the farthest member switches first: their paths form the trunk the others join.
  const order = memberSwitches.sort((a, b) => dRoot[b]! - dRoot[a]! || a - b);
  for (const ms of order) {
    if (inTree.has(ms)) continue;
    let walk = graft(ms, viaLft, inTree);
    if (!walk) walk = graft(ms, viaBfs, inTree);
    if (!walk) {
      notes.push(`MLID 0x${group.mlid.toString(16)}: switch ${ms} cannot reach root ${root}; its members are not in the tree`);
      continue;
    }
    for (const [s, e] of walk) {
      inTree.add(s);
      up.set(s, e);
      tree.parent.set(s, e[1]);
    }
  }

  const addPort = (s: number, p: number): void => {
    tree.masks.set(s, (tree.masks.get(s) ?? 0n) | (1n << BigInt(p)));
  };
  for (const s of inTree) tree.masks.set(s, 0n);
  for (const [s, [port, parent, parentPort]] of up) {
    addPort(s, port);
    addPort(parent, parentPort);
  }
  for (const [s, ports] of delivery) {
    if (!inTree.has(s)) continue;
    for (const p of ports) addPort(s, p);
  }
  for (const [s, m] of tree.masks) if (m === 0n) tree.masks.delete(s);
  return tree;
}

/** Walk from `start` toward the tree; returns the new switches with their up links, or undefined when the walk fails. */
function graft(start: number, next: (s: number) => [number, number, number] | undefined, inTree: ReadonlySet<number>): Array<[number, [number, number, number]]> | undefined {
  const walk: Array<[number, [number, number, number]]> = [];
  const seen = new Set<number>([start]);
  let s = start;
  while (!inTree.has(s)) {
    const e = next(s);
    if (!e || seen.has(e[1])) return undefined;
    walk.push([s, e]);
    seen.add(e[1]);
    s = e[1];
  }
  return walk;
}

/**
 * Trees and per-switch masks for every group. `lfts` are the unicast tables (switch node index →
 * LFT indexed by LID, as RoutingResult.lfts); without them every graft uses shortest paths.
 */
export function computeMfts(fabric: Fabric, lfts: Lfts | undefined, groups: readonly McastGroupPorts[]): MftPlan {
  const g = switchGraph(fabric);
  const ctx = { g, dist: new Distances(g, fabric.nodes.length), switches: [...g.adj.keys()] };
  const plan: MftPlan = { bySwitch: new Map(), trees: new Map(), notes: [] };
  for (const grp of groups) {
    if (!Number.isInteger(grp.mlid) || grp.mlid < MCAST_LID_BASE || grp.mlid > MCAST_LID_MAX) {
      throw new MftError(`MLID 0x${grp.mlid.toString(16)} is outside the multicast range 0xc000..0xfffe`);
    }
    const t = buildTree(fabric, lfts, grp, plan.notes, ctx);
    plan.trees.set(grp.mlid, t);
    for (const [s, m] of t.masks) {
      let per = plan.bySwitch.get(s);
      if (!per) plan.bySwitch.set(s, (per = new Map()));
      per.set(grp.mlid, (per.get(grp.mlid) ?? 0n) | m);
    }
  }
  return plan;
}

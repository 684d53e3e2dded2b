/** The fabric's health state (issue #33): the ports and nodes the SM holds isolated, each with its
 * reason, class, source and since when, and the last comparison's mismatches. Pure: the next state
 * from the last one and what a sweep found; the sweep's health phase (sm/health-phase.ts) applies
 * it. Isolation is one mechanism for every source: the expected topology here ('topology'); the
 * unhealthy-port policies and manual isolate/release add isolations of their own sources, which a
 * topology comparison leaves alone.
 *
 * An isolated link is not brought to ACTIVE and is left out of routing: the sweep's view has it
 * unlinked (`cutIsolated`), so routing does not use it and the PortInfo planner does not arm it
 * (it stays in INIT, where the SM still sees both ends and compares them every sweep); one that is
 * already ARMED or ACTIVE is taken Down once (the link retrains and comes back in INIT, held
 * there). An isolated node is all its links isolated, and it is left out of the view the sweep
 * plans over (`withoutNodes`: not routed, not programmed, not in the snapshot). */
import { NodeType, PortState } from '../wire/mad.js';
import { cloneFabric } from '../model/fabric.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import { mismatchText, type Mismatch, type MismatchEnd } from '../model/topology-compare.js';
import type { Isolation, TopologyActions } from '../model/topology-classes.js';
import { pathsAround } from './health-paths.js';

export type { Isolation } from '../model/topology-classes.js';

export { DEFAULT_TOPOLOGY_ACTIONS, HEALTH_ACTIONS, parseTopologyActions, type HealthAction, type TopologyActions } from '../model/topology-classes.js';

export interface HealthState {
  /** The last comparison's mismatches (those whose class is not ignored). */
  mismatches: readonly Mismatch[];
  isolated: readonly Isolation[];
}

export const EMPTY_HEALTH: HealthState = { mismatches: [], isolated: [] };

const portKey = (e: MismatchEnd): string => `${e.guid.toString(16)}/${e.port}`;
/** A link's key, the same whichever end comes first; a node's is its GUID. */
export function isolationKey(a: MismatchEnd, b?: MismatchEnd): string {
  if (!b) return a.guid.toString(16);
  const [x, y] = [portKey(a), portKey(b)].sort();
  return `${x}-${y}`;
}

/** What changed from one state to the next (the health phase logs and signals these). */
export interface HealthChange {
  state: HealthState;
  /** Mismatches not in the last state, and those gone. */
  found: Mismatch[];
  gone: Mismatch[];
  isolated: Isolation[];
  released: Isolation[];
}

const mismatchKey = (m: Mismatch): string => `${m.cls} ${mismatchText(m)}`;

/** The next state: `mismatches` (the new comparison) through the actions; the topology's
 * isolations are those of the isolate classes (kept with their `since`), the others' kept. */
export function nextHealth(prev: HealthState, mismatches: readonly Mismatch[], actions: TopologyActions, now: number): HealthChange {
  const shown = mismatches.filter((m) => actions[m.cls] !== 'ignore');
  const before = new Map(prev.isolated.map((i) => [i.key, i]));
  const topo = new Map<string, Isolation>();
  for (const m of shown) {
    if (actions[m.cls] !== 'isolate' || !m.at) continue; // nothing there to isolate (missing-*)
    const key = isolationKey(m.a, m.b);
    const was = before.get(key);
    topo.set(key, { key, kind: m.b ? 'link' : 'node', a: m.a, b: m.b, cls: m.cls, source: 'topology', reason: mismatchText(m), since: was?.source === 'topology' ? was.since : now });
  }
  const others = prev.isolated.filter((i) => i.source !== 'topology' && !topo.has(i.key));
  const isolated = [...others, ...topo.values()];
  const prevM = new Set(prev.mismatches.map(mismatchKey));
  const nowM = new Set(shown.map(mismatchKey));
  return {
    state: { mismatches: shown, isolated },
    found: shown.filter((m) => !prevM.has(mismatchKey(m))),
    gone: prev.mismatches.filter((m) => !nowM.has(mismatchKey(m))),
    isolated: [...topo.values()].filter((i) => !before.has(i.key)),
    released: prev.isolated.filter((i) => i.source === 'topology' && !topo.has(i.key)),
  };
}

/** The ports (`node:port` indices of `disc`) an isolation list holds: both ends of each isolated
 * link, every linked port of an isolated node and the ports facing it. The SM's own node is never
 * isolated, nor a CA's SM port's link (it would cut the SM off the fabric). */
export function isolatedPorts(disc: DiscoveryResult, isolated: readonly Isolation[]): Set<string> {
  const out = new Set<string>();
  if (!isolated.length) return out;
  const byGuid = new Map<bigint, number>();
  disc.fabric.nodes.forEach((n, i) => byGuid.set(n.guid, i));
  const add = (node: number, port: number): void => {
    const p = disc.fabric.nodes[node]?.ports[port];
    if (!p?.peer || port === 0) return;
    if (disc.fabric.nodes[disc.smNode]!.type !== NodeType.Switch && (node === disc.smNode || p.peer.node === disc.smNode)) return;
    out.add(`${node}:${port}`);
    out.add(`${p.peer.node}:${p.peer.port}`);
  };
  for (const i of isolated) {
    const a = byGuid.get(i.a.guid);
    if (a === undefined || a === disc.smNode) continue;
    if (i.kind === 'node') disc.fabric.nodes[a]!.ports.forEach((_, pn) => add(a, pn));
    else {
      const peer = disc.fabric.nodes[a]!.ports[i.a.port]?.peer;
      const b = i.b ? byGuid.get(i.b.guid) : undefined;
      if (peer && peer.node === b && peer.port === i.b!.port) add(a, i.a.port);
    }
  }
  return out;
}

/** `disc` with the links of `ports` unlinked (a copy; `disc` is not changed): what routing and the
 * PortInfo planner see. The same object when nothing is isolated. */
export function cutIsolated(disc: DiscoveryResult, ports: ReadonlySet<string>): DiscoveryResult {
  if (!ports.size) return disc;
  const fabric = cloneFabric(disc.fabric);
  for (const k of ports) {
    const [node, port] = k.split(':').map(Number) as [number, number];
    const p = fabric.nodes[node]?.ports[port];
    if (p) p.peer = undefined;
  }
  return { ...disc, fabric, nodes: pathsAround(disc, fabric, ports) };
}

/** The isolated nodes of `isolated` (indices of `disc`; never the SM's own). */
export function isolatedNodes(disc: DiscoveryResult, isolated: readonly Isolation[]): Set<number> {
  const out = new Set<number>();
  if (!isolated.some((i) => i.kind === 'node')) return out;
  const byGuid = new Map<bigint, number>();
  disc.fabric.nodes.forEach((n, i) => byGuid.set(n.guid, i));
  for (const i of isolated) {
    const n = i.kind === 'node' ? byGuid.get(i.a.guid) : undefined;
    if (n !== undefined && n !== disc.smNode) out.add(n);
  }
  return out;
}

/** One port of each isolated link that is ARMED or ACTIVE (a PortState Down Set on one end takes
 * the link down: both ends retrain to INIT), on a node that is not dropped; INIT ones are held. */
export function portsToTakeDown(disc: DiscoveryResult, ports: ReadonlySet<string>, drop: ReadonlySet<number> = new Set()): Array<{ node: number; port: number }> {
  const out: Array<{ node: number; port: number }> = [];
  const done = new Set<string>();
  const armed = (node: number, port: number): boolean => (disc.nodes[node]?.portInfo[port]?.portState ?? PortState.Down) >= PortState.Armed;
  for (const k of ports) {
    const [node, port] = k.split(':').map(Number) as [number, number];
    const peer = disc.fabric.nodes[node]?.ports[port]?.peer;
    if (done.has(k) || drop.has(node) || !armed(node, port)) continue;
    done.add(k);
    if (peer) done.add(`${peer.node}:${peer.port}`);
    out.push({ node, port });
  }
  return out;
}

/** `disc` without the nodes of `drop`, the others renumbered in their order (their links to the
 * dropped nodes cut): routing and the planners never see an isolated node (a switch left in the
 * view without links would be a fabric no tree engine applies to). `index`: old → new (-1: dropped). */
export function withoutNodes(disc: DiscoveryResult, drop: ReadonlySet<number>): { disc: DiscoveryResult; index: Int32Array } {
  const index = new Int32Array(disc.fabric.nodes.length);
  let k = 0;
  for (let i = 0; i < index.length; i++) index[i] = drop.has(i) ? -1 : k++;
  if (!drop.size) return { disc, index };
  const keep = (_: unknown, i: number): boolean => !drop.has(i);
  const nodes = disc.fabric.nodes.filter(keep).map((n) => ({
    ...n,
    ports: n.ports.map((p) => {
      if (!p?.peer) return p;
      const to = index[p.peer.node]!;
      return { ...p, peer: to < 0 ? undefined : { node: to, port: p.peer.port } };
    }),
  }));
  return { disc: { ...disc, fabric: { nodes }, nodes: disc.nodes.filter(keep), smNode: index[disc.smNode]! }, index };
}

/** `disc` (a local sweep's view, built on a snapshot that had them cut) with the isolated links
 * re-linked whose two ports are present, unlinked and not reported Down: the comparison must see
 * the fabric as it is, not as the SM routes it. A copy where any is re-linked. */
export function restoreIsolated(disc: DiscoveryResult, isolated: readonly Isolation[]): DiscoveryResult {
  if (!isolated.some((i) => i.kind === 'link')) return disc;
  disc = { ...disc, fabric: cloneFabric(disc.fabric) };
  const byGuid = new Map<bigint, number>();
  disc.fabric.nodes.forEach((n, i) => byGuid.set(n.guid, i));
  const up = (n: number, p: number): boolean => (disc.nodes[n]?.portInfo[p]?.portState ?? PortState.Down) >= PortState.Init;
  for (const i of isolated) {
    if (i.kind !== 'link' || !i.b) continue;
    const a = byGuid.get(i.a.guid);
    const b = byGuid.get(i.b.guid);
    if (a === undefined || b === undefined) continue;
    const pa = disc.fabric.nodes[a]!.ports[i.a.port];
    const pb = disc.fabric.nodes[b]!.ports[i.b.port];
    if (!pa || !pb || pa.peer || pb.peer || !up(a, i.a.port) || !up(b, i.b.port)) continue;
    pa.peer = { node: b, port: i.b.port };
    pb.peer = { node: a, port: i.a.port };
  }
  return disc;
}

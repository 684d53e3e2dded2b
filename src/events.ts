/** The events of a running SM+SA (Subnet.events), their payloads, and the pure diff of two
 * snapshots that yields the topology and port-state events. */
import type { ReadonlySnapshot, Snapshot } from './model/snapshot.js';
import type { Fabric } from './model/fabric.js';
import type { SweepStats } from './sm/sweep.js';
import type { Transition } from './sm/controller.js';
import type { NoticeSmp } from './wire/notice.js';
import { NodeType, PortState } from './wire/mad.js';
import type { Mismatch, MismatchEnd } from './model/topology-compare.js';
import type { HealthChange, Isolation } from './sm/health-state.js';

/** A node by GUID, with its NodeDescription. */
export interface NodeRef {
  guid: bigint;
  description: string;
  type: 'switch' | 'ca' | 'router';
}

/** A port: its node (GUID, description), number, port GUID and base LID where it has one. */
export interface PortRef {
  nodeGuid: bigint;
  nodeDescription: string;
  portNum: number;
  portGuid: bigint;
  lid?: number;
}

export interface LinkRef {
  a: PortRef;
  b: PortRef;
}

export interface TopologyChange {
  /** Heavy sweep number of the new snapshot. */
  sweep: number;
  nodesAdded: NodeRef[];
  nodesRemoved: NodeRef[];
  /** Physical ports (of nodes present before and after) that gained or lost their link, and the
   * ports of added/removed nodes. */
  portsAdded: PortRef[];
  portsRemoved: PortRef[];
  linksAdded: LinkRef[];
  linksRemoved: LinkRef[];
}

export type PortStateName = 'NoChange' | 'Down' | 'Init' | 'Armed' | 'Active';
const STATE_NAMES: Record<number, PortStateName> = { [PortState.NoChange]: 'NoChange', [PortState.Down]: 'Down', [PortState.Init]: 'Init', [PortState.Armed]: 'Armed', [PortState.Active]: 'Active' };

export interface PortStateChange {
  port: PortRef;
  from: PortStateName;
  to: PortStateName;
  sweep: number;
}

export interface SaRequestServed {
  /** SA attribute name (PathRecord, MCMemberRecord, ...) or its hex ID. */
  attribute: string;
  attrId: number;
  method: number;
  /** Requester LID. */
  lid: number;
  /** MAD/SA status of the answer (0: records sent). */
  status: number;
}

export interface MulticastGroupEvent {
  mgid: bigint;
  mlid: number;
}

/** Every event and its payload. */
export interface SubnetEvents {
  /** The first heavy sweep as master completed (the log line SUBNET UP). */
  subnetUp: { stats: SweepStats; snapshot: ReadonlySnapshot };
  /** A sweep finished (heavy or light), with its figures. */
  sweep: SweepStats;
  /** A heavy sweep found nodes, ports or links that came or went since the previous one. */
  topologyChanged: TopologyChange;
  /** A port's state differs from the previous heavy sweep's. */
  portStateChanged: PortStateChange;
  /** A trap (Notice) reached the SM. */
  trap: NoticeSmp;
  /** The SM's SMInfo state changed (NOTACTIVE, DISCOVERING, STANDBY, MASTER). */
  smStateChanged: Transition;
  multicastGroupCreated: MulticastGroupEvent;
  multicastGroupDeleted: MulticastGroupEvent;
  /** The SA answered a request. */
  saRequest: SaRequestServed;
  /** A configuration reload (SIGHUP, `ibsm reload`, `IbsmSm.reload`): applied (the settings
   * changed live, those that need a restart), or refused with the error (file:line) and the
   * running configuration kept. */
  configReload: ConfigReload;
  /** Vports came or went (a heavy sweep, or a light sweep's vport pass: docs/vports.md). */
  vportsChanged: VPortChange;
  /** The fabric's health changed (issue #33): mismatches with the expected topology found or
   * gone, links or nodes isolated or released. */
  healthChanged: HealthChanged;
}

/** One end of a mismatch or an isolation: a node (port 0) or a port. */
export interface HealthEnd {
  guid: bigint;
  description: string;
  port: number;
}
export interface HealthMismatch {
  /** missing-node, extra-node, missing-link, extra-link, wrong-port, guid-changed, width, speed. */
  class: string;
  a: HealthEnd;
  b?: HealthEnd;
  expected: string;
  found: string;
}
export interface HealthIsolation {
  kind: 'node' | 'link';
  class: string;
  /** 'topology', or the policy or operator that holds it. */
  source: string;
  reason: string;
  /** When it was isolated (the SM's clock, ms). */
  since: number;
  a: HealthEnd;
  b?: HealthEnd;
}
export interface HealthChanged {
  found: HealthMismatch[];
  gone: HealthMismatch[];
  isolated: HealthIsolation[];
  released: HealthIsolation[];
  /** The state after the change: mismatches shown (not ignored) and isolations held. */
  mismatches: number;
  isolatedNow: number;
}

const healthEnd = (e: MismatchEnd): HealthEnd => ({ guid: e.guid, description: e.desc, port: e.port });
export function healthMismatchOf(m: Mismatch): HealthMismatch {
  return { class: m.cls, a: healthEnd(m.a), ...(m.b ? { b: healthEnd(m.b) } : {}), expected: m.expected, found: m.found };
}
export function healthIsolationOf(i: Isolation): HealthIsolation {
  return { kind: i.kind, class: i.cls, source: i.source, reason: i.reason, since: i.since, a: healthEnd(i.a), ...(i.b ? { b: healthEnd(i.b) } : {}) };
}
/** The event of a health state change (sm/health-state.ts nextHealth). */
export function healthChangeOf(c: HealthChange): HealthChanged {
  return { found: c.found.map(healthMismatchOf), gone: c.gone.map(healthMismatchOf), isolated: c.isolated.map(healthIsolationOf), released: c.released.map(healthIsolationOf), mismatches: c.state.mismatches.length, isolatedNow: c.state.isolated.length };
}

export type ConfigReload = { ok: true; applied: string[]; restartNeeded: string[] } | { ok: false; error: string };

export { TypedEmitter } from './util/typed-emitter.js';

function kindOf(t: number): NodeRef['type'] {
  return t === NodeType.Switch ? 'switch' : t === NodeType.Router ? 'router' : 'ca';
}

function portRef(f: Fabric, node: number, port: number): PortRef {
  const n = f.nodes[node]!;
  const p = n.ports[port]!;
  // A switch's ports share its LID (port 0's).
  const lid = n.type === NodeType.Switch ? n.ports[0]?.lid : p.lid;
  return { nodeGuid: n.guid, nodeDescription: n.desc, portNum: port, portGuid: p.guid, ...(lid ? { lid } : {}) };
}

const key = (guid: bigint, port: number): string => `${guid}/${port}`;

/** What came and went between two snapshots, matched by node GUID and port number. */
export function diffTopology(prev: Snapshot, next: Snapshot): TopologyChange {
  const a = prev.fabric;
  const b = next.fabric;
  const nodesA = new Map(a.nodes.map((n, i) => [n.guid, i]));
  const nodesB = new Map(b.nodes.map((n, i) => [n.guid, i]));
  const ref = (f: Fabric, i: number): NodeRef => ({ guid: f.nodes[i]!.guid, description: f.nodes[i]!.desc, type: kindOf(f.nodes[i]!.type) });
  const linkSet = (f: Fabric): Map<string, LinkRef> => {
    const m = new Map<string, LinkRef>();
    f.nodes.forEach((n, ni) =>
      n.ports.forEach((p, pi) => {
        if (!p?.peer) return;
        const x = key(n.guid, pi);
        const y = key(f.nodes[p.peer.node]!.guid, p.peer.port);
        if (x < y) m.set(`${x}-${y}`, { a: portRef(f, ni, pi), b: portRef(f, p.peer.node, p.peer.port) });
      }),
    );
    return m;
  };
  const linked = (f: Fabric): Map<string, PortRef> => {
    const m = new Map<string, PortRef>();
    f.nodes.forEach((n, ni) => n.ports.forEach((p, pi) => p && (p.peer || pi === 0) && m.set(key(n.guid, pi), portRef(f, ni, pi))));
    return m;
  };
  const la = linkSet(a);
  const lb = linkSet(b);
  const pa = linked(a);
  const pb = linked(b);
  return {
    sweep: next.sweep,
    nodesAdded: [...nodesB].filter(([g]) => !nodesA.has(g)).map(([, i]) => ref(b, i)),
    nodesRemoved: [...nodesA].filter(([g]) => !nodesB.has(g)).map(([, i]) => ref(a, i)),
    portsAdded: [...pb].filter(([k]) => !pa.has(k)).map(([, p]) => p),
    portsRemoved: [...pa].filter(([k]) => !pb.has(k)).map(([, p]) => p),
    linksAdded: [...lb].filter(([k]) => !la.has(k)).map(([, l]) => l),
    linksRemoved: [...la].filter(([k]) => !lb.has(k)).map(([, l]) => l),
  };
}

export function isEmptyChange(c: TopologyChange): boolean {
  return !c.nodesAdded.length && !c.nodesRemoved.length && !c.portsAdded.length && !c.portsRemoved.length && !c.linksAdded.length && !c.linksRemoved.length;
}

/** Ports whose discovered PortState differs between two snapshots (ports seen in both). */
export function diffPortStates(prev: Snapshot, next: Snapshot): PortStateChange[] {
  const before = new Map<string, number>();
  prev.discovery.nodes.forEach((d, ni) => d.portInfo.forEach((pi, pn) => pi && before.set(key(prev.fabric.nodes[ni]!.guid, pn), pi.portState)));
  const out: PortStateChange[] = [];
  next.discovery.nodes.forEach((d, ni) =>
    d.portInfo.forEach((pi, pn) => {
      if (!pi || !next.fabric.nodes[ni]!.ports[pn]) return;
      const was = before.get(key(next.fabric.nodes[ni]!.guid, pn));
      if (was === undefined || was === pi.portState) return;
      out.push({ port: portRef(next.fabric, ni, pn), from: STATE_NAMES[was] ?? 'NoChange', to: STATE_NAMES[pi.portState] ?? 'NoChange', sweep: next.sweep });
    }),
  );
  return out;
}

/** A vport (SR-IOV virtual function, docs/vports.md): its HCA port, index, GUID and LID. */
export interface VPortRef {
  port: { nodeGuid: bigint; nodeDescription: string; portNum: number; portGuid: bigint };
  index: number;
  guid: bigint;
  lidRequired: boolean;
  lid?: number;
}

/** Vports that came or went (event `vportsChanged`), by a heavy sweep or a light sweep's vport pass. */
export interface VPortChange {
  added: VPortRef[];
  removed: VPortRef[];
}

/** Tracks the vports the SM knows between sweeps: `update` answers what came and went since the
 * last call (undefined: nothing). The first call reports every vport as added. */
export class VPortTracker {
  private known = new Map<bigint, VPortRef>();
  update(rows: ReadonlyArray<{ nodeGuid: bigint; nodeDesc: string; port: number; portGuid: bigint; index: number; guid: bigint; lidRequired: boolean; lid: number }>): VPortChange | undefined {
    const now = new Map<bigint, VPortRef>();
    for (const r of rows) now.set(r.guid, { port: { nodeGuid: r.nodeGuid, nodeDescription: r.nodeDesc, portNum: r.port, portGuid: r.portGuid }, index: r.index, guid: r.guid, lidRequired: r.lidRequired, ...(r.lid ? { lid: r.lid } : {}) });
    const added = [...now].filter(([g]) => !this.known.has(g)).map(([, v]) => v);
    const removed = [...this.known].filter(([g]) => !now.has(g)).map(([, v]) => v);
    this.known = now;
    return added.length || removed.length ? { added, removed } : undefined;
  }
}

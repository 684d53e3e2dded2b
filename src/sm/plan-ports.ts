/** Pure planners for ports: (the sweep's view of every port, the SM's settings) → the PortInfo
 * Sets needed. One Set per port carries LID, LMC, SM LID, timeouts, MTU, VLs, VLHighLimit, M_Key,
 * partition enforcement and INIT → ARMED; a second pass after the LFTs are in takes ARMED → ACTIVE. */
import { DEFAULT_GID_PREFIX, NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortCap, PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import type { DiscoveredNode, DiscoveryResult } from '../model/snapshot.js';
import type { FabricNode, FabricPort } from '../model/fabric.js';
import { portInfoValue } from '../model/port-info.js';
import type { SmpWrite } from './programmed.js';

/** OpenSM's defaults: HoQ lifetime toward a switch / toward an end port and VL stall count
 * (4.096 µs × 2^n codes). */
const HOQ_LIFE_SWITCH = 0x12;
const HOQ_LIFE_LEAF = 0x10;
const VL_STALL_COUNT = 7;

/** The SM's settings a port plan depends on. */
export interface PortSettings {
  lmc: number;
  smLid: number;
  gidPrefix?: bigint;
  subnetTimeout?: number;
  mkey?: bigint;
  mkeyProtectBits?: number;
  mkeyLeasePeriod?: number;
  maxOpVls?: number;
  /** HOQLife of switch ports toward switches / toward CAs and routers (defaults OpenSM's). */
  hoqLife?: number;
  leafHoqLife?: number;
  /** QoS on: VLHighLimit on every linked port (OpenSM's qos_high_limit), with the VL tables. */
  qosVl?: { highLimit: number };
  /** Set ClientReregister on every CA port that supports it (a new master whose SA does not hold
   * the clients' registrations: they must join and register again). */
  reregister?: boolean;
}

/** Does this switch port enforce partitions: it faces a CA/router and the switch can enforce. */
export function enforces(disc: DiscoveryResult, n: FabricNode, d: DiscoveredNode, p: FabricPort): boolean {
  if (n.type !== NodeType.Switch || !p.peer || !d.switchInfo) return false;
  const si = d.switchInfo;
  if (!si.partitionEnforcementCap || !si.inboundEnforcementCap || !si.outboundEnforcementCap) return false;
  return disc.fabric.nodes[p.peer.node]?.type !== NodeType.Switch;
}

/** The fields a PortInfo Set must not change (read-only, or "no change" codes). */
function asSet(cur: PortInfo): PortInfo {
  return { ...portInfoValue(cur), portPhysicalState: 0, linkDownDefaultState: 0, linkWidthEnabled: 0, linkSpeedEnabled: 0, linkSpeedExtEnabled: 0 };
}

/** The DR path of a port (a switch's ports all through the switch). */
function portPath(n: FabricNode, d: DiscoveredNode, pn: number): readonly number[] | undefined {
  return n.type === NodeType.Switch ? d.path : d.portPaths[pn];
}

/** PortInfo Sets for every port whose settings differ from what it reported. */
export function planPortInfo(disc: DiscoveryResult, s: PortSettings): SmpWrite[] {
  const { fabric, nodes } = disc;
  const out: SmpWrite[] = [];
  fabric.nodes.forEach((n, ni) => {
    const d = nodes[ni]!;
    const sw = n.type === NodeType.Switch;
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const cur = d.portInfo[pn];
      const path = portPath(n, d, pn);
      if (!cur || !path) return;
      const isEnd = !sw || pn === 0;
      if (pn !== 0 && !p.peer) return;
      if (!sw && !p.peer) return;
      const want = asSet(cur);
      want.portState = cur.portState === PortState.Init && pn !== 0 ? PortState.Armed : PortState.NoChange;
      if (isEnd) {
        want.gidPrefix = s.gidPrefix ?? DEFAULT_GID_PREFIX;
        want.lid = p.lid ?? 0;
        want.lmc = sw ? 0 : s.lmc;
        want.masterSmLid = s.smLid;
        want.subnetTimeout = s.subnetTimeout ?? 18;
        if (s.mkey !== undefined) {
          want.mkey = s.mkey;
          want.mkeyProtectBits = s.mkeyProtectBits ?? 0;
          want.mkeyLeasePeriod = s.mkeyLeasePeriod ?? 0;
        } else {
          // No M_Key of its own: the SM never raises protection. A Set of it only lands where the
          // port's key is 0 or read with protection off, so echoing protect bits from a read would
          // protect nothing from this SM, and from a corrupt read would lock the port out of it.
          want.mkeyProtectBits = 0;
        }
        want.clientReregister = s.reregister && !sw && cur.capabilityMask & PortCap.IsClientReregistrationSupported ? 1 : 0;
      }
      if (p.peer && pn !== 0) {
        const peerInfo = nodes[p.peer.node]!.portInfo[p.peer.port];
        if (peerInfo) {
          want.neighborMtu = Math.min(cur.mtuCap, peerInfo.mtuCap) || cur.neighborMtu;
          const vls = Math.min(cur.vlCap, peerInfo.vlCap, s.maxOpVls ?? 5);
          want.operationalVls = vls || cur.operationalVls;
        }
      }
      // Head-of-queue lifetime and VL stall count on switch ports, OpenSM's defaults: packets
      // toward an end port may wait less (leaf 0x10) than toward another switch (0x12).
      if (sw && pn !== 0 && p.peer) {
        want.hoqLife = fabric.nodes[p.peer.node]!.type === NodeType.Switch ? (s.hoqLife ?? HOQ_LIFE_SWITCH) : (s.leafHoqLife ?? HOQ_LIFE_LEAF);
        want.vlStallCount = VL_STALL_COUNT;
      }
      if (s.qosVl && (pn === 0 || p.peer)) want.vlHighLimit = s.qosVl.highLimit;
      // Never echo a NeighborMTU above what the port can do (the SMA would reject the whole Set).
      if (cur.mtuCap) want.neighborMtu = Math.min(want.neighborMtu || cur.mtuCap, cur.mtuCap);
      if (sw && pn !== 0) {
        const enforce = enforces(disc, n, d, p) ? 1 : 0;
        want.partitionEnforcementInbound = enforce;
        want.partitionEnforcementOutbound = enforce;
      }
      const needs =
        want.clientReregister === 1 ||
        want.partitionEnforcementInbound !== cur.partitionEnforcementInbound ||
        want.partitionEnforcementOutbound !== cur.partitionEnforcementOutbound ||
        want.portState !== PortState.NoChange ||
        (isEnd && (cur.lid !== want.lid || cur.lmc !== want.lmc || cur.masterSmLid !== want.masterSmLid || cur.subnetTimeout !== want.subnetTimeout)) ||
        (isEnd && s.mkey !== undefined && (cur.mkey !== want.mkey || cur.mkeyProtectBits !== want.mkeyProtectBits || cur.mkeyLeasePeriod !== want.mkeyLeasePeriod)) ||
        want.neighborMtu !== cur.neighborMtu ||
        want.gidPrefix !== cur.gidPrefix ||
        want.hoqLife !== cur.hoqLife ||
        want.vlStallCount !== cur.vlStallCount ||
        want.vlHighLimit !== cur.vlHighLimit ||
        want.operationalVls !== cur.operationalVls;
      if (!needs) return;
      out.push({ path, attr: SmpAttr.PortInfo, mod: portInfoMod(pn), data: PortInfo.encode(want), effect: { kind: 'portInfo', node: ni, port: pn } });
    });
  });
  return out;
}

/** ARMED → ACTIVE for every linked port that reports ARMED and whose peer is ARMED or ACTIVE (a
 * port whose peer is stuck in INIT cannot go ACTIVE: the SMA would refuse). */
export function planActivation(disc: DiscoveryResult): SmpWrite[] {
  const { fabric, nodes } = disc;
  const out: SmpWrite[] = [];
  fabric.nodes.forEach((n, ni) => {
    const d = nodes[ni]!;
    n.ports.forEach((p, pn) => {
      if (!p?.peer || pn === 0) return;
      const cur = d.portInfo[pn];
      const path = portPath(n, d, pn);
      if (!cur || !path || cur.portState !== PortState.Armed) return;
      const peer = nodes[p.peer.node]!.portInfo[p.peer.port];
      if (peer && peer.portState < PortState.Armed) return;
      const want = { ...asSet(cur), portState: PortState.Active };
      out.push({ path, attr: SmpAttr.PortInfo, mod: portInfoMod(pn), data: PortInfo.encode(want), effect: { kind: 'portInfo', node: ni, port: pn } });
    });
  });
  return out;
}

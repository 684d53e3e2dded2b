/** Pure planners for ports: (the sweep's view of every port, the SM's settings) → the PortInfo
 * Sets needed. One Set per port carries LID, LMC, SM LID, timeouts, MTU, VLs, VLHighLimit, M_Key,
 * partition enforcement and INIT → ARMED; a second pass after the LFTs are in takes ARMED → ACTIVE. */
import { DEFAULT_GID_PREFIX, NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortCap, PortCap2, PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import { extendedSpeedsPort } from './port-info-get.js';
import { defineView } from '../wire/view.js';
import { recordCopier } from '../wire/layout.js';
import { keptPortInfoBytes } from '../model/port-info.js';
import type { DiscoveredNode, DiscoveryResult } from '../model/snapshot.js';
import type { FabricNode, FabricPort } from '../model/fabric.js';
import type { SmpWrite } from './programmed.js';
import { allocBytes } from '../util/slab.js';

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
  /** Partition enforcement on switch ports facing CAs and routers (OpenSM part_enforce; default both). */
  partEnforce?: 'both' | 'in' | 'out' | 'off';
  /** OpenSM's force_link_speed (LinkSpeedEnabled: 0 leave, 15 = LinkSpeedSupported), force_link_speed_ext
   * (LinkSpeedExtEnabled where both ends have extended speeds: 0 leave, 30 off, 31 = Supported),
   * NVIDIA's force_link_speed_ext2 (LinkSpeedExtEnabled2, XDR: 0 leave, 7 = Supported2) and
   * force_link_width (LinkWidthEnabled: 0 leave, 255 = LinkWidthSupported). */
  forceLinkSpeed?: number;
  forceLinkSpeedExt?: number;
  forceLinkSpeedExt2?: number;
  forceLinkWidth?: number;
}

/** The enabled widths and speeds a linked port is to get (undefined: leave the port's), as
 * OpenSM's link manager works them out (osm_link_mgr.c link_mgr_set_physp_pi): `own`/`peer` are the
 * PortInfos whose CapabilityMask(2) speak for each end (a switch's port 0). A value the port does
 * not support is dropped from the set (OpenSM would send it, and an SMA refuses the whole Set). */
export function linkSettings(s: PortSettings, cur: PortInfo, own: PortInfo | undefined, peer: PortInfo | undefined): { width?: number; speed?: number; ext?: number; ext2?: number } {
  const out: { width?: number; speed?: number; ext?: number; ext2?: number } = {};
  const w = s.forceLinkWidth ?? 0;
  if (w) {
    const twoX = ((own?.capabilityMask2 ?? 0) & PortCap2.IsLinkWidth2xSupported) !== 0;
    // 16-31 ask for 2x too: only where the port says it can (port 0's mask on a switch, OpenSM PR #23)
    const want = w === 255 || (w & 16 && !twoX) ? cur.linkWidthSupported : w & cur.linkWidthSupported;
    if (want && want !== cur.linkWidthEnabled) out.width = want;
  }
  const sp = s.forceLinkSpeed ?? 0;
  if (sp && (sp !== 15 || cur.linkSpeedEnabled !== cur.linkSpeedSupported)) {
    const want = sp === 15 ? cur.linkSpeedSupported : sp & cur.linkSpeedSupported;
    if (want && want !== cur.linkSpeedEnabled) out.speed = sp === 15 ? 15 : want;
  }
  const has = (pi: PortInfo | undefined, cap: number): boolean => ((pi?.capabilityMask ?? 0) & cap) !== 0;
  const has2 = (pi: PortInfo | undefined, cap: number): boolean => has(pi, PortCap.IsCapabilityMask2Supported) && ((pi?.capabilityMask2 ?? 0) & cap) !== 0;
  const ext = s.forceLinkSpeedExt ?? 0;
  if (ext && has(own, PortCap.IsExtendedSpeedsSupported) && has(peer, PortCap.IsExtendedSpeedsSupported) && (ext !== 31 || cur.linkSpeedExtEnabled !== cur.linkSpeedExtSupported)) {
    const want = ext === 31 ? cur.linkSpeedExtSupported : ext === 30 ? 30 : ext & cur.linkSpeedExtSupported;
    if (want && want !== cur.linkSpeedExtEnabled) out.ext = ext === 31 ? 31 : want;
  }
  const ext2 = s.forceLinkSpeedExt2 ?? 0;
  if (ext2 && has2(own, PortCap2.IsExtendedSpeeds2Supported) && has2(peer, PortCap2.IsExtendedSpeeds2Supported)) {
    const want = ext2 === 7 ? cur.linkSpeedExtSupported2 : ext2 & cur.linkSpeedExtSupported2;
    if (want && want !== cur.linkSpeedExtEnabled2) out.ext2 = ext2 === 7 ? 7 : want;
  }
  return out;
}

/** Does this switch port enforce partitions: it faces a CA/router and the switch can enforce. */
export function enforces(disc: DiscoveryResult, n: FabricNode, d: DiscoveredNode, p: FabricPort): boolean {
  if (n.type !== NodeType.Switch || !p.peer || !d.switchInfo) return false;
  const si = d.switchInfo;
  if (!si.partitionEnforcementCap || !si.inboundEnforcementCap || !si.outboundEnforcementCap) return false;
  return disc.fabric.nodes[p.peer.node]?.type !== NodeType.Switch;
}

/** The DR path of a port (a switch's ports all through the switch). */
export function portPath(n: FabricNode, d: DiscoveredNode, pn: number): readonly number[] | undefined {
  return n.type === NodeType.Switch ? d.path : d.portPaths[pn];
}

/** PortInfo Sets for every port whose settings differ from what it reported. Built in place: the
 * wanted values are worked out in locals and compared with the port's; only a port that needs a
 * Set gets its bytes (what it reported, copied into a buffer cut from the MAD slabs: setBytesOf,
 * then the changed fields written through the PortInfo view), no copy of the decoded PortInfo per port. */
export function planPortInfo(disc: DiscoveryResult, s: PortSettings): SmpWrite[] {
  return [...portInfoWrites(disc, s)];
}

/** planPortInfo's writes one at a time, as an apply step's window has room (the heavy sweep's
 * PortInfo phase: the first Sets go out at once, the rest are planned while they are answered).
 * A port is planned from what its SMA reported; answers acknowledged meanwhile change only what
 * a Set asks for (its peer's capabilities, read for MTU, VLs and speeds, are read-only). */
export function* portInfoWrites(disc: DiscoveryResult, s: PortSettings): Generator<SmpWrite, void, void> {
  const { fabric, nodes } = disc;
  const gidPrefix = s.gidPrefix ?? DEFAULT_GID_PREFIX;
  const subnetTimeout = s.subnetTimeout ?? 18;
  for (let ni = 0; ni < fabric.nodes.length; ni++) {
    const n = fabric.nodes[ni]!;
    const d = nodes[ni]!;
    const sw = n.type === NodeType.Switch;
    for (let pn = 0; pn < n.ports.length; pn++) {
      const p = n.ports[pn];
      if (!p) continue;
      const cur = d.portInfo[pn];
      const path = portPath(n, d, pn);
      if (!cur || !path) continue;
      const isEnd = !sw || pn === 0;
      if (pn !== 0 && !p.peer) continue;
      if (!sw && !p.peer) continue;
      const portState = cur.portState === PortState.Init && pn !== 0 ? PortState.Armed : PortState.NoChange;
      // No M_Key of its own: the SM never raises protection. A Set of it only lands where the
      // port's key is 0 or read with protection off, so echoing protect bits from a read would
      // protect nothing from this SM, and from a corrupt read would lock the port out of it.
      const mkeyProtectBits = isEnd ? (s.mkey !== undefined ? (s.mkeyProtectBits ?? 0) : 0) : cur.mkeyProtectBits;
      const clientReregister = isEnd ? (s.reregister && !sw && cur.capabilityMask & PortCap.IsClientReregistrationSupported ? 1 : 0) : cur.clientReregister;
      const lid = isEnd ? (p.lid ?? 0) : cur.lid;
      const lmc = isEnd ? (sw ? (p.lmc ?? 0) : s.lmc) : cur.lmc;
      let neighborMtu = cur.neighborMtu;
      let operationalVls = cur.operationalVls;
      let link: ReturnType<typeof linkSettings> = {};
      if (p.peer && pn !== 0) {
        const peerInfo = nodes[p.peer.node]!.portInfo[p.peer.port];
        const peerNode = nodes[p.peer.node]!;
        link = linkSettings(s, cur, sw ? d.portInfo[0] : cur, fabric.nodes[p.peer.node]!.type === NodeType.Switch ? peerNode.portInfo[0] : peerInfo);
        if (peerInfo) {
          neighborMtu = Math.min(cur.mtuCap, peerInfo.mtuCap) || cur.neighborMtu;
          operationalVls = Math.min(cur.vlCap, peerInfo.vlCap, s.maxOpVls ?? 5) || cur.operationalVls;
        }
      }
      // Head-of-queue lifetime and VL stall count on switch ports, OpenSM's defaults: packets
      // toward an end port may wait less (leaf 0x10) than toward another switch (0x12).
      let hoqLife = cur.hoqLife;
      let vlStallCount = cur.vlStallCount;
      if (sw && pn !== 0 && p.peer) {
        hoqLife = fabric.nodes[p.peer.node]!.type === NodeType.Switch ? (s.hoqLife ?? HOQ_LIFE_SWITCH) : (s.leafHoqLife ?? HOQ_LIFE_LEAF);
        vlStallCount = VL_STALL_COUNT;
      }
      const vlHighLimit = s.qosVl && (pn === 0 || p.peer) ? s.qosVl.highLimit : cur.vlHighLimit;
      // Never echo a NeighborMTU above what the port can do (the SMA would reject the whole Set).
      if (cur.mtuCap) neighborMtu = Math.min(neighborMtu || cur.mtuCap, cur.mtuCap);
      let peIn = cur.partitionEnforcementInbound;
      let peOut = cur.partitionEnforcementOutbound;
      if (sw && pn !== 0) {
        const e = enforces(disc, n, d, p);
        const mode = s.partEnforce ?? 'both';
        peIn = e && (mode === 'both' || mode === 'in') ? 1 : 0;
        peOut = e && (mode === 'both' || mode === 'out') ? 1 : 0;
      }
      const needs =
        clientReregister === 1 ||
        peIn !== cur.partitionEnforcementInbound ||
        peOut !== cur.partitionEnforcementOutbound ||
        portState !== PortState.NoChange ||
        (isEnd && (cur.lid !== lid || cur.lmc !== lmc || cur.masterSmLid !== s.smLid || cur.subnetTimeout !== subnetTimeout)) ||
        (isEnd && s.mkey !== undefined && (cur.mkey !== s.mkey || cur.mkeyProtectBits !== mkeyProtectBits || cur.mkeyLeasePeriod !== (s.mkeyLeasePeriod ?? 0))) ||
        neighborMtu !== cur.neighborMtu ||
        (isEnd && gidPrefix !== cur.gidPrefix) ||
        hoqLife !== cur.hoqLife ||
        vlStallCount !== cur.vlStallCount ||
        vlHighLimit !== cur.vlHighLimit ||
        operationalVls !== cur.operationalVls ||
        link.width !== undefined ||
        link.speed !== undefined ||
        link.ext !== undefined ||
        link.ext2 !== undefined;
      if (!needs) continue;
      const v = PortInfoView.over(setBytesOf(cur));
      asSetInPlace(v);
      v.portState = portState;
      if (isEnd) {
        v.gidPrefix = gidPrefix;
        v.lid = lid;
        v.lmc = lmc;
        v.masterSmLid = s.smLid;
        v.subnetTimeout = subnetTimeout;
        if (s.mkey !== undefined) {
          v.mkey = s.mkey;
          v.mkeyLeasePeriod = s.mkeyLeasePeriod ?? 0;
        }
        v.mkeyProtectBits = mkeyProtectBits;
        v.clientReregister = clientReregister;
      }
      v.neighborMtu = neighborMtu;
      v.operationalVls = operationalVls;
      v.hoqLife = hoqLife;
      v.vlStallCount = vlStallCount;
      v.vlHighLimit = vlHighLimit;
      v.partitionEnforcementInbound = peIn;
      v.partitionEnforcementOutbound = peOut;
      if (link.width !== undefined) v.linkWidthEnabled = link.width;
      if (link.speed !== undefined) v.linkSpeedEnabled = link.speed;
      if (link.ext !== undefined) v.linkSpeedExtEnabled = link.ext;
      if (link.ext2 !== undefined) v.linkSpeedExtEnabled2 = link.ext2;
      yield { path, attr: SmpAttr.PortInfo, mod: setMod(sw, pn, cur, d), data: v.buf, effect: { kind: 'portInfo', node: ni, port: pn } };
    }
  }
}

/** A PortInfo Set's modifier: bit 31 (SMSupportExtendedSpeeds) where the port's CapabilityMask (a
 * switch's external port: port 0's) has IsExtendedSpeedsSupported, as OpenSM's link manager. */
function setMod(sw: boolean, pn: number, cur: PortInfo, d: DiscoveredNode): number {
  return portInfoMod(pn, extendedSpeedsPort(sw, pn, cur, d.portInfo[0]));
}

const copyPortInfo = recordCopier(PortInfo)!;

/** A Set's bytes to start from: what the port reported (a kept PortInfo's own bytes copied, the
 * reserved bits cleared: what encoding it gives, without reading each field out), in a buffer cut
 * from the MAD slabs. */
function setBytesOf(cur: PortInfo): Uint8Array {
  const data = allocBytes(PortInfo.byteLength);
  const kept = keptPortInfoBytes(cur);
  if (kept) copyPortInfo(kept.buf, kept.offset, data, 0);
  else PortInfo.encode(cur, data);
  return data;
}

/** The PortInfo view the planners write a Set through (generated from the PortInfo field table). */
const PortInfoView = defineView(PortInfo);

/** The PortState a PortInfo Set's bytes ask for, read in place (no decode of the whole PortInfo). */
export function portStateOfSet(data: Uint8Array): number {
  return PortInfoView.over(data).portState;
}

/** The fields a PortInfo Set must not change (read-only, or "no change" codes), cleared in its bytes. */
function asSetInPlace(v: ReturnType<typeof PortInfoView.over>): void {
  v.portPhysicalState = 0;
  v.linkDownDefaultState = 0;
  v.linkWidthEnabled = 0;
  v.linkSpeedEnabled = 0;
  v.linkSpeedExtEnabled = 0;
  v.linkSpeedExtEnabled2 = 0;
}

/** ARMED → ACTIVE for every linked port that reports ARMED and whose peer is ARMED or ACTIVE (a
 * port whose peer is stuck in INIT cannot go ACTIVE: the SMA would refuse). */
export function planActivation(disc: DiscoveryResult): SmpWrite[] {
  return [...activationWrites(disc)];
}

/** planActivation's writes one at a time (the heavy sweep's activation phase, as portInfoWrites):
 * a port whose peer went ACTIVE meanwhile is still a peer ARMED or ACTIVE. */
export function* activationWrites(disc: DiscoveryResult): Generator<SmpWrite, void, void> {
  const { fabric, nodes } = disc;
  for (let ni = 0; ni < fabric.nodes.length; ni++) {
    const n = fabric.nodes[ni]!;
    const d = nodes[ni]!;
    for (let pn = 0; pn < n.ports.length; pn++) {
      const p = n.ports[pn];
      if (!p?.peer || pn === 0) continue;
      const cur = d.portInfo[pn];
      const path = portPath(n, d, pn);
      if (!cur || !path || cur.portState !== PortState.Armed) continue;
      const peer = nodes[p.peer.node]!.portInfo[p.peer.port];
      if (peer && peer.portState < PortState.Armed) continue;
      // In place, as planPortInfo: what the port reported, the read-only fields cleared, ACTIVE.
      const v = PortInfoView.over(setBytesOf(cur));
      asSetInPlace(v);
      v.portState = PortState.Active;
      yield { path, attr: SmpAttr.PortInfo, mod: setMod(n.type === NodeType.Switch, pn, cur, d), data: v.buf, effect: { kind: 'portInfo', node: ni, port: pn } };
    }
  }
}

/** PortState Down for each of `ports` (isolated ports that are ARMED or ACTIVE, sm/health-state.ts):
 * the link retrains and both ends come back in INIT, where the sweep holds them. */
export function planPortDown(disc: DiscoveryResult, ports: ReadonlyArray<{ node: number; port: number }>): SmpWrite[] {
  const out: SmpWrite[] = [];
  for (const { node, port } of ports) {
    const n = disc.fabric.nodes[node]!;
    const d = disc.nodes[node]!;
    const cur = d.portInfo[port];
    const path = portPath(n, d, port);
    if (!cur || !path) continue;
    const v = PortInfoView.over(setBytesOf(cur));
    asSetInPlace(v);
    v.portState = PortState.Down;
    out.push({ path, attr: SmpAttr.PortInfo, mod: setMod(n.type === NodeType.Switch, port, cur, d), data: v.buf, effect: { kind: 'portInfo', node, port } });
  }
  return out;
}

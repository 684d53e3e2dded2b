/** Per-node and per-port state of the simulated SMAs (the ports' columns in one PortStore per
 * fabric), and building it from a Fabric node. */
import { PhysPortState, PortState } from '../wire/mad.js';
import { PortCap, PortCap2, PortInfo } from '../wire/sma.js';
import { defineView, type View } from '../wire/view.js';
import { isSwitch as fabricIsSwitch, type FabricNode, type NodeKind } from '../model/fabric.js';
import { SwitchForwarding } from './forwarding.js';
import { highestBit, setPhysical } from './link.js';
import { VlTables } from './vl-tables.js';
import type { SimVirt } from './vport.js';

/** Counters of one port (the port carries them itself: `port.stats` is the port). */
export interface PortStats {
  /** Times the link of this port went down. */
  readonly linkDowned: number;
  readonly clientReregisters: number;
}

/** The PortInfo of every simulated port is kept in its wire form (the one field table of
 * wire/sma.ts), read and written through the view generated from that table. */
export const PortInfoView = defineView(PortInfo);
export type PortInfoState = View<(typeof PortInfo)['fields']>;

/** SL2VL tables of one output port by input port (an unwritten table reads as zeros, as the SMA
 * answers it). */
export interface Sl2VlReader {
  get(inPort: number): number[] | undefined;
}

/**
 * The columns of every port of a fabric, indexed by the port's slot (its node's first slot + port
 * number): PortInfo in wire form, P_Key tables, the packets the PMA counts on every link crossing,
 * and the other PMA counters, allocated for a port on first use (error injection or a clear).
 * A few typed arrays instead of objects per port: 70,000 ports cost a few MB.
 */
export class PortStore {
  readonly info: Uint8Array;
  readonly pkeys: Uint16Array;
  /** Per slot: packets sent, packets received. */
  readonly pkts: Float64Array;
  /** Per slot, on first use: the PMA counter totals, then their values at the last clear. */
  readonly pma: (Float64Array | undefined)[];

  constructor(
    readonly slots: number,
    readonly partitionCap: number,
  ) {
    this.info = new Uint8Array(slots * PortInfo.byteLength);
    this.pkeys = new Uint16Array(slots * partitionCap);
    this.pkts = new Float64Array(2 * slots);
    this.pma = new Array<Float64Array | undefined>(slots).fill(undefined);
  }
}

const NO_GUIDS = Object.freeze([]) as unknown as bigint[];

export class SimPort implements PortStats {
  /** The cabled neighbour (from the Fabric); the link may still be down. */
  peer: SimPort | undefined = undefined;
  /** False after `linkDown` on the fabric (cable pulled). */
  cableUp = true;
  /** PortPhysicalState was set to Disabled. */
  disabled = false;
  /** Virtual time at which the M_Key lease expires (0 = not counting). */
  mkeyLeaseEnd = 0;
  /** A fault: the port accepts PortInfo Sets but never leaves INIT (its logical state stays). */
  stuckInit = false;
  /** PortInfo:PortPhysicalState is LinkUp: a mirror of that field, written with it only (link.ts's
   * setPhysical), for the walkers that test it at every hop (one field of the port object, not a
   * read through its PortInfo view into the fabric's store). */
  linkUp = false;
  linkDowned = 0;
  clientReregisters = 0;
  /** SR-IOV virtualization of a CA port (sim/vport.ts); undefined: not capable. */
  virt: SimVirt | undefined = undefined;
  /** The PortInfo state: a view of the port's bytes in the fabric's PortStore. For switch
   * external ports the port-0-only components (LID, M_Key...) stay 0. */
  readonly info: PortInfoState;
  /** GUIDInfo entries (index 0 = port GUID); none on switch external ports. */
  readonly guids: bigint[];

  constructor(
    readonly node: SimNode,
    readonly num: number,
    readonly guid: bigint,
    /** The port's index in the fabric's PortStore. */
    readonly slot: number,
    guidCap: number,
  ) {
    this.info = PortInfoView.over(node.store.info, slot * PortInfo.byteLength);
    if (guidCap > 0) {
      this.guids = new Array<bigint>(guidCap).fill(0n);
      this.guids[0] = guid;
    } else this.guids = NO_GUIDS;
  }

  /** The port's counters. */
  get stats(): PortStats {
    return this;
  }

  /** The port's P_Key table (a view of the PortStore). */
  get pkeys(): Uint16Array {
    const st = this.node.store;
    return st.pkeys.subarray(this.slot * st.partitionCap, (this.slot + 1) * st.partitionCap);
  }

  /** SLtoVL tables of this output port, by input port (switches) or 0 (CAs). */
  get sl2vl(): Sl2VlReader {
    const vl = this.node.vl;
    const out = this.num;
    return { get: (inPort) => vl.sl2vl(out, inPort) };
  }
}

export interface NodeStats {
  smpsHandled: number;
  smpGets: number;
  smpSets: number;
  /** SMPs that failed the M_Key check. */
  mkeyViolations: number;
}

export interface SimNode {
  readonly idx: number;
  readonly type: NodeKind;
  readonly isSwitch: boolean;
  readonly guid: bigint;
  readonly systemImageGuid: bigint;
  readonly numPorts: number;
  readonly vendorId: number;
  readonly deviceId: number;
  readonly revision: number;
  readonly partitionCap: number;
  desc: string;
  /** Indexed by port number; a switch has port 0. */
  readonly ports: (SimPort | undefined)[];
  /** Switch state (SwitchInfo + forwarding tables); undefined for CAs and routers. */
  readonly sw: SimSwitch | undefined;
  /** The fabric's port columns; port `n` of this node is slot `slot0 + n`. */
  readonly store: PortStore;
  readonly slot0: number;
  /** SL2VL and VLArbitration tables (allocated on first write). */
  readonly vl: VlTables;
  ledOn: boolean;
  /** An unresponsive SMA (fault injection, issue #33): every SMP that reaches it is lost (a
   * switch still forwards those passing through, and its data traffic). */
  smaSilent: boolean;
  /** A pre-IBA-1.3 SMA that takes PortInfo's AttributeModifier above the port number as invalid:
   * a Get or Set with bit 31 (SMSupportExtendedSpeeds) is answered with an error status. */
  refusesPortInfoBit31: boolean;
  stats: NodeStats;
  /** An NDR/XDR generation device: PortInfo without AttributeModifier bit 31 hides the extended
   * speeds (needsSmExtendedSpeeds). */
  readonly extSpeedsNeedSmSupport: boolean;
}

export interface SimSwitch {
  fwd: SwitchForwarding;
  lifeTimeValue: number;
  portStateChange: number;
  enhancedPort0: boolean;
  partitionEnforcementCap: number;
  lidsPerPort: number;
}

/** The port whose PortInfo carries LID, M_Key and SM fields for an SMP arriving on `inPort`. */
export function managementPort(node: SimNode, inPort: number): SimPort | undefined {
  return node.ports[node.isSwitch ? 0 : inPort];
}

/** Base LID range of a port (switch: port 0). */
export function portOwnsLid(p: SimPort, lid: number): boolean {
  const base = p.info.lid;
  if (base !== 0 && lid >= base && lid < base + (1 << p.info.lmc)) return true;
  // vport hook (sim/vport.ts): a LidRequired vport answers on its own LID
  return p.virt !== undefined && p.virt.ownsLid(lid);
}

// ---------- construction ----------

export interface PortDefaults {
  widthSupported: number;
  widthActive: number;
  speedSupported: number;
  speedExtSupported: number;
  /** LinkSpeedExtSupported2 (PortInfo byte 56): 1 = XDR. */
  speedExt2Supported: number;
}

const WIDTH_BY_NAME: Readonly<Record<string, [supported: number, active: number]>> = {
  '1x': [1, 1],
  '2x': [1 | 16, 16],
  '4x': [1 | 2, 2],
  '8x': [1 | 2 | 4, 4],
  '12x': [1 | 2 | 8, 8],
};
/** The hardware generation a speed name stands for: what its ports support (a port of a faster
 * generation supports every slower speed, so a link comes up at the best speed both ends know). */
const SPEED_BY_NAME: Readonly<Record<string, [supported: number, ext: number, ext2: number]>> = {
  sdr: [1, 0, 0],
  ddr: [3, 0, 0],
  qdr: [7, 0, 0],
  fdr10: [7, 0, 0],
  fdr: [7, 1, 0],
  edr: [7, 3, 0],
  hdr: [7, 7, 0],
  ndr: [7, 15, 0],
  xdr: [7, 15, 1],
};

/** Link capabilities of a port from the Fabric's width/speed strings (defaults 4x SDR, as ibsim). */
export function portDefaults(width: string | undefined, speed: string | undefined): PortDefaults {
  const w = WIDTH_BY_NAME[(width ?? '4x').toLowerCase()] ?? WIDTH_BY_NAME['4x']!;
  const s = SPEED_BY_NAME[(speed ?? 'sdr').toLowerCase().replace(/[^a-z0-9]/g, '')] ?? SPEED_BY_NAME['sdr']!;
  // HDR and later ports of 4x and more also do 2x (HDR100, NDR200, XDR400 splits)
  const widthSupported = s[1] & 4 && w[0] & (2 | 4 | 8) ? w[0] | 16 : w[0];
  return { widthSupported, widthActive: w[1], speedSupported: s[0], speedExtSupported: s[1], speedExt2Supported: s[2] };
}

/** A switch's port 0 (no link of its own) advertises what the switch's ports can do. */
export function unionDefaults(links: readonly PortDefaults[]): PortDefaults {
  const u: PortDefaults = { widthSupported: 0, widthActive: 2, speedSupported: 0, speedExtSupported: 0, speedExt2Supported: 0 };
  for (const l of links) {
    u.widthSupported |= l.widthSupported;
    u.speedSupported |= l.speedSupported;
    u.speedExtSupported |= l.speedExtSupported;
    u.speedExt2Supported |= l.speedExt2Supported;
  }
  if (!u.widthSupported) u.widthSupported = 3;
  if (!u.speedSupported) u.speedSupported = 1;
  return u;
}

/** CapabilityMask and CapabilityMask2 bits a port's link capabilities imply: extended speeds
 * (bit 14), CapabilityMask2 (bit 15); 2x, HDR, NDR, ExtendedSpeeds2 (byte 56) and XDR. */
export function linkCapabilities(l: PortDefaults): { cap: number; cap2: number } {
  let cap2 = 0;
  if (l.widthSupported & 16) cap2 |= PortCap2.IsLinkWidth2xSupported;
  if (l.speedExtSupported & 4) cap2 |= PortCap2.IsLinkSpeedHDRSupported;
  if (l.speedExtSupported & 8) cap2 |= PortCap2.IsLinkSpeedNDRSupported;
  if (l.speedExt2Supported) cap2 |= PortCap2.IsExtendedSpeeds2Supported | PortCap2.IsLinkSpeedXDRSupported;
  const cap = (l.speedExtSupported ? PortCap.IsExtendedSpeedsSupported : 0) | (cap2 ? PortCap.IsCapabilityMask2Supported : 0);
  return { cap, cap2 };
}

/** Quantum-2 / ConnectX-7 and later (an NDR or XDR port): without AttributeModifier bit 31 the SMA
 * answers PortInfo with its extended speed fields zero and ignores them in a Set (OpenSM issue #38). */
export function needsSmExtendedSpeeds(l: PortDefaults): boolean {
  return (l.speedExtSupported & 8) !== 0 || l.speedExt2Supported !== 0;
}

export const CA_CAPABILITY_MASK =
  PortCap.IsTrapSupported |
  PortCap.IsAutomaticMigrationSupported |
  PortCap.IsSLMappingSupported |
  PortCap.IsLedInfoSupported |
  PortCap.IsSystemImageGUIDSupported |
  PortCap.IsCommunicationManagementSupported |
  PortCap.IsVendorClassSupported |
  PortCap.IsCapabilityMaskNoticeSupported |
  PortCap.IsClientReregistrationSupported;
export const SWITCH_PORT0_CAPABILITY_MASK =
  PortCap.IsTrapSupported | PortCap.IsSLMappingSupported | PortCap.IsLedInfoSupported | PortCap.IsSystemImageGUIDSupported;

export interface NewPortOptions {
  node: SimNode;
  num: number;
  guid: bigint;
  link: PortDefaults;
  /** Carries LID/M_Key/SM components (CA port, switch port 0). */
  management: boolean;
  /** Has a physical layer (every port except base switch port 0). */
  physical: boolean;
  guidCap: number;
  capabilityMask: number;
}

/** A port in its reset state: its PortInfo written into its (zeroed) slot, P_Key entry 0 the
 * default full-member key. */
export function newPort(o: NewPortOptions): SimPort {
  const p = new SimPort(o.node, o.num, o.guid, o.node.slot0 + o.num, o.guidCap);
  const info = p.info;
  info.gidPrefix = o.management ? 0xfe80000000000000n : 0n;
  const caps = linkCapabilities(o.link);
  info.capabilityMask = (o.capabilityMask | (o.capabilityMask ? caps.cap : 0)) >>> 0;
  info.capabilityMask2 = o.capabilityMask ? caps.cap2 : 0;
  info.localPortNum = o.num;
  info.linkWidthSupported = o.link.widthSupported;
  info.linkWidthEnabled = o.link.widthSupported;
  info.linkWidthActive = o.link.widthActive;
  info.linkSpeedSupported = o.link.speedSupported;
  info.linkSpeedEnabled = o.link.speedSupported;
  info.linkSpeedActive = highestBit(o.link.speedSupported) || 1;
  info.linkSpeedExtSupported = o.link.speedExtSupported;
  info.linkSpeedExtEnabled = o.link.speedExtSupported;
  info.linkSpeedExtSupported2 = o.link.speedExt2Supported;
  info.linkSpeedExtEnabled2 = o.link.speedExt2Supported;
  info.portState = o.physical ? PortState.Down : PortState.Init;
  setPhysical(p, o.physical ? PhysPortState.Polling : PhysPortState.LinkUp);
  info.linkDownDefaultState = 2; // Polling
  info.neighborMtu = 4; // 2048
  info.mtuCap = 5; // 4096
  info.vlCap = 4; // VL0-7
  info.operationalVls = 1;
  info.vlArbitrationHighCap = 8;
  info.vlArbitrationLowCap = 8;
  info.vlHighLimit = 0;
  info.hoqLife = 31;
  info.vlStallCount = 7;
  info.guidCap = o.guidCap;
  info.respTimeValue = 8;
  info.localPhyErrors = 8;
  info.overrunErrors = 8;
  const st = o.node.store;
  if (st.partitionCap > 0) st.pkeys[p.slot * st.partitionCap] = 0xffff;
  return p;
}

/** Switch and node capabilities the fabric gives every node it builds. */
export interface NodeOptions {
  linearFdbCap: number;
  randomFdbCap: number;
  multicastFdbCap: number;
  enhancedPort0: boolean;
  partitionCap: number;
}

/** Slots a Fabric node takes in the PortStore (its ports 0..numPorts). */
export function slotsOf(fn: FabricNode): number {
  return fn.numPorts + 1;
}

/** The SMA state of a Fabric node (links not cabled yet), its ports in `store` from `slot0` on;
 * management ports go into `byPortGuid` (the first port with a GUID wins). */
export function buildSimNode(fn: FabricNode, idx: number, o: NodeOptions, byPortGuid: Map<bigint, SimPort>, store: PortStore, slot0: number): SimNode {
  if (o.partitionCap !== store.partitionCap) throw new RangeError(`node ${idx}: PartitionCap ${o.partitionCap} differs from the port store's ${store.partitionCap}`);
  const sw = fabricIsSwitch(fn);
  const node: SimNode = {
    idx,
    type: fn.type,
    isSwitch: sw,
    guid: fn.guid,
    systemImageGuid: fn.systemImageGuid,
    numPorts: fn.numPorts,
    vendorId: fn.vendorId,
    deviceId: fn.deviceId,
    revision: 1,
    partitionCap: o.partitionCap,
    desc: fn.desc,
    ports: [],
    sw: sw
      ? {
          fwd: new SwitchForwarding({ linearFdbCap: o.linearFdbCap, randomFdbCap: o.randomFdbCap, multicastFdbCap: o.multicastFdbCap, numPorts: fn.numPorts }),
          lifeTimeValue: 18,
          portStateChange: 0,
          enhancedPort0: o.enhancedPort0,
          partitionEnforcementCap: o.partitionCap,
          lidsPerPort: 0,
        }
      : undefined,
    store,
    slot0,
    vl: new VlTables(slotsOf(fn)),
    ledOn: false,
    smaSilent: false,
    refusesPortInfoBit31: false,
    stats: { smpsHandled: 0, smpGets: 0, smpSets: 0, mkeyViolations: 0 },
    extSpeedsNeedSmSupport: false,
  };
  const ports = node.ports as (SimPort | undefined)[];
  const first = sw ? 0 : 1;
  const links: PortDefaults[] = [];
  for (let pn = 1; pn <= fn.numPorts; pn++) {
    const fp = fn.ports[pn];
    if (fp || sw) links[pn] = portDefaults(fp?.width, fp?.speed);
  }
  const present = links.filter((l): l is PortDefaults => l !== undefined);
  (node as { extSpeedsNeedSmSupport: boolean }).extSpeedsNeedSmSupport = present.some(needsSmExtendedSpeeds);
  for (let pn = first; pn <= fn.numPorts; pn++) {
    const fp = fn.ports[pn];
    if (!fp && !sw) continue;
    const mgmt = !sw || pn === 0;
    const guid = fp?.guid ?? fn.guid;
    const p = newPort({
      node,
      num: pn,
      guid,
      link: pn === 0 ? unionDefaults(present) : links[pn]!,
      management: mgmt,
      physical: !(sw && pn === 0),
      guidCap: mgmt ? (sw ? 1 : 8) : 0,
      capabilityMask: mgmt ? (sw ? SWITCH_PORT0_CAPABILITY_MASK : CA_CAPABILITY_MASK) : 0,
    });
    ports[pn] = p;
    if (mgmt && !byPortGuid.has(guid)) byPortGuid.set(guid, p);
  }
  return node;
}

/** Per-node and per-port state of the simulated SMAs, and building it from a Fabric node. */
import { PhysPortState, PortState } from '../wire/mad.js';
import type { PmaCounters } from './pma.js';
import { PORT_COUNTER_NAMES } from '../wire/pma.js';
import { PortCap, type PortInfo, type VLArbitrationEntry } from '../wire/sma.js';
import { isSwitch as fabricIsSwitch, type FabricNode, type NodeKind } from '../model/fabric.js';
import { SwitchForwarding } from './forwarding.js';
import { highestBit } from './link.js';

export interface PortStats {
  /** Times the link of this port went down. */
  linkDowned: number;
  clientReregisters: number;
  /** What the node's PMA counts for this port. */
  pma: PmaCounters;
}

export interface SimPort {
  readonly node: SimNode;
  readonly num: number;
  readonly guid: bigint;
  /** The cabled neighbour (from the Fabric); the link may still be down. */
  peer: SimPort | undefined;
  /** False after `linkDown` on the fabric (cable pulled). */
  cableUp: boolean;
  /** PortPhysicalState was set to Disabled. */
  disabled: boolean;
  /** The PortInfo state. For switch external ports the port-0-only components (LID, M_Key...) stay 0. */
  info: PortInfo;
  pkeys: Uint16Array;
  /** SLtoVL tables keyed by input port (switches) or 0 (CAs); 16 VLs each. */
  sl2vl: Map<number, number[]>;
  /** VLArbitration blocks 1..4 (index 0..3), allocated on first Set. */
  vlarb: (VLArbitrationEntry[] | undefined)[];
  /** GUIDInfo entries (index 0 = port GUID). */
  guids: bigint[];
  /** Virtual time at which the M_Key lease expires (0 = not counting). */
  mkeyLeaseEnd: number;
  /** A fault: the port accepts PortInfo Sets but never leaves INIT (its logical state stays). */
  stuckInit?: boolean;
  stats: PortStats;
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
  ledOn: boolean;
  stats: NodeStats;
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
  if (base === 0) return false;
  return lid >= base && lid < base + (1 << p.info.lmc);
}

// ---------- construction ----------

export interface PortDefaults {
  widthSupported: number;
  widthActive: number;
  speedSupported: number;
  speedExtSupported: number;
}

const WIDTH_BY_NAME: Readonly<Record<string, [supported: number, active: number]>> = {
  '1x': [1, 1],
  '2x': [1 | 16, 16],
  '4x': [1 | 2, 2],
  '8x': [1 | 2 | 4, 4],
  '12x': [1 | 2 | 8, 8],
};
const SPEED_BY_NAME: Readonly<Record<string, [supported: number, ext: number]>> = {
  sdr: [1, 0],
  ddr: [3, 0],
  qdr: [7, 0],
  fdr10: [7, 0],
  fdr: [7, 1],
  edr: [7, 3],
  hdr: [7, 7],
  ndr: [7, 15],
};

/** Link capabilities of a port from the Fabric's width/speed strings (defaults 4x SDR, as ibsim). */
export function portDefaults(width: string | undefined, speed: string | undefined): PortDefaults {
  const w = WIDTH_BY_NAME[(width ?? '4x').toLowerCase()] ?? WIDTH_BY_NAME['4x']!;
  const s = SPEED_BY_NAME[(speed ?? 'sdr').toLowerCase().replace(/[^a-z0-9]/g, '')] ?? SPEED_BY_NAME['sdr']!;
  return { widthSupported: w[0], widthActive: w[1], speedSupported: s[0], speedExtSupported: s[1] };
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
  /** The port's P_Key table (zeroed; entry 0 is set to the default full-member key here). */
  pkeys: Uint16Array;
  /** The port's PMA counters (zeroed): totals and the values at the last clear. */
  pma: PmaCounters;
  guidCap: number;
  capabilityMask: number;
}

/**
 * A zero PortInfo as an object literal. `PortInfo.zero()` builds its result field by field, which
 * V8 keeps in dictionary mode (about 3 KB per object); a literal has a fixed shape (a few hundred
 * bytes), which matters with 70,000 ports. The `PortInfo` type makes the compiler reject a
 * missing or unknown field, so this cannot drift from the layout.
 */
export function newPortInfo(): PortInfo {
  return {
    mkey: 0n, gidPrefix: 0n, lid: 0, masterSmLid: 0, capabilityMask: 0, diagCode: 0, mkeyLeasePeriod: 0, localPortNum: 0,
    linkWidthEnabled: 0, linkWidthSupported: 0, linkWidthActive: 0, linkSpeedSupported: 0, portState: 0, portPhysicalState: 0,
    linkDownDefaultState: 0, mkeyProtectBits: 0, lmc: 0, linkSpeedActive: 0, linkSpeedEnabled: 0, neighborMtu: 0, masterSmSl: 0,
    vlCap: 0, initType: 0, vlHighLimit: 0, vlArbitrationHighCap: 0, vlArbitrationLowCap: 0, initTypeReply: 0, mtuCap: 0,
    vlStallCount: 0, hoqLife: 0, operationalVls: 0, partitionEnforcementInbound: 0, partitionEnforcementOutbound: 0,
    filterRawInbound: 0, filterRawOutbound: 0, mkeyViolations: 0, pkeyViolations: 0, qkeyViolations: 0, guidCap: 0,
    clientReregister: 0, multicastPkeyTrapSuppressionEnabled: 0, subnetTimeout: 0, respTimeValue: 0, localPhyErrors: 0,
    overrunErrors: 0, maxCreditHint: 0, linkRoundTripLatency: 0, capabilityMask2: 0, linkSpeedExtActive: 0,
    linkSpeedExtSupported: 0, linkSpeedExtEnabled: 0,
  };
}

export function newPort(o: NewPortOptions): SimPort {
  const info = newPortInfo();
  info.gidPrefix = o.management ? 0xfe80000000000000n : 0n;
  info.capabilityMask = o.capabilityMask >>> 0;
  info.localPortNum = o.num;
  info.linkWidthSupported = o.link.widthSupported;
  info.linkWidthEnabled = o.link.widthSupported;
  info.linkWidthActive = o.link.widthActive;
  info.linkSpeedSupported = o.link.speedSupported;
  info.linkSpeedEnabled = o.link.speedSupported;
  info.linkSpeedActive = highestBit(o.link.speedSupported) || 1;
  info.linkSpeedExtSupported = o.link.speedExtSupported;
  info.linkSpeedExtEnabled = o.link.speedExtSupported;
  info.portState = o.physical ? PortState.Down : PortState.Init;
  info.portPhysicalState = o.physical ? PhysPortState.Polling : PhysPortState.LinkUp;
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
  if (o.link.speedExtSupported) info.capabilityMask = (info.capabilityMask | PortCap.IsExtendedSpeedsSupported) >>> 0;
  const pkeys = o.pkeys;
  if (pkeys.length > 0) pkeys[0] = 0xffff;
  const guids = new Array<bigint>(o.guidCap).fill(0n);
  if (o.guidCap > 0) guids[0] = o.guid;
  return {
    node: o.node,
    num: o.num,
    guid: o.guid,
    peer: undefined,
    cableUp: true,
    disabled: false,
    info,
    pkeys,
    sl2vl: new Map(),
    vlarb: [undefined, undefined, undefined, undefined],
    guids,
    mkeyLeaseEnd: 0,
    stats: { linkDowned: 0, clientReregisters: 0, pma: o.pma },
  };
}

/** Switch and node capabilities the fabric gives every node it builds. */
export interface NodeOptions {
  linearFdbCap: number;
  randomFdbCap: number;
  multicastFdbCap: number;
  enhancedPort0: boolean;
  partitionCap: number;
}

/** The SMA state of a Fabric node (links not cabled yet); management ports go into `byPortGuid`
 * (the first port with a GUID wins). */
export function buildSimNode(fn: FabricNode, idx: number, o: NodeOptions, byPortGuid: Map<bigint, SimPort>): SimNode {
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
    ledOn: false,
    stats: { smpsHandled: 0, smpGets: 0, smpSets: 0, mkeyViolations: 0 },
  };
  const ports = node.ports as (SimPort | undefined)[];
  const first = sw ? 0 : 1;
  // one buffer for all P_Key tables of the node and one for all its PMA counters (views per port):
  // a typed array of its own has an off-heap store each, which matters with 70,000 ports
  const pkeyStore = new Uint16Array(o.partitionCap * (fn.numPorts + 1));
  const nc = PORT_COUNTER_NAMES.length;
  const pmaStore = new Float64Array(2 * nc * (fn.numPorts + 1));
  for (let pn = first; pn <= fn.numPorts; pn++) {
    const fp = fn.ports[pn];
    if (!fp && !sw) continue;
    const mgmt = !sw || pn === 0;
    const guid = fp?.guid ?? fn.guid;
    const p = newPort({
      node,
      num: pn,
      guid,
      link: portDefaults(fp?.width, fp?.speed),
      management: mgmt,
      physical: !(sw && pn === 0),
      pkeys: pkeyStore.subarray(pn * o.partitionCap, (pn + 1) * o.partitionCap),
      pma: { total: pmaStore.subarray(2 * nc * pn, 2 * nc * pn + nc), base: pmaStore.subarray(2 * nc * pn + nc, 2 * nc * (pn + 1)) },
      guidCap: mgmt ? (sw ? 1 : 8) : 0,
      capabilityMask: mgmt ? (sw ? SWITCH_PORT0_CAPABILITY_MASK : CA_CAPABILITY_MASK) : 0,
    });
    ports[pn] = p;
    if (mgmt && !byPortGuid.has(guid)) byPortGuid.set(guid, p);
  }
  return node;
}

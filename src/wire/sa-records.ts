/**
 * Every SA record as one declarative layout in today's wire format (ib_types.h `ib_*_record_t`;
 * IBA 15.2.5). Record layouts are the record's own size (NodeRecord 108 bytes, PortInfoRecord 68,
 * ...); see sa.ts for how they sit in a response and how component masks derive from the tables.
 */
import {
  array,
  bytes,
  defineLayout,
  gid,
  hex,
  reserved,
  str,
  struct,
  u64,
  uint,
  type AnyLayout,
  type ArrayField,
  type Layout,
  type LayoutValue,
} from './layout.js';
import { DecodeError, LayoutError } from './errors.js';
import {
  GUIDInfo,
  LinearForwardingTable,
  MTU_NAMES,
  MulticastForwardingTable,
  NodeDescription,
  NodeInfo,
  PKeyTable,
  PortInfo,
  RandomForwardingTable,
  SLtoVLMappingTable,
  SMInfo,
  SwitchInfo,
  VLArbitrationTable,
} from './sma.js';
import { RATE_NAMES, SELECTOR_NAMES, SaAttr } from './sa-constants.js';

/**
 * The same layout with one array field split into one SA component per element (the GUIDs of a
 * GUIDInfoRecord are eight components, but GUIDInfo as an SMA attribute numbers no components).
 */
function withElementComponents<V>(layout: Layout<V>, field: string): Layout<V> {
  const f = layout.fields[field];
  if (!f || f.kind !== 'array' || f.stride !== f.elem.width) {
    throw new LayoutError(layout.name, `${field} is not a packed array`);
  }
  const split: ArrayField = { ...f, cm: f.count };
  return defineLayout(layout.name, layout.byteLength, { ...layout.fields, [field]: split }) as unknown as Layout<V>;
}

// ---------- records ----------

/** NodeRecord (15.2.5.2): RID (LID), NodeInfo, NodeDescription. 108 bytes. */
export const NodeRecord = defineLayout('NodeRecord', 108, {
  lid: uint(0, 16, { label: 'LID' }),
  reserved1: reserved(16, 16),
  nodeInfo: struct(32, NodeInfo),
  nodeDescription: struct(352, NodeDescription),
});
export type NodeRecord = LayoutValue<typeof NodeRecord>;

/** PortInfoRecord (15.2.5.3): RID (EndportLID, PortNum, Options), PortInfo. 68 bytes (stride 72). */
export const PortInfoRecord = defineLayout('PortInfoRecord', 68, {
  endportLid: uint(0, 16, { label: 'EndportLID' }),
  portNum: uint(16, 8, { label: 'PortNum' }),
  options: hex(24, 8, { label: 'Options' }),
  portInfo: struct(32, PortInfo),
});
export type PortInfoRecord = LayoutValue<typeof PortInfoRecord>;

/** SLtoVLMappingTableRecord (15.2.5.4): LID, InputPortNum, OutputPortNum, SLtoVLMappingTable. 16 bytes. */
export const SLtoVLMappingTableRecord = defineLayout('SLtoVLMappingTableRecord', 16, {
  lid: uint(0, 16, { label: 'LID' }),
  inputPortNum: uint(16, 8, { label: 'InputPortNum' }),
  outputPortNum: uint(24, 8, { label: 'OutputPortNum' }),
  reserved1: reserved(32, 32),
  slToVlTable: struct(64, SLtoVLMappingTable),
});
export type SLtoVLMappingTableRecord = LayoutValue<typeof SLtoVLMappingTableRecord>;

/** SwitchInfoRecord (15.2.5.5): LID, SwitchInfo. 24 bytes. */
export const SwitchInfoRecord = defineLayout('SwitchInfoRecord', 24, {
  lid: uint(0, 16, { label: 'LID' }),
  reserved1: reserved(16, 16),
  switchInfo: struct(32, SwitchInfo),
});
export type SwitchInfoRecord = LayoutValue<typeof SwitchInfoRecord>;

/** LinearForwardingTableRecord (15.2.5.6): LID, BlockNum, one LFT block. 72 bytes. */
export const LinearForwardingTableRecord = defineLayout('LinearForwardingTableRecord', 72, {
  lid: uint(0, 16, { label: 'LID' }),
  blockNum: uint(16, 16, { label: 'BlockNum' }),
  reserved1: reserved(32, 32),
  lft: struct(64, LinearForwardingTable),
});
export type LinearForwardingTableRecord = LayoutValue<typeof LinearForwardingTableRecord>;

/** RandomForwardingTableRecord (15.2.5.7): LID, BlockNum, one RFT block. 72 bytes. */
export const RandomForwardingTableRecord = defineLayout('RandomForwardingTableRecord', 72, {
  lid: uint(0, 16, { label: 'LID' }),
  blockNum: uint(16, 16, { label: 'BlockNum' }),
  reserved1: reserved(32, 32),
  rft: struct(64, RandomForwardingTable),
});
export type RandomForwardingTableRecord = LayoutValue<typeof RandomForwardingTableRecord>;

/** MulticastForwardingTableRecord (15.2.5.8): LID, Position, BlockNum, one MFT block. 72 bytes. */
export const MulticastForwardingTableRecord = defineLayout('MulticastForwardingTableRecord', 72, {
  lid: uint(0, 16, { label: 'LID' }),
  position: uint(16, 4, { label: 'Position' }),
  reserved1: reserved(20, 3),
  blockNum: uint(23, 9, { label: 'BlockNum' }),
  reserved2: reserved(32, 32),
  mft: struct(64, MulticastForwardingTable),
});
export type MulticastForwardingTableRecord = LayoutValue<typeof MulticastForwardingTableRecord>;

/** VLArbitrationTableRecord (15.2.5.9): LID, OutputPortNum, BlockNum, one VLArb block. 72 bytes. */
export const VLArbitrationTableRecord = defineLayout('VLArbitrationTableRecord', 72, {
  lid: uint(0, 16, { label: 'LID' }),
  outputPortNum: uint(16, 8, { label: 'OutputPortNum' }),
  blockNum: uint(24, 8, { label: 'BlockNum' }),
  reserved1: reserved(32, 32),
  vlArbTable: struct(64, VLArbitrationTable),
});
export type VLArbitrationTableRecord = LayoutValue<typeof VLArbitrationTableRecord>;

/** SMInfoRecord (15.2.5.10): LID, SMInfo. 25 bytes (stride 32). */
export const SMInfoRecord = defineLayout('SMInfoRecord', 25, {
  lid: uint(0, 16, { label: 'LID' }),
  reserved1: reserved(16, 16),
  smInfo: struct(32, SMInfo),
});
export type SMInfoRecord = LayoutValue<typeof SMInfoRecord>;

/** P_KeyTableRecord (15.2.5.11): LID, BlockNum, PortNum, one P_Key block. 72 bytes. */
export const PKeyTableRecord = defineLayout('PKeyTableRecord', 72, {
  lid: uint(0, 16, { label: 'LID' }),
  blockNum: uint(16, 16, { label: 'BlockNum' }),
  portNum: uint(32, 8, { label: 'PortNum' }),
  reserved1: reserved(40, 24),
  pkeyTable: struct(64, PKeyTable),
});
export type PKeyTableRecord = LayoutValue<typeof PKeyTableRecord>;

/**
 * InformInfo (13.4.8.3), `ib_inform_info_t`, 36 bytes. The last fields are a union on IsGeneric:
 * for a generic subscription `trapNumber` and `producerType` are TrapNumber and ProducerType
 * (NodeType); for a vendor one they are DeviceID and VendorID (see `informInfoView`).
 */
export const InformInfo = defineLayout('InformInfo', 36, {
  gid: gid(0, { label: 'GID' }),
  lidRangeBegin: hex(128, 16, { label: 'LIDRangeBegin' }),
  lidRangeEnd: hex(144, 16, { label: 'LIDRangeEnd' }),
  reserved1: reserved(160, 16),
  isGeneric: uint(176, 8, { label: 'IsGeneric' }),
  subscribe: uint(184, 8, { label: 'Subscribe' }),
  type: hex(192, 16, { label: 'Type' }),
  trapNumber: uint(208, 16, { label: 'TrapNumber/DeviceID' }),
  qpn: hex(224, 24, { label: 'QPN' }),
  reserved2: reserved(248, 3),
  respTimeValue: uint(251, 5, { label: 'RespTimeValue' }),
  reserved3: reserved(256, 8),
  producerType: hex(264, 24, { label: 'ProducerType/VendorID' }),
});
export type InformInfo = LayoutValue<typeof InformInfo>;

/** InformInfo with its union resolved by IsGeneric. */
export type InformInfoView =
  | { readonly kind: 'generic'; readonly trapNumber: number; readonly producerType: number }
  | { readonly kind: 'vendor'; readonly deviceId: number; readonly vendorId: number };
export function informInfoView(v: Pick<InformInfo, 'isGeneric' | 'trapNumber' | 'producerType'>): InformInfoView {
  return v.isGeneric
    ? { kind: 'generic', trapNumber: v.trapNumber, producerType: v.producerType }
    : { kind: 'vendor', deviceId: v.trapNumber, vendorId: v.producerType };
}
/** Wildcards of InformInfo fields (subscribe to all). */
export const INFORM_ALL_TRAPS = 0xffff;
export const INFORM_ALL_TYPES = 0xffff;
export const INFORM_ALL_PRODUCERS = 0xffffff;
export const INFORM_LID_RANGE_ALL = 0xffff;

/** InformInfoRecord (15.2.5.12): SubscriberGID, Enum, InformInfo. 60 bytes (stride 64). */
export const InformInfoRecord = defineLayout('InformInfoRecord', 60, {
  subscriberGid: gid(0, { label: 'SubscriberGID' }),
  enumeration: uint(128, 16, { label: 'Enum' }),
  reserved1: reserved(144, 48),
  informInfo: struct(192, InformInfo),
});
export type InformInfoRecord = LayoutValue<typeof InformInfoRecord>;

/** LinkRecord (15.2.5.13): FromLID, FromPort, ToPort, ToLID. 6 bytes (stride 8). */
export const LinkRecord = defineLayout('LinkRecord', 6, {
  fromLid: uint(0, 16, { label: 'FromLID' }),
  fromPort: uint(16, 8, { label: 'FromPort' }),
  toPort: uint(24, 8, { label: 'ToPort' }),
  toLid: uint(32, 16, { label: 'ToLID' }),
});
export type LinkRecord = LayoutValue<typeof LinkRecord>;

const GUIDInfoBlock = withElementComponents(GUIDInfo, 'guids');

/** GUIDInfoRecord (15.2.5.18): LID, BlockNum, one GUIDInfo block (each GUID one component). 72 bytes. */
export const GUIDInfoRecord = defineLayout('GUIDInfoRecord', 72, {
  lid: uint(0, 16, { label: 'LID' }),
  blockNum: uint(16, 8, { label: 'BlockNum' }),
  reserved1: reserved(24, 8),
  reserved2: reserved(32, 32),
  guidInfo: struct(64, GUIDInfoBlock),
});
export type GUIDInfoRecord = LayoutValue<typeof GUIDInfoRecord>;

/** ServiceRecord (15.2.5.14). Each ServiceData element is its own component. 176 bytes. */
export const ServiceRecord = defineLayout('ServiceRecord', 176, {
  serviceId: u64(0, 64, { label: 'ServiceID' }),
  serviceGid: gid(64, { label: 'ServiceGID' }),
  servicePKey: hex(192, 16, { label: 'ServiceP_Key' }),
  reserved1: reserved(208, 16),
  serviceLease: uint(224, 32, { label: 'ServiceLease' }),
  serviceKey: bytes(256, 16, { label: 'ServiceKey' }),
  serviceName: str(384, 64, { label: 'ServiceName' }),
  serviceData8: array(hex(896, 8), 16, 8, { label: 'ServiceData8', cm: 16 }),
  serviceData16: array(hex(1024, 16), 8, 16, { label: 'ServiceData16', cm: 8 }),
  serviceData32: array(hex(1152, 32), 4, 32, { label: 'ServiceData32', cm: 4 }),
  serviceData64: array(u64(1280, 64), 2, 64, { label: 'ServiceData64', cm: 2 }),
});
export type ServiceRecord = LayoutValue<typeof ServiceRecord>;
/** ServiceLease value meaning "infinite". */
export const SERVICE_LEASE_INFINITE = 0xffffffff;

/** PathRecord (15.2.5.16), `ib_path_rec_t`, 64 bytes. ServiceID is two 32-bit components. */
export const PathRecord = defineLayout('PathRecord', 64, {
  serviceId: u64(0, 64, { label: 'ServiceID', cm: 2 }),
  dgid: gid(64, { label: 'DGID' }),
  sgid: gid(192, { label: 'SGID' }),
  dlid: uint(320, 16, { label: 'DLID' }),
  slid: uint(336, 16, { label: 'SLID' }),
  rawTraffic: uint(352, 1, { label: 'RawTraffic' }),
  reserved1: reserved(353, 3),
  flowLabel: hex(356, 20, { label: 'FlowLabel' }),
  hopLimit: uint(376, 8, { label: 'HopLimit' }),
  tClass: hex(384, 8, { label: 'TClass' }),
  reversible: uint(392, 1, { label: 'Reversible' }),
  numbPath: uint(393, 7, { label: 'NumbPath' }),
  pKey: hex(400, 16, { label: 'P_Key' }),
  qosClass: hex(416, 12, { label: 'QoSClass' }),
  sl: uint(428, 4, { label: 'SL' }),
  mtuSelector: uint(432, 2, { label: 'MTUSelector', names: SELECTOR_NAMES }),
  mtu: uint(434, 6, { label: 'MTU', names: MTU_NAMES }),
  rateSelector: uint(440, 2, { label: 'RateSelector', names: SELECTOR_NAMES }),
  rate: uint(442, 6, { label: 'Rate', names: RATE_NAMES }),
  packetLifeTimeSelector: uint(448, 2, { label: 'PacketLifeTimeSelector', names: SELECTOR_NAMES }),
  packetLifeTime: uint(450, 6, { label: 'PacketLifeTime' }),
  preference: uint(456, 8, { label: 'Preference' }),
  reserved2: reserved(464, 48),
});
export type PathRecord = LayoutValue<typeof PathRecord>;

/** GIDs a MultiPathRecord can carry in one MAD (ib_types.h IB_MULTIPATH_MAX_GIDS). */
export const MULTIPATH_MAX_GIDS = 11;
/** Size of the fixed part of a MultiPathRecord (before the GID list). */
export const MULTIPATH_FIXED_SIZE = 24;

/**
 * MultiPathRecord (15.2.5.17), `ib_multipath_rec_t`: the 24-byte fixed part followed by
 * SGIDCount source GIDs then DGIDCount destination GIDs; sized here for the most that fit one MAD.
 * ServiceID is split on the wire (8 MSBs, 56 LSBs): see `multiPathServiceId`.
 */
export const MultiPathRecord = defineLayout('MultiPathRecord', MULTIPATH_FIXED_SIZE + 16 * MULTIPATH_MAX_GIDS, {
  rawTraffic: uint(0, 1, { label: 'RawTraffic' }),
  reserved1: reserved(1, 3),
  flowLabel: hex(4, 20, { label: 'FlowLabel' }),
  hopLimit: uint(24, 8, { label: 'HopLimit' }),
  tClass: hex(32, 8, { label: 'TClass' }),
  reversible: uint(40, 1, { label: 'Reversible' }),
  numbPath: uint(41, 7, { label: 'NumbPath' }),
  pKey: hex(48, 16, { label: 'P_Key' }),
  qosClass: hex(64, 12, { label: 'QoSClass' }),
  sl: uint(76, 4, { label: 'SL' }),
  mtuSelector: uint(80, 2, { label: 'MTUSelector', names: SELECTOR_NAMES }),
  mtu: uint(82, 6, { label: 'MTU', names: MTU_NAMES }),
  rateSelector: uint(88, 2, { label: 'RateSelector', names: SELECTOR_NAMES }),
  rate: uint(90, 6, { label: 'Rate', names: RATE_NAMES }),
  packetLifeTimeSelector: uint(96, 2, { label: 'PacketLifeTimeSelector', names: SELECTOR_NAMES }),
  packetLifeTime: uint(98, 6, { label: 'PacketLifeTime' }),
  serviceIdMsb: hex(104, 8, { label: 'ServiceID8MSB' }),
  independenceSelector: uint(112, 2, { label: 'IndependenceSelector' }),
  reserved2: reserved(114, 6),
  sgidCount: uint(120, 8, { label: 'SGIDCount' }),
  dgidCount: uint(128, 8, { label: 'DGIDCount' }),
  serviceIdLsb: u64(136, 56, { label: 'ServiceID56LSB' }),
  gids: array(gid(192), MULTIPATH_MAX_GIDS, 128, { label: 'GIDs' }),
});
export type MultiPathRecord = LayoutValue<typeof MultiPathRecord>;

/** The 64-bit ServiceID of a MultiPathRecord. */
export function multiPathServiceId(r: Pick<MultiPathRecord, 'serviceIdMsb' | 'serviceIdLsb'>): bigint {
  return (BigInt(r.serviceIdMsb) << 56n) | r.serviceIdLsb;
}
/** The split ServiceID fields for a 64-bit ServiceID. */
export function splitMultiPathServiceId(serviceId: bigint): { serviceIdMsb: number; serviceIdLsb: bigint } {
  return { serviceIdMsb: Number((serviceId >> 56n) & 0xffn), serviceIdLsb: serviceId & ((1n << 56n) - 1n) };
}

/** The source and destination GIDs of a MultiPathRecord. Throws DecodeError when the counts exceed the GIDs present. */
export function multiPathGids(r: Pick<MultiPathRecord, 'sgidCount' | 'dgidCount' | 'gids'>): { sgids: bigint[]; dgids: bigint[] } {
  if (r.sgidCount + r.dgidCount > r.gids.length) {
    throw new DecodeError(
      'MultiPathRecord',
      'gids',
      MULTIPATH_FIXED_SIZE,
      `SGIDCount ${r.sgidCount} + DGIDCount ${r.dgidCount} exceeds the ${r.gids.length} GIDs a single-MAD MultiPathRecord carries`,
    );
  }
  return { sgids: r.gids.slice(0, r.sgidCount), dgids: r.gids.slice(r.sgidCount, r.sgidCount + r.dgidCount) };
}

/** MCMemberRecord (15.2.5.17), `ib_member_rec_t`, 52 bytes (stride 56). */
export const MCMemberRecord = defineLayout('MCMemberRecord', 52, {
  mgid: gid(0, { label: 'MGID' }),
  portGid: gid(128, { label: 'PortGID' }),
  qKey: hex(256, 32, { label: 'Q_Key' }),
  mlid: hex(288, 16, { label: 'MLID' }),
  mtuSelector: uint(304, 2, { label: 'MTUSelector', names: SELECTOR_NAMES }),
  mtu: uint(306, 6, { label: 'MTU', names: MTU_NAMES }),
  tClass: hex(312, 8, { label: 'TClass' }),
  pKey: hex(320, 16, { label: 'P_Key' }),
  rateSelector: uint(336, 2, { label: 'RateSelector', names: SELECTOR_NAMES }),
  rate: uint(338, 6, { label: 'Rate', names: RATE_NAMES }),
  packetLifeTimeSelector: uint(344, 2, { label: 'PacketLifeTimeSelector', names: SELECTOR_NAMES }),
  packetLifeTime: uint(346, 6, { label: 'PacketLifeTime' }),
  sl: uint(352, 4, { label: 'SL' }),
  flowLabel: hex(356, 20, { label: 'FlowLabel' }),
  hopLimit: uint(376, 8, { label: 'HopLimit' }),
  scope: hex(384, 4, { label: 'Scope' }),
  joinState: hex(388, 4, { label: 'JoinState' }),
  proxyJoin: uint(392, 1, { label: 'ProxyJoin' }),
  reserved1: reserved(393, 23),
});
export type MCMemberRecord = LayoutValue<typeof MCMemberRecord>;

/** TraceRecord (15.2.5.19): one hop of a GetTraceTable answer. 46 bytes (stride 48). */
export const TraceRecord = defineLayout('TraceRecord', 46, {
  gidPrefix: u64(0, 64, { label: 'GIDPrefix' }),
  idGeneration: hex(64, 16, { label: 'IDGeneration' }),
  reserved1: reserved(80, 8),
  nodeType: uint(88, 8, { label: 'NodeType' }),
  nodeId: u64(96, 64, { label: 'NodeID' }),
  chassisId: u64(160, 64, { label: 'ChassisID' }),
  entryPortId: u64(224, 64, { label: 'EntryPortID' }),
  exitPortId: u64(288, 64, { label: 'ExitPortID' }),
  entryPort: uint(352, 8, { label: 'EntryPort' }),
  exitPort: uint(360, 8, { label: 'ExitPort' }),
});
export type TraceRecord = LayoutValue<typeof TraceRecord>;

/** Record layout of each SA attribute carried in the data area (InformInfo included). */
export const SA_RECORDS: Readonly<Record<number, AnyLayout>> = {
  [SaAttr.InformInfo]: InformInfo,
  [SaAttr.NodeRecord]: NodeRecord,
  [SaAttr.PortInfoRecord]: PortInfoRecord,
  [SaAttr.SLtoVLMappingTableRecord]: SLtoVLMappingTableRecord,
  [SaAttr.SwitchInfoRecord]: SwitchInfoRecord,
  [SaAttr.LinearForwardingTableRecord]: LinearForwardingTableRecord,
  [SaAttr.RandomForwardingTableRecord]: RandomForwardingTableRecord,
  [SaAttr.MulticastForwardingTableRecord]: MulticastForwardingTableRecord,
  [SaAttr.SMInfoRecord]: SMInfoRecord,
  [SaAttr.LinkRecord]: LinkRecord,
  [SaAttr.GUIDInfoRecord]: GUIDInfoRecord,
  [SaAttr.ServiceRecord]: ServiceRecord,
  [SaAttr.PKeyTableRecord]: PKeyTableRecord,
  [SaAttr.PathRecord]: PathRecord,
  [SaAttr.VLArbitrationTableRecord]: VLArbitrationTableRecord,
  [SaAttr.MCMemberRecord]: MCMemberRecord,
  [SaAttr.TraceRecord]: TraceRecord,
  [SaAttr.MultiPathRecord]: MultiPathRecord,
  [SaAttr.InformInfoRecord]: InformInfoRecord,
};

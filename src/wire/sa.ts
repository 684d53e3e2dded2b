/**
 * Subnet Administration (class 0x03) wire format: the SA MAD (common header, RMPP header, SA
 * header, 200 data bytes), SA attribute IDs and status codes, and every SA record as one
 * declarative layout in today's wire format (ib_types.h `ib_*_record_t`; IBA 15.2.5).
 *
 * Record layouts are the record's own size (NodeRecord 108 bytes, PortInfoRecord 68, ...). In a
 * response the records sit `AttributeOffset * 8` bytes apart (`recordStride`): the size rounded
 * up to 8 bytes, the pad zero.
 *
 * Component masks derive from the tables (see layout.ts): every field, reserved included, is a
 * component in table order; embedded SMA attributes contribute their own components in place;
 * `cm: n` splits a field (PathRecord.ServiceID, ServiceRecord.ServiceData arrays, the GUIDs of a
 * GUIDInfoRecord). test/wire-sa.test.ts checks every `IB_*_COMPMASK_*` constant of ib_types.h.
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
  type DeepPartial,
  type Layout,
  type LayoutValue,
} from './layout.js';
import { DecodeError, EncodeError } from './errors.js';
import { defineView, type View } from './view.js';
import { MAD_SIZE, MadHeader, MgmtClass, Method } from './mad.js';
import { RMPP_HEADER_OFFSET, RmppFlag, RmppHeader, RmppType, RMPP_VERSION, RMPP_NO_RESP_TIME } from './rmpp.js';
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

// ---------- constants ----------

/** SA class version (IBA 1.1 and later). */
export const SA_CLASS_VERSION = 2;
/** Byte offset of the SA header (SM_Key) in an SA MAD. */
export const SA_HEADER_OFFSET = 36;
/** Size of the SA header: SM_Key, AttributeOffset, reserved, ComponentMask. Repeated in every RMPP segment. */
export const SA_HEADER_SIZE = 20;
/** Byte offset of the SA data (records) in an SA MAD. */
export const SA_DATA_OFFSET = 56;
/** SA data bytes in one 256-byte MAD. */
export const SA_DATA_SIZE = 200;
/** Q_Key of the SA's QP1 (GSI). */
export const SA_QKEY = 0x80010000;

/** SA attribute IDs (ib_types.h IB_MAD_ATTR_*, umad_sa.h UMAD_SA_ATTR_*). */
export const SaAttr = {
  ClassPortInfo: 0x0001,
  Notice: 0x0002,
  InformInfo: 0x0003,
  NodeRecord: 0x0011,
  PortInfoRecord: 0x0012,
  SLtoVLMappingTableRecord: 0x0013,
  SwitchInfoRecord: 0x0014,
  LinearForwardingTableRecord: 0x0015,
  RandomForwardingTableRecord: 0x0016,
  MulticastForwardingTableRecord: 0x0017,
  SMInfoRecord: 0x0018,
  LinkSpeedWidthPairsTableRecord: 0x0019,
  LinkRecord: 0x0020,
  GUIDInfoRecord: 0x0030,
  ServiceRecord: 0x0031,
  PKeyTableRecord: 0x0033,
  PathRecord: 0x0035,
  VLArbitrationTableRecord: 0x0036,
  MCMemberRecord: 0x0038,
  TraceRecord: 0x0039,
  MultiPathRecord: 0x003a,
  ServiceAssociationRecord: 0x003b,
  InformInfoRecord: 0x00f3,
} as const;

/**
 * SA status codes: the full 16-bit MAD status field (the SA-specific code sits in bits 8..14).
 * The generic MAD codes (MadStatus in mad.ts) may be OR-ed in the low byte.
 */
export const SaStatus = {
  Success: 0x0000,
  NoResources: 0x0100,
  ReqInvalid: 0x0200,
  NoRecords: 0x0300,
  TooManyRecords: 0x0400,
  ReqInvalidGid: 0x0500,
  ReqInsufficientComponents: 0x0600,
  ReqDenied: 0x0700,
  PrioritySuggested: 0x0800,
} as const;
export const SA_STATUS_NAMES: Readonly<Record<number, string>> = {
  0x0000: 'Success',
  0x0100: 'ERR_NO_RESOURCES',
  0x0200: 'ERR_REQ_INVALID',
  0x0300: 'ERR_NO_RECORDS',
  0x0400: 'ERR_TOO_MANY_RECORDS',
  0x0500: 'ERR_REQ_INVALID_GID',
  0x0600: 'ERR_REQ_INSUFFICIENT_COMPONENTS',
  0x0700: 'ERR_REQ_DENIED',
  0x0800: 'ERR_STATUS_PRIO_SUGGESTED',
};
/** Mask of the SA-specific code in the status field. */
export const SA_STATUS_CLASS_MASK = 0xff00;

/** Selector of PathRecord / MCMemberRecord MTU, Rate and PacketLifeTime. */
export const Selector = {
  GreaterThan: 0,
  LessThan: 1,
  Exactly: 2,
  /** Largest available (MTU, rate) / smallest available (packet lifetime). */
  Best: 3,
} as const;

/** MCMemberRecord JoinState bits. */
export const JoinState = {
  FullMember: 0x1,
  NonMember: 0x2,
  SendOnlyNonMember: 0x4,
  SendOnlyFullMember: 0x8,
} as const;

/** Multicast GID scopes (MGID bits 12..15 of the first 16 bits). */
export const McScope = { LinkLocal: 0x2, SiteLocal: 0x5, OrgLocal: 0x8, Global: 0xe } as const;

/** PathRecord / MCMemberRecord Rate enumeration (IB_PATH_RECORD_RATE_*), as Gb/s. */
export const RATE_NAMES: Readonly<Record<number, string>> = {
  2: '2.5 Gbps',
  3: '10 Gbps',
  4: '30 Gbps',
  5: '5 Gbps',
  6: '20 Gbps',
  7: '40 Gbps',
  8: '60 Gbps',
  9: '80 Gbps',
  10: '120 Gbps',
  11: '14 Gbps',
  12: '56 Gbps',
  13: '112 Gbps',
  14: '168 Gbps',
  15: '25 Gbps',
  16: '100 Gbps',
  17: '200 Gbps',
  18: '300 Gbps',
  19: '28 Gbps',
  20: '50 Gbps',
  21: '400 Gbps',
  22: '600 Gbps',
};
const SELECTOR_NAMES: Readonly<Record<number, string>> = { 0: 'GreaterThan', 1: 'LessThan', 2: 'Exactly', 3: 'Best' };

// ---------- helpers ----------

/** Bytes between consecutive records in an SA response: the record size rounded up to 8. */
export function recordStride(layout: AnyLayout): number {
  return Math.ceil(layout.byteLength / 8) * 8;
}
/** AttributeOffset (in 8-byte words) for records of `layout`. */
export function attributeOffsetOf(layout: AnyLayout): number {
  return recordStride(layout) / 8;
}

/**
 * The same layout with one array field split into one SA component per element (the GUIDs of a
 * GUIDInfoRecord are eight components, but GUIDInfo as an SMA attribute numbers no components).
 */
function withElementComponents<V>(layout: Layout<V>, field: string): Layout<V> {
  const f = layout.fields[field];
  if (!f || f.kind !== 'array' || f.stride !== f.elem.width) {
    throw new Error(`layout ${layout.name}: ${field} is not a packed array`);
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

// ---------- the SA MAD ----------

/** The SA header that follows the RMPP header (and opens every RMPP segment). */
export const SaHeader = defineLayout('SaHeader', SA_HEADER_SIZE, {
  smKey: u64(0, 64, { label: 'SM_Key' }),
  attributeOffset: uint(64, 16, { label: 'AttributeOffset' }),
  reserved1: reserved(80, 16),
  componentMask: u64(96, 64, { label: 'ComponentMask' }),
});
export type SaHeader = LayoutValue<typeof SaHeader>;
/** A view of the SA header: `SaHeaderView.over(mad, SA_HEADER_OFFSET)`. */
export const SaHeaderView = defineView(SaHeader);
export type SaHeaderView = View<typeof SaHeader.fields>;

/** The fixed 56 bytes of every SA MAD: common header, RMPP header, SA header. */
export const SaMadHeader = defineLayout('SaMadHeader', SA_DATA_OFFSET, {
  header: struct(0, MadHeader),
  rmpp: struct(RMPP_HEADER_OFFSET * 8, RmppHeader),
  sa: struct(SA_HEADER_OFFSET * 8, SaHeader),
});
export type SaMadHeader = LayoutValue<typeof SaMadHeader>;

/** One 256-byte SA MAD. */
export const SaMad = defineLayout('SaMad', MAD_SIZE, {
  header: struct(0, MadHeader),
  rmpp: struct(RMPP_HEADER_OFFSET * 8, RmppHeader),
  sa: struct(SA_HEADER_OFFSET * 8, SaHeader),
  data: bytes(SA_DATA_OFFSET * 8, SA_DATA_SIZE, { label: 'SAData' }),
});
export type SaMad = LayoutValue<typeof SaMad>;

/** A decoded SA message: the fixed headers and the data area (200 bytes for one MAD, any length once RMPP-reassembled). */
export interface SaMessage extends SaMadHeader {
  readonly data: Uint8Array;
}

/** Records of one layout for `encodeSaMad`. */
export interface SaRecords<V> {
  readonly layout: Layout<V>;
  readonly records: readonly DeepPartial<V>[];
}

/** What `encodeSaMad` takes: the headers (any omitted field zero; see defaults there). */
export interface SaMadInit {
  readonly header: DeepPartial<MadHeader>;
  readonly rmpp?: DeepPartial<RmppHeader>;
  readonly sa?: DeepPartial<SaHeader>;
}

/**
 * Encode an SA message. `payload` is the data area: raw bytes, or records of one layout placed
 * `recordStride` bytes apart (AttributeOffset then defaults to that stride). The result is one
 * 256-byte MAD when the data fits 200 bytes (zero padded), otherwise the whole unsegmented message
 * (56 + data bytes) for the RMPP sender to cut. Defaults: baseVersion 1, mgmtClass SubnAdm,
 * classVersion 2. Throws EncodeError.
 */
export function encodeSaMad<V>(init: SaMadInit, payload?: Uint8Array | SaRecords<V>): Uint8Array {
  let data: Uint8Array;
  let attrOffset: number | undefined;
  if (payload === undefined) data = new Uint8Array(0);
  else if (payload instanceof Uint8Array) data = payload;
  else {
    const stride = recordStride(payload.layout);
    data = new Uint8Array(stride * payload.records.length);
    payload.records.forEach((r, i) => payload.layout.encode(r, data, i * stride));
    attrOffset = stride / 8;
  }
  const size = Math.max(MAD_SIZE, SA_DATA_OFFSET + data.length);
  const buf = new Uint8Array(size);
  const header: DeepPartial<MadHeader> = { baseVersion: 1, mgmtClass: MgmtClass.SubnAdm, classVersion: SA_CLASS_VERSION, ...init.header };
  const sa: DeepPartial<SaHeader> = { ...(attrOffset !== undefined ? { attributeOffset: attrOffset } : {}), ...init.sa };
  SaMadHeader.encode({ header, rmpp: init.rmpp ?? {}, sa }, buf, 0);
  buf.set(data, SA_DATA_OFFSET);
  return buf;
}

/** Decode an SA message of at least 56 bytes (a MAD, or an RMPP-reassembled message). Throws only DecodeError. */
export function decodeSaMad(buf: Uint8Array): SaMessage {
  if (!(buf instanceof Uint8Array)) throw new DecodeError('SaMad', '', 0, 'input is not a byte array');
  if (buf.length < SA_DATA_OFFSET) {
    throw new DecodeError('SaMad', '', 0, `an SA MAD needs at least ${SA_DATA_OFFSET} bytes (headers), ${buf.length} available`);
  }
  const h = SaMadHeader.decode(buf, 0);
  return { ...h, data: buf.slice(SA_DATA_OFFSET) };
}

/**
 * Number of records in the data of an SA response, for records of `layout`:
 * GetResp (and Get, Set, Delete, DeleteResp, Report) carries exactly one; a single-segment RMPP message (First and Last set) says its length
 * in PayloadLength (SA header included); otherwise (a reassembled message) the data length counts.
 * Throws DecodeError when AttributeOffset is too small for the record or PayloadLength is inconsistent.
 */
export function saRecordCount(msg: SaMessage, layout: AnyLayout): number {
  const stride = saStride(msg, layout);
  if (!TABLE_METHODS.has(msg.header.method)) return msg.data.length >= layout.byteLength ? 1 : 0;
  let avail = msg.data.length;
  const r = msg.rmpp;
  const single = RmppFlag.First | RmppFlag.Last | RmppFlag.Active;
  if (r.type === RmppType.Data && (r.flags & single) === single) {
    if (r.data2 < SA_HEADER_SIZE || r.data2 - SA_HEADER_SIZE > msg.data.length) {
      throw new DecodeError('SaMad', 'rmpp.data2', RMPP_HEADER_OFFSET + 8, `PayloadLength ${r.data2} inconsistent with ${msg.data.length} data bytes`);
    }
    avail = r.data2 - SA_HEADER_SIZE;
  }
  return avail < layout.byteLength ? 0 : Math.floor((avail - layout.byteLength) / stride) + 1;
}
const TABLE_METHODS: ReadonlySet<number> = new Set([Method.GetTable, Method.GetTableResp, Method.GetTraceTable, Method.GetMulti, Method.GetMultiResp]);

function saStride(msg: SaMessage, layout: AnyLayout): number {
  const offset = msg.sa.attributeOffset;
  const stride = offset === 0 ? recordStride(layout) : offset * 8;
  if (stride < layout.byteLength) {
    throw new DecodeError('SaMad', 'sa.attributeOffset', SA_HEADER_OFFSET + 8, `AttributeOffset ${offset} (${stride} bytes) is shorter than a ${layout.name} (${layout.byteLength} bytes)`);
  }
  return stride;
}

/** Decode the records of an SA message (count from `saRecordCount` unless given). Throws only DecodeError. */
export function decodeSaRecords<V>(msg: SaMessage, layout: Layout<V>, count?: number): V[] {
  const stride = saStride(msg, layout);
  const n = count ?? saRecordCount(msg, layout);
  if (!Number.isInteger(n) || n < 0) throw new DecodeError('SaMad', 'data', SA_DATA_OFFSET, `invalid record count ${String(n)}`);
  const out: V[] = [];
  for (let i = 0; i < n; i++) {
    const off = i * stride;
    if (off + layout.byteLength > msg.data.length) {
      throw new DecodeError(layout.name, '', SA_DATA_OFFSET + off, `record ${i} of ${n} extends past the ${msg.data.length} data bytes`);
    }
    out.push(layout.decode(msg.data, off));
  }
  return out;
}

/**
 * RMPP header of a response sent as one RMPP message of `dataLength` data bytes whose sender will
 * not segment further (fits one MAD): DATA, Active|First|Last, segment 1, PayloadLength = SA header + data.
 * For longer messages the RMPP sender in rpc/ sets these per segment.
 */
export function saSingleSegmentRmpp(dataLength: number, respTime: number = RMPP_NO_RESP_TIME): RmppHeader {
  if (dataLength < 0 || dataLength > SA_DATA_SIZE) {
    throw new EncodeError('RmppHeader', 'data2', `${dataLength} data bytes do not fit one SA MAD (${SA_DATA_SIZE})`);
  }
  return {
    version: RMPP_VERSION,
    type: RmppType.Data,
    respTime,
    flags: RmppFlag.Active | RmppFlag.First | RmppFlag.Last,
    status: 0,
    data1: 1,
    data2: SA_HEADER_SIZE + dataLength,
  };
}

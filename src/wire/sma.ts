/**
 * SMA attribute layouts (class 0x01 / 0x81 SMP data, and the same structures embedded in SA
 * records). One `defineLayout` table per attribute, current wire format: the authority is
 * `ib_types.h` (`ib_node_info_t`, `ib_port_info_t`, `ib_switch_info_t`, ...) and the bit offsets
 * of libibmad's field table; dump labels are the names smpquery prints.
 *
 * Bit numbering: bit 0 is the most significant bit of byte 0 (IBA convention), offsets are from
 * the start of the attribute.
 */
import { array, bytes, defineLayout, hex, reserved, str, struct, u64, uint, type AnyLayout, type LayoutValue } from './layout.js';
import { NODE_TYPE_NAMES, PORT_STATE_NAMES, SmpAttr } from './mad.js';
import { NoticeSmp } from './notice.js';
import { VPORT_ATTRIBUTES } from './vport.js';

// ---------- value names (as libibmad's dumpers print them) ----------

/** Names of all values of a bit mask of `width` bits: set flags joined with " or ". (Built at
 * module load, on every command's start-up: plain loops, no array per value.) */
function flagNames(width: number, flags: readonly (readonly [number, string])[], suffix?: (v: number) => string): Record<number, string> {
  const out: Record<number, string> = {};
  let known = 0;
  for (const [bit] of flags) known |= bit;
  for (let v = 0; v < 2 ** width; v++) {
    let s = '';
    for (const [bit, n] of flags) if ((v & bit) !== 0) s = s ? s + ' or ' + n : n;
    if (v === 0 || (v & ~known) !== 0) s = (s ? s + ' or ' : '') + 'undefined (' + v + ')';
    out[v] = suffix ? s + suffix(v) : s;
  }
  return out;
}

const WIDTH_FLAGS = [
  [0x1, '1X'],
  [0x2, '4X'],
  [0x4, '8X'],
  [0x8, '12X'],
  [0x10, '2X'],
] as const;
const SPEED_FLAGS = [
  [0x1, '2.5 Gbps'],
  [0x2, '5.0 Gbps'],
  [0x4, '10.0 Gbps'],
] as const;
const SPEED_EXT_FLAGS = [
  [0x1, '14.0625 Gbps'],
  [0x2, '25.78125 Gbps'],
  [0x4, '53.125 Gbps'],
  [0x8, '106.25 Gbps'],
] as const;

/** LinkWidthActive: one width. */
export const LINK_WIDTH_NAMES: Readonly<Record<number, string>> = { 1: '1X', 2: '4X', 4: '8X', 8: '12X', 16: '2X' };
/** LinkWidthEnabled: a set of widths ("1X or 4X"). */
export const LINK_WIDTH_SET_NAMES: Readonly<Record<number, string>> = flagNames(8, WIDTH_FLAGS);
/** LinkWidthSupported: as enabled, flagging combinations beyond the base spec. */
export const LINK_WIDTH_SUPPORTED_NAMES: Readonly<Record<number, string>> = flagNames(8, WIDTH_FLAGS, (v) =>
  [1, 3, 7, 11, 15, 17, 19, 23, 27, 31].includes(v) || v >> 5 ? '' : ' (IBA extension)',
);
/** LinkSpeedActive: one speed (0 = the extended speed field applies). */
export const LINK_SPEED_NAMES: Readonly<Record<number, string>> = { 0: 'Extended speed', 1: '2.5 Gbps', 2: '5.0 Gbps', 4: '10.0 Gbps' };
/** LinkSpeedSupported / LinkSpeedEnabled: a set of speeds. */
export const LINK_SPEED_SET_NAMES: Readonly<Record<number, string>> = flagNames(4, SPEED_FLAGS, (v) =>
  [1, 3, 5, 7].includes(v) || v >> 3 ? '' : ' (IBA extension)',
);
export const LINK_SPEED_EXT_NAMES: Readonly<Record<number, string>> = {
  0: 'No Extended Speed',
  1: '14.0625 Gbps',
  2: '25.78125 Gbps',
  4: '53.125 Gbps',
  8: '106.25 Gbps',
};
const speedExtSet = (width: number): Record<number, string> => ({ ...flagNames(width, SPEED_EXT_FLAGS), 0: '0' });
export const LINK_SPEED_EXT_SET_NAMES: Readonly<Record<number, string>> = speedExtSet(4);
export const LINK_SPEED_EXT_ENABLED_NAMES: Readonly<Record<number, string>> = { ...speedExtSet(5), 30: 'Extended link speeds disabled' };
/** LinkSpeedExtActive2 (libibmad mad_dump_linkspeedext2). */
export const LINK_SPEED_EXT2_NAMES: Readonly<Record<number, string>> = { 0: 'No Extended Speed 2', 1: '212.5 Gbps' };
/** LinkSpeedExtSupported2 / LinkSpeedExtEnabled2 (libibmad dump_linkspeedext2; Enabled2 7 = set to Supported2). */
export const LINK_SPEED_EXT2_SET_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Array.from({ length: 8 }, (_, v) => [v, v === 0 ? '0' : (v & 1 ? '212.5 Gbps' : '') + (v >> 1 ? ` undefined (${v})` : '')]),
);
export const PHYS_PORT_STATE_NAMES: Readonly<Record<number, string>> = {
  0: 'NoChange',
  1: 'Sleep',
  2: 'Polling',
  3: 'Disabled',
  4: 'PortConfigurationTraining',
  5: 'LinkUp',
  6: 'LinkErrorRecovery',
  7: 'PhyTest',
};
export const LINK_DOWN_DEFAULT_STATE_NAMES: Readonly<Record<number, string>> = { 0: 'NoChange', 1: 'Sleep', 2: 'Polling' };
/** MTU enumeration (NeighborMTU, MTUCap). */
export const MTU_NAMES: Readonly<Record<number, string>> = { 1: '256', 2: '512', 3: '1024', 4: '2048', 5: '4096' };
export const VL_CAP_NAMES: Readonly<Record<number, string>> = { 1: 'VL0', 2: 'VL0-1', 3: 'VL0-3', 4: 'VL0-7', 5: 'VL0-14' };
export const OPER_VLS_NAMES: Readonly<Record<number, string>> = { 0: 'No change', ...VL_CAP_NAMES };
export const SM_STATE_NAMES: Readonly<Record<number, string>> = { 0: 'NotActive', 1: 'Discovering', 2: 'Standby', 3: 'Master' };
/** 4-bit values printed as libibmad prints a one-byte hex field ("0x00"). */
const BYTE_HEX_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Array.from({ length: 16 }, (_, v) => [v, '0x' + v.toString(16).padStart(2, '0')]),
);

export const SmState = { NotActive: 0, Discovering: 1, Standby: 2, Master: 3 } as const;

/** PortInfo:CapabilityMask bits (host-order values of the 32-bit field). */
export const PortCap = {
  IsSM: 1 << 1,
  IsNoticeSupported: 1 << 2,
  IsTrapSupported: 1 << 3,
  IsOptionalIPDSupported: 1 << 4,
  IsAutomaticMigrationSupported: 1 << 5,
  IsSLMappingSupported: 1 << 6,
  IsMKeyNVRAM: 1 << 7,
  IsPKeyNVRAM: 1 << 8,
  IsLedInfoSupported: 1 << 9,
  IsSMDisabled: 1 << 10,
  IsSystemImageGUIDSupported: 1 << 11,
  IsPKeySwitchExternalPortTrapSupported: 1 << 12,
  IsCableInfoSupported: 1 << 13,
  IsExtendedSpeedsSupported: 1 << 14,
  IsCapabilityMask2Supported: 1 << 15,
  IsCommunicationManagementSupported: 1 << 16,
  IsSNMPTunnelingSupported: 1 << 17,
  IsReinitSupported: 1 << 18,
  IsDeviceManagementSupported: 1 << 19,
  IsVendorClassSupported: 1 << 20,
  IsDRNoticeSupported: 1 << 21,
  IsCapabilityMaskNoticeSupported: 1 << 22,
  IsBootManagementSupported: 1 << 23,
  IsLinkRoundTripLatencySupported: 1 << 24,
  IsClientReregistrationSupported: 1 << 25,
  IsOtherLocalChangesNoticeSupported: 1 << 26,
  IsLinkSpeedWidthPairsTableSupported: 1 << 27,
  IsVendorSpecificMadsTableSupported: 1 << 28,
  IsMcastPkeyTrapSuppressionSupported: 1 << 29,
  IsMulticastFDBTopSupported: 1 << 30,
  IsHierarchyInfoSupported: 2 ** 31,
} as const;

/** PortInfo:CapabilityMask2 bits. */
export const PortCap2 = {
  IsSetNodeDescriptionSupported: 1 << 0,
  IsPortInfoExtendedSupported: 1 << 1,
  IsVirtualizationSupported: 1 << 2,
  IsSwitchPortStateTableSupported: 1 << 3,
  IsLinkWidth2xSupported: 1 << 4,
  IsLinkSpeedHDRSupported: 1 << 5,
  IsMKeyProtectBitsExtSupported: 1 << 6,
  IsEnhancedTrap128Supported: 1 << 7,
  IsPartitionTopSupported: 1 << 8,
  IsEnhancedQoSArbiterSupported: 1 << 9,
  IsLinkSpeedNDRSupported: 1 << 10,
  /** Byte 56 (LinkSpeedExtActive2/Supported2/Enabled2) is valid. */
  IsExtendedSpeeds2Supported: 1 << 11,
  IsLinkSpeedXDRSupported: 1 << 12,
} as const;

// ---------- attributes ----------

/** NodeDescription (14.2.5.2): 64 bytes of UTF-8, not necessarily NUL terminated. */
export const NodeDescription = defineLayout('NodeDescription', 64, {
  description: str(0, 64, { label: 'NodeDesc' }),
});
export type NodeDescription = LayoutValue<typeof NodeDescription>;

/** NodeInfo (14.2.5.3), `ib_node_info_t`, 40 bytes. */
export const NodeInfo = defineLayout('NodeInfo', 40, {
  baseVersion: uint(0, 8, { label: 'BaseVers' }),
  classVersion: uint(8, 8, { label: 'ClassVers' }),
  nodeType: uint(16, 8, { label: 'NodeType', names: NODE_TYPE_NAMES }),
  numPorts: uint(24, 8, { label: 'NumPorts' }),
  systemImageGuid: u64(32, 64, { label: 'SystemGuid' }),
  nodeGuid: u64(96, 64, { label: 'Guid' }),
  portGuid: u64(160, 64, { label: 'PortGuid' }),
  partitionCap: uint(224, 16, { label: 'PartCap' }),
  deviceId: hex(240, 16, { label: 'DevId' }),
  revision: hex(256, 32, { label: 'Revision' }),
  localPortNum: uint(288, 8, { label: 'LocalPort' }),
  vendorId: hex(296, 24, { label: 'VendorId' }),
});
export type NodeInfo = LayoutValue<typeof NodeInfo>;

/** SwitchInfo (14.2.5.4), `ib_switch_info_t`, 20 bytes. */
export const SwitchInfo = defineLayout('SwitchInfo', 20, {
  linearFdbCap: uint(0, 16, { label: 'LinearFdbCap' }),
  randomFdbCap: uint(16, 16, { label: 'RandomFdbCap' }),
  multicastFdbCap: uint(32, 16, { label: 'McastFdbCap' }),
  linearFdbTop: uint(48, 16, { label: 'LinearFdbTop' }),
  defaultPort: uint(64, 8, { label: 'DefPort' }),
  defaultMulticastPrimaryPort: uint(72, 8, { label: 'DefMcastPrimPort' }),
  defaultMulticastNotPrimaryPort: uint(80, 8, { label: 'DefMcastNotPrimPort' }),
  lifeTimeValue: uint(88, 5, { label: 'LifeTime' }),
  portStateChange: uint(93, 1, { label: 'StateChange' }),
  optimizedSlToVlMappingProgramming: uint(94, 2, { label: 'OptSLtoVLMapping' }),
  lidsPerPort: uint(96, 16, { label: 'LidsPerPort' }),
  partitionEnforcementCap: uint(112, 16, { label: 'PartEnforceCap' }),
  inboundEnforcementCap: uint(128, 1, { label: 'InboundPartEnf' }),
  outboundEnforcementCap: uint(129, 1, { label: 'OutboundPartEnf' }),
  filterRawInboundCap: uint(130, 1, { label: 'FilterRawInbound' }),
  filterRawOutboundCap: uint(131, 1, { label: 'FilterRawOutbound' }),
  enhancedPort0: uint(132, 1, { label: 'EnhancedPort0' }),
  reserved1: reserved(133, 11),
  multicastFdbTop: hex(144, 16, { label: 'MulticastFDBTop' }),
});
export type SwitchInfo = LayoutValue<typeof SwitchInfo>;

/** GUIDInfo (14.2.5.5): a block of 8 port GUIDs. */
export const GUIDInfo = defineLayout('GUIDInfo', 64, {
  guids: array(u64(0, 64), 8, 64, { label: 'GUIDs' }),
});
export type GUIDInfo = LayoutValue<typeof GUIDInfo>;

/** PortInfo (14.2.5.6), `ib_port_info_t`, 64 bytes including CapabilityMask2 and the extended speeds. */
export const PortInfo = defineLayout('PortInfo', 64, {
  mkey: u64(0, 64, { label: 'Mkey' }),
  gidPrefix: u64(64, 64, { label: 'GidPrefix' }),
  lid: uint(128, 16, { label: 'Lid' }),
  masterSmLid: uint(144, 16, { label: 'SMLid' }),
  capabilityMask: hex(160, 32, { label: 'CapMask' }),
  diagCode: hex(192, 16, { label: 'DiagCode' }),
  mkeyLeasePeriod: uint(208, 16, { label: 'MkeyLeasePeriod' }),
  localPortNum: uint(224, 8, { label: 'LocalPort' }),
  linkWidthEnabled: uint(232, 8, { label: 'LinkWidthEnabled', names: LINK_WIDTH_SET_NAMES }),
  linkWidthSupported: uint(240, 8, { label: 'LinkWidthSupported', names: LINK_WIDTH_SUPPORTED_NAMES }),
  linkWidthActive: uint(248, 8, { label: 'LinkWidthActive', names: LINK_WIDTH_NAMES }),
  linkSpeedSupported: uint(256, 4, { label: 'LinkSpeedSupported', names: LINK_SPEED_SET_NAMES }),
  portState: uint(260, 4, { label: 'LinkState', names: PORT_STATE_NAMES }),
  portPhysicalState: uint(264, 4, { label: 'PhysLinkState', names: PHYS_PORT_STATE_NAMES }),
  linkDownDefaultState: uint(268, 4, { label: 'LinkDownDefState', names: LINK_DOWN_DEFAULT_STATE_NAMES }),
  mkeyProtectBits: uint(272, 2, { label: 'ProtectBits' }),
  reserved1: reserved(274, 3),
  lmc: uint(277, 3, { label: 'LMC' }),
  linkSpeedActive: uint(280, 4, { label: 'LinkSpeedActive', names: LINK_SPEED_NAMES }),
  linkSpeedEnabled: uint(284, 4, { label: 'LinkSpeedEnabled', names: LINK_SPEED_SET_NAMES }),
  neighborMtu: uint(288, 4, { label: 'NeighborMTU', names: MTU_NAMES }),
  masterSmSl: uint(292, 4, { label: 'SMSL' }),
  vlCap: uint(296, 4, { label: 'VLCap', names: VL_CAP_NAMES }),
  initType: hex(300, 4, { label: 'InitType', names: BYTE_HEX_NAMES }),
  vlHighLimit: uint(304, 8, { label: 'VLHighLimit' }),
  vlArbitrationHighCap: uint(312, 8, { label: 'VLArbHighCap' }),
  vlArbitrationLowCap: uint(320, 8, { label: 'VLArbLowCap' }),
  initTypeReply: hex(328, 4, { label: 'InitReply', names: BYTE_HEX_NAMES }),
  mtuCap: uint(332, 4, { label: 'MtuCap', names: MTU_NAMES }),
  vlStallCount: uint(336, 3, { label: 'VLStallCount' }),
  hoqLife: uint(339, 5, { label: 'HoqLife' }),
  operationalVls: uint(344, 4, { label: 'OperVLs', names: OPER_VLS_NAMES }),
  partitionEnforcementInbound: uint(348, 1, { label: 'PartEnforceInb' }),
  partitionEnforcementOutbound: uint(349, 1, { label: 'PartEnforceOutb' }),
  filterRawInbound: uint(350, 1, { label: 'FilterRawInb' }),
  filterRawOutbound: uint(351, 1, { label: 'FilterRawOutb' }),
  mkeyViolations: uint(352, 16, { label: 'MkeyViolations' }),
  pkeyViolations: uint(368, 16, { label: 'PkeyViolations' }),
  qkeyViolations: uint(384, 16, { label: 'QkeyViolations' }),
  guidCap: uint(400, 8, { label: 'GuidCap' }),
  clientReregister: uint(408, 1, { label: 'ClientReregister' }),
  multicastPkeyTrapSuppressionEnabled: uint(409, 2, { label: 'McastPkeyTrapSuppressionEnabled' }),
  subnetTimeout: uint(411, 5, { label: 'SubnetTimeout' }),
  reserved2: reserved(416, 3),
  respTimeValue: uint(419, 5, { label: 'RespTimeVal' }),
  localPhyErrors: uint(424, 4, { label: 'LocalPhysErr' }),
  overrunErrors: uint(428, 4, { label: 'OverrunErr' }),
  maxCreditHint: uint(432, 16, { label: 'MaxCreditHint' }),
  // byte 56 (IBA 1.7, libibmad's "More PortInfo fields (XDR)"): valid where CapabilityMask2 has
  // IsExtendedSpeeds2Supported; one SA component, as the reserved byte it was
  reserved3: reserved(448, 1),
  linkSpeedExtActive2: uint(449, 2, { label: 'LinkSpeedExtActive2', names: LINK_SPEED_EXT2_NAMES, cm: 0 }),
  linkSpeedExtSupported2: uint(451, 2, { label: 'LinkSpeedExtSupported2', names: LINK_SPEED_EXT2_SET_NAMES, cm: 0 }),
  linkSpeedExtEnabled2: uint(453, 3, { label: 'LinkSpeedExtEnabled2', names: LINK_SPEED_EXT2_SET_NAMES, cm: 0 }),
  linkRoundTripLatency: uint(456, 24, { label: 'RoundTrip' }),
  capabilityMask2: hex(480, 16, { label: 'CapabilityMask2' }),
  linkSpeedExtActive: uint(496, 4, { label: 'LinkSpeedExtActive', names: LINK_SPEED_EXT_NAMES }),
  linkSpeedExtSupported: uint(500, 4, { label: 'LinkSpeedExtSupported', names: LINK_SPEED_EXT_SET_NAMES }),
  reserved4: reserved(504, 3),
  linkSpeedExtEnabled: uint(507, 5, { label: 'LinkSpeedExtEnabled', names: LINK_SPEED_EXT_ENABLED_NAMES }),
});
export type PortInfo = LayoutValue<typeof PortInfo>;

/** P_KeyTable (14.2.5.7): a block of 32 P_Keys (bit 15 of each is the membership bit). */
export const PKeyTable = defineLayout('PKeyTable', 64, {
  pkeys: array(hex(0, 16), 32, 16, { label: 'PKeys' }),
});
export type PKeyTable = LayoutValue<typeof PKeyTable>;

/** SLtoVLMappingTable (14.2.5.8): VL of SL n in the nibble n (SL0 in the high nibble of byte 0). */
export const SLtoVLMappingTable = defineLayout('SLtoVLMappingTable', 8, {
  vls: array(uint(0, 4), 16, 4, { label: 'SLToVLMap' }),
});
export type SLtoVLMappingTable = LayoutValue<typeof SLtoVLMappingTable>;

/** One VLArbitrationTable entry: 4 reserved bits, VL (4 bits), Weight (8 bits). */
export const VLArbitrationEntry = defineLayout('VLArbitrationEntry', 2, {
  reserved1: reserved(0, 4),
  vl: uint(4, 4, { label: 'VL' }),
  weight: uint(8, 8, { label: 'Weight' }),
});
export type VLArbitrationEntry = LayoutValue<typeof VLArbitrationEntry>;

/** VLArbitrationTable (14.2.5.9): one block of 32 {VL, weight} entries. */
export const VLArbitrationTable = defineLayout('VLArbitrationTable', 64, {
  entries: array(struct(0, VLArbitrationEntry), 32, 16, { label: 'VLArbTbl' }),
});
export type VLArbitrationTable = LayoutValue<typeof VLArbitrationTable>;

/** LinearForwardingTable (14.2.5.10): egress port of 64 consecutive LIDs (255 = drop). */
export const LinearForwardingTable = defineLayout('LinearForwardingTable', 64, {
  ports: array(uint(0, 8), 64, 8, { label: 'LinearForwTbl' }),
});
export type LinearForwardingTable = LayoutValue<typeof LinearForwardingTable>;

/** One RandomForwardingTable entry (14.2.5.11): LID, Valid, LMC, 4 reserved bits, Port. */
export const RandomForwardingEntry = defineLayout('RandomForwardingEntry', 4, {
  lid: uint(0, 16, { label: 'LID' }),
  valid: uint(16, 1, { label: 'Valid' }),
  lmc: uint(17, 3, { label: 'LMC' }),
  reserved1: reserved(20, 4),
  port: uint(24, 8, { label: 'Port' }),
});
export type RandomForwardingEntry = LayoutValue<typeof RandomForwardingEntry>;

/** RandomForwardingTable (14.2.5.11): a block of 16 entries. */
export const RandomForwardingTable = defineLayout('RandomForwardingTable', 64, {
  entries: array(struct(0, RandomForwardingEntry), 16, 32, { label: 'RandomForwTbl' }),
});
export type RandomForwardingTable = LayoutValue<typeof RandomForwardingTable>;

/** MulticastForwardingTable (14.2.5.12): 32 port masks (16 ports each, bit n = port position*16+n). */
export const MulticastForwardingTable = defineLayout('MulticastForwardingTable', 64, {
  portMasks: array(hex(0, 16), 32, 16, { label: 'MulticastForwTbl' }),
});
export type MulticastForwardingTable = LayoutValue<typeof MulticastForwardingTable>;

/** The SM_Key an SM uses unless configured: OpenSM's default (`opensm -c` prints
 * `sm_key 0x0000000000000001`), so that ibsm and OpenSM at their defaults are SMs of one subnet. */
export const DEFAULT_SM_KEY = 1n;

/** SMInfo (14.2.5.13), `ib_sm_info_t`, 21 bytes. */
export const SMInfo = defineLayout('SMInfo', 21, {
  guid: u64(0, 64, { label: 'SmInfoGuid' }),
  smKey: u64(64, 64, { label: 'SmInfoKey' }),
  actCount: uint(128, 32, { label: 'SmActivity' }),
  priority: uint(160, 4, { label: 'SmPriority' }),
  smState: uint(164, 4, { label: 'SmState', names: SM_STATE_NAMES }),
});
export type SMInfo = LayoutValue<typeof SMInfo>;

/** VendorDiag (14.2.5.14): NextIndex, 16 reserved bits, 60 bytes of vendor data. */
export const VendorDiag = defineLayout('VendorDiag', 64, {
  nextIndex: uint(0, 16, { label: 'NextIndex' }),
  reserved1: reserved(16, 16),
  diagData: bytes(32, 60, { label: 'DiagData' }),
});
export type VendorDiag = LayoutValue<typeof VendorDiag>;

/** LEDInfo (14.2.5.15): LedMask in bit 0, 31 reserved bits. */
export const LEDInfo = defineLayout('LEDInfo', 4, {
  ledMask: uint(0, 1, { label: 'LedMask' }),
  reserved1: reserved(1, 31),
});
export type LEDInfo = LayoutValue<typeof LEDInfo>;

/** Layout of each SMA attribute by attribute ID (`SmpAttr`); Notice (trap data) is the 64-byte SMP form from notice.ts. */
export const SMA_ATTRIBUTES: Readonly<Record<number, AnyLayout>> = {
  [SmpAttr.Notice]: NoticeSmp,
  [SmpAttr.NodeDescription]: NodeDescription,
  [SmpAttr.NodeInfo]: NodeInfo,
  [SmpAttr.SwitchInfo]: SwitchInfo,
  [SmpAttr.GUIDInfo]: GUIDInfo,
  [SmpAttr.PortInfo]: PortInfo,
  [SmpAttr.PKeyTable]: PKeyTable,
  [SmpAttr.SLtoVLMappingTable]: SLtoVLMappingTable,
  [SmpAttr.VLArbitrationTable]: VLArbitrationTable,
  [SmpAttr.LinearForwardingTable]: LinearForwardingTable,
  [SmpAttr.RandomForwardingTable]: RandomForwardingTable,
  [SmpAttr.MulticastForwardingTable]: MulticastForwardingTable,
  [SmpAttr.SMInfo]: SMInfo,
  [SmpAttr.VendorDiag]: VendorDiag,
  [SmpAttr.LEDInfo]: LEDInfo,
  // SR-IOV vport attributes (vendor range 0xFFB0-0xFFB6, wire/vport.ts)
  ...VPORT_ATTRIBUTES,
};

/** Entries per block of the table attributes. */
export const LFT_BLOCK_SIZE = 64;
export const MFT_BLOCK_SIZE = 32;
export const MFT_PORTS_PER_POSITION = 16;
export const PKEY_BLOCK_SIZE = 32;
export const GUID_BLOCK_SIZE = 8;
export const VLARB_BLOCK_SIZE = 32;
export const RFT_BLOCK_SIZE = 16;

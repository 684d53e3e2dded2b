/** The MAD common header, SMP framing (LID-routed and directed-route) and the constants all classes share. */
import { array, defineLayout, hex, reserved, spliceFields, u64, uint, bytes, type LayoutValue } from './layout.js';
import { defineView, type View } from './view.js';
import { DecodeError } from './errors.js';

export const MAD_SIZE = 256;

export const MgmtClass = {
  SubnLid: 0x01,
  SubnDirected: 0x81,
  SubnAdm: 0x03,
  Perf: 0x04,
} as const;

export const Method = {
  Get: 0x01,
  Set: 0x02,
  Send: 0x03,
  Trap: 0x05,
  Report: 0x06,
  TrapRepress: 0x07,
  GetTable: 0x12,
  GetTraceTable: 0x13,
  GetMulti: 0x14,
  Delete: 0x15,
  GetResp: 0x81,
  ReportResp: 0x86,
  GetTableResp: 0x92,
  GetMultiResp: 0x94,
  DeleteResp: 0x95,
} as const;
export const METHOD_RESPONSE_BIT = 0x80;

/** The well-known GSI Q_Key (IBA 13.5.3.1): QP1's, the SA's, the PMA's. */
export const GSI_QKEY = 0x80010000;

/** SMA attribute IDs (class 0x01/0x81). */
export const SmpAttr = {
  Notice: 0x0002,
  NodeDescription: 0x0010,
  NodeInfo: 0x0011,
  SwitchInfo: 0x0012,
  GUIDInfo: 0x0014,
  PortInfo: 0x0015,
  PKeyTable: 0x0016,
  SLtoVLMappingTable: 0x0017,
  VLArbitrationTable: 0x0018,
  LinearForwardingTable: 0x0019,
  RandomForwardingTable: 0x001a,
  MulticastForwardingTable: 0x001b,
  SMInfo: 0x0020,
  VendorDiag: 0x0030,
  LEDInfo: 0x0031,
} as const;

/** MAD status codes (the 15-bit status field; bits 2-4 are the "code"). */
export const MadStatus = {
  Ok: 0x0000,
  Busy: 0x0001,
  RedirectRequired: 0x0002,
  BadVersion: 0x0004,
  UnsupportedMethod: 0x0008,
  UnsupportedMethodAttr: 0x000c,
  InvalidField: 0x001c,
} as const;

/** The 24-byte MAD common header. `status` is the full 16-bit field (for DR SMPs use SmpDr). */
export const MadHeader = defineLayout('MadHeader', 24, {
  baseVersion: uint(0, 8, { label: 'BaseVersion' }),
  mgmtClass: hex(8, 8, { label: 'MgmtClass' }),
  classVersion: uint(16, 8, { label: 'ClassVersion' }),
  method: hex(24, 8, { label: 'Method' }),
  status: hex(32, 16, { label: 'Status' }),
  classSpecific: hex(48, 16, { label: 'ClassSpecific' }),
  tid: u64(64, 64, { label: 'TransactionID' }),
  attrId: hex(128, 16, { label: 'AttributeID' }),
  reserved1: reserved(144, 16),
  attrMod: hex(160, 32, { label: 'AttributeModifier' }),
});
export type MadHeader = LayoutValue<typeof MadHeader>;
export const MadHeaderView = defineView(MadHeader);
export type MadHeaderView = View<typeof MadHeader.fields>;

// The fields both SMP framings add after the common header.
const SMP_MKEY = u64(192, 64, { label: 'M_Key' });
const SMP_DATA = bytes(512, 64, { label: 'SMPData' });

/** LID-routed SMP (class 0x01): the common header, M_Key, 32 reserved bytes, 64 bytes of SMP data. */
export const SmpLid = defineLayout('SmpLid', MAD_SIZE, {
  ...MadHeader.fields,
  mkey: SMP_MKEY,
  reserved2: reserved(256, 256),
  data: SMP_DATA,
  reserved3: reserved(1024, 1024),
});
export type SmpLid = LayoutValue<typeof SmpLid>;
export const SmpLidView = defineView(SmpLid);
export type SmpLidView = View<typeof SmpLid.fields>;

/** The common header of a directed-route SMP: Status is the D bit and a 15-bit status, ClassSpecific
 * the hop pointer and hop count (IBA 14.2.1.2). */
const DR_HEADER_FIELDS = spliceFields(
  spliceFields(MadHeader.fields, 'status', {
    direction: uint(32, 1, { label: 'D' }),
    status: hex(33, 15, { label: 'Status' }),
  }),
  'classSpecific',
  {
    hopPointer: uint(48, 8, { label: 'HopPointer' }),
    hopCount: uint(56, 8, { label: 'HopCount' }),
  },
);

/** Directed-route SMP (class 0x81). */
export const SmpDr = defineLayout('SmpDr', MAD_SIZE, {
  ...DR_HEADER_FIELDS,
  mkey: SMP_MKEY,
  drSlid: hex(256, 16, { label: 'DrSLID' }),
  drDlid: hex(272, 16, { label: 'DrDLID' }),
  reserved2: reserved(288, 224),
  data: SMP_DATA,
  initialPath: array(uint(1024, 8), 64, 8, { label: 'InitialPath' }),
  returnPath: array(uint(1536, 8), 64, 8, { label: 'ReturnPath' }),
});
export type SmpDr = LayoutValue<typeof SmpDr>;
export const SmpDrView = defineView(SmpDr);
export type SmpDrView = View<typeof SmpDr.fields>;

export const SMP_DATA_OFFSET = SMP_DATA.bit / 8;
export const SMP_DATA_SIZE = SMP_DATA.width / 8;
export const PERMISSIVE_LID = 0xffff;
/** The link-local subnet prefix (fe80::/64), every port's default GID prefix. */
export const DEFAULT_GID_PREFIX = 0xfe80000000000000n;

/** Read the common header of any MAD (checking only the length). */
export function peekHeader(buf: Uint8Array): MadHeader {
  if (buf.length < 24) throw new DecodeError('MadHeader', '', 0, `needs 24 bytes, ${buf.length} available`);
  return MadHeader.decode(buf, 0);
}

export function isResponse(method: number): boolean {
  return (method & METHOD_RESPONSE_BIT) !== 0 || method === Method.TrapRepress;
}

export const NodeType = { CA: 1, Switch: 2, Router: 3 } as const;
export const NODE_TYPE_NAMES: Readonly<Record<number, string>> = { 1: 'Channel Adapter', 2: 'Switch', 3: 'Router' };

export const PortState = { NoChange: 0, Down: 1, Init: 2, Armed: 3, Active: 4 } as const;
export const PORT_STATE_NAMES: Readonly<Record<number, string>> = { 0: 'NoChange', 1: 'Down', 2: 'Initialize', 3: 'Armed', 4: 'Active' };
export const PhysPortState = { NoChange: 0, Sleep: 1, Polling: 2, Disabled: 3, PortConfigurationTraining: 4, LinkUp: 5, LinkErrorRecovery: 6, PhyTest: 7 } as const;

/**
 * ClassPortInfo (attribute 0x0001 of every GSI class; IBA 13.4.8.1, ib_types.h `ib_class_port_info_t`):
 * 72 bytes. Labels follow libibmad's dump names.
 */
import { defineLayout, gid, hex, reserved, uint, type LayoutValue } from './layout.js';

export const ClassPortInfo = defineLayout('ClassPortInfo', 72, {
  baseVersion: uint(0, 8, { label: 'BaseVersion' }),
  classVersion: uint(8, 8, { label: 'ClassVersion' }),
  capabilityMask: hex(16, 16, { label: 'CapabilityMask' }),
  capabilityMask2: hex(32, 27, { label: 'CapabilityMask2' }),
  respTimeValue: uint(59, 5, { label: 'RespTimeVal' }),
  redirectGid: gid(64, { label: 'RedirectGID' }),
  redirectTc: hex(192, 8, { label: 'RedirectTC' }),
  redirectSl: uint(200, 4, { label: 'RedirectSL' }),
  redirectFl: hex(204, 20, { label: 'RedirectFL' }),
  redirectLid: uint(224, 16, { label: 'RedirectLID' }),
  redirectPKey: hex(240, 16, { label: 'RedirectPKey' }),
  reserved1: reserved(256, 8),
  redirectQp: hex(264, 24, { label: 'RedirectQP' }),
  redirectQKey: hex(288, 32, { label: 'RedirectQKey' }),
  trapGid: gid(320, { label: 'TrapGID' }),
  trapTc: hex(448, 8, { label: 'TrapTC' }),
  trapSl: uint(456, 4, { label: 'TrapSL' }),
  trapFl: hex(460, 20, { label: 'TrapFL' }),
  trapLid: uint(480, 16, { label: 'TrapLID' }),
  trapPKey: hex(496, 16, { label: 'TrapPKey' }),
  trapHl: uint(512, 8, { label: 'TrapHL' }),
  trapQp: hex(520, 24, { label: 'TrapQP' }),
  trapQKey: hex(544, 32, { label: 'TrapQKey' }),
});
export type ClassPortInfo = LayoutValue<typeof ClassPortInfo>;

/** Generic ClassPortInfo.CapabilityMask bits (all classes; ib_types.h IB_CLASS_CAP_*). */
export const ClassCap = {
  Trap: 0x0001,
  GetSet: 0x0002,
  CapMask2: 0x0004,
} as const;

/** SA-specific ClassPortInfo.CapabilityMask bits (umad_sa.h UMAD_SA_CAP_MASK_*). */
export const SaCap = {
  SubnetOptRecSup: 1 << 8,
  UdMcastSup: 1 << 9,
  MultiPathSup: 1 << 10,
  ReinitSup: 1 << 11,
  GidScopedMultiPathSup: 1 << 12,
  PortInfoCapMaskMatchSup: 1 << 13,
  LinkSpeedWidthPairsRecSup: 1 << 14,
  PaServicesSup: 1 << 15,
} as const;

/** SA-specific ClassPortInfo.CapabilityMask2 bits (umad_sa.h UMAD_SA_CAP_MASK2_*). */
export const SaCap2 = {
  UnpathRepathSup: 1 << 0,
  QosSup: 1 << 1,
  RevPathPKeyMemBitSup: 1 << 2,
  McastTopSup: 1 << 3,
  HierarchyInfoSup: 1 << 4,
  AdditionalGuidSup: 1 << 5,
  FullPortInfoRecSup: 1 << 6,
  ExtSpeedsSup: 1 << 7,
  McastServiceRecSup: 1 << 8,
  CableInfoRecSup: 1 << 9,
  PortInfoCapMask2MatchSup: 1 << 10,
  PortInfoExtRecSup: 1 << 11,
  SendOnlyFullMemberSup: 1 << 12,
  LinkWidth2xSup: 1 << 13,
  LinkSpeedHdrSup: 1 << 15,
} as const;

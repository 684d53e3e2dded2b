/** Subnet Administration (class 0x03) constants: offsets of the SA MAD, attribute IDs, status codes,
 * selectors, join states, scopes and the rate names (ib_types.h, IBA 15.2). */
import { GSI_QKEY } from './mad.js';

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
export const SA_QKEY = GSI_QKEY;

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
export const SELECTOR_NAMES: Readonly<Record<number, string>> = { 0: 'GreaterThan', 1: 'LessThan', 2: 'Exactly', 3: 'Best' };

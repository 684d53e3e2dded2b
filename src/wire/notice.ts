/**
 * The Notice attribute (13.4.8.2; `ib_mad_notice_attr_t`) and the DataDetails of the generic
 * traps the SM handles (14.2.5.1, 13.4.8.3): 64-67 (GID), 128 (link state change), 129-131
 * (link integrity / buffer overrun / watchdog), 144 (local changes), 145 (system image GUID),
 * 256 (bad M_Key), 257/258 (bad P_Key / Q_Key), 259 (bad P_Key at a switch external port).
 *
 * The full Notice is 80 bytes (SA Report, InformInfo); inside an SMP Trap only the first 64 bytes
 * fit, so IssuerGID is absent there (`NoticeSmp`). Detail offsets are relative to DataDetails.
 */
import { array, bytes, defineLayout, gid, hex, reserved, u64, uint, type AnyLayout, type LayoutValue } from './layout.js';
import { DecodeError } from './errors.js';

export const NoticeType = { Fatal: 0, Urgent: 1, Security: 2, SubnetManagement: 3, Info: 4, Empty: 0x7f } as const;
export const NOTICE_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: 'Fatal',
  1: 'Urgent',
  2: 'Security',
  3: 'SubnetManagement',
  4: 'Info',
  0x7f: 'Empty',
};
export const PRODUCER_TYPE_NAMES: Readonly<Record<number, string>> = { 1: 'Channel Adapter', 2: 'Switch', 3: 'Router', 4: 'Class Manager' };

export const TrapNumber = {
  GidInService: 64,
  GidOutOfService: 65,
  McGroupCreated: 66,
  McGroupDeleted: 67,
  LinkStateChange: 128,
  LinkIntegrityThreshold: 129,
  BufferOverrunThreshold: 130,
  FlowControlWatchdog: 131,
  LocalChanges: 144,
  SystemImageGuidChange: 145,
  BadMKey: 256,
  BadPKey: 257,
  BadQKey: 258,
  BadPKeySwitchExternalPort: 259,
} as const;

export const DATA_DETAILS_OFFSET = 10;
export const DATA_DETAILS_SIZE = 54;

const noticeFields = {
  /** 1: generic notice (producerType/trapNumber), 0: vendor notice (vendor ID / device ID). */
  isGeneric: uint(0, 1, { label: 'NoticeIsGeneric' }),
  type: uint(1, 7, { label: 'NoticeType', names: NOTICE_TYPE_NAMES }),
  /** ProducerType for generic notices, VendorID for vendor notices. */
  producerType: uint(8, 24, { label: 'NoticeProducerType', names: PRODUCER_TYPE_NAMES }),
  /** TrapNumber for generic notices, DeviceID for vendor notices. */
  trapNumber: uint(32, 16, { label: 'NoticeTrapNumber' }),
  issuerLid: uint(48, 16, { label: 'NoticeIssuerLID' }),
  noticeToggle: uint(64, 1, { label: 'NoticeToggle' }),
  noticeCount: uint(65, 15, { label: 'NoticeCount' }),
  dataDetails: bytes(80, DATA_DETAILS_SIZE, { label: 'NoticeDataDetails' }),
} as const;

/** Notice as carried in an SMP Trap/TrapRepress (IssuerGID does not fit the 64-byte SMP data). */
export const NoticeSmp = defineLayout('Notice', 64, noticeFields);
export type NoticeSmp = LayoutValue<typeof NoticeSmp>;

/** The full 80-byte Notice (SA Report, InformInfo-driven forwarding). */
export const Notice = defineLayout('Notice', 80, {
  ...noticeFields,
  issuerGid: gid(512, { label: 'NoticeIssuerGID' }),
});
export type Notice = LayoutValue<typeof Notice>;

// ---------- DataDetails per trap (offsets relative to DataDetails) ----------

/** Traps 64-67: the GID that came in/out of service, or the multicast group created/deleted. */
export const TrapGidDetails = defineLayout('Trap64to67', DATA_DETAILS_SIZE, {
  reserved1: reserved(0, 48),
  gid: gid(48, { label: 'GID' }),
  reserved2: reserved(176, 256),
});
export type TrapGidDetails = LayoutValue<typeof TrapGidDetails>;

/** Trap 128: link state change; the LID of the switch (or port) whose link changed. */
export const Trap128Details = defineLayout('Trap128', DATA_DETAILS_SIZE, {
  lid: uint(0, 16, { label: 'LIDADDR' }),
  reserved1: reserved(16, 416),
});
export type Trap128Details = LayoutValue<typeof Trap128Details>;

/** Traps 129-131: link integrity / excessive buffer overrun / flow control watchdog at LID, port. */
export const TrapPortDetails = defineLayout('Trap129to131', DATA_DETAILS_SIZE, {
  reserved1: reserved(0, 16),
  lid: uint(16, 16, { label: 'LIDADDR' }),
  portNum: uint(32, 8, { label: 'PORTNO' }),
  reserved2: reserved(40, 392),
});
export type TrapPortDetails = LayoutValue<typeof TrapPortDetails>;

/** Trap 144 ChangeFlags bits (the low 6 bits of the 16-bit field; OpenSM TRAP_144_MASK_*). */
export const Trap144Change = {
  NodeDescription: 0x0001,
  LinkWidthEnabled: 0x0002,
  LinkSpeedEnabled: 0x0004,
  SmPriority: 0x0008,
  HierarchyInfo: 0x0010,
  CapabilityMask2: 0x0020,
} as const;

/** Trap 144: CapabilityMask, CapabilityMask2 or another local attribute changed at LID. */
export const Trap144Details = defineLayout('Trap144', DATA_DETAILS_SIZE, {
  reserved1: reserved(0, 16),
  lid: uint(16, 16, { label: 'LIDADDR' }),
  reserved2: reserved(32, 15),
  otherLocalChanges: uint(47, 1, { label: 'OtherLocalChanges' }),
  capabilityMask: hex(48, 32, { label: 'CapabilityMask' }),
  reserved3: reserved(80, 10),
  changeFlags: hex(90, 6, { label: 'ChangeFlags' }),
  capabilityMask2: hex(96, 16, { label: 'CapabilityMask2' }),
  reserved4: reserved(112, 320),
});
export type Trap144Details = LayoutValue<typeof Trap144Details>;

/** Trap 145: SystemImageGUID changed at LID. */
export const Trap145Details = defineLayout('Trap145', DATA_DETAILS_SIZE, {
  reserved1: reserved(0, 16),
  lid: uint(16, 16, { label: 'LIDADDR' }),
  reserved2: reserved(32, 16),
  systemImageGuid: u64(48, 64, { label: 'SystemImageGUID' }),
  reserved3: reserved(112, 320),
});
export type Trap145Details = LayoutValue<typeof Trap145Details>;

/** Trap 256: bad M_Key; the offending SMP's fields and, for directed route, its return path. */
export const Trap256Details = defineLayout('Trap256', DATA_DETAILS_SIZE, {
  reserved1: reserved(0, 16),
  lid: uint(16, 16, { label: 'LIDADDR' }),
  drSlid: uint(32, 16, { label: 'DRSLID' }),
  method: hex(48, 8, { label: 'Method' }),
  reserved2: reserved(56, 8),
  attrId: hex(64, 16, { label: 'AttributeID' }),
  attrMod: hex(80, 32, { label: 'AttributeModifier' }),
  mkey: u64(112, 64, { label: 'M_Key' }),
  reserved3: reserved(176, 8),
  drNotice: uint(184, 1, { label: 'DRNotice' }),
  drPathTruncated: uint(185, 1, { label: 'DRPathTruncated' }),
  drHopCount: uint(186, 6, { label: 'DRHopCount' }),
  drReturnPath: array(uint(192, 8), 30, 8, { label: 'DRNoticeReturnPath' }),
});
export type Trap256Details = LayoutValue<typeof Trap256Details>;

/** Traps 257 (bad P_Key) and 258 (bad Q_Key) at a CA/router port. */
export const TrapKeyDetails = defineLayout('Trap257to258', DATA_DETAILS_SIZE, {
  reserved1: reserved(0, 16),
  lid1: uint(16, 16, { label: 'LIDADDR1' }),
  lid2: uint(32, 16, { label: 'LIDADDR2' }),
  key: hex(48, 32, { label: 'KEY' }),
  sl: uint(80, 4, { label: 'SL' }),
  reserved2: reserved(84, 4),
  qp1: hex(88, 24, { label: 'QP1' }),
  reserved3: reserved(112, 8),
  qp2: hex(120, 24, { label: 'QP2' }),
  gid1: gid(144, { label: 'GIDADDR1' }),
  gid2: gid(272, { label: 'GIDADDR2' }),
  reserved4: reserved(400, 32),
});
export type TrapKeyDetails = LayoutValue<typeof TrapKeyDetails>;

/** Trap 259: bad P_Key at a switch external port. */
export const Trap259Details = defineLayout('Trap259', DATA_DETAILS_SIZE, {
  dataValid: hex(0, 16, { label: 'DataValid' }),
  lid1: uint(16, 16, { label: 'LIDADDR1' }),
  lid2: uint(32, 16, { label: 'LIDADDR2' }),
  pkey: hex(48, 16, { label: 'PKEY' }),
  sl: uint(64, 4, { label: 'SL' }),
  reserved1: reserved(68, 4),
  qp1: hex(72, 24, { label: 'QP1' }),
  reserved2: reserved(96, 8),
  qp2: hex(104, 24, { label: 'QP2' }),
  gid1: gid(128, { label: 'GIDADDR1' }),
  gid2: gid(256, { label: 'GIDADDR2' }),
  swLid: uint(384, 16, { label: 'SWLIDADDR' }),
  portNum: uint(400, 8, { label: 'PORTNO' }),
  reserved3: reserved(408, 24),
});
export type Trap259Details = LayoutValue<typeof Trap259Details>;

/** DataDetails layout by generic trap number. */
export const TRAP_DETAILS: Readonly<Record<number, AnyLayout>> = {
  64: TrapGidDetails,
  65: TrapGidDetails,
  66: TrapGidDetails,
  67: TrapGidDetails,
  128: Trap128Details,
  129: TrapPortDetails,
  130: TrapPortDetails,
  131: TrapPortDetails,
  144: Trap144Details,
  145: Trap145Details,
  256: Trap256Details,
  257: TrapKeyDetails,
  258: TrapKeyDetails,
  259: Trap259Details,
};

export type TrapDetails =
  | { trap: 64 | 65 | 66 | 67; value: TrapGidDetails }
  | { trap: 128; value: Trap128Details }
  | { trap: 129 | 130 | 131; value: TrapPortDetails }
  | { trap: 144; value: Trap144Details }
  | { trap: 145; value: Trap145Details }
  | { trap: 256; value: Trap256Details }
  | { trap: 257 | 258; value: TrapKeyDetails }
  | { trap: 259; value: Trap259Details };

export interface DecodedNotice {
  /** The notice; `issuerGid` is undefined when decoded from SMP data (64 bytes). */
  notice: NoticeSmp & { issuerGid?: bigint };
  /** Decoded DataDetails of a generic notice with a known trap number; null otherwise. */
  details: TrapDetails | null;
}

/**
 * Decode a Notice at `off`. `form` 'smp' (default) reads the 64 bytes of SMP data (no IssuerGID);
 * 'full' reads the 80-byte Notice. Throws only DecodeError.
 */
export function decodeNotice(buf: Uint8Array, off = 0, form: 'smp' | 'full' = 'smp'): DecodedNotice {
  const notice: NoticeSmp & { issuerGid?: bigint } = form === 'full' ? Notice.decode(buf, off) : NoticeSmp.decode(buf, off);
  let details: TrapDetails | null = null;
  const layout = notice.isGeneric ? TRAP_DETAILS[notice.trapNumber] : undefined;
  if (layout) {
    try {
      details = { trap: notice.trapNumber, value: layout.decode(buf, off + DATA_DETAILS_OFFSET) } as TrapDetails;
    } catch (e) {
      if (e instanceof DecodeError) throw new DecodeError('Notice', `dataDetails(trap ${notice.trapNumber})`, off + DATA_DETAILS_OFFSET, e.detail);
      throw e;
    }
  }
  return { notice, details };
}

/** Encode a notice with the details of its trap into the 54-byte DataDetails (SMP form unless issuerGid is given). */
export function encodeNotice(
  notice: Partial<Omit<Notice, 'dataDetails' | 'issuerGid'>> & { issuerGid?: bigint },
  details: TrapDetails | null,
  buf?: Uint8Array,
  off = 0,
): Uint8Array {
  let dataDetails: Uint8Array = new Uint8Array(DATA_DETAILS_SIZE);
  if (details) {
    const layout = TRAP_DETAILS[details.trap]!;
    dataDetails = layout.encode(details.value);
  }
  const full = notice.issuerGid !== undefined;
  const isGeneric = notice.isGeneric ?? (details ? 1 : 0);
  const trapNumber = notice.trapNumber ?? details?.trap ?? 0;
  const v = { ...notice, isGeneric, trapNumber, dataDetails };
  return full ? Notice.encode(v, buf, off) : NoticeSmp.encode(v, buf, off);
}

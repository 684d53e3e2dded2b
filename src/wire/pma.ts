/**
 * Performance management (class 0x04) attributes read by the PerfMgr and answered by the
 * in-process PMA: PortCounters (0x0012) and PortCountersExtended (0x001D), as `ib_types.h`
 * (`ib_port_counters_t`, `ib_port_counters_ext_t`) lays them out and libibmad's perfquery labels
 * them. A PerfMgt MAD is the 24-byte common header, 40 reserved bytes and 192 bytes of data
 * (`IB_PC_DATA_OFFS` = 64).
 */
import { defineLayout, hex, reserved, u64, uint, type LayoutValue } from './layout.js';
import { MadHeaderView, MAD_SIZE, MgmtClass } from './mad.js';
import { allocBytes } from '../util/slab.js';

export const PMA_CLASS_VERSION = 1;
/** Where the attribute data starts in a PerfMgt MAD. */
export const PMA_DATA_OFFSET = 64;

export const PmaAttr = {
  ClassPortInfo: 0x0001,
  PortCounters: 0x0012,
  PortCountersExtended: 0x001d,
} as const;

/** PerfMgt ClassPortInfo CapabilityMask bits (ib_types.h IB_PM_*). */
export const PmaCap = {
  AllPortSelect: 0x0100,
  ExtendedWidth: 0x0200,
  ExtendedWidthNoIetf: 0x0400,
  XmitWait: 0x1000,
} as const;

/** PortSelect 0xFF with AllPortSelect: every port of the node. */
export const ALL_PORTS = 0xff;

export const PortCounters = defineLayout('PortCounters', 44, {
  reserved0: reserved(0, 8),
  portSelect: uint(8, 8, { label: 'PortSelect' }),
  counterSelect: hex(16, 16, { label: 'CounterSelect' }),
  symbolErrors: uint(32, 16, { label: 'SymbolErrorCounter' }),
  linkErrorRecovery: uint(48, 8, { label: 'LinkErrorRecoveryCounter' }),
  linkDowned: uint(56, 8, { label: 'LinkDownedCounter' }),
  rcvErrors: uint(64, 16, { label: 'PortRcvErrors' }),
  rcvRemotePhysErrors: uint(80, 16, { label: 'PortRcvRemotePhysicalErrors' }),
  rcvSwitchRelayErrors: uint(96, 16, { label: 'PortRcvSwitchRelayErrors' }),
  xmitDiscards: uint(112, 16, { label: 'PortXmitDiscards' }),
  xmitConstraintErrors: uint(128, 8, { label: 'PortXmitConstraintErrors' }),
  rcvConstraintErrors: uint(136, 8, { label: 'PortRcvConstraintErrors' }),
  counterSelect2: hex(144, 8, { label: 'CounterSelect2' }),
  localLinkIntegrityErrors: uint(152, 4, { label: 'LocalLinkIntegrityErrors' }),
  excessiveBufferOverruns: uint(156, 4, { label: 'ExcessiveBufferOverrunErrors' }),
  qp1Dropped: uint(160, 16, { label: 'QP1Dropped' }),
  vl15Dropped: uint(176, 16, { label: 'VL15Dropped' }),
  xmitData: uint(192, 32, { label: 'PortXmitData' }),
  rcvData: uint(224, 32, { label: 'PortRcvData' }),
  xmitPkts: uint(256, 32, { label: 'PortXmitPkts' }),
  rcvPkts: uint(288, 32, { label: 'PortRcvPkts' }),
  xmitWait: uint(320, 32, { label: 'PortXmitWait' }),
});
export type PortCounters = LayoutValue<typeof PortCounters>;

/** The IBA 1.2.1 part of PortCountersExtended (what CapabilityMask ExtendedWidth promises). */
export const PortCountersExtended = defineLayout('PortCountersExtended', 72, {
  reserved0: reserved(0, 8),
  portSelect: uint(8, 8, { label: 'PortSelect' }),
  counterSelect: hex(16, 16, { label: 'CounterSelect' }),
  counterSelect2: hex(32, 32, { label: 'CounterSelect2' }),
  xmitData: u64(64, 64, { label: 'PortXmitData' }),
  rcvData: u64(128, 64, { label: 'PortRcvData' }),
  xmitPkts: u64(192, 64, { label: 'PortXmitPkts' }),
  rcvPkts: u64(256, 64, { label: 'PortRcvPkts' }),
  unicastXmitPkts: u64(320, 64, { label: 'PortUnicastXmitPkts' }),
  unicastRcvPkts: u64(384, 64, { label: 'PortUnicastRcvPkts' }),
  multicastXmitPkts: u64(448, 64, { label: 'PortMulticastXmitPkts' }),
  multicastRcvPkts: u64(512, 64, { label: 'PortMulticastRcvPkts' }),
});
export type PortCountersExtended = LayoutValue<typeof PortCountersExtended>;

/** Every counter of PortCounters (the fields that are not selectors), in table order. */
export const PORT_COUNTER_NAMES = [
  'symbolErrors',
  'linkErrorRecovery',
  'linkDowned',
  'rcvErrors',
  'rcvRemotePhysErrors',
  'rcvSwitchRelayErrors',
  'xmitDiscards',
  'xmitConstraintErrors',
  'rcvConstraintErrors',
  'localLinkIntegrityErrors',
  'excessiveBufferOverruns',
  'qp1Dropped',
  'vl15Dropped',
  'xmitData',
  'rcvData',
  'xmitPkts',
  'rcvPkts',
  'xmitWait',
] as const satisfies readonly (keyof PortCounters)[];
export type PortCounterName = (typeof PORT_COUNTER_NAMES)[number];

/** CounterSelect2 bit 0 clears PortXmitWait (bit 1: QP1Dropped). */
export const COUNTER_SELECT2_XMIT_WAIT = 0x01;
export const COUNTER_SELECT2_QP1_DROPPED = 0x02;
const SELECT2: Partial<Record<PortCounterName, number>> = { xmitWait: COUNTER_SELECT2_XMIT_WAIT, qp1Dropped: COUNTER_SELECT2_QP1_DROPPED };

/** The PortCounters fields a CounterSelect bit clears, in bit order 0..15 (IBA 16.1.3.5): every
 * counter but the two CounterSelect2 clears. */
export const COUNTER_SELECT_FIELDS: readonly PortCounterName[] = PORT_COUNTER_NAMES.filter((n) => SELECT2[n] === undefined);

/** The CounterSelect / CounterSelect2 bits that clear a counter. */
export function counterSelectOf(name: PortCounterName): { counterSelect: number; counterSelect2: number } {
  const bit = COUNTER_SELECT_FIELDS.indexOf(name);
  return bit >= 0 ? { counterSelect: 1 << bit, counterSelect2: 0 } : { counterSelect: 0, counterSelect2: SELECT2[name]! };
}

/** The counters a PortCounters Set with these selects clears. */
export function selectedCounters(counterSelect: number, counterSelect2: number): PortCounterName[] {
  return PORT_COUNTER_NAMES.filter((n) => {
    const sel = counterSelectOf(n);
    return (sel.counterSelect & counterSelect) !== 0 || (sel.counterSelect2 & counterSelect2) !== 0;
  });
}

/** A PerfMgt request MAD (256 bytes): header, 40 reserved bytes, the attribute at offset 64. */
export function pmaRequest(method: number, attrId: number, data?: Uint8Array, attrMod = 0): Uint8Array {
  // a slab buffer and the header written field by field through its view (no init object encoded)
  const mad = allocBytes(MAD_SIZE);
  const h = MadHeaderView.over(mad);
  h.baseVersion = 1;
  h.mgmtClass = MgmtClass.Perf;
  h.classVersion = PMA_CLASS_VERSION;
  h.method = method;
  h.attrId = attrId;
  h.attrMod = attrMod;
  if (data) mad.set(data.subarray(0, MAD_SIZE - PMA_DATA_OFFSET), PMA_DATA_OFFSET);
  return mad;
}

/** The attribute data of a PerfMgt MAD. */
export function pmaData(mad: Uint8Array): Uint8Array {
  return mad.subarray(PMA_DATA_OFFSET);
}

/**
 * SR-IOV virtual ports (vports): the vendor-range SMP attributes 0xFFB0-0xFFB6 through which an SM
 * manages the virtual functions behind a physical CA port (docs/vports.md says where each layout
 * came from and which parts are ibsm's own choice). A port advertises them with
 * PortInfo:CapabilityMask2.IsVirtualizationSupported (`PortCap2`, wire/sma.ts).
 *
 * Bit numbering as in wire/sma.ts: bit 0 is the most significant bit of byte 0.
 *
 * Attribute modifiers (modifier bit 0 = least significant; which parameter each carries is from
 * NVIDIA's ibis, the bit positions are ibsm's own: docs/vports.md):
 * | attribute          | modifier                                             |
 * |--------------------|------------------------------------------------------|
 * | VirtualizationInfo | 0 (the arrival port)                                 |
 * | VPortInfo          | bits 0-15 vport index                                |
 * | VNodeInfo          | bits 0-15 vport index (the vnode behind that vport)  |
 * | VNodeDescription   | bits 0-15 vport index                                |
 * | VPortState         | bits 0-15 block (128 vports per block)               |
 * | VPortGUIDInfo      | bits 0-15 block (8 GUIDs), bits 16-31 vport index    |
 * | VPortPKeyTable     | bits 0-15 block (32 P_Keys), bits 16-31 vport index  |
 */
import { EncodeError } from './errors.js';
import { array, defineLayout, hex, reserved, str, u64, uint, type AnyLayout, type LayoutValue } from './layout.js';
import { PORT_STATE_NAMES } from './mad.js';

export const VPortAttr = {
  VirtualizationInfo: 0xffb0,
  VPortInfo: 0xffb1,
  VNodeInfo: 0xffb2,
  VPortState: 0xffb3,
  VNodeDescription: 0xffb4,
  VPortGUIDInfo: 0xffb5,
  VPortPKeyTable: 0xffb6,
} as const;

/** VPortState entries per block (two 4-bit states a byte, 64 bytes). */
export const VPORT_STATE_BLOCK_SIZE = 128;

/** VPortInfo:CapabilityMask bits. */
export const VPortCap = { IsSM: 0x20, IsSMDisabled: 0x40 } as const;

/** VirtualizationInfo: per physical port; VPortStateChange is set by the SMA when a vport's state
 * changes (and cleared by the SM writing 1, as PortStateChange is in SwitchInfo). */
export const VirtualizationInfo = defineLayout('VirtualizationInfo', 64, {
  vportCap: uint(0, 16, { label: 'VPortCap' }),
  vportIndexTop: uint(16, 16, { label: 'VPortIndexTop' }),
  virtualizationEnable: uint(32, 1, { label: 'VirtualizationEnable' }),
  vClientReregister: uint(33, 1, { label: 'VClientReregister' }),
  vportStateChange: uint(34, 1, { label: 'VPortStateChange' }),
  reserved1: reserved(35, 13),
  revision: uint(48, 8, { label: 'VirtualizationRevision' }),
  capabilityMask: hex(56, 8, { label: 'CapMask' }),
  reserved2: reserved(64, 448),
});
export type VirtualizationInfo = LayoutValue<typeof VirtualizationInfo>;

/** VPortInfo: one vport (modifier = vport index). */
export const VPortInfo = defineLayout('VPortInfo', 64, {
  vportState: uint(0, 4, { label: 'VPortState', names: PORT_STATE_NAMES }),
  clientReregister: uint(4, 1, { label: 'ClientReregister' }),
  lidRequired: uint(5, 1, { label: 'LidRequired' }),
  reserved1: reserved(6, 2),
  guidCap: uint(8, 8, { label: 'GuidCap' }),
  capabilityMask: hex(16, 16, { label: 'CapMask' }),
  pkeyViolations: uint(32, 16, { label: 'PkeyViolations' }),
  qkeyViolations: uint(48, 16, { label: 'QkeyViolations' }),
  vportLid: uint(64, 16, { label: 'VPortLid' }),
  lidByVPortIndex: uint(80, 16, { label: 'LidByVPortIndex' }),
  portGuid: u64(96, 64, { label: 'PortGuid' }),
  profile: u64(160, 64, { label: 'Profile' }),
  reserved2: reserved(224, 288),
});
export type VPortInfo = LayoutValue<typeof VPortInfo>;

/** VNodeInfo: the virtual node (VHCA) a vport belongs to (NVIDIA's `ib_vnode_info_t`). */
export const VNodeInfo = defineLayout('VNodeInfo', 64, {
  partitionCap: uint(0, 16, { label: 'PartCap' }),
  localPortNum: uint(16, 8, { label: 'LocalPort' }),
  numPorts: uint(24, 8, { label: 'NumPorts' }),
  vnodeGuid: u64(32, 64, { label: 'VNodeGuid' }),
  reserved1: reserved(96, 416),
});
export type VNodeInfo = LayoutValue<typeof VNodeInfo>;

/** VPortState: a block of 128 vport states, two a byte, the even index in the high nibble. */
export const VPortState = defineLayout('VPortState', 64, {
  states: array(uint(0, 4, { names: PORT_STATE_NAMES }), VPORT_STATE_BLOCK_SIZE, 4, { label: 'VPortStates' }),
});
export type VPortState = LayoutValue<typeof VPortState>;

/** VNodeDescription: as NodeDescription, 64 bytes of UTF-8. */
export const VNodeDescription = defineLayout('VNodeDescription', 64, {
  description: str(0, 64, { label: 'VNodeDesc' }),
});
export type VNodeDescription = LayoutValue<typeof VNodeDescription>;

/** VPortGUIDInfo: as GUIDInfo, a block of 8 GUIDs of one vport (GUID 0 = its port GUID). */
export const VPortGUIDInfo = defineLayout('VPortGUIDInfo', 64, {
  guids: array(u64(0, 64), 8, 64, { label: 'GUIDs' }),
});
export type VPortGUIDInfo = LayoutValue<typeof VPortGUIDInfo>;

/** VPortPKeyTable: as P_KeyTable, a block of 32 P_Keys of one vport. */
export const VPortPKeyTable = defineLayout('VPortPKeyTable', 64, {
  pkeys: array(hex(0, 16), 32, 16, { label: 'PKeys' }),
});
export type VPortPKeyTable = LayoutValue<typeof VPortPKeyTable>;

/** Layout of each vport attribute by attribute ID (registered in SMA_ATTRIBUTES). */
export const VPORT_ATTRIBUTES: Readonly<Record<number, AnyLayout>> = {
  [VPortAttr.VirtualizationInfo]: VirtualizationInfo,
  [VPortAttr.VPortInfo]: VPortInfo,
  [VPortAttr.VNodeInfo]: VNodeInfo,
  [VPortAttr.VPortState]: VPortState,
  [VPortAttr.VNodeDescription]: VNodeDescription,
  [VPortAttr.VPortGUIDInfo]: VPortGUIDInfo,
  [VPortAttr.VPortPKeyTable]: VPortPKeyTable,
};

// ---------- attribute modifiers ----------

function check(what: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new EncodeError('AttributeModifier', what, `${String(value)} is out of range 0..${max}`);
  }
  return value;
}

/** VPortInfo / VNodeInfo / VNodeDescription: the vport index. */
export function vportIndexMod(index: number): number {
  return check('vport index', index, 0xffff);
}
export function decodeVportIndexMod(mod: number): { index: number } {
  return { index: mod & 0xffff };
}

/** VPortState: block of 128 vports. */
export function vportStateMod(block: number): number {
  return check('block', block, 0xffff);
}
export function decodeVportStateMod(mod: number): { block: number } {
  return { block: mod & 0xffff };
}

/** VPortGUIDInfo / VPortPKeyTable: a block of one vport's table. */
export function vportBlockMod(index: number, block: number): number {
  return ((check('vport index', index, 0xffff) << 16) | check('block', block, 0xffff)) >>> 0;
}
export function decodeVportBlockMod(mod: number): { index: number; block: number } {
  return { index: (mod >>> 16) & 0xffff, block: mod & 0xffff };
}

/**
 * Goldens for the SR-IOV vport attributes (wire/vport.ts). No tool of ours can capture these
 * (infiniband-diags and ibsim do not implement them), so each golden is written by hand, byte by
 * byte, from the structs and #defines of NVIDIA's OpenSM fork's include/iba/ib_types.h
 * (ib_virtualization_info_t, ib_vport_info_t, ib_vnode_info_t, ib_vport_state_t: byte offsets and
 * bit masks within a byte, docs/vports.md's table), not from the field tables' bit offsets, then
 * decoded and re-encoded over a poisoned buffer.
 */
import { describe, expect, it } from 'vitest';
import type { AnyLayout } from '../src/wire/layout.js';
import { SMA_ATTRIBUTES, PortCap2 } from '../src/wire/sma.js';
import {
  VirtualizationInfo,
  VNodeDescription,
  VNodeInfo,
  VPortAttr,
  VPortGUIDInfo,
  VPortInfo,
  VPortPKeyTable,
  VPortState,
  decodeVportBlockMod,
  decodeVportIndexMod,
  vportBlockMod,
  vportIndexMod,
  vportStateMod,
} from '../src/wire/vport.js';
import { EncodeError } from '../src/wire/errors.js';

const POISON = 0xa5;
/** 64 bytes, zero except `set` (offset → byte). */
function bytes(set: Record<number, number>): Uint8Array {
  const b = new Uint8Array(64);
  for (const [o, v] of Object.entries(set)) b[Number(o)] = v;
  return b;
}
function roundTrip(layout: AnyLayout, golden: Uint8Array): Record<string, unknown> {
  const v = layout.decode(golden, 0) as Record<string, unknown>;
  const buf = new Uint8Array(128).fill(POISON);
  layout.encode(v as never, buf, 32);
  expect(Array.from(buf.subarray(32, 96))).toEqual(Array.from(golden));
  expect(buf[31]).toBe(POISON);
  expect(buf[96]).toBe(POISON);
  return v;
}

describe('vport attribute IDs', () => {
  it('are 0xFFB0..0xFFB6 and registered with the SMA attributes', () => {
    expect(Object.values(VPortAttr)).toEqual([0xffb0, 0xffb1, 0xffb2, 0xffb3, 0xffb4, 0xffb5, 0xffb6]);
    expect(SMA_ATTRIBUTES[0xffb1]).toBe(VPortInfo);
    expect(SMA_ATTRIBUTES[0xffb3]).toBe(VPortState);
    expect(PortCap2.IsVirtualizationSupported).toBe(0b100);
  });
});

describe('VirtualizationInfo', () => {
  it('VPortCap bytes 0-1, VPortIndexTop 2-3, byte 4 bits 7/6/5, Revision byte 6, CapMask byte 7', () => {
    const g = bytes({ 0: 0x00, 1: 0x40, 2: 0x00, 3: 0x0f, 4: 0x80 | 0x20, 6: 0x01, 7: 0x03 });
    const v = roundTrip(VirtualizationInfo, g);
    expect(v).toMatchObject({ vportCap: 64, vportIndexTop: 15, virtualizationEnable: 1, vClientReregister: 0, vportStateChange: 1, revision: 1, capabilityMask: 3 });
    const w = VirtualizationInfo.decode(bytes({ 4: 0x40 }), 0);
    expect([w.virtualizationEnable, w.vClientReregister, w.vportStateChange]).toEqual([0, 1, 0]);
  });
});

describe('VPortInfo', () => {
  it('byte 0 state/ClientReregister/LidRequired, GUIDCap, CapMask, violations, LIDs, GUID, Profile', () => {
    const g = bytes({
      0: (4 << 4) | 0x04, // Active, LidRequired
      1: 0x08, // GUIDCap 8
      2: 0x00, 3: 0x40, // CapMask IsSMDisabled
      4: 0x00, 5: 0x07, // P_Key violations
      6: 0x01, 7: 0x02, // Q_Key violations
      8: 0x12, 9: 0x34, // VPortLID
      10: 0x00, 11: 0x05, // LidByVPortIndex
      12: 0x00, 13: 0x02, 14: 0xc9, 15: 0x03, 16: 0x00, 17: 0x00, 18: 0x10, 19: 0x01, // PortGUID
      20: 0xde, 27: 0x01, // Profile
    });
    const v = roundTrip(VPortInfo, g);
    expect(v).toMatchObject({
      vportState: 4, clientReregister: 0, lidRequired: 1, guidCap: 8, capabilityMask: 0x40,
      pkeyViolations: 7, qkeyViolations: 0x102, vportLid: 0x1234, lidByVPortIndex: 5,
      portGuid: 0x0002c90300001001n, profile: 0xde00000000000001n,
    });
    expect(VPortInfo.decode(bytes({ 0: 0x08 }), 0)).toMatchObject({ vportState: 0, clientReregister: 1, lidRequired: 0 });
  });
});

describe('VPortState', () => {
  it('two vports a byte, the even index in the high nibble, 128 per block', () => {
    const g = bytes({ 0: 0x41, 1: 0x02, 63: 0x30 });
    const v = roundTrip(VPortState, g) as { states: number[] };
    expect(v.states.length).toBe(128);
    expect(v.states.slice(0, 4)).toEqual([4, 1, 0, 2]);
    expect(v.states[126]).toBe(3);
    expect(v.states[127]).toBe(0);
  });
});

describe('VNodeInfo, VNodeDescription, VPortGUIDInfo, VPortPKeyTable', () => {
  it('VNodeInfo: PartitionCap bytes 0-1, LocalPortNum byte 2, NumPorts byte 3, VNodeGUID bytes 4-11', () => {
    const g = bytes({ 0: 0x00, 1: 0x80, 2: 1, 3: 1, 4: 0xaa, 11: 0x01 });
    expect(roundTrip(VNodeInfo, g)).toMatchObject({ numPorts: 1, vnodeGuid: 0xaa00000000000001n, partitionCap: 128, localPortNum: 1 });
  });
  it('VNodeDescription: 64 bytes of text', () => {
    const g = bytes({ 0: 0x76, 1: 0x6d, 2: 0x31 });
    expect(roundTrip(VNodeDescription, g)).toMatchObject({ description: 'vm1' });
  });
  it('VPortGUIDInfo: 8 big-endian GUIDs', () => {
    const g = bytes({ 7: 0x11, 8: 0x22, 15: 0x33 });
    const v = roundTrip(VPortGUIDInfo, g) as { guids: bigint[] };
    expect(v.guids.slice(0, 3)).toEqual([0x11n, 0x2200000000000033n, 0n]);
  });
  it('VPortPKeyTable: 32 P_Keys', () => {
    const g = bytes({ 0: 0xff, 1: 0xff, 62: 0x80, 63: 0x01 });
    const v = roundTrip(VPortPKeyTable, g) as { pkeys: number[] };
    expect(v.pkeys[0]).toBe(0xffff);
    expect(v.pkeys[31]).toBe(0x8001);
  });
});

describe('vport attribute modifiers', () => {
  it('index in bits 0-15; table blocks put the vport index in bits 16-31', () => {
    expect(vportIndexMod(17)).toBe(17);
    expect(vportStateMod(2)).toBe(2);
    expect(vportBlockMod(0x8001, 3)).toBe(0x80010003);
    expect(decodeVportBlockMod(0x80010003)).toEqual({ index: 0x8001, block: 3 });
    expect(decodeVportIndexMod(0xffff0005)).toEqual({ index: 5 });
    expect(() => vportIndexMod(0x10000)).toThrow(EncodeError);
    expect(() => vportBlockMod(1, -1)).toThrow(EncodeError);
  });
});

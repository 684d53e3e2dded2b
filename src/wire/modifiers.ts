/**
 * SMP attribute modifiers: builders and their inverses.
 *
 * Bit positions (bit 0 = least significant bit of the 32-bit AttributeModifier), checked against
 * how OpenSM builds them and against modifiers captured from smpquery/ibroute on ibsim:
 *
 * | attribute            | layout                                                              | OpenSM                           |
 * |----------------------|---------------------------------------------------------------------|----------------------------------|
 * | PortInfo             | bits 0-7 port number, bit 31 SMSupportExtendedSpeeds                | `port_num \| (1 << 31)`          |
 * | LinearForwardingTbl  | bits 0-15 block number (64 LIDs per block)                          | `cl_hton32(block_id_ho)`         |
 * | RandomForwardingTbl  | bits 0-15 block number (16 entries per block)                       | —                                |
 * | MulticastForwardingTbl | bits 0-8 block (32 MLIDs), bits 28-31 port position (16 ports)    | `block_num \| (position << 28)`  |
 * | P_KeyTable           | bits 0-15 block (32 P_Keys), bits 16-23 port (switch external port) | `block \| (port << 16)`          |
 * | GUIDInfo             | bits 0-7 block number (8 GUIDs per block)                           | `cl_hton32(block_num)`           |
 * | SLtoVLMappingTable   | bits 0-7 output port, bits 8-15 input port, bit 16 all output ports,| `in << 8 \| out`, `0x30000`,     |
 * |                      | bit 17 all input ports (OptimizedSLtoVLMappingProgramming)          | `0x20000 \| out`                 |
 * | VLArbitrationTable   | bits 0-7 port, bits 16-23 block: 1/2 low priority entries 0-31/32-63,| `((block + 1) << 16) \| port`  |
 * |                      | 3/4 high priority entries 0-31/32-63                                 |                                  |
 * | SMInfo (Set)         | bits 0-31 control: 1 Handover, 2 Acknowledge, 3 Disable, 4 Standby, 5 Discover | `IB_SMINFO_ATTR_MOD_*`  |
 *
 * Builders throw EncodeError for out-of-range arguments; decoders accept any 32-bit value.
 */
import { EncodeError } from './errors.js';

function check(what: string, value: number, max: number): number {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new EncodeError('AttributeModifier', what, `${String(value)} is out of range 0..${max}`);
  }
  return value;
}
/** The unsigned 32-bit value of a modifier built with shifts. */
const u32 = (v: number): number => v >>> 0;

/** PortInfo bit 31, SMSupportExtendedSpeeds: the SM understands the extended speed fields. A port
 * whose CapabilityMask has IsExtendedSpeedsSupported (for a switch's external ports: port 0's)
 * answers a Get or takes a Set without it as if it had no extended speeds (Quantum-2 and later:
 * OpenSM issue #38); OpenSM sets it on every Set to such a port (osm_link_mgr.c) and re-reads a
 * PortInfo got without it (osm_port_info_rcv.c, PR #39). */
export const PORTINFO_SM_SUPPORTS_EXT_SPEEDS = 2 ** 31;
export function portInfoMod(port: number, smSupportsExtendedSpeeds = false): number {
  return u32(check('port', port, 0xff) | (smSupportsExtendedSpeeds ? PORTINFO_SM_SUPPORTS_EXT_SPEEDS : 0));
}
export function decodePortInfoMod(mod: number): { port: number; smSupportsExtendedSpeeds: boolean } {
  return { port: mod & 0xff, smSupportsExtendedSpeeds: (mod & PORTINFO_SM_SUPPORTS_EXT_SPEEDS) !== 0 };
}

export function lftBlockMod(block: number): number {
  return check('block', block, 0xffff);
}
export function decodeLftBlockMod(mod: number): { block: number } {
  return { block: mod & 0xffff };
}

export function rftMod(block: number): number {
  return check('block', block, 0xffff);
}
export function decodeRftMod(mod: number): { block: number } {
  return { block: mod & 0xffff };
}

/** MulticastForwardingTable: `block` of 32 MLIDs (MLID = 0xC000 + 32*block + i), `position` selects ports 16*position..+15. */
export function mftMod(block: number, position: number): number {
  return u32(check('block', block, 0x1ff) | (check('position', position, 0xf) << 28));
}
export function decodeMftMod(mod: number): { block: number; position: number } {
  return { block: mod & 0x1ff, position: (mod >>> 28) & 0xf };
}

/** P_KeyTable: `port` is used for switch external ports only (0 for CAs and switch port 0). */
export function pkeyBlockMod(block: number, port = 0): number {
  return u32(check('block', block, 0xffff) | (check('port', port, 0xff) << 16));
}
export function decodePkeyBlockMod(mod: number): { block: number; port: number } {
  return { block: mod & 0xffff, port: (mod >>> 16) & 0xff };
}

export function guidInfoMod(block: number): number {
  return check('block', block, 0xff);
}
export function decodeGuidInfoMod(mod: number): { block: number } {
  return { block: mod & 0xff };
}

export const SL2VL_ALL_OUTPUT_PORTS = 1 << 16;
export const SL2VL_ALL_INPUT_PORTS = 1 << 17;
export interface Sl2vlModOptions {
  /** Apply to every output port (bit 16; switches with OptimizedSLtoVLMappingProgramming). */
  allOutputPorts?: boolean;
  /** Apply to every input port (bit 17). */
  allInputPorts?: boolean;
}
export function sl2vlMod(inPort: number, outPort: number, opts: Sl2vlModOptions = {}): number {
  let m = check('outPort', outPort, 0xff) | (check('inPort', inPort, 0xff) << 8);
  if (opts.allOutputPorts) m |= SL2VL_ALL_OUTPUT_PORTS;
  if (opts.allInputPorts) m |= SL2VL_ALL_INPUT_PORTS;
  return u32(m);
}
export function decodeSl2vlMod(mod: number): { inPort: number; outPort: number; allOutputPorts: boolean; allInputPorts: boolean } {
  return {
    outPort: mod & 0xff,
    inPort: (mod >>> 8) & 0xff,
    allOutputPorts: (mod & SL2VL_ALL_OUTPUT_PORTS) !== 0,
    allInputPorts: (mod & SL2VL_ALL_INPUT_PORTS) !== 0,
  };
}

/** VLArbitrationTable blocks (the spec numbers them 1..4). */
export const VlArbBlock = { LowFirst: 1, LowSecond: 2, HighFirst: 3, HighSecond: 4 } as const;
export function vlArbMod(port: number, block: number): number {
  if (!Number.isInteger(block) || block < 1 || block > 4) {
    throw new EncodeError('AttributeModifier', 'block', `VLArbitration block ${String(block)} is out of range 1..4`);
  }
  return u32(check('port', port, 0xff) | (block << 16));
}
export function decodeVlArbMod(mod: number): { port: number; block: number } {
  return { port: mod & 0xff, block: (mod >>> 16) & 0xff };
}

/** SMInfo Set control values (AttributeModifier of an SMInfo Set between SMs). */
export const SmInfoControl = { Handover: 1, Acknowledge: 2, Disable: 3, Standby: 4, Discover: 5 } as const;
export type SmInfoControl = (typeof SmInfoControl)[keyof typeof SmInfoControl];
export function smInfoMod(control: SmInfoControl | 0): number {
  return check('control', control, 5);
}
export function decodeSmInfoMod(mod: number): { control: number } {
  return { control: mod >>> 0 };
}

/** PortInfo Gets as OpenSM makes them since its PR #39 (issue #38): a port whose CapabilityMask
 * has IsExtendedSpeedsSupported (a switch's external ports: port 0's mask) answers without its
 * extended speed fields unless the Get sets AttributeModifier bit 31 (SMSupportExtendedSpeeds).
 * Where the mask is known already (a switch's external ports, after port 0) the Get carries the
 * bit from the start; otherwise the port is read, and read again with the bit when its own mask
 * says so (osm_port_info_rcv.c). */
import { SmpAttr } from '../wire/mad.js';
import { PortCap, type PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import type { SmpClient } from './smp-client.js';

/** Does this CapabilityMask say the port has extended speeds (and wants bit 31)? */
export function hasExtendedSpeeds(pi: Pick<PortInfo, 'capabilityMask'> | undefined): boolean {
  return pi !== undefined && (pi.capabilityMask & PortCap.IsExtendedSpeedsSupported) !== 0;
}

/** The mask that decides bit 31 for port `port` of a node: a switch's external ports go by port
 * 0's, every other port by its own (`own`). */
export function extendedSpeedsPort(isSwitch: boolean, port: number, own: PortInfo | undefined, port0: PortInfo | undefined): boolean {
  return hasExtendedSpeeds(isSwitch && port !== 0 ? port0 : own);
}

/**
 * The PortInfo of `port` at `path`, decoded by `decode`. `relevant`: the CapabilityMask that
 * decides bit 31 when it is known (port 0's PortInfo for a switch's external port); without it the
 * port's own answer decides, and an answer that says IsExtendedSpeedsSupported is read again with
 * the bit.
 */
export async function getPortInfo(smp: SmpClient, path: readonly number[], port: number, decode: (b: Uint8Array) => PortInfo, relevant?: Pick<PortInfo, 'capabilityMask'>): Promise<PortInfo> {
  if (relevant) return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, hasExtendedSpeeds(relevant))));
  const first = decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port)));
  if (!hasExtendedSpeeds(first)) return first;
  return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, true)));
}

/** PortInfo Gets as OpenSM makes them since its PR #39 (issue #38): a port whose CapabilityMask
 * has IsExtendedSpeedsSupported (a switch's external ports: port 0's mask) answers without its
 * extended speed fields unless the Get sets AttributeModifier bit 31 (SMSupportExtendedSpeeds).
 * Where the mask is known already (a switch's external ports, after port 0) the Get carries the
 * bit from the start; otherwise the port is read, and read again with the bit when its own mask
 * says so (osm_port_info_rcv.c). */
import { NodeType, SmpAttr } from '../wire/mad.js';
import type { DiscoveryResult } from '../model/snapshot.js';
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
 * the bit. `known`: the port said IsExtendedSpeedsSupported at the last sweep, so it is read with
 * the bit from the start (OpenSM keeps each port's PortInfo between sweeps and sets the bit from
 * it); an answer without the capability is complete whatever the bit.
 */
export async function getPortInfo(smp: SmpClient, path: readonly number[], port: number, decode: (b: Uint8Array) => PortInfo, relevant?: Pick<PortInfo, 'capabilityMask'>, known = false): Promise<PortInfo> {
  if (relevant) return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, hasExtendedSpeeds(relevant))));
  const first = decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, known)));
  if (known || !hasExtendedSpeeds(first)) return first;
  return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, true)));
}

/** Note in `known` (port GUIDs) what a sweep's view says of IsExtendedSpeedsSupported on its
 * management ports (a switch's port 0, CA and router ports): added where its CapabilityMask has
 * the bit, removed where it has not; ports the view lacks stay as they were (a host whose cable was
 * out at the last sweep is read with the bit when it comes back). */
export function noteExtendedSpeeds(known: Set<bigint>, disc: Pick<DiscoveryResult, 'fabric' | 'nodes'>): void {
  disc.fabric.nodes.forEach((n, i) => {
    const pis = disc.nodes[i]!.portInfo;
    n.ports.forEach((p, pn) => {
      const pi = pis[pn];
      if (!p || !pi || (n.type === NodeType.Switch && pn !== 0)) return;
      if (hasExtendedSpeeds(pi)) known.add(p.guid);
      else known.delete(p.guid);
    });
  });
}

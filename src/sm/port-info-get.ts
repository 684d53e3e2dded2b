/** PortInfo Gets and AttributeModifier bit 31 (SMSupportExtendedSpeeds, issue #38): a port whose
 * CapabilityMask has IsExtendedSpeedsSupported (a switch's external ports: port 0's mask) answers
 * without its extended speed fields unless the Get sets the bit. Where the mask is known (a
 * switch's external ports, after port 0; a port seen at the last sweep) the Get follows it. A
 * port never seen is read with the bit from the start: a port without extended speeds answers in
 * full either way, so one Get serves both kinds, where OpenSM (PR #39, osm_port_info_rcv.c) reads
 * it without the bit and again with it (one SMP more for every switch and CA on a cold fabric:
 * 5,536 of 104k at 5,536 nodes, scripts/bench/README.md, "One PortInfo read a port"). An SMA that
 * refuses the bit (an error status: an old SMA that takes the modifier's high bits for a port
 * number) is read again without it. */
import { NodeType, SmpAttr } from '../wire/mad.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import { PortCap, type PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import type { SmpClient } from './smp-client.js';
import { MadStatusError } from '../rpc/errors.js';

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
 * decides bit 31 when it is known (port 0's PortInfo for a switch's external port). Else `known`:
 * what the port said of IsExtendedSpeedsSupported at the last sweep: true, read with the bit;
 * false, read without it, and again with it when the answer now says it has them (a port
 * replaced); undefined (never seen), read with the bit, and again without it if refused.
 */
export async function getPortInfo(smp: SmpClient, path: readonly number[], port: number, decode: (b: Uint8Array) => PortInfo, relevant?: Pick<PortInfo, 'capabilityMask'>, known?: boolean): Promise<PortInfo> {
  if (relevant) return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, hasExtendedSpeeds(relevant))));
  if (known === undefined) {
    try {
      return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, true)));
    } catch (e) {
      if (!(e instanceof MadStatusError)) throw e;
      return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, false)));
    }
  }
  const first = decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, known)));
  if (known || !hasExtendedSpeeds(first)) return first;
  return decode(await smp.getDr(path, SmpAttr.PortInfo, portInfoMod(port, true)));
}

/** Note in `known` (port GUID -> IsExtendedSpeedsSupported) what a sweep's view says of its
 * management ports (a switch's port 0, CA and router ports); ports the view lacks stay as they
 * were (a host whose cable was out at the last sweep is read as it was last seen). */
export function noteExtendedSpeeds(known: Map<bigint, boolean>, disc: Pick<DiscoveryResult, 'fabric' | 'nodes'>): void {
  disc.fabric.nodes.forEach((n, i) => {
    const pis = disc.nodes[i]!.portInfo;
    n.ports.forEach((p, pn) => {
      const pi = pis[pn];
      if (!p || !pi || (n.type === NodeType.Switch && pn !== 0)) return;
      known.set(p.guid, hasExtendedSpeeds(pi));
    });
  });
}

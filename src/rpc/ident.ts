/** What a MAD is, for errors and the per-destination window: read from its header through the views. */
import { MAD_SIZE, MadHeader, MadHeaderView, MgmtClass, SmpDr, SmpDrView } from '../wire/mad.js';
import { MAX_DR_HOPS } from '../wire/builders.js';
import type { MadAddress } from '../transport/types.js';
import type { MadIdent } from './errors.js';

export type DestinationKey = string | number;

// Byte offsets read for every request, from the field tables (no view object per SMP).
const MGMT_CLASS_BYTE = MadHeader.fields.mgmtClass.bit >>> 3;
const HOP_COUNT_BYTE = SmpDr.fields.hopCount.bit >>> 3;
const INITIAL_PATH_BYTE = SmpDr.fields.initialPath.bit >>> 3;

/** A directed-route SMP long enough to carry its path. */
function isDr(mad: Uint8Array): boolean {
  return mad.length >= MAD_SIZE && mad[MGMT_CLASS_BYTE] === MgmtClass.SubnDirected;
}

/** Paths up to this many hops get a number as their key (no string built per SMP). */
const NUMERIC_DR_HOPS = 6;

/** The per-destination window key: the DR path (egress ports) for class 0x81, else the LID. A
 * path of up to 6 hops is a negative number (hop count, then each port, in base 256: distinct for
 * distinct paths, never a LID); a longer one a string. */
export function defaultDestinationKey(mad: Uint8Array, addr: MadAddress): DestinationKey {
  if (isDr(mad)) {
    const n = Math.min(mad[HOP_COUNT_BYTE]!, MAX_DR_HOPS);
    if (n <= NUMERIC_DR_HOPS) {
      let key = n;
      for (let i = 1; i <= n; i++) key = key * 256 + mad[INITIAL_PATH_BYTE + i]!;
      return -1 - key;
    }
    let k = 'dr:';
    for (let i = 1; i <= n; i++) k += (i > 1 ? ',' : '') + mad[INITIAL_PATH_BYTE + i]!;
    return k;
  }
  return addr.lid;
}

export function describeDest(mad: Uint8Array, addr: MadAddress): string {
  if (isDr(mad)) {
    const v = SmpDrView.over(mad);
    const n = Math.min(v.hopCount, MAX_DR_HOPS);
    const ports: number[] = [0];
    for (let i = 1; i <= n; i++) ports.push(v.at('initialPath', i));
    return `DR path ${ports.join(',')}`;
  }
  return `LID ${addr.lid}`;
}

/** Class, method, attribute and modifier of a MAD, and where it went (`destination`, default its LID). */
export function identOf(mad: Uint8Array, addr: MadAddress, destination = `LID ${addr.lid}`): MadIdent {
  const h = MadHeaderView.over(mad);
  return { mgmtClass: h.mgmtClass, method: h.method, attrId: h.attrId, attrMod: h.attrMod, destination };
}

/** identOf with the destination described as a DR path where it is one. */
export function identFor(mad: Uint8Array, addr: MadAddress): MadIdent {
  return identOf(mad, addr, describeDest(mad, addr));
}

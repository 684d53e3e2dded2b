/** M_Key checking of the simulated SMA (IBA 14.2.4), with the M_Key lease. */
import { Method } from '../wire/mad.js';
import type { SimNode, SimPort } from './node.js';
import type { SmaHost } from './sma.js';
import { readMkey } from '../wire/builders.js';

/** M_Key check (14.2.4). Returns true when the SMP may proceed; `visible` says if PortInfo:M_Key may be shown. */
export function checkMkey(host: SmaHost, node: SimNode, mp: SimPort, req: Uint8Array, method: number): { ok: boolean; keyMatches: boolean } {
  const pi = mp.info;
  const now = host.now();
  if (mp.mkeyLeaseEnd && now >= mp.mkeyLeaseEnd) {
    mp.mkeyLeaseEnd = 0;
    pi.mkeyProtectBits = 0;
  }
  const key = readMkey(req);
  const keyMatches = pi.mkey === 0n || key === pi.mkey;
  if (keyMatches) {
    if (method === Method.Get || method === Method.Set || method === Method.TrapRepress) mp.mkeyLeaseEnd = 0;
    return { ok: true, keyMatches };
  }
  const violation = method === Method.Set || method === Method.TrapRepress || (method === Method.Get && pi.mkeyProtectBits >= 2);
  if (!violation) return { ok: true, keyMatches };
  if (pi.mkeyViolations < 0xffff) pi.mkeyViolations++;
  if (!mp.mkeyLeaseEnd && pi.mkeyLeasePeriod) mp.mkeyLeaseEnd = now + pi.mkeyLeasePeriod * 1000;
  node.stats.mkeyViolations++;
  return { ok: false, keyMatches };
}

/** M_Key checking of the simulated SMA (IBA 14.2.4), with the M_Key lease. */
import { Method } from '../wire/mad.js';
import type { SimNode, SimPort } from './node.js';
import type { SmaHost } from './sma.js';
import { readMkey } from '../wire/builders.js';

export interface MkeyCheck {
  readonly ok: boolean;
  readonly keyMatches: boolean;
}
// the outcomes, shared (a check on every SMP allocates nothing)
const MATCH: MkeyCheck = Object.freeze({ ok: true, keyMatches: true });
const PASS: MkeyCheck = Object.freeze({ ok: true, keyMatches: false });
const VIOLATION: MkeyCheck = Object.freeze({ ok: false, keyMatches: false });

/** M_Key check (14.2.4). Returns true when the SMP may proceed; `visible` says if PortInfo:M_Key may be shown. */
export function checkMkey(host: SmaHost, node: SimNode, mp: SimPort, req: Uint8Array, method: number): MkeyCheck {
  const pi = mp.info;
  const now = host.now();
  if (mp.mkeyLeaseEnd && now >= mp.mkeyLeaseEnd) {
    mp.mkeyLeaseEnd = 0;
    pi.mkeyProtectBits = 0;
  }
  const mkey = pi.mkey;
  const keyMatches = mkey === 0n || readMkey(req) === mkey;
  if (keyMatches) {
    if (method === Method.Get || method === Method.Set || method === Method.TrapRepress) mp.mkeyLeaseEnd = 0;
    return MATCH;
  }
  const violation = method === Method.Set || method === Method.TrapRepress || (method === Method.Get && pi.mkeyProtectBits >= 2);
  if (!violation) return PASS;
  if (pi.mkeyViolations < 0xffff) pi.mkeyViolations++;
  if (!mp.mkeyLeaseEnd && pi.mkeyLeasePeriod) mp.mkeyLeaseEnd = now + pi.mkeyLeasePeriod * 1000;
  node.stats.mkeyViolations++;
  return VIOLATION;
}

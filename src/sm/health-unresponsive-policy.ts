/** The unresponsive-SMA policy's setting (`--health-unresponsive`, sm/health-unresponsive.ts),
 * with no other import but the shared text's: the option table checks it at start. */
import { splitPolicy } from './health-policy-text.js';

export interface UnresponsivePolicy {
  /** Consecutive heavy sweeps whose SMPs to a node timed out (after the retries) that make it
   * unresponsive. */
  sweeps: number;
  action: 'warn' | 'isolate';
  /** An isolated node whose cheap probe has answered for this long is released (0: only by hand). */
  quietMs: number;
}

/** The quiet time when none is given: five minutes of answers. */
export const DEFAULT_UNRESPONSIVE_QUIET_S = 300;

/** Parse `K:ACTION[:QUIET_S]` (e.g. "3:isolate:300"). Throws RangeError naming what is wrong. */
export function parseUnresponsivePolicy(text: string): UnresponsivePolicy {
  const p = splitPolicy(text);
  if (!p || !/^\d+$/.test(p.what)) throw new RangeError(`health unresponsive policy "${text}": expected K:warn|isolate[:QUIET_S], e.g. 3:isolate:300`);
  const sweeps = Number(p.what);
  if (sweeps < 1) throw new RangeError(`health unresponsive policy "${text}": K (sweeps) is at least 1`);
  return { sweeps, action: p.action, quietMs: (p.quietS ?? DEFAULT_UNRESPONSIVE_QUIET_S) * 1000 };
}

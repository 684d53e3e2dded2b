/** The flapping policy's setting (`--health-flap`, sm/health-flap.ts), with no other import but the
 * shared text's: the option table checks it at start. */
import { splitPolicy } from './health-policy-text.js';

export interface FlapPolicy {
  /** State changes within `windowMs` that make a link flapping. */
  count: number;
  windowMs: number;
  action: 'warn' | 'isolate';
  /** A flapping link with no change for this long is released (0: only by hand). */
  quietMs: number;
}

/** Parse `N/WINDOW_S:ACTION[:QUIET_S]` (e.g. "25/900:isolate:900"; QUIET_S defaults to
 * WINDOW_S). Throws RangeError naming what is wrong. */
export function parseFlapPolicy(text: string): FlapPolicy {
  const p = splitPolicy(text);
  const m = p && /^(\d+)\s*\/\s*(\d+(?:\.\d+)?)$/.exec(p.what);
  if (!p || !m) throw new RangeError(`health flap policy "${text}": expected N/WINDOW_S:warn|isolate[:QUIET_S], e.g. 25/900:isolate:900`);
  const count = Number(m[1]);
  if (count < 2) throw new RangeError(`health flap policy "${text}": N is at least 2 (one change is a link going down or coming up)`);
  const windowMs = Number(m[2]) * 1000;
  if (windowMs <= 0) throw new RangeError(`health flap policy "${text}": WINDOW_S is more than 0`);
  return { count, windowMs, action: p.action, quietMs: p.quietS === undefined ? windowMs : p.quietS * 1000 };
}


/** The error-rate policy's setting (`--health-errors`, sm/health-errors.ts): the option table
 * checks it at start. The counters are PerfMgr's error counters (sm/perf-counters.ts
 * ERROR_COUNTERS), named by their perfquery label or their field name. */
import { PortCounters, type PortCounterName } from '../wire/pma.js';
import { ERROR_COUNTERS } from './perf-counters.js';
import { splitPolicy } from './health-policy-text.js';

export interface ErrorLimit {
  counter: PortCounterName;
  /** perfquery's label (SymbolErrorCounter, PortRcvErrors, ...): what the logs name. */
  label: string;
  /** Over this many per minute (between two PerfMgr readings) the port is erroring. */
  perMin: number;
}

export interface ErrorPolicy {
  limits: readonly ErrorLimit[];
  action: 'warn' | 'isolate';
  /** An erroring link whose counters do not rise for this long is released (0: only by hand). */
  quietMs: number;
}

/** QUIET_S when not given. */
export const DEFAULT_ERROR_QUIET_S = 600;

const labelOf = (n: PortCounterName): string => PortCounters.fields[n].label ?? n;
const NAMES = [...ERROR_COUNTERS].map((n) => labelOf(n));
const SYNTAX = 'expected COUNTER=RATE[,COUNTER=RATE...]:warn|isolate[:QUIET_S] (RATE per minute), e.g. SymbolErrorCounter=200,LinkDownedCounter=3:isolate:600';

/** Parse `COUNTER=RATE[,...]:ACTION[:QUIET_S]`. Throws RangeError naming what is wrong. */
export function parseErrorPolicy(text: string): ErrorPolicy {
  const p = splitPolicy(text);
  if (!p) throw new RangeError(`health error policy "${text}": ${SYNTAX}`);
  const limits: ErrorLimit[] = [];
  for (const item of p.what.split(',').map((s) => s.trim())) {
    const im = /^([A-Za-z0-9]+)\s*=\s*(\d+(?:\.\d+)?)$/.exec(item);
    if (!im) throw new RangeError(`health error policy "${text}": "${item}" is not COUNTER=RATE (${SYNTAX})`);
    const want = im[1]!.toLowerCase();
    const counter = [...ERROR_COUNTERS].find((n) => n.toLowerCase() === want || labelOf(n).toLowerCase() === want);
    if (!counter) throw new RangeError(`health error policy "${text}": no error counter "${im[1]}" (one of ${NAMES.join(', ')})`);
    const perMin = Number(im[2]);
    if (!(perMin > 0)) throw new RangeError(`health error policy "${text}": the rate of ${labelOf(counter)} is more than 0 per minute`);
    if (limits.some((l) => l.counter === counter)) throw new RangeError(`health error policy "${text}": ${labelOf(counter)} given twice`);
    limits.push({ counter, label: labelOf(counter), perMin });
  }
  return { limits, action: p.action, quietMs: (p.quietS ?? DEFAULT_ERROR_QUIET_S) * 1000 };
}

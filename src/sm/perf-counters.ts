/**
 * PerfMgr's arithmetic, without I/O: the 64-bit totals of one port from successive readings of its
 * hardware counters. Hardware PortCounters are narrow (4 to 32 bits) and saturate instead of
 * wrapping, so a total grows by the difference between two readings; a reading below the last one
 * means someone else cleared the counter (the reading is all that was counted since); a counter
 * past half its range is cleared by the PerfMgr before it can saturate and lose counts.
 * PortCountersExtended's 64-bit data counters, where the PMA has them, replace the narrow ones.
 */
import {
  counterSelectOf,
  PORT_COUNTER_NAMES,
  selectedCounters,
  PortCounters,
  type PortCounterName,
  type PortCountersExtended,
} from '../wire/pma.js';

export type CounterName = PortCounterName;

/** The counters that count errors (a rise is logged); the rest count traffic. */
export const ERROR_COUNTERS: ReadonlySet<CounterName> = new Set(PORT_COUNTER_NAMES.slice(0, 13));

/** The data counters PortCountersExtended carries 64 bits wide. */
const EXTENDED = ['xmitData', 'rcvData', 'xmitPkts', 'rcvPkts'] as const;
const isExtended = (n: CounterName): n is (typeof EXTENDED)[number] => (EXTENDED as readonly string[]).includes(n);

/** The bit width of each hardware counter, from the one PortCounters table. */
const WIDTH: Readonly<Record<CounterName, number>> = Object.fromEntries(PORT_COUNTER_NAMES.map((n) => [n, PortCounters.fields[n].width])) as Record<CounterName, number>;

export type CounterValues = Record<CounterName, bigint>;

export function zeroCounters(): CounterValues {
  return Object.fromEntries(PORT_COUNTER_NAMES.map((n) => [n, 0n])) as CounterValues;
}

/** What the PerfMgr knows of one port. */
export interface PortCounterState {
  /** 64-bit totals since the PerfMgr first saw the port. */
  readonly totals: CounterValues;
  /** The last hardware reading of each counter (0 after a clear by the PerfMgr). */
  readonly last: CounterValues;
  /** Readings taken. */
  readonly samples: number;
}

export interface Reading {
  counters: PortCounters;
  /** Present when the PMA has PortCountersExtended: its 64-bit data counters win. */
  extended?: PortCountersExtended;
}

export interface AccumulateResult {
  state: PortCounterState;
  /** How much each counter rose since the last reading. */
  delta: CounterValues;
  /** Counters that went down since the last reading: cleared by someone else. */
  clearedByOther: CounterName[];
  /** Counters seen at their maximum: counts may have been lost. */
  saturated: CounterName[];
  /** CounterSelect / CounterSelect2 to clear (0 and 0: nothing to clear). */
  clear: { counterSelect: number; counterSelect2: number };
}

function readingOf(r: Reading, name: CounterName): { value: bigint; width: number } {
  if (r.extended && isExtended(name)) return { value: r.extended[name], width: 64 };
  return { value: BigInt(r.counters[name]), width: WIDTH[name] };
}

/** Fold one reading into a port's state; the first reading of a port starts its totals at the
 * reading (what was counted before the PerfMgr came is counted too). */
export function accumulate(prev: PortCounterState | undefined, r: Reading): AccumulateResult {
  const totals = { ...(prev?.totals ?? zeroCounters()) };
  const last = { ...(prev?.last ?? zeroCounters()) };
  const delta = zeroCounters();
  const clearedByOther: CounterName[] = [];
  const saturated: CounterName[] = [];
  let counterSelect = 0;
  let counterSelect2 = 0;
  for (const name of PORT_COUNTER_NAMES) {
    const { value, width } = readingOf(r, name);
    const max = (1n << BigInt(width)) - 1n;
    let d = value - last[name];
    if (d < 0n) {
      clearedByOther.push(name);
      d = value;
    }
    delta[name] = d;
    totals[name] += d;
    last[name] = value;
    if (width === 64) continue;
    if (value === max) saturated.push(name);
    if (value > max >> 1n) {
      const sel = counterSelectOf(name);
      counterSelect |= sel.counterSelect;
      counterSelect2 |= sel.counterSelect2;
    }
  }
  return { state: { totals, last, samples: (prev?.samples ?? 0) + 1 }, delta, clearedByOther, saturated, clear: { counterSelect, counterSelect2 } };
}

/** The state after the PMA acknowledged a clear of the counters in `clear`. */
export function cleared(s: PortCounterState, clear: { counterSelect: number; counterSelect2: number }): PortCounterState {
  const last = { ...s.last };
  for (const name of selectedCounters(clear.counterSelect, clear.counterSelect2)) last[name] = 0n;
  return { ...s, last };
}

/** A counter's Prometheus name: perfquery's label in snake case (UFM telemetry's names),
 * `PortXmitData` → `port_xmit_data`, `SymbolErrorCounter` → `symbol_error_counter`. */
export function counterMetricName(name: CounterName): string {
  const label = PortCounters.fields[name].label ?? name;
  return label.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2').toLowerCase();
}

/**
 * PerfMgr's arithmetic, without I/O: the 64-bit totals of one port from successive readings of its
 * hardware counters. Hardware PortCounters are narrow (4 to 32 bits) and saturate instead of
 * wrapping, so a total grows by the difference between two readings; a reading below the last one
 * means someone else cleared the counter (the reading is all that was counted since); a counter
 * past half its range is cleared by the PerfMgr before it can saturate and lose counts.
 * PortCountersExtended's 64-bit data counters, where the PMA has them, replace the narrow ones.
 *
 * A port's state is typed arrays indexed by the counter's place in PORT_COUNTER_NAMES, mutated in
 * place by each reading (no per-reading object): the totals exact in a BigUint64Array, the last
 * narrow readings as numbers (they fit in 32 bits), the last 64-bit readings as bigints. The
 * records by name (`totals`, `last`, `delta`) are built only when asked for.
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

/** How many counters a port has. */
const N = PORT_COUNTER_NAMES.length;

/** The counters that count errors (a rise is logged); the rest count traffic. */
export const ERROR_COUNTERS: ReadonlySet<CounterName> = new Set(PORT_COUNTER_NAMES.slice(0, 13));

/** The data counters PortCountersExtended carries 64 bits wide. */
const EXTENDED = ['xmitData', 'rcvData', 'xmitPkts', 'rcvPkts'] as const;
const IS_EXTENDED: readonly boolean[] = PORT_COUNTER_NAMES.map((n) => (EXTENDED as readonly string[]).includes(n));

/** The bit width of each hardware counter, from the one PortCounters table; its maximum; the
 * clear bits of each. */
const WIDTH: readonly number[] = PORT_COUNTER_NAMES.map((n) => PortCounters.fields[n].width);
const MAX: readonly number[] = WIDTH.map((w) => 2 ** w - 1);
const SELECT: readonly { counterSelect: number; counterSelect2: number }[] = PORT_COUNTER_NAMES.map((n) => counterSelectOf(n));

export type CounterValues = Record<CounterName, bigint>;

export function zeroCounters(): CounterValues {
  return Object.fromEntries(PORT_COUNTER_NAMES.map((n) => [n, 0n])) as CounterValues;
}

function recordOf(get: (i: number) => bigint): CounterValues {
  const out = {} as CounterValues;
  for (let i = 0; i < N; i++) out[PORT_COUNTER_NAMES[i]!] = get(i);
  return out;
}

/** What the PerfMgr knows of one port (mutated in place by accumulate and cleared). */
export class PortCounterState {
  /** 64-bit totals since the PerfMgr first saw the port, by counter index. */
  readonly totalWords = new BigUint64Array(N);
  /** The last narrow hardware reading of each counter (0 after a clear by the PerfMgr). */
  readonly lastNarrow = new Float64Array(N);
  /** The last 64-bit reading of each extended counter, where `wide[i]` is 1. */
  readonly lastWide = new BigUint64Array(N);
  readonly wide = new Uint8Array(N);
  /** Readings taken. */
  samples = 0;
  /** The record `totals` last built, dropped by the next reading. */
  private totalsRecord: CounterValues | undefined;

  /** One counter's total. */
  total(name: CounterName): bigint {
    return this.totalWords[PORT_COUNTER_NAMES.indexOf(name)]!;
  }
  /** The totals by name: a record that later readings do not change (built once per reading,
   * when asked for). */
  get totals(): CounterValues {
    return (this.totalsRecord ??= Object.freeze(recordOf((i) => this.totalWords[i]!)));
  }
  /** Called by accumulate: the totals changed. */
  changed(): void {
    this.totalsRecord = undefined;
  }
  /** The last readings by name (a fresh record). */
  get last(): CounterValues {
    return recordOf((i) => (this.wide[i] ? this.lastWide[i]! : BigInt(this.lastNarrow[i]!)));
  }
}

export interface Reading {
  counters: PortCounters;
  /** Present when the PMA has PortCountersExtended: its 64-bit data counters win. */
  extended?: PortCountersExtended;
}

const NONE: readonly CounterName[] = Object.freeze([]) as readonly CounterName[];

export class AccumulateResult {
  /** Counters that went down since the last reading: cleared by someone else. */
  clearedByOther: CounterName[] = NONE as CounterName[];
  /** Counters seen at their maximum: counts may have been lost. */
  saturated: CounterName[] = NONE as CounterName[];
  /** CounterSelect / CounterSelect2 to clear (0 and 0: nothing to clear). */
  readonly clear = { counterSelect: 0, counterSelect2: 0 };
  /** How much each counter rose since the last reading, by counter index. */
  readonly deltaWords = new BigUint64Array(N);
  constructor(readonly state: PortCounterState) {}
  /** How much each counter rose since the last reading, by name (built when asked for). */
  get delta(): CounterValues {
    return recordOf((i) => this.deltaWords[i]!);
  }
}

/** Fold one reading into a port's state (`prev`, mutated in place, or a new one); the first
 * reading of a port starts its totals at the reading (what was counted before the PerfMgr came is
 * counted too). */
export function accumulate(prev: PortCounterState | undefined, r: Reading): AccumulateResult {
  const s = prev ?? new PortCounterState();
  const out = new AccumulateResult(s);
  const { totalWords, lastNarrow, lastWide, wide } = s;
  const dw = out.deltaWords;
  const c = r.counters as unknown as Record<CounterName, number>;
  const x = r.extended as unknown as Record<CounterName, bigint> | undefined;
  for (let i = 0; i < N; i++) {
    const name = PORT_COUNTER_NAMES[i]!;
    if (x !== undefined && IS_EXTENDED[i]) {
      const value = x[name];
      const was = wide[i] ? lastWide[i]! : BigInt(lastNarrow[i]!);
      let d = value - was;
      if (d < 0n) {
        (out.clearedByOther === NONE ? (out.clearedByOther = []) : out.clearedByOther).push(name);
        d = value;
      }
      dw[i] = d;
      if (d !== 0n) totalWords[i] = totalWords[i]! + d;
      lastWide[i] = value;
      wide[i] = 1;
      continue;
    }
    const value = c[name];
    let d: number;
    if (wide[i]) {
      // a 64-bit reading before this narrow one (the PMA stopped offering the extended counters)
      const was = lastWide[i]!;
      d = BigInt(value) < was ? -1 : Number(BigInt(value) - was);
      wide[i] = 0;
    } else d = value - lastNarrow[i]!;
    if (d < 0) {
      (out.clearedByOther === NONE ? (out.clearedByOther = []) : out.clearedByOther).push(name);
      d = value;
    }
    if (d !== 0) {
      const bd = BigInt(d);
      dw[i] = bd;
      totalWords[i] = totalWords[i]! + bd;
    }
    lastNarrow[i] = value;
    const max = MAX[i]!;
    if (value === max) (out.saturated === NONE ? (out.saturated = []) : out.saturated).push(name);
    if (value > (max - 1) / 2) {
      out.clear.counterSelect |= SELECT[i]!.counterSelect;
      out.clear.counterSelect2 |= SELECT[i]!.counterSelect2;
    }
  }
  s.samples++;
  s.changed();
  return out;
}

/** After the PMA acknowledged a clear of the counters in `clear`: their last readings are 0 (the
 * state is mutated in place and returned). */
export function cleared(s: PortCounterState, clear: { counterSelect: number; counterSelect2: number }): PortCounterState {
  for (const name of selectedCounters(clear.counterSelect, clear.counterSelect2)) {
    const i = PORT_COUNTER_NAMES.indexOf(name);
    s.lastNarrow[i] = 0;
    s.lastWide[i] = 0n;
    s.wide[i] = 0;
  }
  return s;
}

/** A counter's Prometheus name after `ibsm_port_` (api/metrics.ts): perfquery's label in snake
 * case without its `Port` (the metric says it: no `ibsm_port_port_...`), in base units as
 * Prometheus wants them: `SymbolErrorCounter` → `symbol_error_counter`, `PortRcvErrors` →
 * `rcv_errors`, `PortXmitData` → `xmit_data_bytes` (the PMA counts 4-octet words: the metric is
 * ×4, `counterMetricScale`), `PortXmitPkts` → `xmit_packets`. */
export function counterMetricName(name: CounterName): string {
  const label = PortCounters.fields[name].label ?? name;
  const snake = label.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2').toLowerCase().replace(/^port_/, '');
  return snake.replace(/_data$/, '_data_bytes').replace(/_pkts$/, '_packets');
}

/** What a counter's total is multiplied by in its metric: 4 for the data counters (4-octet
 * words to bytes), else 1. */
export function counterMetricScale(name: CounterName): number {
  return name === 'xmitData' || name === 'rcvData' ? 4 : 1;
}

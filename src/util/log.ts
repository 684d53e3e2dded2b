/** Structured logging. Lines are written synchronously (fs.writeSync), so an operator's script
 * that waits for a line (e.g. "SUBNET UP") sees it the moment it happens, never left in a buffer.
 * Every line carries the stable code of its message (util/log-codes.ts): text, a column after the
 * level; JSON, a "code" field. Messages are constant text; what varies goes in the fields. */
import { writeSync } from 'node:fs';
import { logCodeOf } from './log-codes.js';
import { formatGuid } from './guid.js';

export type Level = 'debug' | 'info' | 'warn' | 'error';
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface LogSink {
  write(line: string): void;
}

export const stderrSink: LogSink = {
  write(line: string) {
    try {
      writeSync(2, line + '\n');
    } catch {
      /* a closed stderr must not crash the SM */
    }
  },
};

const plain = (v: unknown): string => (typeof v === 'bigint' ? formatGuid(v) : String(v));

/** Width of the code column of text lines ("IBSM-1001"). */
const CODE_WIDTH = 9;

export class Logger {
  /** The rate limit of the lines a remote party can trigger (`from`); shared with every child. */
  readonly limiter: LogLimiter;
  constructor(
    private readonly sink: LogSink = stderrSink,
    private readonly min: Level = 'info',
    private readonly format: 'text' | 'json' = 'text',
    private readonly fields: Record<string, unknown> = {},
    private readonly now: () => Date = () => new Date(),
    limiter?: LogLimiter,
  ) {
    this.limiter = limiter ?? new LogLimiter();
  }

  child(fields: Record<string, unknown>): Logger {
    return new Logger(this.sink, this.min, this.format, { ...this.fields, ...fields }, this.now, this.limiter);
  }

  /** The log of lines a remote party (a host on the fabric, a client of a server) can trigger:
   * `source` names it (a LID, an address). Rate-limited per source and code by the limiter (see
   * LogLimiter): the first line in an interval is written, the rest counted and summed up in one
   * "log lines suppressed" line per interval. Every remotely triggerable line goes through here. */
  from(source: string | number | bigint): RemoteLog {
    return new RemoteLog(this, typeof source === 'bigint' ? formatGuid(source) : String(source));
  }

  enabled(level: Level): boolean {
    return ORDER[level] >= ORDER[this.min];
  }

  log(level: Level, msg: string, fields: Record<string, unknown> = {}): void {
    if (!this.enabled(level)) return;
    const all = { ...this.fields, ...fields };
    const code = logCodeOf(msg);
    // A message may name a field in braces ("handover to {master}"): the line says the value
    // there (a contract of some lines); the code is still looked up by the constant text.
    const used = new Set<string>();
    const text = msg.includes('{') ? msg.replace(/\{(\w+)\}/g, (m, k: string) => (k in all ? (used.add(k), plain(all[k])) : m)) : msg;
    if (this.format === 'json') {
      this.sink.write(JSON.stringify({ time: this.now().toISOString(), level, code: code ?? null, msg: text, ...all, ...(code ? { code } : {}) }, (_k, v) => (typeof v === 'bigint' ? formatGuid(v) : v)));
      return;
    }
    const kv = Object.entries(all)
      .filter(([k]) => !used.has(k))
      .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : plain(v)}`)
      .join(' ');
    this.sink.write(`${this.now().toISOString()} ${level.padEnd(5)} ${(code ?? '-').padEnd(CODE_WIDTH)} ${text}${kv ? ' ' + kv : ''}`);
  }
  debug(msg: string, f?: Record<string, unknown>): void {
    this.log('debug', msg, f);
  }
  info(msg: string, f?: Record<string, unknown>): void {
    this.log('info', msg, f);
  }
  warn(msg: string, f?: Record<string, unknown>): void {
    this.log('warn', msg, f);
  }
  error(msg: string, f?: Record<string, unknown>): void {
    this.log('error', msg, f);
  }
}

/** What `Logger.from(source)` returns: the levels of a Logger, each line admitted by the limiter. */
export class RemoteLog {
  constructor(
    private readonly log: Logger,
    private readonly source: string,
  ) {}
  private line(level: Level, msg: string, f?: Record<string, unknown>): void {
    if (!this.log.enabled(level)) return;
    if (this.log.limiter.admit(this.log, logCodeOf(msg) ?? msg, this.source)) this.log.log(level, msg, f);
  }
  debug(msg: string, f?: Record<string, unknown>): void {
    this.line('debug', msg, f);
  }
  info(msg: string, f?: Record<string, unknown>): void {
    this.line('info', msg, f);
  }
  warn(msg: string, f?: Record<string, unknown>): void {
    this.line('warn', msg, f);
  }
  error(msg: string, f?: Record<string, unknown>): void {
    this.line('error', msg, f);
  }
}

export interface LogLimiterOptions {
  /** The interval, ms: per (source, code) one line, then one summary per interval. Default 60 s. */
  intervalMs?: number;
  /** First lines of new (source, code) pairs written per interval, all sources together; beyond,
   * they are counted under the source "*". Default 100. */
  linesPerInterval?: number;
  /** (source, code) pairs remembered; beyond, new pairs are counted under "*". Default 4096. */
  maxKeys?: number;
  /** Milliseconds now (default Date.now). */
  now?: () => number;
  /** Call `fn` in `ms` (default an unref'd setTimeout, so it never holds the process up). */
  schedule?: (fn: () => void, ms: number) => { cancel(): void };
}

interface LimitEntry {
  log: Logger;
  code: string;
  source: string;
  /** When the entry's interval began. */
  at: number;
  suppressed: number;
}

/**
 * The one rate limit of log lines a remote party can trigger (docs/log-codes.md, "Lines a remote
 * party can trigger"). Keyed by source and code: the first occurrence is written; the next ones
 * within the interval are counted, and once per interval a summary line ("log lines suppressed",
 * IBSM-8050: code, source, how many) is written for each pair that had some. New pairs beyond
 * `linesPerInterval` an interval, or beyond `maxKeys` remembered, are counted in one summary of
 * the source "*". So a flood, from any number of sources, writes at most about
 * 2 × linesPerInterval + 1 lines an interval.
 */
export class LogLimiter {
  readonly intervalMs: number;
  private readonly linesPerInterval: number;
  private readonly maxKeys: number;
  private readonly now: () => number;
  private readonly schedule: NonNullable<LogLimiterOptions['schedule']>;
  private readonly entries = new Map<string, LimitEntry>();
  /** First lines written in this interval (all pairs). */
  private written = 0;
  /** Lines of pairs not remembered (over the budget or the key bound), since the last summary. */
  private others = 0;
  private othersLog: Logger | undefined;
  private timer: { cancel(): void } | undefined;
  /** Lines suppressed in all, since the start (tests, metrics). */
  suppressedTotal = 0;

  constructor(o: LogLimiterOptions = {}) {
    this.intervalMs = o.intervalMs ?? 60_000;
    this.linesPerInterval = o.linesPerInterval ?? 100;
    this.maxKeys = o.maxKeys ?? 4096;
    this.now = o.now ?? Date.now;
    this.schedule =
      o.schedule ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        t.unref();
        return { cancel: () => clearTimeout(t) };
      });
  }

  /** Whether a line of `code` from `source` is written now (false: counted for the summary). */
  admit(log: Logger, code: string, source: string): boolean {
    const key = `${code}\u0000${source}`;
    const e = this.entries.get(key);
    const now = this.now();
    if (e) {
      if (now - e.at < this.intervalMs) {
        e.suppressed++;
        this.suppressedTotal++;
        this.arm();
        return false;
      }
      // A quiet pair whose interval is over (the timer sums it up and forgets it; not run yet).
      this.summarise(e);
      e.at = now;
      return true;
    }
    if (this.written >= this.linesPerInterval || this.entries.size >= this.maxKeys) {
      this.others++;
      this.othersLog ??= log;
      this.suppressedTotal++;
      this.arm();
      return false;
    }
    this.written++;
    this.entries.set(key, { log, code, source, at: now, suppressed: 0 });
    this.arm();
    return true;
  }

  /** Write the summaries now and forget the pairs (at stop, so no count is lost). */
  flush(): void {
    this.timer?.cancel();
    this.timer = undefined;
    for (const e of this.entries.values()) this.summarise(e);
    this.entries.clear();
    this.summariseOthers();
    this.written = 0;
  }

  private arm(): void {
    if (this.timer) return;
    this.timer = this.schedule(() => this.tick(), this.intervalMs);
  }

  /** Once per interval: a summary per pair with lines suppressed (its interval starts again, so a
   * flood keeps to one summary an interval); quiet pairs whose interval is over are forgotten. */
  private tick(): void {
    this.timer = undefined;
    const now = this.now();
    let summaries = 0;
    for (const [k, e] of this.entries) {
      if (e.suppressed > 0) {
        if (summaries++ < this.linesPerInterval) this.summarise(e);
        else {
          this.others += e.suppressed;
          this.othersLog ??= e.log;
          e.suppressed = 0;
        }
        e.at = now;
      } else if (now - e.at >= this.intervalMs) this.entries.delete(k);
    }
    this.summariseOthers();
    this.written = 0;
    if (this.entries.size) this.arm();
  }

  private summarise(e: LimitEntry): void {
    if (e.suppressed === 0) return;
    e.log.warn('log lines suppressed: a remote party repeats this line', { suppressedCode: e.code, source: e.source, suppressed: e.suppressed, seconds: this.intervalMs / 1000 });
    e.suppressed = 0;
  }

  private summariseOthers(): void {
    if (this.others === 0 || !this.othersLog) return;
    this.othersLog.warn('log lines suppressed: a remote party repeats this line', { suppressedCode: '*', source: '*', suppressed: this.others, seconds: this.intervalMs / 1000 });
    this.others = 0;
    this.othersLog = undefined;
  }
}

/** Collects lines in memory (tests). */
export class MemorySink implements LogSink {
  readonly lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
}

/** A terminal that shows a progress line below the log (`ibsm run` and `ibsm discover` on a TTY):
 * a log line first clears the progress line (`\r\x1b[K`), then the progress line is drawn again
 * under it, in one write so nothing interleaves. */
export class ProgressTty implements LogSink {
  private line = '';
  constructor(private readonly out: (s: string) => void = (s) => {
    try {
      writeSync(2, s);
    } catch {
      /* a closed stderr must not crash the SM */
    }
  }) {}

  /** Show (replace) the progress line. */
  progress(text: string): void {
    if (text === this.line) return;
    this.line = text;
    this.out(`\r${text}\x1b[K`);
  }

  /** Leave the progress line as it is and go on below it. */
  end(): void {
    if (!this.line) return;
    this.line = '';
    this.out('\n');
  }

  write(line: string): void {
    this.out(this.line ? `\r\x1b[K${line}\n${this.line}` : line + '\n');
  }
}

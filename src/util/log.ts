/** Structured logging. Lines are written synchronously (fs.writeSync), so an operator's script
 * that waits for a line (e.g. "SUBNET UP") sees it the moment it happens, never left in a buffer.
 * Every line carries the stable code of its message (util/log-codes.ts): text, a column after the
 * level; JSON, a "code" field. Messages are constant text; what varies goes in the fields. */
import { writeSync } from 'node:fs';
import { logCodeOf } from './log-codes.js';

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

const hex64 = (v: bigint): string => '0x' + v.toString(16).padStart(16, '0');
const plain = (v: unknown): string => (typeof v === 'bigint' ? hex64(v) : String(v));

const pad2 = (n: number): string => (n < 10 ? '0' : '') + n;

/** `new Date(ms).toISOString()`, computed from the epoch milliseconds: a process's first
 * Date#toISOString sets up V8's date cache (reads /etc/localtime, ~0.3 ms), which the first log
 * line, before the SM's first SMP, then does not wait for. Days to a civil date as in Howard
 * Hinnant's days_from_civil inverse; outside years 0-9999 (ISO's extended years) Date does it. */
export function isoTime(ms: number): string {
  const days = Math.floor(ms / 86_400_000);
  const t = ms - days * 86_400_000;
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  if (!Number.isInteger(ms) || y < 0 || y > 9999) return new Date(ms).toISOString();
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const msec = t % 1000;
  const sec = Math.floor(t / 1000);
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}T${pad2(Math.floor(sec / 3600))}:${pad2(Math.floor(sec / 60) % 60)}:${pad2(sec % 60)}.${msec < 100 ? (msec < 10 ? '00' : '0') : ''}${msec}Z`;
}

/** Width of the code column of text lines ("IBSM-1001"). */
const CODE_WIDTH = 9;

export class Logger {
  constructor(
    private readonly sink: LogSink = stderrSink,
    private readonly min: Level = 'info',
    private readonly format: 'text' | 'json' = 'text',
    private readonly fields: Record<string, unknown> = {},
    /** The clock of the lines' time (default: Date.now, written by isoTime). */
    private readonly now?: () => Date,
  ) {}

  private time(): string {
    return this.now ? this.now().toISOString() : isoTime(Date.now());
  }

  child(fields: Record<string, unknown>): Logger {
    return new Logger(this.sink, this.min, this.format, { ...this.fields, ...fields }, this.now);
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
      this.sink.write(JSON.stringify({ time: this.time(), level, code: code ?? null, msg: text, ...all, ...(code ? { code } : {}) }, (_k, v) => (typeof v === 'bigint' ? hex64(v) : v)));
      return;
    }
    const kv = Object.entries(all)
      .filter(([k]) => !used.has(k))
      .map(([k, v]) => `${k}=${typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : plain(v)}`)
      .join(' ');
    this.sink.write(`${this.time()} ${level.padEnd(5)} ${(code ?? '-').padEnd(CODE_WIDTH)} ${text}${kv ? ' ' + kv : ''}`);
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

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

/** Width of the code column of text lines ("IBSM-1001"). */
const CODE_WIDTH = 9;

export class Logger {
  constructor(
    private readonly sink: LogSink = stderrSink,
    private readonly min: Level = 'info',
    private readonly format: 'text' | 'json' = 'text',
    private readonly fields: Record<string, unknown> = {},
    private readonly now: () => Date = () => new Date(),
  ) {}

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
      this.sink.write(JSON.stringify({ time: this.now().toISOString(), level, code: code ?? null, msg: text, ...all, ...(code ? { code } : {}) }, (_k, v) => (typeof v === 'bigint' ? hex64(v) : v)));
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

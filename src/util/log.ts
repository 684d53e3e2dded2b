/** Structured logging. Lines are written synchronously (fs.writeSync), so an operator's script
 * that waits for a line (e.g. "SUBNET UP") sees it the moment it happens, never left in a buffer. */
import { writeSync } from 'node:fs';

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
    if (this.format === 'json') {
      this.sink.write(JSON.stringify({ time: this.now().toISOString(), level, msg, ...all }, (_k, v) => (typeof v === 'bigint' ? '0x' + v.toString(16).padStart(16, '0') : v)));
      return;
    }
    const kv = Object.entries(all)
      .map(([k, v]) => `${k}=${typeof v === 'bigint' ? '0x' + v.toString(16).padStart(16, '0') : typeof v === 'string' && /\s/.test(v) ? JSON.stringify(v) : String(v)}`)
      .join(' ');
    this.sink.write(`${this.now().toISOString()} ${level.padEnd(5)} ${msg}${kv ? ' ' + kv : ''}`);
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

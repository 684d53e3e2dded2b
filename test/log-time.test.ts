/** The log lines' time: the wall clock at the line by default, or the clock a Logger is given. */
import { describe, expect, it } from 'vitest';
import { Logger, type LogSink } from '../src/util/log.js';

describe('log line time', () => {
  it('is the time of a log line by default; an injected clock still sets it', () => {
    const lines: string[] = [];
    const sink: LogSink = { write: (l) => void lines.push(l) };
    const before = Date.now();
    new Logger(sink).info('SUBNET UP', { nodes: 1 });
    const after = Date.now();
    const at = Date.parse(lines[0]!.split(' ')[0]!);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z info  IBSM-1001 SUBNET UP nodes=1$/);
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(after);
    new Logger(sink, 'info', 'json', {}, () => new Date(0)).info('SUBNET UP');
    expect(JSON.parse(lines[1]!).time).toBe('1970-01-01T00:00:00.000Z');
  });
});

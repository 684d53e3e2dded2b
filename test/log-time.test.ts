/** The log lines' time (util/log.ts isoTime): written from Date.now() without a Date, so a
 * process's first line does not set up V8's date cache (~0.3 ms before the SM's first SMP). The
 * witness is Date#toISOString, for every millisecond of years 0-9999 fast-check picks, the
 * edges of the days, months and leap years, and the fallback outside (extended years). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isoTime, Logger, type LogSink } from '../src/util/log.js';

const YEAR0 = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
const Y10K = Date.UTC(10000, 0, 1);

describe('isoTime', () => {
  it('writes what Date#toISOString writes, across years 0-9999 and outside them', () => {
    expect(new Date(YEAR0).toISOString()).toBe("0000-01-01T00:00:00.000Z");
    fc.assert(
      fc.property(fc.integer({ min: YEAR0, max: Y10K - 1 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 2_000 },
    );
  });

  it('at the edges: midnight, month and year ends, 29 February, the epoch, years 0 and 9999', () => {
    const edges: number[] = [0, -1, 1, 999, 1000, YEAR0, YEAR0 - 1, Y10K - 1, Y10K];
    for (const y of [1600, 1700, 1900, 1969, 1970, 2000, 2024, 2025, 2100, 9999]) {
      for (const [m, d] of [[0, 1], [1, 28], [1, 29], [2, 1], [11, 31]] as const) {
        const t = Date.UTC(y, m, d);
        edges.push(t, t - 1, t + 86_399_999);
      }
    }
    for (const ms of edges) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(isoTime(1.5)).toBe(new Date(1.5).toISOString());
    expect(() => isoTime(NaN)).toThrow(RangeError);
  });

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

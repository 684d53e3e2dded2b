import { describe, expect, it } from 'vitest';
import { pump } from '../src/util/pump.js';

describe('pump', () => {
  it('runs every job with at most `limit` in flight, pulling jobs lazily', async () => {
    let inFlight = 0;
    let peak = 0;
    let produced = 0;
    const done: number[] = [];
    function* jobs() {
      for (let i = 0; i < 100; i++) {
        produced++;
        expect(produced - done.length).toBeLessThanOrEqual(4); // never more than `limit` produced ahead
        yield async () => {
          inFlight++;
          peak = Math.max(peak, inFlight);
          await new Promise((r) => setTimeout(r, (i * 7) % 3));
          inFlight--;
          done.push(i);
        };
      }
    }
    await pump(jobs(), 4);
    expect(done.sort((a, b) => a - b)).toEqual([...Array(100).keys()]);
    expect(peak).toBe(4);
  });
  it('rejects with the first error and starts no new job after it', async () => {
    let started = 0;
    const jobs = Array.from({ length: 50 }, (_, i) => async () => {
      started++;
      await new Promise((r) => setTimeout(r, 1));
      if (i === 3) throw new Error('job 3 failed');
    });
    await expect(pump(jobs, 2)).rejects.toThrow('job 3 failed');
    expect(started).toBeLessThan(10);
  });
});

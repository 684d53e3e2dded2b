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
  it('a job that throws synchronously, or an iterator that throws, rejects after the jobs in flight settle', async () => {
    let settled = 0;
    const slow = async () => {
      await new Promise((r) => setTimeout(r, 5));
      settled++;
    };
    const sync = () => {
      throw new Error('sync throw');
    };
    await expect(pump([slow, slow, sync as () => Promise<unknown>, slow], 3)).rejects.toThrow('sync throw');
    expect(settled).toBe(2); // both jobs started before it settled; the one after it never started
    function* bad() {
      yield slow;
      throw new Error('iterator broke');
    }
    settled = 0;
    await expect(pump(bad(), 4)).rejects.toThrow('iterator broke');
    expect(settled).toBe(1);
  });
  it('an empty job list resolves; the order of starts is the iterator\'s', async () => {
    await expect(pump([], 8)).resolves.toBeUndefined();
    const order: number[] = [];
    await pump(
      Array.from({ length: 20 }, (_, i) => async () => {
        order.push(i);
      }),
      0, // taken as 1
    );
    expect(order).toEqual([...Array(20).keys()]);
  });
});

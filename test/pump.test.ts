import { describe, expect, it } from 'vitest';
import { pump, pumpSlots } from '../src/util/pump.js';

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

describe('pumpSlots', () => {
  it('starts every job with at most `limit` not done, a job settling inside start() included', async () => {
    let active = 0;
    let peak = 0;
    let n = 0;
    const finished: number[] = [];
    await pumpSlots((done) => {
      if (n === 100) return false;
      const i = n++;
      active++;
      peak = Math.max(peak, active);
      const settle = (): void => {
        active--;
        finished.push(i);
        done();
      };
      if (i % 5 === 0) settle(); // settles at once, inside start()
      else setTimeout(settle, (i * 7) % 3);
      return true;
    }, 4);
    expect(finished.sort((a, b) => a - b)).toEqual([...Array(100).keys()]);
    expect(peak).toBe(4);
    expect(active).toBe(0);
  });

  it('done(error) rejects with the first error once the jobs in flight are done, and starts no more', async () => {
    let started = 0;
    let active = 0;
    const run = pumpSlots((done) => {
      const i = started++;
      active++;
      setTimeout(() => {
        active--;
        done(i === 3 || i === 4 ? new Error(`job ${i} failed`) : undefined);
      }, i === 4 ? 10 : 1); // job 4 fails after job 3: the first failure is 3's
      return true;
    }, 2);
    await expect(run).rejects.toThrow('job 3 failed');
    expect(active).toBe(0);
    expect(started).toBeLessThan(8);
  });

  it('start() throwing rejects after the jobs in flight are done', async () => {
    let n = 0;
    let active = 0;
    const run = pumpSlots((done) => {
      if (n++ === 3) throw new Error('no more');
      active++;
      setTimeout(() => {
        active--;
        done();
      }, 5);
      return true;
    }, 8);
    await expect(run).rejects.toThrow('no more');
    expect(active).toBe(0);
    expect(n).toBe(4);
  });

  it('nothing to start: resolves at once', async () => {
    await expect(pumpSlots(() => false, 4)).resolves.toBeUndefined();
  });
});

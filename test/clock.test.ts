/** VirtualClock.runUntil: jumps from deadline to deadline, lets continuations settle in between,
 * and tells a deadlock from a timeout. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';

const sleep = (c: VirtualClock, ms: number): Promise<void> => new Promise((r) => c.setTimeout(r, ms));

describe('VirtualClock.runUntil', () => {
  it('jumps straight to each deadline, running continuations (and zero-delay timers) between them', async () => {
    const c = new VirtualClock();
    const seen: number[] = [];
    const work = (async () => {
      await sleep(c, 10_000);
      seen.push(c.now());
      await new Promise<void>((r) => c.defer(r));
      await Promise.resolve();
      seen.push(c.now());
      await sleep(c, 0.5);
      seen.push(c.now());
      return 'done';
    })();
    expect(await c.runUntil(work)).toBe('done');
    expect(seen).toEqual([10_000, 10_000, 10_000.5]);
    expect(c.now()).toBe(10_000.5);
  });

  it('returns the rejection of the promise', async () => {
    const c = new VirtualClock();
    const p = sleep(c, 5).then(() => Promise.reject(new Error('boom')));
    await expect(c.runUntil(p)).rejects.toThrow('boom');
    expect(c.now()).toBe(5);
  });

  it('throws when maxMs of virtual time would pass, leaving the clock at the limit', async () => {
    const c = new VirtualClock();
    const p = sleep(c, 500);
    await expect(c.runUntil(p, 100)).rejects.toThrow(/did not settle within 100 ms/);
    expect(c.now()).toBe(100);
    await c.runUntil(p); // still settles later
    expect(c.now()).toBe(500);
  });

  it('reports a deadlock when nothing is pending and the promise has not settled', async () => {
    const c = new VirtualClock();
    const never = sleep(c, 3).then(() => new Promise<void>(() => undefined));
    await expect(c.runUntil(never)).rejects.toThrow(/deadlock: the promise has not settled at 3 ms .*no timer is pending/);
  });

  it('runs until a condition holds', async () => {
    const c = new VirtualClock();
    let n = 0;
    const tick = (): void => void c.setTimeout(() => (n++, tick()), 7);
    tick();
    await c.runUntil(() => n >= 3, 1000);
    expect(c.now()).toBe(21);
    await expect(c.runUntil(() => n >= 1000, 70)).rejects.toThrow(/did not settle within 70 ms/);
  });

  it('advanceToNext fires only the earliest timer', () => {
    const c = new VirtualClock();
    const fired: string[] = [];
    c.setTimeout(() => fired.push('b'), 20);
    c.setTimeout(() => (fired.push('a'), c.defer(() => fired.push('a2'))), 10);
    expect(c.advanceToNext()).toBe(true);
    expect([fired, c.now()]).toEqual([['a'], 10]);
    expect(c.advanceToNext()).toBe(true);
    expect([fired, c.now()]).toEqual([['a', 'a2'], 10]);
    c.advanceToNext();
    expect(c.advanceToNext()).toBe(false);
    expect([fired, c.now()]).toEqual([['a', 'a2', 'b'], 20]);
  });
});

/** PacedClock (util/paced-clock.ts), the one time base of an in-process fabric and its SM: what is
 * due within the lead runs at once and in time order, with now() at its due time; a longer timer
 * waits for real time (here a fake real time that stands still: it does not fire). */
import { describe, expect, it } from 'vitest';
import { PacedClock } from '../src/util/paced-clock.js';

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

describe('PacedClock', () => {
  it('runs sub-lead timers at once in time order, now() at each due time; a long one waits for real time', async () => {
    const realTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = realTimers();
    let real = 100;
    const clock = new PacedClock(1, () => real);
    const seen: Array<[string, number]> = [];
    const at = (name: string) => () => seen.push([name, clock.now()]);
    const long = clock.setTimeout(at('long'), 5_000);
    clock.setTimeout(at('b'), 0.002);
    clock.setTimeout(at('a'), 0.001);
    clock.defer(at('deferred'));
    const cancelled = clock.setTimeout(at('cancelled'), 0.0015);
    clock.clearTimeout(cancelled);
    await turns(5);
    expect(seen.map(([n]) => n)).toEqual(['deferred', 'a', 'b']);
    expect(seen[0]![1]).toBe(100);
    expect(seen[1]![1]).toBeCloseTo(100.001, 9);
    expect(seen[2]![1]).toBeCloseTo(100.002, 9);
    // a timer set by a timer runs in a later turn, at its own due time
    clock.setTimeout(() => clock.setTimeout(at('chained'), 0.5), 0);
    await turns(5);
    expect(seen.at(-1)![0]).toBe('chained');
    expect(seen.at(-1)![1]).toBeCloseTo(100.502, 9);
    // real time stands still: the 5 s timer has not fired, and now() never went back
    expect(seen.some(([n]) => n === 'long')).toBe(false);
    expect(clock.now()).toBeCloseTo(100.502, 9);
    real = 200;
    expect(clock.now()).toBe(200);
    expect(clock.pending).toBe(1);
    // one real timer waits for it; cancelled, none is left to hold the process
    expect(realTimers()).toBe(before + 1);
    clock.clearTimeout(long);
    expect(realTimers()).toBe(before);
  });
});

/** The simulated fabric's scheduler keeps due times to whole nanoseconds (issue #16): MADs whose
 * due times are the same sum of hop latencies from different start times (equal but for
 * floating-point rounding) share one bucket and one clock timer, and run in the order they were
 * scheduled; due times a nanosecond or more apart keep their order. */
import { describe, expect, it } from 'vitest';
import { VirtualClock, type TimerHandle } from '../src/util/clock.js';
import { Scheduler } from '../src/sim/scheduler.js';

/** A virtual clock that counts the timers armed on it. */
class CountingClock extends VirtualClock {
  armed = 0;
  override setTimeout(fn: () => void, ms: number): TimerHandle {
    this.armed++;
    return super.setTimeout(fn, ms);
  }
}

describe('sim scheduler due times', () => {
  it('merges due times equal but for rounding into one timer, in scheduling order', () => {
    expect(0.001 + 0.009).not.toBe(0.002 + 0.008); // what the ticks are for
    const clock = new CountingClock();
    const ran: string[] = [];
    const s = new Scheduler(clock, false);
    // from 0.001: due at 0.010 by 9 hops of 0.001 ms; from 0.002, by 8 hops
    clock.setTimeout(() => s.schedule(0.009, () => ran.push('a')), 0.001);
    clock.setTimeout(() => s.schedule(0.008, () => ran.push('b')), 0.002);
    clock.setTimeout(() => s.schedule(0.0080001, () => ran.push('c')), 0.002); // 0.1 ns later: rounds onto 0.010
    clock.setTimeout(() => s.schedule(0.007, () => ran.push('d')), 0.002); // 0.009: before all of them
    clock.setTimeout(() => s.schedule(0.000006, () => ran.push('e')), 0.010); // 0.010006: 6 ns after
    const before = clock.armed;
    clock.advance(1);
    expect(ran).toEqual(['d', 'a', 'b', 'c', 'e']);
    // a's timer (moved earlier for d), d's, one for 0.010 (a, b and c), e's
    expect(clock.armed - before).toBeLessThanOrEqual(4);
  });
});

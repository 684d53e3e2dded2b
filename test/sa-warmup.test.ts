/** The SA warm-up (sa/warmup.ts, issue #32's storm): a scratch SA answers a host's re-registration
 * requests without an error and without touching any state but its own, in steps an idle runner
 * spreads over the event loop. */
import { describe, expect, it } from 'vitest';
import { warmSa, warmSaSteps, warmSaWhenIdle, type SaWarmup } from '../src/sa/warmup.js';

describe('SA warm-up', () => {
  it('answers every request of its storm (joins, services, subscriptions, PathRecords) with status 0', () => {
    const w = warmSa();
    // 8 hosts x 3 rounds x (join + ServiceRecord + InformInfo + 7 PathRecords)
    expect(w).toEqual({ requests: 240, answered: 240, errors: 0 });
  });

  it('runs a step at a time: one per host and round, and the multicast forwarding once a round', () => {
    let steps = 0;
    const g = warmSaSteps();
    while (!g.next().done) steps++;
    expect(steps).toBe(3 * (8 + 1));
  });

  it('in idle moments: each step waits for the deferral, the figures come at the end', () => {
    const queue: Array<() => void> = [];
    let got: SaWarmup | undefined;
    warmSaWhenIdle((fn) => queue.push(fn), (w) => (got = w));
    expect(queue.length).toBe(1); // nothing ran yet
    let turns = 0;
    while (queue.length > 0) {
      queue.shift()!();
      turns++;
    }
    expect(turns).toBe(3 * (8 + 1) + 1);
    expect(got).toEqual({ requests: 240, answered: 240, errors: 0 });
  });
});

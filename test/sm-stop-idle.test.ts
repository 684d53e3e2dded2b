/** `run --once` exits as soon as the subnet is up: a stop right after SUBNET UP leaves none of the
 * SM's idle-time work to run (the re-route rehearsal of sm/local-sweep.ts, which on a 432-host
 * fabric kept the process ~0.5 s past SUBNET UP); without the stop, that work runs. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { smRig } from './helpers/sm-rig.js';

/** Every line of a sweep that failed, heavy or light, carried on or not. */
const SWEEP_FAILED = ['IBSM-1006', 'IBSM-1007', 'IBSM-1008', 'IBSM-1009'];

describe('a stop right after SUBNET UP', () => {
  it('cancels the idle-time re-route rehearsal, which runs when the SM is not stopped', async () => {
    for (const stop of [false, true]) {
      const r = smRig(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=3'), { sm: { sweepIntervalMs: 0 } });
      // As `run --once` does: the stop follows start()'s resolution at once.
      await r.clock.runUntil(
        r.sm.start().then(() => stop && r.sm.stop()),
        30_000,
      );
      await r.clock.advanceAsync(1000);
      expect(r.lines('IBSM-4012').length, stop ? 'stopped' : 'running').toBe(stop ? 0 : 1);
      r.sm.stop();
    }
  });
});

describe('a stop while a sweep runs', () => {
  it('logs the sweep as cut short by the stop (info), not as failed (error); unstopped, a closed RPC layer is a failure', async () => {
    for (const stop of [true, false]) {
      const r = smRig(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=3'), { sm: { sweepIntervalMs: 0 } });
      await r.clock.runUntil(r.sm.start(), 30_000);
      const sweep = r.sm.sweep('heavy').catch(() => undefined);
      void sweep; // a stop drops its waiters: it settles only when the SM is not stopped
      await Promise.resolve(); // the sweep has started: its first SMPs wait for the (virtual) clock
      // As `run --once` does at exit: the SM stopped, then its RPC layer closed under the sweep.
      if (stop) r.sm.stop();
      r.rpc.close();
      await r.clock.advanceAsync(1000); // the sweep's SMPs fail on the closed layer; the action ends
      expect(r.lines('IBSM-1035').length, stop ? 'stopped' : 'running').toBe(stop ? 1 : 0);
      expect(r.lines(SWEEP_FAILED).length, stop ? 'stopped' : 'running').toBe(stop ? 0 : 1);
      r.sm.stop();
    }
  });
});

/** The controller's sweep schedule (sm/sweep-schedule.ts): a master never stops its periodic
 * sweeps. A periodic light sweep that falls due while a heavy sweep is pending is dropped (the
 * heavy sweep sees what it would); the next one must still be armed when that heavy sweep ends,
 * also when it did not program through the controller (a local sweep of a flagged change: the
 * flapping link of issue #33 found periodic sweeps stopping for good after one). */
import { describe, expect, it } from 'vitest';
import { SweepSchedule } from '../src/sm/sweep-schedule.js';

const MASTER = { master: true, discovering: false, takeover: false };
const done = (o: Partial<Parameters<SweepSchedule['heavyDone']>[1]>): Parameters<SweepSchedule['heavyDone']>[1] => ({ full: false, programmed: false, first: false, failed: false, incomplete: false, fromView: false, discovering: false, master: true, ...o });

describe('SweepSchedule', () => {
  it('a periodic sweep due while a trap-driven (local) sweep is pending is re-armed after it', () => {
    const s = new SweepSchedule({ sweepIntervalMs: 5000 });
    s.heavy('start', true);
    expect(s.next(0, { master: false, discovering: true, takeover: false })?.type).toBe('heavySweep');
    s.heavyDone(100, done({ full: true, programmed: true, first: true, master: false, discovering: true }));
    expect(s.dueAt).toBe(5100);
    // A trap at 5,000 ms; the periodic sweep falls due at 5,100 before the SM takes the trap's sweep.
    s.heavy('trap 128');
    const a = s.next(5200, MASTER);
    expect(a?.type).toBe('heavySweep'); // heavy first: the periodic one is dropped
    expect(s.dueAt).toBeUndefined();
    // The local sweep handled the flagged change without asking the controller: not `programmed`.
    s.heavyDone(5300, done({}));
    expect(s.dueAt).toBe(10300);
    expect(s.next(10300, MASTER)).toEqual({ type: 'lightSweep' });
  });

  it('a standby arms nothing', () => {
    const s = new SweepSchedule({ sweepIntervalMs: 5000 });
    s.heavyDone(0, done({ master: false }));
    expect(s.dueAt).toBeUndefined();
  });
});

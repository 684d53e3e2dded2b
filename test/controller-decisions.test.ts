/** The decisions the shell used to take and the controller takes now (issue #31): full versus
 * local heavy sweeps, ClientReregister, multicast coalescing, force_heavy_sweep. Pure: events in,
 * actions out. */
import { describe, expect, it } from 'vitest';
import { SmController, type ControllerOptions, type SmAction } from '../src/sm/controller.js';
import { MCAST_MAX_DELAY_MS, MCAST_SETTLE_MS } from '../src/sm/sweep-schedule.js';

function master(o: Partial<ControllerOptions> = {}, stateKept = false): { c: SmController; reregistered: boolean } {
  const c = new SmController({ sweepIntervalMs: 1000, ...o });
  c.handle({ type: 'start' }, 0);
  const h = c.poll(0)!;
  c.handle({ type: 'discovered', remotes: [], ownPortUp: true, stateKept }, 0);
  const reregistered = c.reregister;
  c.handle({ type: 'actionDone', action: h, outcome: 'ok' }, 0);
  expect(c.state).toBe('master');
  return { c, reregistered };
}

/** Run the next action at `now` as a sweep that programs, ending with `outcome`. */
function sweep(c: SmController, now: number, outcome: 'ok' | 'incomplete' | 'failed' = 'ok'): SmAction {
  const a = c.poll(now)!;
  expect(a).toBeDefined();
  if (a.type === 'heavySweep') c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, now);
  c.handle({ type: 'actionDone', action: a, outcome }, now);
  return a;
}

describe('SmController decides full or local heavy sweeps', () => {
  it('a trap asks for a heavy sweep that may be local; an operator for a full one', () => {
    const { c } = master();
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 10);
    expect(sweep(c, 10)).toEqual({ type: 'heavySweep', reason: 'trap 128' });
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'SIGHUP', full: true }, 20);
    expect(sweep(c, 20)).toEqual({ type: 'heavySweep', reason: 'SIGHUP', full: true });
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 30);
    expect(sweep(c, 30), 'the full request is spent').toEqual({ type: 'heavySweep', reason: 'trap 128' });
  });

  it('a full request coalesced with a local one pending makes the one sweep full', () => {
    const { c } = master();
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 10);
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'reload', full: true }, 10);
    expect(sweep(c, 10)).toEqual({ type: 'heavySweep', reason: 'trap 128', full: true });
    expect(c.poll(10)).toBeUndefined();
  });

  it('after a sweep that left part of the fabric out, the next heavy sweep is full (and due at the interval)', () => {
    const { c } = master();
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 10);
    sweep(c, 10, 'incomplete');
    expect(c.pollAt()).toBe(1000);
    expect(sweep(c, 1000)).toEqual({ type: 'heavySweep', reason: 'retry what the last sweep left out', full: true });
    expect(sweep(c, 2000)).toEqual({ type: 'lightSweep' });
  });

  it('a full sweep that failed is owed as a full one still', () => {
    const { c } = master();
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'SIGHUP', full: true }, 10);
    sweep(c, 10, 'failed');
    expect(sweep(c, 1010)).toMatchObject({ type: 'heavySweep', full: true });
  });

  it('a light sweep asked for reads every CA port; a periodic one its share', () => {
    const { c } = master();
    c.handle({ type: 'sweepRequested', kind: 'light', reason: 'requested', full: true }, 10);
    expect(sweep(c, 10)).toEqual({ type: 'lightSweep', full: true });
    expect(sweep(c, 1010)).toEqual({ type: 'lightSweep' });
  });

  it('force_heavy_sweep: the periodic sweep and a light one asked for are full heavy sweeps', () => {
    const { c } = master({ forceHeavySweep: true });
    expect(sweep(c, 1000)).toMatchObject({ type: 'heavySweep', full: true });
    c.handle({ type: 'sweepRequested', kind: 'light', reason: 'requested' }, 1500);
    expect(sweep(c, 1500)).toMatchObject({ type: 'heavySweep', full: true });
  });
});

describe('SmController decides the scope of a heavy sweep (sm/sweep-run.ts runs it)', () => {
  /** The next action, a heavy sweep, its scope, and the sweep run to its end. */
  function scope(c: SmController, now: number): string {
    const a = c.poll(now)!;
    if (a?.type !== 'heavySweep') throw new Error(`not a heavy sweep: ${JSON.stringify(a)}`);
    const s = c.scopeOf(a);
    c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, now);
    c.handle({ type: 'actionDone', action: a, outcome: 'ok' }, now);
    return s;
  }

  it('full before this SM masters; local as master; full when a full one is asked for', () => {
    const c = new SmController({ sweepIntervalMs: 1000 });
    c.handle({ type: 'start' }, 0);
    expect(scope(c, 0)).toBe('full');
    expect(c.state).toBe('master');
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 10);
    expect(scope(c, 10)).toBe('local');
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'operator', full: true }, 20);
    expect(scope(c, 20)).toBe('full');
  });

  it('full with local sweeps off; a takeover action is a takeover', () => {
    const { c } = master({ localSweeps: false });
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 10);
    expect(scope(c, 10)).toBe('full');
    expect(c.scopeOf({ type: 'heavySweep', reason: 'handover', takeover: true })).toBe('takeover');
  });
});

describe('SmController decides ClientReregister', () => {
  it('the first programming sweep as master sets it, the later ones do not', () => {
    const { c, reregistered } = master();
    expect(reregistered).toBe(true);
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 10);
    c.poll(10);
    c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, 10);
    expect(c.mayProgram).toBe(true);
    expect(c.reregister).toBe(false);
  });

  it('not when the SA kept the clients\' registrations (a failover with the SA state)', () => {
    expect(master({}, true).reregistered).toBe(false);
  });

  it('never without programming: a sweep that finds a master stands by', () => {
    const c = new SmController({ sweepIntervalMs: 1000, portGuid: 2n });
    c.handle({ type: 'start' }, 0);
    c.poll(0);
    c.handle({ type: 'discovered', remotes: [{ guid: 1n, priority: 0, state: 3, actCount: 0, smKey: 1n, lid: 1 }], ownPortUp: true }, 0);
    expect(c.state).toBe('standby');
    expect(c.reregister).toBe(false);
  });
});

describe('SmController coalesces multicast changes', () => {
  it('changes during a light sweep give one update after it; during a heavy sweep that started before them, one after it', () => {
    const { c } = master();
    const l = c.poll(1000)!;
    expect(l.type).toBe('lightSweep');
    for (let i = 0; i < 50; i++) c.handle({ type: 'multicastChanged' }, 1001);
    c.handle({ type: 'actionDone', action: l, outcome: 'ok' }, 1002);
    // due once the burst has settled: MCAST_SETTLE_MS after its last change
    expect(c.poll(1002)).toBeUndefined();
    expect(c.pollAt()).toBe(1001 + MCAST_SETTLE_MS);
    expect(sweep(c, 1001 + MCAST_SETTLE_MS)).toEqual({ type: 'programMulticast' });
    expect(c.poll(1030)).toBeUndefined();
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 1100);
    c.handle({ type: 'multicastChanged' }, 1100); // before the sweep starts: the sweep programs it
    const h = c.poll(1100)!;
    c.handle({ type: 'multicastChanged' }, 1101); // during it: an update after it
    c.handle({ type: 'multicastChanged' }, 1102);
    c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, 1103);
    c.handle({ type: 'actionDone', action: h, outcome: 'ok' }, 1104);
    expect(c.poll(1104)).toBeUndefined();
    expect(sweep(c, 1102 + MCAST_SETTLE_MS)).toEqual({ type: 'programMulticast' });
    expect(c.poll(1200)).toBeUndefined();
    expect(c.idle).toBe(true);
  });

  it('a burst of changes gives one update once it settles, MCAST_MAX_DELAY_MS after its first change at most', () => {
    const { c } = master({ sweepIntervalMs: 0 });
    // a change every 5 ms: the wait is extended by each, up to the cap
    let t = 1001;
    for (; t < 1001 + 3 * MCAST_MAX_DELAY_MS; t += 5) {
      c.handle({ type: 'multicastChanged' }, t);
      if (t >= 1001 + MCAST_MAX_DELAY_MS) break;
      expect(c.poll(t), `at ${t}`).toBeUndefined();
    }
    expect(t - 1001).toBeLessThan(MCAST_MAX_DELAY_MS + 5);
    expect(sweep(c, t)).toEqual({ type: 'programMulticast' });
    // a single change later: MCAST_SETTLE_MS after it
    c.handle({ type: 'multicastChanged' }, 2000);
    expect(c.poll(2000 + MCAST_SETTLE_MS - 1)).toBeUndefined();
    expect(sweep(c, 2000 + MCAST_SETTLE_MS)).toEqual({ type: 'programMulticast' });
    expect(c.idle).toBe(true);
  });

  it('a change before the first programming sweep waits for it (there is no snapshot to program over)', () => {
    const c = new SmController({ sweepIntervalMs: 1000 });
    c.handle({ type: 'start' }, 0);
    c.handle({ type: 'multicastChanged' }, 0);
    expect(c.poll(0)?.type).toBe('heavySweep');
  });
});

/** `--health-flap` is reloadable (SIGHUP, `ibsm reload`: api/sm.ts `reload`, then
 * HealthKeeper.configureFlap): a new policy judges from the next change on, with the changes
 * counted so far; turned off, no link is found flapping any more and the isolations it made stay
 * until their quiet time (then released, ACTIVE and routed); a bad one is refused with nothing
 * changed. Witnesses: the simulated fabric's port states and the SM's health state. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { PortState } from '../src/wire/mad.js';
import { parseFlapPolicy } from '../src/sm/health-flap.js';
import { openSm } from '../src/api/sm.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';
import { bounce, leafUplink, wait } from './helpers/flap.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

describe('--health-flap reloaded', () => {
  it('a new policy applies from the next change; off keeps its isolation until the quiet time, then finds nothing flapping', async () => {
    const f = loadFabricSpec(SPEC);
    const r = smRig(f, { sm: { sweepIntervalMs: 5000, topology: { flap: parseFlapPolicy('20/60:isolate:20') } } });
    const link = leafUplink(f);
    const isolated = (): boolean => r.sm.health.state.isolated.some((i) => i.source === 'flapping');
    const state = (): PortState => r.sim.portInfo(link.guid, link.up).portState;
    await drive(r.clock, r.sm.start());
    await bounce(r.sim, r.clock, link.guid, link.up, 3); // 6 changes: under 20
    expect(isolated()).toBe(false);
    // 8 in 60 s now: the changes counted so far are kept, the next one decides
    r.sm.health.configureFlap(parseFlapPolicy('8/60:isolate:20'));
    expect(isolated()).toBe(false); // nothing before the next change
    const n = await bounce(r.sim, r.clock, link.guid, link.up, 5, { until: isolated });
    expect(n).toBeLessThanOrEqual(2);
    expect(state()).toBe(PortState.Init);
    // off: still isolated while it bounces (past the 20 s quiet time), released once quiet
    r.sm.health.configureFlap(undefined);
    expect(r.sm.health.flap).toBeDefined();
    await bounce(r.sim, r.clock, link.guid, link.up, 15);
    expect(isolated()).toBe(true);
    expect(state()).toBe(PortState.Init);
    await wait(r.clock, 30_000);
    expect(isolated()).toBe(false);
    expect(r.lines('IBSM-2066').length).toBe(1);
    expect(state()).toBe(PortState.Active);
    expect(r.sm.health.flap).toBeUndefined(); // its last isolation gone: the tracker too
    checkFabric(r);
    // off: 10 more bounces isolate nothing
    await bounce(r.sim, r.clock, link.guid, link.up, 10);
    await wait(r.clock, 3000);
    expect(isolated()).toBe(false);
    expect(r.lines('IBSM-2065').length).toBe(1);
    expect(state()).toBe(PortState.Active);
  });

  it('IbsmSm.reload applies --health-flap live; a bad one is refused, nothing changed', async () => {
    const opts = { sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid: 'none', healthFlap: '50/900:isolate' };
    const sm = await openSm({ ...opts, log: new Logger(new MemorySink(), 'warn') });
    try {
      await sm.start();
      const r = await sm.reload({ ...opts, healthFlap: '5/60:warn:30' });
      expect(r.applied).toEqual(['healthFlap']);
      expect(r.restartNeeded).toEqual([]);
      expect(sm.subnet.sm.health.flap?.policy).toEqual({ count: 5, windowMs: 60_000, action: 'warn', quietMs: 30_000 });
      await expect(sm.reload({ ...opts, healthFlap: '5/60:drop' })).rejects.toThrow(/health flap policy "5\/60:drop"/);
      expect(sm.subnet.sm.health.flap?.policy.action).toBe('warn');
      const off = await sm.reload({ ...opts, healthFlap: undefined });
      expect(off.applied).toEqual(['healthFlap']);
      expect(sm.subnet.sm.health.flap).toBeUndefined(); // nothing isolated: off at once
    } finally {
      await sm.stop();
    }
  });
});

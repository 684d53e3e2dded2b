/** The flapping policy (issue #33 item 2, sm/health-flap.ts) on the in-process fabric: a link
 * bounced every 2 s by the sim's fault injector (cable pulled, put back) is isolated within the
 * configured count, no LFT writes follow from its bounces, and it is released after the quiet
 * time; without the policy the same run re-routes at each bounce. The witnesses are the simulated
 * fabric's own: the ports' PortState in the SMAs and the LFTs the switches hold. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { PortState } from '../src/wire/mad.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { FlapTracker, parseFlapPolicy, type FlapPolicy } from '../src/sm/health-flap.js';
import type { HealthChange } from '../src/sm/health-state.js';
import { drive } from './helpers/drive.js';
import { bounce as bounceLink, leafUplink, wait } from './helpers/flap.js';
import { hasCode } from './helpers/log-lines.js';
import { routesClean, smRig } from './helpers/sm-rig.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

function rig(flap?: FlapPolicy) {
  const f = loadFabricSpec(SPEC);
  const changes: Array<HealthChange & { at: number; lfts: number; sweeps: number; full: number }> = [];
  const full = (): number => r.sink.lines.filter((l) => l.includes('IBSM-2001')).length; // discovery done: a full heavy sweep
  const r = smRig(f, {
    level: 'info',
    sm: { sweepIntervalMs: 5000, topology: { flap, onHealth: (c) => changes.push({ ...c, at: r.clock.now(), lfts: r.sm.written.lftBlocksWritten, sweeps: r.sm.sweepsDone.heavy, full: full() }) } },
  });
  const { clock, sim, sm, sink } = r;
  const { leaf, up } = leafUplink(f); // a leaf's uplink (to a spine)
  return { clock, sim, sm, sink, changes, full, f, leaf, up, lg: f.nodes[leaf]!.guid, wait: (ms: number) => wait(clock, ms) };
}
type Rig = ReturnType<typeof rig>;

/** Bounce the uplink `n` times, every 2 s (down 1 s, up 1 s). */
async function bounce(r: Rig, n: number): Promise<void> {
  await bounceLink(r.sim, r.clock, r.lg, r.up, n);
}

describe('flapping policy: parsing and counting', () => {
  it('parses N/WINDOW_S:action[:QUIET_S] and refuses the rest', () => {
    expect(parseFlapPolicy('25/900:isolate')).toEqual({ count: 25, windowMs: 900_000, action: 'isolate', quietMs: 900_000 });
    expect(parseFlapPolicy('6/60:warn:20')).toEqual({ count: 6, windowMs: 60_000, action: 'warn', quietMs: 20_000 });
    expect(() => parseFlapPolicy('6/60:drop')).toThrow(/N\/WINDOW_S/);
    expect(() => parseFlapPolicy('1/60:warn')).toThrow(/at least 2/);
  });
  it('counts changes within the window only', () => {
    const f = loadFabricSpec(SPEC);
    const t = new FlapTracker({ count: 3, windowMs: 10_000, action: 'isolate', quietMs: 5000 });
    const cut = structuredClone(f);
    const p = cut.nodes[1]!.ports.findIndex((x, pn) => pn > 0 && x?.peer);
    const peer = cut.nodes[1]!.ports[p]!.peer!;
    cut.nodes[1]!.ports[p]!.peer = undefined;
    cut.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
    const none = new Set<string>();
    expect(t.observe(f, 0, none).flapping).toEqual([]);
    expect(t.observe(cut, 1000, none).flapping).toEqual([]); // 1
    expect(t.observe(f, 20_000, none).flapping).toEqual([]); // 2, the first one out of the window
    expect(t.observe(cut, 21_000, none).flapping).toEqual([]); // 2
    const v = t.observe(f, 22_000, none); // 3
    expect(v.flapping.map((i) => i.changes)).toEqual([3]);
    const held = new Set([v.flapping[0]!.key]);
    expect(t.observe(f, 26_000, held).released).toEqual([]);
    expect(t.observe(f, 27_000, held).released).toEqual([v.flapping[0]!.key]);
  });
});

describe('flapping policy on the running SM', () => {
  it('a link bounced every 2 s is isolated within the count, its bounces re-route nothing, released after the quiet time', async () => {
    const r = rig(parseFlapPolicy('6/60:isolate:20'));
    await drive(r.clock, r.sm.start());
    expect(r.sim.portInfo(r.lg, r.up).portState).toBe(PortState.Active);
    await bounce(r, 20);
    const iso = r.changes.find((c) => c.isolated.length)!;
    expect(iso.isolated[0]).toMatchObject({ source: 'flapping', kind: 'link' });
    expect(hasCode(r.sink.lines, 'IBSM-2065')).toBe(true);
    const lftsAtIsolation = iso.lfts;
    const fullAtEnd = r.full();
    // within the count: 6 changes are 3 bounces, isolated by the 4th (its own Down Set adds one)
    expect(iso.at).toBeLessThan(4 * 2000 + 5000);
    // the bounces after the isolation wrote no LFT block
    expect(r.sm.written.lftBlocksWritten).toBe(lftsAtIsolation);
    // nor full heavy sweeps: the local sweeps reach the switches around it (sm/health-paths.ts)
    expect(fullAtEnd).toBe(iso.full);
    expect(r.sm.health.state.isolated.map((i) => i.source)).toEqual(['flapping']);
    expect(r.sim.portInfo(r.lg, r.up).portState).toBe(PortState.Init);
    routesClean(r);
    const sweepsAtEnd = r.sm.sweepsDone.heavy;
    // quiet: released after 20 s, ACTIVE and routed again
    await r.wait(30_000);
    await drive(r.clock, r.sm.sweep('light')); // past the quiet time: it asks for the full heavy sweep that releases
    await r.wait(1000);
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(hasCode(r.sink.lines, 'IBSM-2066')).toBe(true);
    expect(r.sim.portInfo(r.lg, r.up).portState).toBe(PortState.Active);
    routesClean(r);
    console.log(`flap policy: isolated at ${iso.at} ms; sweeps (heavy+local) ${iso.sweeps} at isolation (full ones: ${iso.full}), ${sweepsAtEnd} after 20 bounces (full heavy ones: ${fullAtEnd}); LFT blocks ${lftsAtIsolation} at isolation and after the bounces`);
  });

  it('warn: the flapping link is named once, not isolated, and stays ACTIVE and routed', async () => {
    const r = rig(parseFlapPolicy('6/60:warn'));
    await drive(r.clock, r.sm.start());
    await bounce(r, 10);
    expect(r.sink.lines.filter((l) => l.includes('IBSM-2065')).length).toBe(1);
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(r.changes).toEqual([]);
    expect(r.sim.portInfo(r.lg, r.up).portState).toBe(PortState.Active);
    routesClean(r);
  });

  it('--health-flap reaches the SM (ibsm run options), a bad one is refused at the table', async () => {
    const { openSm } = await import('../src/api/sm.js');
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, healthFlap: '50/900:isolate', log: new Logger(new MemorySink(), 'warn') });
    try {
      expect(sm.subnet.sm.health.flap?.policy).toEqual({ count: 50, windowMs: 900_000, action: 'isolate', quietMs: 900_000 });
    } finally {
      await sm.stop();
    }
    const { runCli } = await import('./helpers/cli.js');
    const bad = await runCli(['run', '--sim', SPEC, '--health-flap', '5/60:drop', '--once']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/health flap policy "5\/60:drop"/);
  });

  it('without the policy, the same run re-routes at each bounce', async () => {
    const r = rig();
    await drive(r.clock, r.sm.start());
    const lfts0 = r.sm.written.lftBlocksWritten;
    const sweeps0 = r.sm.sweepsDone.heavy;
    await bounce(r, 20);
    const lfts = r.sm.written.lftBlocksWritten - lfts0;
    const sweeps = r.sm.sweepsDone.heavy - sweeps0;
    const full = r.full();
    console.log(`no flap policy: 20 bounces, ${sweeps} sweeps (heavy+local, ${full} full ones), ${lfts} LFT blocks written`);
    expect(sweeps).toBeGreaterThanOrEqual(20);
    expect(r.sm.health.state.isolated).toEqual([]);
  });
});

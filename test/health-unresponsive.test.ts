/** The unresponsive-SMA policy (issue #33 item 2, sm/health-unresponsive.ts) on the in-process
 * fabric: a spine whose SMA stops answering (the sim's fault injector: every SMP that reaches its
 * SMA is lost, while the switch still forwards) is isolated after K heavy sweeps, routed around (no
 * LFT entry of the switches points at it), not waited for by later sweeps (no SMP of theirs times
 * out: one probe a sweep, one try, watches it), and released once it has answered for the quiet
 * time. The witnesses are the simulated fabric's: the LFTs the switches hold, the SMPs its SMA
 * saw. Without the policy (the old code), every heavy sweep pays the spine's timeouts. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType } from '../src/wire/mad.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { parseUnresponsivePolicy, UnresponsiveTracker, type UnresponsivePolicy } from '../src/sm/health-unresponsive.js';
import { drive } from './helpers/drive.js';
import { hasCode } from './helpers/log-lines.js';
import { wait as waitFor } from './helpers/flap.js';
import { routesClean, smRig } from './helpers/sm-rig.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

function rig(unresponsive?: UnresponsivePolicy) {
  const f = loadFabricSpec(SPEC);
  const { clock, sim, sm, sink } = smRig(f, { level: 'info', sm: { sweepIntervalMs: 5000, topology: { unresponsive } } });
  const sw = (i: number): boolean => f.nodes[i]!.type === NodeType.Switch;
  // a spine: a switch with no CA on it
  const spine = f.nodes.findIndex((n, i) => sw(i) && n.ports.every((p) => !p?.peer || sw(p.peer.node)));
  const sg = f.nodes[spine]!.guid;
  // the ports of the other switches that face it
  const facing = f.nodes.flatMap((n, i) => n.ports.flatMap((p, pn) => (pn > 0 && p?.peer?.node === spine ? [{ guid: n.guid, port: pn }] : [])).map((x) => ({ ...x, i })));
  const wait = (ms: number): Promise<void> => waitFor(clock, ms);
  const heavy = async (): Promise<{ timeouts: number; smps: number; ms: number }> => {
    const t0 = sm.smpFailures.timeout;
    const c0 = clock.now();
    const st = await drive(clock, sm.sweep('heavy'));
    return { timeouts: sm.smpFailures.timeout - t0, smps: st.smps, ms: clock.now() - c0 };
  };
  return { clock, sim, sm, sink, f, spine, sg, facing, wait, heavy };
}
type Rig = ReturnType<typeof rig>;

/** LFT entries (LIDs 1..maxLid) of the switches that go out a port facing the spine. */
function towardSpine(r: Rig): number {
  const maxLid = r.sm.current!.maxLid;
  return r.facing.reduce((n, x) => n + [...r.sim.lft(x.guid).subarray(1, maxLid + 1)].filter((p) => p === x.port).length, 0);
}

const inView = (r: Rig): boolean => r.sm.current!.fabric.nodes.some((n) => n.guid === r.sg);

describe('unresponsive-SMA policy: parsing and counting', () => {
  it('parses K:action[:QUIET_S] and refuses the rest', () => {
    expect(parseUnresponsivePolicy('5:isolate')).toEqual({ sweeps: 5, action: 'isolate', quietMs: 300_000 });
    expect(parseUnresponsivePolicy('2:warn:30')).toEqual({ sweeps: 2, action: 'warn', quietMs: 30_000 });
    expect(() => parseUnresponsivePolicy('2:drop')).toThrow(/K:warn\|isolate/);
    expect(() => parseUnresponsivePolicy('0:warn')).toThrow(/at least 1/);
  });

  it('names the node behind a port that did not answer from where it was last seen, after K consecutive misses', () => {
    const f = loadFabricSpec(SPEC);
    const t = new UnresponsiveTracker({ sweeps: 2, action: 'isolate', quietMs: 10_000 });
    const none = new Set<bigint>();
    const sw = (i: number): boolean => f.nodes[i]!.type === NodeType.Switch;
    const sp = f.nodes.findIndex((n, i) => sw(i) && n.ports.every((p) => !p?.peer || sw(p.peer.node)));
    const leaf = f.nodes.findIndex((n, i) => n.ports.some((p) => p?.peer?.node === sp) && i !== sp);
    const port = f.nodes[leaf]!.ports.findIndex((p) => p?.peer?.node === sp);
    const skip = [{ kind: 'link' as const, guid: f.nodes[leaf]!.guid, desc: f.nodes[leaf]!.desc, port }];
    expect(t.observe(f, [], 0, none).unresponsive).toEqual([]); // seen answering: its ports remembered
    expect(t.observe(f, skip, 1000, none).unresponsive).toEqual([]); // 1 (the view still has it: not counted)
    const without = structuredClone(f);
    without.nodes = without.nodes.filter((_, i) => i !== sp).map((n) => ({ ...n, ports: n.ports.map((p) => (p?.peer ? { ...p, peer: undefined } : p)) }));
    expect(t.observe(without, skip, 2000, none).unresponsive).toEqual([]); // 1
    const v = t.observe(without, skip, 3000, none); // 2
    expect(v.unresponsive.map((i) => [i.a.guid, i.source, i.kind])).toEqual([[f.nodes[sp]!.guid, 'unresponsive', 'node']]);
    expect(t.leadsToHeld(f.nodes[leaf]!.guid, port, new Set([f.nodes[sp]!.guid]))).toBe(true);
    // probes: released after answering for the quiet time; a miss starts it again
    const g = f.nodes[sp]!.guid;
    expect(t.probed(g, true, 10_000)).toBe(false);
    expect(t.probed(g, false, 15_000)).toBe(false);
    expect(t.probed(g, true, 16_000)).toBe(false);
    expect(t.probed(g, true, 25_000)).toBe(false);
    expect(t.probed(g, true, 26_000)).toBe(true);
  });
});

describe('unresponsive-SMA policy on the running SM', () => {
  it('a spine whose SMA stops answering: isolated after K sweeps, routed around, not waited for, released after answering for the quiet time', async () => {
    const r = rig(parseUnresponsivePolicy('2:isolate:20'));
    await drive(r.clock, r.sm.start());
    expect(inView(r)).toBe(true);
    expect(towardSpine(r)).toBeGreaterThan(0); // the spine carries routes
    const healthy = await r.heavy();
    expect(healthy.timeouts).toBe(0);

    r.sim.node(r.sg).smaSilent = true;
    const first = await r.heavy();
    expect(first.timeouts).toBeGreaterThan(0); // the spine's NodeInfo probes timed out
    expect(inView(r)).toBe(false);
    expect(r.sm.health.state.isolated).toEqual([]);
    const second = await r.heavy();
    expect(second.timeouts).toBeGreaterThan(0);
    expect(r.sm.health.state.isolated.map((i) => [i.a.guid, i.source, i.kind])).toEqual([[r.sg, 'unresponsive', 'node']]);
    expect(hasCode(r.sink.lines, 'IBSM-2075')).toBe(true);
    // routed around: no switch's LFT sends a LID toward it
    expect(towardSpine(r)).toBe(0);
    routesClean(r);

    // later sweeps do not wait for it: no SMP times out, one probe a sweep
    await r.wait(100); // the last sweep's probe answered (the sweep did not wait for it)
    const smaSeen = r.sim.node(r.sg).stats.smpsHandled;
    const probes = r.sm.health.unresp!.probes;
    const later = await r.heavy();
    expect(later.timeouts).toBe(0);
    await r.wait(100); // the probe's answer (not waited for by the sweep)
    expect(r.sm.health.unresp!.probes).toBe(probes + 1);
    expect(r.sim.node(r.sg).stats.smpsHandled - smaSeen).toBe(1); // what reached its SMA: the probe
    expect(later.ms).toBeLessThan(first.ms);
    expect(towardSpine(r)).toBe(0);

    // answering again: released after the quiet time (the light sweeps' probes), routed again
    r.sim.node(r.sg).smaSilent = false;
    await r.wait(30_000);
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(hasCode(r.sink.lines, 'IBSM-2077')).toBe(true);
    expect(inView(r)).toBe(true);
    expect(towardSpine(r)).toBeGreaterThan(0);
    routesClean(r);
    console.log(`unresponsive spine: heavy sweep ${healthy.smps} SMPs / ${Math.round(healthy.ms)} ms healthy; ${first.smps} SMPs, ${first.timeouts} SMPs given up, ${Math.round(first.ms)} ms while it times out; ${later.smps} SMPs, ${later.timeouts} given up, ${Math.round(later.ms)} ms once isolated (virtual time, 50 ms timeout)`);
  });

  it('a CA that stops answering: isolated after K sweeps, later sweeps do not wait for it', async () => {
    const r = rig(parseUnresponsivePolicy('3:isolate:0'));
    await drive(r.clock, r.sm.start());
    const host = r.f.nodes.findIndex((n, i) => i !== 0 && n.type !== NodeType.Switch);
    const hg = r.f.nodes[host]!.guid;
    r.sim.node(hg).smaSilent = true;
    for (let k = 0; k < 3; k++) expect((await r.heavy()).timeouts).toBeGreaterThan(0);
    expect(r.sm.health.state.isolated.map((i) => [i.a.guid, i.source, i.a.desc])).toEqual([[hg, 'unresponsive', r.f.nodes[host]!.desc]]);
    expect((await r.heavy()).timeouts).toBe(0);
    // quiet time 0: answering again does not release it; `ibsm release` does
    r.sim.node(hg).smaSilent = false;
    await r.wait(20_000);
    expect(r.sm.health.state.isolated.length).toBe(1);
    expect(r.sm.health.releaseByHand(r.f.nodes[host]!.desc).released.length).toBe(1);
    await r.heavy();
    expect(r.sm.current!.fabric.nodes.some((n) => n.guid === hg)).toBe(true);
  });

  it('without the policy every heavy sweep pays its timeouts; warn names it once, isolates nothing, and notes it answering again', async () => {
    const off = rig();
    await drive(off.clock, off.sm.start());
    off.sim.node(off.sg).smaSilent = true;
    for (let k = 0; k < 3; k++) expect((await off.heavy()).timeouts).toBeGreaterThan(0);
    expect(off.sm.health.unresp).toBeUndefined();

    const r = rig(parseUnresponsivePolicy('2:warn'));
    await drive(r.clock, r.sm.start());
    r.sim.node(r.sg).smaSilent = true;
    for (let k = 0; k < 4; k++) expect((await r.heavy()).timeouts).toBeGreaterThan(0);
    expect(r.sink.lines.filter((l) => l.includes('IBSM-2075')).length).toBe(1);
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(towardSpine(r)).toBe(0); // not in the view (it could not be read), so not routed
    r.sim.node(r.sg).smaSilent = false;
    await r.heavy();
    expect(hasCode(r.sink.lines, 'IBSM-2076')).toBe(true);
    expect(towardSpine(r)).toBeGreaterThan(0);
  });

  it('--health-unresponsive reaches the SM (ibsm run options), a bad one is refused at the table', async () => {
    const { openSm } = await import('../src/api/sm.js');
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, healthUnresponsive: '3:isolate:60', log: new Logger(new MemorySink(), 'warn') });
    try {
      expect(sm.subnet.sm.health.unresp?.policy).toEqual({ sweeps: 3, action: 'isolate', quietMs: 60_000 });
    } finally {
      await sm.stop();
    }
    const { runCli } = await import('./helpers/cli.js');
    const bad = await runCli(['run', '--sim', SPEC, '--health-unresponsive', '3:drop', '--once']);
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/health unresponsive policy "3:drop"/);
  });
});

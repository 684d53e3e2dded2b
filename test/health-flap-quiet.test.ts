/** A link quarantined for flapping costs nothing while it goes on bouncing (issue #33 item 2,
 * sm/health-quiet.ts): its switches' traps 128 and PortStateChange start no sweep, write no LFT
 * block and no PortInfo; each bounce still counts for the flapping policy, so the link stays
 * isolated while it bounces (past the quiet time) and is released once it is quiet. A change on
 * another port of the same switch still sweeps. Witnesses: the SMPs the SM sent (counted under
 * it, by method and attribute) and the simulated fabric's port states and LFTs. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { FlapTracker, parseFlapPolicy } from '../src/sm/health-flap.js';
import { checkFabric, smRig, type SmRig } from './helpers/sm-rig.js';
import { drive } from './helpers/drive.js';
import { bounce, leafUplink, wait } from './helpers/flap.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

/** SMPs sent through the client, by "get"/"set" and attribute (no setDrTo: the apply step then
 * sends every write through setDr, counted here). */
function counting(): { wrap: (s: SmpClient) => SmpClient; sent: Map<string, number>; total: () => number } {
  const sent = new Map<string, number>();
  const count = (k: string): void => void sent.set(k, (sent.get(k) ?? 0) + 1);
  const wrap = (s: SmpClient): SmpClient => ({
    getDr: (path, attr, mod, t) => (count(`get ${attr}`), s.getDr(path, attr, mod, t)),
    setDr: (path, attr, mod, data, mkey, t) => (count(`set ${attr}`), s.setDr(path, attr, mod, data, mkey, t)),
    getLid: (lid, attr, mod, t) => (count(`get ${attr}`), s.getLid(lid, attr, mod, t)),
    setLid: (lid, attr, mod, data, t) => (count(`set ${attr}`), s.setLid(lid, attr, mod, data, t)),
    trap: (lid, notice) => s.trap(lid, notice),
    get sent() {
      return s.sent;
    },
  });
  return { wrap, sent, total: () => [...sent.values()].reduce((a, b) => a + b, 0) };
}

function rig(policy: string, o: { traps?: boolean } = {}) {
  const f = loadFabricSpec(SPEC);
  const c = counting();
  const r = smRig(f, { sm: { sweepIntervalMs: 5000, topology: { flap: parseFlapPolicy(policy) } }, wrapSmp: c.wrap, traps: o.traps });
  const link = leafUplink(f);
  // a host on the same leaf (another port of the switch at the quarantined link's end)
  const host = f.nodes[link.leaf]!.ports.findIndex((p) => p?.peer && f.nodes[p.peer.node]!.type !== NodeType.Switch);
  return { ...r, c, f, link, host };
}

/** What the SM did so far: sweeps (heavy and local; full heavy ones by their discovery line),
 * LFT blocks and other writes, every SMP, the bounces the flapping policy counted. */
function tally(r: ReturnType<typeof rig>) {
  const sets = [...r.c.sent].filter(([k]) => k.startsWith('set ')).reduce((a, [, v]) => a + v, 0);
  return {
    sweeps: r.sm.sweepsDone.heavy,
    full: r.lines('IBSM-2001').length,
    local: r.lines('IBSM-1201').length,
    lftSets: r.c.sent.get(`set ${SmpAttr.LinearForwardingTable}`) ?? 0,
    portInfoSets: r.c.sent.get(`set ${SmpAttr.PortInfo}`) ?? 0,
    otherSets: sets - (r.c.sent.get(`set ${SmpAttr.SwitchInfo}`) ?? 0),
    switchInfoSets: r.c.sent.get(`set ${SmpAttr.SwitchInfo}`) ?? 0,
    smps: r.c.total(),
    counted: r.sm.health.flap!.counted,
  };
}

const isolated = (r: SmRig): boolean => r.sm.health.state.isolated.some((i) => i.source === 'flapping');

describe('bounces counted between two views', () => {
  it('the next view shows them, it does not count them again: released after the quiet time from the last bounce', () => {
    const f = loadFabricSpec(SPEC);
    const cut = structuredClone(f);
    const { leaf, up } = leafUplink(cut);
    const peer = cut.nodes[leaf]!.ports[up]!.peer!;
    cut.nodes[leaf]!.ports[up]!.peer = undefined;
    cut.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
    const t = new FlapTracker({ count: 3, windowMs: 60_000, action: 'isolate', quietMs: 10_000 });
    const none = new Set<string>();
    t.observe(f, 0, none);
    t.observe(cut, 1000, none);
    t.observe(f, 2000, none);
    const [iso] = t.observe(cut, 3000, none).flapping; // 3 changes, the view has the link down
    const held = new Set([iso!.key]);
    for (let at = 4000; at <= 20_000; at += 1000) t.bounced(iso!.key, at); // absorbed: no view
    expect(t.releaseDue()).toBe(30_000);
    // the link is up now (the view differs from the last one): that is the bounces above
    expect(t.observe(f, 30_000, held).released).toEqual([iso!.key]);
  });
});

describe('a quarantined link costs nothing while it bounces', () => {
  it('traps: after the isolation, bounces start no sweep, write no LFT or PortInfo, count for the policy; released once quiet', async () => {
    const r = rig('6/60:isolate:20');
    await drive(r.clock, r.sm.start());
    const n = await bounce(r.sim, r.clock, r.link.guid, r.link.up, 10, { until: () => isolated(r) });
    expect(isolated(r)).toBe(true);
    await wait(r.clock, 3000); // the isolation's own Down Set and its retrain settle
    const a = tally(r);
    // 15 bounces every 2 s: 30 s, past the quiet time (20 s)
    await bounce(r.sim, r.clock, r.link.guid, r.link.up, 15);
    const b = tally(r);
    console.log(`quarantined link: isolated after ${n} bounces; 15 more bounces: ${b.sweeps - a.sweeps} sweeps, ${b.lftSets - a.lftSets} LFT blocks, ${b.smps - a.smps} SMPs (${((b.smps - a.smps) / 15).toFixed(1)} a bounce), ${b.switchInfoSets - a.switchInfoSets} SwitchInfo Sets, ${b.counted - a.counted} changes counted`);
    expect(b.sweeps - a.sweeps).toBe(0);
    expect(b.local - a.local).toBe(0);
    expect(b.full - a.full).toBe(0);
    expect(b.lftSets - a.lftSets).toBe(0);
    expect(b.portInfoSets - a.portInfoSets).toBe(0);
    expect(b.otherSets - a.otherSets).toBe(0);
    // each bounce counted (two transitions, both switches of the link trap each): held past the quiet time
    expect(b.counted - a.counted).toBeGreaterThanOrEqual(30);
    expect(isolated(r)).toBe(true);
    expect(r.lines('IBSM-2066')).toEqual([]);
    expect(r.sim.portInfo(r.link.guid, r.link.up).portState).toBe(PortState.Init);
    // quiet: released after 20 s, ACTIVE and routed again, by the first sweep the quiet time
    // asks for (the bounces counted between the views are not counted again by that sweep's view)
    await wait(r.clock, 30_000);
    expect(isolated(r)).toBe(false);
    expect(r.lines('IBSM-2066').length).toBe(1);
    expect(r.lines('IBSM-2067').length).toBe(1);
    expect(r.sim.portInfo(r.link.guid, r.link.up).portState).toBe(PortState.Active);
    checkFabric(r);
  });

  it('traps: a host cable pulled on the same switch while it is quarantined still sweeps and re-routes', async () => {
    const r = rig('6/60:isolate:600');
    await drive(r.clock, r.sm.start());
    await bounce(r.sim, r.clock, r.link.guid, r.link.up, 10, { until: () => isolated(r) });
    await wait(r.clock, 3000);
    const a = tally(r);
    r.sim.linkDown(r.link.guid, r.host);
    await wait(r.clock, 2000);
    const b = tally(r);
    expect(b.sweeps - a.sweeps).toBeGreaterThanOrEqual(1);
    expect(b.lftSets - a.lftSets).toBeGreaterThan(0);
    expect(r.sm.current!.fabric.nodes.find((x) => x.guid === r.link.guid)!.ports[r.host]!.peer).toBeUndefined();
    expect(isolated(r)).toBe(true);
  });

  it('no traps: the light sweep finds PortStateChange on the quarantined switch, checks it, sweeps only for another port', async () => {
    // every bounce seen by the light sweeps (every switch read within 2 × 5 s)
    const slow = { downMs: 11_000, upMs: 11_000 };
    const r = rig('4/600:isolate:600', { traps: false });
    await drive(r.clock, r.sm.start());
    await bounce(r.sim, r.clock, r.link.guid, r.link.up, 10, { ...slow, until: () => isolated(r) });
    expect(isolated(r)).toBe(true);
    await wait(r.clock, 11_000);
    const a = tally(r);
    await bounce(r.sim, r.clock, r.link.guid, r.link.up, 4, slow);
    const b = tally(r);
    expect(b.sweeps - a.sweeps).toBe(0);
    expect(b.lftSets - a.lftSets).toBe(0);
    expect(b.counted - a.counted).toBeGreaterThanOrEqual(8); // 8 transitions, each on one switch at least
    expect(r.sim.portInfo(r.link.guid, r.link.up).portState).toBe(PortState.Init);
    // a host cable on the same leaf: the check sees another port moved, a sweep follows
    r.sim.linkDown(r.link.guid, r.host);
    await wait(r.clock, 11_000);
    const c = tally(r);
    expect(c.sweeps - b.sweeps).toBeGreaterThanOrEqual(1);
    expect(r.sm.current!.fabric.nodes.find((x) => x.guid === r.link.guid)!.ports[r.host]!.peer).toBeUndefined();
    expect(isolated(r)).toBe(true);
  });
});

/** The hard cases of issue 11 item 4, each on the in-process fabric with the fabric's own state
 * (port states, LIDs, the LFTs the simulated switches hold) as the witness. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { checkFabric, smRig, type SmRig } from './helpers/sm-rig.js';
import type { Fabric } from '../src/model/fabric.js';

const spec = 'gen:fattree2:leaves=4,spines=2,hosts=3';
const firstCa = (f: Fabric): number => f.nodes.findIndex((n) => n.type !== NodeType.Switch);
const cas = (f: Fabric): number[] => f.nodes.flatMap((n, i) => (n.type !== NodeType.Switch ? [i] : []));
const upLink = (f: Fabric, leafDesc: string): { guid: bigint; port: number } => {
  const leaf = f.nodes.find((n) => n.desc.startsWith(leafDesc))!;
  return { guid: leaf.guid, port: leaf.ports.findIndex((p, i) => i > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch) };
};
const heavies = (r: SmRig): number => r.sm.stats.filter((s) => s.kind === 'heavy').length;
/** Let virtual time pass `t`, then run one more heavy sweep to its end (the fabric has settled). */
async function settleAfter(r: SmRig, t: number, ms = 30_000): Promise<void> {
  await r.clock.runUntil(() => r.clock.now() > t, ms);
  await r.clock.runUntil(r.sm.sweep('heavy'), ms);
}

describe('hard cases on the in-process fabric', () => {
  it('a link that flaps during a sweep: no crash, and once it stops the fabric is up with complete routes', async () => {
    const f = loadFabricSpec(spec);
    const r = (smRig(f, { sm: { sweepIntervalMs: 500 } }));
    const l = upLink(f, 'sw-l1-2');
    // Flap the cable every 3 virtual ms for the first 60 ms: discovery and programming meet it.
    let up = true;
    for (let t = 1; t <= 60; t += 3) r.clock.setTimeout(() => (up ? r.sim.linkDown(l.guid, l.port) : r.sim.linkUp(l.guid, l.port), (up = !up)), t);
    r.clock.setTimeout(() => up || r.sim.linkUp(l.guid, l.port), 62);
    await r.clock.runUntil(r.sm.start(), 30_000);
    await settleAfter(r, 62);
    checkFabric(r);
    expect(r.sim.portInfo(l.guid, l.port).portState).toBe(PortState.Active);
    r.sm.stop();
  });

  it('a switch that vanishes while its LFT blocks are written: the SM carries on, and no table points into its dead ports', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=20'); // 86 LIDs: two LFT blocks a switch
    const spine = f.nodes.find((n) => n.desc.startsWith('sw-l2-1'))!;
    let vanished = false;
    let rig: SmRig | undefined;
    // Between the SM and MadRpc: once the spine holds its first LFT block, all its cables go.
    const wrap = (inner: SmpClient): SmpClient => ({
      getDr: inner.getDr,
      getLid: inner.getLid,
      setLid: inner.setLid,
      trap: inner.trap,
      get sent() {
        return inner.sent;
      },
      setDr: async (path, attr, mod, data) => {
        const resp = await inner.setDr(path, attr, mod, data);
        if (!vanished && attr === SmpAttr.LinearForwardingTable && rig!.sim.lft(spine.guid).some((v) => v !== 0xff)) {
          vanished = true;
          rig!.sim.node(spine.guid).ports.forEach((pt, i) => i > 0 && pt?.peer && rig!.sim.linkDown(spine.guid, i));
        }
        return resp;
      },
    });
    const r = (smRig(f, { sm: { sweepIntervalMs: 500 }, wrapSmp: wrap }));
    rig = r;
    await r.clock.runUntil(r.sm.start(), 30_000);
    expect(vanished).toBe(true);
    await settleAfter(r, 0);
    expect(r.sm.current!.fabric.nodes.some((n) => n.guid === spine.guid)).toBe(false);
    checkFabric(r); // routes complete over the switches left, none into a dead port
    r.sm.stop();
  });

  it('ports stuck in INIT: logged with node, GUID, port; the rest ACTIVE; the port comes up at a later sweep once it can', async () => {
    const f = loadFabricSpec(spec);
    const host = cas(f)[2]!;
    const r = smRig(f, { sm: { sweepIntervalMs: 1000 } });
    r.sim.setStuckInit(host, 1, true);
    const st = await r.clock.runUntil(r.sm.start(), 30_000);
    expect(st.stuckPorts).toBe(1);
    const line = r.lines('IBSM-2034')[0]!;
    expect(line).toContain(`node="${f.nodes[host]!.desc}"`);
    expect(line).toMatch(/guid=0x[0-9a-f]+ port=1 lid=\d+/);
    expect(r.sim.portInfo(host, 1).portState).toBe(PortState.Init);
    // Everything else is ACTIVE; the stuck host's switch port stays ARMED (it cannot go ACTIVE alone).
    for (const [i, n] of f.nodes.entries()) {
      if (i === host) continue;
      n.ports.forEach((p, pn) => {
        if (!p?.peer || pn === 0 || p.peer.node === host) return;
        expect(r.sim.portInfo(i, pn).portState, `${n.desc} port ${pn}`).toBe(PortState.Active);
      });
    }
    r.sim.setStuckInit(host, 1, false);
    await r.clock.runUntil(() => r.sim.portInfo(host, 1).portState === PortState.Active, 10_000);
    checkFabric(r);
    r.sm.stop();
  });

  it('two nodes with the same GUID: the second is left out with an error naming both paths; the rest comes up', async () => {
    const f = loadFabricSpec(spec);
    const [a, b] = [cas(f)[1]!, cas(f)[4]!];
    f.nodes[b]!.guid = f.nodes[a]!.guid;
    f.nodes[b]!.ports[1]!.guid = f.nodes[a]!.ports[1]!.guid;
    const r = smRig(f);
    await r.clock.runUntil(r.sm.start(), 30_000);
    const line = r.lines('IBSM-2005')[0]!;
    expect(line).toBeDefined();
    expect(line).toContain(`guid=0x${f.nodes[a]!.guid.toString(16).padStart(16, '0')}`);
    expect(line).toMatch(/path=[\d,]+ first=[\d,]+/);
    expect(r.sm.current!.fabric.nodes.filter((n) => n.guid === f.nodes[a]!.guid)).toHaveLength(1);
    checkFabric(r);
    r.sm.stop();
  });

  it('two switches with the same GUID: the second is left out (an error for each port it was reached by); the rest comes up', async () => {
    const f = loadFabricSpec(spec);
    const a = f.nodes.findIndex((n) => n.desc.startsWith('sw-l1-1'));
    const b = f.nodes.findIndex((n) => n.desc.startsWith('sw-l1-3'));
    f.nodes[b]!.guid = f.nodes[a]!.guid;
    for (const p of f.nodes[b]!.ports) if (p) p.guid = f.nodes[a]!.ports[0]!.guid;
    const r = smRig(f);
    const st = await r.clock.runUntil(r.sm.start(), 30_000);
    expect(st.duplicateGuids).toBe(2); // reached from both spines
    expect(r.lines('IBSM-2005')).toHaveLength(2);
    expect(r.sm.current!.fabric.nodes.filter((n) => n.guid === f.nodes[a]!.guid)).toHaveLength(1);
    checkFabric(r);
    r.sm.stop();
  });

  it('two ports found with the same LID: one keeps it, the other gets a new one; LIDs unique, routes complete', async () => {
    const f = loadFabricSpec(spec);
    const [a, b] = [cas(f)[0]!, cas(f)[3]!];
    const r = smRig(f);
    r.sim.port(a, 1).info.lid = 7;
    r.sim.port(b, 1).info.lid = 7;
    await r.clock.runUntil(r.sm.start(), 30_000);
    const la = r.sim.portInfo(a, 1).lid;
    const lb = r.sim.portInfo(b, 1).lid;
    expect(la).not.toBe(lb);
    expect([la, lb]).toContain(7);
    checkFabric(r);
    r.sm.stop();
  });

  it('a babbling port (a trap storm): every trap repressed, one log line naming the port, the SM keeps its light-sweep pace', async () => {
    const f = loadFabricSpec(spec);
    const host = cas(f)[2]!;
    const r = smRig(f, { sm: { sweepIntervalMs: 100 } });
    await r.clock.runUntil(r.sm.start(), 30_000);
    const h0 = heavies(r);
    const l0 = r.sm.stats.length;
    const t0 = r.clock.now();
    // 4,000 traps 129 from one port over 2 s of virtual time.
    for (let i = 0; i < 4000; i++) r.clock.setTimeout(() => r.sim.raiseTrap(host, 1, 129), i * 0.5);
    await r.clock.runUntil(() => r.clock.now() - t0 >= 2100, 10_000);
    const storm = r.lines('IBSM-3003');
    expect(storm).toHaveLength(1);
    expect(storm[0]).toContain(`node="${f.nodes[host]!.desc}"`);
    expect(storm[0]).toMatch(/port=1 lid=\d+/);
    expect(r.lines('IBSM-3001').length).toBeLessThanOrEqual(8);
    expect(heavies(r) - h0).toBeLessThanOrEqual(5); // the first traps of the storm (the limit: 4 a second) ask for sweeps
    // Light sweeps every 100 ms went on: about 20 in 2 s.
    expect(r.sm.stats.length - l0).toBeGreaterThanOrEqual(15);
    checkFabric(r);
    r.sm.stop();
  });

  it('a port protected by an M_Key the SM does not know: left out with a line saying so, the rest ACTIVE; in once the lease expires', async () => {
    const f = loadFabricSpec(spec);
    const host = cas(f)[2]!;
    const r = smRig(f, { sm: { sweepIntervalMs: 1000 } });
    const info = r.sim.port(host, 1).info;
    info.mkey = 0x1234n;
    info.mkeyProtectBits = 1;
    info.mkeyLeasePeriod = 3;
    const st = await r.clock.runUntil(r.sm.start(), 30_000);
    expect(st.failedWrites).toBeGreaterThan(0);
    const line = r.lines('IBSM-2032')[0]!;
    expect(line).toContain(`node="${f.nodes[host]!.desc}"`);
    expect(line).toMatch(/protectBits=1 leaseS=3/);
    expect(r.sim.portInfo(host, 1).portState).toBe(PortState.Init);
    await r.clock.runUntil(() => r.sim.portInfo(host, 1).portState === PortState.Active, 20_000);
    checkFabric(r);
    r.sm.stop();
  });

  it('a port that takes an M_Key the SM does not know after SUBNET UP: its bad-M_Key trap about our TrapRepress is not repressed again (no trap loop)', async () => {
    const f = loadFabricSpec(spec);
    const host = cas(f)[2]!;
    const r = smRig(f, { sm: { sweepIntervalMs: 0 } });
    await r.clock.runUntil(r.sm.start(), 30_000);
    const info = r.sim.port(host, 1).info;
    expect(info.masterSmLid).toBeGreaterThan(0); // its traps reach the SM
    info.mkey = 0x4321n;
    info.mkeyProtectBits = 1;
    const t0 = r.sim.stats.trapsSent;
    // the port reports something (a trap the SM represses); the repress carries no M_Key the port takes
    r.sim.raiseTrap(host, 1, 129);
    const start = r.clock.now();
    await r.clock.runUntil(() => r.clock.now() - start > 2000, 10_000);
    const traps = r.sim.stats.trapsSent - t0;
    expect(traps).toBeGreaterThan(1); // the trap, then the bad-M_Key trap about the refused repress
    expect(traps).toBeLessThan(50); // each repeated a few times on the port's own schedule, not 1 µs apart forever
    expect(r.lines('IBSM-3004').length).toBeGreaterThan(0);
    r.sm.stop();
  });

  it("the SM's own port goes down and comes back: no crash, DISCOVERING while down, MASTER and the fabric up again after", async () => {
    const f = loadFabricSpec(spec);
    const at = firstCa(f);
    const r = smRig(f, { attach: at, sm: { sweepIntervalMs: 200 } });
    await r.clock.runUntil(r.sm.start(), 30_000);
    r.sim.linkDown(at, 1);
    await r.clock.runUntil(() => r.sm.state === 'discovering', 10_000);
    const t = r.clock.now();
    await r.clock.runUntil(() => r.clock.now() - t > 1000, 10_000);
    expect(r.sm.state).toBe('discovering');
    r.sim.linkUp(at, 1);
    await r.clock.runUntil(() => r.sm.state === 'master' && r.sim.portInfo(at, 1).portState === PortState.Active, 10_000);
    checkFabric(r);
    r.sm.stop();
  });
});


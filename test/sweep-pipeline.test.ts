/** The sweep pipeline (sm/pipeline.ts) and the guid2lid store off the sweep's path (issue #31):
 * a phase table runs in order and a phase can end the sweep; every table of the sweeper (heavy,
 * takeover, light, multicast) follows the phase order, and the light sweep's and the multicast
 * update's SMPs go out in their discover and apply phases only; a store that throws does not stop a
 * sweep (the fabric itself is the witness: every port ACTIVE, every LFT as the SM says); the file
 * store writes the latest map, coalesces saves, and logs and counts a failed write. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf, type SmpClient } from '../src/sm/smp-client.js';
import { installSmHandlers } from '../src/sm/handlers.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { formatGuid2Lid, type LidRange } from '../src/sm/lids.js';
import { checkPhaseOrder, PHASE_ORDER, PhaseOrderError, runPhases, type Phase } from '../src/sm/pipeline.js';
import { Sweeper } from '../src/sm/sweep.js';
import type { LightRun } from '../src/sm/light-sweep.js';
import type { McastRun } from '../src/sm/mcast-phases.js';
import { smRig } from './helpers/sm-rig.js';
import { Guid2LidFile } from '../src/api/guid2lid-file.js';
import { drive } from './helpers/drive.js';

describe('runPhases', () => {
  it('runs the phases in table order and stops at the first that returns false', async () => {
    const ran: string[] = [];
    const ph = (kind: Phase<string[]>['kind'], name: string, go = true): Phase<string[]> => ({ kind, name, run: (c) => (c.push(name), go) });
    expect(await runPhases([ph('discover', 'a'), ph('decide', 'b'), ph('plan', 'c'), ph('apply', 'd'), ph('apply', 'e'), ph('verify', 'f')], ran)).toBe(true);
    expect(ran).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    ran.length = 0;
    expect(await runPhases([ph('discover', 'a'), ph('decide', 'b', false), ph('apply', 'c')], ran)).toBe(false);
    expect(ran).toEqual(['a', 'b']);
  });

  it('refuses a table out of order before running any phase', async () => {
    const ran: string[] = [];
    const ph = (kind: Phase<string[]>['kind'], name: string): Phase<string[]> => ({ kind, name, run: (c) => void c.push(name) });
    await expect(runPhases([ph('discover', 'a'), ph('apply', 'b'), ph('plan', 'c')], ran)).rejects.toBeInstanceOf(PhaseOrderError);
    expect(ran).toEqual([]);
  });
});

describe("the sweeper's phase tables", () => {
  const kinds = (t: readonly Phase<never>[]): string[] => t.map((p) => p.kind);
  const noSmp: SmpClient = {
    getDr: () => Promise.reject(new Error('no fabric')),
    setDr: () => Promise.reject(new Error('no fabric')),
    getLid: () => Promise.reject(new Error('no fabric')),
    setLid: () => Promise.reject(new Error('no fabric')),
    trap: () => Promise.reject(new Error('no fabric')),
    sent: 0,
  };

  it('heavy, takeover, light and multicast tables follow discover → decide → plan → apply → verify', () => {
    const sw = new Sweeper(noSmp, new VirtualClock(), new Logger(new MemorySink(), 'info'), { routing: ['minhop'], lmc: 0 });
    expect(Object.keys(sw.tables).sort()).toEqual(['heavy', 'light', 'multicast', 'takeover']);
    for (const [name, t] of Object.entries(sw.tables)) {
      expect(() => checkPhaseOrder(t), name).not.toThrow();
      for (const p of t) expect(PHASE_ORDER, `${name}: ${p.name}`).toContain(p.kind);
    }
    // the heavy table's vport phases (sm/vport-phases.ts): a discover after discovery, an apply after activation;
    // decide: master or not, then the fabric health (issue #33); apply: isolated ports taken Down first
    expect(kinds(sw.tables.heavy)).toEqual(['discover', 'discover', 'decide', 'decide', 'plan', 'plan', 'apply', 'apply', 'apply', 'apply', 'apply', 'apply', 'apply', 'verify']);
    expect([sw.tables.heavy[1]!.name, sw.tables.heavy[12]!.name]).toEqual(['vports', 'vports']);
    expect(kinds(sw.tables.takeover)).toEqual(['discover', 'decide', 'decide', 'plan', 'plan', 'apply', 'verify']);
    expect(kinds(sw.tables.light)).toEqual(['discover', 'decide', 'verify']);
    expect(kinds(sw.tables.multicast)).toEqual(['plan', 'apply', 'verify']);
    // the apply phases are the same objects in the heavy and the takeover tables
    expect(sw.tables.takeover[5]).toBe(sw.tables.heavy[7]);
    expect([sw.tables.takeover[2]!.name, sw.tables.heavy[3]!.name]).toEqual(['fabric health', 'fabric health']);
    expect(sw.tables.heavy[7]).toBe(sw.phases.portInfo);
    expect(sw.tables.heavy[6]).toBe(sw.health.takeDownPhase);
  });

  it("light: only discover sends SMPs (S of them, the rotation's share), decide judges (a link down: changed); multicast: only apply sends (the blocks plan found), the switches hold them", async () => {
    const r = smRig(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=6'));
    await drive(r.clock, r.sm.start());
    r.sm.stop(); // no sweep of its own meanwhile: the SMPs counted below are the tables'
    const snap = r.sm.current!;
    const f = snap.fabric;
    const switches = f.nodes.filter((n) => n.type === NodeType.Switch).length;
    const smp = smpClientOf(r.rpc);
    const members = f.nodes.flatMap((n, i) => (n.type === NodeType.Switch ? [] : n.ports.flatMap((p, pn) => (p?.peer ? [{ node: i, port: pn }] : []))));
    const sw = new Sweeper(smp, r.clock, new Logger(new MemorySink(), 'debug'), { routing: ['minhop'], lmc: 0, sweepIntervalMs: 5000, multicastGroups: () => [{ mlid: 0xc010, members }] });
    const step = async <C>(p: Phase<C>, c: C): Promise<number> => {
      const s0 = smp.sent;
      await drive(r.clock, Promise.resolve(p.run(c)));
      return smp.sent - s0;
    };

    // The light table, one phase at a time: the periodic share (S SMPs: half the switches, the rest CA ports).
    const [discover, decide, verify] = sw.tables.light as [Phase<LightRun>, Phase<LightRun>, Phase<LightRun>];
    const lr: LightRun = { snap, full: false, t0: r.clock.now(), s0: smp.sent };
    expect(await step(discover, lr)).toBe(switches);
    expect(lr.answers).toHaveLength(switches);
    expect(lr.answers!.every((a) => ('node' in a ? a.portStateChange : a.state) !== undefined), 'every read answered').toBe(true);
    expect(await step(decide, lr)).toBe(0);
    expect(lr.result).toMatchObject({ changed: false, smPorts: [], foreign: { ports: 0 } });
    expect(await step(verify, lr)).toBe(0);
    expect(lr.stats).toMatchObject({ kind: 'light', smps: switches, switches: Math.ceil(switches / 2), nodes: f.nodes.length });
    // The multicast table: plan sends nothing, apply sends what plan found, verify nothing.
    const [plan, apply, check] = sw.tables.multicast as [Phase<McastRun>, Phase<McastRun>, Phase<McastRun>];
    const mr: McastRun = { snap, t0: r.clock.now(), sent: 0, failed: 0 };
    expect(await step(plan, mr)).toBe(0);
    expect(mr.writes!.length).toBeGreaterThan(0);
    expect(await step(apply, mr)).toBe(mr.writes!.length);
    expect(await step(check, mr)).toBe(0);
    expect(mr).toMatchObject({ sent: mr.writes!.length, failed: 0, groups: 1 });
    // the switches' own MFT blocks: what was written
    for (const w of mr.writes!) expect(await drive(r.clock, smp.getDr(w.path, SmpAttr.MulticastForwardingTable, w.mod))).toEqual(w.data);
    // against what is programmed: the same update again plans nothing
    expect(await drive(r.clock, sw.programMulticast(snap))).toBe(0);
    // A link between two switches goes down: the full light sweep's decide phase says changed.
    const a = f.nodes.findIndex((n) => n.type === NodeType.Switch);
    const pa = f.nodes[a]!.ports.findIndex((p, i) => i > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
    r.sim.linkDown(f.nodes[a]!.guid, pa);
    const full: LightRun = { snap, full: true, t0: r.clock.now(), s0: smp.sent };
    expect(await step(discover, full)).toBeGreaterThanOrEqual(switches + members.length); // reads behind the link retried
    expect(full.answers, 'every switch and CA port read, answered or not').toHaveLength(switches + members.length);
    expect(await step(decide, full)).toBe(0);
    expect(full.result!.changed).toBe(true);

    r.rpc.close();
  });
});

describe('guid2lid store', () => {
  it('a store that throws does not stop a heavy sweep: it is logged and counted, the fabric is programmed', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2'), { clock, seed: 3 });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64 });
    const sink = new MemorySink();
    let saves = 0;
    const sm = new SubnetManager({
      smp: smpClientOf(rpc),
      clock,
      log: new Logger(sink, 'info'),
      routing: ['minhop'],
      lmc: 0,
      saveGuid2Lid: () => {
        saves++;
        throw new Error('disk full');
      },
      sweepIntervalMs: 0,
    });
    const st = await drive(clock, sm.start());
    expect(saves).toBe(1);
    expect(sink.lines.filter((l) => / IBSM-9013 /.test(l) && l.includes('disk full'))).toHaveLength(1);
    expect(st.activated).toBeGreaterThan(0);
    // the fabric's own state: every cabled port ACTIVE at the LID the snapshot gives it
    const snap = sm.current!;
    for (const n of snap.fabric.nodes) {
      n.ports.forEach((p, pn) => {
        if (!p?.peer) return;
        const pi = sim.portInfo(n.guid, pn);
        expect(pi.portState, `${n.desc} port ${pn}`).toBe(PortState.Active);
        if (n.type !== NodeType.Switch) expect(pi.lid).toBe(p.lid);
      });
      if (n.type === NodeType.Switch) expect(sim.switchInfo(n.guid).linearFdbTop).toBe(snap.maxLid);
    }
    sm.stop();
    rpc.close();
    await ep.close();
  });

  it('the file store writes the latest map, coalescing saves made while a write is on its way', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-g2l-'));
    try {
      const file = path.join(dir, 'guid2lid');
      const sink = new MemorySink();
      const store = new Guid2LidFile(file, new Logger(sink, 'info'));
      const map = (base: number): Map<bigint, LidRange> => new Map([[0x0002c90300000001n, { base, lmc: 0 }], [0x0002c90300000002n, { base: base + 1, lmc: 0 }]]);
      store.save(map(1)); // on its way
      store.save(map(10)); // replaced by the next one before it is written
      store.save(map(20));
      await store.flush();
      expect(readFileSync(file, 'utf8')).toBe(formatGuid2Lid(map(20)));
      expect(store.written).toBe(2); // the first, then the latest; map(10) never written
      expect(store.failures).toBe(0);
      store.save(map(30));
      await store.flush();
      expect(readFileSync(file, 'utf8')).toBe(formatGuid2Lid(map(30)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the file store logs and counts a failed write, never throws, and writes at the next save', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-g2l-'));
    try {
      const sink = new MemorySink();
      const bad = new Guid2LidFile(path.join(dir, 'no-such-dir', 'guid2lid'), new Logger(sink, 'info'));
      const m = new Map<bigint, LidRange>([[1n, { base: 1, lmc: 0 }]]);
      expect(() => bad.save(m)).not.toThrow();
      await bad.flush();
      expect(bad.failures).toBe(1);
      expect(bad.written).toBe(0);
      expect(sink.lines.filter((l) => / IBSM-9013 /.test(l) && l.includes('no-such-dir'))).toHaveLength(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('one failure policy in a local sweep', () => {
  it('a refused PortInfo Set does not stop the local sweep: its tables still go out, then IBSM-1204 and a full heavy sweep', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=2'), { clock, seed: 7 });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 1, window: 64, perDestinationWindow: 8 });
    // One record of the Sets sent and the log lines written, in order.
    const events: string[] = [];
    let refusePortInfo = false;
    const sink = {
      write: (line: string): void => {
        events.push(`log ${line}`);
        if (/ IBSM-1204 /.test(line)) refusePortInfo = false; // the full heavy sweep that follows is served
      },
    };
    const base = smpClientOf(rpc);
    const smp: SmpClient = {
      getDr: base.getDr,
      getLid: base.getLid,
      setLid: base.setLid,
      trap: base.trap,
      get sent() {
        return base.sent;
      },
      setDr: (path, attr, mod, data, mkey) => {
        const refuse = refusePortInfo && attr === SmpAttr.PortInfo;
        events.push(`set ${attr} ${refuse ? 'refused' : 'sent'}`);
        return refuse ? Promise.reject(new Error('refused')) : base.setDr(path, attr, mod, data, mkey);
      },
    };
    const log = new Logger(sink, 'info');
    const sm = new SubnetManager({ smp, clock, log, routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: 1000 });
    installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log });
    await drive(clock, sm.start());
    const f0 = sm.current!.fabric;
    const a = f0.nodes.findIndex((n) => n.desc === 'sw-l1-1');
    const pa = f0.nodes[a]!.ports.findIndex((p, i) => i > 0 && p?.peer && f0.nodes[p.peer.node]!.type === NodeType.Switch);
    const peer = f0.nodes[a]!.ports[pa]!.peer!;
    const after = async (act: () => void): Promise<void> => {
      const n = sm.stats.length;
      act();
      await clock.runUntil(() => sm.stats.length > n, 10_000);
    };
    await after(() => sim.linkDown(f0.nodes[a]!.guid, pa));
    expect(sm.stats.at(-1)!.reroute, 'the link down: a local sweep').toBeDefined();
    const from = events.length;
    refusePortInfo = true;
    await after(() => sim.linkUp(f0.nodes[a]!.guid, pa));
    const ev = events.slice(from);
    const firstRefused = ev.findIndex((e) => e === `set ${SmpAttr.PortInfo} refused`);
    const giveUp = ev.findIndex((e) => / IBSM-1204 /.test(e));
    expect(firstRefused, 'a PortInfo Set of the link that came up was refused').toBeGreaterThanOrEqual(0);
    expect(giveUp, 'the local sweep said it gives way to a full heavy sweep').toBeGreaterThan(firstRefused);
    // The writes after the refused ones went on: the LFT phase's Sets (SwitchInfo, PortStateChange
    // cleared; LFT blocks where routes changed) were sent by the local sweep before it gave way.
    const tables = new Set([`set ${SmpAttr.SwitchInfo} sent`, `set ${SmpAttr.LinearForwardingTable} sent`]);
    expect(ev.slice(firstRefused, giveUp).filter((e) => tables.has(e)).length).toBeGreaterThan(0);
    expect(ev.slice(firstRefused, giveUp).some((e) => / IBSM-2030 /.test(e)), 'each failed write logged').toBe(true);
    // The full heavy sweep that followed set the link up: both ends ACTIVE (the fabric's own state).
    expect(sm.stats.at(-1)!.reroute, 'the last sweep: a full heavy one').toBeUndefined();
    expect(sim.portInfo(f0.nodes[a]!.guid, pa).portState).toBe(PortState.Active);
    expect(sim.portInfo(f0.nodes[peer.node]!.guid, peer.port).portState).toBe(PortState.Active);
    sm.stop();
    rpc.close();
    await ep.close();
  });
});

/** The SM controller (src/sm/controller.ts): events in, actions out, nothing dropped while busy;
 * and the multicast join that a light sweep used to swallow, end to end on the in-process fabric. */
import { describe, expect, it } from 'vitest';
import { SmController, type SmAction } from '../src/sm/controller.js';
import { MCAST_SETTLE_MS } from '../src/sm/sweep-schedule.js';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MadHeader, MgmtClass, Method, NodeType, SmpAttr } from '../src/wire/mad.js';
import { JoinState, MCMemberRecord, SaAttr, SA_CLASS_VERSION } from '../src/wire/sa.js';
import { MC_CREATE_MASK } from '../src/sa/multicast.js';
import { SaClient } from '../src/sa/client.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf, type SmpClient } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';

describe('SmController', () => {
  /** A heavy sweep whose discovery found no other SM, then finished. */
  const swept = (c: SmController, a: SmAction, now: number, outcome: 'ok' | 'failed' = 'ok'): void => {
    c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, now);
    expect(c.mayProgram).toBe(true);
    c.handle({ type: 'actionDone', action: a, outcome }, now);
  };
  const run = (c: SmController, now: number): SmAction => {
    const a = c.poll(now);
    expect(a, 'an action is due').toBeDefined();
    expect(c.poll(now), 'one action at a time').toBeUndefined();
    return a!;
  };

  it('starts with a heavy sweep, becomes master, then light-sweeps on its interval', () => {
    const c = new SmController({ sweepIntervalMs: 1000 });
    expect(c.state).toBe('notActive');
    expect(c.poll(0)).toBeUndefined();
    c.handle({ type: 'start' }, 0);
    expect(c.state).toBe('discovering');
    const h = run(c, 0);
    expect(h.type).toBe('heavySweep');
    expect(c.pollAt(), 'no timer while a sweep runs').toBeUndefined();
    swept(c, h, 200);
    expect(c.state).toBe('master');
    expect(c.takeTransitions().map((t) => t.to)).toEqual(['discovering', 'master']);
    expect(c.poll(500)).toBeUndefined();
    expect(c.pollAt()).toBe(1200);
    const l = run(c, 1200);
    expect(l.type).toBe('lightSweep');
    c.handle({ type: 'actionDone', action: l, outcome: 'ok' }, 1250);
    expect(c.pollAt()).toBe(2250);
    expect(c.idle).toBe(true);
  });

  it('a light sweep that finds a change is followed by a heavy sweep', () => {
    const c = new SmController({ sweepIntervalMs: 1000 });
    c.handle({ type: 'start' }, 0);
    swept(c, run(c, 0), 10);
    const l = run(c, 1010);
    c.handle({ type: 'actionDone', action: l, outcome: 'changed' }, 1020);
    expect(run(c, 1020)).toEqual({ type: 'heavySweep', reason: 'light sweep found a change' });
  });

  it('keeps a multicast change that arrives during a light sweep and programs it right after', () => {
    const c = new SmController({ sweepIntervalMs: 1000 });
    c.handle({ type: 'start' }, 0);
    swept(c, run(c, 0), 10);
    const l = run(c, 1010);
    c.handle({ type: 'multicastChanged' }, 1011);
    expect(c.poll(1012), 'not while the light sweep runs').toBeUndefined();
    c.handle({ type: 'actionDone', action: l, outcome: 'ok' }, 1020);
    expect(c.poll(1020), 'not before the change has settled').toBeUndefined();
    expect(run(c, 1011 + MCAST_SETTLE_MS).type).toBe('programMulticast');
  });

  it('never starts a heavy sweep while multicast programming runs, and drops neither', () => {
    const c = new SmController({ sweepIntervalMs: 0 });
    c.handle({ type: 'start' }, 0);
    swept(c, run(c, 0), 10);
    c.handle({ type: 'multicastChanged' }, 20);
    const m = run(c, 20 + MCAST_SETTLE_MS);
    expect(m.type).toBe('programMulticast');
    c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 128' }, 41);
    c.handle({ type: 'multicastChanged' }, 42);
    expect(c.poll(42)).toBeUndefined();
    c.handle({ type: 'actionDone', action: m, outcome: 'ok' }, 50);
    // The heavy sweep goes first and programs the MFTs itself: no separate multicast step after it.
    const h = run(c, 50);
    expect(h).toEqual({ type: 'heavySweep', reason: 'trap 128' });
    swept(c, h, 100);
    expect(c.poll(100)).toBeUndefined();
    expect(c.idle).toBe(true);
  });

  it('coalesces heavy sweep requests that arrive during a heavy sweep into one more', () => {
    const c = new SmController({ sweepIntervalMs: 0 });
    c.handle({ type: 'start' }, 0);
    const h = run(c, 0);
    for (let i = 0; i < 5; i++) c.handle({ type: 'sweepRequested', kind: 'heavy', reason: `trap ${i}` }, 1 + i);
    swept(c, h, 10);
    const again = run(c, 10);
    expect(again).toEqual({ type: 'heavySweep', reason: 'trap 0' });
    swept(c, again, 20);
    expect(c.poll(20)).toBeUndefined();
  });

  it('a failed first sweep leaves it discovering and is retried on the sweep interval; no light sweep or multicast before a snapshot', () => {
    const c = new SmController({ sweepIntervalMs: 100 });
    c.handle({ type: 'start' }, 0);
    c.handle({ type: 'multicastChanged' }, 1);
    swept(c, run(c, 0), 5, 'failed');
    expect(c.state).toBe('discovering');
    expect(c.poll(50)).toBeUndefined();
    expect(c.pollAt()).toBe(105);
    expect(run(c, 105)).toEqual({ type: 'heavySweep', reason: 'retry' });
  });

  it('a light sweep requested before any snapshot is a heavy one', () => {
    const c = new SmController({ sweepIntervalMs: 0 });
    c.handle({ type: 'start' }, 0);
    c.handle({ type: 'actionDone', action: run(c, 0), outcome: 'failed' }, 5);
    c.handle({ type: 'sweepRequested', kind: 'light', reason: 'operator' }, 10);
    expect(run(c, 10).type).toBe('heavySweep');
  });
});

describe('the SM on the in-process fabric', () => {
  it('programs a multicast join that arrives while a light sweep is under way', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=2,spines=2,hosts=2'), { clock, seed: 3 });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
    // Light sweeps read SwitchInfo; hold those reads at a gate so the join lands mid-sweep.
    const inner = smpClientOf(rpc);
    let gate: Promise<void> | undefined;
    let held = 0;
    const smp: SmpClient = {
      ...inner,
      get sent() {
        return inner.sent;
      },
      getDr: async (path, attr, mod) => {
        if (gate && attr === SmpAttr.SwitchInfo) {
          held++;
          await gate;
        }
        return inner.getDr(path, attr, mod);
      },
    };
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp, clock, log: new Logger(new MemorySink(), 'debug'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0, saServer: { schedule: (fn) => queueMicrotask(fn) } });
    await drive(clock, subnet.start());

    const cas = sim.nodes.map((n, i) => (n.type !== NodeType.Switch ? i : -1)).filter((i) => i >= 0);
    const attach = async (i: number) => {
      const m = sim.attach(i);
      m.register(MgmtClass.SubnDirected, 1);
      m.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
      m.register(0x32, 1, { methods: [Method.Send] });
      const r = new MadRpc(m, clock, { timeoutMs: 50 });
      let got = 0;
      r.onUnsolicited(0x32, () => got++, { method: Method.Send });
      return { ep: m, sa: await drive(clock, SaClient.locate(r)), guid: m.local.portGuid, got: () => got };
    };
    const a = await attach(cas[1]!);
    const b = await attach(cas[3]!);

    let release!: () => void;
    gate = new Promise<void>((r) => (release = r));
    const light = subnet.sm.sweep('light');
    await clock.advanceAsync(5);
    expect(held, 'the light sweep is waiting at the gate').toBeGreaterThan(0);
    const gid = (g: bigint): bigint => (0xfe80000000000000n << 64n) | g;
    const created = await drive(clock, a.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: 0n, portGid: gid(a.guid), qKey: 0x1234, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK));
    await drive(clock, b.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: created.mgid, portGid: gid(b.guid), joinState: JoinState.FullMember, qKey: 0x1234, pKey: 0xffff, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK));
    gate = undefined;
    release();
    const st = await drive(clock, light);
    expect(st.kind, 'nothing changed in the fabric').toBe('light');
    await clock.advanceAsync(100);

    const switches = sim.nodes.filter((n) => n.type === NodeType.Switch);
    expect(switches.some((n) => [...subnet.sm.mftEntries(n.guid)].length > 0), 'MFT blocks written for the group').toBe(true);
    const mad = MadHeader.encode({ baseVersion: 1, mgmtClass: 0x32, classVersion: 1, method: Method.Send, tid: 9n, attrId: 0x10 }, new Uint8Array(256));
    a.ep.send(mad, { lid: created.mlid, qpn: 0xffffff, qkey: 0x1234 });
    await clock.advanceAsync(20);
    expect(b.got(), 'a MAD to the MLID reaches the other member').toBe(1);
    subnet.stop();
  });
});

/** SR-IOV vports across a failover (docs/vports.md): two SMs (Subnet: SM + SA, SA sync on) on one
 * in-process fabric whose HCAs have vports; the master dies, the standby takes over and every
 * vport keeps its LID and stays ACTIVE, the switches still forwarding each vport LID as its
 * host's. The simulated fabric is the witness. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=3';

function startSm(clock: VirtualClock, sim: SimFabric, node: number, priority: number, saSync = true) {
  const ep = sim.attach(node);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 2, window: 64 });
  const subnet = new Subnet({
    rpc,
    portGuid: ep.local.portGuid,
    smp: smpClientOf(rpc),
    clock,
    log: new Logger(new MemorySink(), 'info'),
    routing: ['minhop'],
    lmc: 0,
    sweepIntervalMs: 1000,
    priority,
    saSync,
    pollIntervalMs: 200,
    pollRetries: 2,
    saServer: { schedule: (fn) => queueMicrotask(fn) },
  });
  void subnet.start().catch(() => undefined);
  return {
    subnet,
    kill: async () => {
      subnet.stop();
      rpc.close();
      await ep.close();
    },
  };
}

describe('SR-IOV vports across a failover', () => {
  it('the standby that takes over keeps every vport LID, every vport ACTIVE and routed', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec(SPEC), { clock, seed: 5, virtualization: { vportCap: 32, vports: 6 } });
    const cas = sim.nodes.filter((n) => n.type === NodeType.CA).map((n) => n.idx);
    const a = startSm(clock, sim, cas[0]!, 10);
    const b = startSm(clock, sim, cas[5]!, 2);
    await clock.advanceAsync(3000);
    expect(a.subnet.sm.state).toBe('master');
    expect(b.subnet.sm.state).toBe('standby');
    const lids = new Map([...sim.vports.all()].filter((v) => v.lidRequired).map((v) => [v.guid, v.lid]));
    expect(lids.size).toBe(cas.length * 3);
    for (const l of lids.values()) expect(l).toBeGreaterThan(0);
    // the first master held no SA registrations: every vport's clients were asked to re-register
    const rereg = (): number[] => [...sim.vports.all()].filter((v) => v.index !== 0).map((v) => v.clientReregisters);
    expect(Math.min(...rereg())).toBeGreaterThanOrEqual(1);
    const before = rereg();
    // the master's SA state (synced to the standby) carries the vport ranges
    const synced = a.subnet.exportState();
    const keys = [...synced.keys()].join(' ');
    for (const g of lids.keys()) expect(keys).toContain(g.toString(16));
    await a.kill();
    await clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('master');
    const after = new Map([...sim.vports.all()].filter((v) => v.lidRequired).map((v) => [v.guid, v.lid]));
    expect(after).toEqual(lids);
    expect(rereg(), 'the SA state was synced: no vport asked to re-register again').toEqual(before);
    expect(b.subnet.sm.vports.counts().vports).toBe(cas.length * 7);
    for (const v of sim.vports.all()) expect(v.state).toBe(PortState.Active);
    const switches = sim.nodes.filter((n) => n.isSwitch).map((s) => sim.lft(s.guid));
    for (const v of sim.vports.all()) if (v.lidRequired) for (const lft of switches) expect(lft[v.lid]).toBe(lft[v.virt.port.info.lid]);
    await b.kill();
  });

  it('a standby that takes over without the SA state (no sync) sets ClientReregister on every vport', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec(SPEC), { clock, seed: 5, virtualization: { vportCap: 32, vports: 4 } });
    const cas = sim.nodes.filter((n) => n.type === NodeType.CA).map((n) => n.idx);
    const a = startSm(clock, sim, cas[0]!, 10, false);
    const b = startSm(clock, sim, cas[5]!, 2, false);
    await clock.advanceAsync(3000);
    expect([a.subnet.sm.state, b.subnet.sm.state]).toEqual(['master', 'standby']);
    const vports = [...sim.vports.all()].filter((v) => v.index !== 0);
    expect(vports.length).toBe(cas.length * 4);
    const before = vports.map((v) => v.clientReregisters);
    // light sweeps of the master: no ClientReregister
    await clock.advanceAsync(3000);
    expect(vports.map((v) => v.clientReregisters)).toEqual(before);
    await a.kill();
    await clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('master');
    vports.forEach((v, i) => expect(v.clientReregisters, `vport ${v.index} of ${v.virt.port.node.desc}`).toBe(before[i]! + 1));
    for (const v of vports) expect(v.state).toBe(PortState.Active);
    await b.kill();
  });
});

/** The health state across a failover (issue #33 item 2): two SMs (Subnet: SM + SA, SA sync on)
 * on one in-process fabric; the master isolates a leaf uplink by hand, then dies; the standby that
 * takes over holds the link isolated from its first sweep (INIT in both SMAs, no LFT entry out of
 * it) with the same source and since. Without the sync the new master brings it back ACTIVE and
 * routes it. The simulated fabric is the witness. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { manualIsolation } from '../src/sm/health-manual.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { hasCode } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=3';

function startSm(clock: VirtualClock, sim: SimFabric, node: number, priority: number, saSync: boolean) {
  const ep = sim.attach(node);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 2, window: 64 });
  const sink = new MemorySink();
  const subnet = new Subnet({
    rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(sink, 'info'),
    routing: ['minhop'], lmc: 0, sweepIntervalMs: 1000, priority, saSync, pollIntervalMs: 200, pollRetries: 2,
    saServer: { schedule: (fn) => queueMicrotask(fn) },
  });
  void subnet.start().catch(() => undefined);
  return {
    subnet,
    sink,
    kill: async () => {
      subnet.stop();
      rpc.close();
      await ep.close();
    },
  };
}

async function failover(saSync: boolean) {
  const clock = new VirtualClock();
  const f = loadFabricSpec(SPEC);
  const sim = new SimFabric(f, { clock, seed: 5 });
  const cas = sim.nodes.filter((n) => n.type === NodeType.CA).map((n) => n.idx);
  const a = startSm(clock, sim, cas[0]!, 10, saSync);
  const b = startSm(clock, sim, cas[5]!, 2, saSync);
  await clock.advanceAsync(3000);
  expect([a.subnet.sm.state, b.subnet.sm.state]).toEqual(['master', 'standby']);
  // a leaf uplink, isolated by hand on the master
  const sw = (i: number): boolean => f.nodes[i]!.type === NodeType.Switch;
  const leaf = f.nodes.findIndex((n, i) => sw(i) && n.ports.some((p) => p?.peer && !sw(p.peer.node)));
  const up = f.nodes[leaf]!.ports.findIndex((p, pn) => pn > 0 && p?.peer !== undefined && sw(p.peer.node));
  const lg = f.nodes[leaf]!.guid;
  const peer = f.nodes[leaf]!.ports[up]!.peer!;
  const out = (): number => [...sim.lft(lg).subarray(1, 64)].filter((p) => p === up).length;
  expect(out()).toBeGreaterThan(0);
  const iso = manualIsolation(a.subnet.sm.current!.fabric, `0x${lg.toString(16)}:${up}`, clock.now());
  expect(a.subnet.sm.health.isolateByHand(iso)).toBe(true);
  a.subnet.sm.requestHeavySweep('isolated by hand', true);
  await clock.advanceAsync(2000); // the sweep, and the standby's polls pull the new state
  expect(sim.portInfo(lg, up).portState).toBe(PortState.Init);
  expect(out()).toBe(0);
  await a.kill();
  await clock.advanceAsync(3000);
  expect(b.subnet.sm.state).toBe('master');
  return { sim, b, lg, up, peer, out, iso, f };
}

describe('health state across a failover', () => {
  it('the standby that takes over holds the isolation the master made by hand: not ACTIVE, not routed', async () => {
    const { sim, b, lg, up, peer, out, iso, f } = await failover(true);
    expect(hasCode(b.sink.lines, 'IBSM-2081')).toBe(true);
    expect(b.subnet.sm.health.state.isolated.map((i) => [i.key, i.kind, i.source, i.cls])).toEqual([[iso.key, 'link', 'manual', 'manual']]);
    expect(Math.abs(b.subnet.sm.health.state.isolated[0]!.since - iso.since)).toBeLessThan(1000);
    expect(sim.portInfo(lg, up).portState).toBe(PortState.Init);
    expect(sim.portInfo(f.nodes[peer.node]!.guid, peer.port).portState).toBe(PortState.Init);
    expect(out()).toBe(0);
    await b.kill();
  });

  it('without the sync the new master knows nothing of it: ACTIVE and routed again', async () => {
    const { sim, b, lg, up, out } = await failover(false);
    expect(b.subnet.sm.health.state.isolated).toEqual([]);
    expect(sim.portInfo(lg, up).portState).toBe(PortState.Active);
    expect(out()).toBeGreaterThan(0);
    await b.kill();
  });
});

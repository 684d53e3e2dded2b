/** The QoS SL2VL and VLArbitration tables planVlTables writes from OpenSM's qos_* settings: every
 * switch port pair and end port, the SL2VL masked to each port's OperationalVLs, low and high
 * VLArbitration blocks as configured, and a layered engine's tables winning over QoS. */
import { describe, expect, it } from 'vitest';
import { planVlTables } from '../src/sm/plan-tables.js';
import { planPortInfo } from '../src/sm/plan-ports.js';
import { Programmed } from '../src/sm/programmed.js';
import { qosVlSettings } from '../src/model/qos-policy.js';
import { SmpAttr, NodeType } from '../src/wire/mad.js';
import { PortInfo, SLtoVLMappingTable, VLArbitrationTable } from '../src/wire/sma.js';
import { buildContext, mixedFabric } from './sa-fixture.js';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';

describe('QoS VL tables', () => {
  it('SL2VL per port pair masked to OperationalVLs, VLArb low and high blocks; nothing rewritten once programmed', async () => {
    const { ctx } = await buildContext(mixedFabric());
    const disc = ctx.snapshot.discovery;
    // Pretend the ports operate VL0-3.
    for (const n of disc.nodes) for (const pi of n.portInfo) if (pi) pi.operationalVls = 3;
    const qos = qosVlSettings({ vlarbHigh: '0:8', vlarbLow: '1:4,2:4,3:4' });
    const routing = { ...ctx.snapshot.routing, vlsUsed: 1, sl2vl: undefined };
    const writes = planVlTables(disc, routing, new Programmed(), qos);
    const sl2vl = writes.filter((w) => w.attr === SmpAttr.SLtoVLMappingTable);
    const arb = writes.filter((w) => w.attr === SmpAttr.VLArbitrationTable);
    expect(sl2vl.length).toBeGreaterThan(0);
    for (const w of sl2vl) expect(SLtoVLMappingTable.decode(w.data).vls).toEqual([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
    const blocks = new Set(arb.map((w) => (w.mod >>> 16) & 0xffff));
    expect([...blocks].sort()).toEqual([1, 3]);
    const low = arb.find((w) => ((w.mod >>> 16) & 0xffff) === 1)!;
    expect(VLArbitrationTable.decode(low.data).entries.slice(0, 4)).toEqual([{ vl: 1, weight: 4 }, { vl: 2, weight: 4 }, { vl: 3, weight: 4 }, { vl: 0, weight: 0 }]);
    // One SL2VL Set per CA port; per switch output port, one per input port 0..N (every input,
    // as OpenSM programs them; on ibsim `smpquery sl2vl` reads them back equal), or one for all
    // inputs where the switch takes optimized SL2VL programming.
    const f = ctx.snapshot.fabric;
    let want = 0;
    f.nodes.forEach((n, i) => {
      const linked = n.ports.filter((p, k) => k > 0 && p?.peer).length;
      const optimized = ctx.snapshot.discovery.nodes[i]!.switchInfo?.optimizedSlToVlMappingProgramming;
      want += n.type === NodeType.Switch ? linked * (optimized ? 1 : n.numPorts + 1) : linked;
    });
    expect(sl2vl.length).toBe(want);
    // Acknowledged: nothing to write again.
    const p = new Programmed();
    for (const w of writes) if (w.effect?.kind === 'vl') p.vl.set(w.effect.key, w.effect.sig);
    expect(planVlTables(disc, routing, p, qos)).toEqual([]);
  });

  it("a layered routing engine's SL2VL wins over QoS", async () => {
    const { ctx } = await buildContext(mixedFabric());
    const routing = { ...ctx.snapshot.routing, vlsUsed: 2, sl2vl: [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1] };
    const writes = planVlTables(ctx.snapshot.discovery, routing, new Programmed(), qosVlSettings());
    const t = writes.find((w) => w.attr === SmpAttr.SLtoVLMappingTable)!;
    expect(SLtoVLMappingTable.decode(t.data).vls).toEqual(routing.sl2vl);
    expect(planVlTables(ctx.snapshot.discovery, { ...routing, vlsUsed: 1, sl2vl: undefined }, new Programmed())).toEqual([]); // no QoS: nothing, as before
  });

  it("VLHighLimit (qos_high_limit) goes to every linked port with QoS on, and is left alone without it", async () => {
    const { ctx } = await buildContext(mixedFabric());
    const disc = ctx.snapshot.discovery;
    const settings = { lmc: 0, smLid: ctx.snapshot.smLid };
    const withQos = planPortInfo(disc, { ...settings, qosVl: qosVlSettings({ highLimit: 7 }) });
    const f = ctx.snapshot.fabric;
    const linked = f.nodes.reduce((a, n) => a + n.ports.filter((p, k) => p && (k === 0 || p.peer)).length, 0);
    expect(withQos.length).toBe(linked);
    for (const w of withQos) expect(PortInfo.decode(w.data).vlHighLimit).toBe(7);
    // the fabric holds it now: no Set wanted for it again; without QoS nothing asks for it
    for (const w of withQos) if (w.effect.kind === 'portInfo') disc.nodes[w.effect.node]!.portInfo[w.effect.port]!.vlHighLimit = 7;
    expect(planPortInfo(disc, { ...settings, qosVl: qosVlSettings({ highLimit: 7 }) })).toEqual(planPortInfo(disc, settings));
  });

  it('on the in-process fabric the SMAs hold the VLHighLimit the SM programs with QoS on', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2'), { clock, seed: 1 });
    const ep = sim.attach(sim.nodes.findIndex((n) => n.type !== NodeType.Switch));
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink()), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0, qosVl: qosVlSettings({ highLimit: 9 }) });
    await drive(clock, subnet.start());
    const snap = subnet.sm.current!;
    let ports = 0;
    for (const n of snap.fabric.nodes) for (const p of n.ports) if (p && p.num > 0 && p.peer) {
      expect(sim.portInfo(n.guid, p.num).vlHighLimit, `${n.desc} port ${p.num}`).toBe(9);
      ports++;
    }
    expect(ports).toBeGreaterThan(0);
    subnet.stop();
  });
});

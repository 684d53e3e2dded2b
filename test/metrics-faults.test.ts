/** The fault metrics: SMPs given up by reason, and the nodes the last heavy sweep left out. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { renderMetrics } from '../src/cli/metrics.js';
import { drive } from './helpers/drive.js';

describe('fault metrics', () => {
  it('ibsm_smp_failures_total{reason} and ibsm_sweep_skipped_nodes follow a host that never answers, and its return', async () => {
    const clock = new VirtualClock();
    const f = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const sim = new SimFabric(f, { clock });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50 });
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink()), routing: ['minhop'], lmc: 0, sweepIntervalMs: 1000 });
    const host = f.nodes.findIndex((n, i) => i > 0 && n.type !== NodeType.Switch);
    sim.setLinkFaults(host, 1, { dropRate: 1 });
    await drive(clock, subnet.start());
    const m = renderMetrics(subnet, rpc);
    expect(m).toMatch(/^ibsm_sweep_skipped_nodes 1$/m);
    expect(Number(/^ibsm_smp_failures_total\{reason="timeout"\} (\d+)$/m.exec(m)![1])).toBeGreaterThan(0);
    expect(m).toMatch(/^ibsm_smp_failures_total\{reason="status"\} 0$/m);
    sim.setLinkFaults(host, 1, undefined);
    const n0 = subnet.sm.stats.length;
    await clock.runUntil(() => subnet.sm.stats.length > n0, 5000);
    expect(renderMetrics(subnet, rpc)).toMatch(/^ibsm_sweep_skipped_nodes 0$/m);
    subnet.stop();
  });
});

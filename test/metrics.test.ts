import { describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { renderMetrics, serveMetrics } from '../src/cli/metrics.js';
import { drive } from './helpers/drive.js';
import { SaClient } from '../src/sa/client.js';
import { PathRecord, SaAttr, SA_CLASS_VERSION } from '../src/wire/sa.js';

describe('metrics', () => {
  it('reports the sweep, the tables written and SA traffic in Prometheus text over HTTP', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2'), { clock });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock);
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink()), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0 });
    const before = renderMetrics(subnet, rpc);
    expect(before).toMatch(/^ibsm_subnet_up 0$/m);
    expect(before).toMatch(/^ibsm_sm_state 0$/m);
    const st = await drive(clock, subnet.start());
    const server = await serveMetrics(0, () => renderMetrics(subnet, rpc));
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^ibsm_subnet_up 1$/m);
      expect(text).toMatch(/^ibsm_sm_state 3$/m);
      expect(text).toMatch(/^ibsm_sm_state_transitions_total\{state="master"\} 1$/m);
      expect(text).toMatch(/^ibsm_sm_state_transitions_total\{state="standby"\} 0$/m);
      expect(text).toMatch(new RegExp(`^ibsm_last_heavy_sweep_smps ${st.smps}$`, 'm'));
      expect(text).toMatch(new RegExp(`^ibsm_table_blocks_written_total\\{table="lft"\\} ${st.lftBlocksWritten}$`, 'm'));
      expect(text).toMatch(/^ibsm_fabric_switches 5$/m);
      expect(text).toMatch(/^# TYPE ibsm_mads_sent_total counter$/m);
      expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);

      // SA traffic: the same PathRecord asked twice is computed once, answered from the cache once.
      const host = sim.attach(subnet.sm.current!.fabric.nodes.find((n) => n.type !== 2)!.guid);
      host.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
      const hostRpc = new MadRpc(host, clock);
      const sa = new SaClient(hostRpc, { saLid: subnet.sm.current!.smLid });
      const lids = subnet.sm.current!.fabric.nodes.flatMap((n) => n.ports.map((p) => p?.lid ?? 0)).filter(Boolean);
      for (let i = 0; i < 2; i++) await drive(clock, sa.request(Method.Get, SaAttr.PathRecord, PathRecord, { slid: lids[0], dlid: lids[1] }, PathRecord.mask('slid', 'dlid')));
      const sat = renderMetrics(subnet, rpc);
      expect(sat).toMatch(/^ibsm_sa_requests_total\{attribute="PathRecord"\} 2$/m);
      expect(sat).toMatch(/^ibsm_sa_path_cache_total\{result="hit"\} 1$/m);
      expect(sat).toMatch(/^ibsm_sa_path_cache_total\{result="miss"\} 1$/m);
      hostRpc.close();
    } finally {
      server.close();
      subnet.stop();
    }
  });

  it('ibsm_subnet_up follows the current state: 0 when the SM loses the fabric, 1 again when it is back', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2'), { clock });
    const at = sim.nodes.findIndex((n) => n.type !== 2);
    const ep = sim.attach(at);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50 });
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink()), routing: ['minhop'], lmc: 0, sweepIntervalMs: 200 });
    await drive(clock, subnet.start());
    expect(renderMetrics(subnet, rpc)).toMatch(/^ibsm_subnet_up 1$/m);
    sim.linkDown(at, 1);
    await clock.runUntil(() => subnet.sm.state === 'discovering', 10_000);
    expect(renderMetrics(subnet, rpc)).toMatch(/^ibsm_subnet_up 0$/m);
    sim.linkUp(at, 1);
    await clock.runUntil(() => subnet.sm.state === 'master', 10_000);
    expect(renderMetrics(subnet, rpc)).toMatch(/^ibsm_subnet_up 1$/m);
    subnet.stop();
  });
});

import { describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/sim/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { renderMetrics, serveMetrics } from '../src/cli/metrics.js';
import { drive } from './helpers/drive.js';

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
    const st = await drive(clock, subnet.start());
    const server = await serveMetrics(0, () => renderMetrics(subnet, rpc));
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toMatch(/^ibsm_subnet_up 1$/m);
      expect(text).toMatch(new RegExp(`^ibsm_last_heavy_sweep_smps ${st.smps}$`, 'm'));
      expect(text).toMatch(new RegExp(`^ibsm_table_blocks_written_total\\{table="lft"\\} ${st.lftBlocksWritten}$`, 'm'));
      expect(text).toMatch(/^ibsm_fabric_switches 5$/m);
      expect(text).toMatch(/^# TYPE ibsm_mads_sent_total counter$/m);
      expect((await fetch(`http://127.0.0.1:${port}/nope`)).status).toBe(404);
    } finally {
      server.close();
      subnet.stop();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { openSubnets } from '../src/api/subnets.js';
import { sendProbe } from '../src/sim/probe.js';
import { Logger } from '../src/util/log.js';
import { MemorySink } from '../src/util/log.js';

describe('routers: smoke', () => {
  it('a 2-subnet line: SMs up, a probe crosses the router', async () => {
    const sink = new MemorySink();
    const net = await openSubnets({ sim: 'gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2', sweepInterval: 0, log: new Logger(sink, 'info') });
    try {
      await net.start();
      const up = sink.lines.filter((l) => / SUBNET UP /.test(l));
      expect(up.map((l) => /prefix=(\S+)/.exec(l)?.[1]).sort()).toEqual(['fec0:0000:0000:0000', 'fec0:0000:0000:0001']);
      expect(sink.lines.filter((l) => / (warn|error) /.test(l))).toEqual([]);
      // each SM read the router port in its subnet: it reaches the other subnet in one hop
      for (const [i, s] of net.subnets.entries()) {
        expect(s.routers.map((r) => r.desc)).toEqual(['router-0-1-0']);
        expect(s.routers[0]!.reach).toEqual([{ prefix: net.subnets[1 - i]!.part.prefix, hops: 1 }]);
      }
      const a = net.sim.node('s0-host-1 HCA-1');
      const b = net.sim.node('s1-host-2 HCA-1');
      const r = net.subnets[0]!.routers[0]!;
      const res = await sendProbe(net.sim, a.idx, 1, { dlid: r.lid, dgid: (net.subnets[1]!.part.prefix << 64n) | b.ports[1]!.guid });
      expect(res.arrived).toBe(true);
      if (!res.arrived) return;
      // LRH rewritten by the router: SLID = its port in subnet 1, DLID = the host's LID there
      expect(res.desc).toBe('s1-host-2 HCA-1');
      expect(res.slid).toBe(net.subnets[1]!.routers[0]!.lid);
      expect(res.dlid).toBe(net.sim.portInfo(b.idx, 1).lid);
      expect(res.hopLimit).toBe(254);
      expect(res.hops.map((h) => h.desc)).toContain('router-0-1-0');
    } finally {
      await net.stop();
    }
  });
});

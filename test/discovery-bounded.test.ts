/** Discovery keeps a bounded number of SMPs started (#16): a BFS level is read 16 switches and 64
 * CAs at a time and probed 512 far-side ports at a time, not every SMP of the level at once (at 11,664 hosts that
 * was ~24k live requests, promises and closures, copied by every scavenge). */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, NodeType } from '../src/wire/mad.js';
import { discover } from '../src/sm/discovery.js';
import { smpClientOf, type SmpClient } from '../src/sm/smp-client.js';
import { diffFabrics } from '../src/model/json.js';
import { drive } from './helpers/drive.js';
import { graphOf } from './helpers/graph.js';

describe('discovery: SMPs started at once are bounded', () => {
  it('never has more than 16 switches and 64 CAs read or 512 probes started, on a tree whose levels need more; the graph is exact', async () => {
    // 320 switches: 64 cores reached at one BFS level with 16 down-links each (1,024 probes)
    const spec = 'gen:fattree3:pods=16,leaves=8,spines=8,cores=64,hosts=8';
    const want = loadFabricSpec(spec);
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec(spec), { clock });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnDirected, 1);
    // a window wide enough that the RPC layer is not what bounds it
    const rpc = new MadRpc(ep, clock, { window: 4096, perDestinationWindow: 4096, timeoutMs: 1000 });
    const inner = smpClientOf(rpc);
    let started = 0;
    let maxStarted = 0;
    const counted: SmpClient = {
      ...inner,
      getDr: (path, attr, mod) => {
        started++;
        maxStarted = Math.max(maxStarted, started);
        const p = inner.getDr(path, attr, mod);
        void p.then(
          () => started--,
          () => started--,
        );
        return p;
      },
      // the switches' external ports go through the callback slot: counted alike
      getDrTo: (req, sink) => {
        started++;
        maxStarted = Math.max(maxStarted, started);
        inner.getDrTo!(req, {
          smpOk: (r, d) => {
            started--;
            sink.smpOk(r, d);
          },
          smpFailed: (r, e) => {
            started--;
            sink.smpFailed(r, e);
          },
        });
      },
      get sent() {
        return inner.sent;
      },
    };
    const res = await drive(clock, discover(counted), 600_000);
    expect(diffFabrics(graphOf(res.fabric), graphOf(want))).toEqual([]);
    const maxPorts = Math.max(...want.nodes.map((n) => n.numPorts));
    // per switch read: NodeDescription, SwitchInfo, PortInfo 0..N; per CA: NodeDescription, PortInfo
    const bound = Math.max(16 * (maxPorts + 3) + 64 * 2, 512);
    expect(maxStarted).toBeLessThanOrEqual(bound);
    // the cores' level alone has more probes than that (the old discovery started them all at once)
    const cores = want.nodes.filter((n) => n.type === NodeType.Switch && n.desc.startsWith('sw-l3-')); // the generator's top level
    expect(cores.length).toBe(64);
    const coreLinks = cores.reduce((a, n) => a + n.ports.filter((p, i) => i > 0 && p?.peer).length, 0);
    expect(coreLinks).toBeGreaterThan(bound);
    expect(maxStarted).toBeGreaterThan(256); // and it does run many at once
  }, 120_000);
});

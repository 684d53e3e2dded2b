import { describe, expect, it } from 'vitest';
import { SimFabric } from '../src/sim/fabric.js';
import { generateFabric } from '../src/model/generators.js';
import { MadRpc, MadTimeoutError } from '../src/rpc/index.js';
import { RealClock, VirtualClock } from '../src/util/clock.js';
import { MgmtClass, NodeType, SmpAttr } from '../src/wire/mad.js';
import { NodeInfo, NodeDescription } from '../src/wire/sma.js';

/** Runs the virtual clock until the promise settles. */
function drive<T>(clock: VirtualClock, p: Promise<T>): Promise<T> {
  return clock.runUntil(p, 10_000);
}

describe('MadRpc over a simulated endpoint', () => {
  it('does DR Gets through a generated fat tree and times out on a bad path', async () => {
    const clock = new VirtualClock();
    const fabric = generateFabric('gen:fattree2:leaves=4,spines=2,hosts=3');
    const fab = new SimFabric(fabric, { clock });
    const host = fabric.nodes.findIndex((n) => n.type === NodeType.CA);
    const ep = fab.attach(host);
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 1 });
    const local = NodeInfo.decode(await drive(clock, rpc.smpGetDr([], SmpAttr.NodeInfo)), 0);
    expect(local.nodeGuid).toBe(fabric.nodes[host]!.guid);
    const leaf = NodeInfo.decode(await drive(clock, rpc.smpGetDr([1], SmpAttr.NodeInfo)), 0);
    expect(leaf.nodeType).toBe(NodeType.Switch);
    const leafNode = fab.node(leaf.nodeGuid);
    const desc = NodeDescription.decode(await drive(clock, rpc.smpGetDr([1], SmpAttr.NodeDescription)), 0).description;
    expect(desc).toBe(leafNode.desc);
    // many in flight through the window
    const all = await drive(clock, Promise.all(Array.from({ length: 40 }, () => rpc.smpGetDr([1], SmpAttr.NodeInfo))));
    expect(all.every((d) => NodeInfo.decode(d, 0).nodeGuid === leaf.nodeGuid)).toBe(true);
    // a port that does not exist: nothing comes back
    await expect(drive(clock, rpc.smpGetDr([1, 200], SmpAttr.NodeInfo))).rejects.toBeInstanceOf(MadTimeoutError);
    rpc.close();
    fab.close();
  });

  it('runs on a real clock with zero hop latency', async () => {
    const clock = new RealClock();
    const fabric = generateFabric('gen:fattree2:leaves=4,spines=2,hosts=3');
    const fab = new SimFabric(fabric, { clock, hopLatencyMs: 0 });
    const ep = fab.attach(fabric.nodes.findIndex((n) => n.type === NodeType.CA));
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 1000, window: 16, perDestinationWindow: 16 });
    const t0 = performance.now();
    const n = 2000;
    const all = await Promise.all(Array.from({ length: n }, (_, i) => rpc.smpGetDr([1, 1 + ((i % 2) + 3)], SmpAttr.NodeInfo)));
    const ms = performance.now() - t0;
    expect(all.every((d) => NodeInfo.decode(d, 0).nodeType === NodeType.Switch)).toBe(true);
    // eslint-disable-next-line no-console
    console.log(`real clock, zero latency, window 16: ${n} DR round trips (2 hops) in ${ms.toFixed(0)} ms (${Math.round((n / ms) * 1000)}/s)`);
    rpc.close();
    fab.close();
  });
});

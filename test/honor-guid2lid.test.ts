/** honor_guid2lid_file (--honor-guid2lid): a standby that takes over prefers its guid2lid file's
 * LIDs (true, ibsm's default) or keeps the LIDs the old master gave (false, OpenSM's default). The
 * witness is the fabric: each port's LID after the takeover. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import type { LidRange } from '../src/sm/lids.js';

async function takeover(honorGuid2lid: boolean): Promise<{ before: number; after: number; fileLid: number }> {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=3'), { clock, seed: 5 });
  const cas = sim.nodes.map((n, i) => (n.type !== NodeType.Switch ? i : -1)).filter((i) => i >= 0);
  const sms = [
    { node: cas[0]!, priority: 10 },
    { node: cas[5]!, priority: 2 },
  ].map(({ node, priority }, k) => {
    const ep = sim.attach(node);
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 2, window: 64 });
    // the standby's guid2lid file: the last CA port at LID 0x80
    const file = k === 1 ? new Map<bigint, LidRange>([[sim.nodes[cas.at(-1)!]!.ports[1]!.guid, { base: 0x80, lmc: 0 }]]) : undefined;
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink(), 'info'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 1000, priority, pollIntervalMs: 200, pollRetries: 2, guid2lid: file, honorGuid2lid, saServer: { schedule: (fn) => queueMicrotask(fn) } });
    void subnet.start().catch(() => undefined);
    return { subnet, stop: async () => (subnet.stop(), rpc.close(), await ep.close()) };
  });
  await clock.advanceAsync(3000);
  expect(sms[1]!.subnet.sm.state).toBe('standby');
  const port = cas.at(-1)!;
  const before = sim.portInfo(port, 1).lid;
  await sms[0]!.stop();
  for (let t = 0; sms[1]!.subnet.sm.state !== 'master' && t < 10_000; t += 10) await clock.advanceAsync(10);
  await clock.advanceAsync(1000);
  const after = sim.portInfo(port, 1).lid;
  await sms[1]!.stop();
  return { before, after, fileLid: 0x80 };
}

describe('honor_guid2lid_file at a takeover', () => {
  it('true: the guid2lid file wins over the LIDs the old master gave', async () => {
    const r = await takeover(true);
    expect(r.before).not.toBe(r.fileLid);
    expect(r.after).toBe(r.fileLid);
  });
  it("false (OpenSM's default): the old master's LIDs are kept", async () => {
    const r = await takeover(false);
    expect(r.after).toBe(r.before);
  });
});

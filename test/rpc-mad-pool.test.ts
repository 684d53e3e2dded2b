/** MadRpc's callback-slot Sets (smpSetDrTo), and its promise DR Gets, over a transport that copies on send build their MADs
 * into pooled buffers (issue #16): once the pool is warm no MAD is allocated per SMP, yet every
 * Set reaches the SMA with its own modifier and data, retries included (a reused buffer is never
 * one still owned by a request in flight), and each settles once. Over a transport that does not
 * copy, every request keeps a buffer of its own. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc, type SmpSink } from '../src/rpc/madrpc.js';
import { MgmtClass, SmpAttr } from '../src/wire/mad.js';
import { lftBlockMod } from '../src/wire/modifiers.js';
import { LinearForwardingTable } from '../src/wire/sma.js';
import type { MadAddress } from '../src/transport/types.js';

function setup(copies: boolean, dropRate = 0) {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2'), { clock, seed: 2, linearFdbCap: 49152, faults: { dropRate } });
  const ca = sim.nodes.findIndex((n) => !n.isSwitch);
  const ep = sim.attach(ca, 1);
  ep.register(MgmtClass.SubnDirected, 1);
  const sent = new Set<Uint8Array>();
  const send = ep.send.bind(ep);
  // the endpoint as a transport that copies (as it does) or as one that says it does not
  const t = Object.assign(Object.create(ep) as typeof ep, {
    copiesOnSend: copies,
    send: (mad: Uint8Array, addr: MadAddress) => {
      sent.add(mad);
      send(mad, addr);
    },
    onReceive: ep.onReceive.bind(ep),
    register: ep.register.bind(ep),
  });
  const rpc = new MadRpc(t, clock, { timeoutMs: 5, retries: 8, window: 64, perDestinationWindow: 64 });
  const leaf = sim.nodes[ca]!.ports[1]!.peer!.node;
  return { clock, sim, rpc, sent, leaf };
}

/** Set LFT blocks 0..n-1 of the leaf, 16 at a time, the next one started as one settles (as the
 * apply step does); halfway, 32 more at once (they take the pool's older buffers too). */
async function setBlocks(s: ReturnType<typeof setup>, n: number): Promise<Map<number, number>> {
  const settled = new Map<number, number>();
  let next = 0;
  let left = n;
  const start = (): void => {
    const b = next++;
    const data = LinearForwardingTable.encode({ ports: Array.from({ length: 64 }, (_, i) => ((b + i) % 3) + 1) });
    s.rpc.smpSetDrTo([1], SmpAttr.LinearForwardingTable, lftBlockMod(b), data, undefined, sink, b);
  };
  const sink: SmpSink<number> = {
    smpOk: (b) => {
      settled.set(b, (settled.get(b) ?? 0) + 1);
      left--;
      if (next === n >> 1) for (let k = 0; k < 32 && next < n; k++) start();
      if (next < n) start();
    },
    smpFailed: (b, e) => {
      throw new Error(`block ${b}: ${e.message}`);
    },
  };
  while (next < Math.min(16, n)) start();
  await s.clock.runUntil(() => left === 0, 60_000);
  return settled;
}

describe('MadRpc MAD pool', () => {
  it('reuses its MADs over a copying transport, and every Set lands with its own bytes, lost ones retried', async () => {
    for (const dropRate of [0, 0.2]) {
      const s = setup(true, dropRate);
      const n = 600;
      const settled = await setBlocks(s, n);
      expect([...settled.values()].every((k) => k === 1)).toBe(true);
      expect(settled.size).toBe(n);
      expect(s.sent.size).toBeLessThanOrEqual(2 * 48); // about a window's worth of buffers, not one per SMP
      const lft = s.sim.lft(s.leaf.idx);
      for (let b = 0; b < n; b++) for (let i = 0; i < 64; i++) expect(lft[b * 64 + i]).toBe(((b + i) % 3) + 1);
      if (dropRate) expect(s.rpc.stats.retries).toBeGreaterThan(0);
      console.log("DBG", dropRate, s.rpc.stats.retries, (globalThis as any).__early, s.sent.size, s.rpc.stats.unmatched);
    }
  });

  it('reuses its MADs for promise Gets too (a discovery\'s), each answered with its own block, lost ones retried', async () => {
    for (const [copies, dropRate] of [[true, 0], [true, 0.1], [false, 0.1], [false, 0]] as const) {
      const s = setup(copies, dropRate);
      const blocks = 40;
      await setBlocks(s, blocks);
      s.sent.clear();
      const n = 400;
      const got: number[][] = [];
      let next = 0;
      let done = 0;
      const one = async (): Promise<void> => {
        while (next < n) {
          const k = next++;
          const b = await s.rpc.smpGetDr([1], SmpAttr.LinearForwardingTable, lftBlockMod(k % blocks));
          got[k] = LinearForwardingTable.decode(b).ports;
          done++;
        }
      };
      const all = Promise.all(Array.from({ length: 8 }, one));
      await s.clock.runUntil(() => done === n, 60_000);
      await all;
      // every answer is its own request's block (as setBlocks wrote it)
      for (let k = 0; k < n; k++) expect(got[k]).toEqual(Array.from({ length: 64 }, (_, i) => (((k % blocks) + i) % 3) + 1));
      if (copies) expect(s.sent.size).toBeLessThanOrEqual(16);
      else expect(s.sent.size).toBe(n);
      if (dropRate) expect(s.rpc.stats.retries).toBeGreaterThan(0);
    }
  });

  it('gives every request a buffer of its own over a transport that does not copy', async () => {
    const s = setup(false);
    await setBlocks(s, 200);
    expect(s.sent.size).toBe(200);
  });
});

/** The LFT phase's plan with several switches at once (lftPlan's `interleave`, issue #16): it hands
 * out exactly the writes planLfts lists (the same blocks with the same bytes, whatever the shadow
 * already holds), each switch's blocks in ascending order, never more than `interleave` switches
 * begun and not finished; one switch at a time is planLfts's order itself. Applied through the
 * in-process fabric with the sweep's window, every switch then holds its routing table. And the
 * simulated SMA's answer to an LFT Set is what a Get reads back, for a whole block, a block that
 * crosses LinearFDBCap and a block past the end of what the switch stores. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, SmpAttr } from '../src/wire/mad.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';
import { Programmed, type SmpWrite } from '../src/sm/programmed.js';
import { LFT_APPLY_WINDOW, apply } from '../src/sm/apply.js';
import { LFT_INTERLEAVE, lftPlan, planLfts } from '../src/sm/plan-tables.js';
import { lftBlockMod } from '../src/wire/modifiers.js';
import { LinearForwardingTable } from '../src/wire/sma.js';
import { Rng } from '../src/util/rng.js';

async function up() {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=6,spines=3,hosts=40'), { clock, seed: 3 });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 256, perDestinationWindow: 16 });
  const smp = smpClientOf(rpc);
  const sm = new SubnetManager({ smp, clock, log: new Logger(new MemorySink(), 'warn'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0 });
  await drive(clock, sm.start());
  return { snap: sm.current!, smp, clock, sim };
}

const key = (w: SmpWrite): string => (w.effect.kind === 'lft' ? `${w.effect.guid}/${w.effect.block}` : `${w.attr}/${w.mod}`);
const bytes = (w: SmpWrite): string => Array.from(w.data).join(',');

describe('lftPlan with several switches at once', () => {
  it('hands out the writes of planLfts, in order per switch, at most `interleave` switches open, for any shadow', async () => {
    const { snap } = await up();
    const blocks = Math.floor(snap.maxLid / 64) + 1;
    expect(blocks).toBeGreaterThanOrEqual(4);
    const rng = new Rng(11);
    for (const known of [0, 0.5, 1]) {
      // a shadow holding some blocks as routed, some differing, some unknown
      const p = new Programmed();
      snap.fabric.nodes.forEach((n, ni) => {
        const t = snap.routing.lfts.get(ni);
        if (n.type !== NodeType.Switch || !t) return;
        const st = p.lftShadow(n.guid, blocks);
        for (let b = 0; b < blocks; b++) {
          if (rng.next() >= known) continue;
          for (let i = 0; i < 64; i++) st.table[b * 64 + i] = b * 64 + i < t.length ? t[b * 64 + i]! : 0xff;
          if (rng.next() < 0.3) st.table[b * 64 + 5] ^= 1; // known, but not what is routed
          st.known[b] = 1;
        }
      });
      const listed = planLfts(snap.discovery, snap.routing, snap.maxLid, p);
      for (const k of [1, 3, LFT_INTERLEAVE, 1000]) {
        const plan = lftPlan(snap.discovery, snap.routing, snap.maxLid, p, undefined, k);
        const got: SmpWrite[] = [];
        for (let w = plan.next(); w; w = plan.next()) got.push(w);
        expect(got.slice(0, plan.switchInfo.length)).toEqual(listed.switchInfo);
        const lft = got.slice(plan.switchInfo.length);
        expect(plan.planned).toBe(listed.lft.length);
        if (k === 1) expect(lft.map(key)).toEqual(listed.lft.map(key));
        expect(new Map(lft.map((w) => [key(w), bytes(w)]))).toEqual(new Map(listed.lft.map((w) => [key(w), bytes(w)])));
        // per switch ascending; open switches (begun, not finished) never above k
        const last = new Map<bigint, number>();
        const remaining = new Map<bigint, number>();
        for (const w of lft) if (w.effect.kind === 'lft') remaining.set(w.effect.guid, (remaining.get(w.effect.guid) ?? 0) + 1);
        let open = 0;
        let maxOpen = 0;
        for (const w of lft) {
          if (w.effect.kind !== 'lft') continue;
          const g = w.effect.guid;
          if (!last.has(g)) open++;
          expect(w.effect.block).toBeGreaterThan(last.get(g) ?? -1);
          last.set(g, w.effect.block);
          maxOpen = Math.max(maxOpen, open);
          const r = remaining.get(g)! - 1;
          remaining.set(g, r);
          if (r === 0) open--;
        }
        expect(maxOpen).toBeLessThanOrEqual(k);
        if (k > 1 && known < 1) expect(maxOpen).toBeGreaterThan(1);
      }
    }
  });

  it('applied with the sweep window, leaves every switch holding its routing table', async () => {
    const { snap, smp, clock, sim } = await up();
    // the fabric forgets: every switch's LFT back to unprogrammed, then programmed from a fresh shadow
    const blocks = Math.floor(snap.maxLid / 64) + 1;
    for (const n of sim.nodes) if (n.sw) for (let b = 0; b < blocks; b++) n.sw.fwd.setLftBlock(b, []);
    const p = new Programmed();
    const plan = lftPlan(snap.discovery, snap.routing, snap.maxLid, p, undefined, LFT_INTERLEAVE);
    plan.skipSwitchInfo();
    const res = await drive(clock, apply(smp, plan, { ok: (w) => p.record(w), failed: (w) => p.failed(w) }, LFT_APPLY_WINDOW));
    expect(res.failed).toEqual([]);
    expect(res.ok).toBe(plan.planned);
    snap.fabric.nodes.forEach((n, ni) => {
      const t = snap.routing.lfts.get(ni);
      if (n.type !== NodeType.Switch || !t) return;
      const held = sim.lft(n.guid); // (the sweep numbers nodes by GUID, not as the simulator does)
      for (let lid = 0; lid < blocks * 64; lid++) expect(held[lid], `switch ${n.desc} LID ${lid}`).toBe(lid < t.length ? t[lid] : 0xff);
      // and the shadow holds what was acknowledged (255 past its table's end), as a view of the
      // routing's own table: no copy of it
      const st = p.lfts.get(n.guid)!;
      expect(st.table).toBe(t);
      expect(st.borrowed).toBe(true);
      expect(Array.from(st.known)).toEqual(Array.from({ length: blocks }, () => 1));
      expect(Array.from({ length: blocks * 64 }, (_, i) => (i < st.table.length ? st.table[i] : 0xff))).toEqual(Array.from(held.subarray(0, blocks * 64)));
    });
  });
});

describe("the simulated SMA's answer to an LFT Set", () => {
  it('is what a Get then reads: a whole block, a block crossing LinearFDBCap, an unrouted block past what is stored', async () => {
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2'), { clock, seed: 1, linearFdbCap: 1000 });
    const ca = sim.nodes.findIndex((n) => !n.isSwitch);
    const ep = sim.attach(ca, 1);
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50 });
    const path = [1]; // the CA's port 1: its leaf switch
    const ports = (seed: number) => Array.from({ length: 64 }, (_, i) => (i * 7 + seed) % 37);
    // block 15 holds LIDs 960..1023: 40 past LinearFDBCap; block 12 all unrouted, past the 4 blocks first stored
    const cases: Array<[number, number[]]> = [[0, ports(1)], [15, ports(2)], [0, ports(3)], [12, new Array<number>(64).fill(0xff)]];
    for (const [block, want] of cases) {
      const data = LinearForwardingTable.encode({ ports: want });
      const ans = await drive(clock, rpc.smpSetDr(path, SmpAttr.LinearForwardingTable, lftBlockMod(block), data));
      const read = await drive(clock, rpc.smpGetDr(path, SmpAttr.LinearForwardingTable, lftBlockMod(block)));
      expect(Array.from(ans), `block ${block}`).toEqual(Array.from(read));
      expect(LinearForwardingTable.decode(read, 0).ports).toEqual(want.map((p, i) => (block * 64 + i < 1000 ? p : 0xff)));
    }
    expect(sim.nodes[sim.nodes[ca]!.ports[1]!.peer!.node.idx]!.sw!.fwd.lftBlocksHeld).toBeLessThanOrEqual(16);
  });
});

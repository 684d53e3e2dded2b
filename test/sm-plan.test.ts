/** The SM's pure planners and its one apply step (src/sm/plan-*.ts, programmed.ts, apply.ts):
 * a planner only asks for what differs from what is programmed, never changes its inputs, and
 * what is programmed only ever holds writes the fabric acknowledged. The sweep's view comes from a
 * real SM run on the in-process fabric. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, SmpAttr } from '../src/wire/mad.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf, type SmpClient } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';
import { Programmed, RESET_PKEY_SIG, type SmpWrite } from '../src/sm/programmed.js';
import { apply, type ApplyHooks } from '../src/sm/apply.js';
import { planActivation, planPortInfo } from '../src/sm/plan-ports.js';
import { observeResets, planLfts, planPkeys } from '../src/sm/plan-tables.js';
import { PartitionPlan } from '../src/model/partitions.js';
import { LinearForwardingTable } from '../src/wire/sma.js';
import type { Snapshot } from '../src/model/snapshot.js';

async function upSnapshot(): Promise<{ snap: Snapshot; smp: SmpClient; clock: VirtualClock }> {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=30'), { clock, seed: 7 });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
  const smp = smpClientOf(rpc);
  const sm = new SubnetManager({ smp, clock, log: new Logger(new MemorySink(), 'debug'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0 });
  await drive(clock, sm.start());
  return { snap: sm.current!, smp, clock };
}

const acked = (p: Programmed) => ({ ok: (w: SmpWrite) => p.record(w), failed: (w: SmpWrite) => p.failed(w) });

describe('SM planners', () => {
  it('ask for nothing on a fabric that is already configured, and change none of their inputs', async () => {
    const { snap } = await upSnapshot();
    const before = structuredClone(snap.discovery.nodes);
    expect(planPortInfo(snap.discovery, { lmc: 0, smLid: snap.smLid })).toEqual([]);
    expect(planActivation(snap.discovery)).toEqual([]);
    expect(snap.discovery.nodes).toEqual(before);
    // A different SM LID: every end port (CA ports and switch port 0) needs one PortInfo Set.
    const moved = planPortInfo(snap.discovery, { lmc: 0, smLid: snap.smLid + 1 });
    const ends = snap.fabric.nodes.reduce((k, n) => k + (n.type === NodeType.Switch ? 1 : n.ports.filter((p) => p?.peer).length), 0);
    expect(moved.length).toBe(ends);
    expect(moved.every((w) => w.attr === SmpAttr.PortInfo && w.effect.kind === 'portInfo')).toBe(true);
  });

  it('write each LFT block once, then only the block whose entry changed', async () => {
    const { snap } = await upSnapshot();
    const p = new Programmed();
    const switches = snap.fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    const blocks = Math.floor(snap.maxLid / 64) + 1;
    expect(blocks).toBe(2);
    const first = planLfts(snap.discovery, snap.routing, snap.maxLid, p);
    expect(first.lft.length).toBe(switches * blocks);
    expect(first.switchInfo, 'LinearFDBTop is already right').toEqual([]);
    // Each block is the routing table's entries (255 past its end), as the attribute decodes it.
    for (const w of first.lft) {
      if (w.effect.kind !== 'lft') continue;
      const { guid, block } = w.effect;
      const table = snap.routing.lfts.get(snap.fabric.nodes.findIndex((n) => n.guid === guid))!;
      const want = Array.from({ length: 64 }, (_, i) => table[block * 64 + i] ?? 255);
      expect(LinearForwardingTable.decode(w.data).ports).toEqual(want);
    }
    expect(planLfts(snap.discovery, snap.routing, snap.maxLid, p).lft.length, 'planning alone records nothing').toBe(switches * blocks);
    for (const w of first.lft) p.record(w);
    expect(planLfts(snap.discovery, snap.routing, snap.maxLid, p).lft).toEqual([]);
    // One entry of one switch changes: one block of that switch.
    const [sw, table] = [...snap.routing.lfts][1]!;
    const lfts = new Map(snap.routing.lfts);
    const t2 = Uint8Array.from(table);
    t2[70] = t2[70] === 1 ? 2 : 1;
    lfts.set(sw, t2);
    const again = planLfts(snap.discovery, { ...snap.routing, lfts }, snap.maxLid, p).lft;
    expect(again.map((w) => w.effect)).toEqual([{ kind: 'lft', guid: snap.fabric.nodes[sw]!.guid, block: 1 }]);
    expect(again[0]!.data[70 - 64]).toBe(t2[70]);
  });

  it('P_Key tables: a reset port holds the default table, so the default partition writes nothing there', async () => {
    const { snap } = await upSnapshot();
    const p = new Programmed();
    const plan = PartitionPlan.defaultPlan();
    const all = planPkeys(snap.discovery, plan, p, () => undefined);
    // One single-block table per CA port, per enforcing switch port facing one, and the SM's own port.
    const keys = all.map((w) => (w.effect.kind === 'pkeys' ? w.effect.key : ''));
    expect(new Set(keys).size, 'nothing recorded yet: every table, each once').toBe(all.length);
    for (const n of snap.fabric.nodes) if (n.type !== NodeType.Switch) expect(keys).toContain(`${n.guid}/1`);
    snap.fabric.nodes.forEach((n) => (n.type === NodeType.Switch ? p.switchReset(n.guid, n.numPorts) : p.portReset(`${n.guid}/1`)));
    expect(p.pkeys.get(`${snap.fabric.nodes.find((n) => n.type !== NodeType.Switch)!.guid}/1`)).toBe(RESET_PKEY_SIG);
    expect(planPkeys(snap.discovery, plan, p, () => undefined)).toEqual([]);
    // observeResets on a configured fabric (every end port has a LID, no switch is reset) forgets nothing.
    const q = new Programmed();
    for (const w of all) q.record(w);
    observeResets(snap.discovery, q);
    expect(planPkeys(snap.discovery, plan, q, () => undefined)).toEqual([]);
  });
});

/** The apply step for a caller that needs every write: rejects with the first failure once all
 * settled (the step itself goes on past failures). */
async function applyWrites(smp: SmpClient, writes: readonly SmpWrite[], hooks: ApplyHooks, window?: number): Promise<number> {
  const r = await apply(smp, writes, hooks, window);
  if (r.failed[0]) throw r.failed[0].error;
  return r.ok;
}

describe('apply', () => {
  it('records only the writes the fabric acknowledged, and rejects with the first error', async () => {
    const { snap, smp, clock } = await upSnapshot();
    const p = new Programmed();
    const writes = planLfts(snap.discovery, snap.routing, snap.maxLid, p).lft;
    const failing: SmpClient = {
      ...smp,
      get sent() {
        return smp.sent;
      },
      setDr: (path, attr, mod, data) => (mod === 1 ? Promise.reject(new Error('lost')) : smp.setDr(path, attr, mod, data)),
      setDrTo: undefined, // every write through setDr above
    };
    await expect(drive(clock, applyWrites(failing, writes, acked(p), 1))).rejects.toThrow('lost');
    const left = planLfts(snap.discovery, snap.routing, snap.maxLid, p).lft;
    expect(left.length).toBeGreaterThan(0);
    expect(left.some((w) => w.effect.kind === 'lft' && w.effect.block === 1), 'the failed block is still to write').toBe(true);
    // One failure policy: the writes after a failed one still went out; only the failed blocks are left.
    expect(left.every((w) => w.effect.kind === 'lft' && w.effect.block === 1), 'only the failed blocks are left').toBe(true);
    // Everything else goes through: afterwards nothing is left.
    await drive(clock, applyWrites(smp, left, acked(p)));
    expect(planLfts(snap.discovery, snap.routing, snap.maxLid, p).lft).toEqual([]);
  });

  it('a multi-block P_Key table counts as programmed only when every block landed', () => {
    const p = new Programmed();
    const w = (block: number): SmpWrite => ({ path: [], attr: SmpAttr.PKeyTable, mod: block, data: new Uint8Array(64), effect: { kind: 'pkeys', key: 'g/1', block, blocks: 3, sig: 'a,b,c' } });
    p.record(w(0));
    p.record(w(1));
    expect(p.pkeys.get('g/1')).toBeUndefined();
    p.failed(w(2));
    p.record(w(2));
    expect(p.pkeys.get('g/1'), 'a failure restarts the count').toBeUndefined();
    for (const b of [0, 1, 2]) p.record(w(b));
    expect(p.pkeys.get('g/1')).toBe('a,b,c');
  });
});

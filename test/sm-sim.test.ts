/** Whole-SM runs on the in-process fabric, on a virtual clock: the fabric's own state (port
 * states, LIDs, the LFTs held by the simulated switches) is the witness, not the SM's logs. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import { LinearForwardingTable, SwitchInfo } from '../src/wire/sma.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { installSmHandlers } from '../src/sm/handlers.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { verifyRoutes } from '../src/routing/verify.js';
import type { LidRange } from '../src/sm/lids.js';
import type { Fabric } from '../src/model/fabric.js';
import { drive } from './helpers/drive.js';
import { parsePartitions, type PartitionPlan } from '../src/model/partitions.js';
import { hasCode } from './helpers/log-lines.js';

const EX = '/usr/share/doc/ibsim-utils/net-examples';

interface Rig {
  clock: VirtualClock;
  sim: SimFabric;
  rpc: MadRpc;
  sm: SubnetManager;
  sink: MemorySink;
}

function rig(fabric: Fabric, opts: { routing?: string[]; partitions?: PartitionPlan; lmc?: number; guid2lid?: Map<bigint, LidRange>; save?: (m: ReadonlyMap<bigint, LidRange>) => void; sweepIntervalMs?: number; sim?: SimFabric; clock?: VirtualClock; attach?: number; mkey?: bigint; protect?: number } = {}): Rig {
  const clock = opts.clock ?? new VirtualClock();
  const sim = opts.sim ?? new SimFabric(fabric, { clock, seed: 7 });
  const ep = sim.attach(opts.attach ?? 0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8, mkey: opts.mkey });
  const sink = new MemorySink();
  const sm = new SubnetManager({
    smp: smpClientOf(rpc),
    clock,
    log: new Logger(sink, 'debug'),
    routing: opts.routing ?? ['ftree', 'updn', 'minhop'],
    lmc: opts.lmc ?? 0,
    guid2lid: opts.guid2lid,
    saveGuid2Lid: opts.save,
    sweepIntervalMs: opts.sweepIntervalMs ?? 0,
    partitions: opts.partitions,
    mkey: opts.mkey,
    mkeyProtectBits: opts.protect,
    mkeyLeasePeriod: opts.mkey !== undefined ? 60 : undefined,
  });
  installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log: new Logger(sink, 'debug') });
  return { clock, sim, rpc, sm, sink };
}

/** Check the fabric itself: every cabled port ACTIVE, LIDs as the SM says, LFTs complete and loop-free. */
function checkFabric(r: Rig, lmc = 0): void {
  const snap = r.sm.current!;
  const lfts = new Map<number, Uint8Array>();
  snap.fabric.nodes.forEach((n, i) => {
    n.ports.forEach((p, pn) => {
      if (!p) return;
      const pi = r.sim.portInfo(n.guid, pn);
      if (n.type === NodeType.Switch && pn === 0) {
        expect(pi.lid, `switch ${n.desc} LID`).toBe(p.lid);
        return;
      }
      if (!p.peer) return;
      expect(pi.portState, `${n.desc} port ${pn} state`).toBe(PortState.Active);
      if (n.type !== NodeType.Switch) {
        expect(pi.lid).toBe(p.lid);
        expect(pi.lmc).toBe(lmc);
        expect(pi.masterSmLid).toBe(snap.smLid);
      }
    });
    if (n.type === NodeType.Switch) {
      lfts.set(i, r.sim.lft(n.guid));
      expect(r.sim.switchInfo(n.guid).linearFdbTop).toBe(snap.maxLid);
    }
  });
  const rep = verifyRoutes(snap.fabric, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.ok).toBe(true);
  expect(rep.loopEntries).toBe(0);
  expect(rep.unreachablePairs).toBe(0);
}

describe('SM on the in-process fabric', () => {
  for (const spec of [`${EX}/net`, `${EX}/net.2sw2path4hca2port`, 'gen:fattree2:leaves=4,spines=2,hosts=3', 'gen:torus:3x3,hosts=1', 'gen:fattree3:radix=4']) {
    it(`brings ${spec.replace(EX + '/', '')} to ACTIVE with complete, loop-free LFTs`, async () => {
      const r = rig(loadFabricSpec(spec));
      const st = await drive(r.clock, r.sm.start());
      expect(hasCode(r.sink.lines, 'IBSM-1001')).toBe(true);
      expect(st.activated).toBeGreaterThan(0);
      checkFabric(r);
    });
  }

  it('programs LMC ranges that every LID of the range reaches', async () => {
    const r = rig(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=2'), { lmc: 2, routing: ['minhop'] });
    await drive(r.clock, r.sm.start());
    checkFabric(r, 2);
  });

  it('keeps every LID across a restart through guid2lid, and rewrites no LFT block when nothing changed', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    let saved: ReadonlyMap<bigint, LidRange> | undefined;
    const r1 = rig(f, { save: (m) => (saved = new Map(m)) });
    await drive(r1.clock, r1.sm.start());
    expect(saved!.size).toBeGreaterThan(0);
    // A second SM on a fresh cold fabric, told the saved map: the same LIDs.
    const f2 = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    // Make the persisted map disagree with first-come order to prove it is honoured.
    const shuffled = new Map([...saved!].map(([g, r], i, a) => [g, a[(i + 1) % a.length]![1]]));
    const r2 = rig(f2, { guid2lid: shuffled });
    await drive(r2.clock, r2.sm.start());
    for (const n of r2.sm.current!.fabric.nodes) {
      for (const p of n.ports) if (p?.lid) expect(p.lid).toBe(shuffled.get(p.guid)!.base);
    }
    checkFabric(r2);
    // A second heavy sweep with nothing changed writes no LFT block.
    const again = await drive(r2.clock, r2.sm.sweep('heavy'));
    expect(again.lftBlocksWritten).toBe(0);
    expect(again.portInfoSets).toBe(0);
  });

  it('re-routes after a link goes down (trap 128) and comes back, rewriting exactly the changed blocks', async () => {
    // 4 leaves x 20 hosts: 86 LIDs, two LFT blocks per switch.
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=20');
    const r = rig(f, { routing: ['minhop'], sweepIntervalMs: 1000 });
    const first = await drive(r.clock, r.sm.start());
    checkFabric(r);
    const snap = r.sm.current!;
    const switches = snap.fabric.nodes.filter((n) => n.type === NodeType.Switch);
    expect(first.lftBlocksWritten).toBe(switches.length * 2);
    const before = new Map(switches.map((n) => [n.guid, Uint8Array.from(r.sim.lft(n.guid))]));
    // A leaf-to-spine link goes down: the leaf's switch sends trap 128 to the SM.
    const leaf = snap.fabric.nodes.find((n) => n.desc.startsWith('sw-l1-1'))!;
    const upPort = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && snap.fabric.nodes[p.peer.node]!.type === NodeType.Switch);
    const sweepsBefore = r.sm.stats.length;
    r.sim.linkDown(leaf.guid, upPort);
    await r.clock.runUntil(() => r.sm.stats.length !== sweepsBefore, 3000).catch(() => undefined);
    expect(r.sm.stats.length, 'a sweep triggered by the trap').toBeGreaterThan(sweepsBefore);
    expect(r.sink.lines.some((l) => l.includes('trap 128'))).toBe(true);
    const down = r.sm.stats.filter((s) => s.kind === 'heavy').at(-1)!;
    const after = r.sm.current!;
    expect(after.fabric.nodes.find((n) => n.guid === leaf.guid)!.ports[upPort]!.peer).toBeUndefined();
    checkFabric(r);
    // Exactly the blocks whose contents changed were written.
    let changed = 0;
    for (const n of switches) {
      const a = before.get(n.guid)!;
      const b = r.sim.lft(n.guid);
      for (let blk = 0; blk * 64 <= after.maxLid; blk++) {
        if (a.subarray(blk * 64, blk * 64 + 64).some((v, i) => v !== b[blk * 64 + i])) changed++;
      }
    }
    expect(changed).toBeGreaterThan(0);
    expect(down.lftBlocksWritten).toBe(changed);
    expect(down.lftBlocksWritten).toBeLessThan(first.lftBlocksWritten);
    // And back up: routes complete again over the restored link.
    r.sim.linkUp(leaf.guid, upPort);
    await drive(r.clock, r.sm.sweep('light'));
    checkFabric(r);
    expect(r.sm.current!.fabric.nodes.find((n) => n.guid === leaf.guid)!.ports[upPort]!.peer).toBeDefined();
    r.sm.stop();
  });

  it('programs P_Key tables from partitions.conf, with enforcement on switch ports facing end ports', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2');
    const hosts = f.nodes.filter((n) => n.type !== NodeType.Switch);
    const [h0, h1] = [hosts[0]!.ports[1]!.guid, hosts[1]!.ports[1]!.guid];
    const plan = parsePartitions(`Default=0x7fff : ALL=limited, SELF=full ;\nStorage=0x0a01 : 0x${h0.toString(16)}=full, 0x${h1.toString(16)} ;\n`);
    const r = rig(f, { partitions: plan });
    const first = await drive(r.clock, r.sm.start());
    checkFabric(r);
    for (const n of r.sm.current!.fabric.nodes) {
      if (n.type === NodeType.Switch) continue;
      const p = n.ports[1]!;
      const want = p.guid === h0 ? [0x7fff, 0x8a01] : p.guid === h1 ? [0x7fff, 0x0a01] : [0x7fff];
      expect(r.sim.pkeys(n.guid, 1).slice(0, want.length), n.desc).toEqual(want);
      expect(r.sim.pkeys(n.guid, 1).slice(want.length).every((k) => k === 0)).toBe(true);
      // the switch port facing it carries the same table and enforces it
      const sw = r.sm.current!.fabric.nodes[p.peer!.node]!;
      expect(r.sim.pkeys(sw.guid, p.peer!.port).slice(0, want.length)).toEqual(want);
      const spi = r.sim.portInfo(sw.guid, p.peer!.port);
      expect([spi.partitionEnforcementInbound, spi.partitionEnforcementOutbound]).toEqual([1, 1]);
    }
    // The SM's own port (a switch's port 0 here) is a full member of the default partition.
    const smNode = r.sm.current!.fabric.nodes[r.sm.current!.discovery.smNode]!;
    expect(r.sim.pkeys(smNode.guid, 0)[0]).toBe(0xffff);
    // switch-to-switch ports do not enforce
    const leaf = r.sm.current!.fabric.nodes.find((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && r.sm.current!.fabric.nodes[p.peer.node]!.type === NodeType.Switch))!;
    const isl = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && r.sm.current!.fabric.nodes[p.peer.node]!.type === NodeType.Switch);
    expect(r.sim.portInfo(leaf.guid, isl).partitionEnforcementInbound).toBe(0);
    expect(first.pkeyBlocksWritten).toBeGreaterThan(0);
    // nothing changed: no P_Key block rewritten
    const again = await drive(r.clock, r.sm.sweep('heavy'));
    expect(again.pkeyBlocksWritten).toBe(0);
  });

  it('programs SL2VL and VL arbitration for dfsssp layers, and the routes are deadlock-free per VL', async () => {
    // Two hosts per switch: with one, dfsssp's balanced routes on this 4x4 torus (nodes numbered by
    // GUID) happen to have an acyclic CDG, and one layer would leave the layering untested.
    const f = loadFabricSpec('gen:torus:4x4,hosts=2');
    const r = rig(f, { routing: ['dfsssp'] });
    const st = await drive(r.clock, r.sm.start());
    checkFabric(r);
    const res = r.sm.current!.routing;
    expect(res.engine).toBe('dfsssp');
    const vls = res.vlsUsed ?? 1;
    expect(vls, 'a 4x4 torus needs more than one layer').toBeGreaterThan(1);
    expect(st.vlTablesWritten).toBeGreaterThan(0);
    // every switch port pair maps SL i to VL i for the used layers
    const snap = r.sm.current!;
    for (const n of snap.fabric.nodes) {
      if (n.type !== NodeType.Switch) continue;
      const linked = n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
      for (const out of linked) {
        for (const inP of linked) {
          if (inP === out) continue;
          expect(r.sim.port(n.guid, out).sl2vl.get(inP)!.slice(0, vls)).toEqual([...Array(vls).keys()]);
        }
      }
    }
    // the tables in the switches, with the SLs the engine chose, have no credit loop on any VL
    const lfts = new Map<number, Uint8Array>();
    snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && lfts.set(i, r.sim.lft(n.guid)));
    const rep = verifyRoutes(snap.fabric, lfts, { sl: res.sl, sl2vl: res.sl2vl, requireDeadlockFree: true });
    expect(rep.ok).toBe(true);
    expect(rep.deadlockFree).toBe(true);
    // the same tables on VL0 alone would deadlock: the check is not vacuous
    expect(verifyRoutes(snap.fabric, lfts, { requireDeadlockFree: true }).deadlockFree).toBe(false);
  });

  it('rewrites the LFT of a switch that was reset behind its back', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const r = rig(f, { routing: ['minhop'] });
    await drive(r.clock, r.sm.start());
    const snap = r.sm.current!;
    const i = snap.fabric.nodes.findIndex((n) => n.desc === 'sw-l2-1');
    const sw = snap.fabric.nodes[i]!;
    const path = snap.discovery.nodes[i]!.path;
    const good = Uint8Array.from(r.sim.lft(sw.guid));
    // "Reset" it: LinearFDBTop 0 and block 0 emptied.
    const si = SwitchInfo.decode(await drive(r.clock, r.rpc.smpGetDr(path, SmpAttr.SwitchInfo)));
    await drive(r.clock, r.rpc.smpSetDr(path, SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, linearFdbTop: 0 })));
    await drive(r.clock, r.rpc.smpSetDr(path, SmpAttr.LinearForwardingTable, 0, LinearForwardingTable.encode({ ports: new Array(64).fill(255) })));
    expect(r.sim.lft(sw.guid)[1]).toBe(255);
    const st = await drive(r.clock, r.sm.sweep('heavy'));
    expect(st.lftBlocksWritten).toBe(1); // one block per switch on this fabric; only the reset one is rewritten
    expect(Array.from(r.sim.lft(sw.guid).subarray(0, snap.maxLid + 1))).toEqual(Array.from(good.subarray(0, snap.maxLid + 1)));
    checkFabric(r);
  });

  it('runs with its port on a CA: that port gets LID 1 and is every port\'s SM LID', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const caIdx = f.nodes.findIndex((n) => n.type !== NodeType.Switch);
    const r = rig(f, { attach: caIdx });
    await drive(r.clock, r.sm.start());
    const snap = r.sm.current!;
    expect(snap.smLid).toBe(1);
    expect(r.sim.portInfo(f.nodes[caIdx]!.guid, 1).lid).toBe(1);
    checkFabric(r);
  });

  it('programs an M_Key with protect bits and lease; its own later sweeps use it, and a wrong key is refused', async () => {
    const key = 0x1234_5678_9abc_def0n;
    const f = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2');
    const r = rig(f, { mkey: key, protect: 2 });
    await drive(r.clock, r.sm.start());
    checkFabric(r);
    for (const n of r.sm.current!.fabric.nodes) {
      const pn = n.type === NodeType.Switch ? 0 : 1;
      const pi = r.sim.portInfo(n.guid, pn);
      expect([pi.mkey, pi.mkeyProtectBits, pi.mkeyLeasePeriod], n.desc).toEqual([key, 2, 60]);
    }
    // The SM's next heavy sweep reads and writes the protected ports with its key.
    const again = await drive(r.clock, r.sm.sweep('heavy'));
    expect(again.nodes).toBe(f.nodes.length);
    checkFabric(r);
    // Another client without the key: protect level 2 hides the port (a Get with a wrong key gets no answer).
    const ca = r.sm.current!.fabric.nodes.findIndex((n) => n.type !== NodeType.Switch);
    const other = r.sim.attach(r.sm.current!.fabric.nodes.findIndex((n, i) => i !== ca && n.type !== NodeType.Switch));
    other.register(MgmtClass.SubnDirected, 1);
    const rpc2 = new MadRpc(other, r.clock, { timeoutMs: 20, retries: 1 });
    await expect(drive(r.clock, rpc2.smpGetDr([1], SmpAttr.PortInfo, 1))).rejects.toThrow(/no response/);
  });
});

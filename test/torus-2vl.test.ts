// The torus engine on 2 VLs (issue #17 item 2, torus-2QoS's scheme): dimension-order routes, the
// VL of each hop from a per-switch SL2VL by (in port, out port). Checked by the verifier's
// virtual-channel CDG and by an independent witness here (every CA-to-CA route walked hop by hop
// through the LFTs and the per-port tables, its (link, VL) dependencies searched for a cycle by
// Kahn's algorithm), and the SM programming the tables into the in-process switches.
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { portSl2Vl, type RoutingResult } from '../src/model/routes.js';
import { getEngine, verifyRoutes } from '../src/routing/index.js';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { installSmHandlers } from '../src/sm/handlers.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';
import { expectComplete, fabricWithLids as fabric } from './helpers/routing-checks.js';
import { planVlTables } from '../src/sm/plan-tables.js';
import { Programmed } from '../src/sm/programmed.js';
import { SLtoVLMappingTableRecord, SaAttr } from '../src/wire/sa.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import { buildContext, query, requester } from './sa-fixture.js';


/** Walk every CA-to-CA route through the LFTs with the VL of each hop from the per-port tables
 * (the CA's own SL2VL for its first link); count dependency cycles between (switch, out port, VL)
 * channels, and the VLs used on switch-to-switch links. */
function witness(f: Fabric, r: RoutingResult, sl2vlOf: (node: number, inP: number, outP: number) => ArrayLike<number>): { cyclic: boolean; vls: Set<number>; routes: number } {
  const cas: Array<{ node: number; port: number; lid: number }> = [];
  f.nodes.forEach((n, ni) => {
    if (isSwitch(n)) return;
    n.ports.forEach((p, pn) => p?.peer && p.lid && cas.push({ node: ni, port: pn, lid: p.lid }));
  });
  const edges = new Map<number, Set<number>>();
  const vls = new Set<number>();
  let routes = 0;
  for (const s of cas) {
    for (const t of cas) {
      if (s === t) continue;
      const sl = r.sl ? r.sl(s.lid, t.lid) : 0;
      let at = f.nodes[s.node]!.ports[s.port]!.peer!;
      let prev = -1;
      for (let hops = 0; ; hops++) {
        if (hops >= 64) throw new Error(`route ${s.lid} → ${t.lid} loops`);
        const lft = r.lfts.get(at.node)!;
        const out = lft[t.lid]!;
        const next = f.nodes[at.node]!.ports[out]!.peer!;
        if (!isSwitch(f.nodes[next.node]!)) {
          if (next.node !== t.node) throw new Error(`route ${s.lid} → ${t.lid} delivered to node ${next.node}`);
          break;
        }
        const vl = sl2vlOf(at.node, at.port, out)[sl]!;
        vls.add(vl);
        const ch = (at.node * 256 + out) * 16 + vl;
        if (prev >= 0) {
          const set = edges.get(prev) ?? new Set<number>();
          set.add(ch);
          edges.set(prev, set);
        }
        prev = ch;
        at = next;
      }
      routes++;
    }
  }
  // Kahn: the graph is acyclic iff every channel can be removed in topological order.
  const indeg = new Map<number, number>();
  for (const [a, bs] of edges) {
    if (!indeg.has(a)) indeg.set(a, 0);
    for (const b of bs) indeg.set(b, (indeg.get(b) ?? 0) + 1);
  }
  const queue = [...indeg].filter(([, d]) => d === 0).map(([k]) => k);
  let removed = 0;
  while (queue.length) {
    const a = queue.pop()!;
    removed++;
    for (const b of edges.get(a) ?? []) {
      const d = indeg.get(b)! - 1;
      indeg.set(b, d);
      if (d === 0) queue.push(b);
    }
  }
  return { cyclic: removed < indeg.size, vls, routes };
}

const planned = (r: RoutingResult) => (node: number, inP: number, outP: number): ArrayLike<number> => {
  const t = r.sl2vlByPorts?.get(node);
  return t ? portSl2Vl(t, inP, outP) : (r.sl2vl ?? new Array<number>(16).fill(0));
};

const TORI = ['gen:torus:4x4,hosts=2', 'gen:torus:5x5,hosts=2', 'gen:torus:6x6x6,hosts=1', 'gen:torus:2x3x5,hosts=1', 'gen:torus:4x4x3,hosts=1'];
const MESHES = ['gen:mesh:4x4,hosts=2', 'gen:mesh:3x4x5,hosts=1'];

describe('torus on 2 VLs: per-port SL2VL with datelines', () => {
  for (const spec of [...TORI, ...MESHES]) {
    it(`${spec}: complete, loop-free, deadlock-free within 2 VLs (verifier and hop-by-hop witness)`, () => {
      const f = fabric(spec);
      const r = getEngine('torus').route(f, { lmc: 0, maxVls: 2 });
      const v = expectComplete(f, r, 0, 2);
      // every ring is routed the short way round: no route longer than the shortest
      expect(v.stretch!.max).toBe(1);
      const w = witness(f, r, planned(r));
      const nCa = f.nodes.filter((n) => !isSwitch(n)).reduce((a, n) => a + n.ports.filter((p) => p?.peer).length, 0);
      expect(w.routes).toBe(nCa * (nCa - 1));
      expect(w.cyclic).toBe(false);
      expect(Math.max(...w.vls)).toBeLessThan(2);
      expect(w.vls.size).toBe(v.vlsUsed);
      // a mesh, and a torus whose rings are all 2 long (4 = 2 × 2) or 3 long, need 1 VL
      const needsDateline = /torus/.test(spec) && r.notes.join(' ').match(/dateline SL bit for ring\(s\) dimension/);
      expect(r.vlsUsed ?? 1).toBe(needsDateline ? 2 : 1);
      if (needsDateline) {
        // the same routes with every hop on VL 0 have credit loops (by both checks): the datelines matter
        const flat = { ...r, sl2vlByPorts: new Map([...r.sl2vlByPorts!].map(([k, t]) => [k, { stride: t.stride, vl: new Uint8Array(t.vl.length) }])) };
        expect(verifyRoutes(f, flat).deadlockFree).toBe(false);
        expect(witness(f, r, () => new Uint8Array(16)).cyclic).toBe(true);
      }
    });
  }

  it('2 VLs give the routes of 8 (every ring takes its wrap-around link), busiest link no worse than minhop', () => {
    const f = fabric('gen:torus:6x6x6,hosts=2');
    const r2 = getEngine('torus').route(f, { lmc: 0, maxVls: 2 });
    const r8 = getEngine('torus').route(f, { lmc: 0, maxVls: 8 });
    expect(r2.vlsUsed).toBe(2);
    expect(r8.vlsUsed).toBe(2);
    for (const [n, t] of r8.lfts) expect(r2.lfts.get(n)).toEqual(t);
    const t = verifyRoutes(f, r2);
    const m = verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 }));
    expect(t.linkLoad.max).toBeLessThanOrEqual(m.linkLoad.max);
    // on 1 VL the rings are lines: busier links than with the datelines
    const t1 = verifyRoutes(f, getEngine('torus').route(f, { lmc: 0, maxVls: 1 }), { requireDeadlockFree: true });
    expect(t1.ok).toBe(true);
    expect(t.linkLoad.max).toBeLessThan(t1.linkLoad.max);
  });

  it('the verifier finds a cycle that only a VL change hides: a table sending the dateline hop back to VL 0', () => {
    const f = fabric('gen:torus:5x5,hosts=1');
    const r = getEngine('torus').route(f, { lmc: 0, maxVls: 2 });
    // VL 1 only on the dateline links themselves, VL 0 after them: the ring's cycle closes on VL 0 again
    const bad = new Map([...r.sl2vlByPorts!].map(([k, t]) => {
      const vl = Uint8Array.from(t.vl);
      for (let i = 0; i < t.stride * t.stride; i++) {
        const o = i * 16;
        if (!vl.subarray(o, o + 16).every((x) => x === 1)) vl.fill(0, o, o + 16);
      }
      return [k, { stride: t.stride, vl }];
    }));
    const v = verifyRoutes(f, { ...r, sl2vlByPorts: bad });
    expect(v.deadlockFree).toBe(false);
    expect(v.cdg.some((c) => (c.exampleCycle ?? []).length > 0)).toBe(true);
    expect(witness(f, r, (n, i, o) => portSl2Vl(bad.get(n)!, i, o)).cyclic).toBe(true);
  });
});

describe('the SM programs the per-port SL2VL tables', () => {
  for (const spec of ['gen:torus:5x5,hosts=1', 'gen:torus:4x4x5,hosts=1']) {
    it(`${spec}: read back from the in-process switches, they equal the plan; the programmed routes are deadlock-free`, async () => {
      const f = loadFabricSpec(spec);
      const clock = new VirtualClock();
      const sim = new SimFabric(f, { clock, seed: 7 });
      const ep = sim.attach(0);
      ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
      ep.register(MgmtClass.SubnDirected, 1);
      const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8 });
      const sink = new MemorySink();
      const sm = new SubnetManager({ smp: smpClientOf(rpc), clock, log: new Logger(sink, 'debug'), routing: ['torus'], lmc: 0, sweepIntervalMs: 0 });
      installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log: new Logger(sink, 'debug') });
      const st = await drive(clock, sm.start());
      const snap = sm.current!;
      const res = snap.routing;
      expect(res.engine).toBe('torus');
      expect(res.vlsUsed).toBe(2);
      expect(res.sl2vlByPorts).toBeDefined();
      expect(st.vlTablesWritten).toBeGreaterThan(0);
      let pairs = 0;
      let ones = 0;
      snap.fabric.nodes.forEach((n, ni) => {
        if (n.type !== NodeType.Switch) return;
        const t = res.sl2vlByPorts!.get(ni)!;
        const linked = n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
        for (const out of linked) {
          for (const inP of [0, ...linked]) {
            if (inP === out) continue;
            const got = sim.port(n.guid, out).sl2vl.get(inP);
            expect(got, `${n.desc} ${inP}→${out}`).toEqual([...portSl2Vl(t, inP, out)]);
            pairs++;
            ones += got!.filter((x) => x === 1).length;
          }
        }
      });
      expect(pairs).toBeGreaterThan(0);
      expect(ones, 'some hops are on VL 1').toBeGreaterThan(0);
      // CA ports: every SL on VL 0 (the switch's tables choose the VL from the first switch on)
      for (const n of snap.fabric.nodes) {
        if (n.type === NodeType.Switch) continue;
        n.ports.forEach((p, pn) => p?.peer && expect(sim.port(n.guid, pn).sl2vl.get(0)).toEqual(new Array(16).fill(0)));
      }
      // the switches' LFTs and SL2VL tables as read back, with the engine's SLs: deadlock-free on 2 VLs
      const lfts = new Map<number, Uint8Array>();
      snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && lfts.set(i, sim.lft(n.guid)));
      const readBack = (node: number, inP: number, outP: number): number[] => sim.port(snap.fabric.nodes[node]!.guid, outP).sl2vl.get(inP) ?? new Array<number>(16).fill(0);
      const w = witness(snap.fabric, { ...res, lfts }, readBack);
      expect(w.cyclic).toBe(false);
      expect(w.vls).toEqual(new Set([0, 1]));
      const rep = verifyRoutes(snap.fabric, lfts, { sl: res.sl, slBySourceSwitch: true, sl2vl: res.sl2vl, sl2vlByPorts: res.sl2vlByPorts, requireDeadlockFree: true });
      expect(rep.ok).toBe(true);
      expect(rep.vlsUsed).toBe(2);
      // a second sweep with nothing changed writes no SL2VL table again
      const again = await drive(clock, sm.sweep('heavy'));
      expect(again.vlTablesWritten).toBe(0);
      // one entry of one switch's tables changed: that switch's signature changes, no other's
      const sigs = (r: RoutingResult): Map<string, string> => new Map(planVlTables(snap.discovery, r, new Programmed()).flatMap((w) => (w.effect.kind === 'vl' ? [[w.effect.key, w.effect.sig] as [string, string]] : [])));
      const [k, t] = [...res.sl2vlByPorts!][0]!;
      const vl = Uint8Array.from(t.vl);
      vl[(1 * t.stride + 2) * 16 + 3] ^= 1;
      const before = sigs(res);
      const after = sigs({ ...res, sl2vlByPorts: new Map(res.sl2vlByPorts!).set(k, { stride: t.stride, vl }) });
      const changed = [...before].filter(([key, sg]) => after.get(key) !== sg).map(([key]) => key);
      expect(changed).toEqual([`${snap.fabric.nodes[k]!.guid}/sw`]);
    });
  }
});

describe('the SA answers the per-port SL2VL tables', () => {
  it('SLtoVLMappingTableRecords of a torus switch: per (in port, out port), as the switch holds them', async () => {
    const b = await buildContext(loadFabricSpec('gen:torus:5x5,hosts=1'), { routing: ['torus'] });
    const engine = new SaEngine();
    for (const h of coreSaHandlers()) engine.register(h);
    const fab = b.ctx.snapshot.fabric;
    const ca = fab.nodes.findIndex((n) => n.type !== NodeType.Switch);
    const req = requester(b.ctx, ca);
    expect(b.ctx.snapshot.routing.sl2vlByPorts).toBeDefined();
    let compared = 0;
    let ones = 0;
    fab.nodes.forEach((n) => {
      if (n.type !== NodeType.Switch) return;
      const a = engine.answer(query(Method.GetTable, SaAttr.SLtoVLMappingTableRecord, SLtoVLMappingTableRecord.encode({ lid: n.ports[0]!.lid! }), SLtoVLMappingTableRecord.mask('lid'), req), b.ctx);
      if (a.kind !== 'records') throw new Error('expected records');
      expect(a.records.length).toBe((n.numPorts + 1) ** 2);
      for (const raw of a.records) {
        const r = SLtoVLMappingTableRecord.decode(raw);
        const held = b.sim.port(n.guid, r.outputPortNum).sl2vl.get(r.inputPortNum);
        if (!held) continue; // a pair the SM does not program (unlinked port, in = out)
        expect(r.slToVlTable.vls, `${n.desc} ${r.inputPortNum}→${r.outputPortNum}`).toEqual(held);
        compared++;
        ones += held.filter((x) => x === 1).length;
      }
    });
    expect(compared).toBeGreaterThan(0);
    expect(ones).toBeGreaterThan(0);
  });
});

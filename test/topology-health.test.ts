/** The expected topology (issue #33 item 1) on the in-process fabric: every mismatch class with
 * each action. The fabric itself is the witness of isolation: the isolated ports' PortState in the
 * simulated SMAs, and the LFTs the simulated switches hold (no entry forwards out of an isolated
 * port; the route verifier over them is clean). */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { swapCables, trainWidth } from '../src/sim/cabling.js';
import { loadFabricSpec } from '../src/model/load.js';
import { cloneFabric, type Fabric } from '../src/model/fabric.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType, PortState } from '../src/wire/mad.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { installSmHandlers } from '../src/sm/handlers.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { compareTopology, MISMATCH_CLASSES, type MismatchClass } from '../src/model/topology-compare.js';
import { parseTopologyActions, type HealthAction } from '../src/sm/health-state.js';
import type { HealthChange } from '../src/sm/health-state.js';
import { drive } from './helpers/drive.js';
import { topologyDot, topologySvg, topologyView } from '../src/view/topology.js';
import { formatGuid } from '../src/util/guid.js';
import { hasCode } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

function rig(actual: Fabric, expected: Fabric, actions: string) {
  const clock = new VirtualClock();
  const sim = new SimFabric(actual, { clock, seed: 7 });
  const ep = sim.attach(0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8 });
  const sink = new MemorySink();
  const changes: HealthChange[] = [];
  const sm = new SubnetManager({ smp: smpClientOf(rpc), clock, log: new Logger(sink, 'info'), routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: 0, topology: { expected, actions: parseTopologyActions(actions), onHealth: (c) => changes.push(c) } });
  installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log: new Logger(sink, 'info') });
  return { clock, sim, sm, sink, changes };
}
type Rig = ReturnType<typeof rig>;

const sw = (f: Fabric, i: number): boolean => f.nodes[i]!.type === NodeType.Switch;
/** A leaf (a switch with hosts), its host ports and one uplink (to a spine). */
function leafOf(f: Fabric): { leaf: number; hostPorts: number[]; up: number } {
  const leaf = f.nodes.findIndex((n, i) => i !== 0 && sw(f, i) && n.ports.some((p) => p?.peer && !sw(f, p.peer.node)) && n.ports.some((p, pn) => pn > 0 && p?.peer && sw(f, p.peer.node)));
  const n = f.nodes[leaf]!;
  const hostPorts = n.ports.flatMap((p, pn) => (pn > 0 && p?.peer && !sw(f, p.peer.node) ? [pn] : []));
  const up = n.ports.findIndex((p, pn) => pn > 0 && p?.peer !== undefined && sw(f, p.peer.node));
  return { leaf, hostPorts, up };
}
function unlink(f: Fabric, node: number, port: number): void {
  const p = f.nodes[node]!.ports[port]!;
  f.nodes[p.peer!.node]!.ports[p.peer!.port]!.peer = undefined;
  p.peer = undefined;
}
function link(f: Fabric, a: number, pa: number, b: number, pb: number): void {
  f.nodes[a]!.ports[pa]!.peer = { node: b, port: pb };
  f.nodes[b]!.ports[pb]!.peer = { node: a, port: pa };
}
function setRate(f: Fabric, node: number, port: number, width: string, speed: string): void {
  const p = f.nodes[node]!.ports[port]!;
  const q = f.nodes[p.peer!.node]!.ports[p.peer!.port]!;
  for (const x of [p, q]) Object.assign(x, { width, speed });
}

/** Each case: the expected fabric, the actual one, and the link or node it is about (in the
 * actual fabric's indices; the SM's discovery keeps the GUIDs). */
interface Case {
  expected: Fabric;
  actual: Fabric;
  /** Ports (node GUID, port) an isolation holds in INIT. */
  held: Array<[bigint, number]>;
  classes: MismatchClass[];
}

function cases(): Record<string, Case> {
  const base = loadFabricSpec(SPEC);
  const { leaf, hostPorts, up } = leafOf(base);
  const g = (f: Fabric, n: number): bigint => f.nodes[n]!.guid;
  const peerOf = (f: Fabric, n: number, p: number) => f.nodes[n]!.ports[p]!.peer!;
  const out: Record<string, Case> = {};
  {
    // two cables swapped on a leaf
    const actual = cloneFabric(base);
    const [p1, p2] = hostPorts as [number, number];
    const h1 = peerOf(base, leaf, p1);
    const h2 = peerOf(base, leaf, p2);
    unlink(actual, leaf, p1);
    unlink(actual, leaf, p2);
    link(actual, leaf, p1, h2.node, h2.port);
    link(actual, leaf, p2, h1.node, h1.port);
    out['two cables swapped on a leaf'] = { expected: base, actual, held: [[g(base, leaf), p1], [g(base, leaf), p2], [g(base, h1.node), h1.port], [g(base, h2.node), h2.port]], classes: ['wrong-port', 'wrong-port'] };
  }
  {
    // a spine replaced by one with a new GUID
    const actual = cloneFabric(base);
    const spine = peerOf(base, leaf, up).node;
    const n = actual.nodes[spine]!;
    n.guid += 0x1000n;
    n.ports.forEach((p) => p && (p.guid += 0x1000n));
    const held = n.ports.flatMap((p, pn) => (pn > 0 && p?.peer ? [[n.guid, pn] as [bigint, number]] : []));
    out['a switch replaced by one with a new GUID'] = { expected: base, actual, held, classes: ['guid-changed'] };
  }
  {
    // a 4x link trained at 1x; an HDR link where NDR is expected
    const expected = cloneFabric(base);
    setRate(expected, leaf, up, '4x', 'NDR');
    const actual = cloneFabric(expected);
    setRate(actual, leaf, up, '1x', 'NDR');
    const sp = peerOf(base, leaf, up);
    out['a 4x link trained at 1x'] = { expected, actual, held: [[g(base, leaf), up], [g(base, sp.node), sp.port]], classes: ['width'] };
    const hdr = cloneFabric(expected);
    setRate(hdr, leaf, up, '4x', 'HDR');
    out['a link at HDR where NDR is expected'] = { expected, actual: hdr, held: [[g(base, leaf), up], [g(base, sp.node), sp.port]], classes: ['speed'] };
  }
  {
    // a link missing (an uplink unplugged), and the same link extra (not in the expected file)
    const less = cloneFabric(base);
    const sp = peerOf(base, leaf, up);
    unlink(less, leaf, up);
    out['a missing link'] = { expected: base, actual: less, held: [], classes: ['missing-link'] };
    out['an extra link'] = { expected: less, actual: base, held: [[g(base, leaf), up], [g(base, sp.node), sp.port]], classes: ['extra-link'] };
  }
  {
    // a host missing, and an extra host
    const h = peerOf(base, leaf, hostPorts[0]!);
    const fewer = cloneFabric(base);
    unlink(fewer, leaf, hostPorts[0]!);
    fewer.nodes.splice(h.node, 1);
    for (const n of fewer.nodes) for (const p of n.ports) if (p?.peer && p.peer.node > h.node) p.peer.node--;
    out['a missing node'] = { expected: base, actual: fewer, held: [], classes: ['missing-node'] };
    out['an extra node'] = { expected: fewer, actual: base, held: [[g(base, leaf), hostPorts[0]!], [g(base, h.node), h.port]], classes: ['extra-node'] };
  }
  return out;
}

function state(r: Rig, guid: bigint, port: number): number {
  return r.sim.portInfo(guid, port).portState;
}

/** No LFT entry of any switch forwards out of an isolated switch port; the routes over the
 * switches' own tables are complete and loop-free. */
function checkRoutesAvoid(r: Rig, held: Array<[bigint, number]>): void {
  const snap = r.sm.current!;
  const lfts = new Map<number, Uint8Array>();
  snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && lfts.set(i, r.sim.lft(n.guid)));
  for (const [guid, port] of held) {
    const i = snap.fabric.nodes.findIndex((n) => n.guid === guid);
    if (i < 0 || snap.fabric.nodes[i]!.type !== NodeType.Switch) continue; // (an isolated node is not in the routed fabric)
    const lft = lfts.get(i)!;
    const uses = [...lft.subarray(1, snap.maxLid + 1)].filter((p) => p === port).length;
    expect(uses, `LFT entries of ${snap.fabric.nodes[i]!.desc} out of isolated port ${port}`).toBe(0);
  }
  // An isolated node (every link of it isolated) is reachable by nobody: its LIDs are no failure.
  // An isolated node (every link of it isolated) is reachable by nobody and reaches nobody: its
  // LIDs and its own table are no failure.
  const cutOff = new Set<number>();
  const cutOffAt = new Set<string>();
  for (const n of snap.fabric.nodes) {
    if (n.ports.some((p, pn) => pn > 0 && p?.peer)) continue;
    cutOffAt.add(formatGuid(n.guid));
    for (const p of n.ports) if (p?.lid) cutOff.add(p.lid);
  }
  const rep = verifyRoutes(snap.fabric, lfts);
  expect(rep.failures.filter((f) => !cutOff.has(f.dlid ?? 0) && !cutOffAt.has(String(f.at).split(' ')[0]!))).toEqual([]);
  expect(rep.loopEntries).toBe(0);
}

describe('expected topology: the comparison', () => {
  for (const [name, c] of Object.entries(cases())) {
    it(`finds ${name}: ${c.classes.join(', ')}`, () => {
      expect(compareTopology(c.expected, c.actual).map((m) => m.cls)).toEqual(c.classes);
    });
  }
  it('finds nothing on the fabric it was made from', () => {
    const f = loadFabricSpec(SPEC);
    expect(compareTopology(f, cloneFabric(f))).toEqual([]);
  });
  it('names both ends of a link mismatch: descriptions, GUIDs, ports', () => {
    const c = cases()['two cables swapped on a leaf']!;
    const m = compareTopology(c.expected, c.actual)[0]!;
    expect(m.a.desc).toBeTruthy();
    expect(m.b?.desc).toBeTruthy();
    expect(m.a.port).toBeGreaterThan(0);
    expect(m.b?.port).toBeGreaterThan(0);
  });
  it('parses class=action lists and refuses unknown ones', () => {
    expect(parseTopologyActions('all=isolate,width=ignore')).toMatchObject({ width: 'ignore', speed: 'isolate' });
    expect(() => parseTopologyActions('wrong=isolate')).toThrow(/class is one of/);
    expect(() => parseTopologyActions('width=drop')).toThrow(/action is one of/);
  });
});

describe('expected topology on the running SM: ignore, warn, isolate', () => {
  const all = cases();
  for (const [name, c] of Object.entries(all)) {
    for (const action of ['ignore', 'warn', 'isolate'] as HealthAction[]) {
      it(`${name}: ${action}`, async () => {
        const r = rig(c.actual, c.expected, `all=${action}`);
        await drive(r.clock, r.sm.start());
        await drive(r.clock, r.sm.sweep('heavy')); // settled: a second heavy sweep keeps it so
        const h = r.sm.health.state;
        if (action === 'ignore') {
          expect(h.mismatches).toEqual([]);
          expect(hasCode(r.sink.lines, 'IBSM-2045')).toBe(false);
        } else {
          expect(h.mismatches.map((m) => m.cls)).toEqual(c.classes);
          expect(r.sink.lines.filter((l) => l.includes('IBSM-2045')).length).toBe(c.classes.length); // once each, not every sweep
          expect(r.changes.length).toBeGreaterThan(0);
        }
        const isolating = action === 'isolate' && c.held.length > 0;
        expect(h.isolated.length > 0).toBe(isolating);
        expect(hasCode(r.sink.lines, 'IBSM-2047')).toBe(isolating);
        for (const [guid, port] of c.held) expect(state(r, guid, port), `port ${port} of ${guid.toString(16)}`).toBe(isolating ? PortState.Init : PortState.Active);
        if (isolating) checkRoutesAvoid(r, c.held);
        // light sweeps see nothing to do: a port held in INIT does not call for heavy sweeps
        const heavy = r.sm.sweepsDone.heavy;
        for (let i = 0; i < 3; i++) await drive(r.clock, r.sm.sweep('light'));
        expect(r.sm.sweepsDone.heavy).toBe(heavy);
        if (isolating && c.classes[0] === 'guid-changed') {
          // the replaced spine is left out of the routed fabric: the tree engine still applies
          expect(r.sm.current!.fabric.nodes.some((n) => n.guid === c.held[0]![0])).toBe(false);
          expect(r.sm.current!.routing.engine).toBe('ftree');
        }
      });
    }
  }

  it('a link trained at 1x is isolated, and released (ACTIVE, routed) once it trains at 4x again', async () => {
    const base = loadFabricSpec(SPEC);
    const { leaf, up } = leafOf(base);
    const expected = cloneFabric(base);
    setRate(expected, leaf, up, '4x', 'SDR');
    const r = rig(cloneFabric(expected), expected, 'width=isolate');
    const lg = base.nodes[leaf]!.guid;
    await drive(r.clock, r.sm.start());
    expect(state(r, lg, up)).toBe(PortState.Active);
    trainWidth(r.sim, lg, up, 1); // 1x only
    await drive(r.clock, r.sm.sweep('heavy'));
    expect(r.sm.health.state.mismatches.map((m) => m.cls)).toEqual(['width']);
    expect(state(r, lg, up)).toBe(PortState.Init);
    checkRoutesAvoid(r, [[lg, up]]);
    trainWidth(r.sim, lg, up, 0); // back to 4x
    await drive(r.clock, r.sm.sweep('heavy'));
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(hasCode(r.sink.lines, 'IBSM-2048')).toBe(true);
    expect(state(r, lg, up)).toBe(PortState.Active);
    const snap = r.sm.current!;
    const li = snap.fabric.nodes.findIndex((n) => n.guid === lg);
    expect(snap.fabric.nodes[li]!.ports[up]!.peer).toBeDefined(); // routed over again
  });

  it('local sweeps (traps) isolate, keep holding through an unrelated change, and release', async () => {
    const base = loadFabricSpec(SPEC);
    const { leaf, up } = leafOf(base);
    const expected = cloneFabric(base);
    setRate(expected, leaf, up, '4x', 'SDR');
    const r = rig(cloneFabric(expected), expected, 'width=isolate');
    const lg = base.nodes[leaf]!.guid;
    await drive(r.clock, r.sm.start());
    const sweepAfter = async (act: () => void) => {
      const n = r.sm.stats.length;
      act();
      await r.clock.runUntil(() => r.sm.stats.length > n && r.sm.stats.at(-1)!.kind === 'heavy', 20_000);
      await drive(r.clock, new Promise((res) => r.clock.setTimeout(res, 2000))); // what the sweep's own writes set off, settled
      return r.sm.stats.filter((x) => x.kind === 'heavy').slice(n);
    };
    // the link retrains at 1x: the trap's local sweep isolates it
    const s1 = await sweepAfter(() => trainWidth(r.sim, lg, up, 1));
    expect(s1.some((x) => x.reroute !== undefined)).toBe(true); // a local sweep ran
    expect(r.sm.health.state.isolated.map((i) => i.cls)).toEqual(['width']);
    expect(state(r, lg, up)).toBe(PortState.Init);
    checkRoutesAvoid(r, [[lg, up]]);
    // a host cable out on another leaf: the local sweep, which reads neither end of the isolated
    // link again, keeps the isolation (the link is re-linked for the comparison, not seen missing)
    const other = base.nodes.findIndex((n, i) => i !== leaf && i !== 0 && sw(base, i) && n.ports.some((p) => p?.peer && !sw(base, p.peer.node)));
    const otherHostPort = base.nodes[other]!.ports.findIndex((p, pn) => pn > 0 && p?.peer && !sw(base, p.peer.node));
    const hostLinkGone = await sweepAfter(() => r.sim.linkDown(base.nodes[other]!.guid, otherHostPort));
    expect(hostLinkGone.some((x) => x.reroute !== undefined)).toBe(true);
    expect(r.sm.health.state.isolated.map((i) => i.cls)).toEqual(['width']);
    expect(r.sm.health.state.mismatches.map((m) => m.cls).sort()).toEqual(['missing-node', 'width']); // the host, its only cable out
    expect(hasCode(r.sink.lines, 'IBSM-2048')).toBe(false);
    expect(state(r, lg, up)).toBe(PortState.Init);
    checkRoutesAvoid(r, [[lg, up]]);
    // back at 4x: released by the next sweep, ACTIVE and routed again
    await sweepAfter(() => trainWidth(r.sim, lg, up, 0));
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(hasCode(r.sink.lines, 'IBSM-2048')).toBe(true);
    expect(state(r, lg, up)).toBe(PortState.Active);
  });

  it('two cables swapped on a running fabric: isolated (INIT, not routed) by the sweep the traps bring; swapped back: released', async () => {
    const base = loadFabricSpec(SPEC);
    const { leaf, hostPorts } = leafOf(base);
    const [p1, p2] = hostPorts as [number, number];
    const r = rig(cloneFabric(base), base, 'wrong-port=isolate');
    const lg = base.nodes[leaf]!.guid;
    await drive(r.clock, r.sm.start());
    const settle = async (act: () => void): Promise<void> => {
      const n = r.sm.stats.length;
      act();
      await r.clock.runUntil(() => r.sm.stats.length > n && r.sm.stats.at(-1)!.kind === 'heavy', 20_000);
      await drive(r.clock, new Promise((res) => r.clock.setTimeout(res, 2000)));
    };
    await settle(() => swapCables(r.sim, lg, p1, lg, p2));
    expect(r.sm.health.state.isolated.map((i) => i.cls)).toEqual(['wrong-port', 'wrong-port']);
    for (const p of [p1, p2]) expect(state(r, lg, p)).toBe(PortState.Init);
    checkRoutesAvoid(r, [[lg, p1], [lg, p2]]);
    await settle(() => swapCables(r.sim, lg, p1, lg, p2));
    expect(r.sm.health.state.isolated).toEqual([]);
    expect(r.sm.health.state.mismatches).toEqual([]);
    for (const p of [p1, p2]) expect(state(r, lg, p)).toBe(PortState.Active);
    checkRoutesAvoid(r, []);
  });

  it('the picture draws the swapped cables isolated where they are, and the missing link where it should be', async () => {
    const c = cases()['two cables swapped on a leaf']!;
    const r = rig(c.actual, c.expected, 'all=isolate');
    await drive(r.clock, r.sm.start());
    const snap = r.sm.current!;
    const v = topologyView(snap.fabric, { health: r.sm.health.state });
    // cut from the routed fabric, drawn back: both swapped cables, marked isolated with their reason
    expect(v.links.filter((l) => l.health === 'isolated').length).toBe(2);
    expect(v.links.filter((l) => l.health === 'isolated').every((l) => /wrong-port/.test(l.healthText ?? ''))).toBe(true);
    expect(topologySvg(v).match(/class="link isolated"/g)?.length).toBe(2);
    expect(topologyDot(v)).toMatch(/label="isolated"/);
    const m = cases()['a missing link']!;
    const r2 = rig(m.actual, m.expected, 'all=warn');
    await drive(r2.clock, r2.sm.start());
    const v2 = topologyView(r2.sm.current!.fabric, { health: r2.sm.health.state });
    expect(v2.links.filter((l) => l.health === 'missing').length).toBe(1);
  });

  it('an ACTIVE link found miswired later is taken Down and held in INIT', async () => {
    // expected says the uplink runs 4x; the fabric's is 4x at the first sweep, then 1x: the SM
    // takes the link Down (it comes back in INIT) and holds it there
    const base = loadFabricSpec(SPEC);
    const { leaf, up } = leafOf(base);
    const expected = cloneFabric(base);
    setRate(expected, leaf, up, '4x', 'SDR');
    const r = rig(cloneFabric(expected), expected, 'width=isolate');
    await drive(r.clock, r.sm.start());
    const lg = base.nodes[leaf]!.guid;
    const p = r.sim.port(lg, up);
    p.info.linkWidthActive = 1; // the width reads 1x without a bounce: the link stays ACTIVE
    p.peer!.info.linkWidthActive = 1;
    await drive(r.clock, r.sm.sweep('heavy'));
    expect(hasCode(r.sink.lines, 'IBSM-2049')).toBe(true);
    expect(state(r, lg, up)).toBe(PortState.Init);
    expect(MISMATCH_CLASSES).toContain('width');
  });
});

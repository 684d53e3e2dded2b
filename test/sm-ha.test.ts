/** Several SMs on one in-process fabric, on the virtual clock: election, standby, handover both
 * ways, failover after the master dies, two masters meeting when a partition heals, the SM's own
 * port going down, SM_Key mismatch, and a master that hands over only to a current standby. The
 * fabric itself is the witness: every port's MasterSMLID, its LID, the switches' LFTs. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MadHeaderView, MgmtClass, Method, NodeType, SmpAttr, SMP_DATA_OFFSET } from '../src/wire/mad.js';
import { smpResponse } from '../src/wire/builders.js';
import { PortCap, PortInfo, SMInfo, SmState } from '../src/wire/sma.js';
import { SmInfoControl } from '../src/wire/modifiers.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { SmController, type RemoteSm } from '../src/sm/controller.js';
import { MadHeader } from '../src/wire/mad.js';
import { InformInfo, JoinState, MCMemberRecord, SaAttr, SA_CLASS_VERSION, ServiceRecord } from '../src/wire/sa.js';
import { MC_CREATE_MASK } from '../src/sa/multicast.js';
import { SaClient } from '../src/sa/client.js';
import { pullSync, registerSync } from '../src/sa/sync-agent.js';
import { SyncMirror } from '../src/sa/sync.js';
import { drive } from './helpers/drive.js';
import { getEngine } from '../src/routing/index.js';
import { hasCode, withCode } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=3';

interface Sm {
  node: number;
  guid: bigint;
  subnet: Subnet;
  rpc: MadRpc;
  sink: MemorySink;
  kill(): Promise<void>;
}

function fabric(spec = SPEC) {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec(spec), { clock, seed: 5 });
  const cas = sim.nodes.map((n, i) => (n.type !== NodeType.Switch ? i : -1)).filter((i) => i >= 0);
  return { clock, sim, cas };
}

function startSm(f: ReturnType<typeof fabric>, node: number, priority: number, o: { routing?: string[]; seed?: number; smKey?: bigint; sweepIntervalMs?: number; saSync?: boolean; forceMaster?: boolean; guid2lid?: Map<bigint, { base: number; lmc: number }>; tap?: (mad: Uint8Array) => void } = {}): Sm {
  const ep = f.sim.attach(node);
  if (o.tap) {
    const send = ep.send.bind(ep);
    const tap = o.tap;
    ep.send = (mad, addr) => {
      tap(mad);
      send(mad, addr);
    };
  }
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(ep, f.clock, { timeoutMs: 50, retries: 2, window: 64 });
  const sink = new MemorySink();
  const subnet = new Subnet({
    rpc,
    portGuid: ep.local.portGuid,
    smp: smpClientOf(rpc),
    clock: f.clock,
    log: new Logger(sink, 'debug'),
    routing: o.routing ?? ['minhop'],
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    lmc: 0,
    sweepIntervalMs: o.sweepIntervalMs ?? 1000,
    priority,
    smKey: o.smKey,
    forceMaster: o.forceMaster,
    guid2lid: o.guid2lid,
    saSync: o.saSync,
    pollIntervalMs: 200,
    pollRetries: 2,
    saServer: { schedule: (fn) => queueMicrotask(fn) },
  });
  void subnet.start().catch(() => undefined);
  return {
    node,
    guid: ep.local.portGuid,
    subnet,
    rpc,
    sink,
    kill: async () => {
      subnet.stop();
      rpc.close();
      await ep.close();
    },
  };
}

/** Every CA port's MasterSMLID. */
function smLids(f: ReturnType<typeof fabric>): Set<number> {
  const out = new Set<number>();
  for (const i of f.cas) out.add(f.sim.portInfo(i, 1).masterSmLid);
  return out;
}

function lidOf(f: ReturnType<typeof fabric>, sm: Sm): number {
  return f.sim.portInfo(sm.node, 1).lid;
}

function lfts(f: ReturnType<typeof fabric>): string[] {
  return f.sim.nodes.filter((n) => n.type === NodeType.Switch).map((n) => Buffer.from(f.sim.lft(n.guid)).toString('hex'));
}

const has = (sm: Sm, text: string): boolean => sm.sink.lines.some((l) => l.includes(text));

describe('SMs on one fabric', () => {
  it('elects the higher priority; the other stands by and says so in the log, and only the master SA answers', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 3);
    const b = startSm(f, f.cas[4]!, 9);
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state).toBe('standby');
    expect(a.subnet.sm.master?.guid).toBe(b.guid);
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    expect(hasCode(b.sink.lines, 'IBSM-1020')).toBe(true);
    // Started together, the standby saw the master before it had a LID: the line names it by GUID.
    expect(hasCode(a.sink.lines, 'IBSM-1021', `master=0x${b.guid.toString(16).padStart(16, '0')}`)).toBe(true);
    // SMInfo read from the fabric, as another tool would: states and a live ActCount.
    const probe = f.sim.attach(f.cas[7]!);
    probe.register(MgmtClass.SubnDirected, 1);
    probe.register(MgmtClass.SubnLid, 1);
    const prpc = new MadRpc(probe, f.clock, { timeoutMs: 50 });
    const read = async (lid: number) => SMInfo.decode(await prpc.smpGet(lid, SmpAttr.SMInfo, 0));
    const sa = read(lidOf(f, a));
    const sb = read(lidOf(f, b));
    await f.clock.advanceAsync(100);
    expect((await sa).smState).toBe(SmState.Standby);
    expect((await sb).smState).toBe(SmState.Master);
    expect((await sb).priority).toBe(9);
    const act1 = (await sb).actCount;
    await f.clock.advanceAsync(1500); // a light sweep
    const again = read(lidOf(f, b));
    await f.clock.advanceAsync(100);
    expect((await again).actCount).toBeGreaterThan(act1);
    expect(a.subnet.sa!.metrics().received, 'the standby took no SA request').toBe(0);
    await a.kill();
    await b.kill();
  });

  it('three SMs: the best masters, the others stand by; when it dies the next best takes over and the third stands by for it', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 3);
    const b = startSm(f, f.cas[4]!, 9);
    const c = startSm(f, f.cas[8]!, 6);
    await f.clock.advanceAsync(3000);
    expect([a, b, c].map((x) => x.subnet.sm.state)).toEqual(['standby', 'master', 'standby']);
    await b.kill();
    for (let i = 0; i < 400 && c.subnet.sm.state !== 'master'; i++) await f.clock.advanceAsync(10);
    await f.clock.advanceAsync(3000);
    expect(c.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state).toBe('standby');
    expect(a.subnet.sm.master?.guid).toBe(c.guid);
    expect(new Set(f.cas.filter((i) => i !== b.node).map((i) => f.sim.portInfo(i, 1).masterSmLid))).toEqual(new Set([lidOf(f, c)]));
    await a.kill();
    await c.kill();
  });

  it('breaks a priority tie by the lower port GUID', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[2]!, 5);
    const b = startSm(f, f.cas[6]!, 5);
    await f.clock.advanceAsync(3000);
    const [lo, hi] = a.guid < b.guid ? [a, b] : [b, a];
    expect(lo.subnet.sm.state).toBe('master');
    expect(hi.subnet.sm.state).toBe('standby');
    await a.kill();
    await b.kill();
  });

  it('a better SM started later gets the subnet by handover, and the routes do not change', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 1);
    await f.clock.advanceAsync(2000);
    expect(a.subnet.sm.state).toBe('master');
    const tables = lfts(f);
    const lids = f.cas.map((i) => f.sim.portInfo(i, 1).lid);
    const b = startSm(f, f.cas[5]!, 12);
    await f.clock.advanceAsync(4000);
    expect(b.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state).toBe('standby');
    expect(hasCode(a.sink.lines, 'IBSM-1024', `0x${b.guid.toString(16).padStart(16, '0')}`)).toBe(true);
    // Taken by the HANDOVER (carrying SmState MASTER), not by polls going unanswered; the
    // ACKNOWLEDGE is accepted too.
    // b is handed the subnet while still discovering (a reads its SMInfo on b's trap 144, as
    // OpenSM does), so it never stands by under the worse master.
    expect(hasCode(b.sink.lines, 'IBSM-1021')).toBe(false);
    // (Trap 144's TrapRepress is taken by the simulated SMA of the standby's port, so that trap
    // is logged as not delivered although the master got it; not an SMInfo Set.)
    expect(b.sink.lines.filter((l) => /refused|SMInfo Set not|stopped answering/.test(l))).toEqual([]);
    expect(a.sink.lines.filter((l) => /refused|SMInfo Set not/.test(l))).toEqual([]);
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    expect(f.cas.map((i) => f.sim.portInfo(i, 1).lid), 'no LID changed').toEqual(lids);
    expect(lfts(f), 'the new master computed the same routes').toEqual(tables);
    const taken = b.subnet.sm.stats.find((s) => s.kind === 'heavy' && s.lftBlocksWritten >= 0 && s.portInfoSets > 0)!;
    expect(taken.lftBlocksWritten, 'no LFT block rewritten on an unchanged fabric').toBe(0);
    await a.kill();
    await b.kill();
  });

  it('masters again after another SM ran the fabric: reads the tables back, adopts them when they verify, and routes by what the switches hold', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 1);
    await f.clock.advanceAsync(2000);
    expect(a.subnet.sm.state).toBe('master');
    const b = startSm(f, f.cas[5]!, 12);
    await f.clock.advanceAsync(4000);
    expect(b.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state).toBe('standby');
    // b took a's tables over as they were (they verify and balance as its own would)
    expect(hasCode(b.sink.lines, 'IBSM-4020')).toBe(true);
    // While a stands by, the master routes the fabric another way (as an SM with another engine or
    // seed would): every switch's LFT rewritten with minhop's routes under another tie-break seed.
    const mine = a.subnet.sm.current!;
    const other = getEngine('minhop').route(mine.fabric, { lmc: 0, seed: 11 });
    const sws = mine.fabric.nodes.flatMap((n, i) => (n.type === NodeType.Switch ? [i] : []));
    const simOf = (i: number) => f.sim.nodes.find((n) => n.guid === mine.fabric.nodes[i]!.guid)!;
    const differ = sws.filter((i) => Buffer.compare(other.lfts.get(i)!.subarray(0, mine.maxLid + 1), mine.routing.lfts.get(i)!.subarray(0, mine.maxLid + 1)) !== 0);
    expect(differ.length, 'the other routing differs from a\'s').toBeGreaterThan(0);
    for (const i of sws) {
      const t = other.lfts.get(i)!;
      for (let blk = 0; blk * 64 <= mine.maxLid; blk++) simOf(i).sw!.fwd.setLftBlock(blk, Array.from(t.subarray(blk * 64, blk * 64 + 64)));
    }
    await b.kill();
    await f.clock.advanceAsync(5000);
    expect(a.subnet.sm.state).toBe('master');
    // a forgot what it had written when it stood by: it read the tables back and kept them.
    expect(hasCode(a.sink.lines, 'IBSM-2040')).toBe(true);
    expect(hasCode(a.sink.lines, 'IBSM-4020')).toBe(true);
    const now = a.subnet.sm.current!;
    for (const i of sws) expect(Buffer.from(f.sim.lft(simOf(i).guid).subarray(1, now.maxLid + 1)), `switch ${i}: what it holds is a's routing`).toEqual(Buffer.from(now.routing.lfts.get(i)!.subarray(1, now.maxLid + 1)));
    // A heavy sweep on the unchanged fabric keeps them; an operator's reroute routes with a's engine.
    const kept = a.subnet.sm.sweep('heavy');
    await f.clock.advanceAsync(1000);
    expect((await kept).lftBlocksWritten).toBe(0);
    const rerouted = a.subnet.sm.reroute();
    await f.clock.advanceAsync(1000);
    expect((await rerouted).lftBlocksWritten).toBeGreaterThan(0);
    const own = getEngine('minhop').route(a.subnet.sm.current!.fabric, { lmc: 0 });
    for (const i of sws) expect(Buffer.from(f.sim.lft(simOf(i).guid).subarray(1, now.maxLid + 1))).toEqual(Buffer.from(own.lfts.get(i)!.subarray(1, now.maxLid + 1)));
    await a.kill();
  });

  it('acknowledges a directed-route HANDOVER from an SM it did not know yet, with SmState STANDBY (OpenSM hands over to an SM still discovering)', async () => {
    const f = fabric();
    const topo = loadFabricSpec(SPEC);
    // A stand-in for OpenSM at cas[0]: a master of priority 1 that answers SMInfo Gets and records Sets.
    const [from, to] = [f.cas[0]!, f.cas[1]!];
    const ep = f.sim.attach(from);
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, f.clock, { timeoutMs: 50, retries: 2 });
    const self = { guid: ep.local.portGuid, smKey: 0n, actCount: 1, priority: 1, smState: SmState.Master };
    const sets: Array<{ control: number; state: number }> = [];
    for (const cls of [MgmtClass.SubnDirected, MgmtClass.SubnLid]) {
      rpc.onUnsolicited(cls, (m) => {
        const r = smpResponse(m.data, 0);
        SMInfo.encode(self, r, SMP_DATA_OFFSET);
        rpc.respond(m, r);
        if (MadHeaderView.over(m.data).method === Method.Set) sets.push({ control: MadHeaderView.over(m.data).attrMod, state: SMInfo.decode(m.data, SMP_DATA_OFFSET).smState });
      }, { attrId: SmpAttr.SMInfo });
    }
    const b = startSm(f, to, 9);
    // The DR path from the stand-in to b's port: out of its port 1, then the leaf's port to b.
    const leaf = topo.nodes[from]!.ports[1]!.peer!.node;
    const out = topo.nodes[leaf]!.ports.findIndex((p) => p?.peer?.node === to);
    expect(out).toBeGreaterThan(0);
    // HANDOVER at once: b is still in its first sweep and has not read anyone's SMInfo.
    const data = SMInfo.encode(self, new Uint8Array(64));
    const answer = rpc.smpSetDr([1, out], SmpAttr.SMInfo, SmInfoControl.Handover, data);
    await f.clock.advanceAsync(2000);
    await answer;
    expect(b.subnet.sm.state).toBe('master');
    expect(withCode(b.sink.lines, ['IBSM-1031', 'IBSM-1032'])).toEqual([]);
    expect(sets).toEqual([{ control: SmInfoControl.Acknowledge, state: SmState.Standby }]);
    rpc.close();
    await ep.close();
    await b.kill();
  });

  it('a worse SM started later stands by and leaves the fabric as it is', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 12);
    await f.clock.advanceAsync(2000);
    const tables = lfts(f);
    const sent = a.rpc.stats.sent;
    const b = startSm(f, f.cas[5]!, 1);
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('standby');
    expect(a.subnet.sm.state).toBe('master');
    expect(hasCode(b.sink.lines, 'IBSM-1021', `master=0x${a.guid.toString(16).padStart(16, '0')} lid=${lidOf(f, a)}\\b`)).toBe(true);
    expect(smLids(f)).toEqual(new Set([lidOf(f, a)]));
    expect(lfts(f)).toEqual(tables);
    expect(b.subnet.sm.stats.filter((s) => s.portInfoSets > 0 || s.lftBlocksWritten > 0), 'the standby wrote nothing').toEqual([]);
    expect(a.rpc.stats.sent).toBeGreaterThan(sent);
    await a.kill();
    await b.kill();
  });

  it('fails over when the master dies: the standby takes over within the polling budget, keeping LIDs and routes', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 10);
    const b = startSm(f, f.cas[5]!, 2);
    await f.clock.advanceAsync(3000);
    expect(a.subnet.sm.state).toBe('master');
    expect(b.subnet.sm.state).toBe('standby');
    const tables = lfts(f);
    const lids = f.cas.filter((i) => i !== a.node).map((i) => f.sim.portInfo(i, 1).lid);
    await a.kill();
    const t0 = f.clock.now();
    let t = t0;
    while (b.subnet.sm.state !== 'master' && t - t0 < 10_000) {
      await f.clock.advanceAsync(10);
      t = f.clock.now();
    }
    expect(b.subnet.sm.state).toBe('master');
    // 200 ms polls, 2 retries: three polls unanswered (each a 3 × 50 ms timeout) and a sweep.
    expect(t - t0).toBeLessThan(1500);
    await f.clock.advanceAsync(500);
    const others = f.cas.filter((i) => i !== a.node);
    expect(new Set(others.map((i) => f.sim.portInfo(i, 1).masterSmLid))).toEqual(new Set([lidOf(f, b)]));
    expect(others.map((i) => f.sim.portInfo(i, 1).lid)).toEqual(lids);
    expect(lfts(f)).toEqual(tables);
    expect(hasCode(b.sink.lines, 'IBSM-1020')).toBe(true);
    await b.kill();
  });

  it('two masters after a partition heals: the worse one hands over', async () => {
    // Two leaf switches joined only through one spine link: take it down, one SM on each side.
    const f = fabric('gen:fattree2:leaves=2,spines=1,hosts=2');
    const leaves = f.sim.nodes.map((n, i) => ({ n, i })).filter(({ n }) => n.type === NodeType.Switch && n.desc.startsWith('sw-l1'));
    const leaf0 = leaves[0]!.i;
    const up = f.sim.nodes[leaf0]!.ports.findIndex((p, k) => k > 0 && p?.peer?.node.type === NodeType.Switch);
    f.sim.linkDown(leaf0, up);
    const sideOf = (ca: number) => f.sim.nodes[ca]!.ports[1]!.peer!.node.idx;
    const left = f.cas.find((c) => sideOf(c) === leaf0)!;
    const right = f.cas.find((c) => sideOf(c) !== leaf0)!;
    const a = startSm(f, left, 4);
    const b = startSm(f, right, 8);
    await f.clock.advanceAsync(2000);
    expect([a.subnet.sm.state, b.subnet.sm.state]).toEqual(['master', 'master']);
    f.sim.linkUp(leaf0, up);
    await f.clock.advanceAsync(6000);
    expect(b.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state).toBe('standby');
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    await a.kill();
    await b.kill();
  });

  it('an SM whose port goes down stops managing and comes back when it is up', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 5, { sweepIntervalMs: 500 });
    await f.clock.advanceAsync(2000);
    expect(a.subnet.sm.state).toBe('master');
    f.sim.linkDown(a.node, 1);
    await f.clock.advanceAsync(2000);
    expect(a.subnet.sm.state).toBe('discovering');
    f.sim.linkUp(a.node, 1);
    await f.clock.advanceAsync(3000);
    expect(a.subnet.sm.state).toBe('master');
    expect(smLids(f)).toEqual(new Set([lidOf(f, a)]));
    await a.kill();
  });

  it('ignores an SM with another SM_Key, and never programs the fabric that SM masters until it is gone', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 2, { smKey: 0x11n });
    await f.clock.advanceAsync(2000);
    const lids = f.cas.map((i) => f.sim.portInfo(i, 1).lid);
    const b = startSm(f, f.cas[5]!, 9, { smKey: 0x22n });
    await f.clock.advanceAsync(3000);
    expect(a.subnet.sm.state, 'no handover to an SM of another key').toBe('master');
    expect(b.subnet.sm.state, 'it does not stand by for an SM of another key').toBe('discovering');
    // The newcomer wrote nothing and said why, once, naming the master and both keys.
    expect(smLids(f)).toEqual(new Set([lidOf(f, a)]));
    expect(b.subnet.sm.stats.filter((s) => s.kind === 'heavy' && s.portInfoSets + s.lftBlocksWritten > 0)).toEqual([]);
    const said = withCode(b.sink.lines, 'IBSM-1036');
    expect(said).toHaveLength(1);
    expect(said[0]).toContain(`guid=0x${a.guid.toString(16).padStart(16, '0')}`);
    expect(said[0]).toMatch(/priority=2 theirSmKey=0x0000000000000011 ourSmKey=0x0000000000000022/);
    expect(b.subnet.sm.contestedSweeps).toBeGreaterThan(1); // it keeps looking
    expect(withCode(a.sink.lines, 'IBSM-1038')).toHaveLength(1); // the master ignores it, once
    expect(f.cas.map((i) => f.sim.portInfo(i, 1).lid)).toEqual(lids);
    // The master goes away: the newcomer takes the fabric on its next look.
    await a.kill();
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('master');
    expect(hasCode(b.sink.lines, 'IBSM-1037')).toBe(true);
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    await b.kill();
  });

  it('a master of another SM_Key that renumbers the fabric: the master notices, stops writing, and adopts none of its LIDs', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 2, { smKey: 0x11n });
    await f.clock.advanceAsync(2000);
    const ours = new Map(f.cas.map((i) => [f.sim.nodes[i]!.ports[1]!.guid, f.sim.portInfo(i, 1).lid]));
    // The rogue (forced, as an operator who overrides everything would) moves every CA to LIDs of its own.
    const theirs = new Map(f.cas.map((i, k) => [f.sim.nodes[i]!.ports[1]!.guid, { base: 100 + k, lmc: 0 }]));
    const b = startSm(f, f.cas[5]!, 9, { smKey: 0x22n, forceMaster: true, guid2lid: theirs });
    await f.clock.advanceAsync(4000);
    expect(b.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state, 'the old master stops writing').toBe('discovering');
    expect(hasCode(a.sink.lines, 'IBSM-1039')).toBe(true); // it saw ports naming another master
    expect(hasCode(a.sink.lines, 'IBSM-1036')).toBe(true);
    expect(smLids(f), 'nobody fights: every port names the rogue').toEqual(new Set([lidOf(f, b)]));
    const aWrites = a.subnet.sm.stats.filter((s) => s.kind === 'heavy').slice(1);
    expect(aWrites.every((s) => s.portInfoSets === 0 && s.lftBlocksWritten === 0)).toBe(true);
    // The rogue goes: the master takes its fabric back with the LIDs it gave, not the rogue's.
    await b.kill();
    await f.clock.advanceAsync(4000);
    expect(a.subnet.sm.state).toBe('master');
    expect(new Map(f.cas.map((i) => [f.sim.nodes[i]!.ports[1]!.guid, f.sim.portInfo(i, 1).lid]))).toEqual(ours);
    const retaken = withCode(a.sink.lines, 'IBSM-2020').at(-1)!;
    expect(retaken).not.toMatch(/changed=0/);
    await a.kill();
  });

  it("at their defaults ibsm's SM_Key is OpenSM's: an SM that says key 1 is of this subnet", () => {
    const c = new SmController({ sweepIntervalMs: 0, portGuid: 2n, priority: 1 });
    c.handle({ type: 'start' }, 0);
    expect(c.poll(0)?.type).toBe('heavySweep');
    c.handle({ type: 'discovered', remotes: [{ guid: 1n, priority: 10, state: SmState.Master, actCount: 0, smKey: 1n, lid: 1 }], ownPortUp: true }, 1);
    expect(c.state).toBe('standby');
    expect(c.contestedBy).toBeUndefined();
  });

  it('a better SM still discovering is handed the subnet as soon as its trap 144 arrives, before it stands by', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 2, { sweepIntervalMs: 60_000 });
    await f.clock.advanceAsync(2000);
    const b = startSm(f, f.cas[5]!, 9, { sweepIntervalMs: 60_000 });
    await f.clock.advanceAsync(200);
    expect(hasCode(a.sink.lines, 'IBSM-1024', `0x${b.guid.toString(16).padStart(16, '0')}`), 'no light sweep needed').toBe(true);
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('master');
    expect(hasCode(b.sink.lines, 'IBSM-1021'), 'it never stood by under the worse master').toBe(false);
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    await a.kill();
    await b.kill();
  });

  it("an SMInfo Get from a better SM still discovering waits for the master's decision: it hears of the HANDOVER first, then STANDBY, never a worse MASTER (OpenSM would stand by under it)", async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 2, { sweepIntervalMs: 60_000 });
    await f.clock.advanceAsync(2000);
    expect(a.subnet.sm.state).toBe('master');
    // A stand-in for OpenSM at cas[5], priority 9, DISCOVERING: registering as an SM makes its port's
    // SMA send trap 144 (IsSM) to a. Busy with its discovery, it answers a's SMInfo Get 5 ms late,
    // and meanwhile its discovery reads a's SMInfo, as OpenSM's does.
    const ep = f.sim.attach(f.cas[5]!);
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, f.clock, { timeoutMs: 200, retries: 0 });
    const self = { guid: ep.local.portGuid, smKey: 1n, actCount: 1, priority: 9, smState: SmState.Discovering };
    const seen: string[] = [];
    let got: Promise<unknown> | undefined;
    for (const cls of [MgmtClass.SubnDirected, MgmtClass.SubnLid]) {
      rpc.onUnsolicited(cls, (m) => {
        const r = smpResponse(m.data, 0);
        SMInfo.encode(self, r, SMP_DATA_OFFSET);
        const h = MadHeaderView.over(m.data);
        if (h.method === Method.Set) {
          seen.push(`set ${h.attrMod}`);
          rpc.respond(m, r);
          return;
        }
        got ??= rpc.smpGet(lidOf(f, a), SmpAttr.SMInfo, 0).then((d) => seen.push(`answer ${SMInfo.decode(d).smState}`));
        f.clock.setTimeout(() => rpc.respond(m, r), 5);
      }, { attrId: SmpAttr.SMInfo });
    }
    await f.clock.advanceAsync(500);
    expect(got, "a read the stand-in's SMInfo on its trap 144").toBeDefined();
    await got;
    expect(seen).toEqual([`set ${SmInfoControl.Handover}`, `answer ${SmState.Standby}`]);
    rpc.close();
    await ep.close();
    await a.kill();
  });

  it('a master that stops hands over to its standby, which masters at once instead of after its polls go unanswered', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 9);
    await f.clock.advanceAsync(2000);
    const b = startSm(f, f.cas[5]!, 2);
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('standby');
    const t0 = f.clock.now();
    const to = await drive(f.clock, a.subnet.sm.handOverOnStop());
    expect(to?.guid).toBe(b.guid);
    await a.kill();
    await f.clock.advanceAsync(300);
    expect(b.subnet.sm.state).toBe('master');
    expect(hasCode(b.sink.lines, 'IBSM-1022', `reason="handover from 0x${a.guid.toString(16).padStart(16, '0')}"`)).toBe(true);
    expect(f.clock.now() - t0, 'sooner than its polls could tell (3 x 200 ms, plus their time-outs)').toBeLessThan(600);
    expect(hasCode(a.sink.lines, 'IBSM-1041', `0x${b.guid.toString(16).padStart(16, '0')}`)).toBe(true);
    expect(has(b, 'stopped answering')).toBe(false);
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    await b.kill();
  });
});

/** The SMPs an SM sends, and how many it had sent when its first PortInfo Set naming `smLid()`
 * as MasterSMLID went out (a new master claiming the ports). */
function smpTap(smLid: () => number) {
  const t = { smps: 0, beforeClaim: undefined as number | undefined, onClaim: undefined as (() => void) | undefined };
  const fn = (mad: Uint8Array): void => {
    const h = MadHeaderView.over(mad);
    if (h.mgmtClass !== MgmtClass.SubnDirected && h.mgmtClass !== MgmtClass.SubnLid) return;
    if (t.beforeClaim === undefined && h.method === Method.Set && h.attrId === SmpAttr.PortInfo && smLid() && PortInfo.decode(mad, SMP_DATA_OFFSET).masterSmLid === smLid()) {
      t.beforeClaim = t.smps;
      t.onClaim?.();
    }
    t.smps++;
  };
  return { t, fn };
}

describe('a clean handover to a standby that holds the master view (#27: < 0.5 s on 1,024 hosts)', () => {
  const SPEC2 = 'gen:fattree2:leaves=4,spines=2,hosts=4';
  /** A stops, handing over to B; then `ms` of the fabric's time, and B masters. */
  async function handOver(f: ReturnType<typeof fabric>, a: Sm, b: Sm, ms: number): Promise<void> {
    await drive(f.clock, a.subnet.sm.handOverOnStop());
    await a.kill();
    await f.clock.advanceAsync(ms);
    expect(b.subnet.sm.state).toBe('master');
  }
  /** Master A, standby B (its SMPs tapped) that pulled A's SA state and view. */
  async function pair(o: { saSync?: boolean } = {}) {
    const f = fabric(SPEC2);
    const a = startSm(f, f.cas[0]!, 9, o);
    await f.clock.advanceAsync(2000);
    let bNode = -1;
    const tap = smpTap(() => (bNode >= 0 ? f.sim.portInfo(bNode, 1).lid : 0));
    bNode = f.cas[5]!;
    const b = startSm(f, bNode, 2, { ...o, tap: tap.fn });
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('standby');
    // What B sent to stand by: its discovery of the fabric, the SMInfo reads, its polls.
    const discovery = tap.t.smps;
    tap.t.smps = 0;
    const stopA = (ms: number): Promise<void> => handOver(f, a, b, ms);
    /** The host that goes, and whether an SM's snapshot still has it. */
    const host = f.cas[9]!;
    const hasHost = (sm: Sm): boolean => sm.subnet.sm.current!.fabric.nodes.some((n) => n.guid === f.sim.nodes[host]!.guid);
    return { f, a, b, tap: tap.t, discovery, stopA, host, hasHost, switches: f.sim.nodes.filter((n) => n.type === NodeType.Switch).length };
  }

  it('the new master tells every port it is their master before it sends more SMPs than the switches count (no rediscovery), then a full sweep verifies and writes no LFT block', async () => {
    const { f, b, tap, switches, discovery, stopA } = await pair();
    const lftsBefore = lfts(f);
    expect(hasCode(b.sink.lines, 'IBSM-1044')).toBe(true);
    const t0 = f.clock.now();
    await stopA(1000);
    expect(hasCode(b.sink.lines, 'IBSM-1042')).toBe(true);
    // The SwitchInfo of every switch, SMInfo of the other SMs: no NodeInfo/PortInfo walk first.
    expect(tap.beforeClaim, 'SMPs before the first MasterSMLID write').toBeDefined();
    expect(tap.beforeClaim!).toBeLessThanOrEqual(switches + 4);
    expect(discovery).toBeGreaterThan(5 * (switches + 4));
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    // The verifying sweep ran (a full heavy sweep after the takeover) and found nothing to change.
    const heavies = b.subnet.sm.stats.filter((st) => st.kind === 'heavy');
    expect(heavies.length).toBe(2);
    expect(heavies[1]!.smps).toBeGreaterThan(0.8 * discovery);
    expect(heavies[1]!.lftBlocksWritten + heavies[1]!.portInfoSets).toBe(0);
    expect(lfts(f)).toEqual(lftsBefore);
    expect(f.clock.now() - t0).toBeLessThan(2000);
    await b.kill();
  });

  it('a host whose link goes down while the new master claims the ports is found by the sweep that verifies', async () => {
    const { f, b, tap, stopA, host, hasHost } = await pair();
    tap.onClaim = () => f.sim.linkDown(host, 1);
    await stopA(1500);
    expect(hasCode(b.sink.lines, 'IBSM-1042')).toBe(true);
    expect(hasHost(b), 'the host is gone from the snapshot').toBe(false);
    const others = f.cas.filter((i) => i !== host);
    expect(new Set(others.map((i) => f.sim.portInfo(i, 1).masterSmLid))).toEqual(new Set([lidOf(f, b)]));
    await b.kill();
  });

  it('a link that went down just before the handover (a switch flags it): no takeover from the view, a full heavy sweep as before', async () => {
    const { f, b, stopA, host, hasHost } = await pair();
    f.sim.linkDown(host, 1);
    await stopA(1500);
    expect(hasCode(b.sink.lines, 'IBSM-1043')).toBe(true);
    expect(hasCode(b.sink.lines, 'IBSM-1042')).toBe(false);
    expect(hasHost(b)).toBe(false);
    await b.kill();
  });

  it("a change the master swept while the standby stood by makes the standby's view stale: it says so, rediscovers the fabric once, and holds the master's view again", async () => {
    const { f, a, b, stopA, host, hasHost } = await pair();
    const discoveries = (): number => withCode(b.sink.lines, 'IBSM-2001').length;
    const before = discoveries();
    f.sim.linkDown(host, 1);
    await f.clock.advanceAsync(3000); // the master's sweeps take the host out; B pulls the new view's fingerprint
    expect(hasHost(a)).toBe(false);
    expect(hasCode(b.sink.lines, 'IBSM-1045')).toBe(true);
    expect(withCode(b.sink.lines, 'IBSM-1044').length, 'said at the start and again after the rediscovery').toBe(2);
    expect(discoveries() - before, 'one rediscovery for the one change').toBe(1);
    expect(b.subnet.sm.state).toBe('standby');
    await f.clock.advanceAsync(3000);
    expect(discoveries() - before, 'none while the view stays the master\'s').toBe(1);
    await stopA(1500);
    expect(hasCode(b.sink.lines, 'IBSM-1042')).toBe(true);
    expect(hasHost(b)).toBe(false);
    await b.kill();
  });

  it("started with the master (it saw the fabric before the master's LIDs), the standby rediscovers once its first pull shows the master's view, and a handover is taken over from it", async () => {
    const f = fabric(SPEC2);
    const a = startSm(f, f.cas[0]!, 9);
    const b = startSm(f, f.cas[5]!, 2);
    await f.clock.advanceAsync(3000);
    expect(b.subnet.sm.state).toBe('standby');
    expect(hasCode(b.sink.lines, 'IBSM-1044')).toBe(true);
    expect(withCode(b.sink.lines, 'IBSM-2001').length).toBe(2);
    await handOver(f, a, b, 1000);
    expect(hasCode(b.sink.lines, 'IBSM-1042')).toBe(true);
    expect(smLids(f)).toEqual(new Set([lidOf(f, b)]));
    await b.kill();
  });

  it('without the SA state sync (no view of the master to trust, as from OpenSM) the new master rediscovers the fabric before it claims it', async () => {
    const { b, tap, discovery, stopA } = await pair({ saSync: false });
    await stopA(1000);
    expect(has(b, 'takeover')).toBe(false);
    expect(tap.beforeClaim!).toBeGreaterThan(0.8 * discovery);
    expect(b.subnet.sm.stats.filter((st) => st.kind === 'heavy').length, 'no second sweep to verify').toBe(1);
    await b.kill();
  });
});

describe('SA state across failover', () => {
  it('the standby mirrors groups, services and subscriptions and has them when it takes over: same MGID and MLID, MFTs still forward', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 10);
    const b = startSm(f, f.cas[5]!, 2);
    await f.clock.advanceAsync(2000);
    expect([a.subnet.sm.state, b.subnet.sm.state]).toEqual(['master', 'standby']);
    // Two hosts join a group (one creates it), one registers a service and subscribes to traps.
    const host = async (i: number) => {
      const ep = f.sim.attach(i);
      ep.register(MgmtClass.SubnDirected, 1);
      ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
      ep.register(0x32, 1, { methods: [Method.Send] });
      const rpc = new MadRpc(ep, f.clock, { timeoutMs: 50 });
      let got = 0;
      rpc.onUnsolicited(0x32, () => got++, { method: Method.Send });
      const sa = await drive(f.clock, SaClient.locate(rpc));
      return { ep, rpc, sa, guid: ep.local.portGuid, got: () => got };
    };
    const h1 = await host(f.cas[2]!);
    const h2 = await host(f.cas[7]!);
    const gidOf = (g: bigint): bigint => (0xfe80000000000000n << 64n) | g;
    const rec = { qKey: 0x1234, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 };
    const g = await drive(f.clock, h1.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { ...rec, mgid: 0n, portGid: gidOf(h1.guid) }, MC_CREATE_MASK));
    await drive(f.clock, h2.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { ...rec, mgid: g.mgid, portGid: gidOf(h2.guid) }, MC_CREATE_MASK));
    const svc = { serviceId: 0x1000_0000_0000_0077n, serviceGid: gidOf(h1.guid), servicePKey: 0xffff, serviceLease: 600, serviceName: 'kept' };
    await drive(f.clock, h1.sa.set(SaAttr.ServiceRecord, ServiceRecord, svc, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey', 'serviceLease', 'serviceName')));
    await drive(f.clock, h2.sa.set(SaAttr.InformInfo, InformInfo, { gid: 0n, lidRangeBegin: 0xffff, lidRangeEnd: 0, isGeneric: 1, subscribe: 1, type: 0xffff, trapNumber: 64, qpn: 1, respTimeValue: 18, producerType: 0xffffff }, 0n));
    await f.clock.advanceAsync(1000); // the standby's polls pull the changes
    expect(b.subnet.syncMirror.seq).toBe(a.subnet.syncSource.sequence);
    expect(b.subnet.syncMirror.seq).toBeGreaterThan(0n);

    await a.kill();
    for (let i = 0; i < 300 && b.subnet.sm.state !== 'master'; i++) await f.clock.advanceAsync(10);
    expect(b.subnet.sm.state).toBe('master');
    await f.clock.advanceAsync(200);
    expect(hasCode(b.sink.lines, 'IBSM-5033')).toBe(true);
    const kept = b.subnet.multicast.get(g.mgid);
    expect(kept?.mlid, 'the group keeps its MLID').toBe(g.mlid);
    expect([...kept!.members.keys()].sort()).toEqual([h1.guid, h2.guid].sort());
    // Clients find the new SA through their port's MasterSMLID, as after any SM change.
    const sa2 = await drive(f.clock, SaClient.locate(h2.rpc));
    const found = await drive(f.clock, sa2.getTable(SaAttr.ServiceRecord, ServiceRecord, { serviceId: svc.serviceId }, ServiceRecord.mask('serviceId')));
    expect(found.map((s) => s.serviceName)).toEqual(['kept']);
    expect(found[0]!.serviceLease).toBeGreaterThan(590);
    expect(b.subnet.inform.list().map((s) => [s.subscriberGuid, s.info.trapNumber])).toEqual([[h2.guid, 64]]);
    // The MFTs forward the group under the new master.
    const mad = MadHeader.encode({ baseVersion: 1, mgmtClass: 0x32, classVersion: 1, method: Method.Send, tid: 5n, attrId: 0x10 }, new Uint8Array(256));
    h1.ep.send(mad, { lid: g.mlid, qpn: 0xffffff, qkey: 0x1234 });
    await f.clock.advanceAsync(20);
    expect(h2.got()).toBe(1);
    await b.kill();
  });

  it('a handover to a better ibsm SM waits until it holds the SA state, and the group keeps its MLID', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 1);
    await f.clock.advanceAsync(2000);
    const ep = f.sim.attach(f.cas[3]!);
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    const rpc = new MadRpc(ep, f.clock, { timeoutMs: 50 });
    const sa = await drive(f.clock, SaClient.locate(rpc));
    const g = await drive(f.clock, sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: 0n, portGid: (0xfe80000000000000n << 64n) | ep.local.portGuid, qKey: 1, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK));
    const b = startSm(f, f.cas[6]!, 12);
    await f.clock.advanceAsync(4000);
    expect(b.subnet.sm.state).toBe('master');
    expect(a.subnet.sm.state).toBe('standby');
    // B pulled before A handed over: it restored the group as A had it.
    expect(withCode(b.sink.lines, 'IBSM-5033')[0]).toMatch(/groups=2 members=1/); // the default partition's IPoIB group and this one
    expect(b.subnet.multicast.get(g.mgid)?.mlid).toBe(g.mlid);
    await a.kill();
    await b.kill();
  });

  it('ClientReregister: set by a new master whose SA lost the registrations, not after a failover that kept them', async () => {
    for (const sync of [true, false]) {
      const f = fabric();
      // The hosts' ports support client reregistration (the simulated CAs do not advertise it by default).
      for (const i of f.cas) f.sim.port(i, 1).info.capabilityMask |= PortCap.IsClientReregistrationSupported;
      const rereg = (): number => f.cas.reduce((n, i) => n + f.sim.port(i, 1).stats.clientReregisters, 0);
      const a = startSm(f, f.cas[0]!, 10, { saSync: sync });
      const b = startSm(f, f.cas[5]!, 2, { saSync: sync });
      await f.clock.advanceAsync(2000);
      const first = rereg();
      expect(first, 'the first master tells every client to register').toBe(f.cas.length);
      await a.kill();
      for (let i = 0; i < 300 && b.subnet.sm.state !== 'master'; i++) await f.clock.advanceAsync(10);
      await f.clock.advanceAsync(500);
      expect(b.subnet.sm.state).toBe('master');
      expect(rereg() - first, sync ? 'the state came along: no reregistration' : 'no state: every client again').toBe(sync ? 0 : f.cas.length);
      await b.kill();
    }
  });

  it('a master does not send its SA state to a requester with another SM_Key', async () => {
    const f = fabric();
    const a = startSm(f, f.cas[0]!, 10, { smKey: 0x77n });
    await f.clock.advanceAsync(2000);
    const ep = f.sim.attach(f.cas[4]!);
    const rpc = new MadRpc(ep, f.clock, { timeoutMs: 50 });
    registerSync(rpc);
    const mirror = new SyncMirror();
    const bad = pullSync(rpc, lidOf(f, a), 0x78n, ep.local.portGuid, mirror);
    await expect(drive(f.clock, bad)).rejects.toThrow(/SM_Key differs/);
    const good = await drive(f.clock, pullSync(rpc, lidOf(f, a), 0x77n, ep.local.portGuid, mirror));
    expect(good.full).toBe(true);
    expect(mirror.lids().size, 'the GUID→LID map comes along').toBeGreaterThan(0);
    await a.kill();
  });
});

describe('SmController elections', () => {
  const remote = (guid: bigint, priority: number, state: number): RemoteSm => ({ guid, priority, state, actCount: 0, smKey: 0n, lid: Number(guid), path: [1] });

  it('a master hands over only to a better standby that is current', () => {
    for (const current of [false, true]) {
      const c = new SmController({ sweepIntervalMs: 1000, portGuid: 0x20n, priority: 1, standbySync: () => (current ? 'current' : 'behind') });
      c.handle({ type: 'start' }, 0);
      const h = c.poll(0)!;
      c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, 1);
      c.handle({ type: 'actionDone', action: h, outcome: 'ok' }, 2);
      expect(c.state).toBe('master');
      c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 144' }, 3);
      const h2 = c.poll(3)!;
      c.handle({ type: 'discovered', remotes: [remote(0x30n, 9, SmState.Standby)], ownPortUp: true }, 4);
      expect(c.mayProgram).toBe(!current);
      c.handle({ type: 'actionDone', action: h2, outcome: 'ok' }, 5);
      if (current) {
        expect(c.poll(5)).toEqual({ type: 'sendSmInfo', to: remote(0x30n, 9, SmState.Standby), control: SmInfoControl.Handover, state: SmState.Master });
        expect(c.state).toBe('standby');
      } else {
        expect(c.state).toBe('master');
        expect(c.poll(5)).toBeUndefined();
      }
    }
  });

  it("a standby handed over by its master pulls before it acknowledges, takes over from its view only when that view is the master's, acknowledges a repeated HANDOVER without restarting, and then verifies with a full heavy sweep", () => {
    for (const current of [true, false]) {
      const c = new SmController({ sweepIntervalMs: 1000, portGuid: 0x20n, priority: 1 });
      const m = remote(0x10n, 9, SmState.Master);
      c.handle({ type: 'start' }, 0);
      const h = c.poll(0)!;
      c.handle({ type: 'discovered', remotes: [m], ownPortUp: true }, 1);
      c.handle({ type: 'actionDone', action: h, outcome: 'ok' }, 2);
      expect(c.state).toBe('standby');
      c.handle({ type: 'masterView', guid: m.guid, current }, 3);
      c.handle({ type: 'smInfoSet', control: SmInfoControl.Handover, from: m }, 4);
      const ack = c.poll(4)!;
      expect(ack).toEqual({ type: 'sendSmInfo', to: m, control: SmInfoControl.Acknowledge, state: SmState.Standby, pullFirst: true });
      // The pull before the ACKNOWLEDGE says again whether the view is the master's.
      c.handle({ type: 'masterView', guid: m.guid, current }, 5);
      c.handle({ type: 'actionDone', action: ack, outcome: 'ok' }, 5);
      const sweep = c.poll(5)!;
      expect(sweep).toEqual(current ? { type: 'heavySweep', reason: 'handover', takeover: true } : { type: 'heavySweep', reason: 'handover' });
      // The same HANDOVER again (the old master's retry): one more ACKNOWLEDGE, nothing restarts.
      c.handle({ type: 'smInfoSet', control: SmInfoControl.Handover, from: m }, 6);
      expect(c.handedOverBy, 'not a handover to an SM still discovering').toBeUndefined();
      c.handle({ type: 'discovered', remotes: [{ ...m, state: SmState.NotActive }], ownPortUp: true, fromView: current }, 7);
      expect(c.mayProgram).toBe(true);
      c.handle({ type: 'actionDone', action: sweep, outcome: 'ok' }, 8);
      expect(c.state).toBe('master');
      const ack2 = c.poll(8)!;
      expect(ack2).toEqual({ type: 'sendSmInfo', to: m, control: SmInfoControl.Acknowledge, state: SmState.Standby });
      c.handle({ type: 'actionDone', action: ack2, outcome: 'ok' }, 8);
      const next = c.poll(9);
      if (current) expect(next).toEqual({ type: 'heavySweep', reason: 'verify the takeover', full: true });
      else expect(next).toBeUndefined();
    }
  });

  it('hands over to a standby that never syncs (OpenSM) only after it has been seen for three poll intervals', () => {
    const c = new SmController({ sweepIntervalMs: 1000, portGuid: 0x20n, priority: 1, pollIntervalMs: 100, standbySync: () => 'unknown' });
    c.handle({ type: 'start' }, 0);
    const h = c.poll(0)!;
    c.handle({ type: 'discovered', remotes: [], ownPortUp: true }, 1);
    c.handle({ type: 'actionDone', action: h, outcome: 'ok' }, 2);
    const osm = remote(0x30n, 9, SmState.Standby);
    for (const [t, hands] of [[10, false], [200, false], [320, true]] as const) {
      c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 144' }, t);
      const s = c.poll(t)!;
      c.handle({ type: 'discovered', remotes: [osm], ownPortUp: true }, t);
      expect(c.mayProgram, `at ${t} ms`).toBe(!hands);
      c.handle({ type: 'actionDone', action: s, outcome: 'ok' }, t);
      if (hands) expect(c.poll(t)).toEqual({ type: 'sendSmInfo', to: osm, control: SmInfoControl.Handover, state: SmState.Master });
    }
  });

  it('refuses SMInfo Sets that are not legal in its state or from the sender', async () => {
    const { smInfoSetStatus } = await import('../src/sm/controller.js');
    expect(smInfoSetStatus('standby', SmInfoControl.Handover, SmState.Master)).toBe(0);
    expect(smInfoSetStatus('standby', SmInfoControl.Handover, SmState.Standby)).toBe(7);
    expect(smInfoSetStatus('master', SmInfoControl.Acknowledge, SmState.Standby)).toBe(0);
    expect(smInfoSetStatus('master', SmInfoControl.Acknowledge, SmState.Master)).toBe(7);
    expect(smInfoSetStatus('standby', SmInfoControl.Disable, SmState.Master)).toBe(0);
    expect(smInfoSetStatus('notActive', SmInfoControl.Discover, SmState.Master)).toBe(0);
    expect(smInfoSetStatus('master', 9, SmState.Master)).toBe(7);
  });

  it('a standby takes over after its polls go unanswered; DISABLE makes it not active; DISCOVER wakes it', () => {
    const c = new SmController({ sweepIntervalMs: 1000, portGuid: 0x40n, priority: 1, pollIntervalMs: 100, pollRetries: 2 });
    c.handle({ type: 'start' }, 0);
    const h = c.poll(0)!;
    const m = remote(0x10n, 5, SmState.Master);
    c.handle({ type: 'discovered', remotes: [m], ownPortUp: true }, 1);
    expect(c.mayProgram).toBe(false);
    c.handle({ type: 'actionDone', action: h, outcome: 'ok' }, 2);
    expect(c.state).toBe('standby');
    expect(c.poll(2), 'trap 144 waits for the first answered poll').toBeUndefined();
    const first = c.poll(c.pollAt()!)!;
    expect(first.type).toBe('pollMaster');
    c.handle({ type: 'pollAnswered', remote: m }, 101);
    c.handle({ type: 'actionDone', action: first, outcome: 'ok' }, 101);
    const n = c.poll(101);
    expect(n).toEqual({ type: 'notifyMaster', to: m });
    c.handle({ type: 'actionDone', action: n!, outcome: 'ok' }, 102);
    let now = 102;
    for (let i = 0; i < 3; i++) {
      now = c.pollAt()!;
      const p = c.poll(now)!;
      expect(p.type).toBe('pollMaster');
      c.handle({ type: 'pollFailed' }, now);
      c.handle({ type: 'actionDone', action: p, outcome: 'ok' }, now);
    }
    expect(c.state).toBe('discovering');
    expect(c.poll(now)).toEqual({ type: 'heavySweep', reason: 'master lost' });

    // A master that stopped but still answers SMInfo says NOTACTIVE: that is a miss too, however
    // good its priority (found by test/controller-property.test.ts).
    const e = new SmController({ sweepIntervalMs: 1000, portGuid: 0x40n, priority: 1, pollIntervalMs: 100, pollRetries: 2 });
    e.handle({ type: 'start' }, 0);
    const eh = e.poll(0)!;
    e.handle({ type: 'discovered', remotes: [m], ownPortUp: true }, 1);
    e.handle({ type: 'actionDone', action: eh, outcome: 'ok' }, 2);
    let t = 2;
    for (let i = 0; i < 4 && e.state === 'standby'; i++) {
      t = e.pollAt()!;
      const p = e.poll(t)!;
      if (p.type !== 'pollMaster') {
        e.handle({ type: 'actionDone', action: p, outcome: 'ok' }, t);
        continue;
      }
      e.handle({ type: 'pollAnswered', remote: { ...m, state: SmState.NotActive } }, t);
      e.handle({ type: 'actionDone', action: p, outcome: 'ok' }, t);
    }
    expect(e.state).toBe('discovering');

    const d = new SmController({ sweepIntervalMs: 1000, portGuid: 0x40n, priority: 1 });
    d.handle({ type: 'start' }, 0);
    d.handle({ type: 'smInfoSet', control: SmInfoControl.Disable, from: m }, 1);
    expect(d.state).toBe('notActive');
    d.handle({ type: 'smInfoSet', control: SmInfoControl.Discover, from: m }, 2);
    expect(d.state).toBe('discovering');
  });
});

describe('SMInfo to this SM as IBA 14.4.1 says, by LID and by directed route (#27)', () => {
  /** A fresh master at cas[0] and a requester (not an SM) at cas[1], with the DR path between them. */
  async function rig() {
    const f = fabric();
    const topo = loadFabricSpec(SPEC);
    const a = startSm(f, f.cas[0]!, 5);
    await f.clock.advanceAsync(2000);
    expect(a.subnet.sm.state).toBe('master');
    const ep = f.sim.attach(f.cas[1]!);
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnLid, 1);
    const rpc = new MadRpc(ep, f.clock, { timeoutMs: 50, retries: 1 });
    const leaf = topo.nodes[f.cas[1]!]!.ports[1]!.peer!.node;
    const out = topo.nodes[leaf]!.ports.findIndex((p) => p?.peer?.node === f.cas[0]);
    expect(out).toBeGreaterThan(0);
    const path = [1, out];
    const lid = lidOf(f, a);
    /** Send a Get or a Set; the status and the SMInfo of the answer. */
    const send = async (how: 'lid' | 'dr', method: 'get' | 'set', control: number, payload?: Partial<SMInfo>): Promise<{ status: number; info: SMInfo }> => {
      const data = SMInfo.encode({ guid: ep.local.portGuid, smKey: 1n, actCount: 7, priority: 9, smState: SmState.Master, ...payload }, new Uint8Array(64));
      const p =
        method === 'get'
          ? how === 'lid' ? rpc.smpGet(lid, SmpAttr.SMInfo, 0) : rpc.smpGetDr(path, SmpAttr.SMInfo, 0)
          : how === 'lid' ? rpc.smpSet(lid, SmpAttr.SMInfo, control, data) : rpc.smpSetDr(path, SmpAttr.SMInfo, control, data);
      try {
        return { status: 0, info: SMInfo.decode(await drive(f.clock, p)) };
      } catch (e) {
        const r = (e as { status?: number; response?: Uint8Array }).response;
        if (!r) throw e;
        return { status: (e as { status: number }).status, info: SMInfo.decode(r, SMP_DATA_OFFSET) };
      }
    };
    return { f, a, send, close: async () => (rpc.close(), await ep.close(), await a.kill()) };
  }

  it('SubnGet(SMInfo) is answered with this SM: GUID, priority, state, and its SM_Key (no M_Key: every requester is trusted, as OpenSM)', async () => {
    const r = await rig();
    for (const how of ['lid', 'dr'] as const) {
      const { status, info } = await r.send(how, 'get', 0);
      expect(status).toBe(0);
      expect(info).toMatchObject({ guid: r.a.guid, priority: 5, smState: SmState.Master, smKey: 1n });
    }
    await r.close();
  });

  // control, the sender's state that makes it legal, the state this master is in after it.
  const cases: Array<[string, number, number, string]> = [
    ['HANDOVER', SmInfoControl.Handover, SmState.Master, 'master'],
    ['ACKNOWLEDGE', SmInfoControl.Acknowledge, SmState.Standby, 'master'],
    ['DISABLE', SmInfoControl.Disable, SmState.Master, 'notActive'],
    ['STANDBY', SmInfoControl.Standby, SmState.Master, 'standby'],
    ['DISCOVER', SmInfoControl.Discover, SmState.Master, 'master'], // it discovers again, finds no better SM, and masters
  ];
  for (const [name, control, legalFrom, after] of cases) {
    for (const how of ['lid', 'dr'] as const) {
      it(`SubnSet(SMInfo) ${name} by ${how === 'lid' ? 'LID' : 'directed route'}: taken from a sender it is legal from, refused (status 7) from another state or with another SM_Key`, async () => {
        const wrongState = legalFrom === SmState.Master ? SmState.Standby : SmState.Master;
        const r1 = await rig();
        const refused = await r1.send(how, 'set', control, { smState: wrongState });
        expect(refused.status).toBe(7);
        expect(refused.info.guid).toBe(r1.a.guid);
        const foreign = await r1.send(how, 'set', control, { smState: legalFrom, smKey: 0x99n });
        expect(foreign.status).toBe(7);
        expect(r1.a.subnet.sm.state, 'neither moved it').toBe('master');
        expect(hasCode(r1.a.sink.lines, 'IBSM-1029')).toBe(true);
        await r1.close();
        const r2 = await rig();
        const taken = await r2.send(how, 'set', control, { smState: legalFrom });
        expect(taken.status).toBe(0);
        expect(taken.info.guid).toBe(r2.a.guid);
        await r2.f.clock.advanceAsync(50);
        expect(r2.a.subnet.sm.state).toBe(after);
        if (control === SmInfoControl.Discover) expect(hasCode(r2.a.sink.lines, 'IBSM-1022', 'reason="told to discover"')).toBe(true);
        await r2.close();
      });
    }
  }
});

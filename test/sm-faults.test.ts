/** The SM never gives up on a fabric (issue 11 items 1 and 2), on the in-process fabric: the
 * sweep's own retries (sm/retry.ts), a Set whose answer was lost and whose retry is refused, nodes
 * and links that cannot be read left out and taken in at the next sweep, a first sweep that fails
 * as a whole, and a routing chain of which no engine applies. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadStatusError, MadTimeoutError, RpcClosedError } from '../src/rpc/errors.js';
import { MgmtClass, Method, NodeType, PortState, SmpAttr } from '../src/wire/mad.js';
import { PortInfo } from '../src/wire/sma.js';
import { RetryingSmp, alreadyThere } from '../src/sm/retry.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { FINAL_FALLBACK_ENGINE, ROUTING_FALLBACK_CODE } from '../src/sm/sweep.js';
import { drive } from './helpers/drive.js';
import { checkFabric, smRig } from './helpers/sm-rig.js';
import type { Fabric } from '../src/model/fabric.js';
import { hasCode } from './helpers/log-lines.js';

const ID = { mgmtClass: MgmtClass.SubnDirected, method: Method.Set, attrId: SmpAttr.PortInfo, attrMod: 1, destination: 'DR path 0,1' };
const timeout = (): MadTimeoutError => new MadTimeoutError(ID, 4, 110);
const refused = (): MadStatusError => new MadStatusError(ID, 0x1c, new Uint8Array(256));

function portInfo(state: number, lid = 5): Uint8Array {
  const base = PortInfo.decode(new Uint8Array(64));
  return PortInfo.encode({ ...base, portState: state, lid, masterSmLid: 1, neighborMtu: 4, operationalVls: 4 });
}

/** An SmpClient answering from scripts: each call takes the next outcome of its kind. */
function fake(script: { get?: Array<Uint8Array | Error>; set?: Array<Uint8Array | Error> }): SmpClient & { calls: string[] } {
  const calls: string[] = [];
  const next = (k: 'get' | 'set'): Promise<Uint8Array> => {
    calls.push(k);
    const o = script[k]!.shift();
    if (!o) throw new Error(`no more ${k} outcomes`);
    return o instanceof Error ? Promise.reject(o) : Promise.resolve(o);
  };
  return {
    calls,
    getDr: () => next('get'),
    getLid: () => next('get'),
    setDr: () => next('set'),
    setLid: () => next('set'),
    trap: () => Promise.resolve(),
    sent: 0,
  };
}

describe('RetryingSmp: the sweep\'s retries above MadRpc', () => {
  it('a Set whose answer was lost and whose retry is refused (0x1c) is done when a Get shows it there', async () => {
    const clock = new VirtualClock();
    const want = portInfo(PortState.Armed);
    const f = fake({ set: [timeout(), refused()], get: [portInfo(PortState.Armed)] });
    const r = new RetryingSmp(f, clock);
    const got = await drive(clock, r.setDr([1], SmpAttr.PortInfo, 1, want));
    expect(PortInfo.decode(got).portState).toBe(PortState.Armed);
    expect(f.calls).toEqual(['set', 'set', 'get']);
    expect(r.foundDone).toBe(1);
    expect(r.failures).toEqual({ timeout: 0, status: 0 });
  });

  it('a refused Set whose Get shows it not there fails, counted by reason', async () => {
    const clock = new VirtualClock();
    const f = fake({ set: [refused()], get: [portInfo(PortState.Init)] });
    const r = new RetryingSmp(f, clock);
    await expect(drive(clock, r.setDr([1], SmpAttr.PortInfo, 1, portInfo(PortState.Armed)))).rejects.toBeInstanceOf(MadStatusError);
    expect(r.failures).toEqual({ timeout: 0, status: 1 });
  });

  it('a Get that times out is retried after a doubling pause; one that never answers fails after its rounds', async () => {
    const clock = new VirtualClock();
    const data = new Uint8Array(64).fill(7);
    const f = fake({ get: [timeout(), timeout(), data, timeout(), timeout(), timeout(), timeout()] });
    const r = new RetryingSmp(f, clock, { rounds: 3, backoffMs: 20 });
    const t0 = clock.now();
    expect(await drive(clock, r.getDr([1], SmpAttr.NodeInfo, 0))).toBe(data);
    expect(clock.now() - t0).toBe(20 + 40);
    expect(r.recovered).toBe(1);
    await expect(drive(clock, r.getDr([1], SmpAttr.NodeInfo, 0))).rejects.toBeInstanceOf(MadTimeoutError);
    expect(r.failures.timeout).toBe(1);
    expect(f.calls).toHaveLength(7);
  });

  it('a local failure (the RPC closed) is not retried', async () => {
    const clock = new VirtualClock();
    const f = fake({ get: [new RpcClosedError('x'), new Uint8Array(64)] });
    const r = new RetryingSmp(f, clock);
    await expect(drive(clock, r.getDr([], SmpAttr.NodeInfo, 0))).rejects.toBeInstanceOf(RpcClosedError);
    expect(f.calls).toHaveLength(1);
  });

  it('alreadyThere: PortInfo by state (or beyond) and the SM\'s fields; other attributes by bytes', () => {
    expect(alreadyThere(SmpAttr.PortInfo, portInfo(PortState.Armed), portInfo(PortState.Active))).toBe(true);
    expect(alreadyThere(SmpAttr.PortInfo, portInfo(PortState.Armed), portInfo(PortState.Init))).toBe(false);
    expect(alreadyThere(SmpAttr.PortInfo, portInfo(PortState.Armed, 5), portInfo(PortState.Armed, 6))).toBe(false);
    const block = new Uint8Array(64).fill(3);
    expect(alreadyThere(SmpAttr.LinearForwardingTable, block, block.slice())).toBe(true);
    expect(alreadyThere(SmpAttr.LinearForwardingTable, block, new Uint8Array(64))).toBe(false);
  });
});

const firstCa = (f: Fabric): number => f.nodes.findIndex((n) => n.type !== NodeType.Switch);

describe('the SM carries on through fabric failures', () => {
  it('20 % loss on the SM\'s own link (requests and answers): SUBNET UP in one heavy sweep, every port ACTIVE, routes complete', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=6');
    const at = firstCa(f);
    const r = smRig(f, { attach: at });
    r.sim.setLinkFaults(at, 1, { dropRate: 0.2 });
    const st = await drive(r.clock, r.sm.start());
    expect(r.lines('IBSM-1001')).toHaveLength(1);
    expect(r.sm.stats.filter((s) => s.kind === 'heavy')).toHaveLength(1);
    expect(st.skippedNodes + st.skippedLinks + st.failedWrites).toBe(0);
    expect(r.rpc.stats.timeouts).toBeGreaterThan(0); // the loss was real
    r.sim.setLinkFaults(at, 1, undefined);
    checkFabric(r);
    r.sm.stop();
    // No retry storm: an SMP and its answer each cross the lossy link once, so a try succeeds with
    // probability 0.8² = 0.64 and the sweep should cost about 1/0.64 = 1.56 times the SMPs of a
    // loss-free one, not a multiple of it.
    const clean = smRig(loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=6'), { attach: at });
    await drive(clean.clock, clean.sm.start());
    clean.sm.stop();
    expect(r.rpc.stats.sent / clean.rpc.stats.sent).toBeLessThan(2);
    expect(r.rpc.stats.sent / clean.rpc.stats.sent).toBeGreaterThan(1.2);
  });

  it('loss that goes on after SUBNET UP: light sweeps keep their pace and find nothing changed (no heavy sweep from lost SMPs)', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=6');
    const at = firstCa(f);
    const r = smRig(f, { attach: at, sm: { sweepIntervalMs: 100 } });
    r.sim.setLinkFaults(at, 1, { dropRate: 0.2 });
    await drive(r.clock, r.sm.start());
    const t0 = r.clock.now();
    await r.clock.runUntil(() => r.clock.now() - t0 >= 5000, 20_000);
    const light = r.sm.stats.filter((s) => s.kind === 'light').length;
    expect(light).toBeGreaterThanOrEqual(15); // every 100 ms plus the sweep's own time (lost SMPs wait out a 50 ms timeout)
    expect(r.sm.stats.filter((s) => s.kind === 'heavy')).toHaveLength(1);
    r.sim.setLinkFaults(at, 1, undefined);
    checkFabric(r);
    r.sm.stop();
  });

  it('a first sweep that fails as a whole does not end the SM: it sweeps again and start() resolves once the fabric answers', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2');
    const r = smRig(f);
    r.sim.setFaults({ dropRate: 1 });
    const started = r.sm.start();
    let settled = false;
    void started.then(() => (settled = true), () => (settled = true));
    await r.clock.runUntil(() => r.lines('IBSM-1006').length > 0, 60_000);
    expect(settled).toBe(false);
    expect(r.sm.failedSweeps).toBe(1);
    r.sim.setFaults({});
    await drive(r.clock, started);
    expect(r.lines('IBSM-1001')).toHaveLength(1);
    checkFabric(r);
    r.sm.stop();
  });

  it('a host that never answers is left out (logged with node, GUID, port, LID; counted), the rest comes up, and the next sweep takes it in', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const r = smRig(f, { sm: { sweepIntervalMs: 1000 } });
    const host = f.nodes.findIndex((n, i) => n.type !== NodeType.Switch && i > 0);
    const hostGuid = f.nodes[host]!.guid;
    r.sim.setLinkFaults(host, 1, { dropRate: 1 });
    const st = await drive(r.clock, r.sm.start());
    expect(st.skippedLinks).toBe(1);
    const line = r.lines('IBSM-2003')[0]!;
    const sw = f.nodes[f.nodes[host]!.ports[1]!.peer!.node]!;
    expect(line).toContain(`node=${sw.desc} `);
    expect(line).toMatch(/guid=0x[0-9a-f]+ port=\d+ lid=\d+/);
    expect(r.sm.current!.fabric.nodes.some((n) => n.guid === hostGuid)).toBe(false);
    checkFabric(r); // everything else is up
    expect(r.sm.smpFailures.timeout).toBeGreaterThan(0);
    // The host answers again: the next sweep due is a heavy one and brings it in.
    r.sim.setLinkFaults(host, 1, undefined);
    await r.clock.runUntil(() => r.sm.current!.fabric.nodes.some((n) => n.guid === hostGuid), 10_000);
    expect(r.sm.stats.at(-1)!.skippedLinks).toBe(0);
    checkFabric(r);
    expect(r.sim.portInfo(hostGuid, 1).portState).toBe(PortState.Active);
    r.sm.stop();
  });

  it('--routing ftree on a fat tree that lost a leaf-to-spine link: ftree routes the degraded tree, no table points into the dead port', async () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=3');
    const leaf = f.nodes.find((n) => n.desc.startsWith('sw-l1-1'))!;
    const up = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
    const r = smRig(f, { sm: { routing: ['ftree'] } });
    r.sim.linkDown(leaf.guid, up);
    const st = await drive(r.clock, r.sm.start());
    expect(st.engine).toBe('ftree');
    expect(hasCode(r.sink.lines, ROUTING_FALLBACK_CODE)).toBe(false);
    checkFabric(r);
    const lft = r.sim.lft(leaf.guid);
    expect(lft.includes(up)).toBe(false);
    r.sm.stop();
  });

  it('--routing ftree on a fabric that is no tree (a torus): routes with the deadlock-free fallback, logs the ERROR with its code', async () => {
    const f = loadFabricSpec('gen:torus:3x3,hosts=1');
    const r = smRig(f, { sm: { routing: ['ftree'] } });
    const st = await drive(r.clock, r.sm.start());
    expect(st.engine).toBe(FINAL_FALLBACK_ENGINE);
    const err = r.lines(ROUTING_FALLBACK_CODE)[0]!;
    expect(err).toMatch(/ error /);
    expect(err).toContain('chain=ftree');
    expect(err).toMatch(/reasons=".*ftree/);
    checkFabric(r);
    r.sm.stop();
  });
});

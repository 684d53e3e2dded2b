/** The error-rate policy (issue #33 item 2, sm/health-errors.ts) end to end on the in-process
 * fabric, PerfMgr on: error counters injected again and again at one end of a leaf-to-spine link
 * (the simulated PMA's injection, SimFabric.addPortCounts) get the link isolated (held in INIT at
 * both ends, source 'errors'), routed around, and released after the quiet time once the
 * injection stops; with `warn` it is only logged. The witnesses are the simulated fabric's own:
 * PortState in the SMAs, the LFTs the switches hold (no LID forwarded out of either end; the route
 * verifier over them clean). The SM runs on a virtual clock (PerfMgr every 10 s). */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { cloneFabric } from '../src/model/fabric.js';
import { attachSim } from '../src/api/backend.js';
import { openSm, type IbsmSm } from '../src/api/sm.js';
import { controlTargetOf } from '../src/cli/ops.js';
import { renderMetrics } from '../src/api/metrics.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { formatGuid } from '../src/util/guid.js';
import { DEFAULT_ERROR_QUIET_S, parseErrorPolicy } from '../src/sm/health-errors-policy.js';
import type { HealthChanged } from '../src/events.js';
import { drive } from './helpers/drive.js';
import { hasCode, withCode } from './helpers/log-lines.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

async function rig(healthErrors: string) {
  const clock = new VirtualClock();
  const fabric = loadFabricSpec(SPEC);
  const sim = new SimFabric(cloneFabric(fabric), { clock, seed: 3 });
  const backend = attachSim(sim, fabric, 0, undefined, { sm: true, sa: true }, true);
  const sink = new MemorySink();
  const sm = await openSm({ backend, perfmgr: true, perfmgrIntervalS: 10, sweepIntervalS: 10, healthErrors, guid2lid: 'none', log: new Logger(sink, 'info') });
  const events: HealthChanged[] = [];
  sm.events.on('healthChanged', (h) => events.push(h));
  await drive(clock, sm.start());
  const f = sm.snapshot!.fabric;
  const leaf = f.nodes.find((n) => n.desc === 'sw-l1-1')!;
  const up = leaf.ports.findIndex((p, pn) => pn > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
  const peer = leaf.ports[up]!.peer!;
  const spine = f.nodes[peer.node]!;
  const wait = (ms: number): Promise<void> => drive(clock, new Promise<void>((r) => clock.setTimeout(r, ms)), ms + 60_000);
  return { clock, sim, sm, sink, events, leaf: leaf.guid, up, spine: spine.guid, spinePort: peer.port, wait };
}
type Rig = Awaited<ReturnType<typeof rig>>;

/** LIDs the switch forwards out of `port` (the LFT the simulated switch holds). */
function usedOut(sm: IbsmSm, guid: bigint, port: number): number {
  return [...sm.sim!.lft(guid).subarray(1, sm.snapshot!.maxLid + 1)].filter((p) => p === port).length;
}

function verifierClean(sm: IbsmSm): void {
  const snap = sm.snapshot!;
  const lfts = new Map<number, Uint8Array>();
  snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && lfts.set(i, sm.sim!.lft(n.guid)));
  const rep = verifyRoutes(snap.fabric, lfts);
  expect(rep.failures).toEqual([]);
  expect(rep.loopEntries).toBe(0);
}

/** Inject symbol errors (50: 600 to 900 a minute between two PerfMgr readings 10 s apart) and
 * link error recoveries at the leaf's end every 5 s for `ms`. */
async function inject(r: Rig, ms: number, until?: () => boolean, symbolErrors = 50): Promise<void> {
  for (let t = 0; t < ms && !until?.(); t += 5000) {
    r.sim.addPortCounts(r.leaf, r.up, { symbolErrors, linkErrorRecovery: 2 });
    await r.wait(5000);
  }
}

const held = (r: Rig): string[] => r.sm.subnet.sm.health.state.isolated.map((i) => `${i.kind} ${i.cls} ${i.source}`);

describe('error-rate policy: parsing', () => {
  it('parses COUNTER=RATE[,...]:ACTION[:QUIET_S] by perfquery label or field name', () => {
    expect(parseErrorPolicy('SymbolErrorCounter=200,linkDowned=3:isolate:120')).toEqual({
      limits: [
        { counter: 'symbolErrors', label: 'SymbolErrorCounter', perMin: 200 },
        { counter: 'linkDowned', label: 'LinkDownedCounter', perMin: 3 },
      ],
      action: 'isolate',
      quietMs: 120_000,
    });
    const p = parseErrorPolicy('PortRcvErrors=0.5, PortXmitDiscards=10 : warn');
    expect(p.limits.map((l) => [l.label, l.perMin])).toEqual([['PortRcvErrors', 0.5], ['PortXmitDiscards', 10]]);
    expect(p.quietMs).toBe(DEFAULT_ERROR_QUIET_S * 1000);
    expect(parseErrorPolicy('LinkErrorRecoveryCounter=1:isolate:0').quietMs).toBe(0);
  });
  it('refuses bad input with a RangeError an operator can act on', () => {
    const bad = (t: string, re: RegExp): void => {
      expect(() => parseErrorPolicy(t)).toThrow(RangeError);
      expect(() => parseErrorPolicy(t)).toThrow(re);
    };
    bad('SymbolErrorCounter=200', /expected COUNTER=RATE.*:warn\|isolate/);
    bad('SymbolErrorCounter=200:drop', /expected COUNTER=RATE/);
    bad('PortXmitData=5:warn', /no error counter "PortXmitData" \(one of SymbolErrorCounter, .*PortRcvErrors/);
    bad('SymbolErrorCounter=0:warn', /rate of SymbolErrorCounter is more than 0/);
    bad('SymbolErrorCounter:warn', /"SymbolErrorCounter" is not COUNTER=RATE/);
    bad('symbolErrors=1,SymbolErrorCounter=2:isolate', /SymbolErrorCounter given twice/);
  });
  it('--health-errors is checked at start: a bad one is refused before the SM runs', async () => {
    const { runCli } = await import('./helpers/cli.js');
    const r = await runCli(['run', '--sim', SPEC, '--perfmgr', '--health-errors', 'Bogus=1:isolate', '--once']);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/health error policy "Bogus=1:isolate": no error counter "Bogus"/);
  });
});

describe('error-rate policy on the running SM (PerfMgr on)', () => {
  it('isolate: the erroring link is held in INIT at both ends, routed around, kept while errors rise, released after the quiet time', async () => {
    const r = await rig('SymbolErrorCounter=60,LinkErrorRecoveryCounter=5:isolate:60');
    try {
      await r.wait(25_000); // PerfMgr's first readings: no rate yet
      expect(usedOut(r.sm, r.leaf, r.up)).toBeGreaterThan(0); // the uplink carried routes before
      expect(r.sm.subnet.sm.health.state.isolated).toEqual([]);
      await inject(r, 60_000, () => held(r).length > 0);
      await r.wait(5000); // the heavy sweep that applies it
      expect(held(r)).toEqual(['link error-rate errors']);
      const iso = r.events.find((e) => e.isolated.length)!;
      expect(iso.isolated[0]).toMatchObject({ kind: 'link', class: 'error-rate', source: 'errors' });
      expect(iso.isolated[0]!.reason).toMatch(/SymbolErrorCounter \d+(\.\d)?\/min \(over 60\)/);
      expect(withCode(r.sink.lines, 'IBSM-2070').length).toBe(1);
      expect(hasCode(r.sink.lines, 'IBSM-2072')).toBe(true);
      // held in INIT at both ends; no LID forwarded out of either end; the verifier clean
      expect(r.sim.portInfo(r.leaf, r.up).portState).toBe(PortState.Init);
      expect(r.sim.portInfo(r.spine, r.spinePort).portState).toBe(PortState.Init);
      expect(usedOut(r.sm, r.leaf, r.up)).toBe(0);
      expect(usedOut(r.sm, r.spine, r.spinePort)).toBe(0);
      verifierClean(r.sm);
      const metrics = renderMetrics(r.sm.subnet, r.sm.backend.rpc, r.sm.perf);
      expect(metrics).toMatch(/^ibsm_error_rate_links 1$/m);
      expect(metrics).toMatch(/^ibsm_isolated\{kind="link"\} 1$/m);
      const dump = controlTargetOf(r.sm).dump('health') as string;
      expect(dump).toContain(formatGuid(r.leaf));
      expect(dump).toMatch(/errors/);
      // PerfMgr keeps reading the isolated link's switch ends: errors still rising keep it held past the quiet time
      await inject(r, 90_000);
      expect(held(r)).toEqual(['link error-rate errors']);
      expect(hasCode(r.sink.lines, 'IBSM-2071')).toBe(false);
      // the injection stops: released after 60 s with no rise, ACTIVE and routed again
      await r.wait(90_000);
      expect(r.sm.subnet.sm.health.state.isolated).toEqual([]);
      expect(hasCode(r.sink.lines, 'IBSM-2071')).toBe(true);
      expect(r.events.some((e) => e.released.some((i) => i.source === 'errors'))).toBe(true);
      expect(r.sim.portInfo(r.leaf, r.up).portState).toBe(PortState.Active);
      expect(usedOut(r.sm, r.leaf, r.up)).toBeGreaterThan(0);
      verifierClean(r.sm);
      expect(withCode(r.sink.lines, 'IBSM-2070').length).toBe(1);
      expect(renderMetrics(r.sm.subnet, r.sm.backend.rpc, r.sm.perf)).toMatch(/^ibsm_error_rate_links 0$/m);
    } finally {
      await r.sm.stop();
    }
  }, 120_000);

  it('warn: the erroring link is named once, not isolated, still ACTIVE and routed', async () => {
    const r = await rig('SymbolErrorCounter=60:warn:60');
    try {
      await r.wait(25_000);
      await inject(r, 60_000);
      const lines = withCode(r.sink.lines, 'IBSM-2070');
      expect(lines.length).toBe(1);
      expect(lines[0]).toContain('action=warn');
      expect(lines[0]).toContain(formatGuid(r.leaf));
      expect(r.sm.subnet.sm.health.state.isolated).toEqual([]);
      expect(r.events).toEqual([]);
      expect(renderMetrics(r.sm.subnet, r.sm.backend.rpc, r.sm.perf)).toMatch(/^ibsm_error_rate_links 1$/m);
      expect(r.sim.portInfo(r.leaf, r.up).portState).toBe(PortState.Active);
      expect(usedOut(r.sm, r.leaf, r.up)).toBeGreaterThan(0);
      verifierClean(r.sm);
    } finally {
      await r.sm.stop();
    }
  }, 120_000);

  it('released by hand (ibsm release): ACTIVE and routed at once, not isolated again while quiet', async () => {
    const r = await rig('SymbolErrorCounter=60:isolate:0');
    try {
      await r.wait(25_000);
      await inject(r, 60_000, () => held(r).length > 0);
      await r.wait(5000);
      expect(held(r)).toEqual(['link error-rate errors']);
      expect(r.sim.portInfo(r.leaf, r.up).portState).toBe(PortState.Init);
      const out = (await drive(r.clock, Promise.resolve(controlTargetOf(r.sm).isolate(`${formatGuid(r.leaf)}:${r.up}`, true)))) as { released: string[] };
      expect(out.released[0]).toMatch(/\(error-rate, errors\)$/);
      expect(hasCode(r.sink.lines, 'IBSM-2069')).toBe(true);
      expect(r.sim.portInfo(r.leaf, r.up).portState).toBe(PortState.Active);
      await r.wait(60_000); // quiet: PerfMgr's next sweeps see no rise
      expect(r.sm.subnet.sm.health.state.isolated).toEqual([]);
      expect(usedOut(r.sm, r.leaf, r.up)).toBeGreaterThan(0);
      verifierClean(r.sm);
      expect(hasCode(r.sink.lines, 'IBSM-2071')).toBe(false); // QUIET_S 0: never released by time
    } finally {
      await r.sm.stop();
    }
  }, 120_000);

  it('without --perfmgr the policy says it has nothing to judge', async () => {
    const sink = new MemorySink();
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, healthErrors: 'PortRcvErrors=10:isolate', log: new Logger(sink, 'info') });
    try {
      expect(sm.subnet.sm.health.errors?.policy.limits.map((l) => l.label)).toEqual(['PortRcvErrors']);
      expect(hasCode(sink.lines, 'IBSM-2073')).toBe(true);
    } finally {
      await sm.stop();
    }
  });

  it('errors below the rate: nothing logged, nothing isolated', async () => {
    const r = await rig('SymbolErrorCounter=600:isolate');
    try {
      await r.wait(25_000);
      await inject(r, 40_000, undefined, 5); // 5 each 5 s: 60 to 90 a minute, under 600
      expect(hasCode(r.sink.lines, 'IBSM-2070')).toBe(false);
      expect(r.sm.subnet.sm.health.state.isolated).toEqual([]);
    } finally {
      await r.sm.stop();
    }
  }, 120_000);
});

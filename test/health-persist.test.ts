/** The health state across a restart (issue #33 item 2, sm/health-store.ts and
 * api/health-store-file.ts): an SM isolates a link by hand (`ibsm isolate`), stops; another starts
 * with the same guid2lid directory and holds the link isolated from its first sweep (INIT in the
 * SMAs, no LFT entry out of it), `ibsm dump health` showing the time it was isolated first; the
 * release is kept too. A state file that cannot be used is logged and the SM starts. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSm, type IbsmSm } from '../src/api/sm.js';
import { serveControl } from '../src/cli/control.js';
import { controlTargetOf } from '../src/cli/ops.js';
import { HEALTH_STATE_FILE } from '../src/api/health-store-file.js';
import { attachSim, type Backend } from '../src/api/backend.js';
import { loadFabricSpec } from '../src/model/load.js';
import { SimFabric } from '../src/sim/fabric.js';
import { FlapTracker } from '../src/sm/health-flap.js';
import { ErrorRateTracker, parseErrorPolicy } from '../src/sm/health-errors.js';
import { PacedClock } from '../src/util/paced-clock.js';
import { formatHealthState, parseHealthState } from '../src/sm/health-store.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { NodeType, PortState } from '../src/wire/mad.js';
import { hasCode } from './helpers/log-lines.js';
import { runCli } from './helpers/cli.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

async function withControl<T>(sm: IbsmSm, dir: string, fn: (sock: string) => Promise<T>): Promise<T> {
  const sock = path.join(dir, `sm-${Math.random().toString(36).slice(2)}.sock`);
  const server = await serveControl(sock, controlTargetOf(sm), new Logger(new MemorySink()));
  try {
    return await fn(sock);
  } finally {
    server.close();
  }
}

/** LFT entries (LIDs 1..maxLid) of the leaf out of its port `up`. */
function outOf(sm: IbsmSm, guid: bigint, up: number): number {
  return [...sm.sim!.lft(guid).subarray(1, sm.snapshot!.maxLid + 1)].filter((p) => p === up).length;
}

describe('health state across a restart', () => {
  it('format and parse: every source but the expected topology, since as wall-clock time', () => {
    const a = { guid: 0x1234n, desc: 'sw "a"', port: 3, type: 2 };
    const b = { guid: 0xabcdn, desc: 'sw-b', port: 1 };
    const iso = [
      { key: 'k1', kind: 'link' as const, a, b, cls: 'manual', source: 'manual', reason: 'isolated by hand', since: 10 },
      { key: 'k2', kind: 'node' as const, a: { ...b, port: 0 }, cls: 'unresponsive', source: 'unresponsive', reason: 'SMPs timed out', since: 20 },
      { key: 'k3', kind: 'link' as const, a, b, cls: 'wrong-port', source: 'topology', reason: 'x', since: 30 },
    ];
    const text = formatHealthState(iso, (s) => s + 1_000_000);
    expect(parseHealthState(text)).toEqual(iso.slice(0, 2).map((i) => ({ ...i, since: i.since + 1_000_000 })));
    expect(() => parseHealthState('{"version": 1, "isolated": [{"kind": "port"}]}', 'F')).toThrow(/^F: isolation 1: kind is node or link/);
    expect(() => parseHealthState('nope', 'F')).toThrow(/^F: not JSON/);
  });

  it('a flapping isolation read back is held and released after the quiet time from the start (the policy on)', () => {
    const f = loadFabricSpec(SPEC);
    const t = new FlapTracker({ count: 3, windowMs: 10_000, action: 'isolate', quietMs: 5000 });
    const held = new Set(['some-link-key']);
    expect(t.observe(f, 1000, held).released).toEqual([]);
    expect(t.isFlapping('some-link-key')).toBe(true);
    expect(t.observe(f, 5000, held).released).toEqual([]);
    expect(t.observe(f, 6000, held).released).toEqual(['some-link-key']);
  });

  it('an error-rate isolation read back is held and released after the quiet time from the start (the policy on)', () => {
    const f = loadFabricSpec(SPEC);
    const t = new ErrorRateTracker(parseErrorPolicy('SymbolErrorCounter=200:isolate:5'));
    const a = { guid: 0x1n, desc: 'a', port: 1 };
    const held = [{ key: 'some-link-key', kind: 'link' as const, a, b: { ...a, guid: 0x2n }, cls: 'error-rate', source: 'errors', reason: 'r', since: 0 }];
    expect(t.observe(f, [], 1000, held).released).toEqual([]);
    expect(t.observe(f, [], 5000, held).released).toEqual([]);
    expect(t.observe(f, [], 6000, held).released).toEqual(['some-link-key']);
  });

  it('a link isolated by hand stays isolated after a restart, with the time it was isolated first; its release is kept', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-health-persist-'));
    const guid2lid = path.join(dir, 'guid2lid');
    const file = path.join(dir, HEALTH_STATE_FILE);
    const opts = { sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid };
    const sink1 = new MemorySink();
    const sm1 = await openSm({ ...opts, log: new Logger(sink1, 'info') });
    let leafGuid = 0n;
    let up = 0;
    const before = Date.now();
    try {
      await sm1.start();
      const f = sm1.snapshot!.fabric;
      const leaf = f.nodes.find((n) => n.desc === 'sw-l1-1')!;
      leafGuid = leaf.guid;
      up = leaf.ports.findIndex((p, pn) => pn > 0 && p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch);
      expect(outOf(sm1, leafGuid, up)).toBeGreaterThan(0);
      await withControl(sm1, dir, async (sock) => {
        expect((await runCli(['isolate', `sw-l1-1:${up}`, '--socket', sock])).code).toBe(0);
      });
      expect(sm1.sim!.portInfo(leafGuid, up).portState).toBe(PortState.Init);
    } finally {
      await sm1.stop();
    }
    // on disk: the isolation, since the wall-clock time it was made
    const saved = parseHealthState(readFileSync(file, 'utf8'));
    expect(saved.map((i) => [i.kind, i.source])).toEqual([['link', 'manual']]);
    expect(saved[0]!.since).toBeGreaterThanOrEqual(before - 1);
    expect(saved[0]!.since).toBeLessThanOrEqual(Date.now() + 1);
    // made an hour earlier (the file as a long-running SM would have left it)
    writeFileSync(file, formatHealthState([{ ...saved[0]!, since: saved[0]!.since - 3_600_000 }], (s) => s));

    const sink2 = new MemorySink();
    const sm2 = await openSm({ ...opts, log: new Logger(sink2, 'info') });
    try {
      await sm2.start();
      expect(hasCode(sink2.lines, 'IBSM-2078')).toBe(true);
      expect(sm2.subnet.sm.health.state.isolated.map((i) => [i.kind, i.source, i.a.guid === leafGuid || i.b?.guid === leafGuid])).toEqual([['link', 'manual', true]]);
      // held from the first sweep: INIT, no LFT entry out of it
      expect(sm2.sim!.portInfo(leafGuid, up).portState).toBe(PortState.Init);
      expect(outOf(sm2, leafGuid, up)).toBe(0);
      await withControl(sm2, dir, async (sock) => {
        const dump = (await runCli(['dump', 'health', '--socket', sock])).out;
        expect(dump).toMatch(/isolated: 1\n {2}link "sw-l1-1" .* source=manual held=(3599|36[0-5][0-9])s/);
        expect((await runCli(['release', `sw-l1-1:${up}`, '--socket', sock])).code).toBe(0);
      });
      expect(sm2.sim!.portInfo(leafGuid, up).portState).toBe(PortState.Active);
    } finally {
      await sm2.stop();
    }
    expect(parseHealthState(readFileSync(file, 'utf8'))).toEqual([]);
  }, 120_000);

  it('an unresponsive spine stays isolated after a restart and is not waited for from the first sweep (the ports it is reached through are kept)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-health-unresp-'));
    const opts = { sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid: path.join(dir, 'guid2lid'), healthUnresponsive: '2:isolate:600' };
    // the in-process fabric with a short SMP timeout (a timed-out SMP costs 12 tries of it)
    const backend = (): Backend => {
      const f = loadFabricSpec(SPEC, { seed: 1 });
      return attachSim(new SimFabric(structuredClone(f), { clock: new PacedClock(), seed: 1 }), f, 0, undefined, { sm: true, sa: true, rpc: { timeoutMs: 20 } }, true);
    };
    const spineOf = (sm: IbsmSm): bigint => {
      const f = sm.snapshot!.fabric;
      const sw = (i: number): boolean => f.nodes[i]!.type === NodeType.Switch;
      return f.nodes.find((n, i) => sw(i) && n.ports.every((p) => !p?.peer || sw(p.peer.node)))!.guid;
    };
    const sm1 = await openSm({ ...opts, backend: backend(), log: new Logger(new MemorySink(), 'warn') });
    let spine = 0n;
    try {
      await sm1.start();
      spine = spineOf(sm1);
      sm1.sim!.node(spine).smaSilent = true;
      await sm1.subnet.sm.sweep('heavy');
      await sm1.subnet.sm.sweep('heavy');
      expect(sm1.subnet.sm.health.state.isolated.map((i) => [i.a.guid, i.source])).toEqual([[spine, 'unresponsive']]);
      expect(sm1.subnet.sm.smpFailures.timeout).toBeGreaterThan(0);
    } finally {
      await sm1.stop();
    }
    const saved = parseHealthState(readFileSync(path.join(dir, HEALTH_STATE_FILE), 'utf8'));
    expect(saved[0]!.via?.length).toBe(3); // the three leaves' ports toward it
    const sm2 = await openSm({ ...opts, backend: backend(), log: new Logger(new MemorySink(), 'warn') });
    try {
      sm2.sim!.node(spine).smaSilent = true; // still dead
      await sm2.start();
      expect(sm2.subnet.sm.health.state.isolated.map((i) => [i.a.guid, i.source])).toEqual([[spine, 'unresponsive']]);
      expect(sm2.subnet.sm.smpFailures.timeout).toBe(0); // its discovery did not wait for it
      expect(sm2.snapshot!.fabric.nodes.some((n) => n.guid === spine)).toBe(false);
    } finally {
      await sm2.stop();
    }
  }, 120_000);

  it('a state file that cannot be used is logged; the SM starts with nothing isolated', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-health-bad-'));
    writeFileSync(path.join(dir, HEALTH_STATE_FILE), '{"version": 1, "isolated": [{"kind": "port"}]}');
    const sink = new MemorySink();
    const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid: path.join(dir, 'guid2lid'), log: new Logger(sink, 'info') });
    try {
      await sm.start();
      expect(hasCode(sink.lines, 'IBSM-2079')).toBe(true);
      expect(sm.subnet.sm.health.state.isolated).toEqual([]);
    } finally {
      await sm.stop();
    }
    // no guid2lid file: no state file either
    const sm0 = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, guid2lid: 'none', log: new Logger(new MemorySink(), 'warn') });
    try {
      await sm0.start();
      expect(sm0.healthFile).toBeUndefined();
    } finally {
      await sm0.stop();
    }
  }, 120_000);
});

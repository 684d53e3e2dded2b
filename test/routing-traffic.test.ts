/** The traffic evaluator (routing/traffic.ts, issue #35) against a witness written here: its own
 *  walk of the LFTs, its own link rates from the ports' widths and speeds, and max-min fairness by
 *  water-filling (all unfrozen flows raised by the least headroom per flow of any link, the flows
 *  of full links frozen), where the evaluator fills bottleneck by bottleneck from a heap. Plus
 *  hand-computed cases and the CLI. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { routeWithFallback } from '../src/routing/index.js';
import { evaluateTraffic, parseTrafficPattern, PhaseSolver, TrafficError, TrafficNetwork, type TrafficPattern } from '../src/routing/traffic.js';
import { routeMain } from '../src/cli/route.js';
import { Rng } from '../src/util/rng.js';

function routed(spec: string, engine: string): { f: Fabric; lfts: Map<number, Uint8Array> } {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc: 0 });
  return { f, lfts: routeWithFallback(f, [engine], { lmc: 0 }).result.lfts };
}

// ---- the witness ------------------------------------------------------------------------------
const LANES: Record<string, number> = { '1x': 1, '2x': 2, '4x': 4, '8x': 8, '12x': 12 };
const LANE: Record<string, number> = { SDR: 2.5, DDR: 5, QDR: 10, FDR: 14, EDR: 25, HDR: 50, NDR: 100 };

/** Gb/s of the link out of (node, port): the narrower width and slower speed of its two ends. */
function witnessRate(f: Fabric, node: number, port: number): number {
  const a = f.nodes[node]!.ports[port]!;
  const b = f.nodes[a.peer!.node]!.ports[a.peer!.port]!;
  return Math.min(LANES[a.width ?? '4x']!, LANES[b.width ?? '4x']!) * Math.min(LANE[a.speed ?? 'SDR']!, LANE[b.speed ?? 'SDR']!);
}

/** The links ("node:port", leaving that port) from a host port to the host owning `dlid`. */
function witnessPath(f: Fabric, lfts: Map<number, Uint8Array>, from: { node: number; port: number }, to: { node: number; lid: number }): string[] | undefined {
  const out: string[] = [];
  let node = from.node;
  let port = from.port;
  for (let hop = 0; hop < 64; hop++) {
    out.push(`${node}:${port}`);
    const peer = f.nodes[node]!.ports[port]!.peer!;
    if (peer.node === to.node) return out;
    node = peer.node;
    port = lfts.get(node)![to.lid]!;
    if (port === 255 || port === 0) return undefined;
  }
  return undefined;
}

/** Max-min fair rates by water-filling. */
function witnessMaxMin(paths: string[][], cap: (link: string) => number): number[] {
  const rate = paths.map(() => 0);
  const frozen = paths.map((p) => p.length === 0);
  while (frozen.some((x) => !x)) {
    const used = new Map<string, number>();
    const n = new Map<string, number>();
    paths.forEach((p, i) => {
      for (const l of p) {
        used.set(l, (used.get(l) ?? 0) + rate[i]!);
        if (!frozen[i]) n.set(l, (n.get(l) ?? 0) + 1);
      }
    });
    let delta = Infinity;
    for (const [l, k] of n) delta = Math.min(delta, (cap(l) - used.get(l)!) / k);
    paths.forEach((_, i) => !frozen[i] && (rate[i]! += delta));
    const load = new Map<string, number>();
    paths.forEach((p, i) => p.forEach((l) => load.set(l, (load.get(l) ?? 0) + rate[i]!)));
    paths.forEach((p, i) => {
      if (!frozen[i] && p.some((l) => load.get(l)! >= cap(l) - 1e-9)) frozen[i] = true;
    });
  }
  return rate;
}

/** The witness's normalised rates of the flows src[i] → dst[i] (host indices of `net`). */
function witness(f: Fabric, lfts: Map<number, Uint8Array>, net: TrafficNetwork, src: number[], dst: number[]): number[] {
  const paths = src.map((s, i) => witnessPath(f, lfts, net.hosts[s]!, net.hosts[dst[i]!]!));
  const cap = (l: string): number => {
    const [node, port] = l.split(':').map(Number);
    return witnessRate(f, node!, port!);
  };
  const r = witnessMaxMin(paths.map((p) => p ?? []), cap);
  return r.map((x, i) => (paths[i] ? x / cap(`${net.hosts[src[i]!]!.node}:${net.hosts[src[i]!]!.port}`) : 0));
}

function evaluator(net: TrafficNetwork, src: number[], dst: number[]): number[] {
  const out = new Float64Array(src.length);
  new PhaseSolver(net).solve(Int32Array.from(src), Int32Array.from(dst), src.length, out, 0);
  return [...out];
}

describe('traffic evaluator == the brute-force max-min witness', () => {
  const cases: Array<[string, string]> = [
    ['gen:fattree2:leaves=4,spines=2,hosts=3', 'minhop'],
    ['gen:fattree2:leaves=4,spines=2,hosts=3', 'ftree'],
    ['gen:fattree3:pods=2,leaves=2,spines=2,cores=2,hosts=3', 'updn'],
    ['gen:random:switches=8,degree=3,hosts=2,seed=3', 'minhop'],
    ['gen:torus:3x3,hosts=2', 'dfsssp'],
    // mixed widths and speeds: 12x QDR spines, 4x DDR leaves' host side, 1x hosts on some
    ['gen:fattree2:leaves=3,spines=2,hosts=3,width=12x,speed=QDR,leafwidth=4x,leafspeed=DDR', 'minhop'],
    ['gen:dragonfly:a=3,p=2,h=1', 'updn'],
  ];
  for (const [spec, engine] of cases) {
    it(`${spec} (${engine}): random flow sets and every shift`, () => {
      const { f, lfts } = routed(spec, engine);
      const net = new TrafficNetwork(f, lfts);
      const N = net.hosts.length;
      const rng = new Rng(7);
      const sets: Array<[number[], number[]]> = [];
      for (let k = 1; k < N; k++) sets.push([[...Array(N).keys()], [...Array(N).keys()].map((i) => (i + k) % N)]);
      for (let t = 0; t < 6; t++) {
        const src: number[] = [];
        const dst: number[] = [];
        for (let i = 0; i < 2 + rng.int(3 * N); i++) {
          const a = rng.int(N);
          const b = (a + 1 + rng.int(N - 1)) % N;
          src.push(a);
          dst.push(b);
        }
        sets.push([src, dst]);
      }
      for (const [src, dst] of sets) {
        const w = witness(f, lfts, net, src, dst);
        const e = evaluator(net, src, dst);
        e.forEach((x, i) => expect(x).toBeCloseTo(w[i]!, 9));
      }
    });
  }

  it('the mean of ebb and alltoall is the witness mean over the same phases', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=4,spines=2,hosts=3', 'minhop');
    const net = new TrafficNetwork(f, lfts);
    const N = net.hosts.length;
    let sum = 0;
    for (let k = 1; k < N; k++) sum += witness(f, lfts, net, [...Array(N).keys()], [...Array(N).keys()].map((i) => (i + k) % N)).reduce((a, b) => a + b, 0);
    const s = evaluateTraffic(f, lfts, { kind: 'alltoall' }, { samples: 1000 });
    expect(s.phases).toBe(N - 1);
    expect(s.flows).toBe(N * (N - 1));
    expect(s.mean).toBeCloseTo(sum / (N * (N - 1)), 9);
    const e = evaluateTraffic(f, lfts, { kind: 'ebb' }, { samples: 5, seed: 3 });
    expect(e.flows).toBe(5 * N);
    expect(e.min).toBeLessThanOrEqual(e.p1);
    expect(e.p1).toBeLessThanOrEqual(e.p50);
  });
});

describe('hand-computed cases', () => {
  const flows = (f: Fabric, pairs: Array<[string, string]>): TrafficPattern =>
    parseTrafficPattern('hand.flows', () => pairs.map(([a, b]) => `"${a}" "${b}"`).join('\n'));

  it('one bottleneck link: three hosts of a leaf to three of the other share its one up-link', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=2,spines=1,hosts=3', 'minhop');
    const p = flows(f, [['host-0 HCA-1', 'host-3 HCA-1'], ['host-1 HCA-1', 'host-4 HCA-1'], ['host-2 HCA-1', 'host-5 HCA-1']]);
    const s = evaluateTraffic(f, lfts, p);
    expect(s).toMatchObject({ flows: 3, unrouted: 0 });
    expect(s.min).toBeCloseTo(1 / 3, 12);
    expect(s.mean).toBeCloseTo(1 / 3, 12);
    // A fourth flow inside leaf 0 does not cross that link: it gets its host's full rate... but
    // host-0 now sends twice (to host-3 and host-1): its link is shared by two flows.
    const q = flows(f, [['host-0 HCA-1', 'host-3 HCA-1'], ['host-1 HCA-1', 'host-4 HCA-1'], ['host-2 HCA-1', 'host-5 HCA-1'], ['host-0 HCA-1', 'host-1 HCA-1']]);
    const t = evaluateTraffic(f, lfts, q);
    expect(t.min).toBeCloseTo(1 / 3, 12);
    expect(t.mean).toBeCloseTo((3 * (1 / 3) + 2 / 3) / 4, 12);
  });

  it('link rates count: a 12x up-link carries three 4x hosts at full rate', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=2,spines=1,hosts=3,width=12x,hostwidth=4x', 'minhop');
    const s = evaluateTraffic(f, lfts, { kind: 'shift', k: 3 });
    expect(s.min).toBe(1);
    const slow = routed('gen:fattree2:leaves=2,spines=1,hosts=3', 'minhop');
    expect(evaluateTraffic(slow.f, slow.lfts, { kind: 'shift', k: 3 }).mean).toBeCloseTo(1 / 3, 12);
  });

  it('a non-blocking fat tree: a shift by a leaf gets full bandwidth (ftree)', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=4,spines=2,hosts=2', 'ftree');
    const s = evaluateTraffic(f, lfts, { kind: 'shift', k: 2 });
    expect(s).toMatchObject({ min: 1, p1: 1, p50: 1, mean: 1, flows: 8 });
  });

  for (const spec of ['gen:fattree2:radix=8', 'gen:fattree2:leaves=4,spines=2,hosts=2', 'gen:fattree3:radix=8']) {
    it(`${spec}, non-blocking: ftree carries every shift at full bandwidth (all-to-all min 1)`, () => {
      const { f, lfts } = routed(spec, 'ftree');
      const s = evaluateTraffic(f, lfts, { kind: 'alltoall' }, { samples: 10_000 });
      expect(s.phases).toBe(s.hosts - 1);
      expect(s).toMatchObject({ min: 1, mean: 1 });
    });
  }

  it('a route that does not arrive is a flow at bandwidth 0, counted', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=2,spines=1,hosts=2', 'minhop');
    const net = new TrafficNetwork(f, lfts);
    const h3 = net.hosts[3]!;
    for (const t of lfts.values()) t[h3.lid] = 255;
    const s = evaluateTraffic(f, lfts, { kind: 'shift', k: 1 });
    expect(s.unrouted).toBe(1);
    expect(s.min).toBe(0);
  });

  it('flows files: LIDs, GUIDs and names; errors name the line', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=2,spines=1,hosts=3', 'minhop');
    const net = new TrafficNetwork(f, lfts);
    const [a, b] = [net.hosts[0]!, net.hosts[4]!];
    const p = parseTrafficPattern('x', () => `# comment\n${a.lid} 0x${b.guid.toString(16)}\n"${b.desc}" ${a.lid}\n`);
    expect(evaluateTraffic(f, lfts, p)).toMatchObject({ flows: 2, min: 1 });
    expect(() => evaluateTraffic(f, lfts, parseTrafficPattern('y', () => '1 2 3\n'))).toThrow(/y:1: expected "SRC DST"/);
    expect(() => evaluateTraffic(f, lfts, parseTrafficPattern('z', () => '\n999 1\n'))).toThrow(TrafficError);
    expect(() => evaluateTraffic(f, lfts, parseTrafficPattern('z', () => '\n999 1\n'))).toThrow(/z:2: LID 999 is not a CA or router port/);
    expect(() => parseTrafficPattern('shift:x', () => '')).toThrow(/shift:K/);
  });
});

describe('ibsm route --traffic', () => {
  async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await routeMain(argv, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
    return { code, out, err };
  }

  it('prints each pattern next to the verifier figures, and JSON', async () => {
    const r = await run(['gen:fattree2:leaves=4,spines=2,hosts=2', '--engine', 'ftree', '--traffic', 'ebb,alltoall,shift:2', '--traffic-samples', '20']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^routes per link /m);
    expect(r.out).toMatch(/^traffic ebb\s+min 0\.\d{3}\s+p1 \S+\s+p50 \S+\s+mean \S+\s+\(20 phases, 160 flows over 8 hosts\)$/m);
    expect(r.out).toMatch(/^traffic alltoall\s+.*\(7 phases, 56 flows over 8 hosts\)$/m);
    expect(r.out).toMatch(/^traffic shift:2\s+min 1\.000\s+p1 1\.000\s+p50 1\.000\s+mean 1\.000/m);
    const j = await run(['gen:fattree2:leaves=4,spines=2,hosts=2', '--engine', 'ftree', '--traffic', 'shift:2', '--json']);
    expect((JSON.parse(j.out) as { traffic: Array<{ pattern: string; mean: number }> }).traffic).toMatchObject([{ pattern: 'shift:2', mean: 1 }]);
  });

  it('a flows file by name; a missing file is a usage error (exit 2)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-traffic-'));
    const file = path.join(dir, 'flows');
    writeFileSync(file, '"host-0 HCA-1" "host-3 HCA-1"\n"host-1 HCA-1" "host-4 HCA-1"\n"host-2 HCA-1" "host-5 HCA-1"\n');
    const r = await run(['gen:fattree2:leaves=2,spines=1,hosts=3', '--engine', 'minhop', '--traffic', file]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^traffic flows:\S+\s+min 0\.333\s+p1 0\.333\s+p50 0\.333\s+mean 0\.333\s+\(1 phase, 3 flows over 6 hosts\)$/m);
    const bad = await run(['gen:fattree2:leaves=2,spines=1,hosts=3', '--traffic', path.join(dir, 'nope')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/does not exist \(a --traffic pattern is ebb, alltoall, shift:K/);
  });
});

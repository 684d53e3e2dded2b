/**
 * Routing judged by the traffic it carries (issue #35; docs/traffic.md): the bandwidth each flow
 * of a pattern gets through a set of forwarding tables, by max-min fair sharing of the link
 * capacities (routing/traffic-maxmin.ts) over the links each flow's route crosses (the one LFT
 * walk, model/lft-walk.ts). Patterns (routing/traffic-patterns.ts): effective bisection bandwidth
 * (random bisections), all-to-all as phases of shifts, one shift, a list of flows. Each phase is
 * solved on its own (its flows run together; the phases one after the other); the figures are
 * the distribution over every flow of every phase of its rate normalised to its source's
 * injection rate (the capacity of the source port's link). Static and flow-level: no credits,
 * no packets, no adaptive routing. Pure: `trafficSteps` yields between phases so a caller can
 * give the event loop back.
 */
import type { Fabric } from '../model/fabric.js';
import { walkLfts } from '../model/lft-walk.js';
import { endPorts } from '../model/snapshot.js';
import { namedLinkGbps } from '../model/rates.js';
import { MaxMinSolver } from './traffic-maxmin.js';
import { patternName, patternPhases, type TrafficPattern } from './traffic-patterns.js';

export { parseTrafficPattern, patternName, PATTERN_SYNTAX, TrafficError, type TrafficPattern } from './traffic-patterns.js';

/** A traffic source and destination: a CA or router port with a LID and a link. */
export interface Host {
  node: number;
  port: number;
  guid: bigint;
  lid: number;
  desc: string;
}

export interface TrafficOptions {
  /** ebb: random bisections drawn; alltoall: at most this many shift phases (evenly spaced; all
   *  N-1 when it is at least N-1). Default 100. */
  samples?: number;
  /** Seed of the bisections (default 1). */
  seed?: number;
}

export const DEFAULT_TRAFFIC_SAMPLES = 100;

export interface TrafficStats {
  pattern: string;
  hosts: number;
  /** Phases solved (bisections, shifts). */
  phases: number;
  /** Flows over all phases (a host to itself is not a flow). */
  flows: number;
  /** Flows whose route does not arrive (counted at bandwidth 0). */
  unrouted: number;
  /** Per-flow bandwidth / the source's injection rate, over every flow of every phase. */
  min: number;
  p1: number;
  p50: number;
  mean: number;
}

/** The fabric's directed links as integers (node's first port id + port: the link leaving that
 *  port) with their capacities, and its hosts in port GUID order (the order shifts count in). */
export class TrafficNetwork {
  readonly base: Int32Array;
  readonly capacity: Float64Array;
  readonly hosts: Host[];
  readonly hostOfLid = new Map<number, number>();

  constructor(
    readonly fabric: Fabric,
    readonly lfts: ReadonlyMap<number, ArrayLike<number>>,
  ) {
    const nodes = fabric.nodes;
    this.base = new Int32Array(nodes.length + 1);
    for (let i = 0; i < nodes.length; i++) this.base[i + 1] = this.base[i]! + nodes[i]!.ports.length;
    const cap = new Float64Array(this.base[nodes.length]!);
    const known = new Map<string, number>();
    nodes.forEach((n, i) => {
      n.ports.forEach((p, pn) => {
        if (!p?.peer) return;
        // What both ends train to (either end unknown: a unit capacity, as a uniform fabric).
        const far = nodes[p.peer.node]?.ports[p.peer.port];
        const key = `${p.width}/${p.speed}/${far?.width}/${far?.speed}`;
        let g = known.get(key);
        if (g === undefined) known.set(key, (g = (far && namedLinkGbps(p, far)) || 1));
        cap[this.base[i]! + pn] = g;
      });
    });
    this.capacity = cap;
    this.hosts = endPorts(fabric)
      .filter((e) => e.kind !== 'switch' && e.linked && e.lid > 0)
      .sort((x, y) => (x.guid < y.guid ? -1 : x.guid > y.guid ? 1 : 0))
      .map((e) => ({ node: e.node, port: e.port, guid: e.guid, lid: e.lid, desc: nodes[e.node]!.desc }));
    this.hosts.forEach((h, i) => this.hostOfLid.set(h.lid, i));
  }

  /** The capacity of host `h`'s link (its injection rate). */
  injection(h: number): number {
    const x = this.hosts[h]!;
    return this.capacity[this.base[x.node]! + x.port]!;
  }
}

/** One phase's flows (host index pairs, `src[i]` → `dst[i]`) solved: each flow's rate / its
 *  source's injection rate into `out` (0 when its route does not arrive). Returns the unrouted. */
export class PhaseSolver {
  private readonly solver: MaxMinSolver;
  private start = new Int32Array(1);
  private links = new Int32Array(1024);
  private rate = new Float64Array(0);
  private routed = new Uint8Array(0);

  constructor(readonly net: TrafficNetwork) {
    this.solver = new MaxMinSolver(net.capacity.length, net.capacity);
  }

  solve(src: Int32Array, dst: Int32Array, count: number, out: Float64Array, outAt: number): number {
    const net = this.net;
    const base = net.base;
    if (this.start.length < count + 1) this.start = new Int32Array(count + 1);
    if (this.rate.length < count) this.rate = new Float64Array(count);
    const start = this.start;
    let e = 0;
    let unrouted = 0;
    if (this.routed.length < count) this.routed = new Uint8Array(count);
    const routed = this.routed;
    const onLink = (node: number, port: number): void => {
      if (e === this.links.length) {
        const grown = new Int32Array(e * 2);
        grown.set(this.links);
        this.links = grown;
      }
      this.links[e++] = base[node]! + port;
    };
    for (let f = 0; f < count; f++) {
      start[f] = e;
      const s = net.hosts[src[f]!]!;
      const d = net.hosts[dst[f]!]!;
      const w = walkLfts(net.fabric, net.lfts, s, d.lid, d, onLink);
      routed[f] = w.ok ? 1 : 0;
      if (!w.ok) {
        e = start[f]!;
        unrouted++;
      }
    }
    start[count] = e;
    this.solver.solve({ count, start, links: this.links }, this.rate);
    for (let f = 0; f < count; f++) out[outAt + f] = routed[f] ? Math.min(1, this.rate[f]! / net.injection(src[f]!)) : 0;
    return unrouted;
  }
}

/** The evaluation, one phase per step (yields the phases done): run it to the end with
 *  `evaluateTraffic`, or step it and give the event loop back between steps. */
export function* trafficSteps(fabric: Fabric, lfts: ReadonlyMap<number, ArrayLike<number>>, pattern: TrafficPattern, opts: TrafficOptions = {}): Generator<number, TrafficStats> {
  const net = new TrafficNetwork(fabric, lfts);
  const solver = new PhaseSolver(net);
  const phases = patternPhases(net, pattern, opts.samples ?? DEFAULT_TRAFFIC_SAMPLES, opts.seed ?? 1);
  let all = new Float64Array(Math.max(16, net.hosts.length));
  let n = 0;
  let unrouted = 0;
  let done = 0;
  for (const ph of phases) {
    if (n + ph.count > all.length) {
      const grown = new Float64Array(Math.max(all.length * 2, n + ph.count));
      grown.set(all.subarray(0, n));
      all = grown;
    }
    unrouted += solver.solve(ph.src, ph.dst, ph.count, all, n);
    n += ph.count;
    yield ++done;
  }
  return { pattern: patternName(pattern), hosts: net.hosts.length, phases: done, flows: n, unrouted, ...distribution(all.subarray(0, n)) };
}

/** min, p1, p50 (nearest rank) and mean of the values (sorted in place). */
export function distribution(v: Float64Array): { min: number; p1: number; p50: number; mean: number } {
  if (v.length === 0) return { min: 0, p1: 0, p50: 0, mean: 0 };
  v.sort();
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]!;
  const rank = (q: number): number => v[Math.min(v.length - 1, Math.max(0, Math.ceil(q * v.length) - 1))]!;
  return { min: v[0]!, p1: rank(0.01), p50: rank(0.5), mean: sum / v.length };
}

export function evaluateTraffic(fabric: Fabric, lfts: ReadonlyMap<number, ArrayLike<number>>, pattern: TrafficPattern, opts: TrafficOptions = {}): TrafficStats {
  const it = trafficSteps(fabric, lfts, pattern, opts);
  for (;;) {
    const r = it.next();
    if (r.done) return r.value;
  }
}

/** One pattern's figures on a line (ibsm route --traffic, ibsm dump traffic). */
export function trafficLine(s: TrafficStats): string {
  const f = (x: number): string => x.toFixed(3);
  const extra = s.unrouted ? `, ${s.unrouted} unrouted` : '';
  return `min ${f(s.min)}  p1 ${f(s.p1)}  p50 ${f(s.p50)}  mean ${f(s.mean)}  (${s.phases} phase${s.phases === 1 ? '' : 's'}, ${s.flows} flows over ${s.hosts} hosts${extra})`;
}

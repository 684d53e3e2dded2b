/** The traffic patterns routing/traffic.ts evaluates, as phases of flows between hosts (indices
 *  into TrafficNetwork.hosts, in port GUID order). Pure: a flows file is given as its text. */
import { IbsmError } from '../util/errors.js';
import { Rng } from '../util/rng.js';
import type { TrafficNetwork } from './traffic.js';

export class TrafficError extends IbsmError {
  override readonly name = 'TrafficError';
}

/** One end of a listed flow: a LID, a port GUID (or a node GUID: its first host port), or a
 *  NodeDescription. */
export type FlowEnd = { lid: number } | { guid: bigint } | { name: string };

export type TrafficPattern =
  /** Random bisections: the hosts shuffled, paired first half to second, both directions. */
  | { kind: 'ebb' }
  /** Every host to every other, as the N-1 phases shift:1 .. shift:N-1. */
  | { kind: 'alltoall' }
  /** Host i → host (i + k) mod N, all at once. */
  | { kind: 'shift'; k: number }
  /** The listed flows, all at once. */
  | { kind: 'flows'; name: string; flows: Array<{ from: FlowEnd; to: FlowEnd; line: number }> };

export const PATTERN_SYNTAX = 'ebb, alltoall, shift:K or a flows file (lines "SRC DST": LIDs, GUIDs 0x.. or quoted node names)';

export function patternName(p: TrafficPattern): string {
  return p.kind === 'shift' ? `shift:${p.k}` : p.kind === 'flows' ? `flows:${p.name}` : p.kind;
}

/** `ebb`, `alltoall`, `shift:K`, else the name of a flows file whose text `readText` gives. */
export function parseTrafficPattern(spec: string, readText: (file: string) => string): TrafficPattern {
  if (spec === 'ebb' || spec === 'alltoall') return { kind: spec };
  const m = /^shift:(-?\d+)$/.exec(spec);
  if (m) return { kind: 'shift', k: Number(m[1]) };
  if (spec.startsWith('shift')) throw new TrafficError(`traffic pattern "${spec}": a shift is shift:K with K an integer`);
  return { kind: 'flows', name: spec, flows: parseFlows(readText(spec), spec) };
}

function parseEnd(tok: string, file: string, line: number): FlowEnd {
  if (tok.startsWith('"')) return { name: tok.slice(1, -1) };
  if (/^0x[0-9a-f]+$/i.test(tok)) return BigInt(tok) > 0xffffn ? { guid: BigInt(tok) } : { lid: Number(tok) };
  if (/^\d+$/.test(tok)) {
    const lid = Number(tok);
    if (lid < 1 || lid > 0xbfff) throw new TrafficError(`${file}:${line}: ${tok} is not a unicast LID`, { file, line });
    return { lid };
  }
  return { name: tok };
}

/** Lines "SRC DST" (# starts a comment). */
export function parseFlows(text: string, file: string): Array<{ from: FlowEnd; to: FlowEnd; line: number }> {
  const out: Array<{ from: FlowEnd; to: FlowEnd; line: number }> = [];
  text.split('\n').forEach((raw, i) => {
    const l = raw.replace(/#.*/, '').trim();
    if (!l) return;
    const toks = l.match(/"[^"]*"|\S+/g) ?? [];
    if (toks.length !== 2) throw new TrafficError(`${file}:${i + 1}: expected "SRC DST" (a LID, a GUID 0x.. or a node name each), got "${l}"`, { file, line: i + 1 });
    out.push({ from: parseEnd(toks[0]!, file, i + 1), to: parseEnd(toks[1]!, file, i + 1), line: i + 1 });
  });
  if (!out.length) throw new TrafficError(`${file}: no flows in it`, { file });
  return out;
}

function resolveEnd(net: TrafficNetwork, e: FlowEnd, file: string, line: number): number {
  let h: number | undefined;
  if ('lid' in e) h = net.hostOfLid.get(e.lid);
  else if ('guid' in e) {
    h = net.hosts.findIndex((x) => x.guid === e.guid);
    if (h < 0) h = net.hosts.findIndex((x) => net.fabric.nodes[x.node]!.guid === e.guid);
  } else h = net.hosts.findIndex((x) => x.desc === e.name);
  if (h === undefined || h < 0) {
    const what = 'lid' in e ? `LID ${e.lid}` : 'guid' in e ? `GUID 0x${e.guid.toString(16)}` : `node "${e.name}"`;
    throw new TrafficError(`${file}:${line}: ${what} is not a CA or router port with a LID`, { file, line });
  }
  return h;
}

export interface TrafficPhase {
  src: Int32Array;
  dst: Int32Array;
  count: number;
}

/** The pattern's phases, lazily. `samples`: ebb's bisections; alltoall's phases at most. */
export function* patternPhases(net: TrafficNetwork, p: TrafficPattern, samples: number, seed: number): Generator<TrafficPhase> {
  const N = net.hosts.length;
  if (N < 2) return;
  const src = new Int32Array(N);
  const dst = new Int32Array(N);
  const shift = (k: number): TrafficPhase => {
    let c = 0;
    for (let i = 0; i < N; i++) {
      const j = (((i + k) % N) + N) % N;
      if (j === i) continue;
      src[c] = i;
      dst[c++] = j;
    }
    return { src, dst, count: c };
  };
  switch (p.kind) {
    case 'shift':
      yield shift(p.k);
      return;
    case 'alltoall': {
      const n = Math.min(N - 1, Math.max(1, samples));
      for (let i = 0; i < n; i++) yield shift(1 + Math.floor((i * (N - 1)) / n));
      return;
    }
    case 'ebb': {
      const rng = new Rng(seed);
      const perm = Int32Array.from({ length: N }, (_, i) => i);
      const half = N >> 1;
      for (let s = 0; s < samples; s++) {
        for (let i = N - 1; i > 0; i--) {
          const j = rng.int(i + 1);
          const t = perm[i]!;
          perm[i] = perm[j]!;
          perm[j] = t;
        }
        for (let i = 0; i < half; i++) {
          src[2 * i] = perm[i]!;
          dst[2 * i] = perm[half + i]!;
          src[2 * i + 1] = perm[half + i]!;
          dst[2 * i + 1] = perm[i]!;
        }
        yield { src, dst, count: 2 * half };
      }
      return;
    }
    case 'flows': {
      const fs = new Int32Array(p.flows.length);
      const fd = new Int32Array(p.flows.length);
      let c = 0;
      for (const f of p.flows) {
        const a = resolveEnd(net, f.from, p.name, f.line);
        const b = resolveEnd(net, f.to, p.name, f.line);
        if (a === b) continue;
        fs[c] = a;
        fd[c++] = b;
      }
      yield { src: fs, dst: fd, count: c };
    }
  }
}

/** The verifier's report text and figures: failure descriptions, per-link load statistics, the
 * summary lines (split from verify.ts). */
import { fmtGuid, swName, type FabricIndex } from './graph.js';
import type { FailureKind, LoadStats, VerifyReport } from './verify.js';

export function describe(ix: FabricIndex, kind: FailureKind, d: number, at: number, port: number | undefined, destGuid: bigint): string {
  const sw = swName(ix, at);
  switch (kind) {
    case 'no-lft':
      return `switch ${sw} has no forwarding table`;
    case 'no-route':
      return `switch ${sw} has no LFT entry for LID ${d} (port ${fmtGuid(destGuid)})`;
    case 'bad-port':
      return `switch ${sw} forwards LID ${d} to port ${port}, beyond its ${ix.swNumPorts[at]} ports`;
    case 'port-down':
      return `switch ${sw} forwards LID ${d} to port ${port}, which has no link`;
    case 'loop':
      return `routes to LID ${d} loop through switch ${sw}`;
    case 'wrong-destination':
      return port === 0
        ? `switch ${sw} delivers LID ${d} to its own port 0, but the LID belongs to port ${fmtGuid(destGuid)}`
        : `switch ${sw} forwards LID ${d} out of port ${port} to a node that does not own it (owner ${fmtGuid(destGuid)})`;
    case 'not-attached':
      return `LID ${d} is not attached to a switch`;
  }
}

export function loadStats(load: Float64Array): LoadStats {
  const n = load.length;
  if (n === 0) return { links: 0, min: 0, max: 0, mean: 0, p50: 0, p90: 0, p99: 0, distribution: [] };
  const sorted = Float64Array.from(load).sort();
  const min = sorted[0]!;
  const max = sorted[n - 1]!;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  const pct = (p: number): number => sorted[Math.min(n - 1, Math.floor(p * (n - 1)))]!;
  const buckets = max === min ? 1 : Math.min(10, max - min + 1);
  const width = (max - min + 1) / buckets;
  const distribution = Array.from({ length: buckets }, (_, i) => ({ from: Math.ceil(min + i * width), to: Math.ceil(min + (i + 1) * width) - 1, links: 0 }));
  for (let i = 0; i < n; i++) distribution[Math.min(buckets - 1, Math.floor((sorted[i]! - min) / width))]!.links++;
  return { links: n, min, max, mean: sum / n, p50: pct(0.5), p90: pct(0.9), p99: pct(0.99), distribution };
}

export function summarize(r: VerifyReport, requireDf: boolean): string[] {
  const out: string[] = [];
  out.push(r.unreachablePairs === 0 && r.unreachableFromSwitches === 0 ? `reachability: OK (${r.pairs} CA pairs, ${r.switches} switches × ${r.lids} LIDs)` : `reachability: ${r.unreachablePairs} of ${r.pairs} CA pairs and ${r.unreachableFromSwitches} switch×LID routes fail`);
  out.push(r.loopEntries === 0 ? 'loops: none' : `loops: ${r.loopLids} LIDs loop (${r.loopEntries} switch×LID routes)`);
  const cyc = r.cdg.filter((c) => c.cyclicComponents > 0);
  out.push(cyc.length === 0 ? `deadlock: CDG acyclic on ${r.vlsUsed} VL(s)` : `deadlock: CDG cycles on VL ${cyc.map((c) => c.vl).join(',')}${requireDf ? ' (required deadlock-free)' : ''}`);
  return out;
}

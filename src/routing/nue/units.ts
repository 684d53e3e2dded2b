/** nue's destinations: the units (groups of one switch's LIDs) in the order they are routed. */
import type { FabricIndex } from '../graph.js';
import type { Unit } from './tree.js';

/** Channel visits the search may spend in total before destinations are grouped (keeps big fabrics fast). */
const SEARCH_BUDGET = 3e7;

export interface Units {
  units: Unit[];
  /** Groups per switch at most. */
  groups: number;
  /** Per switch: the LIDs of its CAs. */
  caLidsOf: number[][];
}

/** Destinations with many LIDs are split into groups routed one after the other (each LID its own
 *  group when the fabric is small enough; fewer groups keep large fabrics near-linear). Reads the
 *  end ports; a switch's own LID rides with its first group. */
export function destinationUnits(ix: FabricIndex): Units {
  const { nSw, ends } = ix;
  const nE = ix.adjStart[nSw]!;
  let caSw = 0;
  let maxLidsPerSw = 0;
  const caLidsOf: number[][] = [];
  for (let T = 0; T < nSw; T++) {
    const l: number[] = [];
    for (let i = ix.endsStart[T]!; i < ix.endsStart[T + 1]!; i++) {
      const ep = ends[ix.endsOfSw[i]!]!;
      if (ep.isSwitch) continue;
      for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) l.push(d);
    }
    caLidsOf.push(l);
    if (l.length > 0) caSw++;
    maxLidsPerSw = Math.max(maxLidsPerSw, l.length);
  }
  const groups = Math.max(1, Math.min(maxLidsPerSw, Math.floor(SEARCH_BUDGET / Math.max(1, caSw * nE))));
  const swLids: number[][] = Array.from({ length: nSw }, () => []);
  for (const ep of ends) if (ep.isSwitch && ep.sw >= 0) swLids[ep.sw] = lidRange(ep);
  const units: Unit[] = [];
  for (let gi = 0; gi < groups; gi++) {
    for (let T = 0; T < nSw; T++) {
      const l = caLidsOf[T]!;
      // LIDs in order, dealt round-robin: consecutive LIDs (one port's LMC range) land in different groups.
      const lids = l.filter((_, j) => j % groups === gi);
      if (lids.length === 0) continue;
      const own = gi === 0 ? swLids[T]! : [];
      units.push({ T, lids: own.length ? [...lids, ...own] : lids, caLids: lids.length });
    }
  }
  return { units, groups, caLidsOf };
}

/** The LIDs of an end port's range (a switch's port 0 has more than one with lmc_esp0). */
export function lidRange(ep: { lid: number; lmc: number }): number[] {
  return Array.from({ length: 1 << ep.lmc }, (_, k) => ep.lid + k);
}

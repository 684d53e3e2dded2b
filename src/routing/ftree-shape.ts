/** ftree's topology check: every switch's level, its up and down links, and where the tree is
 *  irregular (degraded). */
import { resolveRoots, swName, type FabricIndex } from './graph.js';
import { RoutingNotApplicable } from './types.js';

export const NA = (reason: string): RoutingNotApplicable => new RoutingNotApplicable('ftree', reason);

export interface FatTreeShape {
  /** Level per switch: 0 = leaf, top = levels - 1. */
  level: Int32Array;
  levels: number;
  /** Per switch, adjacency entries going up / down (port order). */
  up: number[][];
  down: number[][];
  /** Where levels differ in their up/down links (a degraded tree), a few examples; empty when regular. */
  irregular: string[];
}

/** Detect and check the fat tree; throws RoutingNotApplicable with the first rule broken. */
export function fatTreeShape(ix: FabricIndex, roots?: readonly bigint[]): FatTreeShape {
  const { nSw, adjStart, adjSw, caCount } = ix;
  if (nSw === 0) throw NA('the fabric has no switches');
  const level = new Int32Array(nSw).fill(-1);
  const queue = new Int32Array(nSw);
  let head = 0;
  let tail = 0;
  const bfs = (): void => {
    while (head < tail) {
      const s = queue[head++]!;
      for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
        const r = adjSw[e]!;
        if (level[r]! < 0) {
          level[r] = level[s]! + 1;
          queue[tail++] = r;
        }
      }
    }
  };
  if (roots && roots.length > 0) {
    const rs = resolveRoots(ix, 'ftree', roots);
    for (const r of rs) {
      level[r] = 0;
      queue[tail++] = r;
    }
    bfs();
    let H = 0;
    for (let s = 0; s < nSw; s++) H = Math.max(H, level[s]!);
    for (let s = 0; s < nSw; s++) if (level[s]! >= 0) level[s] = H - level[s]!;
    for (let s = 0; s < nSw; s++) {
      if (caCount[s]! > 0 && level[s] !== 0) throw NA(`switch ${swName(ix, s)} has CAs but is ${level[s]} level(s) above the lowest switches from the configured roots: CAs must hang off leaf switches only`);
    }
  } else {
    for (let s = 0; s < nSw; s++) {
      if (caCount[s]! > 0) {
        level[s] = 0;
        queue[tail++] = s;
      }
    }
    if (tail === 0) throw NA('no switch has CAs attached, so there are no leaf switches');
    bfs();
  }
  let top = 0;
  for (let s = 0; s < nSw; s++) {
    if (level[s]! < 0) throw NA(`switch ${swName(ix, s)} is not connected to the rest of the tree`);
    top = Math.max(top, level[s]!);
  }
  const levels = top + 1;
  if (levels < 2 || levels > 8) throw NA(`the tree has ${levels} level(s); ftree handles 2 to 8`);
  const up: number[][] = [];
  const down: number[][] = [];
  for (let s = 0; s < nSw; s++) {
    const u: number[] = [];
    const d: number[] = [];
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const r = adjSw[e]!;
      const dl = level[r]! - level[s]!;
      if (dl === 1) u.push(e);
      else if (dl === -1) d.push(e);
      else throw NA(`link ${swName(ix, s)} port ${ix.adjPort[e]} → ${swName(ix, r)} joins switches on levels ${level[s]} and ${level[r]}: a fat tree links adjacent levels only`);
    }
    if (level[s]! < top && u.length === 0) throw NA(`switch ${swName(ix, s)} on level ${level[s]} has no up links but is not a top switch`);
    up.push(u);
    down.push(d);
  }
  // Regularity per level (OpenSM refuses irregular trees; here they are routed, and said so).
  const groups = (entries: number[]): number => new Set(entries.map((e) => adjSw[e]!)).size;
  const irregular: string[] = [];
  for (const dir of ['up', 'down'] as const) {
    const seen = new Map<number, { s: number; groups: number; ports: number }>();
    for (let s = 0; s < nSw; s++) {
      const l = level[s]!;
      if ((dir === 'up' && l === top) || (dir === 'down' && l === 0)) continue;
      const list = dir === 'up' ? up[s]! : down[s]!;
      const g = groups(list);
      const ref = seen.get(l);
      if (!ref) seen.set(l, { s, groups: g, ports: list.length });
      else if ((ref.groups !== g || ref.ports !== list.length) && irregular.length < 3) {
        irregular.push(`level ${l}: switch ${swName(ix, s)} has ${list.length} ${dir}-going port(s) to ${g} switch(es), switch ${swName(ix, ref.s)} ${ref.ports} to ${ref.groups}`);
      }
    }
  }
  return { level, levels, up, down, irregular };
}

/** The one-VL deadlock check of a re-route whose result is judged and dropped (what-if: routing/
 * what-if.ts), in time proportional to what it touched: the previous routing's kept dependencies
 * (routing/incremental-cdg.ts) are changed in place by what the touched columns' changed entries
 * change (ColumnDeps), only the dependencies the re-route adds are searched for a cycle, and the
 * counts are put back. Links only went down (every channel of the new fabric is one of the
 * previous fabric's): the graph searched holds every dependency the exact check (incrementalCdg)
 * counts, and more (those over links gone), so "no cycle" here is "no cycle" there; a cycle
 * found, or a change this does not cover, is left to the exact check. */
import type { FabricIndex } from './graph.js';
import { cdgCycles } from './cdg.js';
import { countDeps, depStarts, newScratch, sourcesOf, type DepCounts } from './incremental-cdg.js';
import { channelsKept } from './incremental-columns.js';
import { cutEntries } from './incremental-walk.js';

/** Per kept dependency counts: whether they have no cycle, their slot starts, scratch. */
interface Prepared {
  acyclic: boolean;
  ds: Int32Array;
  /** Per channel: DFS colour (0 white, 1 on the stack, 2 done) and the next slot to follow. */
  colour: Uint8Array;
  next: Int32Array;
}
const prepared = new WeakMap<DepCounts, Prepared>();

function prepare(from: DepCounts): Prepared {
  let p = prepared.get(from);
  if (p) return p;
  const o = from.ix;
  const depStart = depStarts(o);
  const bits = new Uint8Array(Math.ceil(from.counts.length / 8) + 1);
  let deps = 0;
  for (let i = 0; i < from.counts.length; i++) {
    if (from.counts[i]! > 0) {
      bits[i >> 3] = bits[i >> 3]! | (1 << (i & 7));
      deps++;
    }
  }
  const channels = o.adjStart[o.nSw]!;
  p = { acyclic: cdgCycles(o, 0, bits, depStart, deps).cyclicComponents === 0, ds: Int32Array.from(depStart), colour: new Uint8Array(channels), next: new Int32Array(channels) };
  prepared.set(from, p);
  return p;
}

/**
 * True when the dependencies of column-major tables `cm` over `ix` (`from`'s routing where `touch`
 * does not mark a column; `read` gives `from`'s columns in its switch order) surely have no
 * cycle; false: not known (a cycle may close, or the change is not covered): ask incrementalCdg.
 */
export function addsNoCycle(from: DepCounts, read: (l: number, out: Uint8Array) => void, touch: Uint8Array, ix: FabricIndex, cm: Uint8Array): boolean {
  const o = from.ix;
  const p = prepare(from);
  if (!p.acyclic) return false;
  const Wo = o.maxPorts + 1;
  const Wn = ix.maxPorts + 1;
  // Covered: the same switches in the same order, the same LIDs and sources; every channel of
  // `ix` one of `o`'s (links only went down).
  const nSw = o.nSw;
  if (ix.nSw !== nSw || ix.maxLid !== o.maxLid) return false;
  for (let s = 0; s < nSw; s++) if (ix.swGuid[s] !== o.swGuid[s] || (ix.caCount[s]! > 0) !== (o.caCount[s]! > 0)) return false;
  // The new tables' channels in `o`'s numbering (-1: leads to no switch now).
  const pe = new Int32Array(nSw * Wo).fill(-1);
  for (let s = 0; s < nSw; s++) {
    for (let f = ix.adjStart[s]!; f < ix.adjStart[s + 1]!; f++) {
      const port = ix.adjPort[f]!;
      const e = port < Wo ? o.portEntry[s * Wo + port]! : -1;
      if (e < 0 || o.adjSw[e] !== ix.adjSw[f]) return false;
      pe[s * Wo + port] = e;
    }
  }
  const ch = new ColumnDeps(o, p.ds);
  const col = new Uint8Array(nSw);
  const adds: number[] = [];
  const removes: number[] = [];
  for (let l = 1; l <= o.maxLid; l++) {
    if (!touch[l]) continue;
    const k = o.lidOwner[l]!;
    const kn = ix.lidOwner[l]!;
    const T = k >= 0 ? o.ends[k]!.sw : -1;
    if ((kn >= 0 ? ix.ends[kn]!.sw : -1) !== T || (k >= 0 && kn >= 0 && o.ends[k]!.guid !== ix.ends[kn]!.guid)) return false;
    if (T < 0) continue;
    read(l, col);
    ch.delta(col, o.portEntry, cm.subarray(l * nSw, l * nSw + nSw), pe, T, adds, removes);
  }
  // The dependencies added first (one that goes from 0 then was not there), then those removed;
  // put back as they were after.
  const { counts } = from;
  const roots: number[] = [];
  try {
    for (let i = 0; i < adds.length; i += 2) if (counts[adds[i]!]!++ === 0) roots.push(adds[i + 1]!);
    for (let i = 0; i < removes.length; i += 2) counts[removes[i]!]!--;
    // A cycle now goes through a dependency that was not there (the previous ones have none):
    // search from each such one's channel.
    return !roots.length || !cycleFrom(o, p.ds, counts, roots, p);
  } finally {
    for (let i = 0; i < adds.length; i += 2) counts[adds[i]!]!--;
    for (let i = 0; i < removes.length; i += 2) counts[removes[i]!]!++;
  }
}

/**
 * Whether the dependencies of `cm` (as addsNoCycle) have a cycle, exactly (for when addsNoCycle
 * does not know): `from`'s counts copied, every touched column's dependencies taken out as they
 * were and put in as they are (the same count incrementalCdg makes, in `from`'s numbering: the
 * new columns take no channel that went), and a cycle searched from the dependencies that were
 * not there. undefined: not covered (ask incrementalCdg).
 */
export function hasCycle(from: DepCounts, read: (l: number, out: Uint8Array) => void, touch: Uint8Array, ix: FabricIndex, cm: Uint8Array): boolean | undefined {
  const o = from.ix;
  const p = prepare(from);
  const kept = ix.maxLid === o.maxLid ? channelsKept(o, ix) : undefined;
  if (!p.acyclic || !kept) return undefined;
  const nSw = o.nSw;
  for (let s = 0; s < nSw; s++) if ((ix.caCount[s]! > 0) !== (o.caCount[s]! > 0)) return undefined;
  const cut = cutEntries(o, kept.newOf);
  const W = o.maxPorts + 1;
  const counts = from.counts.slice();
  const src = sourcesOf(o);
  const sc = newScratch(nSw);
  const col = new Uint8Array(nSw);
  for (let l = 1; l <= o.maxLid; l++) {
    if (!touch[l]) continue;
    const k = o.lidOwner[l]!;
    const kn = ix.lidOwner[l]!;
    const T = k >= 0 ? o.ends[k]!.sw : -1;
    if ((kn >= 0 ? ix.ends[kn]!.sw : -1) !== T || (k >= 0 && kn >= 0 && o.ends[k]!.guid !== ix.ends[kn]!.guid) || (k >= 0) !== (kn >= 0)) return undefined;
    if (T < 0) continue;
    for (let c = 0; c < cut.sw.length; c++) if (cm[l * nSw + cut.sw[c]!] === cut.port[c]) return undefined;
    read(l, col);
    countDeps(o, W, col, 0, T, src, p.ds, counts, -1, sc);
    countDeps(o, W, cm, l * nSw, T, src, p.ds, counts, 1, sc);
  }
  const roots: number[] = [];
  for (let c = 0; c < o.adjStart[nSw]!; c++) {
    for (let i = p.ds[c]!; i < p.ds[c + 1]!; i++) {
      if (counts[i]! > 0 && !(from.counts[i]! > 0)) {
        roots.push(c);
        break;
      }
    }
  }
  return roots.length > 0 && cycleFrom(o, p.ds, counts, roots, p);
}

/** The dependencies of one column that differ between two versions of it (`a` over channels
 * `pa`, `b` over `pb`: per switch × port, the channel in `o`'s numbering, -1 for none), found
 * from the switches whose entry differs: only their routes, the routes into them and the
 * switches after them change (whether a CA source's route crosses a switch changes only after
 * a switch that changed). A dependency (slot ds[e] + k, channel e) as in incremental-cdg.ts. */
class ColumnDeps {
  private readonly W: number;
  private readonly stamp: Int32Array;
  private epoch = 0;
  private readonly cand: number[] = [];
  private readonly up: number[] = [];
  private readonly upStamp: Int32Array;
  private upEpoch = 0;

  constructor(
    private readonly o: FabricIndex,
    private readonly ds: Int32Array,
  ) {
    this.W = o.maxPorts + 1;
    this.stamp = new Int32Array(o.nSw);
    this.upStamp = new Int32Array(o.nSw);
  }

  /** Adds to `adds` and `removes` (slot, channel) the dependencies b has and a has not, and back. */
  delta(a: Uint8Array, pa: Int32Array, b: Uint8Array, pb: Int32Array, T: number, adds: number[], removes: number[]): void {
    const { o, cand } = this;
    const ep = ++this.epoch;
    cand.length = 0;
    const n = a.length;
    for (let x = 0; x < n; x++) {
      if (a[x] === b[x]) continue;
      this.add(x, ep);
      // The switches after it, either way.
      this.after(a, pa, x, T, ep);
      this.after(b, pb, x, T, ep);
      // The switches whose route goes into it (their own entry is the same, or they changed).
      for (let g = o.adjStart[x]!; g < o.adjStart[x + 1]!; g++) {
        const q = o.adjSw[g]!;
        const ea = this.chan(a, pa, q);
        const eb = this.chan(b, pb, q);
        if ((ea >= 0 && o.adjSw[ea] === x) || (eb >= 0 && o.adjSw[eb] === x)) this.add(q, ep);
      }
    }
    for (const u of cand) {
      const sa = this.dep(a, pa, u, T);
      const sb = this.dep(b, pb, u, T);
      if (sa === sb) continue;
      if (sa >= 0) removes.push(sa, this.chan(a, pa, u));
      if (sb >= 0) adds.push(sb, this.chan(b, pb, u));
    }
  }

  /** u a candidate (once per column, in the order found). */
  private add(u: number, ep: number): void {
    if (this.stamp[u] !== ep) {
      this.stamp[u] = ep;
      this.cand.push(u);
    }
  }

  /** The switches after x on column c's route toward T, candidates. */
  private after(c: Uint8Array, pe: Int32Array, x: number, T: number, ep: number): void {
    const n = c.length;
    for (let u = x, hop = 0; u !== T && hop < n; hop++) {
      const e = this.chan(c, pe, u);
      if (e < 0) break;
      u = this.o.adjSw[e]!;
      this.add(u, ep);
    }
  }

  /** The channel switch u's entry of column c takes, or -1. */
  private chan(c: Uint8Array, pe: Int32Array, u: number): number {
    const p = c[u]!;
    return p > 0 && p < this.W ? pe[u * this.W + p]! : -1;
  }

  /** The dependency of u's route in column c (toward T), or -1: u is crossed by a CA source's
   *  route, leads to a switch n other than T, which leads on. */
  private dep(c: Uint8Array, pe: Int32Array, u: number, T: number): number {
    if (u === T) return -1;
    const e = this.chan(c, pe, u);
    if (e < 0) return -1;
    const h = this.o.adjSw[e]!;
    if (h === T) return -1;
    const e2 = this.chan(c, pe, h);
    if (e2 < 0 || !this.crossed(c, pe, u, T)) return -1;
    return this.ds[e]! + (e2 - this.o.adjStart[h]!);
  }

  /** Whether a CA source's route of column c crosses u: u is a source, or a switch crossed leads
   *  to u (searched back from u). */
  private crossed(c: Uint8Array, pe: Int32Array, u: number, T: number): boolean {
    const { o, up, upStamp } = this;
    const ep = ++this.upEpoch;
    up.length = 0;
    up.push(u);
    upStamp[u] = ep;
    while (up.length) {
      const v = up.pop()!;
      if (o.caCount[v]! > 0) return true;
      for (let g = o.adjStart[v]!; g < o.adjStart[v + 1]!; g++) {
        const q = o.adjSw[g]!;
        if (q === T || upStamp[q] === ep) continue;
        const e = this.chan(c, pe, q);
        if (e >= 0 && o.adjSw[e] === v) {
          upStamp[q] = ep;
          up.push(q);
        }
      }
    }
    return false;
  }
}

/** Whether a cycle of the dependencies with a count (slot ds[c] + k: channel c, then the k-th
 * channel out of c's head) is reachable from `roots` (iterative DFS; colours reset after). */
function cycleFrom(o: FabricIndex, ds: Int32Array, counts: Int32Array, roots: number[], p: Prepared): boolean {
  const { colour, next } = p;
  const seen: number[] = [];
  const stack: number[] = [];
  let found = false;
  for (const r of roots) {
    if (found) break;
    if (colour[r]) continue;
    colour[r] = 1;
    seen.push(r);
    next[r] = 0;
    stack.push(r);
    while (stack.length && !found) {
      const c = stack[stack.length - 1]!;
      const base = ds[c]!;
      const deg = ds[c + 1]! - base;
      const first = o.adjStart[o.adjSw[c]!]!;
      let k = next[c]!;
      while (k < deg && !(counts[base + k]! > 0)) k++;
      if (k === deg) {
        colour[c] = 2;
        stack.pop();
        continue;
      }
      next[c] = k + 1;
      const d = first + k;
      if (colour[d] === 1) found = true;
      else if (!colour[d]) {
        colour[d] = 1;
        seen.push(d);
        next[d] = 0;
        stack.push(d);
      }
    }
  }
  for (const c of seen) colour[c] = 0;
  return found;
}

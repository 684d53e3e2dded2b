/** The link loads of a re-route whose result is judged and dropped (what-if: routing/what-if.ts),
 * in time proportional to what it changed. remapLoads takes every touched column's routes out of
 * the previous routing's kept loads and ensureLoads puts them back as they stand: every CA
 * source's route of thousands of columns followed twice at 46,080 hosts. Here, per touched
 * column, only the switches whose channel differs (a changed entry, or a port whose link went)
 * count: the CA sources whose route first reaches such a switch u (searched back from u over the
 * switches that did not change: their routes up to u are the same both ways) move from u's old
 * route to its new one, and u's own entry moves its counter. The loads are sums of integers: the
 * same figures as remapLoads + accounting, in any order. */
import type { FabricIndex } from './graph.js';
import type { Loads } from './incremental-load.js';
import { channelsKept } from './incremental-columns.js';
import { cutEntries } from './incremental-walk.js';

/**
 * Fill `load` and `counters` (over `ix`) with `from`'s loads, its columns marked in `touch`
 * replaced by the columns of column-major `cm` (`read` gives `from`'s columns in its switch
 * order). False, with `load` and `counters` not meaningful, when the change is not covered (the
 * switches, their sources, ports or the LIDs' owners differ; a channel of `ix` that is not one of
 * `from`'s; a loop in a route): the caller computes them in full.
 */
export function deltaLoads(from: Loads, read: (l: number, out: Uint8Array) => void, touch: Uint8Array, ix: FabricIndex, cm: Uint8Array, load: Float64Array, counters: Int32Array): boolean {
  const o = from.ix;
  const nSw = o.nSw;
  const kept = ix.maxLid === o.maxLid ? channelsKept(o, ix) : undefined;
  if (!kept) return false;
  for (let s = 0; s < nSw; s++) if (ix.caCount[s] !== o.caCount[s]) return false;
  const { newOf, oldOf } = kept;
  load.fill(0);
  for (let e = 0; e < newOf.length; e++) if (newOf[e]! >= 0) load[newOf[e]!] = from.load[e]!;
  for (let i = 0; i < counters.length; i++) counters[i] = ix.portEntry[i]! >= 0 ? from.counters[i]! : 0;
  const d = new ColumnLoadDelta(o, ix, newOf, oldOf, load, counters);
  for (let l = 1; l <= o.maxLid; l++) {
    if (!touch[l]) continue;
    const k = o.lidOwner[l]!;
    const kn = ix.lidOwner[l]!;
    const T = k >= 0 ? o.ends[k]!.sw : -1;
    if ((kn >= 0 ? ix.ends[kn]!.sw : -1) !== T || (k >= 0) !== (kn >= 0)) return false;
    if (k < 0) continue;
    if (o.ends[k]!.guid !== ix.ends[kn]!.guid || o.ends[k]!.isSwitch !== ix.ends[kn]!.isSwitch) return false;
    if (o.ends[k]!.isSwitch || T < 0) continue;
    read(l, d.a);
    if (!d.apply(cm.subarray(l * nSw, l * nSw + nSw), T)) return false;
  }
  return true;
}

/** One column's move from its old version `a` (over `o`) to `b` (over `ix`). */
class ColumnLoadDelta {
  readonly a: Uint8Array;
  private b: Uint8Array;
  /** The entries (switch, port) whose channel went. */
  private readonly cutSw: Int32Array;
  private readonly cutPort: Int32Array;
  private readonly W: number;
  private readonly changed: Int32Array;
  private readonly seen: Int32Array;
  private readonly stack: Int32Array;
  private readonly list: number[] = [];
  private epoch = 0;

  constructor(
    private readonly o: FabricIndex,
    private readonly ix: FabricIndex,
    private readonly newOf: Int32Array,
    private readonly oldOf: Int32Array,
    private readonly load: Float64Array,
    private readonly counters: Int32Array,
  ) {
    this.W = o.maxPorts + 1;
    this.a = new Uint8Array(o.nSw);
    this.b = this.a;
    ({ sw: this.cutSw, port: this.cutPort } = cutEntries(o, newOf));
    this.changed = new Int32Array(o.nSw);
    this.seen = new Int32Array(o.nSw);
    this.stack = new Int32Array(o.nSw);
  }

  /** The channel (in `o`'s numbering) of entry p of switch s over port entries `pe`, or -1. */
  private chan(pe: Int32Array, s: number, p: number): number {
    return p > 0 && p < this.W ? pe[s * this.W + p]! : -1;
  }

  /** Applies the move toward T; false on a loop (not covered). */
  apply(b: Uint8Array, T: number): boolean {
    const { a, o, ix, changed, list, newOf } = this;
    this.b = b;
    const ep = ++this.epoch;
    list.length = 0;
    // A switch whose entry stays has the same channel both ways unless its link went.
    for (let s = 0; s < o.nSw; s++) if (a[s] !== b[s] && s !== T) this.compare(s, ep);
    for (let k = 0; k < this.cutSw.length; k++) {
      const s = this.cutSw[k]!;
      if (s !== T && a[s] === this.cutPort[k] && b[s] === a[s] && changed[s] !== ep) this.compare(s, ep);
    }
    for (const u of list) {
      const w = this.inflow(u, T, ep);
      if (w < 0) return false;
      if (w && !(this.follow(o, a, u, T, -w, newOf) && this.follow(ix, b, u, T, w, undefined))) return false;
    }
    return true;
  }

  /** Switch s's channel both ways: when it differs, s changed (its counters moved). */
  private compare(s: number, ep: number): void {
    const { a, b, o, ix, W, counters, newOf, oldOf } = this;
    const ea = this.chan(o.portEntry, s, a[s]!);
    const fb = this.chan(ix.portEntry, s, b[s]!);
    if (ea === (fb >= 0 ? oldOf[fb]! : -1)) return;
    this.changed[s] = ep;
    this.list.push(s);
    if (ea >= 0 && newOf[ea]! >= 0) counters[s * W + a[s]!]!--;
    if (fb >= 0) counters[s * W + b[s]!]!++;
  }

  /** The CA sources whose route first reaches changed switch u (u's own, and those whose route
   *  comes to u over switches that did not change), by weight; -1 on a loop. */
  private inflow(u: number, T: number, ep: number): number {
    const { o, a, changed, seen, stack } = this;
    let w = o.caCount[u]!;
    let sp = 0;
    stack[sp++] = u;
    seen[u] = ep;
    while (sp) {
      const x = stack[--sp]!;
      for (let g = o.adjStart[x]!; g < o.adjStart[x + 1]!; g++) {
        const v = o.adjSw[g]!;
        const r = o.adjReverse[g]!;
        if (v === T || r < 0 || changed[v] === ep || this.chan(o.portEntry, v, a[v]!) !== r) continue;
        if (seen[v] === ep) return -1;
        seen[v] = ep;
        w += o.caCount[v]!;
        stack[sp++] = v;
      }
    }
    return w;
  }

  /** Adds w to every channel of column c's route from u toward T (over `x`; `map` to `ix`'s
   *  numbering, channels not in it skipped); false on a loop. */
  private follow(x: FabricIndex, c: Uint8Array, u: number, T: number, w: number, map: Int32Array | undefined): boolean {
    const { load } = this;
    for (let hop = 0; u !== T; hop++) {
      if (hop >= x.nSw) return false;
      const e = this.chan(x.portEntry, u, c[u]!);
      if (e < 0) return true;
      const f = map ? map[e]! : e;
      if (f >= 0) load[f]! += w;
      u = x.adjSw[e]!;
    }
    return true;
  }
}

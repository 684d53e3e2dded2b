/** Incremental re-routing's column under work (routing/incremental.ts): one destination LID's
 * entries at every switch (`col`), walked toward its switch T, and the CA-to-CA link loads and
 * per-port counters of the tables being built, which the repairs keep up to date. */
import type { FabricIndex } from './graph.js';
import type { RoutingResult } from './types.js';

export const UNKNOWN = 0;
export const BUSY = 1;
export const GOOD = 2;
export const BROKEN = 3;

export class ColumnWalk {
  /** The column being worked on: per switch its port toward the LID. */
  readonly col: Uint8Array;
  /** After walk(T): per switch GOOD (its route reaches T) or BROKEN, and (GOOD) its hops to T. */
  readonly state: Uint8Array;
  readonly dist: Int32Array;
  private readonly stack: Int32Array;
  /** CA-to-CA routes per directed channel, as the tables being built have them (the verifier's
   *  linkLoad), and CA destination LIDs per switch port (OpenSM's minhop balance counters). */
  readonly load: Float64Array;
  readonly counters: Int32Array;
  /** Ports per switch row in `counters` and `portEntry`. */
  readonly W: number;
  /** BROKEN switches after the last walk (kept by settle). */
  broken = 0;
  /** `dist` holds every GOOD switch's hops (walkCut does not fill it: walk again for it). */
  distValid = false;

  constructor(private readonly ix: FabricIndex) {
    const nSw = ix.nSw;
    this.W = ix.maxPorts + 1;
    this.col = new Uint8Array(nSw);
    this.state = new Uint8Array(nSw);
    this.dist = new Int32Array(nSw);
    this.stack = new Int32Array(nSw + 1);
    this.load = new Float64Array(ix.adjStart[nSw]!);
    this.counters = new Int32Array(nSw * this.W);
  }

  /** The channel s's entry in `col` leaves by, or −1 (no port, or one that leads to no switch). */
  channel(s: number): number {
    const p = this.col[s]!;
    return p > 0 && p < this.W ? this.ix.portEntry[s * this.W + p]! : -1;
  }

  /** Follow `col` from switch `s` toward T, calling `f` with each channel crossed; stops at T, a
   *  port that leads to no switch, or after nSw hops (a loop). */
  follow(s: number, T: number, f: (e: number) => void): void {
    const { nSw, adjSw } = this.ix;
    for (let hop = 0; s !== T && hop < nSw; hop++) {
      const e = this.channel(s);
      if (e < 0) return;
      f(e);
      s = adjSw[e]!;
    }
  }

  /** Add (sign +1) or remove (−1) the routes of the CA sources of `col` toward T to `load` and
   *  `counters`. */
  account(T: number, sign: number): void {
    const { nSw, caCount } = this.ix;
    const { counters, load, W, col } = this;
    for (let s = 0; s < nSw; s++) {
      const p = col[s]!;
      if (s !== T && p > 0 && p < W && this.ix.portEntry[s * W + p]! >= 0) counters[s * W + p]! += sign;
      const w = caCount[s]!;
      if (w && s !== T) this.follow(s, T, (e) => (load[e]! += sign * w));
    }
  }

  /** Follow `col` toward T from every switch; fills `state` (GOOD/BROKEN) and `dist`; returns the
   *  number of broken switches. */
  walk(T: number): number {
    const { nSw, adjSw, portEntry } = this.ix;
    const { state, dist, stack, col, W } = this;
    state.fill(UNKNOWN);
    state[T] = GOOD;
    dist[T] = 0;
    let broken = 0;
    for (let s0 = 0; s0 < nSw; s0++) {
      if (state[s0] !== UNKNOWN) continue;
      let sp = 0;
      let s = s0;
      let end: number;
      for (;;) {
        state[s] = BUSY;
        stack[sp++] = s;
        const p = col[s]!;
        const e = p > 0 && p < W ? portEntry[s * W + p]! : -1;
        if (e < 0) {
          end = BROKEN;
          break;
        }
        const nx = adjSw[e]!;
        if (state[nx] === UNKNOWN) {
          s = nx;
          continue;
        }
        end = state[nx] === GOOD ? GOOD : BROKEN; // BUSY: a loop
        if (end === GOOD) dist[s] = dist[nx]! + 1;
        break;
      }
      for (let k = sp - 1; k >= 0; k--) {
        const u = stack[k]!;
        state[u] = end;
        if (end === GOOD && k < sp - 1) dist[u] = dist[stack[k + 1]!]! + 1;
        if (end === BROKEN) broken++;
      }
    }
    this.distValid = true;
    return (this.broken = broken);
  }

  /** walk(T) of a column whose every route reached T over a fabric with the channels of this
   *  index and more: a switch is BROKEN when its route reaches a switch `cutSw[k]` whose entry is
   *  the port `cutPort[k]` of a channel gone (searched back from those); `dist` is not filled. */
  walkCut(T: number, cutSw: Int32Array, cutPort: Int32Array): number {
    const { state, stack, col } = this;
    state.fill(GOOD);
    let broken = 0;
    let sp = 0;
    for (let k = 0; k < cutSw.length; k++) {
      const s = cutSw[k]!;
      if (s === T || col[s] !== cutPort[k] || state[s] === BROKEN) continue;
      state[s] = BROKEN;
      broken++;
      stack[sp++] = s;
    }
    broken += this.spread(T, sp, BROKEN);
    this.distValid = false;
    return (this.broken = broken);
  }

  /** After the BROKEN switch u's entry moved to channel e toward a GOOD switch: u and the
   *  switches whose route reaches it are GOOD (the others as they were: what walk(T) finds). */
  settle(T: number, u: number, e: number): number {
    const { state, dist, stack } = this;
    state[u] = GOOD;
    if (this.distValid) dist[u] = dist[this.ix.adjSw[e]!]! + 1;
    stack[0] = u;
    return (this.broken -= 1 + this.spread(T, 1, GOOD));
  }

  /** The CA sources whose route ends at u (a switch whose entry leads to no switch): u's own and
   *  those of the switches whose route reaches u (searched back from u). */
  sourcesInto(T: number, u: number): number {
    const { adjStart, adjSw, adjReverse, caCount } = this.ix;
    const stack = this.stack;
    let w = caCount[u]!;
    let sp = 0;
    stack[sp++] = u;
    while (sp) {
      const x = stack[--sp]!;
      for (let g = adjStart[x]!; g < adjStart[x + 1]!; g++) {
        const y = adjSw[g]!;
        const r = adjReverse[g]!;
        if (y === T || r < 0 || this.channel(y) !== r) continue;
        w += caCount[y]!;
        stack[sp++] = y;
      }
    }
    return w;
  }

  /** From the `sp` switches on the stack back over the routes into them: each switch of another
   *  state whose entry leads to one becomes `to` (GOOD: with its hops, when kept). Returns how
   *  many. */
  private spread(T: number, sp: number, to: number): number {
    const { adjStart, adjSw, adjReverse } = this.ix;
    const { state, dist, stack } = this;
    const withDist = to === GOOD && this.distValid;
    let n = 0;
    while (sp) {
      const x = stack[--sp]!;
      for (let g = adjStart[x]!; g < adjStart[x + 1]!; g++) {
        const y = adjSw[g]!;
        const r = adjReverse[g]!;
        if (y === T || r < 0 || state[y] === to || this.channel(y) !== r) continue;
        state[y] = to;
        if (withDist) dist[y] = dist[x]! + 1;
        n++;
        stack[sp++] = y;
      }
    }
    return n;
  }
}

/** Per LID of routing `r` (its columns by `read`, over `ix`, its fabric's index): its switch T + 1
 *  when every switch's route reaches T (walk finds nothing broken), else 0. Kept per routing. */
export function wholeColumns(r: RoutingResult, ix: FabricIndex, read: (l: number, out: Uint8Array) => void): Int32Array {
  let whole = wholeCache.get(r);
  if (whole && whole.length === ix.maxLid + 1) return whole;
  const cw = new ColumnWalk(ix);
  whole = new Int32Array(ix.maxLid + 1);
  for (let l = 1; l <= ix.maxLid; l++) {
    const o = ix.lidOwner[l]!;
    const T = o >= 0 ? ix.ends[o]!.sw : -1;
    if (T < 0) continue;
    read(l, cw.col);
    if (cw.walk(T) === 0) whole[l] = T + 1;
  }
  wholeCache.set(r, whole);
  return whole;
}
const wholeCache = new WeakMap<RoutingResult, Int32Array>();

/** The entries (switch, port) of `o` whose channel `ix` (`o` with links gone: channelsKept) has
 *  no more. */
export function cutEntries(o: FabricIndex, newOf: Int32Array): { sw: Int32Array; port: Int32Array } {
  const sw: number[] = [];
  const port: number[] = [];
  for (let s = 0; s < o.nSw; s++) {
    for (let e = o.adjStart[s]!; e < o.adjStart[s + 1]!; e++) {
      if (newOf[e]! >= 0) continue;
      sw.push(s);
      port.push(o.adjPort[e]!);
    }
  }
  return { sw: Int32Array.from(sw), port: Int32Array.from(port) };
}

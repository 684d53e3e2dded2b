/**
 * The in-tree of the routes toward one destination LID (routing/verify-walk.ts walks it): every
 * switch's route is followed, through the decoded entries of routing/verify-windows.ts, until it
 * meets a switch already resolved (memoisation), so each switch is visited once. The delivering
 * switches are listed each before the switch it forwards to (`order` from `orderStart`), with
 * their hops to the destination port; the ones that fail (a broken entry on their way, a loop)
 * in `failList`, with where and why.
 *
 * The switches are started from in the previous LID's order, destination first (the LIDs of one
 * delivering switch have much the same in-tree, so most routes then meet a resolved switch at
 * their first hop: one step each, with branches the processor predicts), then in index order
 * for the rest; when that order is the new LID's too (every switch's entry leads to one before
 * it), a single pass over it checks so and resolves the LID. A LID whose routes fail is
 * resolved again in index order alone, so that its failures are listed as they always were.
 */
import type { IndexedEndPort } from './graph.js';
import { C_BAD, C_CA, C_NO_LFT, C_NO_ROUTE, C_SELF, type LftWindows } from './verify-windows.js';

export const ST_UNKNOWN = 0;
export const ST_BUSY = 1;
export const ST_OK = 2;
export const ST_FAIL = 3;
// Failure kinds (index into verify-walk.ts's KINDS).
export const K_NO_LFT = 0;
export const K_NO_ROUTE = 1;
export const K_BAD_PORT = 2;
export const K_DOWN = 3;
export const K_LOOP = 4;
export const K_WRONG = 5;

export class InTree {
  readonly state: Uint8Array;
  /** Switch to destination port, in links (delivering switches). */
  readonly hops: Int32Array;
  readonly failKind: Uint8Array;
  readonly failAt: Int32Array;
  readonly failPort: Int32Array;
  /** The delivering switches from `orderStart` on, each before the switch it forwards to. */
  order: Int32Array;
  orderStart = 0;
  /** `order` is the switches by distance to the destination (resolve's byDist), each distance in
   *  index order: read in that order, per-switch tables are read almost in sequence. */
  sorted = false;
  /** The previous LID's order (from prevStart on), the start order of the next. */
  private prev: Int32Array;
  private prevStart: number;
  private distTries = 0;
  private distHits = 0;
  /** The switches whose route fails (resolve returns how many). */
  readonly failList: Int32Array;
  /** LIDs with a loop, (switch, LID) routes in one: over every resolve. */
  loopLids = 0;
  loopEntries = 0;
  private readonly stack: Int32Array;

  constructor(
    private readonly nSw: number,
    private readonly wins: LftWindows,
  ) {
    this.state = new Uint8Array(nSw);
    this.hops = new Int32Array(nSw);
    this.failKind = new Uint8Array(nSw);
    this.failAt = new Int32Array(nSw);
    this.failPort = new Int32Array(nSw);
    this.order = new Int32Array(nSw);
    this.prev = new Int32Array(nSw);
    this.prevStart = nSw;
    this.failList = new Int32Array(nSw);
    this.stack = new Int32Array(nSw + 1);
  }

  /** Resolve LID d (owned by `dest`; its decoded entries at `b` in wins.win): states, hops,
   *  order, failures. Returns the number of switches whose route fails. */
  resolve(d: number, dest: IndexedEndPort, destIsCa: boolean, b: number, byDist?: Int32Array): number {
    // The switches by distance to the destination, farthest first, are an order of every LID
    // whose routes are shortest paths: checked in one pass (given up when it is seldom one).
    if (byDist && (this.distTries < 1024 || 2 * this.distHits >= this.distTries)) {
      this.distTries++;
      if (this.sameOrder(d, dest, destIsCa, b, byDist)) {
        this.distHits++;
        this.order.set(byDist);
        this.orderStart = 0;
        this.sorted = true;
        this.prevStart = 0;
        return 0;
      }
    }
    this.sorted = false;
    // The previous LID's order holds every switch, and is this LID's too: done (order kept).
    if (this.prevStart === 0 && this.sameOrder(d, dest, destIsCa, b, this.order)) {
      this.orderStart = 0;
      return 0;
    }
    // The order just made becomes the start order of the next LID (unless it failed).
    const made = this.prev;
    this.prev = this.order;
    this.order = made;
    const pStart = this.prevStart;
    let nFail = this.pass(d, dest, destIsCa, b, pStart);
    if (nFail > 0 && pStart < this.nSw) nFail = this.pass(d, dest, destIsCa, b, this.nSw);
    this.prevStart = nFail > 0 ? this.nSw : this.orderStart;
    return nFail;
  }

  /** Whether `order` (every switch; the previous LID's, or by distance) is one of d's: each switch's
   *  entry leads to one before it in the order or delivers. States and hops set on the way. */
  private sameOrder(d: number, dest: IndexedEndPort, destIsCa: boolean, b: number, order: Int32Array): boolean {
    const { state, hops, nSw } = this;
    const win = this.wins.win;
    state.fill(ST_UNKNOWN);
    for (let i = nSw - 1; i >= 0; i--) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c >= 0) {
        const n = c >>> 8;
        if (state[n] !== ST_OK) return false;
        hops[x] = hops[n]! + 1;
      } else if (c === C_SELF) {
        if (destIsCa || dest.sw !== x) return false;
        hops[x] = 0;
      } else if (c === C_CA) {
        if (!this.wins.leadsTo(x, this.wins.port(x, d), dest)) return false;
        hops[x] = 1;
      } else return false;
      state[x] = ST_OK;
    }
    return true;
  }

  /** One resolve of d, starting from prev[nSw − 1] down to prev[pStart], then the switches in
   *  index order. Loop counts are added only when no route fails or in index order alone. */
  private pass(d: number, dest: IndexedEndPort, destIsCa: boolean, b: number, pStart: number): number {
    const { state, hops, failList, stack, failKind, failAt, failPort, nSw, order, prev } = this;
    const win = this.wins.win;
    state.fill(ST_UNKNOWN);
    let nFail = 0;
    let pos = nSw;
    let lidLooped = false;
    let loopEntries = 0;
    for (let k = nSw - 1 + (nSw - pStart); k >= 0; k--) {
      const s0 = k >= nSw ? prev[k - nSw + pStart]! : nSw - 1 - k;
      if (state[s0] !== ST_UNKNOWN) continue;
      let len = 0;
      let cur = s0;
      let top: number;
      for (;;) {
        top = state[cur]!;
        if (top !== ST_UNKNOWN) break;
        state[cur] = ST_BUSY;
        stack[len++] = cur;
        const c = win[b + cur]!;
        if (c >= 0) {
          cur = c >>> 8;
          continue;
        }
        // The route ends here: delivered, or failed.
        let kind = -1;
        if (c === C_SELF) {
          if (!destIsCa && dest.sw === cur) hops[cur] = 0;
          else kind = K_WRONG;
        } else if (c === C_CA) {
          if (this.wins.leadsTo(cur, this.wins.port(cur, d), dest)) hops[cur] = 1;
          else kind = K_WRONG;
        } else kind = c === C_NO_LFT ? K_NO_LFT : c === C_NO_ROUTE ? K_NO_ROUTE : c === C_BAD ? K_BAD_PORT : K_DOWN;
        len--;
        if (kind >= 0) {
          state[cur] = top = ST_FAIL;
          failKind[cur] = kind;
          failAt[cur] = cur;
          failPort[cur] = kind === K_NO_LFT ? -1 : this.wins.port(cur, d);
          failList[nFail++] = cur;
        } else {
          state[cur] = top = ST_OK;
          order[--pos] = cur;
        }
        break;
      }
      if (top === ST_OK) {
        // Unwind: each switch one hop farther than the one it forwards to.
        let h = hops[cur]!;
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          state[x] = ST_OK;
          hops[x] = ++h;
          order[--pos] = x;
        }
      } else if (top === ST_BUSY) {
        // A loop (at cur): every switch on the stack ends in it.
        lidLooped = true;
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          state[x] = ST_FAIL;
          failKind[x] = K_LOOP;
          failAt[x] = cur;
          failPort[x] = -1;
          loopEntries++;
          failList[nFail++] = x;
        }
      } else {
        for (let i = len - 1; i >= 0; i--) {
          const x = stack[i]!;
          const n = win[b + x]! >>> 8;
          state[x] = ST_FAIL;
          failKind[x] = failKind[n]!;
          failAt[x] = failAt[n]!;
          failPort[x] = failPort[n]!;
          if (failKind[x] === K_LOOP) loopEntries++;
          failList[nFail++] = x;
        }
      }
    }
    this.orderStart = pos;
    if (nFail > 0 && pStart < nSw) return nFail;
    if (lidLooped) this.loopLids++;
    this.loopEntries += loopEntries;
    return nFail;
  }
}

/** The switches by their distance `dist` to a destination switch, farthest (and unreachable)
 *  first, each distance in index order, into out (InTree.resolve's byDist); count: nSw + 1 scratch. */
export function sortByDist(dist: Int32Array, out: Int32Array, count: Int32Array): void {
  const nSw = out.length;
  count.fill(0);
  // Slot nSw − k counts distance k (slot 0: unreachable).
  for (let x = 0; x < nSw; x++) count[dist[x]! < 0 ? 0 : nSw - dist[x]!]!++;
  let at = 0;
  for (let k = 0; k <= nSw; k++) {
    const c = count[k]!;
    count[k] = at;
    at += c;
  }
  for (let x = 0; x < nSw; x++) out[count[dist[x]! < 0 ? 0 : nSw - dist[x]!]!++] = x;
}

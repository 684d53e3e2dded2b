import { Heap } from './heap.js';
import { IbsmError } from './errors.js';

/** An injectable clock so the SM, RPC timeouts and the simulated fabric can run on virtual time in tests. */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
  /** Run `fn` soon, after the current event-loop turn (I/O and due timers get their turn first).
   * Every deferral in `src/` goes through this, so virtual time also orders it. */
  defer(fn: () => void): void;
}

/** Real time starts at 0 when this module loads (as performance.now starts near 0). */
const HR0 = process.hrtime();

export class RealClock implements Clock {
  private next = 1;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  now(): number {
    // process.hrtime, not performance.now: the `performance` global loads node:perf_hooks on
    // first use (start-up time), and each call costs about twice as much.
    const t = process.hrtime();
    return (t[0] - HR0[0]) * 1e3 + (t[1] - HR0[1]) / 1e6;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.next++;
    const t = setTimeout(() => {
      this.timers.delete(id);
      fn();
    }, ms);
    this.timers.set(id, t);
    return { id };
  }
  clearTimeout(h: TimerHandle): void {
    const t = this.timers.get(h.id);
    if (t) {
      clearTimeout(t);
      this.timers.delete(h.id);
    }
  }
  defer(fn: () => void): void {
    setImmediate(fn);
  }
}

interface VTimer {
  id: number;
  at: number;
  seq: number;
  fn: () => void;
}

const vtimerLess = (x: VTimer, y: VTimer): boolean => x.at < y.at || (x.at === y.at && x.seq < y.seq);

/** Timers by due time, in order (FIFO for ties): a binary heap, cancelled ones dropped lazily
 * when they reach the top. The store of VirtualClock and PacedClock. */
export class TimerQueue {
  /** Timers added so far (the next one's sequence number). */
  seq = 0;
  private nextId = 1;
  private readonly live = new Map<number, VTimer>();
  private readonly heap = new Heap<VTimer>(vtimerLess);
  add(at: number, fn: () => void): TimerHandle {
    const id = this.nextId++;
    const tm: VTimer = { id, at, seq: this.seq++, fn };
    this.live.set(id, tm);
    this.heap.push(tm);
    return { id };
  }
  /** Cancel; the due time of the timer cancelled, if it was pending. */
  cancel(h: TimerHandle): number | undefined {
    const tm = this.live.get(h.id);
    this.live.delete(h.id);
    return tm?.at;
  }
  /** Pending timers. */
  get size(): number {
    return this.live.size;
  }
  /** Due time of the earliest pending timer, if any. */
  nextAt(): number | undefined {
    this.dropCancelled();
    return this.heap.peek()?.at;
  }
  private dropCancelled(): void {
    for (;;) {
      const top = this.heap.peek();
      if (!top || this.live.get(top.id) === top) return;
      this.heap.pop();
    }
  }
  /** Take the earliest pending timer if it is due by `limit` (and was added before sequence
   * number `before`, when given). */
  popDue(limit: number, before = Infinity): { at: number; fn: () => void } | undefined {
    this.dropCancelled();
    const top = this.heap.peek();
    if (!top || top.at > limit || top.seq >= before) return undefined;
    this.heap.pop();
    this.live.delete(top.id);
    return top;
  }
}

/** A virtual clock: time moves only when advanced. Timers fire in time order (FIFO for ties). */
/** A run of virtual time (VirtualClock.runUntil) that cannot reach its end: nothing pending
 * (deadlock) or past its limit. */
export class VirtualTimeError extends IbsmError {
  override readonly name = 'VirtualTimeError';
}

export class VirtualClock implements Clock {
  private t = 0;
  private readonly q = new TimerQueue();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.q.add(this.t + Math.max(0, ms), fn);
  }
  clearTimeout(h: TimerHandle): void {
    this.q.cancel(h);
  }
  /** A zero-delay timer: runs at the current virtual time, after the timers already due. */
  defer(fn: () => void): void {
    this.setTimeout(fn, 0);
  }
  /** Number of pending timers. */
  get pending(): number {
    return this.q.size;
  }
  /** Time of the earliest pending timer, if any. */
  nextAt(): number | undefined {
    return this.q.nextAt();
  }
  private popDue(limit: number): { at: number; fn: () => void } | undefined {
    return this.q.popDue(limit);
  }
  /** Advance by `ms`, firing due timers in order (timers they schedule fire too if due). */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      const tm = this.popDue(target);
      if (!tm) break;
      this.t = tm.at;
      tm.fn();
    }
    this.t = target;
  }
  /** Jump straight to the earliest pending timer and fire it (only it: timers it schedules, even
   * zero-delay ones, wait for the next call). Returns false, and does nothing, if none is pending. */
  advanceToNext(): boolean {
    const tm = this.popDue(Infinity);
    if (!tm) return false;
    if (tm.at > this.t) this.t = tm.at;
    tm.fn();
    return true;
  }

  /** Run virtual time until `p` settles (its value or rejection is returned), or until `cond()`
   * holds, jumping from deadline to deadline: let promise continuations and in-process work settle
   * (a few event-loop turns), then advance straight to the next pending timer and fire the timers
   * due at that instant, one at a time with an event-loop turn between them. Throws when more than
   * `maxMs` of virtual time would pass (the clock is then left at start + maxMs), or when nothing is
   * pending and the work has not finished (a deadlock: nothing could ever finish it). */
  runUntil<T>(p: Promise<T>, maxMs?: number): Promise<T>;
  runUntil(cond: () => boolean, maxMs?: number): Promise<void>;
  async runUntil<T>(until: Promise<T> | (() => boolean), maxMs = 60_000): Promise<T | void> {
    let settled = false;
    let q: Promise<T> | undefined;
    if (typeof until !== 'function') {
      q = until.finally(() => (settled = true));
      q.catch(() => undefined); // observed by the caller
    }
    const done = typeof until === 'function' ? until : () => settled;
    const start = this.t;
    const limit = start + maxMs;
    for (;;) {
      if (await settleUnless(done, SETTLE_TURNS)) break;
      let next = this.nextAt();
      if (next === undefined) {
        // Give slow in-process chains (setImmediate hops) more turns before calling it a deadlock.
        if (await settleUnless(done, DEADLOCK_TURNS)) break;
        next = this.nextAt();
        if (next === undefined) throw new VirtualTimeError(`deadlock: ${q ? 'the promise has not settled' : 'the condition does not hold'} at ${this.t} ms of virtual time (${this.t - start} ms in) and no timer is pending`);
      }
      if (next > limit) {
        this.t = Math.max(this.t, limit);
        throw new VirtualTimeError(`did not settle within ${maxMs} ms of virtual time`);
      }
      if (next > this.t) this.t = next;
      // Everything due at this instant, each followed by one turn for its continuations.
      for (;;) {
        const tm = this.popDue(this.t);
        if (!tm) break;
        tm.fn();
        await turn();
      }
    }
    return q;
  }

  /** Advance, letting promise continuations run between timers. */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.t + ms;
    for (;;) {
      await flushMicrotasks();
      const tm = this.popDue(target);
      if (!tm) break;
      this.t = tm.at;
      tm.fn();
    }
    this.t = target;
    await flushMicrotasks();
  }
}

/** Event-loop turns `runUntil` gives in-process work before it moves virtual time on, and before it
 * calls a run with no pending timer a deadlock. */
const SETTLE_TURNS = 10;
const DEADLOCK_TURNS = 100;

const turn = (): Promise<void> => new Promise<void>((r) => setImmediate(r));

/** Up to `turns` event-loop turns (each drains the microtask queue), stopping early once `done()`. */
async function settleUnless(done: () => boolean, turns: number): Promise<boolean> {
  for (let i = 0; i < turns; i++) {
    if (done()) return true;
    await turn();
  }
  return done();
}

export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await turn();
}

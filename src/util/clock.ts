import { Heap } from './heap.js';

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

export class RealClock implements Clock {
  private next = 1;
  private readonly timers = new Map<number, NodeJS.Timeout>();
  now(): number {
    return performance.now();
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

/** A virtual clock: time moves only when advanced. Timers fire in time order (FIFO for ties).
 * Timers live in a binary heap (cancelled ones are dropped lazily when they reach the top). */
export class VirtualClock implements Clock {
  private t = 0;
  private seq = 0;
  private nextId = 1;
  private readonly live = new Map<number, VTimer>();
  private readonly heap = new Heap<VTimer>(vtimerLess);
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    const tm: VTimer = { id, at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.live.set(id, tm);
    this.heap.push(tm);
    return { id };
  }
  clearTimeout(h: TimerHandle): void {
    this.live.delete(h.id);
  }
  /** A zero-delay timer: runs at the current virtual time, after the timers already due. */
  defer(fn: () => void): void {
    this.setTimeout(fn, 0);
  }
  /** Number of pending timers. */
  get pending(): number {
    return this.live.size;
  }
  /** Time of the earliest pending timer, if any. */
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
  private popDue(limit: number): VTimer | undefined {
    this.dropCancelled();
    const top = this.heap.peek();
    if (!top || top.at > limit) return undefined;
    this.heap.pop();
    this.live.delete(top.id);
    return top;
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

export async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
}

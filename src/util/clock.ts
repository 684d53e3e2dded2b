/** An injectable clock so the SM, RPC timeouts and the simulated fabric can run on virtual time in tests. */
export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
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
}

interface VTimer {
  id: number;
  at: number;
  seq: number;
  fn: () => void;
}

/** A virtual clock: time moves only when advanced. Timers fire in time order (FIFO for ties). */
export class VirtualClock implements Clock {
  private t = 0;
  private seq = 0;
  private nextId = 1;
  private readonly timers = new Map<number, VTimer>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.t + Math.max(0, ms), seq: this.seq++, fn });
    return { id };
  }
  clearTimeout(h: TimerHandle): void {
    this.timers.delete(h.id);
  }
  /** Number of pending timers. */
  get pending(): number {
    return this.timers.size;
  }
  private nextDue(limit: number): VTimer | undefined {
    let best: VTimer | undefined;
    for (const tm of this.timers.values()) {
      if (tm.at > limit) continue;
      if (!best || tm.at < best.at || (tm.at === best.at && tm.seq < best.seq)) best = tm;
    }
    return best;
  }
  /** Advance by `ms`, firing due timers in order (timers they schedule fire too if due). */
  advance(ms: number): void {
    const target = this.t + ms;
    for (;;) {
      const tm = this.nextDue(target);
      if (!tm) break;
      this.timers.delete(tm.id);
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
      const tm = this.nextDue(target);
      if (!tm) break;
      this.timers.delete(tm.id);
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

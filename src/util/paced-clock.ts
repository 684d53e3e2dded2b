import { RealClock, TimerQueue, type Clock, type TimerHandle } from './clock.js';

/** The step of real time `now()` moves by (0.1 ms): finer than any timer the SM sets, coarse
 * enough that the MADs sent in one burst share a due time on the fabric. */
const TICK_MS = 0.1;

/** One time base for an in-process fabric and the SM (and clients) running on it: real time, except
 * that timers due within `leadMs` of now fire on the next event-loop turn, `now()` jumping to their
 * due time. So the fabric's modelled latencies (microseconds a hop) cost no wall time and keep their
 * order, while the SM's timers (sweep interval, MAD timeouts, polls) and the fabric's own (trap
 * repeats, injected delays, M_Key leases) take the real time they name: a MAD the fabric delays by
 * 2 s meets the SM's 1 s timeout, as on a real fabric. `now()` moves with real time in steps of
 * 0.1 ms (never more than a step behind it), never backwards; timers fire in time order (FIFO for ties), as on VirtualClock, and a timer set while
 * others fire waits for the next turn. */
export class PacedClock implements Clock {
  private t: number;
  private readonly q = new TimerQueue();
  private turnPending = false;
  private wakeTimer?: NodeJS.Timeout;
  private wakeAt = Infinity;

  constructor(
    private readonly leadMs = 1,
    private readonly real: () => number = ((c) => () => c.now())(new RealClock()),
  ) {
    this.t = real();
  }

  now(): number {
    // Real time in steps of TICK_MS: the MADs a sweep sends within a step share their due times
    // on the fabric (sim/scheduler.ts buckets them by due time), as on a virtual clock.
    const r = Math.floor(this.real() / TICK_MS) * TICK_MS;
    if (r > this.t) this.t = r;
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const h = this.q.add(this.now() + Math.max(0, ms), fn);
    this.wake();
    return h;
  }

  clearTimeout(h: TimerHandle): void {
    // The real timer waits for no cancelled timer (one left would hold the process up to its time).
    if (this.q.cancel(h) === this.wakeAt) {
      clearTimeout(this.wakeTimer);
      this.wakeTimer = undefined;
      this.wakeAt = Infinity;
      this.wake();
    }
  }

  /** A zero-delay timer: after the timers already due, in the next turn. */
  defer(fn: () => void): void {
    this.setTimeout(fn, 0);
  }

  /** Timers pending. */
  get pending(): number {
    return this.q.size;
  }

  /** The next turn for what is due within the lead, else a real timer for the earliest one. */
  private wake(): void {
    const next = this.q.nextAt();
    if (next === undefined || this.turnPending) return;
    const wait = next - this.now();
    if (wait <= this.leadMs) {
      this.turnPending = true;
      setImmediate(this.turn);
      return;
    }
    if (this.wakeTimer && this.wakeAt <= next) return;
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeAt = next;
    this.wakeTimer = setTimeout(this.onWake, Math.ceil(wait - this.leadMs));
  }

  private readonly onWake = (): void => {
    this.wakeTimer = undefined;
    this.wakeAt = Infinity;
    this.wake();
  };

  /** Fire what is due within the lead and was set before this turn, in order; what those set
   * waits for the next turn (I/O gets its turn between, as with setImmediate on a RealClock). */
  private readonly turn = (): void => {
    this.turnPending = false;
    const limit = this.now() + this.leadMs;
    const before = this.q.seq;
    try {
      for (let tm = this.q.popDue(limit, before); tm; tm = this.q.popDue(limit, before)) {
        if (tm.at > this.t) this.t = tm.at;
        tm.fn();
      }
    } finally {
      this.wake();
    }
  };
}

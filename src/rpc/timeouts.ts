/**
 * The retry-timeout policy of MadRpc: one deadline per try, all in a heap under a single clock
 * timer (stale entries dropped lazily), and the grace turn before a deadline counts.
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { Heap } from '../util/heap.js';
import type { Pending } from './pending.js';

interface Deadline {
  at: number;
  p: Pending;
  tries: number;
}
const deadlineLess = (a: Deadline, b: Deadline): boolean => a.at < b.at;

export class TryDeadlines {
  private readonly deadlines = new Heap<Deadline>(deadlineLess);
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private closed = false;

  constructor(
    private readonly clock: Clock,
    /** Let the event loop deliver what arrived before expiring tries (see onTimer). */
    private readonly graceTurn: boolean,
    /** A try of `p` expired without an answer. */
    private readonly onExpired: (p: Pending) => void,
  ) {}

  /** The try `p.tries` of `p` was just sent: it expires `p.timeoutMs` from now. */
  arm(p: Pending): void {
    const at = this.clock.now() + p.timeoutMs;
    this.deadlines.push({ at, p, tries: p.tries });
    if (at < this.timerAt) {
      if (this.timer) this.clock.clearTimeout(this.timer);
      this.timerAt = at;
      this.timer = this.clock.setTimeout(this.onTimer, p.timeoutMs);
    }
  }

  /** A deadline still counts while its try is the request's latest and the response is awaited. */
  private static live(d: Deadline): boolean {
    return d.p.awaiting && d.tries === d.p.tries;
  }

  /** A deadline passed. After a long pause of this thread (a GC, a big synchronous step) timers run
   * before the I/O that arrived meanwhile, so responses may be waiting unprocessed: give the event
   * loop one turn (the clock's defer: setImmediate runs after the poll phase) to deliver them
   * before declaring tries timed out. Without it a stall times out a whole window of requests
   * that were answered. */
  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    if (this.graceTurn) {
      this.timerAt = -Infinity; // an expiry is pending: rearm() must not schedule another timer
      this.clock.defer(this.expire);
      return;
    }
    this.expire();
  };

  private readonly expire = (): void => {
    this.timerAt = Infinity;
    if (this.closed) return;
    const now = this.clock.now();
    for (;;) {
      const top = this.deadlines.peek();
      if (!top) break;
      const live = TryDeadlines.live(top);
      if (live && top.at > now) break;
      this.deadlines.pop();
      if (!live) continue;
      this.onExpired(top.p);
    }
    this.rearm();
  };

  private rearm(): void {
    for (;;) {
      const top = this.deadlines.peek();
      if (!top) return;
      if (TryDeadlines.live(top)) break;
      this.deadlines.pop();
    }
    const at = this.deadlines.peek()!.at;
    if (at >= this.timerAt) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(this.onTimer, Math.max(0, at - this.clock.now()));
  }

  close(): void {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
    this.deadlines.clear();
  }
}

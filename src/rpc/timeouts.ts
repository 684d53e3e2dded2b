/**
 * The retry-timeout policy of MadRpc: one deadline per try under a single clock timer (stale
 * entries dropped lazily), and the grace turn before a deadline counts.
 *
 * Deadlines come in the order they are armed when every try waits as long (the usual case: a
 * fixed timeout): those go into a ring of preallocated columns (the try's Pending, its `gen` and
 * try number, the deadline), nothing allocated per try. A deadline a little earlier than the
 * ring's last (an adaptive timeout that shrank) joins the ring at that last time (the try waits at
 * most a quarter longer); one earlier still (a request with a short timeout of its own) goes into
 * a heap; expiry takes whichever of the two is due first.
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { Heap } from '../util/heap.js';
import type { Pending } from './pending.js';

interface Deadline {
  at: number;
  p: Pending;
  gen: number;
  tries: number;
}
const deadlineLess = (a: Deadline, b: Deadline): boolean => a.at < b.at;

/** A FIFO of (Pending, gen, tries, at) in parallel columns, grown by doubling. */
class DeadlineRing {
  private ps: (Pending | undefined)[] = new Array<Pending | undefined>(256).fill(undefined);
  private gens = new Int32Array(256);
  private tries = new Int32Array(256);
  private ats = new Float64Array(256);
  private head = 0;
  size = 0;
  /** The deadline of the latest entry (a new one must not be earlier to join the ring). */
  lastAt = -Infinity;

  push(p: Pending, at: number): void {
    if (this.size === this.ps.length) this.grow();
    const i = (this.head + this.size) & (this.ps.length - 1);
    this.ps[i] = p;
    this.gens[i] = p.gen;
    this.tries[i] = p.tries;
    this.ats[i] = at;
    this.size++;
    this.lastAt = at;
  }
  private grow(): void {
    const n = this.ps.length;
    const ps = new Array<Pending | undefined>(n * 2).fill(undefined);
    const gens = new Int32Array(n * 2);
    const tries = new Int32Array(n * 2);
    const ats = new Float64Array(n * 2);
    for (let k = 0; k < n; k++) {
      const i = (this.head + k) & (n - 1);
      ps[k] = this.ps[i];
      gens[k] = this.gens[i]!;
      tries[k] = this.tries[i]!;
      ats[k] = this.ats[i]!;
    }
    this.ps = ps;
    this.gens = gens;
    this.tries = tries;
    this.ats = ats;
    this.head = 0;
  }
  get headAt(): number {
    return this.ats[this.head]!;
  }
  /** The head's Pending when its deadline is still live (see TryDeadlines.live), else undefined. */
  headLive(): Pending | undefined {
    const i = this.head;
    const p = this.ps[i]!;
    return live(p, this.gens[i]!, this.tries[i]!) ? p : undefined;
  }
  shift(): void {
    this.ps[this.head] = undefined;
    this.head = (this.head + 1) & (this.ps.length - 1);
    this.size--;
    if (this.size === 0) this.lastAt = -Infinity;
  }
  clear(): void {
    this.ps.fill(undefined);
    this.head = 0;
    this.size = 0;
    this.lastAt = -Infinity;
  }
}

/** A deadline still counts while it is its request's (not a reused Pending's), its try is the
 * latest, and the response is awaited. */
function live(p: Pending, gen: number, tries: number): boolean {
  return p.gen === gen && p.awaiting && p.tries === tries;
}

export class TryDeadlines {
  private readonly ring = new DeadlineRing();
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

  /** The try `p.tries` of `p` was sent at `now`: it expires `p.timeoutMs` later. */
  arm(p: Pending, now = this.clock.now()): void {
    let at = now + p.timeoutMs;
    // A deadline a little earlier than the ring's last (an adaptive timeout that just shrank)
    // joins the ring at the last one's time: that try waits at most a quarter longer.
    const last = this.ring.lastAt;
    if (at >= last || last - at <= p.timeoutMs / 4) {
      at = Math.max(at, last);
      this.ring.push(p, at);
    } else this.deadlines.push({ at, p, gen: p.gen, tries: p.tries });
    if (at < this.timerAt) {
      if (this.timer) this.clock.clearTimeout(this.timer);
      this.timerAt = at;
      this.timer = this.clock.setTimeout(this.onTimer, at - now);
    }
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

  /** Drop stale entries off the front of the ring and the heap. */
  private dropStale(): void {
    while (this.ring.size && !this.ring.headLive()) this.ring.shift();
    for (;;) {
      const top = this.deadlines.peek();
      if (!top || live(top.p, top.gen, top.tries)) break;
      this.deadlines.pop();
    }
  }

  private readonly expire = (): void => {
    this.timerAt = Infinity;
    if (this.closed) return;
    const now = this.clock.now();
    for (;;) {
      this.dropStale();
      const top = this.deadlines.peek();
      const ringFirst = this.ring.size > 0 && (!top || this.ring.headAt <= top.at);
      if (ringFirst) {
        if (this.ring.headAt > now) break;
        const p = this.ring.headLive()!;
        this.ring.shift();
        this.onExpired(p);
      } else {
        if (!top || top.at > now) break;
        this.deadlines.pop();
        this.onExpired(top.p);
      }
    }
    this.rearm();
  };

  private rearm(): void {
    this.dropStale();
    const top = this.deadlines.peek();
    if (!this.ring.size && !top) return;
    const at = Math.min(this.ring.size ? this.ring.headAt : Infinity, top ? top.at : Infinity);
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
    this.ring.clear();
  }
}

/**
 * The simulated fabric's event scheduler: MAD arrivals and trap repeats on the injected clock,
 * from one event heap (util/heap) behind a single clock timer. With zero hop latency, events due
 * now run on the next `clock.defer` turn instead (fast on a RealClock: no timer per MAD).
 *
 * A MAD's arrival is one event object carrying the packet and where it lands (no closure per
 * MAD); it is handed to the `arrive` callback given at construction. Other events run a function.
 *
 * Events are kept in FIFO buckets by due time, and only the distinct due times are in the heap:
 * a window of MADs in flight shares a few due times (now + hops x hop latency), so a push is a
 * map lookup and an array push instead of a sift through a heap of every event. The order is the
 * heap's: by due time, then by scheduling order.
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { Heap } from '../util/heap.js';
import type { SimNode } from './node.js';
import type { Packet } from './packet.js';

export class SimEvent {
  constructor(
    public at: number,
    public seq: number,
    /** What runs (undefined: a packet arrival). */
    public fn: (() => void) | undefined,
    /** A packet arrival: the packet, the node and port it reaches, whether its SMA takes it, and
     * the physical port it came in on. An arrival's event is the scheduler's own: reused for a
     * later arrival once it has run (MAD arrivals allocate no event). */
    public pkt: Packet | undefined,
    public node: SimNode | undefined,
    public port: number,
    public sma: boolean,
    public arrivalPort: number,
  ) {}
}

/** Arrival events kept for reuse (a window of MADs in flight needs about as many). */
const MAX_SPARE_EVENTS = 4096;

/** Where the scheduler hands a packet arrival. */
export type ArrivalHandler = (ev: SimEvent) => void;

/** The events due at one time, in scheduling order (`head`: the next to run). Emptied buckets are
 * kept for reuse (MADs in flight at distinct due times would otherwise cost a bucket each). */
interface Bucket {
  at: number;
  readonly items: SimEvent[];
  head: number;
}
const MAX_SPARE_BUCKETS = 1024;

const bucketLess = (x: Bucket, y: Bucket): boolean => x.at < y.at;

/** Due times are kept to whole nanoseconds (of milliseconds): sums of hop latencies from different
 * starting times that are equal but for floating-point rounding (1.001 + 0.006 and 1.002 + 0.005)
 * fall into one bucket, so the MADs in flight share a few due times (and clock timers) rather
 * than each having its own. */
const TICKS_PER_MS = 1e6;
function dueAt(now: number, delayMs: number): number {
  return Math.round((now + Math.max(0, delayMs)) * TICKS_PER_MS) / TICKS_PER_MS;
}
const noop = (): void => {};

export class Scheduler {
  /** Distinct due times, earliest first; each bucket also in `byTime`. */
  private readonly times = new Heap<Bucket>(bucketLess);
  private readonly byTime = new Map<number, Bucket>();
  private queued = 0;
  private seq = 0;
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private readonly immediate: SimEvent[] = [];
  private readonly spare: SimEvent[] = [];
  private readonly spareBuckets: Bucket[] = [];
  /** The timer's callback, made once (not a closure per arming). */
  private readonly onTimer = (): void => this.fire();
  private deferred = false;
  private closed = false;

  /** `zeroLatency`: events due now go through `clock.defer`, not the heap. */
  constructor(
    private readonly clock: Clock,
    private readonly zeroLatency: boolean,
    private readonly arrive: ArrivalHandler = () => {},
  ) {}

  /** Number of scheduled events. */
  get pending(): number {
    return this.queued + this.immediate.length;
  }

  schedule(delayMs: number, fn: () => void): SimEvent {
    return this.add(delayMs, new SimEvent(dueAt(this.clock.now(), delayMs), this.seq++, fn, undefined, undefined, 0, false, 0));
  }

  /** The arrival of `pkt` at (node, port) after `delayMs`: its SMA (`sma`) or an agent there. */
  scheduleArrival(delayMs: number, pkt: Packet, node: SimNode, port: number, sma: boolean, arrivalPort: number): void {
    const at = dueAt(this.clock.now(), delayMs);
    const ev = this.spare.pop();
    if (!ev) {
      this.add(delayMs, new SimEvent(at, this.seq++, undefined, pkt, node, port, sma, arrivalPort));
      return;
    }
    ev.at = at;
    ev.seq = this.seq++;
    ev.pkt = pkt;
    ev.node = node;
    ev.port = port;
    ev.sma = sma;
    ev.arrivalPort = arrivalPort;
    this.add(delayMs, ev);
  }

  private run(ev: SimEvent): void {
    if (ev.fn) ev.fn();
    else if (ev.pkt) {
      this.arrive(ev);
      // the handler has read what it needs: the event serves a later arrival
      ev.pkt = undefined;
      ev.node = undefined;
      if (this.spare.length < MAX_SPARE_EVENTS) this.spare.push(ev);
    }
  }

  private add(delayMs: number, it: SimEvent): SimEvent {
    const at = it.at;
    if (delayMs <= 0 && this.zeroLatency) {
      // zero-latency mode: the next deferred turn, independent of timers (fast with a RealClock)
      this.immediate.push(it);
      this.deferRun();
      return it;
    }
    let b = this.byTime.get(at);
    if (!b) {
      b = this.spareBuckets.pop();
      if (b) b.at = at;
      else b = { at, items: [], head: 0 };
      this.byTime.set(at, b);
      this.times.push(b);
    }
    b.items.push(it);
    this.queued++;
    if (at < this.timerAt) this.arm(at);
    return it;
  }

  /** The earliest event (first scheduled among those due first), or undefined. */
  private peek(): SimEvent | undefined {
    const b = this.times.peek();
    return b && b.items[b.head];
  }

  /** Remove the event `peek` returned. */
  private shift(): void {
    const b = this.times.peek()!;
    b.items[b.head++] = undefined as unknown as SimEvent; // let it go before the bucket does
    this.queued--;
    if (b.head === b.items.length) {
      this.times.pop();
      this.byTime.delete(b.at);
      if (this.spareBuckets.length < MAX_SPARE_BUCKETS) {
        b.items.length = 0;
        b.head = 0;
        this.spareBuckets.push(b);
      }
    }
  }

  cancel(it: SimEvent): void {
    it.fn = noop;
    it.pkt = undefined;
  }

  /** Drop every event and stop the timer. */
  close(): void {
    this.closed = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.times.clear();
    this.byTime.clear();
    this.queued = 0;
    this.immediate.length = 0;
  }

  private deferRun(): void {
    if (this.deferred || this.closed) return;
    this.deferred = true;
    this.clock.defer(() => this.runImmediate());
  }

  private runImmediate(): void {
    this.deferred = false;
    const batch = this.immediate.splice(0);
    try {
      for (const it of batch) if (!this.closed) this.run(it);
    } finally {
      if (this.immediate.length) this.deferRun();
    }
  }

  private arm(at: number): void {
    if (this.closed) return;
    if (this.timer) this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(this.onTimer, Math.max(0, at - this.clock.now()));
  }

  private fire(): void {
    this.timer = undefined;
    const limit = Math.max(this.clock.now(), this.timerAt);
    this.timerAt = Infinity;
    try {
      for (;;) {
        const top = this.peek();
        if (!top || top.at > limit) break;
        this.shift();
        this.run(top);
      }
    } finally {
      // an endpoint handler that throws must not stall the fabric: re-arm, then let the error surface
      const next = this.peek();
      if (next && !this.closed) this.arm(next.at);
    }
  }
}

/**
 * The simulated fabric's event scheduler: MAD arrivals and trap repeats on the injected clock,
 * from one event heap (util/heap) behind a single clock timer. With zero hop latency, events due
 * now run on the next `clock.defer` turn instead (fast on a RealClock: no timer per MAD).
 *
 * A MAD's arrival is one event object carrying the packet and where it lands (no closure per
 * MAD); it is handed to the `arrive` callback given at construction. Other events run a function.
 */
import type { Clock, TimerHandle } from '../util/clock.js';
import { Heap } from '../util/heap.js';
import type { SimNode } from './node.js';
import type { Packet } from './packet.js';

export class SimEvent {
  constructor(
    readonly at: number,
    readonly seq: number,
    /** What runs (undefined: a packet arrival). */
    public fn: (() => void) | undefined,
    /** A packet arrival: the packet, the node and port it reaches, whether its SMA takes it, and
     * the physical port it came in on. */
    public pkt: Packet | undefined,
    readonly node: SimNode | undefined,
    readonly port: number,
    readonly sma: boolean,
    readonly arrivalPort: number,
  ) {}
}

/** Where the scheduler hands a packet arrival. */
export type ArrivalHandler = (ev: SimEvent) => void;

const eventLess = (x: SimEvent, y: SimEvent): boolean => x.at < y.at || (x.at === y.at && x.seq < y.seq);
const noop = (): void => {};

export class Scheduler {
  private readonly heap = new Heap<SimEvent>(eventLess);
  private seq = 0;
  private timer: TimerHandle | undefined;
  private timerAt = Infinity;
  private readonly immediate: SimEvent[] = [];
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
    return this.heap.size + this.immediate.length;
  }

  schedule(delayMs: number, fn: () => void): SimEvent {
    return this.add(delayMs, new SimEvent(this.clock.now() + Math.max(0, delayMs), this.seq++, fn, undefined, undefined, 0, false, 0));
  }

  /** The arrival of `pkt` at (node, port) after `delayMs`: its SMA (`sma`) or an agent there. */
  scheduleArrival(delayMs: number, pkt: Packet, node: SimNode, port: number, sma: boolean, arrivalPort: number): SimEvent {
    return this.add(delayMs, new SimEvent(this.clock.now() + Math.max(0, delayMs), this.seq++, undefined, pkt, node, port, sma, arrivalPort));
  }

  private run(ev: SimEvent): void {
    if (ev.fn) ev.fn();
    else if (ev.pkt) this.arrive(ev);
  }

  private add(delayMs: number, it: SimEvent): SimEvent {
    const at = it.at;
    if (delayMs <= 0 && this.zeroLatency) {
      // zero-latency mode: the next deferred turn, independent of timers (fast with a RealClock)
      this.immediate.push(it);
      this.deferRun();
      return it;
    }
    this.heap.push(it);
    if (at < this.timerAt) this.arm(at);
    return it;
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
    this.heap.clear();
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
    this.timer = this.clock.setTimeout(() => this.fire(), Math.max(0, at - this.clock.now()));
  }

  private fire(): void {
    this.timer = undefined;
    const limit = Math.max(this.clock.now(), this.timerAt);
    this.timerAt = Infinity;
    try {
      for (;;) {
        const top = this.heap.peek();
        if (!top || top.at > limit) break;
        this.heap.pop();
        this.run(top);
      }
    } finally {
      // an endpoint handler that throws must not stall the fabric: re-arm, then let the error surface
      const next = this.heap.peek();
      if (next && !this.closed) this.arm(next.at);
    }
  }
}

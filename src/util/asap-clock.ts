import { VirtualClock, type Clock, type TimerHandle } from './clock.js';

/** Virtual time that runs as fast as the event loop allows: each timer fires on the next
 * setImmediate turn (everything due within a slice of virtual time fires in the same turn), with
 * `now()` jumping to the due time.
 * The in-process fabric runs on it under the CLI: MAD latency is modelled, but costs no wall time. */
export class AsapClock implements Clock {
  private readonly v = new VirtualClock();
  /** Virtual time fired per event-loop turn. */
  constructor(private readonly sliceMs = 1) {}
  private scheduled = false;
  now(): number {
    return this.v.now();
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const h = this.v.setTimeout(fn, ms);
    this.kick();
    return h;
  }
  clearTimeout(h: TimerHandle): void {
    this.v.clearTimeout(h);
  }
  defer(fn: () => void): void {
    this.setTimeout(fn, 0);
  }
  private kick(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const next = this.v.nextAt();
      if (next === undefined) return;
      // Fire everything due within the next `sliceMs` of virtual time in one turn (a window of
      // MADs in flight is one batch), then let promise continuations run.
      this.v.advance(Math.max(0, next - this.v.now()) + this.sliceMs);
      if (this.v.pending) this.kick();
    });
  }
}

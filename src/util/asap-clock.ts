import { VirtualClock, type Clock, type TimerHandle } from './clock.js';

/** Virtual time that runs as fast as the event loop allows: each timer fires on the next
 * setImmediate turn after everything due before it, with `now()` jumping to its due time.
 * The in-process fabric runs on it under the CLI: MAD latency is modelled, but costs no wall time. */
export class AsapClock implements Clock {
  private readonly v = new VirtualClock();
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
  private kick(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const next = this.v.nextAt();
      if (next === undefined) return;
      this.v.advance(Math.max(0, next - this.v.now()));
      if (this.v.pending) this.kick();
    });
  }
}

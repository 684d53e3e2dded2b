/** Trap storm damping (a babbling port): per source LID, at most `limit` traps per `windowMs` are
 * acted on (logged, forwarded, a sweep asked for); beyond that the source is damped until a whole
 * window passes under the limit. Every trap is still repressed by the caller. The verdict
 * `storm` comes once per storm, for its one log line. Pure (time passed in); its state is bounded
 * (`maxSources`: past it, the sources not damped are forgotten first). */

export type TrapVerdict = 'pass' | 'storm' | 'damped';

interface Source {
  windowStart: number;
  count: number;
  damped: boolean;
}

export class TrapDamper {
  readonly windowMs: number;
  readonly limit: number;
  private readonly maxSources: number;
  private readonly sources = new Map<number, Source>();
  /** Traps damped so far. */
  damped = 0;
  /** Storms seen so far. */
  storms = 0;

  constructor(o: { windowMs?: number; limit?: number; maxSources?: number } = {}) {
    this.windowMs = o.windowMs ?? 1000;
    this.limit = o.limit ?? 4;
    this.maxSources = o.maxSources ?? 4096;
  }

  admit(lid: number, now: number): TrapVerdict {
    let s = this.sources.get(lid);
    if (!s) {
      if (this.sources.size >= this.maxSources) this.evict();
      s = { windowStart: now, count: 0, damped: false };
      this.sources.set(lid, s);
    }
    if (now - s.windowStart >= this.windowMs) {
      // A new window: a damped source calms down only after a whole window under the limit.
      if (s.damped && s.count <= this.limit) s.damped = false;
      s.windowStart = now;
      s.count = 0;
    }
    s.count++;
    if (s.damped) {
      this.damped++;
      return 'damped';
    }
    if (s.count > this.limit) {
      s.damped = true;
      this.storms++;
      this.damped++;
      return 'storm';
    }
    return 'pass';
  }

  private evict(): void {
    for (const [lid, s] of this.sources) if (!s.damped) this.sources.delete(lid);
    if (this.sources.size >= this.maxSources) this.sources.clear();
  }

  /** Sources tracked now. */
  get size(): number {
    return this.sources.size;
  }
}

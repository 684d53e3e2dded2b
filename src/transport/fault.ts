/** A fault injector wrapping any Transport: drops, ibsim-style bounces (status 110), delays,
 * duplicates, reorders and corrupts MADs, per direction, from a seeded PRNG so a run can be
 * reproduced from its seed. Delays and reorder hold-backs use the injected clock. The decisions
 * are the shared fault model's (./fault-model.ts), as in the simulated fabric. */
import type { Clock } from '../util/clock.js';
import { Rng } from '../util/rng.js';
import { applyCorruption, decideFaults, delayOf, reorders, type FaultRates } from './fault-model.js';
import type { AgentOptions, LocalPortInfo, MadAddress, ReceiveHandler, ReceivedMad, Transport } from './types.js';

export interface FaultSpec {
  /** Probability a MAD silently disappears. */
  drop?: number;
  /** Send direction only: probability a MAD is handed back at once with status 110 (as ibsim does). */
  bounce?: number;
  /** Delay range in ms [min, max] applied to every MAD (uniform). */
  delay?: [number, number];
  /** Probability a MAD is delivered twice. */
  duplicate?: number;
  /** Probability one random bit of a MAD is flipped (at or after byte `corruptFrom`). */
  corrupt?: number;
  /** First byte corruption may touch (default 0). */
  corruptFrom?: number;
  /** Probability a MAD is held back and delivered after the next one (or after `reorderHoldMs`). */
  reorder?: number;
  /** Longest a reordered MAD is held when nothing follows it. Default 1 ms. */
  reorderHoldMs?: number;
}

export interface FaultOptions extends FaultSpec {
  seed: number;
  /** Overrides for MADs we send. */
  send?: FaultSpec;
  /** Overrides for MADs we receive. */
  receive?: FaultSpec;
  /** Only MADs for which this returns true are subject to faults. */
  filter?: (mad: Uint8Array, direction: 'send' | 'receive') => boolean;
}

export interface FaultCounters {
  seen: number;
  passed: number;
  dropped: number;
  bounced: number;
  delayed: number;
  duplicated: number;
  corrupted: number;
  reordered: number;
}

const zero = (): FaultCounters => ({ seen: 0, passed: 0, dropped: 0, bounced: 0, delayed: 0, duplicated: 0, corrupted: 0, reordered: 0 });
const ETIMEDOUT = 110;

/** A transport's FaultSpec in the shared fault model's terms. */
function ratesOf(s: FaultSpec): FaultRates {
  const d = s.delay;
  const min = d ? Math.max(0, d[0]) : 0;
  return {
    drop: s.drop,
    bounce: s.bounce,
    corrupt: s.corrupt,
    corruptFrom: s.corruptFrom,
    duplicate: s.duplicate,
    // a whole number of ms in [min, max]
    delay: d && d[1] > 0 ? { ms: min, jitterMs: d[1] - min, whole: true } : undefined,
    reorder: s.reorder,
  };
}

class Direction {
  readonly c: FaultCounters = zero();
  private held: (() => void) | undefined;
  private readonly rng: Rng;
  private readonly rates: FaultRates;
  constructor(
    seed: number,
    private readonly spec: FaultSpec,
    private readonly clock: Clock,
  ) {
    this.rng = new Rng(seed);
    this.rates = ratesOf(spec);
  }
  /** Apply faults to `mad`; `deliver` gets the (possibly corrupted copy of the) bytes. */
  process(mad: Uint8Array, deliver: (b: Uint8Array) => void, bounce?: (b: Uint8Array) => void): void {
    this.c.seen++;
    const f = decideFaults(this.rates, this.rng, mad.length, bounce !== undefined);
    if (f.drop) {
      this.c.dropped++;
      return;
    }
    if (f.bounce) {
      this.c.bounced++;
      const copy = mad.slice();
      queueMicrotask(() => bounce!(copy));
      return;
    }
    const b = mad.slice();
    if (f.corrupt) {
      applyCorruption(b, f.corrupt);
      this.c.corrupted++;
    }
    const copies = f.duplicate ? 2 : 1;
    if (copies === 2) this.c.duplicated++;
    for (let i = 0; i < copies; i++) {
      const bytes = i === 0 ? b : b.slice();
      const ms = delayOf(this.rates.delay, this.rng);
      if (ms > 0) {
        this.c.delayed++;
        this.clock.setTimeout(() => this.release(bytes, deliver), ms);
      } else this.release(bytes, deliver);
    }
  }
  private release(b: Uint8Array, deliver: (b: Uint8Array) => void): void {
    if (!this.held && reorders(this.rates, this.rng)) {
      this.c.reordered++;
      let done = false;
      const go = (): void => {
        if (done) return;
        done = true;
        if (this.held === go) this.held = undefined;
        this.c.passed++;
        deliver(b);
      };
      this.held = go;
      this.clock.setTimeout(go, this.spec.reorderHoldMs ?? 1);
      return;
    }
    this.c.passed++;
    deliver(b);
    const h = this.held;
    if (h) h();
  }
}

export class FaultyTransport implements Transport {
  readonly kind: string;
  private handler: ReceiveHandler | undefined;
  private readonly tx: Direction;
  private readonly rx: Direction;
  /** Faults are applied only while enabled (default true). */
  enabled = true;
  constructor(
    readonly inner: Transport,
    private readonly opts: FaultOptions,
    clock: Clock,
  ) {
    this.kind = `faulty(${inner.kind})`;
    const base: FaultSpec = { drop: opts.drop, bounce: opts.bounce, delay: opts.delay, duplicate: opts.duplicate, corrupt: opts.corrupt, corruptFrom: opts.corruptFrom, reorder: opts.reorder, reorderHoldMs: opts.reorderHoldMs };
    const merge = (o?: FaultSpec): FaultSpec => {
      const out: FaultSpec = { ...base };
      for (const [k, v] of Object.entries(o ?? {})) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
      return out;
    };
    this.tx = new Direction(opts.seed, merge(opts.send), clock);
    this.rx = new Direction((opts.seed ^ 0x9e3779b9) >>> 0, merge(opts.receive), clock);
    inner.onReceive((m) => this.onInner(m));
  }
  get local(): LocalPortInfo {
    return this.inner.local;
  }
  /** What was done to MADs in each direction. */
  get stats(): { send: FaultCounters; receive: FaultCounters } {
    return { send: { ...this.tx.c }, receive: { ...this.rx.c } };
  }
  register(mgmtClass: number, classVersion: number, opts?: AgentOptions): void {
    this.inner.register(mgmtClass, classVersion, opts);
  }
  send(mad: Uint8Array, addr: MadAddress): void {
    if (!this.enabled || (this.opts.filter && !this.opts.filter(mad, 'send'))) {
      this.inner.send(mad, addr);
      return;
    }
    this.tx.process(
      mad,
      (b) => {
        try {
          this.inner.send(b, addr);
        } catch {
          /* a delayed send that fails is a lost MAD */
        }
      },
      (b) => this.handler?.({ data: b, addr, status: ETIMEDOUT }),
    );
  }
  private onInner(m: ReceivedMad): void {
    if (!this.enabled || m.status !== 0 || (this.opts.filter && !this.opts.filter(m.data, 'receive'))) {
      this.handler?.(m);
      return;
    }
    this.rx.process(m.data, (b) => this.handler?.({ data: b, addr: m.addr, status: 0 }));
  }
  onReceive(handler: ReceiveHandler): void {
    this.handler = handler;
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

export function withFaults(transport: Transport, opts: FaultOptions, clock: Clock): FaultyTransport {
  return new FaultyTransport(transport, opts, clock);
}

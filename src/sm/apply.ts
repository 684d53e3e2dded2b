/** The one apply step: send a list of planned writes, at most `window` in flight (MadRpc's own
 * window limits what is on the wire), and report each one acknowledged or failed. Every Set the SM
 * sends to the fabric goes through `apply`: the sweeps' programming phases (sm/sweep-writes.ts
 * adds their logging, counting and M_Keys), GUIDInfo (subnet.ts), router tables
 * (sm/router-tables.ts) and SMInfo (sm/sminfo.ts). One failure policy: a write that fails does not
 * stop the others; it goes to `hooks.failed` and into the result, and the caller logs and counts it. */
import { pump } from '../util/pump.js';
import type { SmpClient, SmpSink } from './smp-client.js';
import type { SmpWrite } from './programmed.js';

/** SMPs a programming step hands to the RPC at once: its window (256 in process, 64 over umad) and
 * not much more, since a write handed over beyond it waits in the RPC's queue with its MAD built,
 * and what waits long is kept alive across collections (promoted). */
export const APPLY_WINDOW = 256;
/** The LFT phase's window, its blocks coming `LFT_INTERLEAVE` switches at once (plan-tables.ts):
 * 16 switches × the RPC's per-destination window (16 in process, 8 over umad) fill its window
 * (256 in process, 64 over umad) with no block left waiting long in a per-switch queue. */
export const LFT_APPLY_WINDOW = APPLY_WINDOW;

export interface ApplyHooks {
  /** The SMA acknowledged `w`; `resp` is the SMP data it answered with (what it now holds). */
  ok(w: SmpWrite, resp: Uint8Array): void;
  /** `w` failed (timeout or error status): whatever it belonged to is unknown again. */
  failed(w: SmpWrite, error: unknown): void;
}

/** Hooks for a caller that only looks at the result. */
export const NO_HOOKS: ApplyHooks = { ok: () => undefined, failed: () => undefined };

/** Writes handed out one at a time, as the window has room (sm/plan-tables.ts's LftPlan: a sweep's
 * LFT blocks are never all planned at once). */
export interface WriteSource {
  /** The next write, or undefined when there are no more (then never called again). */
  next(): SmpWrite | undefined;
}

/** An array as a WriteSource. */
class ArraySource implements WriteSource {
  private i = 0;
  constructor(private readonly writes: readonly SmpWrite[]) {}
  next(): SmpWrite | undefined {
    return this.i < this.writes.length ? this.writes[this.i++] : undefined;
  }
}

/** Writes made one at a time by a generator (a planner's, sm/plan-ports.ts), those `keep`
 * refuses left out, each handed one also given to `each`: the planning runs as the window has
 * room, beside the answers of the writes already out. */
export class GeneratedWrites implements WriteSource {
  /** Writes handed out so far. */
  handed = 0;
  constructor(
    private readonly gen: Iterator<SmpWrite, void, void>,
    private readonly keep: (w: SmpWrite) => boolean = () => true,
    private readonly each?: (w: SmpWrite) => void,
  ) {}
  next(): SmpWrite | undefined {
    for (;;) {
      const it = this.gen.next();
      if (it.done) return undefined;
      const w = it.value;
      if (!this.keep(w)) continue;
      this.handed++;
      this.each?.(w);
      return w;
    }
  }
}

/** What one apply step did. */
export interface ApplyResult {
  /** Writes acknowledged. */
  ok: number;
  /** Writes that failed, with their errors (each also went to `hooks.failed`). */
  failed: Array<{ write: SmpWrite; error: unknown }>;
}

/** Send every write in `writes` (a list, or a source asked for the next one as the window has
 * room), whatever happens to the others; resolves when all settled. A failure goes to
 * `hooks.failed` and into the result: the caller carries on without it. Directed-route writes go
 * through the client's callback slot where it has one (no promise or closure per write), else
 * setDr; a write with `lid` goes LID-routed (setLid). */
export function apply(smp: SmpClient, writes: readonly SmpWrite[] | WriteSource, hooks: ApplyHooks, window = APPLY_WINDOW): Promise<ApplyResult> {
  const src = isSource(writes) ? writes : new ArraySource(writes);
  if (!smp.setDrTo) return applyPromised(smp, drain(src), hooks, window);
  return new Promise<ApplyResult>((resolve, reject) => new WindowedApply(smp, src, hooks, window, resolve, reject).fill());
}

/** One write's Set as a promise: LID-routed when it has a LID, else directed route. */
function send(smp: SmpClient, w: SmpWrite): Promise<Uint8Array> {
  return w.lid !== undefined ? smp.setLid(w.lid, w.attr, w.mod, w.data) : smp.setDr(w.path, w.attr, w.mod, w.data, w.mkey);
}

function isSource(w: readonly SmpWrite[] | WriteSource): w is WriteSource {
  return !Array.isArray(w);
}

/** Every write a source has left, as a list. */
function drain(src: WriteSource): SmpWrite[] {
  const out: SmpWrite[] = [];
  for (let w = src.next(); w; w = src.next()) out.push(w);
  return out;
}

/** apply over the callback slot: at most `window` writes in flight, the next started as one
 * settles; one object is the sink of every write. A hook that throws stops new writes; the
 * promise rejects with its error once the writes in flight settled (as pump does). */
class WindowedApply implements SmpSink<SmpWrite> {
  private readonly res: ApplyResult = { ok: 0, failed: [] };
  private exhausted = false;
  private active = 0;
  private filling = false;
  private finished = false;
  private hookError: unknown;
  private hookFailed = false;
  private readonly max: number;

  constructor(
    private readonly smp: SmpClient,
    private readonly src: WriteSource,
    private readonly hooks: ApplyHooks,
    window: number,
    private readonly resolve: (r: ApplyResult) => void,
    private readonly reject: (e: unknown) => void,
  ) {
    this.max = Math.max(1, window);
  }

  fill(): void {
    if (this.filling || this.finished) return; // a write settled synchronously while this loop was starting writes
    this.filling = true;
    const { src, smp } = this;
    while (!this.hookFailed && !this.exhausted && this.active < this.max) {
      const w = src.next();
      if (!w) {
        this.exhausted = true;
        break;
      }
      this.active++;
      if (w.lid === undefined) smp.setDrTo!(w, this);
      else send(smp, w).then((r) => this.smpOk(w, r), (e: unknown) => this.smpFailed(w, e as Error));
    }
    this.filling = false;
    if (this.active > 0 || (!this.hookFailed && !this.exhausted)) return;
    this.finished = true;
    if (this.hookFailed) this.reject(this.hookError);
    else this.resolve(this.res);
  }

  smpOk(w: SmpWrite, resp: Uint8Array): void {
    this.res.ok++;
    try {
      this.hooks.ok(w, resp);
    } catch (e) {
      this.hookThrew(e);
    }
    this.active--;
    this.fill();
  }

  smpFailed(w: SmpWrite, error: Error): void {
    this.res.failed.push({ write: w, error });
    try {
      this.hooks.failed(w, error);
    } catch (e) {
      this.hookThrew(e);
    }
    this.active--;
    this.fill();
  }

  private hookThrew(e: unknown): void {
    if (this.hookFailed) return;
    this.hookFailed = true;
    this.hookError = e;
  }
}

async function applyPromised(smp: SmpClient, writes: readonly SmpWrite[], hooks: ApplyHooks, window: number): Promise<ApplyResult> {
  const res: ApplyResult = { ok: 0, failed: [] };
  const jobs = writes.map((w) => () =>
    send(smp, w).then(
      (resp) => {
        res.ok++;
        hooks.ok(w, resp);
      },
      (error: unknown) => {
        res.failed.push({ write: w, error });
        hooks.failed(w, error);
      },
    ),
  );
  await pump(jobs, window);
  return res;
}

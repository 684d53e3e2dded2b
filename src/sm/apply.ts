/** The one apply step: send a list of planned writes, at most `window` in flight (MadRpc's own
 * window limits what is on the wire), and record each acknowledged one. Used by every programming
 * phase of a sweep, so "build writes → send → record → forget on error" exists once. */
import { pump } from '../util/pump.js';
import type { SmpClient } from './smp-client.js';
import type { SmpWrite } from './programmed.js';

/** SMPs a programming step keeps in flight at once. */
export const APPLY_WINDOW = 1024;

export interface ApplyHooks {
  /** The SMA acknowledged `w`; `resp` is the SMP data it answered with (what it now holds). */
  ok(w: SmpWrite, resp: Uint8Array): void;
  /** `w` failed (timeout or error status): whatever it belonged to is unknown again. */
  failed(w: SmpWrite, error: unknown): void;
}

/** What one apply step did. */
export interface ApplyResult {
  /** Writes acknowledged. */
  ok: number;
  /** Writes that failed, with their errors (each also went to `hooks.failed`). */
  failed: Array<{ write: SmpWrite; error: unknown }>;
}

/** Send every write in `writes`, whatever happens to the others; resolves when all settled. A
 * failure goes to `hooks.failed` and into the result: the sweep carries on without it. */
export async function applyAll(smp: SmpClient, writes: readonly SmpWrite[], hooks: ApplyHooks, window = APPLY_WINDOW): Promise<ApplyResult> {
  const res: ApplyResult = { ok: 0, failed: [] };
  const jobs = writes.map((w) => () =>
    smp.setDr(w.path, w.attr, w.mod, w.data, w.mkey).then(
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

/** Send `writes`; resolves with how many were sent. Rejects with the first error after the writes
 * in flight settle (no new ones start after a failure). */
export async function applyWrites(smp: SmpClient, writes: readonly SmpWrite[], hooks: ApplyHooks, window = APPLY_WINDOW): Promise<number> {
  const jobs = writes.map((w) => () =>
    smp.setDr(w.path, w.attr, w.mod, w.data, w.mkey).then(
      (resp) => hooks.ok(w, resp),
      (e: unknown) => {
        hooks.failed(w, e);
        throw e;
      },
    ),
  );
  await pump(jobs, window);
  return writes.length;
}

/** Callers of the SM waiting for an action (sm/sm.ts `start`, `sweep`): each waits for the first
 * action of a kind that starts after it asked, and resolves with its value (or, `untilIdle`, with
 * the last sweep's once the controller is idle again: a light sweep's heavy follow-up included). */
import type { SmAction } from './controller.js';

interface Waiter {
  /** Actions started before the request do not count. */
  after: number;
  accepts(a: SmAction): boolean;
  untilIdle: boolean;
  matched?: { value: unknown };
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export class ActionWaiters {
  private waiters: Waiter[] = [];

  /** Wait for an action `accepts` takes that starts after action number `after`. */
  wait(after: number, accepts: (a: SmAction) => boolean, untilIdle: boolean): Promise<unknown> {
    return new Promise((resolve, reject) => this.waiters.push({ after, accepts, untilIdle, resolve, reject }));
  }

  /** Action number `seq` ended. `retry`: the fabric failed it, so whoever waits for it waits for
   * the next one (started after `started`); otherwise `error` rejects them or `value` resolves
   * them (`untilIdle` ones once idle). */
  finished(a: SmAction, seq: number, started: number, r: { retry: boolean; error?: unknown; value?: unknown }): void {
    for (const w of [...this.waiters]) {
      if (w.after >= seq || !w.accepts(a)) continue;
      if (r.retry) {
        w.after = started;
        continue;
      }
      if (r.error !== undefined) {
        this.drop(w);
        w.reject(r.error);
      } else if (w.untilIdle) {
        w.matched = { value: r.value };
      } else {
        this.drop(w);
        w.resolve(r.value);
      }
    }
  }

  /** The controller is idle: resolve those that waited for everything their request started,
   * with `last` (the last sweep's stats) when there is one. */
  idle(last: unknown): void {
    for (const w of [...this.waiters]) {
      if (!w.matched) continue;
      this.drop(w);
      w.resolve(last ?? w.matched.value);
    }
  }

  clear(): void {
    this.waiters = [];
  }

  private drop(w: Waiter): void {
    this.waiters = this.waiters.filter((x) => x !== w);
  }
}

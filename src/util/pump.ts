/** Run async jobs produced lazily by an iterator with at most `limit` in flight: a programming step
 * of 300k SMPs never holds 300k requests (and their buffers and promises) at once. Rejects with the
 * first error, after letting the jobs in flight settle.
 *
 * Callback-driven (one `then` per job, two handlers for the whole run) rather than `limit` async
 * workers: an await per job in a worker cost an async frame and promise reactions per SMP. */
export function pump(jobs: Iterator<() => Promise<unknown>> | Iterable<() => Promise<unknown>>, limit: number): Promise<void> {
  const it = Symbol.iterator in jobs ? (jobs as Iterable<() => Promise<unknown>>)[Symbol.iterator]() : (jobs as Iterator<() => Promise<unknown>>);
  const max = Math.max(1, limit);
  return new Promise<void>((resolve, reject) => {
    let failed: unknown;
    let failedSet = false;
    let exhausted = false;
    let active = 0;
    let starting = false;
    const fail = (e: unknown): void => {
      if (!failedSet) {
        failedSet = true;
        failed = e;
      }
    };
    const onDone = (): void => {
      active--;
      fill();
    };
    const onError = (e: unknown): void => {
      fail(e);
      onDone();
    };
    function fill(): void {
      if (starting) return; // a job that settled synchronously while fill() was starting jobs
      starting = true;
      while (!failedSet && !exhausted && active < max) {
        let n: IteratorResult<() => Promise<unknown>>;
        try {
          n = it.next();
        } catch (e) {
          fail(e);
          break;
        }
        if (n.done) {
          exhausted = true;
          break;
        }
        active++;
        try {
          Promise.resolve(n.value()).then(onDone, onError);
        } catch (e) {
          fail(e);
          active--;
        }
      }
      starting = false;
      if (active === 0 && (failedSet || exhausted)) {
        if (failedSet) reject(failed);
        else resolve();
      }
    }
    fill();
  });
}

/** pump() for jobs settled by a callback instead of a promise (an SMP through a callback slot):
 * `start(done)` starts the next job and returns true, or returns false when none is left; a
 * started job calls `done()` exactly once when it settles, or `done(error)` to fail the run. At
 * most `limit` are started and not done. Resolves once none is left and every started job is
 * done; rejects with the first failure (a `done(error)`, or `start` throwing) after the jobs in
 * flight are done, starting no more. A job may settle inside `start`. */
export function pumpSlots(start: (done: (error?: unknown) => void) => boolean, limit: number): Promise<void> {
  const max = Math.max(1, limit);
  return new Promise<void>((resolve, reject) => {
    let active = 0;
    let filling = false;
    let exhausted = false;
    let settled = false;
    let failedSet = false;
    let failed: unknown;
    const fail = (e: unknown): void => {
      if (failedSet) return;
      failedSet = true;
      failed = e;
    };
    const done = (error?: unknown): void => {
      if (error !== undefined) fail(error);
      active--;
      fill();
    };
    function fill(): void {
      if (filling) return; // a job that settled inside start() while this was starting jobs
      filling = true;
      while (!failedSet && !exhausted && active < max) {
        active++; // before start(): its job may settle inside it
        let started: boolean;
        try {
          started = start(done);
        } catch (e) {
          active--;
          fail(e);
          break;
        }
        if (!started) {
          active--;
          exhausted = true;
        }
      }
      filling = false;
      if (active === 0 && !settled && (failedSet || exhausted)) {
        settled = true;
        if (failedSet) reject(failed);
        else resolve();
      }
    }
    fill();
  });
}

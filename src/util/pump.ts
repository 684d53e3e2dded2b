/** Run async jobs produced lazily by an iterator with at most `limit` in flight: a programming step
 * of 300k SMPs never holds 300k requests (and their buffers and promises) at once. Rejects with the
 * first error, after letting the jobs in flight settle. */
export async function pump(jobs: Iterator<() => Promise<unknown>> | Iterable<() => Promise<unknown>>, limit: number): Promise<void> {
  const it = Symbol.iterator in jobs ? (jobs as Iterable<() => Promise<unknown>>)[Symbol.iterator]() : (jobs as Iterator<() => Promise<unknown>>);
  let failed: unknown;
  let failedSet = false;
  const worker = async (): Promise<void> => {
    for (;;) {
      if (failedSet) return;
      const n = it.next();
      if (n.done) return;
      try {
        await n.value();
      } catch (e) {
        if (!failedSet) {
          failedSet = true;
          failed = e;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, limit) }, worker));
  if (failedSet) throw failed;
}

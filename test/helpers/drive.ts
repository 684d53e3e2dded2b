import type { VirtualClock } from '../../src/util/clock.js';

/** Advance a virtual clock 1 ms at a time until `p` settles (or `maxMs` of virtual time pass). */
export async function drive<T>(clock: VirtualClock, p: Promise<T>, maxMs = 60_000): Promise<T> {
  let done = false;
  let val: T | undefined;
  let err: unknown;
  p.then(
    (v) => ((done = true), (val = v)),
    (e) => ((done = true), (err = e)),
  );
  for (let t = 0; !done && t < maxMs; t++) await clock.advanceAsync(1);
  if (!done) throw new Error(`did not settle within ${maxMs} ms of virtual time`);
  if (err) throw err;
  return val as T;
}

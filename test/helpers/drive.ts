import type { VirtualClock } from '../../src/util/clock.js';

/** Run a virtual clock until `p` settles, jumping from one timer deadline to the next (see
 * VirtualClock.runUntil); throws after `maxMs` of virtual time, or at once on a deadlock (nothing
 * pending, `p` not settled). */
export function drive<T>(clock: VirtualClock, p: Promise<T>, maxMs = 60_000): Promise<T> {
  return clock.runUntil(p, maxMs);
}

/**
 * The one fault model of ibsm: what happens to a MAD (or to one link crossing of it) under
 * injected faults. Pure decisions drawn from a seeded `Rng`; applying them (holding a MAD on a
 * clock, handing it back, delivering a copy) is up to the injector: `FaultyTransport`
 * (src/transport/fault.ts) per direction of a transport, the simulated fabric (src/sim/faults.ts)
 * per MAD and per link crossing.
 *
 * A draw is taken only for a fault that can happen (rate above 0, a random delay part), so a
 * seed gives the same stream for the same configuration, and faults that are off cost no draws.
 */
import type { Rng } from '../util/rng.js';

/** Delay: `ms`, plus uniform jitter; applied to a fraction `rate` of MADs (default all). */
export interface DelayModel {
  /** Fixed part (ms). */
  ms: number;
  /** Random extra: uniform in [0, jitterMs), or with `whole` an integer in 0..jitterMs. */
  jitterMs?: number;
  whole?: boolean;
  /** Probability that a MAD is delayed at all (undefined: every MAD). */
  rate?: number;
}

export interface FaultRates {
  /** Probability a MAD silently disappears. */
  drop?: number;
  /** Probability a MAD is handed back at once with status 110 (as ibsim does), where that exists. */
  bounce?: number;
  /** Probability one random bit of a MAD is flipped (at or after byte `corruptFrom`). */
  corrupt?: number;
  corruptFrom?: number;
  /** Probability a MAD is delivered twice. */
  duplicate?: number;
  delay?: DelayModel;
  /** Probability a MAD is held back and delivered after the next one. */
  reorder?: number;
}

export interface FaultDecision {
  drop: boolean;
  bounce: boolean;
  /** The bit to flip: byte offset and mask. */
  corrupt: { byte: number; mask: number } | undefined;
  duplicate: boolean;
}

const DROPPED: FaultDecision = Object.freeze({ drop: true, bounce: false, corrupt: undefined, duplicate: false });
const BOUNCED: FaultDecision = Object.freeze({ drop: false, bounce: true, corrupt: undefined, duplicate: false });

/**
 * The fate of one MAD of `length` bytes, in a fixed draw order: drop, bounce (only when the
 * injector can bounce), corruption, duplication. A dropped or bounced MAD takes no further draws.
 * Delay and reordering are separate (`delayOf`, `reorders`): an injector draws them per copy.
 */
export function decideFaults(r: FaultRates, rng: Rng, length: number, canBounce: boolean): FaultDecision {
  if (rng.chance(r.drop ?? 0)) return DROPPED;
  if (canBounce && rng.chance(r.bounce ?? 0)) return BOUNCED;
  let corrupt: FaultDecision['corrupt'];
  if (rng.chance(r.corrupt ?? 0)) {
    const from = Math.min(r.corruptFrom ?? 0, length - 1);
    const byte = from + rng.int(length - from);
    corrupt = { byte, mask: 1 << rng.int(8) };
  }
  return { drop: false, bounce: false, corrupt, duplicate: rng.chance(r.duplicate ?? 0) };
}

/** Flip the bit a decision chose (in place). */
export function applyCorruption(b: Uint8Array, c: { byte: number; mask: number }): void {
  b[c.byte] = b[c.byte]! ^ c.mask;
}

/** The delay (ms) of one MAD or copy; 0 when not delayed. */
export function delayOf(d: DelayModel | undefined, rng: Rng): number {
  if (!d || !d.ms && !d.jitterMs) return 0;
  if (d.rate !== undefined && !rng.chance(d.rate)) return 0;
  if (!d.jitterMs) return d.ms;
  return d.ms + (d.whole ? Math.floor(rng.next() * (d.jitterMs + 1)) : rng.next() * d.jitterMs);
}

/** Whether a MAD is held back behind the next one. */
export function reorders(r: FaultRates, rng: Rng): boolean {
  return rng.chance(r.reorder ?? 0);
}

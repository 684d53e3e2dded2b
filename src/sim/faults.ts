/**
 * Fault injection of the simulated fabric: global faults (once per MAD) and per-link faults (per
 * crossing of the link, both directions), decided by the shared fault model
 * (src/transport/fault-model.ts) from one seeded `Rng`.
 */
import { Rng } from '../util/rng.js';
import { decideFaults, delayOf, type FaultRates } from '../transport/fault-model.js';
import { DropError, type Transit } from './packet.js';

/** Seeded fault injection: rates are probabilities per MAD (global) or per link crossing (link). */
export interface FaultConfig {
  dropRate?: number;
  duplicateRate?: number;
  /** Extra delay added to affected MADs (ms). */
  delayMs?: number;
  /** Probability that a MAD gets `delayMs` (+ uniform jitter); default 1 when delayMs is set. */
  delayRate?: number;
  delayJitterMs?: number;
}

/** A FaultConfig in the fault model's terms; undefined when it injects nothing. */
function ratesOf(c: FaultConfig): FaultRates | undefined {
  if (!c.dropRate && !c.duplicateRate && !c.delayMs) return undefined;
  return {
    drop: c.dropRate,
    duplicate: c.duplicateRate,
    delay: c.delayMs ? { ms: c.delayMs, jitterMs: c.delayJitterMs, rate: c.delayRate } : undefined,
  };
}

export class SimFaults {
  private readonly rng: Rng;
  private global: FaultRates | undefined;
  private readonly links = new Map<number, FaultRates>();

  constructor(seed: number, global: FaultConfig = {}) {
    this.rng = new Rng(seed);
    this.global = ratesOf(global);
  }

  setGlobal(cfg: FaultConfig): void {
    this.global = ratesOf(cfg);
  }

  /** Faults on the link out of port `key` (see portKey); undefined clears them. */
  setLink(key: number, cfg: FaultConfig | undefined): void {
    const r = cfg && ratesOf(cfg);
    if (r) this.links.set(key, r);
    else this.links.delete(key);
  }

  /** A MAD enters the fabric. Throws DropError('fault') when it is lost. */
  onInject(t: Transit): void {
    if (this.global) this.apply(this.global, t);
  }

  /** A MAD crosses the link out of port `key`. */
  onCross(key: number, t: Transit): void {
    if (this.links.size === 0) return;
    const r = this.links.get(key);
    if (r) this.apply(r, t);
  }

  private apply(r: FaultRates, t: Transit): void {
    const d = decideFaults(r, this.rng, 256, false);
    if (d.drop) throw new DropError('fault', false);
    if (d.duplicate) t.dup = true;
    t.delay += delayOf(r.delay, this.rng);
  }
}

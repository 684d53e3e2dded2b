/** The controller's sweep scheduling (sm/controller.ts): which sweep is due, heavy or light, full
 * or local, and the multicast updates in between. Work asked for while an action runs is kept
 * here (coalesced: one pending heavy sweep, one light, one multicast update) and handed out when
 * the SM is idle, so nothing asked for is lost:
 *   - a heavy sweep asked for (a trap, an operator, a lost master, a handover) runs; one asked for
 *     as full (or after a sweep that left part of the fabric out) runs as a full one;
 *   - a multicast change is programmed by the next multicast update or heavy sweep, once the burst
 *     it belongs to has settled (MCAST_SETTLE_MS without a change, MCAST_MAX_DELAY_MS at most):
 *     a storm of joins after a failover costs one MFT update, not one per join or per round;
 *   - a light sweep asked for as full reads every CA port.
 * Pure: times come in as arguments. */
import { RETRY_SWEEP_MS, type SmAction, type SweepKind } from './controller-types.js';

/** A multicast update waits this long after the last group change (more changes of the same
 * burst extend the wait)... */
export const MCAST_SETTLE_MS = 20;
/** ...and this long after the first at most. The storm through ibsim (scripts/bench/README.md,
 * "storm-ibsim.mjs"): two MFT updates computed and written while the hosts' first requests were
 * answered became one, after them. */
export const MCAST_MAX_DELAY_MS = 200;

export interface ScheduleOptions {
  /** Light sweep interval in ms; 0 disables light sweeps. */
  sweepIntervalMs: number;
  /** OpenSM's force_heavy_sweep: a light sweep due or asked for is a full heavy sweep. */
  forceHeavySweep?: boolean;
}

export class SweepSchedule {
  /** Why the pending heavy sweep is wanted (undefined: none is). */
  private heavyReason?: string;
  /** The next heavy sweep rediscovers the whole fabric. */
  private fullNext = false;
  private lightWanted = false;
  /** The pending light sweep reads every CA port. */
  private lightFull = false;
  private mcastWanted = false;
  /** When the pending multicast update is due, and when its first change came. */
  private mcastDueAt = 0;
  private mcastFirstAt = 0;
  /** When the next periodic sweep is due. */
  private nextLightAt?: number;
  /** The last heavy sweep left something out (or failed): the next periodic one is heavy. */
  private retryHeavy = false;
  /** Set once a heavy sweep programmed the fabric: light sweeps and multicast need a snapshot. */
  private snapshot = false;

  constructor(private readonly o: ScheduleOptions) {}

  get haveSnapshot(): boolean {
    return this.snapshot;
  }

  /** Nothing pending (due timers do not count). */
  get idle(): boolean {
    return this.heavyReason === undefined && !this.lightWanted && !(this.mcastWanted && this.snapshot);
  }

  /** When a periodic sweep or the pending multicast update is next due, if ever. */
  get dueAt(): number | undefined {
    const mcast = this.mcastWanted && this.snapshot ? this.mcastDueAt : undefined;
    if (mcast === undefined) return this.nextLightAt;
    return this.nextLightAt === undefined ? mcast : Math.min(mcast, this.nextLightAt);
  }

  /** A heavy sweep, coalesced with one pending (whose reason stands). */
  heavy(reason: string, full = false): void {
    this.heavyReason ??= reason;
    if (full) this.fullNext = true;
  }

  /** A heavy sweep for `reason`, whatever was pending (a HANDOVER: the sweep that takes over). */
  heavyNow(reason: string): void {
    this.heavyReason = reason;
  }

  /** A sweep asked for by an operator, a trap or a test. A light one before the first programming
   * sweep is a heavy one (there is nothing to compare with yet). */
  request(kind: SweepKind, reason: string, full = false): void {
    if (kind === 'heavy' || !this.snapshot) this.heavy(reason, kind === 'heavy' && full);
    else this.light(full);
  }

  private light(full: boolean): void {
    if (this.o.forceHeavySweep) {
      this.heavy('periodic heavy sweep (force_heavy_sweep)', true);
      return;
    }
    this.lightWanted = true;
    if (full) this.lightFull = true;
  }

  /** A group changed at `now`: the multicast update falls due once the burst settles. */
  multicastChanged(now: number): void {
    if (!this.mcastWanted) {
      this.mcastWanted = true;
      this.mcastFirstAt = now;
    }
    this.mcastDueAt = Math.min(this.mcastFirstAt + MCAST_MAX_DELAY_MS, now + MCAST_SETTLE_MS);
  }

  /** Told to stand by or to stop sweeping: what was pending is dropped (a master's business). */
  dropSweeps(): void {
    this.heavyReason = undefined;
    this.lightWanted = false;
    this.lightFull = false;
  }

  /** Standing by: no periodic sweep, no multicast (the master programs both). */
  standingBy(): void {
    this.nextLightAt = undefined;
    this.lightWanted = false;
    this.lightFull = false;
    this.mcastWanted = false;
  }

  armLight(now: number): void {
    this.nextLightAt = this.o.sweepIntervalMs > 0 ? now + this.o.sweepIntervalMs : undefined;
  }

  /** On the sweep interval (after RETRY_SWEEP_MS without light sweeps). */
  private retryAt(now: number): number {
    return now + (this.o.sweepIntervalMs > 0 ? this.o.sweepIntervalMs : RETRY_SWEEP_MS);
  }

  /** A heavy sweep ended. `programmed`: it programmed the fabric as master (`first`: the first time
   * since not master). `incomplete`: it left part of the fabric out: the next heavy sweep is a full
   * one, and (as master) the next sweep due is heavy. `fromView`: it took over from a view, so a
   * full heavy sweep verifies at once. `discovering`: it ended with this SM still looking for a
   * master: again on the sweep interval. A full sweep that failed is owed as a full one still. */
  heavyDone(now: number, o: { full: boolean; programmed: boolean; first: boolean; failed: boolean; incomplete: boolean; fromView: boolean; discovering: boolean; master: boolean }): void {
    if (o.incomplete || (o.failed && o.full)) this.fullNext = true;
    if (o.programmed && !o.failed) {
      this.snapshot = true;
      if (o.first || this.nextLightAt === undefined) this.armLight(now);
      if (o.incomplete) this.retryLater(now);
      if (o.fromView) this.heavy('verify the takeover', true);
    } else if (o.discovering) {
      this.nextLightAt = this.retryAt(now);
    } else if (o.failed && o.master) {
      this.retryLater(now);
    }
    // A periodic sweep that fell due while this one ran was dropped (a heavy sweep sees what it
    // would): a master that holds a snapshot always has the next one armed, whether or not this
    // sweep programmed through the controller (a local sweep does not decide, so it never does).
    if (o.master && this.snapshot && this.nextLightAt === undefined) this.armLight(now);
  }

  lightDone(now: number, changed: boolean): void {
    if (changed) this.heavy('light sweep found a change');
    this.armLight(now);
  }

  /** The next periodic sweep due is a heavy one. */
  private retryLater(now: number): void {
    this.retryHeavy = true;
    this.nextLightAt ??= this.retryAt(now);
  }

  /** The sweep or multicast update to run now, if any. `master`/`discovering`: this SM's state
   * (a standby or an SM not active sweeps nothing); `takeover`: a heavy sweep now takes over from
   * the view of the master that handed over. Heavy sweeps first (they also program multicast and
   * see everything a light sweep would), then multicast, then a light sweep. */
  next(now: number, state: { master: boolean; discovering: boolean; takeover: boolean }): SmAction | undefined {
    if (!state.master && !state.discovering) return undefined;
    if (this.nextLightAt !== undefined && now >= this.nextLightAt) {
      this.nextLightAt = undefined;
      if (this.retryHeavy && state.master) this.heavy('retry what the last sweep left out');
      else if (this.snapshot && state.master) this.light(false);
      else if (state.discovering) this.heavy('retry');
    }
    if (this.heavyReason !== undefined) {
      const a: SmAction = { type: 'heavySweep', reason: this.heavyReason };
      if (state.discovering && state.takeover) a.takeover = true;
      if (this.fullNext) a.full = true;
      this.fullNext = false;
      this.retryHeavy = false;
      // It reads the groups when it programs the MFTs, and everything a light sweep would look at.
      this.dropSweeps();
      this.mcastWanted = false;
      return a;
    }
    if (!state.master) return undefined;
    if (this.mcastWanted && this.snapshot && now >= this.mcastDueAt) {
      this.mcastWanted = false;
      return { type: 'programMulticast' };
    }
    if (this.lightWanted) {
      const a: SmAction = this.lightFull ? { type: 'lightSweep', full: true } : { type: 'lightSweep' };
      this.lightWanted = false;
      this.lightFull = false;
      return a;
    }
    return undefined;
  }
}

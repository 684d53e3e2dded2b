/** The SM's decisions as a state machine without I/O, clock or promises (quinn-proto's
 * `Connection`, smoltcp's `poll(now)`): events go in with the time they happened, actions come
 * out one at a time, and `pollAt()` says when the controller next wants to be asked.
 *
 *   handle(event, now)  — something happened (a request, a trap, an action finished)
 *   poll(now)           — the next action to carry out, when nothing is running
 *   pollAt()            — when poll() will next have something without a new event
 *
 * Work that arrives while an action runs is kept in a pending set and drained when the SM is idle,
 * so a change that arrives mid-sweep is never dropped: a multicast change during a light sweep is
 * programmed right after it, a trap during a heavy sweep gives one more heavy sweep.
 *
 * `SubnetManager` (sm/sm.ts) is the shell that feeds it events and carries out its actions. The
 * SMInfo states (IBA 14.4.1) live here too; this SM goes DISCOVERING → MASTER. Standby and
 * not-active are the next additions: states, the events that move between them (SMInfo received,
 * poll answered) and the actions they need (send SMInfo, poll the master). */

export type SweepKind = 'heavy' | 'light';

export type SmStateName = 'notActive' | 'discovering' | 'standby' | 'master';

export type SmAction =
  /** Discover the fabric and program it. */
  | { type: 'heavySweep'; reason: string }
  /** Check for changes (SwitchInfo PortStateChange, CA port states). */
  | { type: 'lightSweep' }
  /** Recompute the multicast trees over the current snapshot and write the MFT blocks that differ. */
  | { type: 'programMulticast' };

/** How an action ended. A light sweep that found a change says `changed`. */
export type ActionOutcome = 'ok' | 'changed' | 'failed';

export type SmEvent =
  | { type: 'start' }
  | { type: 'stop' }
  /** A sweep asked for by an operator, a trap or a test. */
  | { type: 'sweepRequested'; kind: SweepKind; reason: string }
  /** The SA's multicast groups changed (join, leave, group created or deleted). */
  | { type: 'multicastChanged' }
  | { type: 'actionDone'; action: SmAction; outcome: ActionOutcome };

export interface ControllerOptions {
  /** Light sweep interval in ms; 0 disables light sweeps. */
  sweepIntervalMs: number;
}

export interface Transition {
  from: SmStateName;
  to: SmStateName;
  reason: string;
}

export class SmController {
  private running?: SmAction;
  private heavyReason?: string;
  private lightWanted = false;
  private mcastWanted = false;
  private nextLightAt?: number;
  private stopped = false;
  private smState: SmStateName = 'notActive';
  /** Set once the first heavy sweep succeeded: light sweeps and multicast need a snapshot. */
  private haveSnapshot = false;
  /** State changes not yet taken by the shell (for log lines and metrics). */
  private readonly transitions: Transition[] = [];

  constructor(private readonly o: ControllerOptions) {}

  get state(): SmStateName {
    return this.smState;
  }

  /** True when no action is running and none is pending (due timers do not count). */
  get idle(): boolean {
    return !this.running && this.heavyReason === undefined && !this.lightWanted && !(this.mcastWanted && this.haveSnapshot);
  }

  get busy(): SmAction | undefined {
    return this.running;
  }

  handle(ev: SmEvent, now: number): void {
    if (this.stopped) return;
    switch (ev.type) {
      case 'start':
        this.enter('discovering', 'start');
        this.heavyReason ??= 'start';
        return;
      case 'stop':
        this.stopped = true;
        this.enter('notActive', 'stopped');
        return;
      case 'sweepRequested':
        if (ev.kind === 'heavy' || !this.haveSnapshot) this.heavyReason ??= ev.reason;
        else this.lightWanted = true;
        return;
      case 'multicastChanged':
        this.mcastWanted = true;
        return;
      case 'actionDone':
        this.done(ev.action, ev.outcome, now);
        return;
    }
  }

  private done(a: SmAction, outcome: ActionOutcome, now: number): void {
    if (this.running === a) this.running = undefined;
    switch (a.type) {
      case 'heavySweep':
        if (outcome !== 'failed') {
          const first = !this.haveSnapshot;
          this.haveSnapshot = true;
          this.enter('master', first ? 'initial sweep done' : 'sweep done');
          if (first) this.armLight(now);
        }
        return;
      case 'lightSweep':
        if (outcome === 'changed') this.heavyReason ??= 'light sweep found a change';
        this.armLight(now);
        return;
      case 'programMulticast':
        return;
    }
  }

  private armLight(now: number): void {
    this.nextLightAt = this.o.sweepIntervalMs > 0 ? now + this.o.sweepIntervalMs : undefined;
  }

  /** The next action to carry out, or undefined (something runs, or nothing is due). Heavy
   * sweeps first (they also program multicast), then multicast, then a due light sweep. */
  poll(now: number): SmAction | undefined {
    if (this.stopped || this.running) return undefined;
    if (this.nextLightAt !== undefined && now >= this.nextLightAt && this.haveSnapshot) {
      this.nextLightAt = undefined;
      this.lightWanted = true;
    }
    let a: SmAction | undefined;
    if (this.heavyReason !== undefined) {
      a = { type: 'heavySweep', reason: this.heavyReason };
      this.heavyReason = undefined;
      // The heavy sweep reads the groups when it programs the MFTs, and everything a light sweep
      // would look at: neither is needed after it.
      this.mcastWanted = false;
      this.lightWanted = false;
    } else if (this.mcastWanted && this.haveSnapshot) {
      a = { type: 'programMulticast' };
      this.mcastWanted = false;
    } else if (this.lightWanted) {
      a = { type: 'lightSweep' };
      this.lightWanted = false;
    }
    this.running = a;
    return a;
  }

  /** When poll() will have an action without a new event (the next light sweep), if ever. */
  pollAt(): number | undefined {
    if (this.stopped || this.running) return undefined;
    return this.haveSnapshot ? this.nextLightAt : undefined;
  }

  /** State changes since the last call, oldest first. */
  takeTransitions(): Transition[] {
    return this.transitions.splice(0);
  }

  private enter(to: SmStateName, reason: string): void {
    if (this.smState === to) return;
    this.transitions.push({ from: this.smState, to, reason });
    this.smState = to;
  }
}

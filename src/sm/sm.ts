/** The subnet manager: the thin shell around the controller (sm/controller.ts). It feeds the
 * controller events (requests, traps, multicast changes, finished actions), carries out the
 * actions it returns through the Sweeper (sm/sweep.ts), arms the one timer the controller asks
 * for, and keeps the latest snapshot. Talks only to an SmpClient (over MadRpc) and a Clock. */
import { SmState, type SMInfo } from '../wire/sma.js';
import type { Snapshot } from '../model/snapshot.js';
import type { PartitionPlan } from '../model/partitions.js';
import type { McastGroupPorts } from '../routing/mcast-tree.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { SmController, type ActionOutcome, type SmAction, type SmEvent, type SmStateName, type SweepKind } from './controller.js';
import { Sweeper, type SweepStats } from './sweep.js';

export type { SweepStats } from './sweep.js';
/** The snapshot of a heavy sweep (model/snapshot.ts). */
export type SmSnapshot = Snapshot;

export interface SmOptions {
  smp: SmpClient;
  clock: Clock;
  log: Logger;
  /** Routing engines in order of preference; the first that applies is used. */
  routing: string[];
  lmc: number;
  /** Persisted LIDs (guid2lid), and a callback to persist the new map. */
  guid2lid?: ReadonlyMap<bigint, LidRange>;
  saveGuid2Lid?: (map: ReadonlyMap<bigint, LidRange>) => void;
  partitions?: PartitionPlan;
  /** Light sweep interval in ms; 0 disables light sweeps. */
  sweepIntervalMs: number;
  /** PortInfo.SubnetTimeout (4.096 µs × 2^n). */
  subnetTimeout?: number;
  /** M_Key to program (0: none) with protect bits and lease period. */
  mkey?: bigint;
  mkeyProtectBits?: number;
  mkeyLeasePeriod?: number;
  /** Subnet prefix programmed into every end port (default fe80::/64). */
  gidPrefix?: bigint;
  /** SM priority advertised in SMInfo. */
  priority?: number;
  /** Max operational VLs (PortInfo.OperationalVLs code: 1=VL0, 2=VL0-1, 3=VL0-3, 4=VL0-7, 5=VL0-14). */
  maxOpVls?: number;
  seed?: number;
  /** Multicast groups to forward (the SA's MCMember state), as member ports of the given snapshot. */
  multicastGroups?: (snap: SmSnapshot) => McastGroupPorts[];
  /** Called after every heavy sweep with the new snapshot (before SUBNET UP is logged). */
  onSnapshot?: (snap: SmSnapshot) => void;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
}

const SMINFO_STATE: Record<SmStateName, number> = {
  notActive: SmState.NotActive,
  discovering: SmState.Discovering,
  standby: SmState.Standby,
  master: SmState.Master,
};

/** Someone waiting for an action that starts after they asked. */
interface Waiter {
  /** Actions started before the request do not count. */
  after: number;
  accepts(a: SmAction): boolean;
  /** Resolve only once the controller is idle again (a light sweep's heavy follow-up included). */
  untilIdle: boolean;
  matched?: { value: unknown };
  resolve(v: unknown): void;
  reject(e: unknown): void;
}

export class SubnetManager {
  private snapshot?: Snapshot;
  private readonly ctl: SmController;
  private readonly sweeper: Sweeper;
  private timer?: TimerHandle;
  private timerAt?: number;
  private running = false;
  private stopped = false;
  private started = 0;
  private sweepCount = 0;
  private actCount = 0;
  private subnetUpLogged = false;
  private lastSweep?: SweepStats;
  private lastMft = 0;
  private waiters: Waiter[] = [];
  private readonly subnetUpWaiters: Array<() => void> = [];
  readonly stats: SweepStats[] = [];

  constructor(private readonly o: SmOptions) {
    this.ctl = new SmController({ sweepIntervalMs: o.sweepIntervalMs });
    this.sweeper = new Sweeper(o.smp, o.clock, o.log, o);
  }

  get current(): Snapshot | undefined {
    return this.snapshot;
  }

  /** The SMInfo state the controller is in. */
  get state(): SmStateName {
    return this.ctl.state;
  }

  /** The SMInfo this SM answers with. */
  smInfo(smPortGuid: bigint): SMInfo {
    return { guid: smPortGuid, smKey: 0n, actCount: this.actCount, priority: this.o.priority ?? 0, smState: SMINFO_STATE[this.ctl.state] };
  }

  /** Run the first heavy sweep; resolves when the subnet is up (or rejects on a fatal error). */
  start(): Promise<SweepStats> {
    const p = this.wait((a) => a.type === 'heavySweep', false) as Promise<SweepStats>;
    this.event({ type: 'start' });
    return p;
  }

  whenUp(): Promise<void> {
    if (this.subnetUpLogged) return Promise.resolve();
    return new Promise((r) => this.subnetUpWaiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    this.ctl.handle({ type: 'stop' }, this.o.clock.now());
    this.disarm();
    this.waiters = [];
  }

  /** A trap or an operator asks for a heavy sweep; coalesced with one pending. */
  requestHeavySweep(reason: string): void {
    if (this.stopped) return;
    this.o.log.info('heavy sweep requested', { reason });
    this.event({ type: 'sweepRequested', kind: 'heavy', reason });
  }

  /** Ask for a sweep; resolves with the stats of the last sweep once it (and the heavy sweep a
   * light one finds it needs) is done. */
  sweep(kind: SweepKind): Promise<SweepStats> {
    const p = this.wait((a) => a.type === 'heavySweep' || a.type === 'lightSweep', true) as Promise<SweepStats>;
    this.event({ type: 'sweepRequested', kind, reason: 'requested' });
    return p;
  }

  /** The multicast groups changed (join/leave): reprogram the MFTs as soon as the SM is idle
   * (right after a sweep under way). Resolves with the MFT blocks written. */
  updateMulticast(): Promise<number> {
    if (!this.snapshot || this.stopped) return Promise.resolve(0);
    const p = this.wait((a) => a.type === 'programMulticast' || a.type === 'heavySweep', false).then(() => this.lastMft);
    this.event({ type: 'multicastChanged' });
    return p;
  }

  /** The MFT blocks this SM has written to a switch (for MulticastForwardingTableRecord). */
  mftEntries(switchGuid: bigint): Iterable<{ block: number; position: number; masks: readonly number[] }> {
    return this.sweeper.programmed.mft.entries(switchGuid);
  }

  // ------------------------------------------------------------ the shell

  private wait(accepts: (a: SmAction) => boolean, untilIdle: boolean): Promise<unknown> {
    if (this.stopped) return Promise.reject(new Error('the SM was stopped'));
    return new Promise((resolve, reject) => this.waiters.push({ after: this.started, accepts, untilIdle, resolve, reject }));
  }

  private event(ev: SmEvent): void {
    this.ctl.handle(ev, this.o.clock.now());
    this.drive();
  }

  /** Start the controller's next action, or arm the timer for when it wants to be polled. */
  private drive(): void {
    if (this.stopped || this.running) return;
    this.logTransitions();
    const now = this.o.clock.now();
    const a = this.ctl.poll(now);
    if (!a) {
      this.settleIdle();
      this.arm(this.ctl.pollAt());
      return;
    }
    this.disarm();
    this.running = true;
    const seq = ++this.started;
    this.execute(a).then(
      (r) => this.finish(a, seq, r.outcome, r.value, undefined),
      (e: unknown) => this.finish(a, seq, 'failed', undefined, e),
    );
  }

  private finish(a: SmAction, seq: number, outcome: ActionOutcome, value: unknown, error: unknown): void {
    this.running = false;
    if (error !== undefined) this.o.log.error(`${a.type === 'lightSweep' ? 'light sweep' : a.type === 'heavySweep' ? 'sweep' : 'multicast forwarding update'} failed`, { error: (error as Error).message });
    this.ctl.handle({ type: 'actionDone', action: a, outcome }, this.o.clock.now());
    for (const w of [...this.waiters]) {
      if (w.after >= seq || !w.accepts(a)) continue;
      if (error !== undefined) {
        this.drop(w);
        w.reject(error);
      } else if (w.untilIdle) {
        w.matched = { value };
      } else {
        this.drop(w);
        w.resolve(value);
      }
    }
    if (this.stopped) return;
    this.drive();
  }

  /** Idle: resolve the waiters that wanted to see everything their request started finish. */
  private settleIdle(): void {
    if (!this.ctl.idle) return;
    for (const w of [...this.waiters]) {
      if (!w.matched) continue;
      this.drop(w);
      w.resolve(this.lastSweep ?? w.matched.value);
    }
  }

  private drop(w: Waiter): void {
    this.waiters = this.waiters.filter((x) => x !== w);
  }

  private arm(at: number | undefined): void {
    if (at === this.timerAt && this.timer) return;
    this.disarm();
    if (at === undefined || this.stopped) return;
    this.timerAt = at;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      this.timerAt = undefined;
      this.drive();
    }, Math.max(0, at - this.o.clock.now()));
  }

  private disarm(): void {
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = undefined;
  }

  private logTransitions(): void {
    for (const t of this.ctl.takeTransitions()) this.o.log.debug('SM state', { from: t.from, to: t.to, reason: t.reason });
  }

  private async execute(a: SmAction): Promise<{ outcome: ActionOutcome; value: unknown }> {
    switch (a.type) {
      case 'heavySweep': {
        const st = await this.heavySweep();
        return { outcome: 'ok', value: st };
      }
      case 'lightSweep': {
        const { changed, stats } = await this.sweeper.light(this.snapshot!);
        if (changed) {
          this.o.log.info('light sweep found a change; heavy sweep follows');
        } else {
          this.stats.push(stats);
          this.lastSweep = stats;
        }
        return { outcome: changed ? 'changed' : 'ok', value: stats };
      }
      case 'programMulticast': {
        this.lastMft = await this.sweeper.programMulticast(this.snapshot!);
        return { outcome: 'ok', value: this.lastMft };
      }
    }
  }

  private async heavySweep(): Promise<SweepStats> {
    const t0 = this.o.clock.now();
    const s0 = this.o.smp.sent;
    this.sweepCount++;
    this.actCount++;
    const { snapshot, stats } = await this.sweeper.heavy(this.sweepCount);
    this.snapshot = snapshot;
    // Multicast forwarding for the SA's groups over the new routes.
    stats.mftBlocksWritten = this.lastMft = await this.sweeper.programMulticast(snapshot);
    stats.ms = this.o.clock.now() - t0;
    stats.smps = this.o.smp.sent - s0;
    this.o.onSnapshot?.(snapshot);
    this.stats.push(stats);
    this.lastSweep = stats;
    if (!this.subnetUpLogged) {
      this.subnetUpLogged = true;
      this.o.log.info('SUBNET UP', { nodes: stats.nodes, switches: stats.switches, endPorts: stats.endPorts, smps: stats.smps, ms: Math.round(stats.ms), engine: stats.engine });
      for (const w of this.subnetUpWaiters.splice(0)) w();
    } else {
      this.o.log.info('heavy sweep done; subnet up', { smps: stats.smps, lftBlocks: stats.lftBlocksWritten, ms: Math.round(stats.ms) });
    }
    return stats;
  }
}

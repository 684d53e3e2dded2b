/** The subnet manager: the shell around the controller (sm/controller.ts). It feeds the
 * controller events (requests, traps, multicast changes, finished actions), carries out the
 * actions it returns (a heavy sweep through its one entry point, sm/sweep-run.ts; a light sweep
 * and a multicast update through the Sweeper's phase tables, sm/sweep.ts; SMInfo between SMs
 * through sm/ha-shell.ts), arms the one timer the controller asks for, and keeps the
 * latest snapshot. It decides nothing: which sweep runs, full or local, whether it sets
 * ClientReregister and when multicast is reprogrammed are the controller's outputs. Talks only
 * to an SmpClient (over MadRpc) and a Clock. */
import type { VPortManager } from './vport-mgr.js';
import type { SMInfo } from '../wire/sma.js';
import type { Snapshot } from '../model/snapshot.js';
import type { TimerHandle } from '../util/clock.js';
import type { LidRange } from './lids.js';
import { isForeignKey, SmController, smInfoSetStatus, smStateCode, type ActionOutcome, type RemoteSm, type SmAction, type SmEvent, type SmStateName, type SweepKind } from './controller.js';
import { smPorts, querySms } from './sminfo.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import { DEFAULT_SM_KEY } from '../wire/sma.js';
import { SmInfoControl } from '../wire/modifiers.js';
import { NodeType, PortState } from '../wire/mad.js';
import { Sweeper, type SweepStats } from './sweep.js';
import { RetryingSmp, isFabricFailure, type SmpFailureReason } from './retry.js';
import { DiscoveryError } from './discovery.js';
import { RoutingError } from '../routing/types.js';
import { LocalSweeper } from './local-sweep.js';
import type { HealthKeeper } from './health-phase.js';
import type { ReadPort } from './health-errors.js';
import type { Fabric } from '../model/fabric.js';
import { sameValue } from '../util/same-value.js';
import { HaShell } from './ha-shell.js';
import { ActionWaiters } from './action-waiters.js';
import { ForeignSms } from './foreign-sms.js';
import type { SmOptions } from './sm-options.js';
import { runHeavySweep } from './sweep-run.js';

export type { SweepStats } from './sweep.js';
export type { SmOptions, SmSnapshot } from './sm-options.js';

/** A failure of the fabric (a lost or refused SMP, a fabric no engine routes, a node that cannot
 * be read): the SM logs it and sweeps again; anything else is local and fatal. */
function fabricCaused(e: unknown): boolean {
  return isFabricFailure(e) || e instanceof DiscoveryError || e instanceof RoutingError;
}

/** Sweep stats kept for inspection (the API's `stats`, tests); older ones are dropped. */
export const STATS_KEPT = 1024;
const WRITTEN_TOTALS = ['lftBlocksWritten', 'mftBlocksWritten', 'pkeyBlocksWritten', 'vlTablesWritten', 'portInfoSets'] as const;
type WrittenTotal = (typeof WRITTEN_TOTALS)[number];

export class SubnetManager {
  private snapshot?: Snapshot;
  private readonly ctl: SmController;
  private readonly sweeper: Sweeper;
  private readonly retrying: RetryingSmp;
  private readonly ha: HaShell;
  private readonly foreign: ForeignSms;
  /** Heavy sweeps that failed as a whole (the fabric's doing; the SM swept again). */
  failedSweeps = 0;
  private readonly local: LocalSweeper;
  private timer?: TimerHandle;
  private timerAt?: number;
  private running = false;
  private stopped = false;
  private started = 0;
  private sweepCount = 0;
  private subnetUpLogged = false;
  private lastSweep?: SweepStats;
  private readonly waiters = new ActionWaiters();
  private readonly subnetUpWaiters: Array<() => void> = [];
  /** This SM's own discovery (its last heavy sweep's, even as standby). */
  private ownDisc?: DiscoveryResult;
  /** The stats of the latest sweeps, oldest first: at most STATS_KEPT..2×STATS_KEPT of them (a
   * daemon sweeping every few seconds for months must not grow); totals are in `sweepsDone`. */
  readonly stats: SweepStats[] = [];
  /** Sweeps completed since start, by kind (ibsm_sweeps_total). */
  readonly sweepsDone: Record<SweepStats['kind'], number> = { heavy: 0, light: 0 };
  /** What heavy sweeps wrote since start (the ibsm_*_total counters). */
  readonly written: Record<WrittenTotal, number> = { lftBlocksWritten: 0, mftBlocksWritten: 0, pkeyBlocksWritten: 0, vlTablesWritten: 0, portInfoSets: 0 };
  /** SMInfo state changes so far, by the state entered. */
  readonly transitions: Record<SmStateName, number> = { notActive: 0, discovering: 0, standby: 0, master: 0 };

  /** This SM's SM_Key (OpenSM's default unless configured). */
  private readonly smKey: bigint;

  constructor(private readonly o: SmOptions) {
    this.smKey = o.smKey ?? DEFAULT_SM_KEY;
    this.ctl = new SmController(o);
    this.retrying = new RetryingSmp(o.smp, o.clock, o.smpRetry);
    this.sweeper = new Sweeper(this.retrying, o.clock, o.log, o);
    // health hook: the unresponsive nodes' probes go below the retry layer (one try each).
    this.sweeper.health.unresp?.attach(o.smp, () => this.requestHeavySweep('unresponsive node answering again', true));
    this.local = new LocalSweeper(this.sweeper, undefined, o.smp); // the trap checks below the retry layer
    this.foreign = new ForeignSms(o.log, this.smKey);
    this.ha = new HaShell({
      o,
      ctl: this.ctl,
      smKey: this.smKey,
      stopped: () => this.stopped,
      ownDisc: () => this.ownDisc,
      trustedSmInfo: () => this.smInfo(undefined, true),
      ownLid: () => this.ownLid(),
      event: (ev) => this.event(ev),
      logTransitions: () => this.logTransitions(),
    });
  }

  /** The fabric health: isolated ports and nodes, the expected topology's mismatches (issue #33). */
  get health(): HealthKeeper {
    return this.sweeper.health;
  }

  /** SR-IOV vports as this SM knows them (vport hook, sm/vport-mgr.ts). */
  get vports(): VPortManager {
    return this.sweeper.vports;
  }

  get current(): Snapshot | undefined {
    return this.snapshot;
  }

  /** SMPs the sweeps gave up after every retry, by reason (ibsm_smp_failures_total). */
  get smpFailures(): Readonly<Record<SmpFailureReason, number>> {
    return this.retrying.failures;
  }

  /** Nodes the last heavy sweep left out: unreadable, behind a link it could not probe, or with
   * another node's GUID (ibsm_sweep_skipped_nodes). */
  get skippedNodes(): number {
    const h = this.lastHeavy;
    return h ? h.skippedNodes + h.skippedLinks + h.duplicateGuids : 0;
  }
  private lastHeavy?: SweepStats;
  /** The last heavy sweep's stats (the fabric's size as last seen). */
  get lastHeavySweep(): SweepStats | undefined {
    return this.lastHeavy;
  }

  private record(stats: SweepStats): void {
    this.sweepsDone[stats.kind]++;
    if (stats.kind === 'heavy') for (const k of WRITTEN_TOTALS) this.written[k] += stats[k];
    this.stats.push(stats);
    if (this.stats.length > 2 * STATS_KEPT) this.stats.splice(0, this.stats.length - STATS_KEPT);
    this.lastSweep = stats;
    if (stats.kind === 'heavy') this.lastHeavy = stats;
    this.o.onSweep?.(stats);
  }

  /** The SMInfo state the controller is in. */
  get state(): SmStateName {
    return this.ctl.state;
  }

  /** The SM this one stands by for, when STANDBY. */
  get master(): RemoteSm | undefined {
    return this.ctl.masterSm;
  }

  /** The other SMs as last read. */
  get knownSms(): readonly RemoteSm[] {
    return this.ctl.knownSms;
  }

  /** Heavy sweeps that found a master with another SM_Key holding the fabric (and so wrote
   * nothing): ibsm_foreign_master_sweeps_total. */
  get contestedSweeps(): number {
    return this.foreign.contestedSweeps;
  }
  /** The master with another SM_Key the last heavy sweep found holding the fabric (ibsm_foreign_master). */
  get contestedBy(): RemoteSm | undefined {
    return this.ctl.contestedBy;
  }

  /** The SMInfo this SM answers with. ActCount is the SMPs it has sent (it moves with every bit of
   * management activity, as OpenSM's does); the SM_Key goes only to a trusted requester. */
  smInfo(smPortGuid: bigint = this.o.portGuid ?? 0n, trusted = false): SMInfo {
    return { guid: smPortGuid, smKey: trusted ? this.smKey : 0n, actCount: this.o.smp.sent >>> 0, priority: this.o.priority ?? 0, smState: smStateCode(this.ctl.state) };
  }

  /** A SubnSet(SMInfo) from another SM: the status to answer with (0 accepted, 7 refused). An
   * accepted one goes to the controller. `payload` is the SMInfo the sender put in the request. */
  smInfoSet(control: number, payload: SMInfo, from: { lid?: number; path?: readonly number[] }): number {
    if (this.stopped) return 7;
    if (isForeignKey(payload.smKey, this.smKey)) {
      this.o.log.from(from.lid ?? payload.guid).warn('SMInfo Set from an SM with another SM_Key ignored', { guid: payload.guid, lid: from.lid });
      return 7;
    }
    // The standby this SM handed over to as it stops says it took the subnet.
    if (control === SmInfoControl.Acknowledge) this.ha.acknowledged(payload.guid);
    const status = smInfoSetStatus(this.ctl.state, control, payload.smState);
    if (status !== 0) {
      this.o.log.from(from.lid ?? payload.guid).warn('SMInfo Set refused', { control, guid: payload.guid, senderState: payload.smState, state: this.ctl.state });
      return status;
    }
    const known = this.ctl.knownSms.find((r) => r.guid === payload.guid);
    const remote: RemoteSm = { guid: payload.guid, priority: payload.priority, state: payload.smState, actCount: payload.actCount, smKey: payload.smKey, lid: from.lid || known?.lid, path: known?.path ?? from.path };
    this.event({ type: 'smInfoSet', control, from: remote });
    return 0;
  }

  /** Run the first heavy sweep; resolves when the SM has settled (the subnet is up under this SM
   * as master, or under another SM this one stands by for), or rejects on a fatal error. */
  start(): Promise<SweepStats> {
    const p = this.wait((a) => a.type === 'heavySweep', false) as Promise<SweepStats>;
    this.event({ type: 'start' });
    return p;
  }

  whenUp(): Promise<void> {
    if (this.subnetUpLogged) return Promise.resolve();
    return new Promise((r) => this.subnetUpWaiters.push(r));
  }

  /** A master that stops hands the subnet to its best standby first (sm/ha-shell.ts). Resolves
   * once that standby acknowledged (or did not, within `timeoutMs`). */
  handOverOnStop(timeoutMs = 1000): Promise<RemoteSm | undefined> {
    if (this.stopped || this.ctl.state !== 'master') return Promise.resolve(undefined);
    return this.ha.handOverOnStop(timeoutMs);
  }

  stop(): void {
    this.stopped = true;
    this.ha.handoverSent();
    this.local.forget(); // no idle-time re-route rehearsal after a stop (--once exits at once)
    this.ctl.handle({ type: 'stop' }, this.o.clock.now());
    this.disarm();
    this.waiters.clear();
  }

  /** Settings a reload changes (#28; api/sm.ts `reload`): the next full heavy sweep programs them. */
  reconfigure(s: Pick<SmOptions, 'partitions' | 'qosVl' | 'routing' | 'routingOptions'>): void {
    if (!sameValue([s.routing, s.routingOptions], [this.o.routing, this.o.routingOptions])) this.sweeper.routingChanged();
    Object.assign(this.o, s);
    this.local.forget();
  }

  /** A trap or an operator asks for a heavy sweep; coalesced with one pending. A trap's may be a
   * local sweep (sm/local-sweep.ts); `full` (an operator's: SIGHUP) rediscovers the whole fabric. */
  requestHeavySweep(reason: string, full = false): void {
    if (this.stopped) return;
    this.o.log.info('heavy sweep requested', { reason });
    this.event({ type: 'sweepRequested', kind: 'heavy', reason, full });
  }

  /** health hook: errors. PerfMgr's ports after its sweep (api/sm.ts) through the error-rate policy
   * (sm/health-errors.ts): a change is applied by a full heavy sweep, as `ibsm isolate`'s is. */
  perfSwept(fabric: Fabric, ports: Iterable<ReadPort>): void {
    if (this.stopped || !this.health.judgeErrors(fabric, ports)) return;
    this.o.log.info('error-rate isolations changed: heavy sweep follows');
    this.requestHeavySweep('port error rate', true);
  }

  /** A trap 128 handled alone, no sweep now: a quarantined link's switch checked (health hook: flap, sm/health-quiet.ts), or a change a local sweep may have read (sm/trap-check.ts); false: sweep as usual. */
  trap128(lid: number, reason: string): boolean {
    if (!this.snapshot || this.ctl.state !== 'master' || this.stopped) return false;
    return this.sweeper.quiet.trap(this.snapshot, lid, () => this.requestHeavySweep(reason)) || this.local.traps.trap(this.snapshot, lid, this.o.clock.now(), () => this.running || !this.ctl.idle, () => this.requestHeavySweep(reason));
  }

  /** Trap 144 says the port at `lid` advertises an SM: read its SMInfo at once (sm/ha-shell.ts),
   * then sweep the whole fabric. */
  async smAnnounced(lid: number, reason: string): Promise<void> {
    if (this.stopped) return;
    await this.ha.smAnnounced(lid);
    this.requestHeavySweep(reason, true);
  }

  /** While this master decides about an SM a trap 144 just announced, SMInfo Gets wait for the
   * decision (sm/ha-shell.ts); `undefined` when nothing is being decided. */
  whenDecided(): Promise<void> | undefined {
    return this.ha.whenDecided();
  }

  /** An operator's re-route (`ibsm reroute`): a heavy sweep that routes with the configured
   * engine, also over tables kept from another SM (sm/adopt-lfts.ts). */
  reroute(): Promise<SweepStats> {
    this.sweeper.routingChanged();
    return this.sweep('heavy');
  }

  /** Ask for a sweep; resolves with the stats of the last sweep once it (and the heavy sweep a
   * light one finds it needs) is done. A heavy one asked for here is a full heavy sweep; a light
   * one reads every CA port. */
  sweep(kind: SweepKind): Promise<SweepStats> {
    const p = this.wait((a) => a.type === 'heavySweep' || a.type === 'lightSweep', true) as Promise<SweepStats>;
    this.event({ type: 'sweepRequested', kind, reason: 'requested', full: true });
    return p;
  }

  /** The multicast groups changed (join/leave): the controller has the MFTs reprogrammed once the
   * SM is idle (right after a sweep under way), one update for all changes made meanwhile. */
  multicastChanged(): void {
    if (this.stopped) return;
    this.event({ type: 'multicastChanged' });
  }

  /** One MFT update over the current snapshot (the controller's `programMulticast`; the
   * multicast table, sm/mcast-phases.ts): the MFT blocks written. */
  programMulticast(): Promise<number> {
    return this.sweeper.programMulticast(this.snapshot!);
  }

  /** LIDs to honour at the next assignment (another SM's GUID→LID map, after a failover). */
  adoptLids(lids: ReadonlyMap<bigint, LidRange>): void {
    this.sweeper.adoptLids(lids);
  }

  /** The MFT blocks this SM has written to a switch (for MulticastForwardingTableRecord). */
  mftEntries(switchGuid: bigint): Iterable<{ block: number; position: number; masks: readonly number[] }> {
    return this.sweeper.programmed.mft.entries(switchGuid);
  }

  // ------------------------------------------------------------ the shell

  private wait(accepts: (a: SmAction) => boolean, untilIdle: boolean): Promise<unknown> {
    if (this.stopped) return Promise.reject(new Error('the SM was stopped'));
    return this.waiters.wait(this.started, accepts, untilIdle);
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
      if (this.ctl.idle) this.waiters.idle(this.lastSweep);
      if (this.ctl.idle) this.local.traps.idle(this.ctl.state === 'master' ? this.snapshot : undefined); // the traps 128 held while busy (sm/trap-check.ts)
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
    const survived = error !== undefined && fabricCaused(error);
    if (error !== undefined) this.logFailure(a, error, survived);
    this.ctl.handle({ type: 'actionDone', action: a, outcome }, this.o.clock.now());
    this.waiters.finished(a, seq, this.started, { retry: survived, error, value });
    if (this.stopped) return;
    this.drive();
  }

  private logFailure(a: SmAction, error: unknown, survived: boolean): void {
    const log = this.o.log;
    if (this.stopped) {
      // The SM was stopped while this action ran (its RPC layer is closed under it): not a failure.
      log.info('action cut short by the stop', { action: a.type, error: (error as Error).message });
      return;
    }
    const f = { error: (error as Error).message };
    if (a.type === 'heavySweep') {
      if (survived) log.error('sweep failed; the SM carries on and sweeps again', f);
      else log.error('sweep failed', f);
    } else if (a.type === 'lightSweep') {
      if (survived) log.error('light sweep failed; the SM carries on and sweeps again', f);
      else log.error('light sweep failed', f);
    } else if (survived) log.error('multicast forwarding update failed; the SM carries on and sweeps again', f);
    else log.error('multicast forwarding update failed', f);
    if (survived && a.type === 'heavySweep') this.failedSweeps++;
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

  /** One log line per SMInfo state change, in the form operators' scripts match. */
  private logTransitions(): void {
    for (const t of this.ctl.takeTransitions()) {
      const log = this.o.log;
      if (t.to === 'standby') log.info('entering STANDBY', { master: t.master?.guid ?? 0n, lid: t.master?.lid ?? 0, reason: t.reason });
      else if (t.to === 'master') log.info('entering MASTER', { reason: t.reason });
      else if (t.to === 'notActive') log.info('entering NOTACTIVE', { reason: t.reason });
      else log.info('entering DISCOVERING', { reason: t.reason });
      if (t.to === 'standby' && t.reason === 'handover' && t.master) log.info('handover to {master}', { master: t.master.guid });
      this.transitions[t.to]++;
      if (t.to !== 'master') this.local.forget();
      if (t.to === 'standby') this.sweeper.standingBy();
      if (t.to === 'standby') this.ha.standingBy();
      this.o.onStateChange?.(t);
    }
  }

  private async execute(a: SmAction): Promise<{ outcome: ActionOutcome; value: unknown }> {
    switch (a.type) {
      case 'heavySweep': {
        const st = await this.heavySweep(a);
        const left = st.skippedNodes + st.skippedLinks + st.failedWrites + st.stuckPorts + this.sweeper.mftFailed;
        return { outcome: left > 0 ? 'incomplete' : 'ok', value: st };
      }
      case 'lightSweep':
        return this.lightSweep(a.full === true);
      case 'programMulticast':
        return { outcome: 'ok', value: await this.programMulticast() };
      default:
        await this.ha.run(a);
        return { outcome: 'ok', value: undefined };
    }
  }

  /** A light sweep (its table, sm/light-sweep.ts): the periodic share of the switches and CA
   * ports, or (`full`) all of them. What follows from its result: the foreign writes' ERROR, the
   * new SM ports' SMInfo read (sm/ha-shell.ts), the outcome to the controller (a change: it runs
   * a heavy sweep next). */
  private async lightSweep(full: boolean): Promise<{ outcome: ActionOutcome; value: unknown }> {
    const { changed, stats, smPorts: sms, foreign } = await this.sweeper.light(this.snapshot!, full);
    if (foreign.ports) this.o.log.error('ports name another master or their LIDs moved: another SM is writing this fabric', { ports: foreign.ports, masterSmLids: [...foreign.masterSmLids].join(','), ...foreign.first });
    await this.ha.checkSms(sms);
    if (this.health.afterLight(changed, this.snapshot!.discovery)) {
      this.o.log.info('flapping link quiet time over: heavy sweep follows');
      this.requestHeavySweep('flapping link quiet', true); // full: a local sweep with nothing flagged would not judge it
    }
    if (changed) {
      this.o.log.info('light sweep found a change; heavy sweep follows');
    } else {
      this.record(stats);
      this.o.log.debug('sweep done', { kind: 'light', smps: stats.smps, ms: Math.round(stats.ms * 10) / 10 });
    }
    return { outcome: changed ? 'changed' : 'ok', value: stats };
  }

  private ownLid(): number {
    const d = this.snapshot?.discovery ?? this.ownDisc;
    return d?.fabric.nodes[d.smNode]?.ports[d.smPort]?.lid ?? 0;
  }

  /** Between discovery and the first Set: read the other SMs' SMInfo and let the controller
   * decide whether this SM programs the fabric, and whether with ClientReregister. */
  private async decide(disc: DiscoveryResult, fromView = false): Promise<false | { reregister: boolean }> {
    this.ownDisc = disc;
    const own = disc.nodes[disc.smNode]?.portInfo[disc.smPort];
    const ownPortUp = disc.fabric.nodes[disc.smNode]?.type === NodeType.Switch || (own?.portState ?? PortState.Down) >= PortState.Init;
    const from = this.ctl.handedOverBy;
    if (from?.lid && this.o.onHandedOver) await this.o.onHandedOver(from).catch((e: unknown) => this.o.log.warn('SA state not pulled from the master', { master: from.guid, lid: from.lid, error: (e as Error).message }));
    // Not the SM that handed over (it gave the subnet up; a master that stops is gone by now),
    // unless this read is how this SM learns the route to it (for the ACKNOWLEDGE).
    const gaveUp = this.ctl.knownSms.find((r) => r.guid === this.ctl.handingOver && (r.lid || r.path))?.guid;
    const remotes = ownPortUp ? await querySms(this.o.smp, smPorts(disc).filter((p) => p.guid !== gaveUp), (at, e) => this.o.log.debug('SMInfo not read', { port: at.guid, lid: at.lid, error: (e as Error).message })) : [];
    for (const r of remotes) this.o.log.info('SM found', { guid: r.guid, lid: r.lid ?? 0, priority: r.priority, state: r.state });
    this.ctl.handle({ type: 'discovered', remotes, ownPortUp, fromView, stateKept: this.o.stateKept?.() ?? false }, this.o.clock.now());
    this.foreign.note(this.ctl.contestedBy, remotes);
    this.logTransitions();
    return this.ctl.mayProgram ? { reregister: this.ctl.reregister } : false;
  }

  private async heavySweep(a: Extract<SmAction, { type: 'heavySweep' }>): Promise<SweepStats> {
    this.sweepCount++;
    const rt = this.retrying;
    const r0 = { recovered: rt.recovered, foundDone: rt.foundDone, failed: rt.failures.timeout + rt.failures.status };
    // The scope the controller decides (full, local around a change, a takeover from the view
    // this SM was handed, followed by a full heavy sweep that verifies), over the views held here;
    // the multicast update follows a sweep that published a snapshot (sm/sweep-run.ts).
    const scope = this.ctl.scopeOf(a);
    const { snapshot, stats, ran } = await runHeavySweep({ sweeper: this.sweeper, local: this.local }, scope, this.sweepCount, { prev: this.snapshot, view: this.ownDisc }, {
      decide: (disc, fromView) => this.decide(disc, fromView),
      swept: (snap) => {
        const retried = { recovered: rt.recovered - r0.recovered, setsFoundDone: rt.foundDone - r0.foundDone, givenUp: rt.failures.timeout + rt.failures.status - r0.failed };
        if (retried.recovered + retried.setsFoundDone + retried.givenUp > 0) this.o.log.info('SMP retries in this sweep', retried);
        if (snap) this.snapshot = snap;
      },
    });
    if (!snapshot) return stats; // another SM masters the fabric
    this.o.onSnapshot?.(snapshot);
    this.record(stats);
    this.o.log.debug('sweep done', { kind: 'heavy', sweep: this.sweepCount, local: ran === 'local', smps: stats.smps, ms: Math.round(stats.ms * 10) / 10 });
    const left = { skippedNodes: stats.skippedNodes, skippedLinks: stats.skippedLinks, failedWrites: stats.failedWrites, stuckPorts: stats.stuckPorts, duplicateGuids: stats.duplicateGuids };
    if (Object.values(left).some((v) => v > 0)) this.o.log.warn('heavy sweep left some of the fabric out; the next sweep tries again', left);
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

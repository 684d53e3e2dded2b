/** The subnet manager: the thin shell around the controller (sm/controller.ts). It feeds the
 * controller events (requests, traps, multicast changes, finished actions), carries out the
 * actions it returns through the Sweeper (sm/sweep.ts), arms the one timer the controller asks
 * for, and keeps the latest snapshot. Talks only to an SmpClient (over MadRpc) and a Clock. */
import type { SMInfo } from '../wire/sma.js';
import type { Snapshot } from '../model/snapshot.js';
import type { PartitionPlan } from '../model/partitions.js';
import type { QosVlSettings } from '../model/qos-policy.js';
import type { McastGroupPorts } from '../routing/mcast-tree.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { best, isForeignKey, SmController, smInfoSetStatus, smStateCode, type ActionOutcome, type RemoteSm, type SmAction, type SmEvent, type SmStateName, type SweepKind, type Transition } from './controller.js';
import { notifyMaster, pollSm, querySms, sendSmInfo, smPorts, type SmPort } from './sminfo.js';
import { fabricFingerprint, type DiscoveryResult } from '../model/snapshot.js';
import { DEFAULT_SM_KEY, PortCap, PortInfo, SmState } from '../wire/sma.js';
import { portInfoMod, SmInfoControl } from '../wire/modifiers.js';
import { formatHex } from '../wire/format.js';
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { Sweeper, type SweepStats } from './sweep.js';
import { RetryingSmp, isFabricFailure, type SmpFailureReason, type SmpRetryOptions } from './retry.js';
import { DiscoveryError } from './discovery.js';
import { RoutingError, type RoutingOptions } from '../routing/types.js';
import { LocalSweeper } from './local-sweep.js';
import { sameValue } from '../util/same-value.js';

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
  /** This SM's port GUID (its identity in SMInfo and elections). */
  portGuid?: bigint;
  /** SM priority advertised in SMInfo (0-15; the higher wins an election). */
  priority?: number;
  /** SM_Key: SMs with another non-zero key are ignored; SMInfo carries it only to trusted requesters. */
  smKey?: bigint;
  /** Program the fabric even while a master with another SM_Key holds it (ControllerOptions.forceMaster). */
  forceMaster?: boolean;
  /** A standby polls its master every pollIntervalMs and takes over after pollRetries misses. */
  pollIntervalMs?: number;
  pollRetries?: number;
  /** What a standby holds of this master's SA state (see ControllerOptions.standbySync). */
  standbySync?: (guid: bigint) => 'current' | 'behind' | 'unknown';
  /** Whether the SA holds the clients' registrations from before this SM became master (a
   * failover with the SA state kept): otherwise the first master sweep sets ClientReregister. */
  stateKept?: () => boolean;
  /** Re-explore and re-route a local change (a trap, a light sweep's finding) without a full
   * heavy sweep (sm/local-sweep.ts); default true. */
  localSweeps?: boolean;
  /** DISCOVERING after a HANDOVER: before the first sweep as master decides, take the SA state
   * from the SM that handed over (an ibsm one serves it until this SM masters). Awaited. */
  onHandedOver?: (from: RemoteSm) => Promise<void>;
  /** STANDBY: the master answered a poll (the SA pulls its state here). Awaited. */
  onMasterPolled?: (master: RemoteSm) => Promise<void>;
  /** The fingerprint of the master's view of the fabric, as last pulled with its SA state
   * (model/snapshot.ts `fabricFingerprint`); undefined when none (a master that does not sync). */
  masterView?: () => bigint | undefined;
  /** Called on every SMInfo state change (after it is logged). */
  onStateChange?: (t: Transition) => void;
  /** Max operational VLs (PortInfo.OperationalVLs code: 1=VL0, 2=VL0-1, 3=VL0-3, 4=VL0-7, 5=VL0-14). */
  maxOpVls?: number;
  /** Link settings (plan-ports.ts PortSettings): OpenSM's force_link_* values, 0 leaves the ports' own. */
  forceLinkSpeed?: number;
  forceLinkSpeedExt?: number;
  forceLinkSpeedExt2?: number;
  forceLinkWidth?: number;
  /** HOQLife toward switches / toward end ports, SwitchInfo LifeTimeValue (OpenSM's head_of_queue_lifetime, leaf_head_of_queue_lifetime, packet_life_time). */
  hoqLife?: number;
  leafHoqLife?: number;
  packetLife?: number;
  /** Routing options beyond LMC and seed (configured root switches). */
  routingOptions?: Pick<RoutingOptions, 'roots' | 'cnGuids' | 'ioGuids' | 'routeOrder' | 'routeOrderNoScatter'>;
  seed?: number;
  /** OpenSM's qos_* VL settings: with them the SM programs SL2VL and VLArbitration (QoS on). */
  qosVl?: QosVlSettings;
  /** Multicast groups to forward (the SA's MCMember state), as member ports of the given snapshot. */
  multicastGroups?: (snap: SmSnapshot) => McastGroupPorts[];
  /** Called after every heavy sweep with the new snapshot (before SUBNET UP is logged). */
  onSnapshot?: (snap: SmSnapshot) => void;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
  /** Called after every sweep (heavy or light) with its figures. */
  onSweep?: (stats: SweepStats) => void;
  /** The sweep's own SMP retries above MadRpc's (sm/retry.ts). */
  smpRetry?: SmpRetryOptions;
  /** opensm.conf keys (config/opensm-keys.ts): partition enforcement on switch ports (part_enforce),
   * new LIDs at the first master sweep (reassign_lids), the guid2lid file over the old master's
   * LIDs at a takeover (honor_guid2lid_file), every periodic sweep heavy (force_heavy_sweep). */
  partEnforce?: 'both' | 'in' | 'out' | 'off';
  /** OpenSM lmc_esp0: with an LMC, a switch with an enhanced port 0 gets it there too. */
  lmcEsp0?: boolean;
  reassignLids?: boolean;
  honorGuid2lid?: boolean;
  forceHeavySweep?: boolean;
}

/** A failure of the fabric (a lost or refused SMP, a fabric no engine routes, a node that cannot
 * be read): the SM logs it and sweeps again; anything else is local and fatal. */
function fabricCaused(e: unknown): boolean {
  return isFabricFailure(e) || e instanceof DiscoveryError || e instanceof RoutingError;
}

/** Sweep stats kept for inspection (the API's `stats`, tests); older ones are dropped. */
export const STATS_KEPT = 1024;
const WRITTEN_TOTALS = ['lftBlocksWritten', 'mftBlocksWritten', 'pkeyBlocksWritten', 'vlTablesWritten', 'portInfoSets'] as const;
type WrittenTotal = (typeof WRITTEN_TOTALS)[number];

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
  private readonly retrying: RetryingSmp;
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
  private lastMft = 0;
  private waiters: Waiter[] = [];
  private readonly subnetUpWaiters: Array<() => void> = [];
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
    this.ctl = new SmController({ sweepIntervalMs: o.sweepIntervalMs, guid: o.portGuid, priority: o.priority, smKey: o.smKey, pollIntervalMs: o.pollIntervalMs, pollRetries: o.pollRetries, standbySync: o.standbySync, forceMaster: o.forceMaster });
    this.retrying = new RetryingSmp(o.smp, o.clock, o.smpRetry);
    this.sweeper = new Sweeper(this.retrying, o.clock, o.log, o);
    this.local = new LocalSweeper(this.retrying, o.clock, o.log, o, this.sweeper);
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
    if (control === SmInfoControl.Acknowledge && this.ackWaiter?.guid === payload.guid) this.ackWaiter.resolve();
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

  /** A master that stops hands the subnet to its best standby first (one that holds this SA's
   * state if there is one), so the standby masters at once instead of after its polls of this SM
   * go unanswered. Resolves once that standby acknowledged (or did not, within `timeoutMs`). */
  async handOverOnStop(timeoutMs = 1000): Promise<RemoteSm | undefined> {
    if (this.stopped || this.ctl.state !== 'master') return undefined;
    // As they are now (the last sweep may have seen one still discovering).
    const known = await Promise.all(this.ctl.knownSms.filter((r) => r.lid || r.path).map((r) => pollSm(this.o.smp, r).then((x): RemoteSm => ({ ...x, lid: r.lid ?? x.lid, path: r.path }), () => undefined)));
    const standbys = known.filter((r): r is RemoteSm => r !== undefined && r.state === SmState.Standby && !isForeignKey(r.smKey, this.smKey));
    const current = standbys.filter((r) => (this.o.standbySync?.(r.guid) ?? 'current') === 'current');
    const to = best(current.length ? current : standbys);
    if (!to) return undefined;
    this.o.log.info('stopping: handover to {master}', { master: to.guid, lid: to.lid ?? 0 });
    // From here this SM answers SMInfo as NOTACTIVE: the new master's first sweep must not find a
    // better master still here and hand the subnet straight back (OpenSM would).
    this.ctl.handle({ type: 'stop' }, this.o.clock.now());
    this.logTransitions();
    const clock = this.o.clock;
    let timer: TimerHandle | undefined;
    const acked = new Promise<void>((resolve) => {
      this.ackWaiter = { guid: to.guid, resolve };
      timer = clock.setTimeout(resolve, timeoutMs);
    });
    try {
      await sendSmInfo(this.o.smp, to, SmInfoControl.Handover, { ...this.smInfo(undefined, true), smState: SmState.Master });
      await acked;
      // The answer to the ACKNOWLEDGE goes out at the end of this event-loop turn: let it, before
      // the caller closes the port (the new master would retry it, and log it undelivered).
      await new Promise<void>((r) => clock.defer(r));
    } catch (e) {
      this.o.log.warn('SMInfo Set not delivered', { to: to.guid, lid: to.lid, control: SmInfoControl.Handover, error: (e as Error).message });
    } finally {
      if (timer) clock.clearTimeout(timer);
      this.ackWaiter = undefined;
    }
    return to;
  }
  private ackWaiter?: { guid: bigint; resolve: () => void };

  stop(): void {
    this.stopped = true;
    this.handoverSent();
    this.local.forget(); // no idle-time re-route rehearsal after a stop (--once exits at once)
    this.ctl.handle({ type: 'stop' }, this.o.clock.now());
    this.disarm();
    this.waiters = [];
  }

  /** Settings a reload changes (issue #28; api/sm.ts `reload`): the next heavy sweep, a full one,
   * programs P_Keys, VL tables and routes from them. */
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
    if (full) this.fullWanted = true;
    this.event({ type: 'sweepRequested', kind: 'heavy', reason });
  }

  /** Trap 144 says the port at `lid` advertises an SM: read its SMInfo at once (a better SM still
   * discovering is handed the subnet before it stands by under this one, as OpenSM does), then
   * sweep the whole fabric. */
  async smAnnounced(lid: number, reason: string): Promise<void> {
    if (this.stopped) return;
    if (this.ctl.state === 'master' && lid) {
      const release = this.hold();
      try {
        const r = await pollSm(this.o.smp, { guid: 0n, lid, priority: 0, state: 0, actCount: 0, smKey: 0n });
        if (!this.stopped) this.event({ type: 'smsChecked', remotes: [{ ...r, lid, path: undefined }] });
        // Handing over: held until the HANDOVER is on its way (the sendSmInfo action releases it).
        if (!this.stopped && this.ctl.state !== 'master') this.afterHandoverSent.push(release);
        else release();
      } catch (e) {
        release();
        this.o.log.debug('SMInfo not read', { lid, error: (e as Error).message });
      }
    }
    this.requestHeavySweep(reason, true);
  }

  /** While this master decides about an SM a trap 144 just announced (reads its SMInfo, hands it
   * the subnet), SMInfo Gets wait for the decision (sm/handlers.ts, bounded): a better SM still
   * discovering then learns of the HANDOVER before it learns of a MASTER it would stand by under.
   * (A STANDBY OpenSM that finds a worse master sends it trap 144 and counts it outstanding until
   * repressed; under ibsim no repress ever arrives, so it could never sweep after the handover:
   * docs/ibsim-notes.md.) `undefined` when nothing is being decided. */
  whenDecided(): Promise<void> | undefined {
    return this.deciding ? new Promise((r) => this.decidedWaiters.push(r)) : undefined;
  }
  private deciding = 0;
  private decidedWaiters: Array<() => void> = [];
  private afterHandoverSent: Array<() => void> = [];
  private hold(): () => void {
    this.deciding++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.deciding > 0) return;
      const ws = this.decidedWaiters;
      this.decidedWaiters = [];
      for (const w of ws) w();
    };
  }
  private handoverSent(): void {
    const rs = this.afterHandoverSent;
    this.afterHandoverSent = [];
    for (const r of rs) r();
  }

  /** Ask for a sweep; resolves with the stats of the last sweep once it (and the heavy sweep a
   * light one finds it needs) is done. A heavy one asked for here is a full heavy sweep. */
  /** An operator's re-route (`ibsm reroute`): a heavy sweep that routes with the configured
   * engine, also over tables kept from another SM (sm/adopt-lfts.ts). */
  reroute(): Promise<SweepStats> {
    this.sweeper.routingChanged();
    return this.sweep('heavy');
  }
  sweep(kind: SweepKind): Promise<SweepStats> {
    const p = this.wait((a) => a.type === 'heavySweep' || a.type === 'lightSweep', true) as Promise<SweepStats>;
    if (kind === 'heavy') this.fullWanted = true;
    else this.lightFull = true;
    this.event({ type: 'sweepRequested', kind, reason: 'requested' });
    return p;
  }
  /** The next heavy sweep must be a full one: asked for, or the last one left part of the fabric out. */
  private fullWanted = false;
  /** The next light sweep reads every CA port (one asked for), not only the periodic share. */
  private lightFull = false;

  /** The multicast groups changed (join/leave): reprogram the MFTs as soon as the SM is idle
   * (right after a sweep under way). Resolves with the MFT blocks written. */
  updateMulticast(): Promise<number> {
    if (!this.snapshot || this.stopped) return Promise.resolve(0);
    const p = this.wait((a) => a.type === 'programMulticast' || a.type === 'heavySweep', false).then(() => this.lastMft);
    this.event({ type: 'multicastChanged' });
    return p;
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
    const survived = error !== undefined && fabricCaused(error);
    if (error !== undefined && this.stopped) {
      // The SM was stopped while this action ran (its RPC layer is closed under it): not a failure.
      this.o.log.info('action cut short by the stop', { action: a.type, error: (error as Error).message });
    } else if (error !== undefined) {
      const f = { error: (error as Error).message };
      const log = this.o.log;
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
    this.ctl.handle({ type: 'actionDone', action: a, outcome }, this.o.clock.now());
    for (const w of [...this.waiters]) {
      if (w.after >= seq || !w.accepts(a)) continue;
      // The fabric failed this action: whoever waits for it waits for the next one.
      if (survived) {
        w.after = this.started;
        continue;
      }
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
      if (t.to === 'standby') this.viewSaid = undefined;
      this.o.onStateChange?.(t);
    }
  }

  private async execute(a: SmAction): Promise<{ outcome: ActionOutcome; value: unknown }> {
    switch (a.type) {
      case 'heavySweep': {
        const st = await this.heavySweep(a);
        const left = st.skippedNodes + st.skippedLinks + st.failedWrites + st.stuckPorts + this.sweeper.mftFailed;
        if (left > 0) this.fullWanted = true; // what was left out is looked for in the whole fabric
        return { outcome: left > 0 && this.snapshot ? 'incomplete' : 'ok', value: st };
      }
      case 'lightSweep': {
        // force_heavy_sweep: the periodic sweep is a heavy one (as 'changed' makes it)
        if (this.o.forceHeavySweep) {
          this.fullWanted = true;
          return { outcome: 'changed', value: undefined };
        }
        // Periodic: the next share of the CA ports; asked for (sweep('light')): all of them.
        const full = this.lightFull;
        this.lightFull = false;
        const { changed, stats, smPorts: sms, foreign } = await this.sweeper.light(this.snapshot!, full);
        if (foreign.ports) this.o.log.error('ports name another master or their LIDs moved: another SM is writing this fabric', { ports: foreign.ports, masterSmLids: [...foreign.masterSmLids].join(','), ...foreign.first });
        await this.checkSms(sms);
        if (changed) {
          this.o.log.info('light sweep found a change; heavy sweep follows');
        } else {
          this.record(stats);
          this.o.log.debug('sweep done', { kind: 'light', smps: stats.smps, ms: Math.round(stats.ms * 10) / 10 });
        }
        return { outcome: changed ? 'changed' : 'ok', value: stats };
      }
      case 'programMulticast': {
        this.lastMft = await this.sweeper.programMulticast(this.snapshot!);
        return { outcome: 'ok', value: this.lastMft };
      }
      case 'pollMaster': {
        try {
          const r = await pollSm(this.o.smp, a.to);
          // Found before it had a LID: the master's LID is what it programmed as MasterSMLID here.
          const lid = r.lid ?? a.to.lid ?? (await this.masterSmLidHere());
          const remote = { ...r, lid: lid || undefined, path: a.to.path };
          await this.o.onMasterPolled?.(remote).catch((e: unknown) => this.o.log.warn('SA state not pulled from the master', { master: remote.guid, lid: remote.lid, error: (e as Error).message }));
          this.viewChecked(remote.guid);
          this.ctl.handle({ type: 'pollAnswered', remote }, this.o.clock.now());
        } catch (e) {
          this.o.log.debug('master poll unanswered', { master: a.to.guid, lid: a.to.lid, error: (e as Error).message });
          this.ctl.handle({ type: 'pollFailed' }, this.o.clock.now());
        }
        return { outcome: 'ok', value: undefined };
      }
      case 'sendSmInfo': {
        // An SM that sent us a directed-route Set before we knew it (OpenSM hands over to an SM
        // still discovering) came with neither LID nor path: the sweep since then has read it.
        const to = a.to.lid || a.to.path ? a.to : (this.ctl.knownSms.find((r) => r.guid === a.to.guid) ?? a.to);
        if (!to.lid && !to.path) {
          this.o.log.warn('SMInfo Set not sent: no route to the SM', { to: a.to.guid, control: a.control });
          return { outcome: 'ok', value: undefined };
        }
        if (a.pullFirst) {
          // The master that handed over serves its state until it has the ACKNOWLEDGE.
          // Not pulled: what was pulled before may be stale, so no takeover from the view.
          const pulled = await (this.o.onHandedOver?.(to) ?? Promise.resolve()).then(
            () => true,
            (e: unknown) => (this.o.log.warn('SA state not pulled from the master', { master: to.guid, lid: to.lid, error: (e as Error).message }), false),
          );
          this.viewChecked(to.guid, pulled);
        }
        const sent = sendSmInfo(this.o.smp, to, a.control, { ...this.smInfo(undefined, true), smState: a.state }).catch((e: unknown) => {
          this.o.log.warn('SMInfo Set not delivered', { to: a.to.guid, lid: a.to.lid, control: a.control, error: (e as Error).message });
        });
        // An ACKNOWLEDGE is not waited for: the SM that handed over may exit before it answers,
        // and the takeover does not depend on its answer.
        if (a.control !== SmInfoControl.Acknowledge) await sent;
        if (a.control === SmInfoControl.Handover) this.handoverSent();
        return { outcome: 'ok', value: undefined };
      }
      case 'notifyMaster': {
        try {
          await notifyMaster(this.o.smp, a.to, this.ownLid(), PortCap.IsSM);
        } catch (e) {
          this.o.log.debug('trap 144 to the master not delivered', { to: a.to.guid, lid: a.to.lid, error: (e as Error).message });
        }
        return { outcome: 'ok', value: undefined };
      }
    }
  }

  private ownDisc?: DiscoveryResult;
  /** `ownDisc`'s fingerprint, computed when first asked (a standby's view is not changed). */
  private ownView?: { disc: DiscoveryResult; fp: bigint };

  /** After a pull of the master's state: tell the controller whether this SM's own view of the
   * fabric is the master's (never when the pull failed: `fresh` false). */
  private viewChecked(master: bigint, fresh = true): void {
    const theirs = fresh ? this.o.masterView?.() : undefined;
    const d = this.ownDisc;
    if (d && theirs !== undefined && this.ownView?.disc !== d) this.ownView = { disc: d, fp: fabricFingerprint(d.fabric) };
    const current = d !== undefined && theirs !== undefined && this.ownView?.fp === theirs;
    if (current !== (this.viewSaid ?? false) && (current || this.viewSaid !== undefined)) {
      if (current) this.o.log.info("this standby's view of the fabric is the master's: a handover is taken over from it", { master });
      else this.o.log.info("this standby's view of the fabric is no longer the master's: a handover is followed by a full heavy sweep", { master });
      this.viewSaid = current;
    }
    this.ctl.handle({ type: 'masterView', guid: master, current, ...(theirs !== undefined ? { theirs } : {}) }, this.o.clock.now());
  }
  /** What the last of those two lines said (undefined: neither since standing by). */
  private viewSaid?: boolean;

  /** MasterSMLID of this SM's own port (0 when unknown). */
  private async masterSmLidHere(): Promise<number> {
    const d = this.ownDisc;
    if (!d) return 0;
    try {
      return PortInfo.decode(await this.o.smp.getDr([], SmpAttr.PortInfo, portInfoMod(d.smPort))).masterSmLid;
    } catch {
      return 0;
    }
  }
  private ownLid(): number {
    const d = this.snapshot?.discovery ?? this.ownDisc;
    return d?.fabric.nodes[d.smNode]?.ports[d.smPort]?.lid ?? 0;
  }

  /** A light sweep's re-check of the other SMs: the known ones and any port newly showing IsSM. */
  private async checkSms(fresh: readonly SmPort[]): Promise<void> {
    const ports = new Map<bigint, SmPort>();
    for (const r of this.ctl.knownSms) if (r.path) ports.set(r.guid, { guid: r.guid, lid: r.lid ?? 0, path: r.path });
    for (const p of fresh) ports.set(p.guid, p);
    if (!ports.size) return;
    const remotes = await querySms(this.o.smp, [...ports.values()]);
    this.ctl.handle({ type: 'smsChecked', remotes }, this.o.clock.now());
  }

  /** Between discovery and the first Set: read the other SMs' SMInfo and let the controller
   * decide whether this SM programs the fabric. */
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
    this.ctl.handle({ type: 'discovered', remotes, ownPortUp, fromView }, this.o.clock.now());
    this.noteForeign(remotes);
    const first = this.ctl.state !== 'master';
    this.logTransitions();
    if (!this.ctl.mayProgram) return false;
    // The first sweep as master, after starting or taking over: the clients' SA registrations are
    // gone unless the SA state came along, so they are told to register again (OpenSM does the
    // same on its first master sweep).
    return { reregister: first && !(this.o.stateKept?.() ?? false) };
  }

  /** Heavy sweeps that found a master with another SM_Key holding the fabric (and so wrote
   * nothing): ibsm_foreign_master_sweeps_total. */
  contestedSweeps = 0;
  /** The master with another SM_Key the last heavy sweep found holding the fabric (ibsm_foreign_master). */
  get contestedBy(): RemoteSm | undefined {
    return this.ctl.contestedBy;
  }
  private contestLogged?: bigint;
  private readonly foreignStandbysLogged = new Set<bigint>();

  /** Say, once per SM, why this SM leaves the fabric alone or ignores another SM. */
  private noteForeign(remotes: readonly RemoteSm[]): void {
    const rogue = this.ctl.contestedBy;
    const key = (k: bigint): string => formatHex(k, 64);
    if (rogue) {
      this.contestedSweeps++;
      if (this.contestLogged !== rogue.guid) {
        this.contestLogged = rogue.guid;
        this.o.log.error('a master with another SM_Key holds the fabric; this SM does not program it', {
          guid: rogue.guid,
          lid: rogue.lid ?? 0,
          priority: rogue.priority,
          theirSmKey: key(rogue.smKey),
          ourSmKey: key(this.smKey),
          fix: 'give both SMs one SM_Key (--sm-key / sm_key) to run them as master and standby, stop the other SM, or start ibsm with --force-master',
        });
      }
      return;
    }
    if (this.contestLogged !== undefined) this.o.log.info('the master with another SM_Key is gone; this SM manages the fabric again', { guid: this.contestLogged });
    this.contestLogged = undefined;
    for (const r of remotes) {
      if (!isForeignKey(r.smKey, this.smKey) || r.state === SmState.Master || this.foreignStandbysLogged.has(r.guid)) continue;
      if (this.foreignStandbysLogged.size < 64) this.foreignStandbysLogged.add(r.guid);
      this.o.log.warn('an SM with another SM_Key is ignored: it can neither take this subnet nor be handed it', { guid: r.guid, lid: r.lid ?? 0, priority: r.priority, state: r.state, theirSmKey: key(r.smKey), ourSmKey: key(this.smKey) });
    }
  }

  private async heavySweep(a: Extract<SmAction, { type: 'heavySweep' }>): Promise<SweepStats> {
    const t0 = this.o.clock.now();
    const s0 = this.o.smp.sent;
    this.sweepCount++;
    const rt = this.retrying;
    const r0 = { recovered: rt.recovered, foundDone: rt.foundDone, failed: rt.failures.timeout + rt.failures.status };
    // A change around a few ports is re-explored and re-routed locally (sm/local-sweep.ts),
    // unless a full sweep is wanted.
    const full = this.fullWanted || a.full === true;
    this.fullWanted = false;
    const local = !full && this.snapshot && this.ctl.state === 'master' && this.o.localSweeps !== false ? await this.local.sweep(this.snapshot, this.sweepCount) : undefined;
    // Handed the subnet by the master whose view this SM holds: taken over from it (the controller
    // follows with a full heavy sweep that verifies).
    const view = a.takeover ? this.ownDisc : undefined;
    const takeover = view && !local ? await this.sweeper.takeover(this.sweepCount, view, (disc) => this.decide(disc, true)) : undefined;
    const { snapshot, stats } = local ?? takeover ?? (await this.sweeper.heavy(this.sweepCount, (disc) => this.decide(disc)));
    const retried = { recovered: rt.recovered - r0.recovered, setsFoundDone: rt.foundDone - r0.foundDone, givenUp: rt.failures.timeout + rt.failures.status - r0.failed };
    if (retried.recovered + retried.setsFoundDone + retried.givenUp > 0) this.o.log.info('SMP retries in this sweep', retried);
    if (!snapshot) return stats; // another SM masters the fabric
    if (!local && !takeover) this.local.remember(snapshot);
    this.snapshot = snapshot;
    // Multicast forwarding for the SA's groups over the new routes.
    stats.mftBlocksWritten = this.lastMft = await this.sweeper.programMulticast(snapshot);
    stats.ms = this.o.clock.now() - t0;
    stats.smps = this.o.smp.sent - s0;
    this.o.onSnapshot?.(snapshot);
    this.record(stats);
    this.o.log.debug('sweep done', { kind: 'heavy', sweep: this.sweepCount, local: local !== undefined, smps: stats.smps, ms: Math.round(stats.ms * 10) / 10 });
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

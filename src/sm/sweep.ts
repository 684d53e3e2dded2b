/** The sweeps the controller asks for, carried out over an SmpClient as phase tables
 * (sm/pipeline.ts): discover → decide → plan → apply → verify, each apply phase planning what
 * differs (pure, sm/plan-*.ts) and sending it through the one apply step (sm/apply.ts). The
 * Sweeper's tables (`tables`, built once):
 *
 * Heavy: discovery → vports read → decide (the other SMs) → LIDs (vports' too) → routes (vport
 * LIDs as their ports') → PortInfo (with INIT → ARMED) → P_Keys → SL2VL/VLArb → SwitchInfo + LFT
 * blocks → ARMED → ACTIVE → vports (enabled, P_Keys, ACTIVE; sm/vport-phases.ts) → snapshot.
 * Takeover: the handed view checked → decide → LIDs → routes → PortInfo → snapshot.
 * Light (sm/light-sweep.ts): reads → judgement → stats. OpenSM's budget of one SMP a switch per
 * periodic sweep, spent on half the switches' SwitchInfo (PortStateChange; every switch within two
 * sweeps) and a rotating share of the CA ports; "changed" when anything moved.
 * Multicast (sm/mcast-phases.ts): MFT plan → MFT apply → verify, over the current snapshot; after
 * every heavy sweep that published one (sm/sweep-run.ts) and for a multicast change.
 * Local (sm/local-sweep.ts): the heavy sweep's phases over the changed part of the fabric. */
import { NodeType, SmpAttr } from '../wire/mad.js';
import { SwitchInfo } from '../wire/sma.js';
import type { Snapshot } from '../model/snapshot.js';
import type { QosVlSettings } from '../model/qos-policy.js';
import { PartitionPlan } from '../model/partitions.js';
import { cloneFabric, isSwitch } from '../model/fabric.js';
import { DEADLOCK_FREE_FALLBACK, routeWithFallback, type FallbackResult } from '../routing/registry.js';
import { RoutingNotApplicable, type RoutingOptions } from '../routing/types.js';
import type { McastGroupPorts } from '../routing/mcast-tree.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { logCodeOf } from '../util/log-codes.js';
import { discover, type DiscoveryResult, type DiscoverySkip } from './discovery.js';
import { assignLids, lmcSwitches, type Guid2LidStore, type LidAssignment, type LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { Programmed, type SmpWrite } from './programmed.js';
import type { PortSettings } from './plan-ports.js';
import type { SmPort } from './sminfo.js';
import { noteExtendedSpeeds } from './port-info-get.js';
import { CaRotation, caRounds, lightPhases, type ForeignWrites, type LightRun } from './light-sweep.js';
import { LFT_INTERLEAVE, observeResets } from './plan-tables.js';
import { ForeignTables, previousMaster } from './adopt-lfts.js';
import { FAILURE_LOG_LINES, logDiscoveryPhase, logRoutingPhase, ms1, skipLogger } from './sweep-log.js';
import { emptyStats, newRun, programmedStats, runPhases, type DecideFn, type Phase, type SweepRun, type SweepStats, type SweepView } from './pipeline.js';
import { multicastPhases, type McastRun } from './mcast-phases.js';
import { programPhases, type SweepPhase } from './program-phases.js';
import { foreignKeys, SweepWrites } from './sweep-writes.js';
import { HealthKeeper, type HealthSettings } from './health-phase.js';
import { QuarantineWatch } from './health-quiet.js';
import { VPortManager } from './vport-mgr.js';
import { heavyVportPhases, vportPass } from './vport-phases.js';

export { emptyStats, type SweepStats } from './pipeline.js';

export interface SweepSettings extends Omit<PortSettings, 'smLid'> {
  routing: string[];
  /** Routing options beyond LMC and seed (configured root switches). */
  routingOptions?: Pick<RoutingOptions, 'roots' | 'cnGuids' | 'ioGuids' | 'routeOrder' | 'routeOrderNoScatter'>;
  /** SwitchInfo LifeTimeValue (default 0x12, as OpenSM's packet_life_time). */
  packetLife?: number;
  guid2lid?: ReadonlyMap<bigint, LidRange>;
  /** The guid2lid store's save (sm/lids.ts Guid2LidStore): called with each master sweep's LIDs,
   * off the sweep's path (it returns at once; a file store writes later). */
  saveGuid2Lid?: Guid2LidStore['save'];
  partitions?: PartitionPlan;
  seed?: number;
  multicastGroups?: (snap: Snapshot) => McastGroupPorts[];
  /** OpenSM's qos_* VL settings: SL2VL and VLArbitration programmed from them (QoS on). */
  qosVl?: QosVlSettings;
  lmcEsp0?: boolean; // OpenSM lmc_esp0: a switch with an enhanced port 0 gets the LMC there too
  /** The first sweep as master gives every port a new LID: guid2lid and the ports' LIDs not used (OpenSM reassign_lids). */
  reassignLids?: boolean;
  /** A standby taking over prefers the guid2lid file to the LIDs the old master gave (OpenSM honor_guid2lid_file; default true). */
  honorGuid2lid?: boolean;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
  /** The light sweep interval: 0 makes every light sweep read everything; else the rotation of
   *  sm/light-sweep.ts (caRounds). */
  sweepIntervalMs?: number;
  /** The expected topology and its actions (issue #33; sm/health-phase.ts). */
  topology?: HealthSettings;
}

/** The engine that always applies and is deadlock-free (routing/registry.ts: nue): routes with it
 * when none of the configured chain applies (e.g. `--routing ftree` on a fabric that is no tree). */
export const FINAL_FALLBACK_ENGINE = DEADLOCK_FREE_FALLBACK;
/** The ERROR logged when the configured chain gave way to the final fallback, and its stable code. */
const ROUTING_FALLBACK_MSG = 'no engine of the routing chain applies; routing with the final fallback';
export const ROUTING_FALLBACK_CODE = logCodeOf(ROUTING_FALLBACK_MSG)!;
/** How often a long routing reports progress (onProgress 'routing'). */
const ROUTE_PROGRESS_MS = 100;

export class Sweeper {
  readonly programmed = new Programmed();
  /** GUID→LID entries learnt from another SM (failover); the configured guid2lid wins. */
  private adopted?: Map<bigint, LidRange>;

  adoptLids(lids: ReadonlyMap<bigint, LidRange>): void {
    // honor_guid2lid_file FALSE (OpenSM's default): the old master's LIDs, the file not used
    this.adopted = this.s.honorGuid2lid === false ? new Map(lids) : new Map([...lids, ...(this.s.guid2lid ?? [])]);
    this.own = undefined;
  }
  /** The LIDs this SM last assigned as master: they win over what the ports hold, so another SM
   * that renumbered the fabric (a rogue master) does not get its LIDs adopted as ours. */
  private own?: ReadonlyMap<bigint, LidRange>;
  /** Another SM masters the subnet now: its LIDs are the subnet's, and it may rewrite any table. */
  standingBy(): void {
    this.own = undefined;
    this.programmed.forgetAll();
    this.foreign.forget();
  }
  private readonly foreign = new ForeignTables(); // the LFTs another SM left, while kept
  routingChanged = (): void => this.foreign.forget();
  /** reassign_lids: not yet done (the first sweep that assigns LIDs does it). */
  private reassignPending = true;
  /** What each management port's last PortInfo said of IsExtendedSpeedsSupported (port GUID ->
   * it has them), for the next sweeps' reads (sm/port-info-get.ts). One entry per port ever seen. */
  private readonly extendedSpeeds = new Map<bigint, boolean>();
  knowsExtendedSpeeds = (portGuid: bigint): boolean | undefined => this.extendedSpeeds.get(portGuid);
  /** What a sweep's view says of IsExtendedSpeedsSupported, for the next sweeps' reads. */
  learnExtendedSpeeds(disc: DiscoveryResult): void {
    noteExtendedSpeeds(this.extendedSpeeds, disc);
  }

  constructor(
    readonly smp: SmpClient,
    readonly clock: Clock,
    readonly log: Logger,
    readonly s: SweepSettings,
  ) {
    this.rotation = new CaRotation(caRounds(s.sweepIntervalMs));
    this.phases = programPhases({ smp, clock, log, s, programmed: this.programmed, foreign: this.foreign });
    this.health = new HealthKeeper(log, clock, s.topology ?? {});
    this.quiet = new QuarantineWatch(smp, log, this.health);
    const p = this.phases;
    this.vports = new VPortManager(smp, log); // vport hook (sm/vport-*.ts)
    const vp = heavyVportPhases(this.vports, log, this.vportPkeys);
    this.tables = {
      heavy: [
        { kind: 'discover', name: 'discovery', run: (r) => this.discoverWhole(r) },
        vp.discover,
        this.decidePhase,
        this.health.phase(false),
        ...this.planPhases(true),
        this.health.takeDownPhase,
        p.portInfo,
        p.pkeys,
        p.vlTables,
        p.lfts,
        p.activation,
        vp.apply,
        { kind: 'verify', name: 'the snapshot', run: (r) => this.verifyWhole(r) },
      ],
      takeover: [
        { kind: 'discover', name: 'the view checked', run: (r) => this.checkView(r) },
        this.decidePhase,
        this.health.phase(false),
        ...this.planPhases(false),
        p.portInfo,
        { kind: 'verify', name: 'the snapshot', run: (r) => this.verifyTakeover(r) },
      ],
      light: lightPhases({ smp, clock, log, rotation: this.rotation, quiet: this.quiet }),
      multicast: multicastPhases({ clock, log, s, programmed: this.programmed, writesFor: (disc) => this.writesFor(disc, { keys: false }) }),
    };
  }

  /** SR-IOV vports (sm/vport-mgr.ts). */
  readonly vports: VPortManager;
  private vportDeps(): Parameters<typeof vportPass>[0] {
    const save = (m: ReadonlyMap<bigint, LidRange>): void => {
      try {
        this.s.saveGuid2Lid?.(m);
      } catch (e) {
        this.guid2lidFailures++;
        this.log.warn('guid2lid not saved', { error: (e as Error).message, failures: this.guid2lidFailures });
      }
    };
    return { mgr: this.vports, smp: this.smp, log: this.log, lmc: this.s.lmc, programmed: this.programmed, writesFor: (snap) => this.writesFor(snap.discovery), save, pkeysOf: this.vportPkeys };
  }
  /** A vport's P_Keys: its partitions in the plan, by its GUID as any CA port's. */
  private readonly vportPkeys = (guid: bigint): number[] => (this.s.partitions ?? PartitionPlan.defaultPlan()).pkeysFor(guid, 'ca');

  /** The phase tables (sm/pipeline.ts) this sweeper runs: a heavy sweep's, a takeover's, a light
   * sweep's and the multicast update's (a local sweep's is sm/local-sweep.ts's, over the same
   * apply phases). */
  readonly tables: {
    heavy: readonly Phase<SweepRun>[];
    takeover: readonly Phase<SweepRun>[];
    light: readonly Phase<LightRun>[];
    multicast: readonly Phase<McastRun>[];
  };

  /** The write step of a sweep over `disc` (sm/sweep-writes.ts): the one apply step with its
   * failure policy; the M_Keys of nodes this SM read a foreign key from are presented (`keys`). */
  writesFor(disc: DiscoveryResult, o: { keys?: boolean; onOk?: (w: SmpWrite) => void; ownView?: boolean } = {}): SweepWrites {
    const keys = o.keys === false ? undefined : foreignKeys(disc, this.s.mkey, this.log);
    return new SweepWrites(this.smp, this.log, disc, this.programmed, this.s.mkey, keys, o.onOk, o.ownView);
  }

  /** The health state (isolations, mismatches) and its phases, for heavy and local sweeps. */
  readonly health: HealthKeeper;
  /** health hook: flap: a quarantined link's bounces checked without a sweep (sm/health-quiet.ts). */
  readonly quiet: QuarantineWatch;

  /** The apply phases (sm/program-phases.ts), the same for every sweep of this sweeper. */
  readonly phases: ReturnType<typeof programPhases>;

  /** Route with the configured chain; when none of it applies, with the final fallback (and an
   * ERROR with a stable code naming the engines and their reasons). The configured chain (with its routing options), or the final fallback when none applies. */
  route(disc: DiscoveryResult): FallbackResult {
    const { s, log } = this;
    // A long routing (seconds: dfsssp or nue on a large cyclic fabric) holds the event loop; its
    // ticks report progress (ROUTE_PROGRESS_MS apart), where the CLI also looks at its CPU.
    const t0 = this.clock.now();
    let last = t0;
    const progress = s.onProgress;
    const tick = progress
      ? (): void => {
          const now = this.clock.now();
          if (now - last < ROUTE_PROGRESS_MS) return;
          last = now;
          progress('routing', { ms: Math.round(now - t0) });
        }
      : undefined;
    // Its start is reported too, with the fabric's size (the CLI may let TurboFan go there: a big
    // fabric's routing is a hot loop from its first step).
    if (progress) {
      let switches = 0;
      for (const n of disc.fabric.nodes) if (isSwitch(n)) switches++;
      progress('routing', { ms: 0, nodes: disc.fabric.nodes.length, switches });
    }
    const opts = { ...s.routingOptions, lmc: s.lmc, seed: s.seed, ...(tick ? { tick } : {}) };
    try {
      return routeWithFallback(disc.fabric, s.routing, opts);
    } catch (e) {
      if (!(e instanceof RoutingNotApplicable) || s.routing.length === 1 && s.routing[0] === FINAL_FALLBACK_ENGINE) throw e;
      log.error(ROUTING_FALLBACK_MSG, { engine: FINAL_FALLBACK_ENGINE, chain: s.routing.join(','), reasons: e.reason });
      const r = routeWithFallback(disc.fabric, [FINAL_FALLBACK_ENGINE], opts);
      return { ...r, skipped: [] };
    }
  }

  /** The LID options of a sweep's view: this SM's own LIDs (as master), else another SM's
   * (adopted at a failover) or the guid2lid file, and what the ports hold. */
  private lidOptions(disc: DiscoveryResult): Parameters<typeof assignLids>[1] {
    const s = this.s;
    const reassign = s.reassignLids === true && this.reassignPending;
    const existing = reassign ? undefined : (this.own ?? this.adopted ?? s.guid2lid);
    return { lmc: s.lmc, lmcSwitch: lmcSwitches(disc, s), smNode: disc.smNode, smPort: disc.smPort, existing, keepCurrent: !reassign, reserved: this.vports.reserved(existing) };
  }

  /** The LID step of a sweep that programs: LIDs assigned to the view's ports, kept as this SM's
   * own and handed to the guid2lid store (its `save` takes the map and returns; a file store
   * writes later, sm/lids.ts Guid2LidStore). A store that throws is logged and counted: the sweep
   * carries on. */
  private assign(disc: DiscoveryResult, sweep: number): { lids: LidAssignment; smLid: number } {
    const { s, log } = this;
    const tl = this.clock.now();
    const opts = this.lidOptions(disc);
    const lids = assignLids(disc.fabric, opts);
    this.vports.assign(lids, disc.fabric, s.lmc, opts.existing); // vport hook: their ranges join the map saved
    this.reassignPending = false;
    this.own = lids.byGuid;
    const smLid = disc.fabric.nodes[disc.smNode]!.ports[disc.smPort]!.lid!;
    try {
      s.saveGuid2Lid?.(lids.byGuid);
    } catch (e) {
      this.guid2lidFailures++;
      log.warn('guid2lid not saved', { error: (e as Error).message, failures: this.guid2lidFailures });
    }
    log.info('LIDs assigned', { endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid });
    if (log.enabled('debug')) log.debug('sweep phase: LIDs', { sweep, endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid, lmc: s.lmc, ms: ms1(this.clock.now() - tl) });
    return { lids, smLid };
  }
  /** Saves of the guid2lid map that threw (logged each). */
  guid2lidFailures = 0;

  /** The decide phase: the run's `decide` (the controller, over the other SMs) says whether this
   * SM programs the view, and with ClientReregister. */
  private readonly decidePhase: SweepPhase = {
    kind: 'decide',
    name: 'master or not',
    run: async (r) => {
      const go = await r.decide!(r.view!.disc);
      if (!go) return false;
      r.go = go;
      // the SM that programmed the fabric before, as its port says before this SM's Sets
      r.view!.routedBy = previousMaster(r.view!.disc);
    },
  };

  /** The plan phases every sweep over the whole fabric runs: LIDs (and what reset nodes lost,
   * before any Set changes what is known of them), then the routes. */
  private planPhases(observe: boolean): SweepPhase[] {
    return [
      {
        kind: 'plan',
        name: 'LIDs',
        run: (r) => {
          const disc = r.view!.disc;
          const { lids, smLid } = this.assign(disc, r.sweep);
          r.lids = lids;
          r.smLid = smLid;
          r.maxLid = lids.maxLid;
          if (observe) observeResets(disc, this.programmed);
          // the view is this sweep's own discovery (or the one it was handed), published only
          // once the sweep is done: its PortInfos are written over as the Sets are acknowledged
          r.writes = this.writesFor(disc, { ownView: true });
        },
      },
      { kind: 'plan', name: 'routes', run: (r) => this.planRoutes(r) },
    ];
  }

  /** Routes over the view with the configured chain (their SL2VL needs and LFTs follow). */
  private planRoutes(r: SweepRun): void {
    const { log } = this;
    const tr = this.clock.now();
    const routed = this.route(r.view!.disc);
    for (const sk of routed.skipped) log.warn('routing engine not applicable', { engine: sk.engine, reason: sk.reason });
    const routeMs = this.clock.now() - tr;
    log.info('routing done', { engine: routed.result.engine, ms: Math.round(routeMs), vls: routed.result.vlsUsed ?? 1 });
    if (log.enabled('debug')) logRoutingPhase(log, r.sweep, r.view!.disc.fabric, routed, routeMs, () => this.clock.now());
    r.routed = routed;
    r.routing = routed.result;
    if (this.vports.ports.size) r.maxLid = this.vports.extendRoutes(r.routing, r.view!.disc.fabric, r.maxLid); // vport hook
  }

  /** The whole fabric as a view. */
  private static whole(disc: DiscoveryResult): SweepView {
    return { scope: 'whole', disc, ports: disc, fresh: () => true, interleave: LFT_INTERLEAVE };
  }

  /** Take the subnet over from `view` without rediscovering it: `view` is this SM's own last
   * discovery (it stood by since), which its old master's view matched at the handover (same
   * fingerprint, sm/controller.ts `takeover`). First every switch's SwitchInfo, all at once: each
   * must answer, flag no port change and hold the LinearFDBTop of the view's LIDs, and the LIDs
   * this SM would assign must be the view's; otherwise undefined (the fabric changed: the caller
   * sweeps in full, as after any handover). Then, once `decide` lets this SM program, every port's
   * PortInfo (MasterSMLID: this SM; what else a heavy sweep's planner finds to write) and the
   * routes, computed and not written: routing is canonical, so the old master wrote these very
   * tables. The controller follows with a full heavy sweep that verifies (reads the tables back
   * and writes only what differs, takes in whatever changed meanwhile).
   * Phases: discover (the view checked) → decide → plan (LIDs, routes) → apply (PortInfo) → verify. */
  async takeover(sweep: number, view: DiscoveryResult, decide: DecideFn): Promise<{ snapshot?: Snapshot; stats: SweepStats } | undefined> {
    const switches = view.fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    const r = newRun(sweep, this.clock.now(), this.smp.sent, { ...emptyStats('heavy'), nodes: view.fabric.nodes.length, switches });
    r.decide = decide;
    r.view = Sweeper.whole(view); // the view handed, checked by the discover phase
    const ran = await runPhases(this.tables.takeover, r);
    if (r.stale !== undefined) return undefined;
    if (!ran) return { stats: { ...r.stats, smps: this.smp.sent - r.s0, ms: this.clock.now() - r.t0 } };
    return { snapshot: r.snapshot!, stats: r.stats };
  }

  /** A takeover's discover phase: is the fabric still the view handed? Else `stale` says why. */
  private async checkView(r: SweepRun): Promise<boolean> {
    const why = await this.viewChanged(r.view!.disc);
    if (why) this.log.info('takeover: the fabric is not the view the old master had; full heavy sweep', { reason: why, smps: this.smp.sent - r.s0 });
    r.stale = why;
    return why === undefined;
  }

  /** A takeover's verify phase: the failures summed up, the snapshot and the stats. */
  private verifyTakeover(run: SweepRun): void {
    const { smp, log } = this;
    const view = run.view!.disc;
    const portsMs = this.clock.now() - run.ports!.at;
    run.writes!.finish();
    run.snapshot = { fabric: view.fabric, discovery: view, routing: run.routed!.result, maxLid: run.maxLid, smLid: run.smLid, sweep: run.sweep };
    run.stats = { ...programmedStats(run, smp.sent - run.s0, this.clock.now() - run.t0), endPorts: run.lids!.byGuid.size, engine: run.routed!.result.engine };
    const st = run.stats;
    log.info('takeover from the view: every port told its new master; a full heavy sweep verifies', { portInfoSets: st.portInfoSets, failedWrites: st.failedWrites, smps: st.smps, portsMs: Math.round(portsMs), ms: Math.round(st.ms) });
  }

  /** Why the fabric is not `view` any more (reassign_lids, LIDs that would change, a switch that
   * flags a port change, holds another LinearFDBTop or does not answer), or undefined. */
  private async viewChanged(view: DiscoveryResult): Promise<string | undefined> {
    const { smp, s } = this;
    const fabric = view.fabric;
    if (s.reassignLids === true && this.reassignPending) return 'reassign_lids asks for new LIDs';
    const check = assignLids(cloneFabric(fabric), this.lidOptions(view));
    if (check.changed) return `${check.changed} LIDs would change`;
    const top = check.maxLid;
    const switches: number[] = [];
    fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && switches.push(i));
    const answers = await Promise.all(
      switches.map((i) =>
        smp.getDr(view.nodes[i]!.path, SmpAttr.SwitchInfo, 0).then(
          (b) => {
            const si = SwitchInfo.decode(b);
            if (si.portStateChange) return `switch ${fabric.nodes[i]!.desc} flags a port change`;
            return si.linearFdbTop !== top ? `switch ${fabric.nodes[i]!.desc} holds LinearFDBTop ${si.linearFdbTop}, not ${top}` : undefined;
          },
          (e: unknown) => `switch ${fabric.nodes[i]!.desc} did not answer SwitchInfo (${(e as Error).message})`,
        ),
      ),
    );
    return answers.find((a) => a !== undefined);
  }

  /** Discover the fabric, then (when `decide` says this SM masters it) program it. Returns the
   * new snapshot (not yet multicast-programmed: `programMulticast` follows) and the stats, or only
   * the discovery's stats when this SM does not program. `decide` is where the controller looks
   * at the other SMs before any Set goes out.
   * Phases: discover → decide → plan (LIDs, routes) → apply (PortInfo and INIT → ARMED, P_Keys,
   * SL2VL/VLArb, SwitchInfo + LFT blocks, ARMED → ACTIVE) → verify (the snapshot). */
  async heavy(sweep: number, decide: DecideFn): Promise<{ snapshot?: Snapshot; stats: SweepStats }> {
    const r = newRun(sweep, this.clock.now(), this.smp.sent, emptyStats('heavy'));
    r.decide = decide;
    const ran = await runPhases(this.tables.heavy, r);
    if (!ran) return { stats: { ...r.stats, smps: this.smp.sent - r.s0, ms: this.clock.now() - r.t0 } };
    return { snapshot: r.snapshot!, stats: r.stats };
  }

  /** The discover phase of a heavy sweep: the whole fabric. What cannot be read is left out of
   * this sweep (logged, counted). */
  private async discoverWhole(r: SweepRun): Promise<void> {
    const { smp, log } = this;
    const skips: DiscoverySkip[] = [];
    const progress = this.s.onProgress;
    const disc = await discover(smp, {
      extendedSpeeds: this.extendedSpeeds,
      onProgress: (p) => progress?.('discover', p),
      onSkip: skipLogger(log, skips),
      skipProbe: this.health.unresp?.skipProbe(), // health hook: a node held unresponsive is not waited for
    });
    this.health.unresp?.noteSkips(skips); // health hook: the unresponsive-SMA policy judges them
    if (skips.length > FAILURE_LOG_LINES) log.warn('more nodes and links left out of this sweep', { more: skips.length - FAILURE_LOG_LINES });
    this.learnExtendedSpeeds(disc);
    const skippedNodes = skips.filter((k) => k.kind === 'node').length;
    const skippedLinks = skips.filter((k) => k.kind === 'link').length;
    const fabric = disc.fabric;
    const switches = fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    log.info('discovery done', { nodes: fabric.nodes.length, switches, smps: disc.smps, depth: disc.maxDepth });
    if (log.enabled('debug')) logDiscoveryPhase(log, r.sweep, disc, switches, skippedNodes, skippedLinks, this.clock.now() - r.t0);
    r.stats = { ...r.stats, nodes: fabric.nodes.length, switches, skippedNodes, skippedLinks };
    r.duplicates = skips.length - skippedNodes - skippedLinks;
    r.view = Sweeper.whole(disc);
  }

  /** The verify phase of a heavy sweep: the failures summed up, the snapshot and the stats. */
  private verifyWhole(r: SweepRun): void {
    r.writes!.finish();
    const disc = r.view!.disc;
    r.snapshot = { fabric: disc.fabric, discovery: disc, routing: r.routing!, maxLid: r.maxLid, smLid: r.smLid, sweep: r.sweep };
    r.stats = { ...programmedStats(r, this.smp.sent - r.s0, this.clock.now() - r.t0), endPorts: r.lids!.byGuid.size, duplicateGuids: r.duplicates };
  }

  /** MFT writes that failed at the last programMulticast. */
  mftFailed = 0;

  /** The multicast update (sm/mcast-phases.ts): every group's spanning tree over `snap`, the MFT
   * blocks that differ from what is programmed written. Returns blocks sent (written or failed). */
  async programMulticast(snap: Snapshot): Promise<number> {
    const r: McastRun = { snap, t0: this.clock.now(), sent: 0, failed: 0 };
    await runPhases(this.tables.multicast, r);
    this.mftFailed = r.failed;
    return r.sent;
  }

  /** The CA ports periodic light sweeps read in turn (sm/light-sweep.ts). */
  private readonly rotation: CaRotation;

  /** The light sweep (sm/light-sweep.ts `lightPhases`): the rotation's share of the switches'
   * SwitchInfo (PortStateChange) and of the linked CA ports (every one when `full`): "changed"
   * when anything moved; the CA ports that advertise an SM; what another SM wrote. */
  async light(snap: Snapshot, full = false): Promise<{ changed: boolean; stats: SweepStats; smPorts: SmPort[]; foreign: ForeignWrites }> {
    const r: LightRun = { snap, full, t0: this.clock.now(), s0: this.smp.sent };
    await runPhases(this.tables.light, r);
    const { changed, smPorts, foreign } = r.result!;
    // vport hook: new and gone vports handled without a heavy sweep (sm/vport-phases.ts)
    if (!changed && this.vports.ports.size) r.stats!.smps += (await vportPass(this.vportDeps(), snap)).smps;
    return { changed, stats: r.stats!, smPorts, foreign };
  }
}

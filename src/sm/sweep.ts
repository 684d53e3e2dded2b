/** The sweeps the controller asks for, carried out over an SmpClient: each is a sequence of
 * phases, and each programming phase is plan (pure, sm/plan-*.ts) → apply (sm/apply.ts).
 *
 * Heavy: discovery → LIDs → PortInfo (with INIT → ARMED) → P_Keys → routing → SL2VL/VLArb →
 * SwitchInfo + LFT blocks → ARMED → ACTIVE → snapshot → MFT blocks.
 * Light (sm/light-sweep.ts): every switch's SwitchInfo (PortStateChange) and a rotating share of
 * the CA ports; "changed" when anything moved. Multicast: the MFT blocks of the current groups over the current snapshot. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { SwitchInfo } from '../wire/sma.js';
import { lftBlockMod } from '../wire/modifiers.js';
import type { Snapshot } from '../model/snapshot.js';
import type { QosVlSettings } from '../model/qos-policy.js';
import { PartitionPlan } from '../model/partitions.js';
import { keepPortInfo } from '../model/port-info.js';
import { cloneFabric } from '../model/fabric.js';
import { DEADLOCK_FREE_FALLBACK, routeWithFallback, type FallbackResult } from '../routing/registry.js';
import { RoutingNotApplicable, type RoutingOptions } from '../routing/types.js';
import { computeMfts, type McastGroupPorts } from '../routing/mcast-tree.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { logCodeOf } from '../util/log-codes.js';
import { discover, type DiscoveryResult, type DiscoverySkip } from './discovery.js';
import { assignLids, lmcSwitches, type LidAssignment, type LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { APPLY_WINDOW, LFT_APPLY_WINDOW, applyAll, type ApplyHooks, type WriteSource } from './apply.js';
import { Programmed, type SmpWrite } from './programmed.js';
import { planActivation, planPortInfo, portStateOfSet, type PortSettings } from './plan-ports.js';
import type { SmPort } from './sminfo.js';
import { noteExtendedSpeeds } from './port-info-get.js';
import { CaRotation, caRounds, lightSweep, type ForeignWrites } from './light-sweep.js';
import { LFT_INTERLEAVE, lftPlan, observeResets, planLftReads, planMfts, planPkeys, planVlTables } from './plan-tables.js';
import { pump } from '../util/pump.js';
import { ForeignTables, previousMaster } from './adopt-lfts.js';
import { FAILURE_LOG_LINES, logDiscoveryPhase, logLftReads, logRoutingPhase, logWriteFailure, ms1, skipLogger, writeTarget } from './sweep-log.js';

export interface SweepSettings extends Omit<PortSettings, 'smLid'> {
  routing: string[];
  /** Routing options beyond LMC and seed (configured root switches). */
  routingOptions?: Pick<RoutingOptions, 'roots' | 'cnGuids' | 'ioGuids' | 'routeOrder' | 'routeOrderNoScatter'>;
  /** SwitchInfo LifeTimeValue (default 0x12, as OpenSM's packet_life_time). */
  packetLife?: number;
  guid2lid?: ReadonlyMap<bigint, LidRange>;
  saveGuid2Lid?: (map: ReadonlyMap<bigint, LidRange>) => void;
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
  /** The light sweep interval: how many light sweeps share the CA ports (sm/light-sweep.ts caRounds). */
  sweepIntervalMs?: number;
}

export interface SweepStats {
  kind: 'heavy' | 'light';
  smps: number;
  ms: number;
  nodes: number;
  switches: number;
  endPorts: number;
  maxLid: number;
  lftBlocksWritten: number;
  portInfoSets: number;
  pkeyBlocksWritten: number;
  /** End ports (and enforcing switch ports) whose P_Key table cannot hold all their partitions. */
  pkeyTablesFull: number;
  vlTablesWritten: number;
  mftBlocksWritten: number;
  activated: number;
  engine?: string;
  /** Nodes left out of this sweep (they could not be read), links not probed, and writes that
   * failed: the next sweep tries them again. */
  skippedNodes: number;
  skippedLinks: number;
  failedWrites: number;
  /** Ports told INIT → ARMED that answered still in INIT (stuck): left for the next sweep. */
  stuckPorts: number;
  /** Nodes left out because they answer with the GUID of another node. */
  duplicateGuids: number;
  /** A local sweep's routes (sm/local-sweep.ts): incremental, or the chain in full. */
  reroute?: 'incremental' | 'full';
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
  /** Port GUIDs whose last PortInfo said IsExtendedSpeedsSupported: read with bit 31 from the
   * start at the next sweep (no second read of a known NDR/XDR port). One entry per port ever
   * seen with the bit. */
  private readonly extendedSpeeds = new Set<bigint>();
  knowsExtendedSpeeds = (portGuid: bigint): boolean => this.extendedSpeeds.has(portGuid);
  /** What a sweep's view says of IsExtendedSpeedsSupported, for the next sweeps' reads. */
  learnExtendedSpeeds(disc: DiscoveryResult): void {
    noteExtendedSpeeds(this.extendedSpeeds, disc);
  }

  constructor(
    private readonly smp: SmpClient,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly s: SweepSettings,
  ) {
    this.rotation = new CaRotation(caRounds(s.sweepIntervalMs));
  }

  /** Apply hooks for a sweep's view `disc`: PortInfo/SwitchInfo answers update it, table writes
   * update what is programmed. */
  hooks(disc: DiscoveryResult, onFail?: (w: SmpWrite, e: unknown) => void): ApplyHooks {
    return {
      ok: (w: SmpWrite, resp: Uint8Array) => {
        const e = w.effect;
        if (e.kind === 'portInfo') disc.nodes[e.node]!.portInfo[e.port] = keepPortInfo(resp);
        else if (e.kind === 'switchInfo') disc.nodes[e.node]!.switchInfo = SwitchInfo.decode(resp); // what the switch holds now (the SA reports it)
        else this.programmed.record(w);
      },
      failed: (w: SmpWrite, e: unknown) => {
        this.programmed.failed(w);
        onFail?.(w, e);
      },
    };
  }

  /** Ports whose INIT → ARMED Set (of `writes`, the acknowledged ones) was acknowledged but that
   * still report INIT: one line each (bounded), counted. */
  private reportStuck(disc: DiscoveryResult, writes: readonly SmpWrite[]): number {
    let n = 0;
    for (const w of writes) {
      const e = w.effect;
      if (e.kind !== 'portInfo' || portStateOfSet(w.data) !== PortState.Armed) continue;
      if (disc.nodes[e.node]!.portInfo[e.port]?.portState !== PortState.Init) continue;
      if (++n <= FAILURE_LOG_LINES) this.log.warn('port stuck in INIT: told to ARM, it stays in INIT; left for the next sweep', writeTarget(disc, w));
    }
    if (n > FAILURE_LOG_LINES) this.log.warn('more ports stuck in INIT', { more: n - FAILURE_LOG_LINES });
    return n;
  }

  /** Nodes (by DR path) whose management port shows an M_Key that is not this SM's, readable
   * because its protection is off (never set, or its lease expired, IBA 14.2.4.2): their Sets
   * present that key. */
  private foreignKeys(disc: DiscoveryResult): Map<string, bigint> {
    const out = new Map<string, bigint>();
    const mine = this.s.mkey ?? 0n;
    disc.fabric.nodes.forEach((n, ni) => {
      const d = disc.nodes[ni]!;
      const sw = n.type === NodeType.Switch;
      d.portPaths.forEach((path, pn) => {
        const pi = d.portInfo[sw ? 0 : pn];
        if (!path || !pi || pi.mkeyProtectBits !== 0 || pi.mkey === 0n || pi.mkey === mine) return;
        out.set(path.join(','), pi.mkey);
        this.log.info("port's M_Key read from its PortInfo (protection off): its Sets present it", { node: n.desc, guid: n.guid, port: pn, lid: pi.lid });
      });
    });
    return out;
  }

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
    return { lmc: s.lmc, lmcSwitch: lmcSwitches(disc, s), smNode: disc.smNode, smPort: disc.smPort, existing: reassign ? undefined : (this.own ?? this.adopted ?? s.guid2lid), keepCurrent: !reassign };
  }

  /** The LID step of a sweep that programs: LIDs assigned to the view's ports, kept as this SM's
   * own and persisted (guid2lid). */
  private assign(disc: DiscoveryResult, sweep: number): { lids: LidAssignment; smLid: number } {
    const { s, log } = this;
    const tl = this.clock.now();
    const lids = assignLids(disc.fabric, this.lidOptions(disc));
    this.reassignPending = false;
    this.own = lids.byGuid;
    const smLid = disc.fabric.nodes[disc.smNode]!.ports[disc.smPort]!.lid!;
    s.saveGuid2Lid?.(lids.byGuid);
    log.info('LIDs assigned', { endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid });
    if (log.enabled('debug')) log.debug('sweep phase: LIDs', { sweep, endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid, lmc: s.lmc, ms: ms1(this.clock.now() - tl) });
    return { lids, smLid };
  }

  /** Writes to nodes whose M_Key is readable and not this SM's carry that key (`foreignKeys`). */
  private keyed(disc: DiscoveryResult): { keyed: (writes: readonly SmpWrite[]) => readonly SmpWrite[]; keyedSource: (src: WriteSource) => WriteSource } {
    const keys = this.foreignKeys(disc);
    const withKey = (w: SmpWrite): SmpWrite => (keys.has(w.path.join(',')) ? { ...w, mkey: keys.get(w.path.join(',')) } : w);
    return {
      keyed: (writes) => (keys.size ? writes.map(withKey) : writes),
      keyedSource: (src) => (keys.size ? { next: () => { const w = src.next(); return w && withKey(w); } } : src),
    };
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
   * and writes only what differs, takes in whatever changed meanwhile). */
  async takeover(sweep: number, view: DiscoveryResult, decide: (disc: DiscoveryResult) => Promise<false | { reregister: boolean }>): Promise<{ snapshot?: Snapshot; stats: SweepStats } | undefined> {
    const { smp, log, s } = this;
    const t0 = this.clock.now();
    const s0 = smp.sent;
    const fabric = view.fabric;
    const switches: number[] = [];
    fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && switches.push(i));
    const fresh = s.reassignLids === true && this.reassignPending ? 'reassign_lids asks for new LIDs' : undefined;
    const check = fresh ? undefined : assignLids(cloneFabric(fabric), this.lidOptions(view));
    const top = check?.maxLid ?? 0;
    const why = fresh ?? (check!.changed ? `${check!.changed} LIDs would change` : undefined) ??
      (await Promise.all(
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
      )).find((r) => r !== undefined);
    if (why) {
      log.info('takeover: the fabric is not the view the old master had; full heavy sweep', { reason: why, smps: smp.sent - s0 });
      return undefined;
    }
    const go = await decide(view);
    const nodes = fabric.nodes.length;
    if (!go) return { stats: { ...emptyStats('heavy'), smps: smp.sent - s0, ms: this.clock.now() - t0, nodes, switches: switches.length } };
    const { lids, smLid } = this.assign(view, sweep);
    let failedWrites = 0;
    const hooks = this.hooks(view, () => failedWrites++);
    const tp = this.clock.now();
    const portInfoSets = (await applyAll(smp, this.keyed(view).keyed(planPortInfo(view, { ...s, smLid, reregister: go.reregister })), hooks)).ok;
    const portsMs = this.clock.now() - tp;
    const routed = this.route(view);
    for (const sk of routed.skipped) log.warn('routing engine not applicable', { engine: sk.engine, reason: sk.reason });
    const snapshot: Snapshot = { fabric, discovery: view, routing: routed.result, maxLid: lids.maxLid, smLid, sweep };
    const stats: SweepStats = { ...emptyStats('heavy'), smps: smp.sent - s0, ms: this.clock.now() - t0, nodes, switches: switches.length, endPorts: lids.byGuid.size, maxLid: lids.maxLid, portInfoSets, failedWrites, engine: routed.result.engine };
    log.info('takeover from the view: every port told its new master; a full heavy sweep verifies', { portInfoSets, failedWrites, smps: stats.smps, portsMs: Math.round(portsMs), ms: Math.round(stats.ms) });
    return { snapshot, stats };
  }

  /** Discover the fabric, then (when `decide` says this SM masters it) program it. Returns the
   * new snapshot (not yet multicast-programmed: `programMulticast` follows) and the stats, or only
   * the discovery's stats when this SM does not program. `decide` is where the controller looks
   * at the other SMs before any Set goes out. */
  async heavy(sweep: number, decide: (disc: DiscoveryResult) => Promise<false | { reregister: boolean }>): Promise<{ snapshot?: Snapshot; stats: SweepStats }> {
    const { smp, log, s } = this;
    const t0 = this.clock.now();
    const s0 = smp.sent;
    const progress = s.onProgress;

    // 1. Discovery. What cannot be read is left out of this sweep (logged, counted).
    const skips: DiscoverySkip[] = [];
    const disc = await discover(smp, {
      extendedSpeeds: this.extendedSpeeds,
      onProgress: (p) => progress?.('discover', p),
      onSkip: skipLogger(log, skips),
    });
    if (skips.length > FAILURE_LOG_LINES) log.warn('more nodes and links left out of this sweep', { more: skips.length - FAILURE_LOG_LINES });
    this.learnExtendedSpeeds(disc);
    const skippedNodes = skips.filter((k) => k.kind === 'node').length;
    const skippedLinks = skips.filter((k) => k.kind === 'link').length;
    const duplicates = skips.length - skippedNodes - skippedLinks;
    const fabric = disc.fabric;
    const switches = fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    log.info('discovery done', { nodes: fabric.nodes.length, switches, smps: disc.smps, depth: disc.maxDepth });
    const verbose = log.enabled('debug');
    if (verbose) logDiscoveryPhase(log, sweep, disc, switches, skippedNodes, skippedLinks, this.clock.now() - t0);
    const go = await decide(disc);
    const routedBy = previousMaster(disc);
    if (!go) {
      const stats: SweepStats = { ...emptyStats('heavy'), smps: smp.sent - s0, ms: this.clock.now() - t0, nodes: fabric.nodes.length, switches, skippedNodes, skippedLinks };
      return { stats };
    }

    // 2. LIDs.
    const { lids, smLid } = this.assign(disc, sweep);

    // What reset switches and ports no longer hold, before any Set changes what we know of them.
    observeResets(disc, this.programmed);
    let failedWrites = 0;
    const failed = new Set<SmpWrite>();
    const hooks = this.hooks(disc, (w, e) => {
      failed.add(w);
      if (++failedWrites <= FAILURE_LOG_LINES) logWriteFailure(log, disc, w, e, s.mkey);
    });
    const { keyed, keyedSource } = this.keyed(disc);
    const apply = async (writes: readonly SmpWrite[]): Promise<number> => (await applyAll(smp, keyed(writes), hooks)).ok;

    // 3. PortInfo (LID, LMC, SM LID, timeouts, MTU, VLs, M_Key, enforcement) and INIT → ARMED.
    if (go.reregister) log.info('ClientReregister set on every port: the SA holds no registrations from before');
    const tp = this.clock.now();
    const piWrites = planPortInfo(disc, { ...s, smLid, reregister: go.reregister });
    const portInfoSets = await apply(piWrites);
    progress?.('ports', { sets: portInfoSets });
    const stuckPorts = this.reportStuck(disc, piWrites.filter((w) => !failed.has(w)));

    // 4. P_Keys.
    const pkeyFull = { ports: 0 };
    const pkeyBlocks = await apply(planPkeys(disc, s.partitions ?? PartitionPlan.defaultPlan(), this.programmed, (m, f) => log.warn(m, f), pkeyFull, s.partEnforce));
    if (verbose) {
      const armed = piWrites.filter((w) => !failed.has(w) && portStateOfSet(w.data) === PortState.Armed).length;
      log.debug('sweep phase: ports', { sweep, portInfoPlanned: piWrites.length, portInfoSets, armed, stuckPorts, pkeyBlocks, reregister: go.reregister, ms: ms1(this.clock.now() - tp) });
    }

    // 5. Routing, then the SL2VL / VLArbitration tables the routes need (layered engines).
    const tr = this.clock.now();
    const routed = this.route(disc);
    for (const sk of routed.skipped) log.warn('routing engine not applicable', { engine: sk.engine, reason: sk.reason });
    const routeMs = this.clock.now() - tr;
    log.info('routing done', { engine: routed.result.engine, ms: Math.round(routeMs), vls: routed.result.vlsUsed ?? 1 });
    if (verbose) logRoutingPhase(log, sweep, fabric, routed, routeMs, () => this.clock.now());
    const tt = this.clock.now();
    const vlTables = await apply(planVlTables(disc, routed.result, this.programmed, s.qosVl));

    // 6. LFTs: LinearFDBTop and changed blocks only (blocks of switches programmed by someone
    // else are read first, so a takeover rewrites only what differs).
    const reads = planLftReads(disc, lids.maxLid, this.programmed);
    await pump(
      reads.map((r) => () => smp.getDr(r.path, SmpAttr.LinearForwardingTable, lftBlockMod(r.block)).then((b) => this.programmed.learnLft(r.guid, r.block, r.blocks, b), () => undefined)),
      APPLY_WINDOW,
    );
    const { routing, adoption } = this.foreign.choose(fabric, routed.result, lids.maxLid, this.programmed, routedBy !== undefined ? reads : []);
    logLftReads(log, reads.length, adoption, routedBy);
    // The SwitchInfo Sets, then each changed block planned as the window has room (never all at
    // once), LFT_INTERLEAVE switches at a time.
    const lft = lftPlan(disc, routing, lids.maxLid, this.programmed, s.packetLife, LFT_INTERLEAVE);
    const lftRes = await applyAll(smp, keyedSource(lft), hooks, LFT_APPLY_WINDOW);
    const blocks = lft.planned - lftRes.failed.filter((f) => f.write.effect.kind === 'lft' || f.write.effect.kind === 'rft').length;
    progress?.('lft', { blocks });
    if (verbose) log.debug('sweep phase: forwarding tables', { sweep, vlTables, switchInfo: lft.switchInfo.length, lftBlocksRead: reads.length, lftBlocksPlanned: lft.planned, lftBlocks: blocks, lftFailed: lft.planned - blocks, maxLid: lids.maxLid, ms: ms1(this.clock.now() - tt) });

    // 7. ARMED → ACTIVE.
    const ta = this.clock.now();
    const activation = planActivation(disc);
    const activated = await apply(activation);
    if (verbose) log.debug('sweep phase: activation', { sweep, planned: activation.length, activated, ms: ms1(this.clock.now() - ta) });
    if (failedWrites > FAILURE_LOG_LINES) log.warn('more SMP writes failed in this sweep', { more: failedWrites - FAILURE_LOG_LINES });

    const snapshot: Snapshot = { fabric, discovery: disc, routing, maxLid: lids.maxLid, smLid, sweep };
    const stats: SweepStats = {
      kind: 'heavy',
      smps: smp.sent - s0,
      ms: this.clock.now() - t0,
      nodes: fabric.nodes.length,
      switches,
      endPorts: lids.byGuid.size,
      maxLid: lids.maxLid,
      lftBlocksWritten: blocks,
      portInfoSets,
      pkeyBlocksWritten: pkeyBlocks,
      pkeyTablesFull: pkeyFull.ports,
      vlTablesWritten: vlTables,
      mftBlocksWritten: 0,
      activated,
      engine: routing.engine,
      skippedNodes,
      skippedLinks,
      failedWrites,
      stuckPorts,
      duplicateGuids: duplicates,
    };
    return { snapshot, stats };
  }

  /** MFT writes that failed at the last programMulticast. */
  mftFailed = 0;

  /** Compute every group's spanning tree over `snap` and write the MFT blocks that differ from
   * what is programmed. Returns blocks sent (written or failed). */
  async programMulticast(snap: Snapshot): Promise<number> {
    const t0 = this.clock.now();
    const groups = this.s.multicastGroups?.(snap) ?? [];
    const plan = computeMfts(snap.fabric, snap.routing.lfts, groups);
    for (const note of plan.notes) this.log.debug('multicast', { note });
    const r = await applyAll(this.smp, planMfts(snap.discovery, plan, this.programmed), this.hooks(snap.discovery));
    const first = r.failed[0];
    if (first) this.log.warn('MFT blocks not written; left for the next update', { blocks: r.failed.length, ...writeTarget(snap.discovery, first.write), error: (first.error as Error).message });
    this.mftFailed = r.failed.length;
    if (this.log.enabled('debug')) this.log.debug('sweep phase: multicast', { sweep: snap.sweep, groups: groups.length, mftBlocks: r.ok, mftFailed: r.failed.length, ms: ms1(this.clock.now() - t0) });
    return r.ok + r.failed.length;
  }

  /** The CA ports periodic light sweeps read in turn (sm/light-sweep.ts). */
  private readonly rotation: CaRotation;

  /** Every switch's SwitchInfo (PortStateChange) and the next share of the linked CA ports (every
   * one when `full`): "changed" when anything moved; the CA ports that advertise an SM; what
   * another SM wrote (sm/light-sweep.ts). */
  async light(snap: Snapshot, full = false): Promise<{ changed: boolean; stats: SweepStats; smPorts: SmPort[]; foreign: ForeignWrites }> {
    const t0 = this.clock.now();
    const s0 = this.smp.sent;
    const cas = this.rotation.next(snap, full);
    const r = await lightSweep(this.smp, snap, cas);
    const nodes = snap.fabric.nodes.length;
    const stats: SweepStats = { ...emptyStats('light'), smps: this.smp.sent - s0, ms: this.clock.now() - t0, nodes, switches: r.switches, maxLid: snap.maxLid };
    if (this.log.enabled('debug')) this.log.debug('sweep phase: light sweep', { nodes, smps: stats.smps, changed: r.changed, smPorts: r.smPorts.length, caPorts: r.caPorts, full, ms: ms1(stats.ms) });
    return { changed: r.changed, stats, smPorts: r.smPorts, foreign: r.foreign };
  }
}

function emptyStats(kind: 'heavy' | 'light'): SweepStats {
  return { kind, smps: 0, ms: 0, nodes: 0, switches: 0, endPorts: 0, maxLid: 0, lftBlocksWritten: 0, portInfoSets: 0, pkeyBlocksWritten: 0, pkeyTablesFull: 0, vlTablesWritten: 0, mftBlocksWritten: 0, activated: 0, skippedNodes: 0, skippedLinks: 0, failedWrites: 0, stuckPorts: 0, duplicateGuids: 0 };
}

/** The sweeps the controller asks for, carried out over an SmpClient: each is a sequence of
 * phases, and each programming phase is plan (pure, sm/plan-*.ts) → apply (sm/apply.ts).
 *
 * Heavy: discovery → LIDs → PortInfo (with INIT → ARMED) → P_Keys → routing → SL2VL/VLArb →
 * SwitchInfo + LFT blocks → ARMED → ACTIVE → snapshot → MFT blocks.
 * Light: every switch's SwitchInfo (PortStateChange) and every CA port's state; "changed" when
 * anything moved. Multicast: the MFT blocks of the current groups over the current snapshot. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortCap, PortInfo, SwitchInfo } from '../wire/sma.js';
import { lftBlockMod, portInfoMod } from '../wire/modifiers.js';
import type { Snapshot } from '../model/snapshot.js';
import type { QosVlSettings } from '../model/qos-policy.js';
import { PartitionPlan } from '../model/partitions.js';
import { routeWithFallback } from '../routing/registry.js';
import { computeMfts, type McastGroupPorts } from '../routing/mcast-tree.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { discover, type DiscoveryResult } from './discovery.js';
import { assignLids, type LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { APPLY_WINDOW, applyWrites, type ApplyHooks } from './apply.js';
import { Programmed, type SmpWrite } from './programmed.js';
import { planActivation, planPortInfo, type PortSettings } from './plan-ports.js';
import type { SmPort } from './sminfo.js';
import { observeResets, planLftReads, planLfts, planMfts, planPkeys, planVlTables } from './plan-tables.js';
import { pump } from '../util/pump.js';

export interface SweepSettings extends Omit<PortSettings, 'smLid'> {
  routing: string[];
  /** Routing options beyond LMC and seed (configured root switches). */
  routingOptions?: { roots?: readonly bigint[] };
  /** SwitchInfo LifeTimeValue (default 0x12, as OpenSM's packet_life_time). */
  packetLife?: number;
  guid2lid?: ReadonlyMap<bigint, LidRange>;
  saveGuid2Lid?: (map: ReadonlyMap<bigint, LidRange>) => void;
  partitions?: PartitionPlan;
  seed?: number;
  multicastGroups?: (snap: Snapshot) => McastGroupPorts[];
  /** OpenSM's qos_* VL settings: SL2VL and VLArbitration programmed from them (QoS on). */
  qosVl?: QosVlSettings;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
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
  vlTablesWritten: number;
  mftBlocksWritten: number;
  activated: number;
  engine?: string;
}

export class Sweeper {
  readonly programmed = new Programmed();
  /** GUID→LID entries learnt from another SM (failover); the configured guid2lid wins. */
  private adopted?: Map<bigint, LidRange>;

  adoptLids(lids: ReadonlyMap<bigint, LidRange>): void {
    this.adopted = new Map([...lids, ...(this.s.guid2lid ?? [])]);
  }

  constructor(
    private readonly smp: SmpClient,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly s: SweepSettings,
  ) {}

  /** Apply hooks for a sweep's view `disc`: PortInfo/SwitchInfo answers update it, table writes
   * update what is programmed. */
  private hooks(disc: DiscoveryResult): ApplyHooks {
    return {
      ok: (w: SmpWrite, resp: Uint8Array) => {
        const e = w.effect;
        if (e.kind === 'portInfo') disc.nodes[e.node]!.portInfo[e.port] = PortInfo.decode(resp);
        else if (e.kind === 'switchInfo') disc.nodes[e.node]!.switchInfo = SwitchInfo.decode(resp); // what the switch holds now (the SA reports it)
        else this.programmed.record(w);
      },
      failed: (w: SmpWrite) => this.programmed.failed(w),
    };
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

    // 1. Discovery.
    const disc = await discover(smp, { onProgress: (p) => progress?.('discover', p) });
    const fabric = disc.fabric;
    const switches = fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    log.info('discovery done', { nodes: fabric.nodes.length, switches, smps: disc.smps, depth: disc.maxDepth });
    const go = await decide(disc);
    if (!go) {
      const stats: SweepStats = { ...emptyStats('heavy'), smps: smp.sent - s0, ms: this.clock.now() - t0, nodes: fabric.nodes.length, switches };
      return { stats };
    }

    // 2. LIDs.
    const lids = assignLids(fabric, { lmc: s.lmc, smNode: disc.smNode, smPort: disc.smPort, existing: this.adopted ?? s.guid2lid });
    const smLid = fabric.nodes[disc.smNode]!.ports[disc.smPort]!.lid!;
    s.saveGuid2Lid?.(lids.byGuid);
    log.info('LIDs assigned', { endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid });

    // What reset switches and ports no longer hold, before any Set changes what we know of them.
    observeResets(disc, this.programmed);
    const hooks = this.hooks(disc);

    // 3. PortInfo (LID, LMC, SM LID, timeouts, MTU, VLs, M_Key, enforcement) and INIT → ARMED.
    if (go.reregister) log.info('ClientReregister set on every port: the SA holds no registrations from before');
    const portInfoSets = await applyWrites(smp, planPortInfo(disc, { ...s, smLid, reregister: go.reregister }), hooks);
    progress?.('ports', { sets: portInfoSets });

    // 4. P_Keys.
    const pkeyBlocks = await applyWrites(smp, planPkeys(disc, s.partitions ?? PartitionPlan.defaultPlan(), this.programmed, (m, f) => log.warn(m, f)), hooks);

    // 5. Routing, then the SL2VL / VLArbitration tables the routes need (layered engines).
    const tr = this.clock.now();
    const routed = routeWithFallback(fabric, s.routing, { ...s.routingOptions, lmc: s.lmc, seed: s.seed });
    for (const sk of routed.skipped) log.warn('routing engine not applicable', { engine: sk.engine, reason: sk.reason });
    log.info('routing done', { engine: routed.result.engine, ms: Math.round(this.clock.now() - tr), vls: routed.result.vlsUsed ?? 1 });
    const vlTables = await applyWrites(smp, planVlTables(disc, routed.result, this.programmed, s.qosVl), hooks);

    // 6. LFTs: LinearFDBTop and changed blocks only (blocks of switches programmed by someone
    // else are read first, so a takeover rewrites only what differs).
    const reads = planLftReads(disc, lids.maxLid, this.programmed);
    await pump(
      reads.map((r) => () => smp.getDr(r.path, SmpAttr.LinearForwardingTable, lftBlockMod(r.block)).then((b) => this.programmed.learnLft(r.guid, r.block, r.blocks, b), () => undefined)),
      APPLY_WINDOW,
    );
    if (reads.length) log.info('LFT blocks read back', { blocks: reads.length });
    const lft = planLfts(disc, routed.result, lids.maxLid, this.programmed, s.packetLife);
    await applyWrites(smp, [...lft.switchInfo, ...lft.lft], hooks);
    const blocks = lft.lft.length;
    progress?.('lft', { blocks });

    // 7. ARMED → ACTIVE.
    const activated = await applyWrites(smp, planActivation(disc), hooks);

    const snapshot: Snapshot = { fabric, discovery: disc, routing: routed.result, maxLid: lids.maxLid, smLid, sweep };
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
      vlTablesWritten: vlTables,
      mftBlocksWritten: 0,
      activated,
      engine: routed.result.engine,
    };
    return { snapshot, stats };
  }

  /** Compute every group's spanning tree over `snap` and write the MFT blocks that differ from
   * what is programmed. Returns blocks written. */
  async programMulticast(snap: Snapshot): Promise<number> {
    const groups = this.s.multicastGroups?.(snap) ?? [];
    const plan = computeMfts(snap.fabric, snap.routing.lfts, groups);
    for (const note of plan.notes) this.log.debug('multicast', { note });
    return applyWrites(this.smp, planMfts(snap.discovery, plan, this.programmed), this.hooks(snap.discovery));
  }

  /** Read every switch's SwitchInfo (PortStateChange) and every linked CA port's state; also
   * which CA ports advertise an SM (a new IsSM bit is a new SM to query). */
  async light(snap: Snapshot): Promise<{ changed: boolean; stats: SweepStats; smPorts: SmPort[] }> {
    const t0 = this.clock.now();
    const s0 = this.smp.sent;
    let changed = false;
    const { fabric, discovery } = snap;
    const sms: SmPort[] = [];
    await Promise.all(
      fabric.nodes.map(async (n, i) => {
        const d = discovery.nodes[i]!;
        try {
          if (n.type === NodeType.Switch) {
            const si = SwitchInfo.decode(await this.smp.getDr(d.path, SmpAttr.SwitchInfo, 0));
            if (si.portStateChange) changed = true;
          } else {
            for (let p = 1; p < n.ports.length; p++) {
              const path = d.portPaths[p];
              if (!path || !n.ports[p]?.peer) continue;
              const pi = PortInfo.decode(await this.smp.getDr(path, SmpAttr.PortInfo, portInfoMod(p)));
              if (pi.portState !== PortState.Active) changed = true;
              const own = i === discovery.smNode && p === discovery.smPort;
              if (!own && pi.capabilityMask & PortCap.IsSM) sms.push({ guid: n.ports[p]!.guid, lid: pi.lid, path });
            }
          }
        } catch {
          changed = true; // unreachable now: the fabric changed
        }
      }),
    );
    const stats: SweepStats = { ...emptyStats('light'), smps: this.smp.sent - s0, ms: this.clock.now() - t0, nodes: fabric.nodes.length, maxLid: snap.maxLid };
    return { changed, stats, smPorts: sms };
  }
}

function emptyStats(kind: 'heavy' | 'light'): SweepStats {
  return { kind, smps: 0, ms: 0, nodes: 0, switches: 0, endPorts: 0, maxLid: 0, lftBlocksWritten: 0, portInfoSets: 0, pkeyBlocksWritten: 0, vlTablesWritten: 0, mftBlocksWritten: 0, activated: 0 };
}

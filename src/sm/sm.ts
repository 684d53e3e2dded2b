/** The subnet manager: heavy sweep → LIDs → PortInfo → P_Keys → routing → LFTs → ACTIVE → SUBNET UP,
 * then light sweeps and trap-driven re-sweeps. Talks only to an SmpClient (over MadRpc) and a Clock. */
import { DEFAULT_GID_PREFIX, NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { LinearForwardingTable, PKeyTable, PortInfo, SwitchInfo, SMInfo, SmState, SLtoVLMappingTable, VLArbitrationTable, LFT_BLOCK_SIZE, PKEY_BLOCK_SIZE } from '../wire/sma.js';
import { lftBlockMod, pkeyBlockMod, portInfoMod, sl2vlMod, vlArbMod, VlArbBlock } from '../wire/modifiers.js';
import { MulticastForwardingTable } from '../wire/sma.js';
import { computeMfts, mftBlocks, MftCache, MCAST_LID_BASE, type McastGroupPorts } from '../sa/mft.js';
import type { Fabric, FabricNode, FabricPort } from '../model/fabric.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { discover, type DiscoveredNode, type DiscoveryResult } from './discovery.js';
import { assignLids, type LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { pump } from '../util/pump.js';

/** OpenSM's defaults: HoQ lifetime toward a switch / toward an end port, VL stall count, and the
 * switches' packet lifetime (all 4.096 µs × 2^n codes). */
const HOQ_LIFE_SWITCH = 0x12;
const HOQ_LIFE_LEAF = 0x10;
const VL_STALL_COUNT = 7;
const SWITCH_LIFE_TIME = 0x12;

/** SMPs a programming step keeps in flight at once (MadRpc's window limits what is on the wire). */
const IN_FLIGHT = 1024;
import { routeWithFallback } from '../routing/registry.js';
import type { RoutingResult } from '../routing/types.js';
import { PartitionPlan, type PortKind } from './partitions.js';

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
  /** Multicast groups to forward (the SA's MCMember state), given the current snapshot. */
  multicastGroups?: (snap: SmSnapshot) => McastGroupPorts[];
  /** Called after every heavy sweep with the new snapshot (before SUBNET UP is logged). */
  onSnapshot?: (snap: SmSnapshot) => void;
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

export interface SmSnapshot {
  fabric: Fabric;
  discovery: DiscoveryResult;
  routing: RoutingResult;
  maxLid: number;
  smLid: number;
  sweep: number;
}

/** LFT contents the SM believes each switch holds, by switch GUID (block → 64 ports). */
/** What the SM believes a switch's LFT holds: the table it wrote and which 64-entry blocks are known. */
interface LftState {
  table: Uint8Array;
  known: Uint8Array;
}
type LftCache = Map<bigint, LftState>;

export class SubnetManager {
  private snapshot?: SmSnapshot;
  private readonly lftCache: LftCache = new Map();
  /** P_Key tables written, by port key (node GUID/port), as a comparable string. */
  private readonly pkeyCache = new Map<string, string>();
  /** SL2VL/VLArb programming done for this VL layout, by port key. */
  private readonly vlCache = new Map<string, string>();
  private readonly mftCache = new MftCache();
  private mcastDirty = false;
  private sweepTimer?: TimerHandle;
  private sweeping?: Promise<SweepStats>;
  private resweepRequested = false;
  private stopped = false;
  private sweepCount = 0;
  private actCount = 0;
  private subnetUpLogged = false;
  private readonly subnetUpWaiters: Array<() => void> = [];
  readonly stats: SweepStats[] = [];

  constructor(private readonly o: SmOptions) {}

  get current(): SmSnapshot | undefined {
    return this.snapshot;
  }

  /** The SMInfo this SM answers with. */
  smInfo(smPortGuid: bigint): SMInfo {
    return { guid: smPortGuid, smKey: 0n, actCount: this.actCount, priority: this.o.priority ?? 0, smState: SmState.Master };
  }

  /** Run the first heavy sweep; resolves when the subnet is up (or rejects on a fatal error). */
  async start(): Promise<SweepStats> {
    const st = await this.sweep('heavy');
    this.scheduleLight();
    return st;
  }

  whenUp(): Promise<void> {
    if (this.subnetUpLogged) return Promise.resolve();
    return new Promise((r) => this.subnetUpWaiters.push(r));
  }

  stop(): void {
    this.stopped = true;
    if (this.sweepTimer) this.o.clock.clearTimeout(this.sweepTimer);
  }

  /** A trap or an operator asks for a heavy sweep; coalesced with one in progress. */
  requestHeavySweep(reason: string): void {
    if (this.stopped) return;
    this.o.log.info('heavy sweep requested', { reason });
    if (this.sweeping) {
      this.resweepRequested = true;
      return;
    }
    void this.sweep('heavy').catch((e: unknown) => this.o.log.error('sweep failed', { error: (e as Error).message }));
  }

  private scheduleLight(): void {
    if (this.stopped || !this.o.sweepIntervalMs) return;
    if (this.sweepTimer) this.o.clock.clearTimeout(this.sweepTimer);
    this.sweepTimer = this.o.clock.setTimeout(() => {
      void this.sweep('light')
        .catch((e: unknown) => this.o.log.error('light sweep failed', { error: (e as Error).message }))
        .finally(() => this.scheduleLight());
    }, this.o.sweepIntervalMs);
  }

  async sweep(kind: 'heavy' | 'light'): Promise<SweepStats> {
    while (this.sweeping) await this.sweeping.catch(() => undefined);
    const p = (kind === 'heavy' || !this.snapshot ? this.heavySweep() : this.lightSweep()).finally(() => {
      this.sweeping = undefined;
    });
    this.sweeping = p;
    const st = await p;
    this.stats.push(st);
    if (this.resweepRequested && !this.stopped) {
      this.resweepRequested = false;
      return this.sweep('heavy');
    }
    return st;
  }

  /** Light sweep: read every switch's SwitchInfo (PortStateChange) and every CA port's state; any change → heavy sweep. */
  private async lightSweep(): Promise<SweepStats> {
    const t0 = this.o.clock.now();
    const s0 = this.o.smp.sent;
    const snap = this.snapshot!;
    let changed = false;
    const { fabric, discovery } = snap;
    await Promise.all(
      fabric.nodes.map(async (n, i) => {
        const d = discovery.nodes[i]!;
        try {
          if (n.type === NodeType.Switch) {
            const si = SwitchInfo.decode(await this.o.smp.getDr(d.path, SmpAttr.SwitchInfo, 0));
            if (si.portStateChange) changed = true;
          } else {
            for (let p = 1; p < n.ports.length; p++) {
              const path = d.portPaths[p];
              if (!path || !n.ports[p]?.peer) continue;
              const pi = PortInfo.decode(await this.o.smp.getDr(path, SmpAttr.PortInfo, portInfoMod(p)));
              if (pi.portState !== PortState.Active) changed = true;
            }
          }
        } catch {
          changed = true; // unreachable now: the fabric changed
        }
      }),
    );
    const st: SweepStats = { kind: 'light', smps: this.o.smp.sent - s0, ms: this.o.clock.now() - t0, nodes: fabric.nodes.length, switches: 0, endPorts: 0, maxLid: snap.maxLid, lftBlocksWritten: 0, portInfoSets: 0, pkeyBlocksWritten: 0, vlTablesWritten: 0, mftBlocksWritten: 0, activated: 0 };
    if (changed) {
      this.o.log.info('light sweep found a change; heavy sweep follows');
      return this.heavySweep();
    }
    return st;
  }

  private async heavySweep(): Promise<SweepStats> {
    const { smp, log } = this.o;
    const t0 = this.o.clock.now();
    const s0 = smp.sent;
    this.sweepCount++;
    this.actCount++;
    const progress = this.o.onProgress;

    // 1. Discovery.
    const disc = await discover(smp, { onProgress: (p) => progress?.('discover', p) });
    const fabric = disc.fabric;
    this.lastFabric = fabric;
    const switches = fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    log.info('discovery done', { nodes: fabric.nodes.length, switches, smps: disc.smps, depth: disc.maxDepth });

    // 2. LIDs.
    const lids = assignLids(fabric, { lmc: this.o.lmc, smNode: disc.smNode, smPort: disc.smPort, existing: this.o.guid2lid });
    const smLid = fabric.nodes[disc.smNode]!.ports[disc.smPort]!.lid!;
    this.o.saveGuid2Lid?.(lids.byGuid);
    log.info('LIDs assigned', { endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid });

    // Switches found reset (LinearFDBTop 0) and ports found in their reset state (no LID yet),
    // taken before any Set changes what we know of them.
    const resetSwitches = new Set<number>();
    fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && disc.nodes[i]!.switchInfo?.linearFdbTop === 0 && resetSwitches.add(i));
    const cold = new Set<string>();
    fabric.nodes.forEach((n, ni) => disc.nodes[ni]!.portInfo.forEach((pi, pn) => pi && pi.lid === 0 && cold.add(`${ni}/${pn}`)));

    // 3. PortInfo (LID, LMC, SM LID, timeouts, MTU, VLs, M_Key) and INIT → ARMED, in one Set per port.
    const portInfoSets = await this.programPorts(disc, smLid);
    progress?.('ports', { sets: portInfoSets });

    // 4. P_Keys (and switch enforcement, set with the PortInfo above).
    const pkeyBlocks = await this.programPkeys(disc, cold);

    // 5. Routing, then the SL2VL / VLArbitration tables the routes need (layered engines).
    const tr = this.o.clock.now();
    const routed = routeWithFallback(fabric, this.o.routing, { lmc: this.o.lmc, seed: this.o.seed });
    for (const s of routed.skipped) log.warn('routing engine not applicable', { engine: s.engine, reason: s.reason });
    log.info('routing done', { engine: routed.result.engine, ms: Math.round(this.o.clock.now() - tr), vls: routed.result.vlsUsed ?? 1 });
    const vlTables = await this.programVlTables(disc, routed.result, cold);

    // 6. LFTs: LinearFDBTop and changed blocks only.
    const blocks = await this.programLfts(disc, routed.result, lids.maxLid);
    progress?.('lft', { blocks });

    // 7. ARMED → ACTIVE.
    const activated = await this.activatePorts(disc);

    this.snapshot = { fabric, discovery: disc, routing: routed.result, maxLid: lids.maxLid, smLid, sweep: this.sweepCount };

    // 8. Multicast forwarding for the SA's groups over the new routes.
    // A switch found with LinearFDBTop 0 was reset: what this SM wrote to its MFT is gone.
    for (const i of resetSwitches) this.mftCache.forget(fabric.nodes[i]!.guid);
    const mftBlocksWritten = await this.programMfts(this.snapshot);
    this.o.onSnapshot?.(this.snapshot);
    const st: SweepStats = {
      kind: 'heavy',
      smps: smp.sent - s0,
      ms: this.o.clock.now() - t0,
      nodes: fabric.nodes.length,
      switches,
      endPorts: lids.byGuid.size,
      maxLid: lids.maxLid,
      lftBlocksWritten: blocks,
      portInfoSets,
      pkeyBlocksWritten: pkeyBlocks,
      vlTablesWritten: vlTables,
      mftBlocksWritten,
      activated,
      engine: routed.result.engine,
    };
    if (!this.subnetUpLogged) {
      this.subnetUpLogged = true;
      log.info('SUBNET UP', { nodes: st.nodes, switches, endPorts: st.endPorts, smps: st.smps, ms: Math.round(st.ms), engine: st.engine });
      for (const w of this.subnetUpWaiters.splice(0)) w();
    } else {
      log.info('heavy sweep done; subnet up', { smps: st.smps, lftBlocks: blocks, ms: Math.round(st.ms) });
    }
    return st;
  }

  private async programPorts(disc: DiscoveryResult, smLid: number): Promise<number> {
    const { fabric, nodes } = disc;
    const jobs: Array<() => Promise<unknown>> = [];
    let sets = 0;
    fabric.nodes.forEach((n, ni) => {
      const d = nodes[ni]!;
      n.ports.forEach((p, pn) => {
        if (!p) return;
        const cur = d.portInfo[pn];
        const path = n.type === NodeType.Switch ? d.path : d.portPaths[pn];
        if (!cur || !path) return;
        const isEnd = n.type !== NodeType.Switch || pn === 0;
        if (n.type === NodeType.Switch && pn !== 0 && !p.peer) return;
        if (n.type !== NodeType.Switch && !p.peer) return;
        const want: PortInfo = { ...cur };
        // Read-only / no-change fields in a Set.
        want.portPhysicalState = 0;
        want.linkDownDefaultState = 0;
        want.linkWidthEnabled = 0;
        want.linkSpeedEnabled = 0;
        want.linkSpeedExtEnabled = 0;
        want.portState = cur.portState === PortState.Init && pn !== 0 ? PortState.Armed : PortState.NoChange;
        if (isEnd) {
          want.gidPrefix = this.o.gidPrefix ?? DEFAULT_GID_PREFIX;
          want.lid = p.lid ?? 0;
          want.lmc = n.type === NodeType.Switch ? 0 : this.o.lmc;
          want.masterSmLid = smLid;
          want.subnetTimeout = this.o.subnetTimeout ?? 18;
          if (this.o.mkey !== undefined) {
            want.mkey = this.o.mkey;
            want.mkeyProtectBits = this.o.mkeyProtectBits ?? 0;
            want.mkeyLeasePeriod = this.o.mkeyLeasePeriod ?? 0;
          }
          want.clientReregister = 0;
        }
        if (p.peer && pn !== 0) {
          const peerInfo = nodes[p.peer.node]!.portInfo[p.peer.port];
          if (peerInfo) {
            want.neighborMtu = Math.min(cur.mtuCap, peerInfo.mtuCap) || cur.neighborMtu;
            const vls = Math.min(cur.vlCap, peerInfo.vlCap, this.o.maxOpVls ?? 5);
            want.operationalVls = vls || cur.operationalVls;
          }
        }
        // Head-of-queue lifetime and VL stall count on switch ports, OpenSM's defaults: packets
        // toward an end port may wait less (leaf 0x10) than toward another switch (0x12).
        if (n.type === NodeType.Switch && pn !== 0 && p.peer) {
          const towardSwitch = disc.fabric.nodes[p.peer.node]!.type === NodeType.Switch;
          want.hoqLife = towardSwitch ? HOQ_LIFE_SWITCH : HOQ_LIFE_LEAF;
          want.vlStallCount = VL_STALL_COUNT;
        }
        // Never echo a NeighborMTU above what the port can do (the SMA would reject the whole Set).
        if (cur.mtuCap) want.neighborMtu = Math.min(want.neighborMtu || cur.mtuCap, cur.mtuCap);
        // Partition enforcement on switch ports facing an end port, where the switch supports it.
        const enforce = this.enforces(n, d, p) ? 1 : 0;
        if (n.type === NodeType.Switch && pn !== 0) {
          want.partitionEnforcementInbound = enforce;
          want.partitionEnforcementOutbound = enforce;
        }
        const needs =
          want.partitionEnforcementInbound !== cur.partitionEnforcementInbound ||
          want.partitionEnforcementOutbound !== cur.partitionEnforcementOutbound ||
          want.portState !== PortState.NoChange ||
          (isEnd && (cur.lid !== want.lid || cur.lmc !== want.lmc || cur.masterSmLid !== want.masterSmLid || cur.subnetTimeout !== want.subnetTimeout)) ||
          (isEnd && this.o.mkey !== undefined && (cur.mkey !== want.mkey || cur.mkeyProtectBits !== want.mkeyProtectBits || cur.mkeyLeasePeriod !== want.mkeyLeasePeriod)) ||
          want.neighborMtu !== cur.neighborMtu ||
          want.gidPrefix !== cur.gidPrefix ||
          want.hoqLife !== cur.hoqLife ||
          want.vlStallCount !== cur.vlStallCount ||
          want.operationalVls !== cur.operationalVls;
        if (!needs) return;
        sets++;
        jobs.push(() =>
          this.o.smp.setDr(path, SmpAttr.PortInfo, portInfoMod(pn), PortInfo.encode(want)).then((b) => {
            d.portInfo[pn] = PortInfo.decode(b);
          }),
        );
      });
    });
    await pump(jobs, IN_FLIGHT);
    return sets;
  }

  private get plan(): PartitionPlan {
    return this.o.partitions ?? PartitionPlan.defaultPlan();
  }

  /** Does this switch port enforce partitions: it faces a CA/router and the switch can enforce. */
  private enforces(n: FabricNode, d: DiscoveredNode, p: FabricPort): boolean {
    if (n.type !== NodeType.Switch || !p.peer || !d.switchInfo) return false;
    const si = d.switchInfo;
    if (!si.partitionEnforcementCap || !si.inboundEnforcementCap || !si.outboundEnforcementCap) return false;
    return this.lastFabric?.nodes[p.peer.node]?.type !== NodeType.Switch;
  }
  private lastFabric?: Fabric;

  /** P_Key tables: every end port's from the partition plan; a switch port that enforces gets its
   * neighbour's table. Blocks are written only when the table differs from what this SM wrote last
   * (a port whose LID was lost since — a reset — is rewritten). Returns blocks written. */
  private async programPkeys(disc: DiscoveryResult, cold: ReadonlySet<string>): Promise<number> {
    const plan = this.plan;
    const jobs: Array<() => Promise<unknown>> = [];
    let written = 0;
    // A port found in its reset state holds the spec's default table: full-member 0xFFFF at
    // index 0, zeros after. Writing that again is a wasted SMP.
    const RESET_TABLE = String(0xffff);
    const write = (key: string, path: number[], port: number, pkeys: number[], cap: number, reset: boolean): void => {
      const table = pkeys.slice(0, Math.max(cap, 1));
      const sig = table.join(',');
      if (!reset && this.pkeyCache.get(key) === sig) return;
      if (reset && sig === RESET_TABLE) {
        this.pkeyCache.set(key, sig);
        return;
      }
      const blocks = Math.max(1, Math.ceil(table.length / PKEY_BLOCK_SIZE));
      for (let b = 0; b < blocks; b++) {
        written++;
        const block = table.slice(b * PKEY_BLOCK_SIZE, (b + 1) * PKEY_BLOCK_SIZE);
        jobs.push(() =>
          this.o.smp.setDr(path, SmpAttr.PKeyTable, pkeyBlockMod(b, port), PKeyTable.encode({ pkeys: block })).catch((e: unknown) => {
            this.pkeyCache.delete(key); // not written: the next sweep tries again
            throw e;
          }),
        );
      }
      this.pkeyCache.set(key, sig);
    };
    disc.fabric.nodes.forEach((n, ni) => {
      if (n.type === NodeType.Switch) return;
      const d = disc.nodes[ni]!;
      const kind: PortKind = n.type === NodeType.Router ? 'router' : 'ca';
      n.ports.forEach((p, pn) => {
        if (!p?.peer || !d.portPaths[pn]) return;
        const self = ni === disc.smNode && pn === disc.smPort;
        const pkeys = plan.pkeysFor(p.guid, kind, self);
        if (pkeys.length === 0) this.o.log.warn('port is in no partition', { portGuid: p.guid });
        const reset = cold.has(`${ni}/${pn}`);
        write(`${n.guid}/${pn}`, d.portPaths[pn]!, 0, pkeys, d.nodeInfo.partitionCap, reset);
        const sw = disc.fabric.nodes[p.peer.node]!;
        const sd = disc.nodes[p.peer.node]!;
        if (this.enforces(sw, sd, sw.ports[p.peer.port]!)) {
          // A switch found with LinearFDBTop 0 was reset along with its P_Key tables.
          write(`${sw.guid}/${p.peer.port}`, sd.path, p.peer.port, pkeys, sd.switchInfo!.partitionEnforcementCap, sd.switchInfo!.linearFdbTop === 0);
        }
      });
    });
    // The SM's own switch port 0 (an SM embedded in a switch) is an end port too.
    const smN = disc.fabric.nodes[disc.smNode]!;
    if (smN.type === NodeType.Switch) {
      const d = disc.nodes[disc.smNode]!;
      write(`${smN.guid}/0`, d.path, 0, plan.pkeysFor(smN.ports[0]!.guid, 'switch', true), d.nodeInfo.partitionCap, cold.has(`${disc.smNode}/0`));
    }
    await pump(jobs, IN_FLIGHT);
    return written;
  }

  /** SL2VL on every switch port pair and end port, and VLArbitration (low priority: every used VL
   * an equal weight), when the routing layers routes on more than one VL. Returns SMPs written. */
  private async programVlTables(disc: DiscoveryResult, routing: RoutingResult, cold: ReadonlySet<string>): Promise<number> {
    const vls = routing.vlsUsed ?? 1;
    if (vls <= 1 || !routing.sl2vl) return 0;
    const sl2vl = SLtoVLMappingTable.encode({ vls: [...routing.sl2vl] });
    const arbEntries = Array.from({ length: 32 }, (_, i) => (i < vls ? { vl: i, weight: 64 } : { vl: 0, weight: 0 }));
    const vlarb = VLArbitrationTable.encode({ entries: arbEntries });
    const sig = `${routing.sl2vl.join(',')}|${vls}`;
    const jobs: Array<() => Promise<unknown>> = [];
    let written = 0;
    let key = '';
    const set = (path: number[], attr: number, mod: number, data: Uint8Array): void => {
      written++;
      const k = key;
      jobs.push(() =>
        this.o.smp.setDr(path, attr, mod, data).catch((e: unknown) => {
          this.vlCache.delete(k); // not written: the next sweep tries again
          throw e;
        }),
      );
    };
    disc.fabric.nodes.forEach((n, ni) => {
      const d = disc.nodes[ni]!;
      if (n.type === NodeType.Switch) {
        key = `${n.guid}/sw`;
        // LinearFDBTop 0: the switch was reset, and its SL2VL/VLArb tables with it.
        if (this.vlCache.get(key) === sig && d.switchInfo?.linearFdbTop !== 0) return;
        this.vlCache.set(key, sig);
        const linked = n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
        if (d.switchInfo?.optimizedSlToVlMappingProgramming) {
          set(d.path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, 0, { allInputPorts: true, allOutputPorts: true }), sl2vl);
        } else {
          for (const inP of [0, ...linked]) for (const outP of linked) if (inP !== outP) set(d.path, SmpAttr.SLtoVLMappingTable, sl2vlMod(inP, outP), sl2vl);
        }
        for (const outP of linked) set(d.path, SmpAttr.VLArbitrationTable, vlArbMod(outP, VlArbBlock.LowFirst), vlarb);
        return;
      }
      n.ports.forEach((p, pn) => {
        const path = d.portPaths[pn];
        if (!p?.peer || !path) return;
        key = `${n.guid}/${pn}`;
        if (this.vlCache.get(key) === sig && !cold.has(`${ni}/${pn}`)) return;
        this.vlCache.set(key, sig);
        set(path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, 0), sl2vl);
        set(path, SmpAttr.VLArbitrationTable, vlArbMod(0, VlArbBlock.LowFirst), vlarb);
      });
    });
    await pump(jobs, IN_FLIGHT);
    return written;
  }

  /** The MFT blocks this SM has written to a switch (for MulticastForwardingTableRecord). */
  mftEntries(switchGuid: bigint): Iterable<{ block: number; position: number; masks: readonly number[] }> {
    return this.mftCache.entries(switchGuid);
  }

  /** The multicast groups changed (join/leave): reprogram the MFTs now, or in the sweep under way. */
  async updateMulticast(): Promise<number> {
    if (!this.snapshot) return 0;
    if (this.sweeping) {
      this.mcastDirty = true;
      return 0;
    }
    return this.programMfts(this.snapshot);
  }

  /** Compute every group's spanning tree and write the MFT blocks that differ from what this SM
   * last wrote (emptied blocks are written as zeros). Returns blocks written. */
  private async programMfts(snap: SmSnapshot): Promise<number> {
    this.mcastDirty = false;
    const groups = this.o.multicastGroups?.(snap) ?? [];
    const { fabric, discovery } = snap;
    const plan = computeMfts(fabric, snap.routing.lfts, groups);
    for (const note of plan.notes) this.o.log.debug('multicast', { note });
    const jobs: Array<() => Promise<unknown>> = [];
    let written = 0;
    fabric.nodes.forEach((n, ni) => {
      if (n.type !== NodeType.Switch) return;
      const d = discovery.nodes[ni]!;
      const cap = d.switchInfo?.multicastFdbCap ?? 0;
      const masks = new Map([...(plan.bySwitch.get(ni) ?? new Map<number, bigint>())].filter(([mlid]) => mlid < MCAST_LID_BASE + cap));
      for (const w of this.mftCache.diff(n.guid, mftBlocks(masks))) {
        written++;
        jobs.push(() =>
          this.o.smp
            .setDr(d.path, SmpAttr.MulticastForwardingTable, w.attrMod, MulticastForwardingTable.encode({ portMasks: w.masks }))
            .then(() => this.mftCache.commit(w)),
        );
      }
    });
    await pump(jobs, IN_FLIGHT);
    if (this.mcastDirty) written += await this.programMfts(snap);
    return written;
  }

  private async programLfts(disc: DiscoveryResult, routing: RoutingResult, maxLid: number): Promise<number> {
    const { fabric, nodes } = disc;
    const jobs: Array<() => Promise<unknown>> = [];
    let written = 0;
    const nBlocks = Math.floor(maxLid / LFT_BLOCK_SIZE) + 1;
    fabric.nodes.forEach((n, ni) => {
      if (n.type !== NodeType.Switch) return;
      const d = nodes[ni]!;
      const lft = routing.lfts.get(ni);
      if (!lft) return;
      const si = d.switchInfo!;
      if (si.linearFdbTop !== maxLid || si.portStateChange || si.lifeTimeValue !== SWITCH_LIFE_TIME) {
        const want: SwitchInfo = { ...si, linearFdbTop: maxLid, portStateChange: si.portStateChange, lifeTimeValue: SWITCH_LIFE_TIME };
        jobs.push(() =>
          this.o.smp.setDr(d.path, SmpAttr.SwitchInfo, 0, SwitchInfo.encode(want)).then((b) => {
            d.switchInfo = SwitchInfo.decode(b); // what the switch holds now (the SA reports it)
          }),
        );
      }
      // LinearFDBTop 0: the switch was reset (or is new); nothing this SM wrote is still there.
      if (si.linearFdbTop === 0) this.lftCache.delete(n.guid);
      let st = this.lftCache.get(n.guid);
      if (!st || st.known.length < nBlocks) {
        const grown: LftState = { table: new Uint8Array(nBlocks * LFT_BLOCK_SIZE).fill(0xff), known: new Uint8Array(nBlocks) };
        if (st) {
          grown.table.set(st.table);
          grown.known.set(st.known);
        }
        this.lftCache.set(n.guid, (st = grown));
      }
      const state = st;
      for (let b = 0; b < nBlocks; b++) {
        const block = new Uint8Array(LFT_BLOCK_SIZE).fill(0xff);
        block.set(lft.subarray(b * LFT_BLOCK_SIZE, Math.min(lft.length, (b + 1) * LFT_BLOCK_SIZE)));
        if (state.known[b] && block.every((v, i) => v === state.table[b * LFT_BLOCK_SIZE + i])) continue;
        written++;
        jobs.push(() =>
          this.o.smp.setDr(d.path, SmpAttr.LinearForwardingTable, lftBlockMod(b), LinearForwardingTable.encode({ ports: Array.from(block) })).then(() => {
            state.table.set(block, b * LFT_BLOCK_SIZE);
            state.known[b] = 1;
          }),
        );
      }
    });
    await pump(jobs, IN_FLIGHT);
    return written;
  }

  private async activatePorts(disc: DiscoveryResult): Promise<number> {
    const { fabric, nodes } = disc;
    const jobs: Array<() => Promise<unknown>> = [];
    let n = 0;
    fabric.nodes.forEach((node, ni) => {
      const d = nodes[ni]!;
      node.ports.forEach((p, pn) => {
        if (!p?.peer || pn === 0) return;
        const cur = d.portInfo[pn];
        const path = node.type === NodeType.Switch ? d.path : d.portPaths[pn];
        if (!cur || !path || cur.portState !== PortState.Armed) return;
        const want: PortInfo = { ...cur, portState: PortState.Active, portPhysicalState: 0, linkDownDefaultState: 0, linkWidthEnabled: 0, linkSpeedEnabled: 0, linkSpeedExtEnabled: 0 };
        n++;
        jobs.push(() =>
          this.o.smp.setDr(path, SmpAttr.PortInfo, portInfoMod(pn), PortInfo.encode(want)).then((b) => {
            d.portInfo[pn] = PortInfo.decode(b);
          }),
        );
      });
    });
    await pump(jobs, IN_FLIGHT);
    return n;
  }
}

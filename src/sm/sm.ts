/** The subnet manager: heavy sweep → LIDs → PortInfo → P_Keys → routing → LFTs → ACTIVE → SUBNET UP,
 * then light sweeps and trap-driven re-sweeps. Talks only to an SmpClient (over MadRpc) and a Clock. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { LinearForwardingTable, PKeyTable, PortInfo, SwitchInfo, SMInfo, SmState, LFT_BLOCK_SIZE } from '../wire/sma.js';
import { lftBlockMod, pkeyBlockMod, portInfoMod } from '../wire/modifiers.js';
import type { Fabric } from '../model/fabric.js';
import type { Clock, TimerHandle } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { discover, type DiscoveryResult } from './discovery.js';
import { assignLids, type LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';
import { routeWithFallback } from '../routing/registry.js';
import type { RoutingResult } from '../routing/types.js';
import type { PartitionPlan } from './partitions.js';

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
  /** SM priority advertised in SMInfo. */
  priority?: number;
  /** Max operational VLs (PortInfo.OperationalVLs code: 1=VL0, 2=VL0-1, 3=VL0-3, 4=VL0-7, 5=VL0-14). */
  maxOpVls?: number;
  seed?: number;
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
type LftCache = Map<bigint, Map<number, Uint8Array>>;

export class SubnetManager {
  private snapshot?: SmSnapshot;
  private readonly lftCache: LftCache = new Map();
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
    const st: SweepStats = { kind: 'light', smps: this.o.smp.sent - s0, ms: this.o.clock.now() - t0, nodes: fabric.nodes.length, switches: 0, endPorts: 0, maxLid: snap.maxLid, lftBlocksWritten: 0, portInfoSets: 0, activated: 0 };
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
    const switches = fabric.nodes.filter((n) => n.type === NodeType.Switch).length;
    log.info('discovery done', { nodes: fabric.nodes.length, switches, smps: disc.smps, depth: disc.maxDepth });

    // 2. LIDs.
    const lids = assignLids(fabric, { lmc: this.o.lmc, smNode: disc.smNode, smPort: disc.smPort, existing: this.o.guid2lid });
    const smLid = fabric.nodes[disc.smNode]!.ports[disc.smPort]!.lid!;
    this.o.saveGuid2Lid?.(lids.byGuid);
    log.info('LIDs assigned', { endPorts: lids.byGuid.size, maxLid: lids.maxLid, changed: lids.changed, smLid });

    // 3. PortInfo (LID, LMC, SM LID, timeouts, MTU, VLs, M_Key) and INIT → ARMED, in one Set per port.
    const portInfoSets = await this.programPorts(disc, smLid);
    progress?.('ports', { sets: portInfoSets });

    // 4. P_Keys.
    if (this.o.partitions) await this.programPkeys(disc);

    // 5. Routing.
    const tr = this.o.clock.now();
    const routed = routeWithFallback(fabric, this.o.routing, { lmc: this.o.lmc, seed: this.o.seed });
    for (const s of routed.skipped) log.warn('routing engine not applicable', { engine: s.engine, reason: s.reason });
    log.info('routing done', { engine: routed.result.engine, ms: Math.round(this.o.clock.now() - tr) });

    // 6. LFTs: LinearFDBTop and changed blocks only.
    const blocks = await this.programLfts(disc, routed.result, lids.maxLid);
    progress?.('lft', { blocks });

    // 7. ARMED → ACTIVE.
    const activated = await this.activatePorts(disc);

    this.snapshot = { fabric, discovery: disc, routing: routed.result, maxLid: lids.maxLid, smLid, sweep: this.sweepCount };
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
    const jobs: Promise<unknown>[] = [];
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
        const needs =
          want.portState !== PortState.NoChange ||
          (isEnd && (cur.lid !== want.lid || cur.lmc !== want.lmc || cur.masterSmLid !== want.masterSmLid || cur.subnetTimeout !== want.subnetTimeout)) ||
          (isEnd && this.o.mkey !== undefined && (cur.mkey !== want.mkey || cur.mkeyProtectBits !== want.mkeyProtectBits || cur.mkeyLeasePeriod !== want.mkeyLeasePeriod)) ||
          want.neighborMtu !== cur.neighborMtu ||
          want.operationalVls !== cur.operationalVls;
        if (!needs) return;
        sets++;
        jobs.push(
          this.o.smp.setDr(path, SmpAttr.PortInfo, portInfoMod(pn), PortInfo.encode(want)).then((b) => {
            d.portInfo[pn] = PortInfo.decode(b);
          }),
        );
      });
    });
    await Promise.all(jobs);
    return sets;
  }

  private async programPkeys(disc: DiscoveryResult): Promise<void> {
    const plan = this.o.partitions!;
    const jobs: Promise<unknown>[] = [];
    disc.fabric.nodes.forEach((n, ni) => {
      if (n.type === NodeType.Switch) return;
      const d = disc.nodes[ni]!;
      n.ports.forEach((p, pn) => {
        if (!p?.peer || !d.portPaths[pn]) return;
        const pkeys = plan.pkeysFor(p.guid);
        const blocks = Math.max(1, Math.ceil(pkeys.length / 32));
        for (let b = 0; b < blocks; b++) {
          const block = pkeys.slice(b * 32, b * 32 + 32);
          jobs.push(this.o.smp.setDr(d.portPaths[pn]!, SmpAttr.PKeyTable, pkeyBlockMod(b), PKeyTable.encode({ pkeys: block })));
        }
      });
    });
    await Promise.all(jobs);
  }

  private async programLfts(disc: DiscoveryResult, routing: RoutingResult, maxLid: number): Promise<number> {
    const { fabric, nodes } = disc;
    const jobs: Promise<unknown>[] = [];
    let written = 0;
    const nBlocks = Math.floor(maxLid / LFT_BLOCK_SIZE) + 1;
    fabric.nodes.forEach((n, ni) => {
      if (n.type !== NodeType.Switch) return;
      const d = nodes[ni]!;
      const lft = routing.lfts.get(ni);
      if (!lft) return;
      const si = d.switchInfo!;
      if (si.linearFdbTop !== maxLid || si.portStateChange) {
        const want: SwitchInfo = { ...si, linearFdbTop: maxLid, portStateChange: si.portStateChange, lifeTimeValue: si.lifeTimeValue };
        jobs.push(this.o.smp.setDr(d.path, SmpAttr.SwitchInfo, 0, SwitchInfo.encode(want)));
      }
      let cache = this.lftCache.get(n.guid);
      if (!cache) this.lftCache.set(n.guid, (cache = new Map()));
      for (let b = 0; b < nBlocks; b++) {
        const block = new Uint8Array(LFT_BLOCK_SIZE).fill(0xff);
        block.set(lft.subarray(b * LFT_BLOCK_SIZE, Math.min(lft.length, (b + 1) * LFT_BLOCK_SIZE)));
        const old = cache.get(b);
        if (old && old.every((v, i) => v === block[i])) continue;
        written++;
        jobs.push(
          this.o.smp.setDr(d.path, SmpAttr.LinearForwardingTable, lftBlockMod(b), LinearForwardingTable.encode({ ports: Array.from(block) })).then(() => cache!.set(b, block)),
        );
      }
    });
    await Promise.all(jobs);
    return written;
  }

  private async activatePorts(disc: DiscoveryResult): Promise<number> {
    const { fabric, nodes } = disc;
    const jobs: Promise<unknown>[] = [];
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
        jobs.push(
          this.o.smp.setDr(path, SmpAttr.PortInfo, portInfoMod(pn), PortInfo.encode(want)).then((b) => {
            d.portInfo[pn] = PortInfo.decode(b);
          }),
        );
      });
    });
    await Promise.all(jobs);
    return n;
  }
}

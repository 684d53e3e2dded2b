/** The local sweep: when a trap or a light sweep shows a port change, re-explore only around it
 * and re-route only what it broke, instead of a full heavy sweep.
 *
 * 1. Every switch of the last snapshot is asked for its SwitchInfo, level by level from the SM
 *    (so a switch's DR path is recomputed over the links found so far before it is used); only the
 *    switches with PortStateChange set have their ports read again. A port that lost its link is
 *    unlinked on both sides; a port that came up is probed (NodeInfo through it) and linked when
 *    the far side is a node of the snapshot. Nodes no longer reachable (a host whose cable went)
 *    are dropped. DR paths are recomputed canonically (sm/discovery.ts `canonicalize`).
 * 2. The new fabric is the previous one plus these changes; LIDs stay as they were.
 * 3. Routing: `rerouteIncremental` (routing/incremental.ts) from the previous tables, back to the
 *    remembered intact routing (the last full heavy sweep's) where it works again; when its
 *    guarantees do not hold, the configured engine chain re-routes the new fabric in full.
 * 4. The heavy sweep's apply phases (sm/program-phases.ts) over the changed view: only what
 *    differs is written (PortInfo of the ports read in this sweep that need it, such as those that
 *    came up; the LFT blocks whose entries changed; SwitchInfo to clear PortStateChange), then
 *    ARMED → ACTIVE, through the one apply step: a failed write does not stop the others.
 * As phases (sm/pipeline.ts): discover (1, 2) → decide (a switch flagged a change, else a light
 * sweep) → plan (3) → apply (4) → verify (every write acknowledged).
 * The change is not local, and `sweep` returns undefined for a full heavy sweep, when no switch
 * flags a change but a light sweep finds a port to set up or another SM, when a switch does
 * not answer, a switch was reset (LinearFDBTop differs), a port leads to a node the snapshot does
 * not have, a link changed peers, more than `maxChanges` links changed or any write failed. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { NodeDescription, NodeInfo, PortInfo, SwitchInfo } from '../wire/sma.js';
import { getPortInfo } from './port-info-get.js';
import { cloneFabric, type Fabric, type FabricNode, type NodeKind } from '../model/fabric.js';
import { speedName, widthName } from '../model/rates.js';
import { indexEndPorts, type DiscoveredNode, type DiscoveryResult, type Snapshot } from '../model/snapshot.js';
import { intactRouting, rehearsalSteps, rerouteIncremental, type IntactRouting } from '../routing/incremental.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { canonicalize } from './discovery.js';
import { MAX_UNICAST_LID } from './lids.js';
import type { SmpClient } from './smp-client.js';
import type { SmpWrite } from './programmed.js';
import { emptyStats, type Sweeper, type SweepSettings, type SweepStats } from './sweep.js';
import { newRun, programmedStats, runPhases, type SweepRun } from './pipeline.js';
import { writeTarget } from './sweep-log.js';
import { formatGuid } from '../util/guid.js';
import { TrapCheck } from './trap-check.js';

/** Link changes a local sweep handles before it calls for a full heavy sweep. */
export const LOCAL_MAX_CHANGES = 16;

/** Why a change is not local (the caller runs a full heavy sweep). */
class NotLocal extends Error {
  override readonly name = 'NotLocal';
}

const decodePortInfo = (b: Uint8Array): PortInfo => PortInfo.decode(b);

/** What a re-exploration found: the new view, the links changed (`ups` of them came up), the
 * switches that flagged a change, and the ports read (`<node guid>/<port>`). */
interface Explored {
  disc: DiscoveryResult;
  changes: number;
  ups: number;
  flagged: number;
  fresh: Set<string>;
  /** When the ports of each flagged switch were read (node GUID → time): what its traps are settled by (sm/trap-check.ts). */
  reads: Map<bigint, number>;
}

export class LocalSweeper {
  private intact?: IntactRouting;

  // The heavy sweeper's SMP client, clock, log and settings: one place for them.
  private readonly smp: SmpClient;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly s: SweepSettings;
  /** Traps 128 whose change a local sweep already read (sm/trap-check.ts). */
  readonly traps: TrapCheck;

  /** `oneTry`: the client below the retry layer, for the trap checks' one try (sm/trap-check.ts). */
  constructor(
    private readonly sweeper: Sweeper,
    private readonly maxChanges = LOCAL_MAX_CHANGES,
    oneTry: SmpClient = sweeper.smp,
  ) {
    ({ smp: this.smp, clock: this.clock, log: this.log, s: this.s } = sweeper);
    this.traps = new TrapCheck(oneTry, this.log);
  }

  /** A heavy sweep's snapshot whose intact routing is still to be prepared. */
  private pending?: Snapshot;

  /** A full heavy sweep published `snap`: its routing is the intact one to return to, and local
   * sweeps may build on it. Prepared once the SM is idle (its load, and a rehearsal of a re-route
   * so that the first real one runs at full speed: routing/incremental.ts `rehearse`), or by the
   * next local sweep if that comes first. */
  remember(snap: Snapshot): void {
    this.intact = undefined;
    this.pending = snap;
    // In steps (the intact routing's load, the rehearsal's link down, then back), the event loop
    // turning between them: a signal (SIGTERM) waits for one step, not for the whole.
    this.clock.defer(() => {
      if (this.pending !== snap) return;
      this.prepare(snap);
      const intact = this.intact!;
      const steps = rehearsalSteps(intact);
      const outcomes: string[] = [];
      let ms = 0;
      const next = (i: number): void => {
        if (this.intact !== intact) return; // forgotten (a stop, a state change) or replaced
        if (i === steps.length) {
          this.log.debug('incremental re-route rehearsed', { outcomes: outcomes.join('; '), ms: Math.round(ms) });
          return;
        }
        const t = this.clock.now();
        const o = steps[i]!();
        ms += this.clock.now() - t;
        outcomes.push(o.ok ? 'ok' : o.reason);
        this.clock.defer(() => next(o.ok ? i + 1 : steps.length));
      };
      this.clock.defer(() => next(0));
    });
  }

  private prepare(snap: Snapshot): void {
    this.pending = undefined;
    this.intact = intactRouting(snap.fabric, snap.routing);
  }

  /** The SMInfo state changed (this SM stood by, took over...): what it programmed may not be what
   * the fabric holds, so the next sweep is a full heavy one. */
  forget(): void {
    this.intact = undefined;
    this.pending = undefined;
    this.traps.forget();
  }

  /** Re-explore around the changes since `prev` and program them; undefined when the change is
   * not local (the caller runs a full heavy sweep). With no switch flagging a change, a light
   * sweep decides: nothing changed (the snapshot stays) or a full heavy sweep. */
  async sweep(prev: Snapshot, sweep: number): Promise<{ snapshot: Snapshot; stats: SweepStats } | undefined> {
    if (this.pending) this.prepare(this.pending);
    if (!this.intact) return undefined;
    const r = newRun(sweep, this.clock.now(), this.smp.sent, { ...emptyStats('heavy'), maxLid: prev.maxLid });
    const p = this.sweeper.phases;
    let ex: Explored | undefined;
    let result: { snapshot: Snapshot; stats: SweepStats } | undefined;
    // Links that only went down: the new routes first (nothing else to set up, and every moment
    // counts while traffic is sent into the dead ports). A link that came up gets its PortInfo
    // first and is activated after the tables are in.
    const downOnly = (): boolean => ex!.ups === 0;
    await runPhases<SweepRun>([
      {
        kind: 'discover',
        name: 're-exploration around the changes',
        run: async () => {
          try {
            ex = await this.explore(prev);
          } catch (e) {
            this.log.info('local sweep: change not local, full heavy sweep follows', { reason: (e as Error).message });
            return false;
          }
        },
      },
      {
        kind: 'decide',
        name: 'local, unchanged or full',
        run: async (run) => {
          if (ex!.flagged) return this.changedView(run, ex!, prev);
          result = await this.unflagged(run, prev);
          return false;
        },
      },
      this.sweeper.health.phase(true),
      { kind: 'plan', name: 'routes (incremental)', run: (run) => this.reroute(run, prev) },
      { ...p.lfts, run: (run) => (downOnly() ? p.lfts.run(run) : undefined) },
      this.sweeper.health.takeDownPhase,
      p.portInfo,
      p.pkeys,
      p.vlTables,
      { ...p.lfts, run: (run) => (downOnly() ? undefined : p.lfts.run(run)) },
      p.activation,
      { kind: 'verify', name: 'every write acknowledged', run: (run) => void (result = this.verify(run, ex!)) },
    ], r);
    return result;
  }

  /** With no switch flagging a change, a light sweep over every CA port decides: nothing changed
   * (the snapshot stays) or a full heavy sweep (undefined). */
  private async unflagged(r: SweepRun, prev: Snapshot): Promise<{ snapshot: Snapshot; stats: SweepStats } | undefined> {
    // Every CA port: the change a trap or a light sweep signalled may be on any of them.
    const light = await this.sweeper.light(prev, true);
    // A port state or another SM (trap 144, a new IsSM port): the heavy sweep's discovery and
    // SM election handle those.
    if (light.changed || light.smPorts.length) {
      this.log.info('local sweep: no switch flags a change; ports or SMs need a full heavy sweep', { smPorts: light.smPorts.length });
      return undefined;
    }
    return { snapshot: prev, stats: { ...light.stats, kind: 'heavy', smps: this.smp.sent - r.s0, ms: this.clock.now() - r.t0, switches: countSwitches(prev.fabric) } };
  }

  /** The changed part as the sweep's view: the tables planned over the whole new view, PortInfo
   * and activation only for the ports read in this sweep (the rest of the view holds what the
   * SMAs answered to earlier Sets, which some SMAs, ibsim, do not word as their Gets do). */
  private changedView(r: SweepRun, ex: Explored, prev: Snapshot): void {
    const { disc } = ex;
    this.sweeper.learnExtendedSpeeds(disc);
    const fabric = disc.fabric;
    // The top LID: the previous one, or above it when a node taken in got a LID past it.
    let maxLid = prev.maxLid;
    for (const n of fabric.nodes) for (const pt of n.ports) if (pt?.lid && pt.lid > maxLid) maxLid = pt.lid;
    // (The planners see the other nodes without ports, so they skip them.)
    const freshNodes = new Set([...ex.fresh].map((k) => k.slice(0, k.indexOf('/'))));
    const ports: DiscoveryResult = { ...disc, fabric: { nodes: fabric.nodes.map((n) => (freshNodes.has(String(n.guid)) ? n : { ...n, ports: [] })) } };
    const fresh = (w: SmpWrite): boolean => w.effect.kind !== 'portInfo' || ex.fresh.has(`${fabric.nodes[w.effect.node]!.guid}/${w.effect.port}`);
    r.view = { scope: 'changed', disc, ports, fresh, interleave: 1 };
    r.maxLid = maxLid;
    r.smLid = prev.smLid;
    const debug = this.log.enabled('debug');
    r.writes = this.sweeper.writesFor(disc, { onOk: (w) => void (debug && w.effect.kind === 'lft' && this.log.debug('LFT block written', { guid: w.effect.guid, block: w.effect.block })) });
  }

  /** Routing: incremental from the previous tables, else the configured chain in full. */
  private reroute(r: SweepRun, prev: Snapshot): void {
    const tr = this.clock.now();
    r.exploredAt = tr;
    const disc = r.view!.disc;
    const inc = rerouteIncremental(prev.fabric, prev.routing, disc.fabric, { intact: this.intact });
    if (inc.ok) {
      r.routing = inc.result;
      r.reroute = 'incremental';
      this.log.info('incremental re-route', { ...inc.stats, busiestLink: inc.stats.busiestLink, ms: Math.round(this.clock.now() - tr) });
    } else {
      this.log.warn('incremental re-route not possible; full re-route', { reason: inc.reason });
      const routed = this.sweeper.route(disc);
      for (const sk of routed.skipped) this.log.warn('routing engine not applicable', { engine: sk.engine, reason: sk.reason });
      r.routing = routed.result;
      r.reroute = 'full';
    }
    // vport hook (sm/vport-mgr.ts): the vport LIDs follow their ports' new routes
    if (this.sweeper.vports.ports.size) r.maxLid = this.sweeper.vports.extendRoutes(r.routing, disc.fabric, r.maxLid);
    r.routedAt = this.clock.now();
    this.log.info('routing done', { engine: r.routing.engine, ms: Math.round(r.routedAt - tr), vls: r.routing.vlsUsed ?? 1, incremental: r.reroute === 'incremental' });
  }

  /** Every write acknowledged: the new snapshot. Any write failed: undefined (a full heavy sweep
   * follows, the failures logged and counted by the write step). */
  private verify(r: SweepRun, ex: Explored): { snapshot: Snapshot; stats: SweepStats } | undefined {
    const w = r.writes!;
    w.finish();
    const first = [...w.failed][0];
    if (first) {
      this.log.warn('local sweep: a write failed; full heavy sweep follows', { failed: w.failedCount, ...writeTarget(r.view!.disc, first) });
      return undefined;
    }
    const { disc } = r.view!;
    const fabric = disc.fabric;
    const snapshot: Snapshot = { fabric, discovery: disc, routing: r.routing!, maxLid: r.maxLid, smLid: r.smLid, sweep: r.sweep };
    // vport hook (sm/vport-mgr.ts): the vports behind the ports read again, read in full next pass
    if (this.sweeper.vports.ports.size) this.sweeper.vports.recheckPorts(fabric, ex.fresh);
    this.traps.settled(snapshot, ex.reads);
    const base = programmedStats(r, this.smp.sent - r.s0, this.clock.now() - r.t0);
    const stats: SweepStats = { ...base, nodes: fabric.nodes.length, switches: countSwitches(fabric), endPorts: indexEndPorts(fabric).endPorts.filter((e) => e.linked && e.lid).length, reroute: r.reroute };
    // Phases, from the sweep's start: exploration done, routes computed, LFT blocks acknowledged.
    const at = (t: number): number => Math.round(t - r.t0);
    this.log.info('local sweep done', { links: ex.changes, switchesFlagged: ex.flagged, reroute: r.reroute, lftBlocks: r.done.lftBlocks, smps: stats.smps, ms: Math.round(stats.ms), exploredMs: at(r.exploredAt), routedMs: at(r.routedAt), tablesMs: at(r.tablesAt) });
    // A full re-route is the new baseline (the routing to return to, and its busiest link the
    // bound of the next incremental re-route): else every later change would be measured against
    // the fabric before this one and refused (IBSM-4011) as long as this change lasts.
    if (r.reroute === 'full') this.remember(snapshot);
    return { snapshot, stats };
  }

  private newEndNode(ni: NodeInfo, path: number[], depth: number, fabric: Fabric, nodes: DiscoveredNode[]): Promise<number> {
    return newEndNodeOf(this.smp, ni, path, depth, fabric, nodes, this.sweeper.knowsExtendedSpeeds(ni.portGuid));
  }

  /** LIDs for the end ports taken in (LMC 0): the one the intact fabric gave the port if it is
   * free, else the lowest LID that no port has now or had in the intact fabric (above the top
   * when none is free below: the tables grow by as many LIDs as nodes are taken in). */
  private giveLids(fabric: Fabric, nodes: FabricNode[], prev: Snapshot): void {
    const used = new Set<number>();
    for (const n of fabric.nodes) for (const p of n.ports) if (p?.lid) used.add(p.lid);
    const intactLid = new Map<bigint, number>();
    for (const n of this.intact?.fabric.nodes ?? []) for (const p of n.ports) if (p?.lid && n.type !== NodeType.Switch) intactLid.set(p.guid, p.lid);
    const reserved = new Set(intactLid.values());
    let next = 1;
    for (const n of nodes) {
      for (const p of n.ports) {
        if (!p) continue;
        let lid = intactLid.get(p.guid);
        if (lid === undefined || used.has(lid)) {
          // Past the top only by as many LIDs as nodes are taken in (LinearFDBTop grows with it).
          while (used.has(next) || reserved.has(next)) next++;
          if (next > MAX_UNICAST_LID) throw new NotLocal(`no free unicast LID for port ${formatGuid(p.guid)} of ${formatGuid(n.guid)} "${n.desc}"`);
          lid = next;
        }
        p.lid = lid;
        p.lmc = 0;
        used.add(lid);
      }
    }
  }

  /** Level by level from the SM: SwitchInfo of every switch, the ports of the flagged ones, the
   * link changes applied to a copy of the previous view. Throws NotLocal. */
  private async explore(prev: Snapshot): Promise<Explored> {
    const pd = prev.discovery;
    const fabric = cloneFabric(prev.fabric);
    let nodes: DiscoveredNode[] = pd.nodes.map((d) => ({ ...d, portInfo: [...d.portInfo], portPaths: [...d.portPaths] }));
    const byGuid = new Map(fabric.nodes.map((n, i) => [n.guid, i]));
    const name = (i: number): string => `${formatGuid(fabric.nodes[i]!.guid)} "${fabric.nodes[i]!.desc}"`;
    const unchecked = new Set<number>();
    fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && unchecked.add(i));
    let changes = 0;
    let ups = 0;
    let flagged = 0;
    /** Nodes taken in that the last sweep did not have (CAs and routers). */
    const added: number[] = [];
    const adding = new Map<bigint, Promise<number>>();
    /** Ports read in this sweep, as `<node guid>/<port>`. */
    const fresh = new Set<string>();
    const reads = new Map<bigint, number>();
    let reach = reachable(fabric, nodes, pd.smNode);
    let lastCanon: ReturnType<typeof canonicalize> | undefined;
    while (unchecked.size) {
      let depth = Infinity;
      for (const i of unchecked) depth = Math.min(depth, nodes[i]!.depth);
      const batch = [...unchecked].filter((i) => nodes[i]!.depth === depth);
      let changed = false;
      await Promise.all(
        batch.map(async (i) => {
          unchecked.delete(i);
          const d = nodes[i]!;
          let si: SwitchInfo;
          try {
            si = SwitchInfo.decode(await this.smp.getDr(d.path, SmpAttr.SwitchInfo, 0));
          } catch (e) {
            throw new NotLocal(`switch ${name(i)} did not answer SwitchInfo (${(e as Error).message})`);
          }
          if (si.linearFdbTop !== prev.maxLid) throw new NotLocal(`switch ${name(i)} holds LinearFDBTop ${si.linearFdbTop}, not ${prev.maxLid} (reset?)`);
          d.switchInfo = si;
          if (!si.portStateChange) return;
          flagged++;
          const n = fabric.nodes[i]!;
          reads.set(n.guid, this.clock.now());
          const known = (portGuid: bigint): boolean | undefined => this.sweeper.knowsExtendedSpeeds(portGuid);
          const info0 = await getPortInfo(this.smp, d.path, 0, decodePortInfo, undefined, known(n.ports[0]!.guid));
          const infos = [info0, ...(await Promise.all(Array.from({ length: n.numPorts }, (_, i) => getPortInfo(this.smp, d.path, i + 1, decodePortInfo, info0))))];
          for (let p = 1; p <= n.numPorts; p++) {
            const pi = infos[p]!;
            const fp = n.ports[p]!;
            const up = pi.portState >= PortState.Init;
            const was = d.portInfo[p];
            d.portInfo[p] = pi;
            fresh.add(`${n.guid}/${p}`);
            if (up) {
              fp.width = widthName(pi.linkWidthActive);
              fp.speed = speedName(pi.linkSpeedActive, pi.linkSpeedExtActive, pi.linkSpeedExtActive2);
            }
            if (fp.peer && !up) {
              const q = fp.peer;
              fabric.nodes[q.node]!.ports[q.port]!.peer = undefined;
              fp.peer = undefined;
              changes++;
              changed = true;
              this.log.info('link down', { node: n.desc, guid: n.guid, port: p, peer: fabric.nodes[q.node]!.desc, peerGuid: fabric.nodes[q.node]!.guid, peerPort: q.port });
            } else if (up && (!fp.peer || (pi.portState !== PortState.Active && was?.portState === PortState.Active))) {
              // Came up, or retrained (it was ACTIVE): who is there now?
              const path = [...d.path, p];
              const ni = NodeInfo.decode(await this.smp.getDr(path, SmpAttr.NodeInfo, 0));
              let k = byGuid.get(ni.nodeGuid);
              if (k === undefined && ni.nodeType !== NodeType.Switch && added.length < this.maxChanges && (this.s.lmc ?? 0) === 0) {
                // A CA or router the last sweep did not have (a host cabled, or back): it is a leaf
                // (SMPs do not go through it), so it is taken in here; a new switch may lead
                // anywhere, so it takes a full heavy sweep.
                // (Two switch ports finding the same new node wait for one reading of it.)
                let found = adding.get(ni.nodeGuid);
                if (!found) adding.set(ni.nodeGuid, (found = this.newEndNode(ni, path, d.depth + 1, fabric, nodes)));
                k = await found;
                byGuid.set(ni.nodeGuid, k);
                if (!added.includes(k)) added.push(k);
                reach = reachable(fabric, nodes, pd.smNode);
                reach[k] = 1;
                this.log.info('node found', { node: fabric.nodes[k]!.desc, guid: ni.nodeGuid, port: ni.localPortNum, via: n.desc, viaGuid: n.guid, viaPort: p });
              }
              if (k === undefined || reach[k] === 0) throw new NotLocal(`switch ${name(i)} port ${p} leads to node ${formatGuid(ni.nodeGuid)}, not in the last sweep`);
              const rp = ni.localPortNum;
              const kp = fabric.nodes[k]!.ports[rp];
              if (!kp) throw new NotLocal(`switch ${name(i)} port ${p} leads to port ${rp} of ${name(k)}, not in the last sweep`);
              if (fp.peer) {
                if (fp.peer.node !== k || fp.peer.port !== rp) throw new NotLocal(`switch ${name(i)} port ${p} now leads to ${name(k)} port ${rp}`);
              } else {
                if (kp.peer) throw new NotLocal(`switch ${name(i)} port ${p} leads to ${name(k)} port ${rp}, linked elsewhere`);
                fp.peer = { node: k, port: rp };
                kp.peer = { node: i, port: p };
                changes++;
                ups++;
                if (!added.includes(k)) changed = true; // a CA taken in is on no switch's path
                this.log.info('link up', { node: n.desc, guid: n.guid, port: p, peer: fabric.nodes[k]!.desc, peerGuid: fabric.nodes[k]!.guid, peerPort: rp });
              }
              const kpi = await getPortInfo(this.smp, path, rp, decodePortInfo, fabric.nodes[k]!.type === NodeType.Switch ? nodes[k]!.portInfo[0] : undefined, known(kp.guid));
              nodes[k]!.portInfo[rp] = kpi;
              fresh.add(`${fabric.nodes[k]!.guid}/${rp}`);
            }
          }
          d.portInfo[0] = infos[0]!;
          fresh.add(`${n.guid}/0`);
        }),
      );
      if (changes > this.maxChanges) throw new NotLocal(`${changes} links changed (more than ${this.maxChanges})`);
      if (changed && added.length) throw new NotLocal('nodes taken in while switch links changed: a full heavy sweep renumbers the fabric');
      if (changed) {
        // Paths over the links as they are now, before the next level is asked.
        const canon = canonicalize(fabric, nodes, pd.smNode, pd.smPort);
        lastCanon = canon;
        nodes = canon.nodes;
        reach = reachable(fabric, nodes, pd.smNode);
        for (const i of [...unchecked]) if (!reach[i]) unchecked.delete(i);
      }
    }
    if (added.length) this.giveLids(fabric, added.map((k) => fabric.nodes[k]!), prev);
    if (!changes) {
      const disc: DiscoveryResult = { ...pd, fabric, nodes, smps: 0 };
      return { disc, changes, ups, flagged, fresh, reads };
    }
    // Drop what is no longer reachable, renumber (GUID order is kept), recompute the paths (the
    // paths are already those of the links as they are when nothing is dropped).
    const keep = fabric.nodes.map((_, i) => i).filter((i) => reach[i]);
    if (keep.length === fabric.nodes.length && lastCanon && !added.length) return { disc: { fabric: lastCanon.fabric, nodes: lastCanon.nodes, smNode: lastCanon.smNode, smPort: pd.smPort, smps: 0, maxDepth: lastCanon.maxDepth }, changes, ups, flagged, fresh, reads };
    const newIdx = new Int32Array(fabric.nodes.length).fill(-1);
    keep.forEach((old, k) => (newIdx[old] = k));
    for (const i of keep) for (const p of fabric.nodes[i]!.ports) if (p?.peer) p.peer = reach[p.peer.node] ? { node: newIdx[p.peer.node]!, port: p.peer.port } : undefined;
    for (let i = 0; i < fabric.nodes.length; i++) if (!reach[i]) this.log.info('node gone', { node: fabric.nodes[i]!.desc, guid: fabric.nodes[i]!.guid });
    const kept: Fabric = { nodes: keep.map((i) => fabric.nodes[i]!) };
    const canon = canonicalize(kept, keep.map((i) => nodes[i]!), newIdx[pd.smNode]!, pd.smPort);
    const disc: DiscoveryResult = { fabric: canon.fabric, nodes: canon.nodes, smNode: canon.smNode, smPort: pd.smPort, smps: 0, maxDepth: canon.maxDepth };
    return { disc, changes, ups, flagged, fresh, reads };
  }
}

/** A CA or router found through `path` (its NodeDescription and the PortInfo of the port it
 * answered by are read): appended to the view (canonicalize renumbers it). */
async function newEndNodeOf(smp: SmpClient, ni: NodeInfo, path: number[], depth: number, fabric: Fabric, nodes: DiscoveredNode[], knownExtendedSpeeds: boolean | undefined): Promise<number> {
  const rp = ni.localPortNum;
  const [desc, pi] = await Promise.all([smp.getDr(path, SmpAttr.NodeDescription, 0).then((b) => NodeDescription.decode(b).description), getPortInfo(smp, path, rp, decodePortInfo, undefined, knownExtendedSpeeds)]);
  const node: FabricNode = { type: ni.nodeType as NodeKind, guid: ni.nodeGuid, systemImageGuid: ni.systemImageGuid, desc, numPorts: ni.numPorts, vendorId: ni.vendorId, deviceId: ni.deviceId, ports: new Array(ni.numPorts + 1).fill(undefined) };
  node.ports[rp] = { num: rp, guid: ni.portGuid, lid: 0, lmc: 0, width: widthName(pi.linkWidthActive), speed: speedName(pi.linkSpeedActive, pi.linkSpeedExtActive, pi.linkSpeedExtActive2) };
  const d: DiscoveredNode = { path, nodeInfo: ni, portInfo: [], portPaths: [], depth };
  d.portInfo[rp] = pi;
  d.portPaths[rp] = path;
  fabric.nodes.push(node);
  nodes.push(d);
  return fabric.nodes.length - 1;
}

function countSwitches(f: Fabric): number {
  return f.nodes.filter((n) => n.type === NodeType.Switch).length;
}

/** Nodes reachable from the SM's node over links that are up (SMPs leave a CA only from the SM's). */
function reachable(fabric: Fabric, nodes: readonly DiscoveredNode[], smNode: number): Uint8Array {
  const seen = new Uint8Array(fabric.nodes.length);
  seen[smNode] = 1;
  const queue = [smNode];
  for (let h = 0; h < queue.length; h++) {
    const u = queue[h]!;
    const n = fabric.nodes[u]!;
    if (n.type !== NodeType.Switch && u !== smNode) continue;
    n.ports.forEach((p, pn) => {
      if (!p?.peer || seen[p.peer.node]) return;
      if ((nodes[u]!.portInfo[pn]?.portState ?? PortState.Down) < PortState.Init) return;
      seen[p.peer.node] = 1;
      queue.push(p.peer.node);
    });
  }
  return seen;
}

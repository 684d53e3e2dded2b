/** The unresponsive-SMA policy on the running SM (health hook; the policy itself is
 * sm/health-unresponsive.ts, pure): each heavy sweep's discovery skips are judged, the nodes that
 * reach K sweeps are logged and (isolate) held in the health state, and each held node gets one
 * NodeInfo probe per sweep (heavy or light), one try, not waited for by the sweep: answered for
 * the quiet time, it is released and a heavy sweep reads it again. */
import { SmpAttr } from '../wire/mad.js';
import { NodeInfo } from '../wire/sma.js';
import { endText } from '../model/topology-compare.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import type { Isolation } from '../model/topology-classes.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { ONE_TRY, type SmpClient } from './smp-client.js';
import type { HealthState } from './health-state.js';
import { probePath, UnresponsiveTracker, type SkipSeen, type UnresponsivePolicy } from './health-unresponsive.js';

/** The health state as the watch moves it (sm/health-phase.ts HealthKeeper). */
export interface HealthHolder {
  readonly state: HealthState;
  /** Isolations added, and removed by key: the change signalled; returns those removed. */
  change(added: Isolation[], removed: readonly string[]): Isolation[];
}

export class UnresponsiveWatch {
  readonly tracker: UnresponsiveTracker;
  /** Probes sent (one NodeInfo, one try each) and answered by the node held. */
  probes = 0;
  probeAnswers = 0;
  /** The last heavy sweep's discovery skips, for the health phase. */
  private skips: readonly SkipSeen[] = [];
  /** Where the probes go (the SM's client below its retry layer: one try) and what a release
   * asks for (a heavy sweep that reads the node again); sm/sm.ts attaches them. */
  private smp?: SmpClient;
  private onRelease?: () => void;

  constructor(
    readonly policy: UnresponsivePolicy,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly holder: HealthHolder,
  ) {
    this.tracker = new UnresponsiveTracker(policy);
  }

  attach(smp: SmpClient, onRelease: () => void): void {
    this.smp = smp;
    this.onRelease = onRelease;
  }

  /** The nodes held isolated as unresponsive, by GUID. */
  held(): Set<bigint> {
    return new Set(this.holder.state.isolated.filter((i) => i.source === 'unresponsive' && i.kind === 'node').map((i) => i.a.guid));
  }

  /** The discovery's hook: a port that leads to a held node is not probed (undefined: none held). */
  skipProbe(): ((guid: bigint, port: number) => boolean) | undefined {
    const held = this.held();
    return held.size ? (guid, port) => this.tracker.leadsToHeld(guid, port, held) : undefined;
  }

  noteSkips(skips: readonly SkipSeen[]): void {
    this.skips = skips;
  }

  /** A heavy sweep's health phase: its view (before the isolated nodes are left out) and skips. */
  judge(disc: DiscoveryResult): void {
    const held = this.held();
    const v = this.tracker.observe(disc.fabric, this.skips, this.clock.now(), held);
    this.skips = [];
    const { action, sweeps } = this.policy;
    for (const i of v.unresponsive) this.log.warn('node unresponsive', { node: endText(i.a), sweeps, action });
    for (const e of v.answering) this.log.info('unresponsive node answers again', { node: endText({ ...e, port: 0 }) });
    if (action === 'isolate' && v.unresponsive.length) this.holder.change(v.unresponsive.map(({ sweeps: _, ...i }) => i as Isolation), []);
    // a held node the discovery read anyway (its ports unknown: held from a restart or the master) answered
    for (const n of disc.fabric.nodes) if (held.has(n.guid)) this.answered(n.guid, true);
    this.probe(disc);
  }

  /** One probe to each held node, through a port it was last seen linked through; not waited for. */
  probe(disc: DiscoveryResult): void {
    const smp = this.smp;
    if (!smp) return;
    for (const guid of this.held()) {
      const path = probePath(disc.fabric, disc.nodes, disc.smNode, this.tracker.facesOf(guid));
      if (!path) continue;
      this.probes++;
      smp.getDr(path, SmpAttr.NodeInfo, 0, ONE_TRY).then(
        (b) => this.answered(guid, NodeInfo.decode(b).nodeGuid === guid),
        () => this.answered(guid, false),
      );
    }
  }

  private answered(guid: bigint, ok: boolean): void {
    if (ok) this.probeAnswers++;
    const i = this.holder.state.isolated.find((x) => x.source === 'unresponsive' && x.kind === 'node' && x.a.guid === guid);
    if (!i || !this.tracker.probed(guid, ok, this.clock.now())) return;
    this.holder.change([], [i.key]);
    this.tracker.forget(guid);
    this.log.info('unresponsive node answered for the quiet time: isolation released', { node: endText(i.a), quietS: this.policy.quietMs / 1000 });
    this.onRelease?.();
  }
}

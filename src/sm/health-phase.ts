/** The fabric health phases of a sweep (issue #33): after the decide phase, the view is compared
 * with the expected topology (model/topology-compare.ts) and the health state moves on
 * (sm/health-state.ts, pure); the isolated links are cut from the view the sweep plans over (not
 * routed, not armed) and an apply phase takes Down the isolated ports still ARMED or ACTIVE,
 * through the sweep's write step (the one apply step, sm/apply.ts). The same phases run in a heavy
 * sweep and a local one. */
import type { Fabric } from '../model/fabric.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import { compareTopology, endText, mismatchText } from '../model/topology-compare.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { cutIsolated, DEFAULT_TOPOLOGY_ACTIONS, type Isolation, EMPTY_HEALTH, isolatedNodes, isolatedPorts, nextHealth, portsToTakeDown, restoreIsolated, withoutNodes, type HealthChange, type HealthState, type TopologyActions } from './health-state.js';
import { planPortDown } from './plan-ports.js';
import type { SweepPhase } from './program-phases.js';
import { FlapTracker, type FlapPolicy } from './health-flap.js';
import { releaseMatches } from './health-manual.js';
import { UnresponsiveWatch, type HealthHolder } from './health-unresponsive-watch.js';
import type { UnresponsivePolicy } from './health-unresponsive-policy.js';
import { kept, splitVia, type KeptIsolation } from './health-store.js';
import { ErrorRateTracker, judgeErrorRates, type ErrorPolicy, type ReadPort } from './health-errors.js';

/** The health settings of a sweeper. */
export interface HealthSettings {
  /** The expected topology (`--topology`, read at start). */
  expected?: Fabric;
  actions?: TopologyActions;
  /** Called when the health state changed (mismatches found or gone, isolations). */
  onHealth?: (c: HealthChange) => void;
  /** The flapping policy (sm/health-flap.ts; none: off). */
  flap?: FlapPolicy;
  /** The unresponsive-SMA policy (sm/health-unresponsive.ts; none: off). */
  unresponsive?: UnresponsivePolicy;
  /** Where the isolations are kept across a restart (sm/health-store.ts; none: not kept). */
  store?: HealthStore;
  /** The error-rate policy (sm/health-errors.ts; none: off). */
  errors?: ErrorPolicy;
}

/** The health state's keeping (api/health-store-file.ts): read at start, saved on each change. */
export interface HealthStore {
  load(): KeptIsolation[];
  save(isolated: readonly KeptIsolation[]): void;
}

export class HealthKeeper implements HealthHolder {
  state: HealthState = EMPTY_HEALTH;
  /** Comparisons run (one a sweep that programs), isolated ports taken Down. */
  checks = 0;
  takenDown = 0;

  /** The flapping links' tracker (health hook; none without a policy). */
  get flap(): FlapTracker | undefined {
    return this.flapTracker;
  }
  private flapTracker?: FlapTracker;
  /** The unresponsive nodes' watch (health hook; none without a policy). */
  readonly unresp?: UnresponsiveWatch;
  /** The erroring links' tracker (health hook: errors; none without a policy). */
  readonly errors?: ErrorRateTracker;

  constructor(
    private readonly log: Logger,
    private readonly clock: Clock,
    private s: HealthSettings,
  ) {
    if (s.flap) this.flapTracker = new FlapTracker(s.flap);
    if (s.unresponsive) this.unresp = new UnresponsiveWatch(s.unresponsive, log, clock, this);
    // health hook: the isolations kept across a restart held from the start, each change saved
    const store = s.store;
    if (store) {
      const held = this.takeKept(store.load());
      if (held.length) this.state = { ...this.state, isolated: held };
      const on = s.onHealth;
      this.s = { ...s, onHealth: (c) => (c.isolated.length || c.released.length ? store.save(this.kept()) : undefined, on?.(c)) };
    }
    if (s.errors) this.errors = new ErrorRateTracker(s.errors);
  }

  /** A reload: another expected topology or other actions (none: no comparison; the next sweep
   * releases what the topology isolated). */
  configure(t: { expected?: Fabric; actions?: TopologyActions } | undefined): void {
    this.s = { ...this.s, expected: t?.expected, actions: t?.actions };
  }

  /** A reload of the flapping policy (`--health-flap`): a new one judges from the next change on
   * (the changes counted so far kept); off, no link is found flapping any more, and those held
   * isolated stay so until their quiet time (the policy's last) or `ibsm release`. */
  configureFlap(policy: FlapPolicy | undefined): void {
    const t = this.flapTracker;
    if (policy && t) Object.assign(t, { policy, detecting: true });
    else if (policy) this.flapTracker = new FlapTracker(policy);
    else if (t) t.detecting = false;
    this.s = { ...this.s, flap: policy };
    this.dropDrained();
  }

  /** A policy turned off whose last isolation went: its tracker with it. */
  private dropDrained(): void {
    const t = this.flapTracker;
    if (t && !t.detecting && !t.flappingLinks && !this.state.isolated.some((i) => i.source === 'flapping')) this.flapTracker = undefined;
  }

  /** The decide phase: compare, move the state on, cut the isolated links from the view and leave
   * the isolated nodes out of it. A local sweep while a node is isolated ends (a full heavy sweep
   * follows: the node is not in the snapshot to re-link). */
  phase(local: boolean): SweepPhase {
    return {
      kind: 'decide',
      name: 'fabric health',
      run: (r) => {
        const view = r.view!;
        if (local && this.state.isolated.some((i) => i.kind === 'node')) {
          this.log.info('local sweep: a node is isolated; full heavy sweep follows');
          return false;
        }
        const disc = local ? restoreIsolated(view.disc, this.state.isolated) : view.disc;
        if (this.s.expected) this.judge(compareTopology(this.s.expected, disc.fabric));
        else if (this.state.mismatches.length || this.state.isolated.some((i) => i.source === 'topology')) this.judge([]); // the file taken away
        if (this.flap) {
          this.judgeFlaps(disc);
          this.dropDrained();
        }
        if (!local) this.unresp?.judge(disc);
        if (local && this.state.isolated.some((i) => i.kind === 'node')) {
          this.log.info('local sweep: a node is isolated; full heavy sweep follows');
          return false;
        }
        // The isolated links cut, the isolated nodes left out (renumbered): what the sweep plans over.
        const ports = isolatedPorts(disc, this.state.isolated);
        const drop = isolatedNodes(disc, this.state.isolated);
        const { disc: routed, index } = withoutNodes(cutIsolated(disc, ports), drop);
        r.takeDown = portsToTakeDown(disc, ports, drop).map((p) => ({ node: index[p.node]!, port: p.port }));
        view.disc = routed;
        view.ports = view.ports === disc || !local ? view.disc : cutIsolated(view.ports, ports);
      },
    };
  }

  /** The apply phase: isolated ports still ARMED or ACTIVE taken Down (they come back in INIT). */
  readonly takeDownPhase: SweepPhase = {
    kind: 'apply',
    name: 'isolated ports taken Down',
    run: async (r) => {
      const down = r.takeDown ?? [];
      if (!down.length) return;
      const planned = planPortDown(r.view!.disc, down).filter(r.view!.fresh);
      const ok = await r.writes!.ok(planned);
      this.takenDown += ok;
      this.log.info('isolated ports taken Down', { ports: planned.length, acknowledged: ok });
    },
  };

  /** Isolations added, and removed by key, by a policy between comparisons (health hook): the
   * change signalled. Returns those removed. */
  change(added: Isolation[], removed: readonly string[]): Isolation[] {
    const gone = this.state.isolated.filter((i) => removed.includes(i.key));
    const add = added.filter((i) => !this.state.isolated.some((x) => x.key === i.key));
    if (!add.length && !gone.length) return [];
    this.state = { ...this.state, isolated: [...this.state.isolated.filter((i) => !gone.includes(i)), ...add] };
    this.s.onHealth?.({ state: this.state, found: [], gone: [], isolated: add, released: gone });
    return gone;
  }

  /** The isolations of the master this SM takes over from (health hook; sa/sync.ts): they replace
   * this SM's own (all but the expected topology's, which the next comparison recomputes). */
  adopt(kept: readonly KeptIsolation[]): void {
    const isolated = this.takeKept(kept);
    const keys = new Set(isolated.map((i) => i.key));
    const gone = this.state.isolated.filter((i) => i.source !== 'topology' && !keys.has(i.key)).map((i) => i.key);
    this.change([...isolated], gone);
    this.log.info('health state from the master', { isolated: isolated.length, dropped: gone.length });
  }

  /** The isolations to keep (across a restart, for a standby): all but the expected topology's,
   * an unresponsive node's with the ports it is reached through. */
  kept(): KeptIsolation[] {
    return kept(this.state.isolated).map((i) => (i.source === 'unresponsive' && this.unresp ? { ...i, via: this.unresp.tracker.facesOf(i.a.guid) } : i));
  }

  /** Isolations read back: their `via` taught to the unresponsive policy (when on). */
  private takeKept(k: readonly KeptIsolation[]): Isolation[] {
    const { isolated, via } = splitVia(k);
    for (const [guid, v] of via) this.unresp?.tracker.teach(guid, v);
    return isolated;
  }

  /** Manual isolation (health hook; sm/health-manual.ts): held from now; the next sweep applies
   * it. False when it is held already. */
  isolateByHand(i: Isolation): boolean {
    if (this.state.isolated.some((x) => x.key === i.key)) return false;
    this.state = { ...this.state, isolated: [...this.state.isolated, i] };
    this.log.warn('isolated by hand', { kind: i.kind, a: endText(i.a), ...(i.b ? { b: endText(i.b) } : {}) });
    this.s.onHealth?.({ state: this.state, found: [], gone: [], isolated: [i], released: [] });
    return true;
  }

  /** Manual release of what `target` names (sm/health-manual.ts releaseMatches); the expected
   * topology's isolations are refused (the next comparison would isolate them again). */
  releaseByHand(target: string): { released: Isolation[]; refused: Isolation[] } {
    const { keep, released, refused } = releaseMatches(this.state.isolated, target);
    this.state = { ...this.state, isolated: keep };
    for (const i of released) if (i.source === 'unresponsive') this.unresp?.tracker.forget(i.a.guid);
    for (const i of released) this.log.info('released by hand', { kind: i.kind, source: i.source, a: endText(i.a), ...(i.b ? { b: endText(i.b) } : {}) });
    if (released.length) this.s.onHealth?.({ state: this.state, found: [], gone: [], isolated: [], released });
    return { released, refused };
  }

  /** health hook: errors. PerfMgr's ports after its sweep over `f` through the error-rate policy;
   * true when isolations were added or released (a full heavy sweep applies them). */
  judgeErrors(f: Fabric, ports: Iterable<ReadPort>): boolean {
    const c = this.errors && judgeErrorRates(this.errors, this.state, f, ports, this.clock.now(), this.log);
    if (!c) return false;
    this.state = c.state;
    this.s.onHealth?.(c);
    return true;
  }

  /** health hook, after a light sweep: the held unresponsive nodes' probes; true when a flapping
   * link's quiet time is over and nothing changed (a full heavy sweep releases it). */
  afterLight(changed: boolean, disc: DiscoveryResult): boolean {
    this.unresp?.probe(disc);
    const due = this.flap?.releaseDue();
    return !changed && due !== undefined && this.clock.now() >= due;
  }

  /** health hook: flap (sm/health-quiet.ts): a quarantined link bounced between sweeps. */
  flapBounce(key: string): void {
    this.flap?.bounced(key, this.clock.now());
  }

  /** The flapping policy over this sweep's view (before the isolated links are cut). */
  private judgeFlaps(disc: { fabric: Fabric }): void {
    const held = new Set(this.state.isolated.filter((i) => i.source === 'flapping').map((i) => i.key));
    const v = this.flap!.observe(disc.fabric, this.clock.now(), held);
    if (!v.flapping.length && !v.released.length) return;
    const isolate = this.flap!.policy.action === 'isolate';
    const added = isolate ? v.flapping.filter((i) => !this.state.isolated.some((x) => x.key === i.key)).map(({ changes: _, ...i }) => i as Isolation) : [];
    const gone = new Set(v.released);
    const released = this.state.isolated.filter((i) => i.source === 'flapping' && gone.has(i.key));
    this.state = { ...this.state, isolated: [...this.state.isolated.filter((i) => !(i.source === 'flapping' && gone.has(i.key))), ...added] };
    for (const i of v.flapping) this.log.warn('link flapping', { a: endText(i.a), b: endText(i.b!), changes: i.changes, windowS: this.flap!.policy.windowMs / 1000, action: this.flap!.policy.action });
    for (const i of released) this.log.info('flapping link quiet: isolation released', { a: endText(i.a), b: endText(i.b!), quietS: this.flap!.policy.quietMs / 1000 });
    if (added.length || released.length) this.s.onHealth?.({ state: this.state, found: [], gone: [], isolated: added, released });
  }

  private judge(mismatches: ReturnType<typeof compareTopology>): void {
    this.checks++;
    const c = nextHealth(this.state, mismatches, this.s.actions ?? DEFAULT_TOPOLOGY_ACTIONS, this.clock.now());
    this.state = c.state;
    const { log } = this;
    for (const m of c.found) log.warn('topology mismatch', { class: m.cls, mismatch: mismatchText(m) });
    for (const m of c.gone) log.info('topology mismatch gone', { class: m.cls, mismatch: mismatchText(m) });
    for (const i of c.isolated) log.warn('isolated: not brought to ACTIVE, not routed', { kind: i.kind, class: i.cls, a: endText(i.a), ...(i.b ? { b: endText(i.b) } : {}) });
    for (const i of c.released) log.info('isolation released', { kind: i.kind, class: i.cls, a: endText(i.a), ...(i.b ? { b: endText(i.b) } : {}) });
    if (c.found.length || c.gone.length || c.isolated.length || c.released.length) this.s.onHealth?.(c);
  }
}

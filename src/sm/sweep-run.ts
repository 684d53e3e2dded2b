/** The one entry point of a heavy sweep (issue #31): the shell hands it the scope the controller
 * decided (SmController.scopeOf: full, local, takeover) and the views it holds; the sweep's phase
 * tables (sm/pipeline.ts) run over the view that scope names. A local sweep whose change is not
 * local, and a takeover whose fabric changed since the view, go on as a full heavy sweep in the
 * same call. A sweep that published a snapshot is followed by the multicast update's table
 * (sm/mcast-phases.ts) over it, the table the controller's programMulticast action runs. No
 * sweep-kind branching is left to the shell. */
import type { DiscoveryResult, Snapshot } from '../model/snapshot.js';
import type { HeavyScope } from './controller-types.js';
import type { LocalSweeper } from './local-sweep.js';
import type { SweepStats } from './pipeline.js';
import type { Sweeper } from './sweep.js';

/** The decide phase's question to the controller (sm/sm.ts `decide`): program, with or without
 * ClientReregister, or stop here (another SM masters the subnet). `fromView`: a takeover. */
export type Decide = (disc: DiscoveryResult, fromView: boolean) => Promise<false | { reregister: boolean }>;

/** What the shell is asked along the way (I/O-free glue). */
export interface HeavyHooks {
  decide: Decide;
  /** The sweep's tables ran: the snapshot to publish (none: another SM masters the fabric), before
   * the multicast update (the SA answers from it meanwhile, as the MFTs go out). */
  swept?: (snapshot: Snapshot | undefined) => void;
}

export interface HeavyRun {
  /** The new snapshot; none when another SM masters the fabric. */
  snapshot?: Snapshot;
  /** The sweep's stats; with a snapshot, `smps` and `ms` count the multicast update too and
   * `mftBlocksWritten` is its blocks. */
  stats: SweepStats;
  /** The scope that ran: `scope` asked for, or `full` where it fell back. */
  ran: HeavyScope;
}

/** Run one heavy sweep of `scope`, then (when it published a snapshot) the multicast update.
 * `prev`: the last snapshot (a local sweep's view); `view`: this SM's own discovery (the view a
 * takeover programs from). A full heavy sweep that published a snapshot is remembered as the
 * intact routing local sweeps build on. */
export async function runHeavySweep(
  sweeps: { sweeper: Sweeper; local: LocalSweeper },
  scope: HeavyScope,
  sweep: number,
  views: { prev?: Snapshot; view?: DiscoveryResult },
  hooks: HeavyHooks,
): Promise<HeavyRun> {
  const { sweeper } = sweeps;
  const t0 = sweeper.clock.now();
  const s0 = sweeper.smp.sent;
  const r = await tablesOf(sweeps, scope, sweep, views, hooks.decide);
  hooks.swept?.(r.snapshot);
  if (!r.snapshot) return r; // another SM masters the fabric
  // Multicast forwarding for the SA's groups over the new routes.
  r.stats.mftBlocksWritten = await sweeper.programMulticast(r.snapshot);
  r.stats.ms = sweeper.clock.now() - t0;
  r.stats.smps = sweeper.smp.sent - s0;
  return r;
}

/** The tables of `scope`, falling back to a full heavy sweep. */
async function tablesOf(
  sweeps: { sweeper: Sweeper; local: LocalSweeper },
  scope: HeavyScope,
  sweep: number,
  views: { prev?: Snapshot; view?: DiscoveryResult },
  decide: Decide,
): Promise<HeavyRun> {
  const { sweeper, local } = sweeps;
  if (scope === 'local' && views.prev) {
    const r = await local.sweep(views.prev, sweep);
    if (r) return { ...r, ran: 'local' };
  }
  if (scope === 'takeover' && views.view) {
    const r = await sweeper.takeover(sweep, views.view, (disc) => decide(disc, true));
    if (r) return { ...r, ran: 'takeover' };
  }
  const r = await sweeper.heavy(sweep, (disc) => decide(disc, false));
  if (r.snapshot) local.remember(r.snapshot);
  return { ...r, ran: 'full' };
}

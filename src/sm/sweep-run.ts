/** The one entry point of a heavy sweep (issue #31): the shell hands it the scope the controller
 * decided (SmController.scopeOf: full, local, takeover) and the views it holds; the sweep's phase
 * tables (sm/pipeline.ts) run over the view that scope names. A local sweep whose change is not
 * local, and a takeover whose fabric changed since the view, go on as a full heavy sweep in the
 * same call. No sweep-kind branching is left to the shell. */
import type { DiscoveryResult, Snapshot } from '../model/snapshot.js';
import type { HeavyScope } from './controller-types.js';
import type { LocalSweeper } from './local-sweep.js';
import type { Sweeper, SweepStats } from './sweep.js';

/** The decide phase's question to the controller (sm/sm.ts `decide`): program, with or without
 * ClientReregister, or stop here (another SM masters the subnet). `fromView`: a takeover. */
export type Decide = (disc: DiscoveryResult, fromView: boolean) => Promise<false | { reregister: boolean }>;

export interface HeavyRun {
  /** The new snapshot; none when another SM masters the fabric. */
  snapshot?: Snapshot;
  stats: SweepStats;
  /** The scope that ran: `scope` asked for, or `full` where it fell back. */
  ran: HeavyScope;
}

/** Run one heavy sweep of `scope`. `prev`: the last snapshot (a local sweep's view); `view`: this
 * SM's own discovery (the view a takeover programs from). A full heavy sweep that published a
 * snapshot is remembered as the intact routing local sweeps build on. */
export async function runHeavySweep(
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

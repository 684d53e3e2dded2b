/** The multicast update as a phase table (sm/pipeline.ts): plan (every group's spanning tree over
 * the snapshot, routing/mcast-tree.ts, and the MFT blocks that differ from what is programmed,
 * sm/plan-tables.ts) → apply (those blocks through the sweep's write step, sm/sweep-writes.ts →
 * the one apply step) → verify (the failures said, the --verbose line). The same table after
 * every heavy sweep that published a snapshot (sm/sweep-run.ts) and for the controller's
 * programMulticast action (a join or leave). No I/O but the write step's. */
import { computeMfts } from '../routing/mcast-tree.js';
import type { Snapshot } from '../model/snapshot.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { ApplyResult } from './apply.js';
import type { Phase } from './pipeline.js';
import { planMfts } from './plan-tables.js';
import type { Programmed, SmpWrite } from './programmed.js';
import type { SweepSettings } from './sweep.js';
import { ms1, writeTarget } from './sweep-log.js';
import type { SweepWrites } from './sweep-writes.js';

/** One multicast update's state as its phases fill it in. */
export interface McastRun {
  readonly snap: Snapshot;
  /** Clock at the start. */
  readonly t0: number;
  /** The groups planned and the MFT block writes that differ. */
  groups?: number;
  writes?: SmpWrite[];
  applied?: ApplyResult;
  /** Blocks sent (written or failed) and failed. */
  sent: number;
  failed: number;
}

/** What the multicast phases need of the sweeper: a write step over a view, without foreign M_Keys
 * (the heavy sweep that made the snapshot presented them already). */
export interface McastDeps {
  clock: Clock;
  log: Logger;
  s: Pick<SweepSettings, 'multicastGroups'>;
  programmed: Programmed;
  writesFor: (disc: Snapshot['discovery']) => SweepWrites;
}

export function multicastPhases(o: McastDeps): Phase<McastRun>[] {
  const { clock, log, s, programmed } = o;
  return [
    {
      kind: 'plan',
      name: 'MFT blocks that differ',
      run: (r) => {
        const { snap } = r;
        const groups = s.multicastGroups?.(snap) ?? [];
        const plan = computeMfts(snap.fabric, snap.routing.lfts, groups);
        for (const note of plan.notes) log.debug('multicast', { note });
        r.groups = groups.length;
        r.writes = planMfts(snap.discovery, plan, programmed);
      },
    },
    {
      kind: 'apply',
      name: 'MFT blocks',
      run: async (r) => {
        r.applied = await o.writesFor(r.snap.discovery).run(r.writes!);
      },
    },
    {
      kind: 'verify',
      name: 'failures said',
      run: (r) => {
        const { ok, failed } = r.applied!;
        const first = failed[0];
        if (first) log.warn('MFT blocks not written; left for the next update', { blocks: failed.length, ...writeTarget(r.snap.discovery, first.write), error: (first.error as Error).message });
        r.failed = failed.length;
        r.sent = ok + failed.length;
        if (log.enabled('debug')) log.debug('sweep phase: multicast', { sweep: r.snap.sweep, groups: r.groups, mftBlocks: ok, mftFailed: failed.length, ms: ms1(clock.now() - r.t0) });
      },
    },
  ];
}

/** The apply phases of a sweep (sm/pipeline.ts), the same objects for a heavy sweep, a local one
 * and a takeover: each plans over the sweep's view what differs from what is programmed
 * (sm/plan-*.ts, pure) and sends it through the sweep's write step (sm/sweep-writes.ts → the one
 * apply step, sm/apply.ts). A failed write is logged and counted there; the phase carries on. */
import { PortState, SmpAttr } from '../wire/mad.js';
import { lftBlockMod } from '../wire/modifiers.js';
import { PartitionPlan } from '../model/partitions.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { pump } from '../util/pump.js';
import { APPLY_WINDOW, GeneratedWrites, LFT_APPLY_WINDOW, type ApplyResult } from './apply.js';
import type { ForeignTables } from './adopt-lfts.js';
import type { Phase, SweepRun } from './pipeline.js';
import { activationWrites, portInfoWrites, portPath, portStateOfSet } from './plan-ports.js';
import { lftPlan, planLftReads, planPkeys, planVlTables } from './plan-tables.js';
import type { Programmed } from './programmed.js';
import type { SmpClient } from './smp-client.js';
import type { SweepSettings } from './sweep.js';
import { FAILURE_LOG_LINES, logLftReads, ms1, portTarget } from './sweep-log.js';

/** What the apply phases need of the sweeper. */
export interface ProgramDeps {
  smp: SmpClient;
  clock: Clock;
  log: Logger;
  s: SweepSettings;
  programmed: Programmed;
  /** The LFTs another SM left (a heavy sweep reads them back and may adopt them). */
  foreign: ForeignTables;
}

export type SweepPhase = Phase<SweepRun>;

/** The apply phases, bound to a sweeper. */
export function programPhases(o: ProgramDeps): { portInfo: SweepPhase; pkeys: SweepPhase; vlTables: SweepPhase; lfts: SweepPhase; activation: SweepPhase } {
  const { log, s, programmed, clock } = o;
  const verbose = (): boolean => log.enabled('debug');
  return {
    // PortInfo (LID, LMC, SM LID, timeouts, MTU, VLs, M_Key, enforcement) and INIT → ARMED.
    portInfo: {
      kind: 'apply',
      name: 'PortInfo',
      run: async (r) => {
        const v = r.view!;
        const w = r.writes!;
        const reregister = r.go?.reregister ?? false;
        if (reregister) log.info('ClientReregister set on every port: the SA holds no registrations from before');
        const tp = clock.now();
        // Planned as the window has room (the first Sets out at once); the ports told to ARM kept
        // as (node, port) pairs, not their writes
        const arming: number[] = [];
        const planned = new GeneratedWrites(portInfoWrites(v.ports, { ...s, smLid: r.smLid, reregister }), v.fresh, (x) => {
          const e = x.effect;
          if (e.kind === 'portInfo' && portStateOfSet(x.data) === PortState.Armed) arming.push(e.node, e.port);
        });
        const res = await w.run(planned);
        r.done.portInfoSets = res.ok;
        if (v.scope === 'whole') s.onProgress?.('ports', { sets: r.done.portInfoSets });
        const armed = acknowledged(arming, res.failed);
        r.done.stuckPorts = reportStuck(log, v.disc, armed);
        r.ports = { planned: planned.handed, armed: armed.length / 2, at: tp };
      },
    },
    pkeys: {
      kind: 'apply',
      name: 'P_Key tables',
      run: async (r) => {
        const full = { ports: 0 };
        r.done.pkeyBlocks = await r.writes!.ok(planPkeys(r.view!.disc, s.partitions ?? PartitionPlan.defaultPlan(), programmed, (m, f) => log.warn(m, f), full, s.partEnforce));
        r.done.pkeyTablesFull = full.ports;
        const p = r.ports;
        if (verbose() && r.view!.scope === 'whole' && p) log.debug('sweep phase: ports', { sweep: r.sweep, portInfoPlanned: p.planned, portInfoSets: r.done.portInfoSets, armed: p.armed, stuckPorts: r.done.stuckPorts, pkeyBlocks: r.done.pkeyBlocks, reregister: r.go?.reregister ?? false, ms: ms1(clock.now() - p.at) });
      },
    },
    // The SL2VL / VLArbitration tables the routes need (layered engines), QoS's.
    vlTables: {
      kind: 'apply',
      name: 'SL2VL and VLArbitration tables',
      run: async (r) => {
        r.done.vlTables = await r.writes!.ok(planVlTables(r.view!.disc, r.routing!, programmed, s.qosVl));
      },
    },
    // SwitchInfo (LinearFDBTop, PortStateChange cleared) and the changed LFT blocks only. Over
    // the whole fabric, the blocks of switches programmed by someone else are read first, so a
    // takeover rewrites only what differs (or adopts that SM's tables, sm/adopt-lfts.ts).
    lfts: {
      kind: 'apply',
      name: 'LFTs',
      run: async (r) => {
        const v = r.view!;
        const tt = clock.now();
        let reads: ReturnType<typeof planLftReads> = [];
        if (v.scope === 'whole') {
          reads = planLftReads(v.disc, r.maxLid, programmed);
          await pump(
            reads.map((rd) => () => o.smp.getDr(rd.path, SmpAttr.LinearForwardingTable, lftBlockMod(rd.block)).then((b) => programmed.learnLft(rd.guid, rd.block, rd.blocks, b), () => undefined)),
            APPLY_WINDOW,
          );
          const { routing, adoption } = o.foreign.choose(v.disc.fabric, r.routing!, r.maxLid, programmed, v.routedBy !== undefined ? reads : []);
          r.routing = routing;
          logLftReads(log, reads.length, adoption, v.routedBy);
        }
        // The SwitchInfo Sets, then each changed block planned as the window has room (never all
        // at once), `interleave` switches at a time.
        const lft = lftPlan(v.disc, r.routing!, r.maxLid, programmed, s.packetLife, v.interleave);
        const res = await r.writes!.run(lft, LFT_APPLY_WINDOW);
        r.done.lftBlocks = lft.planned - res.failed.filter((f) => f.write.effect.kind === 'lft' || f.write.effect.kind === 'rft').length;
        r.tablesAt = clock.now();
        if (v.scope === 'whole') s.onProgress?.('lft', { blocks: r.done.lftBlocks });
        if (verbose() && v.scope === 'whole') log.debug('sweep phase: forwarding tables', { sweep: r.sweep, vlTables: r.done.vlTables, switchInfo: lft.switchInfo.length, lftBlocksRead: reads.length, lftBlocksPlanned: lft.planned, lftBlocks: r.done.lftBlocks, lftFailed: lft.planned - r.done.lftBlocks, maxLid: r.maxLid, ms: ms1(clock.now() - tt) });
      },
    },
    // ARMED → ACTIVE.
    activation: {
      kind: 'apply',
      name: 'ARMED → ACTIVE',
      run: async (r) => {
        const ta = clock.now();
        const planned = new GeneratedWrites(activationWrites(r.view!.ports), r.view!.fresh);
        r.done.activated = await r.writes!.ok(planned);
        if (verbose() && r.view!.scope === 'whole') log.debug('sweep phase: activation', { sweep: r.sweep, planned: planned.handed, activated: r.done.activated, ms: ms1(clock.now() - ta) });
      },
    },
  };
}

/** The (node, port) pairs of `pairs` whose PortInfo Set did not fail (`failed`: the phase's). */
function acknowledged(pairs: readonly number[], failed: ApplyResult['failed']): number[] {
  const lost = new Set<number>();
  for (const { write: f } of failed) if (f.effect.kind === 'portInfo') lost.add(f.effect.node * 256 + f.effect.port);
  if (!lost.size) return pairs as number[];
  const out: number[] = [];
  for (let i = 0; i < pairs.length; i += 2) if (!lost.has(pairs[i]! * 256 + pairs[i + 1]!)) out.push(pairs[i]!, pairs[i + 1]!);
  return out;
}

/** Ports whose INIT → ARMED Set was acknowledged (`armed`: (node, port) pairs) but that still
 * report INIT: one line each (bounded), counted. */
function reportStuck(log: Logger, disc: DiscoveryResult, armed: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < armed.length; i += 2) {
    const node = armed[i]!;
    const port = armed[i + 1]!;
    const d = disc.nodes[node]!;
    if (d.portInfo[port]?.portState !== PortState.Init) continue;
    if (++n <= FAILURE_LOG_LINES) log.warn('port stuck in INIT: told to ARM, it stays in INIT; left for the next sweep', portTarget(disc, node, port, portPath(disc.fabric.nodes[node]!, d, port) ?? d.path));
  }
  if (n > FAILURE_LOG_LINES) log.warn('more ports stuck in INIT', { more: n - FAILURE_LOG_LINES });
  return n;
}

/** The sweep as phases (issue #31). Every sweep is a table of phases run in the order
 *
 *   discover → decide → plan → apply → verify
 *
 * A heavy sweep and a local sweep run them over a view: the whole fabric (a heavy sweep's
 * discovery, or the view a takeover is handed) or the changed part (a local sweep: the last view
 * plus what it re-explored around the changes). They differ only in the view and in which phases
 * they run (sm/sweep.ts and sm/local-sweep.ts give their phase tables); the apply phases are the
 * same objects (sm/program-phases.ts), and each goes through the one apply step (sm/apply.ts, via
 * sm/sweep-writes.ts). The light sweep (sm/light-sweep.ts: discover → decide → verify) and the
 * multicast update (sm/mcast-phases.ts: plan → apply → verify) are tables of the same kinds over
 * their own state. No I/O here: the phases do theirs over the injected SMP client. */
import type { DiscoveryResult, Snapshot } from '../model/snapshot.js';
import { InternalError } from '../util/errors.js';
import type { RoutingResult } from '../model/routes.js';
import type { FallbackResult } from '../routing/registry.js';
import type { LidAssignment } from './lids.js';
import type { SmpWrite } from './programmed.js';
import type { SweepWrites } from './sweep-writes.js';

/** The phases of a sweep, in the order they run. */
export const PHASE_ORDER = ['discover', 'decide', 'plan', 'apply', 'verify'] as const;
export type PhaseKind = (typeof PHASE_ORDER)[number];

/** One step of a sweep. */
export interface Phase<C> {
  kind: PhaseKind;
  /** What it does (the docs and the error of a table out of order name it). */
  name: string;
  /** false: the sweep ends here (another SM masters the subnet; the change is not local). */
  run(c: C): Promise<boolean | void> | boolean | void;
}

/** A phase table whose kinds do not follow PHASE_ORDER: a programming error. */
export class PhaseOrderError extends InternalError {
  override readonly name: string = 'PhaseOrderError';
}

/** Throws PhaseOrderError unless the kinds of `phases` follow PHASE_ORDER (a kind may repeat,
 * e.g. several apply phases; any may be left out). */
export function checkPhaseOrder(phases: readonly Phase<unknown>[]): void {
  let at = 0;
  for (const p of phases) {
    const k = PHASE_ORDER.indexOf(p.kind);
    if (k < at) throw new PhaseOrderError(`sweep phase ${p.kind} "${p.name}" after ${PHASE_ORDER[at]}: phases run ${PHASE_ORDER.join(' → ')}`);
    at = k;
  }
}

/** Run `phases` in order over `c`; false when one of them ended the sweep. The kinds must follow
 * PHASE_ORDER (checkPhaseOrder, before any phase runs). */
export async function runPhases<C>(phases: readonly Phase<C>[], c: C): Promise<boolean> {
  checkPhaseOrder(phases as readonly Phase<unknown>[]);
  for (const p of phases) if ((await p.run(c)) === false) return false;
  return true;
}

/** The decide phase's question to the controller (sm/sm.ts `decide`, through sm/sweep-run.ts):
 * program the view, with or without ClientReregister, or stop here (another SM masters it). */
export type DecideFn = (disc: DiscoveryResult) => Promise<false | { reregister: boolean }>;

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
  /** End ports (and enforcing switch ports) whose P_Key table cannot hold all their partitions. */
  pkeyTablesFull: number;
  vlTablesWritten: number;
  mftBlocksWritten: number;
  activated: number;
  engine?: string;
  /** Nodes left out of this sweep (they could not be read), links not probed, and writes that
   * failed: the next sweep tries them again. */
  skippedNodes: number;
  skippedLinks: number;
  failedWrites: number;
  /** Ports told INIT → ARMED that answered still in INIT (stuck): left for the next sweep. */
  stuckPorts: number;
  /** Nodes left out because they answer with the GUID of another node. */
  duplicateGuids: number;
  /** A local sweep's routes (sm/local-sweep.ts): incremental, or the chain in full. */
  reroute?: 'incremental' | 'full';
}

export function emptyStats(kind: 'heavy' | 'light'): SweepStats {
  return { kind, smps: 0, ms: 0, nodes: 0, switches: 0, endPorts: 0, maxLid: 0, lftBlocksWritten: 0, portInfoSets: 0, pkeyBlocksWritten: 0, pkeyTablesFull: 0, vlTablesWritten: 0, mftBlocksWritten: 0, activated: 0, skippedNodes: 0, skippedLinks: 0, failedWrites: 0, stuckPorts: 0, duplicateGuids: 0 };
}

/** What a sweep works on: the whole fabric or the part that changed. */
export interface SweepView {
  scope: 'whole' | 'changed';
  /** The view the tables are planned over (the whole fabric as this sweep knows it). */
  disc: DiscoveryResult;
  /** The view PortInfo and activation are planned over: `disc`, or (a local sweep) its nodes whose
   * ports this sweep read, the others without ports. */
  ports: DiscoveryResult;
  /** A planned PortInfo write of a port this sweep read (every one for the whole fabric). */
  fresh: (w: SmpWrite) => boolean;
  /** LFT switches programmed at once (sm/plan-tables.ts lftPlan). */
  interleave: number;
  /** The LID of the SM that programmed the fabric before (its LFTs are read back and may be
   * adopted, sm/adopt-lfts.ts): a heavy sweep's view only. */
  routedBy?: number;
}

/** The state of one sweep as its phases fill it in. */
export interface SweepRun {
  readonly sweep: number;
  /** Clock and SMP count at the start. */
  readonly t0: number;
  readonly s0: number;
  view?: SweepView;
  /** The decide phase's question (a heavy sweep's, a takeover's). */
  decide?: DecideFn;
  /** A takeover's discover phase: why the fabric is not the view handed (a full sweep follows). */
  stale?: string;
  /** The decide phase's answer: program, and whether with ClientReregister. */
  go?: { reregister: boolean };
  lids?: LidAssignment;
  smLid: number;
  maxLid: number;
  routed?: FallbackResult;
  /** The routes written (the engine's, or another SM's adopted). */
  routing?: RoutingResult;
  writes?: SweepWrites;
  /** What the apply phases did. */
  done: { portInfoSets: number; pkeyBlocks: number; pkeyTablesFull: number; vlTables: number; lftBlocks: number; activated: number; stuckPorts: number };
  /** The PortInfo phase's Sets planned, ARMED and when it started (its --verbose line). */
  ports?: { planned: number; armed: number; at: number };
  /** Nodes the discovery left out for answering with another node's GUID. */
  duplicates: number;
  /** When the exploration ended, the routes were computed and the last LFT block was
   * acknowledged (a local sweep's log line). */
  exploredAt: number;
  routedAt: number;
  tablesAt: number;
  /** A local sweep's routes: incremental, or the chain in full. */
  reroute?: 'incremental' | 'full';
  /** The stats so far (discovery's counts), filled in by verify. */
  stats: SweepStats;
  snapshot?: Snapshot;
  /** Isolated ports still ARMED or ACTIVE (sm/health-phase.ts): the apply step takes them Down. */
  takeDown?: Array<{ node: number; port: number }>;
}

/** A run at the start of a sweep. */
export function newRun(sweep: number, t0: number, s0: number, stats: SweepStats): SweepRun {
  return { sweep, t0, s0, smLid: 0, maxLid: 0, done: { portInfoSets: 0, pkeyBlocks: 0, pkeyTablesFull: 0, vlTables: 0, lftBlocks: 0, activated: 0, stuckPorts: 0 }, exploredAt: 0, routedAt: 0, tablesAt: 0, duplicates: 0, stats };
}

/** The stats of a sweep that programmed, from its run. */
export function programmedStats(r: SweepRun, smps: number, ms: number): SweepStats {
  const d = r.done;
  return {
    ...r.stats,
    smps,
    ms,
    maxLid: r.maxLid,
    lftBlocksWritten: d.lftBlocks,
    portInfoSets: d.portInfoSets,
    pkeyBlocksWritten: d.pkeyBlocks,
    pkeyTablesFull: d.pkeyTablesFull,
    vlTablesWritten: d.vlTables,
    mftBlocksWritten: 0,
    activated: d.activated,
    engine: r.routing?.engine,
    failedWrites: r.writes?.failedCount ?? 0,
    stuckPorts: d.stuckPorts,
  };
}

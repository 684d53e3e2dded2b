/** The light sweep: has anything changed since the last heavy sweep? At OpenSM's cost: a periodic
 * light sweep sends S SMPs, S the switches (OpenSM's light sweep reads every switch's SwitchInfo,
 * osm_state_mgr.c), spent in two rotations:
 *
 * - Switches: each sweep the next ceil(S / 2) switches' SwitchInfo, so every switch is read at least
 *   once every SWITCH_ROUNDS = 2 sweeps. PortStateChange set says a port of that switch changed
 *   state (a link went, came up or retrained): a lost trap 128 is found within two sweep intervals
 *   (a trap 128 that arrives sweeps at once, sm/handlers.ts). The heavy sweep that follows
 *   (sm/local-sweep.ts) reads the ports of the flagged switches only and clears the bit by writing
 *   SwitchInfo back, as OpenSM does.
 * - CA ports (and routers'): traps say first what changes there (trap 144 for a new SM port, found
 *   at once; the switch's trap 128 and PortStateChange for a link). What a lost trap would have
 *   said is caught by the CA rotation, which takes the rest of the budget: each sweep the next
 *   max(1, S - ceil(S / 2)) of the C linked CA ports, so every one is read at least once every
 *   `caBound(S, C)` = ceil(C / max(1, floor(S / 2))) sweeps (5,120 hosts, 416 switches: 25 sweeps;
 *   9,720 and 522: 38). A read finds a port not ACTIVE, a new SM (IsSM), and another SM's writes
 *   (MasterSMLID, LID).
 * A full light sweep (an operator's; a local sweep that must decide; every light sweep without
 * periodic ones) reads every switch and every CA port. At most APPLY_WINDOW SMPs in flight (the
 * SM's window for one-SMP jobs). Pure of I/O but the SMPs.
 *
 * As phases (sm/pipeline.ts, `lightPhases`): discover (`readLight`) → decide (`judgeLight`,
 * pure; a flagged switch at a quarantined link's end is checked there on its own,
 * sm/health-quiet.ts) → verify (the stats). */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortCap, PortInfo, SwitchInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import type { Snapshot } from '../model/snapshot.js';
import { pump } from '../util/pump.js';
import { APPLY_WINDOW } from './apply.js';
import { hasExtendedSpeeds } from './port-info-get.js';
import type { SmpClient } from './smp-client.js';
import type { SmPort } from './sminfo.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { emptyStats, type Phase, type SweepStats } from './pipeline.js';
import { ms1 } from './sweep-log.js';
import type { QuarantineWatch, QuarantinedPorts } from './health-quiet.js';

/** Periodic light sweeps over which every switch's SwitchInfo is read once. */
export const SWITCH_ROUNDS = 2;

/** The rotation's period for `new CaRotation(caRounds(interval))` (sm/sweep.ts): SWITCH_ROUNDS with
 * periodic light sweeps; 1 without (interval 0: every light sweep, asked for, reads everything). */
export function caRounds(sweepIntervalMs: number | undefined): number {
  return sweepIntervalMs && sweepIntervalMs > 0 ? SWITCH_ROUNDS : 1;
}

/** The switches a periodic light sweep reads: ceil(S / rounds). */
export function switchShare(switches: number, rounds = SWITCH_ROUNDS): number {
  return Math.ceil(switches / Math.max(1, rounds));
}

/** The CA ports a periodic light sweep reads: what the S-SMP budget leaves after the switches (at
 * least one, so that a fabric of few switches still reads its CA ports in turn). */
export function caShare(switches: number, rounds = SWITCH_ROUNDS): number {
  return Math.max(1, switches - switchShare(switches, rounds));
}

/** The bound on a lost CA-port trap: periodic light sweeps within which every one of `caPorts`
 * linked CA ports is read (at `switches` switches). */
export function caBound(switches: number, caPorts: number, rounds = SWITCH_ROUNDS): number {
  return Math.max(1, Math.ceil(caPorts / caShare(switches, rounds)));
}

/** A linked CA port of a snapshot: node index, port number, its DR path. */
export interface CaPort {
  node: number;
  port: number;
  path: readonly number[];
}

/** What a light sweep saw of another SM writing the fabric: CA ports naming another master or
 * holding another LID than this SM gave them. */
export interface ForeignWrites {
  ports: number;
  masterSmLids: Set<number>;
  /** The first such port, for the log line. */
  first?: { node: string; guid: bigint; port: number; lid: number; was: number; masterSmLid: number };
}

/** What one light sweep reads: switches (node indexes) and CA ports. */
export interface LightPlan {
  switches: readonly number[];
  cas: readonly CaPort[];
}

/** The next `n` of `all` after `cursor`, wrapping round: the items and the cursor after them. */
function take<T>(all: readonly T[], cursor: number, n: number): { items: readonly T[]; cursor: number } {
  if (n >= all.length) return { items: all, cursor: 0 };
  const start = cursor % all.length;
  const end = start + n;
  const items = end <= all.length ? all.slice(start, end) : [...all.slice(start), ...all.slice(0, end - all.length)];
  return { items, cursor: end % all.length };
}

/** The switches and CA ports the periodic light sweeps read in turn. */
export class CaRotation {
  private swCursor = 0;
  private caCursor = 0;
  private of?: { snap: Snapshot; switches: number[]; ports: CaPort[] };

  /** `rounds`: sweeps over which every switch is read (caRounds); 1: every sweep reads everything. */
  constructor(readonly rounds: number) {}

  /** What the next light sweep reads: everything when `full`, else the next switchShare(S)
   * switches and caShare(S) CA ports after those read last (wrapping round). */
  next(snap: Snapshot, full: boolean): LightPlan {
    if (this.of?.snap !== snap) this.of = { snap, switches: switchIndexes(snap), ports: caPorts(snap) };
    const { switches, ports } = this.of;
    if (full || this.rounds <= 1) return { switches, cas: ports };
    const sw = take(switches, this.swCursor, switchShare(switches.length, this.rounds));
    const ca = take(ports, this.caCursor, caShare(switches.length, this.rounds));
    this.swCursor = sw.cursor;
    this.caCursor = ca.cursor;
    return { switches: sw.items, cas: ca.items };
  }
}

/** The switches of a snapshot (node indexes, in node order). */
function switchIndexes(snap: Snapshot): number[] {
  const out: number[] = [];
  snap.fabric.nodes.forEach((n, i) => {
    if (n.type === NodeType.Switch) out.push(i);
  });
  return out;
}

/** The linked CA (and router) ports of a snapshot, in node order. */
export function caPorts(snap: Snapshot): CaPort[] {
  const out: CaPort[] = [];
  const { fabric, discovery } = snap;
  fabric.nodes.forEach((n, i) => {
    if (n.type === NodeType.Switch) return;
    const d = discovery.nodes[i]!;
    for (let p = 1; p < n.ports.length; p++) {
      const path = d.portPaths[p];
      if (path && n.ports[p]?.peer) out.push({ node: i, port: p, path });
    }
  });
  return out;
}

/** What the decide phase needs of a CA port's PortInfo (the rest is not kept: a sweep's answers
 * stay small). */
export type CaPortState = Pick<PortInfo, 'portState' | 'masterSmLid' | 'lid' | 'capabilityMask'>;

/** What a light sweep's discover phase read, in the order the answers came: a switch's
 * PortStateChange, a CA port's state; neither where the read failed. */
export type LightAnswer = { node: number; portStateChange?: boolean } | { ca: CaPort; state?: CaPortState };

/** What the decide phase makes of the answers. */
export interface LightResult {
  changed: boolean;
  /** Flagged switches with a quarantined link (health hook: flap): checked on their own. */
  quarantined: number[];
  smPorts: SmPort[];
  foreign: ForeignWrites;
}

/** Read the SwitchInfo of the plan's switches, then the PortInfo of its CA ports, at most
 * APPLY_WINDOW in flight: the answers in the order they came. */
export async function readLight(smp: SmpClient, snap: Snapshot, plan: LightPlan): Promise<LightAnswer[]> {
  const { discovery } = snap;
  const out: LightAnswer[] = [];
  const readSwitch = (i: number) => (): Promise<void> =>
    smp.getDr(discovery.nodes[i]!.path, SmpAttr.SwitchInfo, 0).then(
      (b) => void out.push({ node: i, portStateChange: SwitchInfo.decode(b).portStateChange !== 0 }),
      () => void out.push({ node: i }),
    );
  // with bit 31 where the snapshot says the port has extended speeds (its answer complete)
  const readCa = (c: CaPort) => (): Promise<void> =>
    smp.getDr(c.path, SmpAttr.PortInfo, portInfoMod(c.port, hasExtendedSpeeds(discovery.nodes[c.node]!.portInfo[c.port]))).then(
      (b) => {
        const pi = PortInfo.decode(b);
        out.push({ ca: c, state: { portState: pi.portState, masterSmLid: pi.masterSmLid, lid: pi.lid, capabilityMask: pi.capabilityMask } });
      },
      () => void out.push({ ca: c }),
    );
  await pump(
    (function* () {
      for (const i of plan.switches) yield readSwitch(i);
      for (const c of plan.cas) yield readCa(c);
    })(),
    APPLY_WINDOW,
  );
  return out;
}

/** What the answers say (pure): "changed" when a switch flags a port change or does not answer,
 * or a CA port is not ACTIVE, unreadable or written by another SM; the CA ports that advertise an
 * SM (a new IsSM bit is a new SM to query), in answer order. */
export function judgeLight(snap: Snapshot, answers: readonly LightAnswer[], quarantined: QuarantinedPorts = new Map()): LightResult {
  const { fabric, discovery } = snap;
  let changed = false;
  const sms: SmPort[] = [];
  const smLid = fabric.nodes[discovery.smNode]?.ports[discovery.smPort]?.lid ?? 0;
  const foreign: ForeignWrites = { ports: 0, masterSmLids: new Set(), first: undefined };
  const held: number[] = [];
  for (const a of answers) {
    if ('node' in a) {
      if (a.portStateChange && quarantined.has(a.node)) held.push(a.node); // health hook: flap
      else if (a.portStateChange !== false) changed = true; // flagged, or unreachable: the fabric changed
      continue;
    }
    const { ca: c, state: pi } = a;
    if (!pi) {
      changed = true;
      continue;
    }
    const n = fabric.nodes[c.node]!;
    const port = n.ports[c.port]!;
    if (pi.portState !== PortState.Active) changed = true;
    // Another SM writes here: the port names another master, or holds another LID.
    if (pi.portState >= PortState.Armed && smLid && ((pi.masterSmLid !== smLid && pi.masterSmLid !== 0) || (port.lid !== undefined && pi.lid !== port.lid))) {
      changed = true;
      foreign.ports++;
      if (pi.masterSmLid !== smLid) foreign.masterSmLids.add(pi.masterSmLid);
      foreign.first ??= { node: n.desc, guid: port.guid, port: c.port, lid: pi.lid, was: port.lid ?? 0, masterSmLid: pi.masterSmLid };
    }
    const own = c.node === discovery.smNode && c.port === discovery.smPort;
    if (!own && pi.capabilityMask & PortCap.IsSM) sms.push({ guid: port.guid, lid: pi.lid, path: c.path });
  }
  return { changed, quarantined: held, smPorts: sms, foreign };
}

/** A light sweep's state as its phases fill it in. */
export interface LightRun {
  readonly snap: Snapshot;
  /** Every switch and CA port (an operator's light sweep, a local sweep's check), not the share. */
  readonly full: boolean;
  /** Clock and SMP count at the start. */
  readonly t0: number;
  readonly s0: number;
  plan?: LightPlan;
  answers?: LightAnswer[];
  result?: LightResult;
  stats?: SweepStats;
}

/** The light sweep's phase table (sm/pipeline.ts): discover (the rotation's share, or everything,
 * read), decide (changed? SM ports seen, another SM's writes), verify (the stats, --verbose line).
 * What follows from the result (a heavy sweep, the SMs' SMInfo read, the foreign writes' ERROR)
 * is the controller's and the shell's (sm/sm.ts). */
export function lightPhases(o: { smp: SmpClient; clock: Clock; log: Logger; rotation: CaRotation; quiet?: QuarantineWatch }): Phase<LightRun>[] {
  const { smp, clock, log, rotation, quiet } = o;
  return [
    {
      kind: 'discover',
      name: 'SwitchInfo and CA PortInfo reads',
      run: async (r) => {
        r.plan = rotation.next(r.snap, r.full);
        r.answers = await readLight(smp, r.snap, r.plan);
      },
    },
    {
      kind: 'decide',
      name: 'changed, SM ports, foreign writes',
      run: async (r) => {
        const res = (r.result = judgeLight(r.snap, r.answers!, quiet?.ports(r.snap)));
        // health hook: flap (sm/health-quiet.ts): a flagged switch at a quarantined link's end is
        // checked on its own: changed only if more than its quarantined ports moved
        for (const n of res.quarantined) if (!res.changed && (await quiet!.check(r.snap, n)) === 'changed') res.changed = true;
      },
    },
    {
      kind: 'verify',
      name: 'the stats',
      run: (r) => {
        const nodes = r.snap.fabric.nodes.length;
        const res = r.result!;
        r.stats = { ...emptyStats('light'), smps: smp.sent - r.s0, ms: clock.now() - r.t0, nodes, switches: r.plan!.switches.length, maxLid: r.snap.maxLid };
        if (log.enabled('debug')) log.debug('sweep phase: light sweep', { nodes, smps: r.stats.smps, changed: res.changed, smPorts: res.smPorts.length, caPorts: r.plan!.cas.length, full: r.full, ms: ms1(r.stats.ms) });
      },
    },
  ];
}

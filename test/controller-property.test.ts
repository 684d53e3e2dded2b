/** Property test of the SM's decision core (issue #31): several `SmController`s on one simulated
 * subnet, driven by random event sequences (SMs started, killed, stopped and restarted, traps,
 * multicast changes, sweeps that fail or leave things out, polls lost, time passing), with a
 * harness that plays the shell: it carries out each action at once, delivers SMInfo Sets and trap
 * 144 to their SM (as `smInfoSetStatus` accepts them), and answers discovery and polls with the
 * SMs' states as they are. Invariants checked after every step and after the subnet settles:
 * - nothing is written to the fabric (a sweep that programs, a light sweep, a multicast update) by
 *   an SM that is not master (or discovering on its way to master, for the programming sweep);
 * - once the subnet settles, the SMs of one SM_Key have exactly one master, the best of them;
 * - every sweep requested of a master runs while it stays master, and one requested as full runs
 *   as a full heavy sweep; after a heavy sweep that left part of the fabric out, the next heavy
 *   sweep is a full one;
 * - a multicast change on a master is never lost: a multicast update or a programming heavy sweep
 *   follows while it stays master;
 * - ClientReregister is set by exactly the first programming sweep after becoming master (unless
 *   the SA kept the clients' registrations), never by a master's later sweeps;
 * - under force_heavy_sweep no light sweep runs. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { SmController, isBetter, smInfoSetStatus, smStateCode, type RemoteSm, type SmAction, type ActionOutcome } from '../src/sm/controller.js';
import { SmInfoControl } from '../src/wire/modifiers.js';

const POLL_MS = 500;
const SWEEP_MS = 1000;

interface Node {
  c: SmController;
  guid: bigint;
  priority: number;
  key: bigint;
  alive: boolean;
  /** A sweep asked of this SM while master, not yet run. */
  pending: boolean;
  /** A full heavy sweep asked of this SM while master, not yet run as a full one. */
  pendingFull: boolean;
  /** A multicast change while master, not yet programmed. */
  pendingMcast: boolean;
  /** The last heavy sweep left part of the fabric out: the next heavy one must be full. */
  fullDue: boolean;
  /** The SA holds the clients' registrations (a failover with the SA state). */
  stateKept: boolean;
  /** OpenSM's force_heavy_sweep. */
  forceHeavy: boolean;
  /** What happens while this SM's next action runs. */
  mid?: 'mcast' | 'fullTrap';
  /** A trap said a switch's port changed: the next local sweep handles it without asking the
   * controller (sm/local-sweep.ts: a flagged switch); without one, a local sweep finds nothing
   * flagged and falls back to a full heavy sweep, which decides. */
  flagged?: boolean;
}

type Op =
  | { op: 'start'; i: number }
  | { op: 'kill'; i: number }
  | { op: 'stop'; i: number }
  | { op: 'trap'; i: number; full: boolean }
  | { op: 'mcast'; i: number }
  | { op: 'advance'; ms: number }
  | { op: 'failSweeps'; n: number }
  | { op: 'losePolls'; n: number }
  /** While SM i's next action runs (before it finishes): a multicast change, or a full sweep asked for. */
  | { op: 'midAction'; i: number; what: 'mcast' | 'fullTrap' };

class Subnet {
  now = 0;
  nodes: Node[];
  /** Outcomes of the next heavy sweeps ('failed', 'incomplete'), then 'ok'. */
  private sweepOutcomes: ActionOutcome[] = [];
  private lostPolls = 0;
  violations: string[] = [];

  constructor(specs: readonly Spec[]) {
    this.nodes = specs.map((s, i) => {
      const guid = BigInt(0x100 + i);
      const key = s.foreign ? 0x99n : 1n;
      const forceHeavy = s.forceHeavy === true;
      return { c: this.controller(guid, s.priority, key, forceHeavy), guid, priority: s.priority, key, alive: false, pending: false, pendingFull: false, pendingMcast: false, fullDue: false, stateKept: s.stateKept === true, forceHeavy };
    });
  }

  private controller(guid: bigint, priority: number, smKey: bigint, forceHeavySweep: boolean): SmController {
    return new SmController({ sweepIntervalMs: SWEEP_MS, portGuid: guid, priority, smKey, pollIntervalMs: POLL_MS, pollRetries: 3, forceHeavySweep });
  }

  private forget(n: Node): void {
    n.pending = false;
    n.pendingFull = false;
    n.pendingMcast = false;
    n.flagged = false;
  }

  private info(n: Node): RemoteSm {
    return { guid: n.guid, priority: n.priority, state: smStateCode(n.c.state), actCount: 0, smKey: n.key, lid: Number(n.guid) };
  }

  private others(n: Node): RemoteSm[] {
    return this.nodes.filter((m) => m !== n && m.alive).map((m) => this.info(m));
  }

  private byGuid(g: bigint): Node | undefined {
    return this.nodes.find((m) => m.guid === g && m.alive);
  }

  apply(o: Op): void {
    switch (o.op) {
      case 'start': {
        const n = this.nodes[o.i]!;
        if (n.alive) return;
        n.c = this.controller(n.guid, n.priority, n.key, n.forceHeavy);
        n.alive = true;
        this.forget(n);
        n.fullDue = false;
        n.c.handle({ type: 'start' }, this.now);
        break;
      }
      case 'kill':
        this.nodes[o.i]!.alive = false;
        break;
      case 'stop': {
        const n = this.nodes[o.i]!;
        if (n.alive) n.c.handle({ type: 'stop' }, this.now);
        this.forget(n);
        break;
      }
      case 'trap': {
        const n = this.nodes[o.i]!;
        if (!n.alive) return;
        if (n.c.state === 'master') n.pending = true;
        if (n.c.state === 'master' && o.full) n.pendingFull = true;
        n.flagged = true;
        n.c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap', full: o.full }, this.now);
        break;
      }
      case 'mcast': {
        const n = this.nodes[o.i]!;
        if (!n.alive) return;
        if (n.c.state === 'master') n.pendingMcast = true;
        n.c.handle({ type: 'multicastChanged' }, this.now);
        break;
      }
      case 'advance':
        this.now += o.ms;
        break;
      case 'failSweeps':
        for (let k = 0; k < o.n; k++) this.sweepOutcomes.push(k % 2 ? 'incomplete' : 'failed');
        break;
      case 'losePolls':
        this.lostPolls += o.n;
        break;
      case 'midAction':
        this.nodes[o.i]!.mid = o.what;
        break;
    }
    this.pump();
  }

  /** Carry out every action due now, on every SM, until none is (actions complete at once). */
  pump(): void {
    for (let round = 0; round < 500; round++) {
      let any = false;
      for (const n of this.nodes) {
        if (!n.alive) continue;
        const a = n.c.poll(this.now);
        if (!a) continue;
        any = true;
        this.execute(n, a);
      }
      for (const n of this.nodes) if (n.alive && n.c.state !== 'master') this.forget(n);
      if (!any) return;
    }
    this.violations.push(`the SMs never went idle at t=${this.now}`);
  }

  private write(n: Node, what: string, allowed: ReadonlyArray<string>): void {
    if (!allowed.includes(n.c.state)) this.violations.push(`${what} by 0x${n.guid.toString(16)} in state ${n.c.state} at t=${this.now}`);
  }

  private execute(n: Node, a: SmAction): void {
    const done = (outcome: ActionOutcome): void => {
      // Something that arrives while the action runs (after a sweep read the groups or the fabric).
      const mid = n.mid;
      n.mid = undefined;
      if (mid === 'mcast') {
        if (n.c.state === 'master') n.pendingMcast = true;
        n.c.handle({ type: 'multicastChanged' }, this.now);
      } else if (mid === 'fullTrap') {
        if (n.c.state === 'master') n.pending = n.pendingFull = true;
        n.c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap mid-action', full: true }, this.now);
      }
      n.c.handle({ type: 'actionDone', action: a, outcome }, this.now);
    };
    switch (a.type) {
      case 'heavySweep': {
        n.pending = false;
        if (n.fullDue && !a.full) this.violations.push(`a heavy sweep by 0x${n.guid.toString(16)} after one that left part of the fabric out is not full, at t=${this.now}`);
        n.fullDue = false;
        const wasMaster = n.c.state === 'master';
        // The scope the shell runs it with (sm/sweep-run.ts): local only as master, never when full.
        const local = n.c.scopeOf(a) === 'local';
        if (local && (!wasMaster || a.full)) this.violations.push(`a local sweep by 0x${n.guid.toString(16)} ${wasMaster ? 'where a full one is due' : 'while not master'} at t=${this.now}`);
        // As the shell runs it (sm/sweep-run.ts): a local sweep of a flagged change asks the
        // controller nothing (no decide phase); the others (and a local one that finds nothing
        // flagged, or that the change is not local, modelled by its failure) read the SMs and ask.
        const outcome = this.sweepOutcomes.shift() ?? 'ok';
        const decided = !local || !n.flagged || outcome !== 'ok';
        n.flagged = false;
        if (decided) n.c.handle({ type: 'discovered', remotes: this.others(n), ownPortUp: true, stateKept: n.stateKept }, this.now);
        // A sweep that fails programs nothing: what it was to do is still owed.
        if (a.full && outcome !== 'failed') n.pendingFull = false;
        if (!decided) {
          this.write(n, 'a local sweep', ['master']);
          n.pendingMcast = false;
          if (n.c.reregister) this.violations.push(`ClientReregister set by 0x${n.guid.toString(16)}'s local sweep at t=${this.now}`);
        } else if (n.c.mayProgram) {
          this.write(n, 'a programming sweep', ['master', 'discovering']);
          if (outcome !== 'failed') n.pendingMcast = false;
          const first = !wasMaster && !n.stateKept;
          if (n.c.reregister !== first) this.violations.push(`ClientReregister ${n.c.reregister ? 'set' : 'not set'} by 0x${n.guid.toString(16)}'s programming sweep (${wasMaster ? 'already master' : 'first as master'}, state kept ${n.stateKept}) at t=${this.now}`);
        } else if (n.c.reregister) this.violations.push(`ClientReregister without programming by 0x${n.guid.toString(16)} at t=${this.now}`);
        if (outcome === 'incomplete') n.fullDue = true;
        done(outcome);
        return;
      }
      case 'lightSweep':
        this.write(n, 'a light sweep', ['master']);
        if (n.forceHeavy) this.violations.push(`a light sweep by 0x${n.guid.toString(16)} under force_heavy_sweep at t=${this.now}`);
        n.c.handle({ type: 'smsChecked', remotes: this.others(n) }, this.now);
        done('ok');
        return;
      case 'programMulticast':
        this.write(n, 'a multicast update', ['master']);
        n.pendingMcast = false;
        done('ok');
        return;
      case 'sendSmInfo': {
        const to = this.byGuid(a.to.guid);
        if (to) {
          const from: RemoteSm = { ...this.info(n), state: a.state };
          if (smInfoSetStatus(to.c.state, a.control, a.state) === 0 && !(a.control !== SmInfoControl.Acknowledge && to.key !== n.key)) {
            to.c.handle({ type: 'smInfoSet', control: a.control, from }, this.now);
          }
        }
        done('ok');
        return;
      }
      case 'pollMaster': {
        const m = this.byGuid(a.to.guid);
        if (m && this.lostPolls === 0) n.c.handle({ type: 'pollAnswered', remote: this.info(m) }, this.now);
        else {
          if (m) this.lostPolls--;
          n.c.handle({ type: 'pollFailed' }, this.now);
        }
        done('ok');
        return;
      }
      case 'notifyMaster': {
        // Trap 144 from a new standby: the master reads its SMInfo, then sweeps.
        const m = this.byGuid(a.to.guid);
        if (m) {
          m.c.handle({ type: 'smsChecked', remotes: [this.info(n)] }, this.now);
          if (m.c.state === 'master') m.pending = true;
          m.c.handle({ type: 'sweepRequested', kind: 'heavy', reason: 'trap 144' }, this.now);
        }
        done('ok');
        return;
      }
    }
  }

  /** Let time pass with nothing else happening (poll intervals, sweeps, takeovers). */
  settle(): void {
    this.lostPolls = 0;
    this.sweepOutcomes = [];
    for (let k = 0; k < 60; k++) {
      this.now += POLL_MS / 2;
      this.pump();
    }
  }
}

interface Spec {
  priority: number;
  foreign: boolean;
  stateKept?: boolean;
  forceHeavy?: boolean;
}

const arbSpecs = fc.array(
  fc.record({ priority: fc.integer({ min: 0, max: 15 }), foreign: fc.integer({ min: 0, max: 5 }).map((x) => x === 0), stateKept: fc.boolean(), forceHeavy: fc.integer({ min: 0, max: 5 }).map((x) => x === 0) }),
  { minLength: 1, maxLength: 4 },
);

function arbOps(n: number): fc.Arbitrary<Op[]> {
  const i = fc.integer({ min: 0, max: n - 1 });
  return fc.array(
    fc.oneof(
      { weight: 3, arbitrary: i.map((x): Op => ({ op: 'start', i: x })) },
      { weight: 1, arbitrary: i.map((x): Op => ({ op: 'kill', i: x })) },
      { weight: 1, arbitrary: i.map((x): Op => ({ op: 'stop', i: x })) },
      { weight: 2, arbitrary: fc.tuple(i, fc.boolean()).map(([x, full]): Op => ({ op: 'trap', i: x, full })) },
      { weight: 2, arbitrary: i.map((x): Op => ({ op: 'mcast', i: x })) },
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 3000 }).map((ms): Op => ({ op: 'advance', ms })) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 3 }).map((k): Op => ({ op: 'failSweeps', n: k })) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }).map((k): Op => ({ op: 'losePolls', n: k })) },
      { weight: 2, arbitrary: fc.tuple(i, fc.constantFrom('mcast' as const, 'fullTrap' as const)).map(([x, what]): Op => ({ op: 'midAction', i: x, what })) },
    ),
    { minLength: 1, maxLength: 30 },
  );
}

const RUNS = Number(process.env.IBSM_PROPERTY_RUNS ?? 10_000);

function check(specs: readonly Spec[], ops: readonly Op[]): void {
  const s = new Subnet(specs);
  for (const o of ops) s.apply(o);
  s.settle();
  expect(s.violations).toEqual([]);
  for (const n of s.nodes) {
    if (!n.alive || n.c.state !== 'master') continue;
    // A master keeps sweeping: the next periodic sweep is armed (traps and local sweeps never stop it).
    expect(n.c.pollAt(), `0x${n.guid.toString(16)} has its next periodic sweep armed`).toBeDefined();
    expect(n.pending, `a sweep asked of 0x${n.guid.toString(16)} ran`).toBe(false);
    expect(n.pendingFull, `a full sweep asked of 0x${n.guid.toString(16)} ran as a full one`).toBe(false);
    expect(n.pendingMcast, `a multicast change on 0x${n.guid.toString(16)} was programmed`).toBe(false);
  }
  // Settled: per SM_Key, the SMs still running (not stopped) have one master, the best of them.
  const running = s.nodes.filter((n) => n.alive && n.c.state !== 'notActive');
  const keys = new Set(running.map((n) => n.key));
  if (keys.size > 1) {
    // Two subnets' SMs on one fabric: never two masters of one key, and someone holds the fabric.
    for (const key of keys) expect(running.filter((n) => n.key === key && n.c.state === 'master').length).toBeLessThanOrEqual(1);
    expect(running.some((n) => n.c.state === 'master'), 'one of them masters').toBe(true);
    return;
  }
  for (const key of keys) {
    const mine = running.filter((n) => n.key === key);
    const masters = mine.filter((n) => n.c.state === 'master');
    expect(masters.map((n) => n.guid), `one master for key ${key}`).toHaveLength(1);
    const bestOne = mine.reduce((b, n) => (isBetter(n, b) ? n : b));
    expect(masters[0]!.guid, 'the best SM masters').toBe(bestOne.guid);
    for (const n of mine) if (n !== masters[0]) expect(n.c.state, `0x${n.guid.toString(16)} stands by`).toBe('standby');
  }
}

describe('SmController: random event sequences against the invariants (fast-check)', () => {
  it(`${RUNS.toLocaleString('en-US')} sequences: no write while not master; once settled one master per SM_Key, the best; every requested sweep runs (a full one as full); a master's periodic sweep always armed; no multicast change lost; ClientReregister on the first master sweep only`, () => {
    fc.assert(
      fc.property(arbSpecs.chain((specs) => fc.tuple(fc.constant(specs), arbOps(specs.length))), ([specs, ops]) => check(specs, ops)),
      { numRuns: RUNS, seed: Number(process.env.IBSM_PROPERTY_SEED ?? 31) },
    );
  }, 120_000);
});

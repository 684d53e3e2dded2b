/** The SM's decisions as a state machine without I/O, clock or promises (quinn-proto's
 * `Connection`, smoltcp's `poll(now)`): events go in with the time they happened, actions come
 * out one at a time, and `pollAt()` says when the controller next wants to be asked.
 *
 *   handle(event, now)  — something happened (a request, a trap, an SMInfo, an action finished)
 *   poll(now)           — the next action to carry out, when nothing is running
 *   pollAt()            — when poll() will next have something without a new event
 *
 * Every decision the SM makes is taken here, not in the shell that carries the actions out
 * (sm/sm.ts): the SMInfo state and elections (this file, with sm/election.ts), which sweep runs
 * next, heavy or light, full or local, and when multicast is reprogrammed (sm/sweep-schedule.ts,
 * which keeps work that arrives mid-action pending, so a change is never dropped), and whether a
 * programming sweep sets ClientReregister (`reregister`).
 *
 * The SMInfo states (IBA 14.4.1, OpenSM's osm_sm_state_mgr.c):
 *   NOTACTIVE   — answers SMInfo, nothing else; a DISCOVER from the master wakes it.
 *   DISCOVERING — sweeps to find the fabric and the other SMs; becomes MASTER when no better SM
 *                 is there, STANDBY under a master or a better SM.
 *   STANDBY     — polls its master's SMInfo; takes over after `pollRetries` unanswered polls, or
 *                 at once on HANDOVER (answered with ACKNOWLEDGE).
 *   MASTER      — configures the fabric; re-checks the known SMs on every light sweep, hands
 *                 over to a better SM (a better master after a partition heals, a better standby
 *                 that is current) and then stands by.
 * Better: the higher priority, then the lower port GUID (IBA 14.4.1.2). */
import { DEFAULT_SM_KEY, SmState } from '../wire/sma.js';
import { SmInfoControl } from '../wire/modifiers.js';
import { formatGuid } from '../util/guid.js';
import { best, isBetter, isForeignKey, STATE_CODE, type RemoteSm, type SmStateName } from './election.js';
import { DEFAULT_POLL_INTERVAL_MS, DEFAULT_POLL_RETRIES, type ActionOutcome, type ControllerOptions, type HeavyScope, type SmAction, type SmEvent, type Transition } from './controller-types.js';
import { SweepSchedule } from './sweep-schedule.js';

export * from './election.js';
export * from './controller-types.js';

export class SmController {
  private running?: SmAction;
  private readonly sched: SweepSchedule;
  private stopped = false;
  private smState: SmStateName = 'notActive';
  /** The current heavy sweep may program (decided at `discovered`), and sets ClientReregister. */
  private programming = false;
  private reregistering = false;
  /** Other SMs by port GUID, as last read, and when each was first seen. */
  private readonly remotes = new Map<bigint, RemoteSm>();
  private readonly firstSeen = new Map<bigint, number>();
  /** STANDBY: the SM polled, when the next poll is due, polls unanswered in a row. */
  private master?: RemoteSm;
  private nextPollAt?: number;
  private missed = 0;
  /** STANDBY: trap 144 goes to the master after the first answered poll (so a standby that syncs
   * SA state has pulled it before the master considers handing over). */
  private notifyPending = false;
  /** SMInfo Sets and traps to send, oldest first. */
  private readonly outbox: SmAction[] = [];
  /** State changes not yet taken by the shell (for log lines and metrics). */
  private readonly transitions: Transition[] = [];
  private readonly self: { guid: bigint; priority: number; smKey: bigint };
  private contested?: RemoteSm;
  /** HANDOVER came from this SM: the next sweep's discovery does not stand by for it. */
  private handoverFrom?: bigint;
  /** HANDOVER came while this SM was still discovering (it never stood by for that SM, so it
   * holds none of its SA state yet). */
  private handedWhileDiscovering?: bigint;
  /** HANDOVER came from the master this SM stood by for (a takeover from its view may follow). */
  private takeoverFrom?: bigint;
  /** The master whose view of the fabric this SM's own view is, as of the last pull. */
  private viewOf?: bigint;
  /** STANDBY: the master's view this SM last rediscovered the fabric for, and whether it is to. */
  private refreshedFor?: bigint;
  private refreshWanted = false;
  /** The running heavy sweep took over from a view (it did not rediscover the fabric). */
  private fromView = false;

  constructor(private readonly o: ControllerOptions) {
    this.self = { guid: o.portGuid ?? 0n, priority: o.priority ?? 0, smKey: o.smKey ?? DEFAULT_SM_KEY };
    this.sched = new SweepSchedule(o);
  }

  get state(): SmStateName {
    return this.smState;
  }

  /** The SM this one stands by for (STANDBY). */
  get masterSm(): RemoteSm | undefined {
    return this.smState === 'standby' ? this.master : undefined;
  }

  /** Other SMs as last read. */
  get knownSms(): readonly RemoteSm[] {
    return [...this.remotes.values()];
  }

  /** How the heavy sweep `a` (an action of this controller's) runs: a takeover from the view
   * it was handed (DISCOVERING after a HANDOVER), a local one as master unless a full one is
   * wanted or local sweeps are off, else a full one. */
  scopeOf(a: Extract<SmAction, { type: 'heavySweep' }>): HeavyScope {
    if (a.takeover) return 'takeover';
    return a.full !== true && this.smState === 'master' && this.o.localSweeps !== false ? 'local' : 'full';
  }

  /** A heavy sweep whose discovery is done may go on to program the fabric. */
  get mayProgram(): boolean {
    return this.programming;
  }

  /** The programming sweep is this SM's first as master (after starting, a failover or a
   * handover) and the SA did not keep the clients' registrations: it sets ClientReregister on
   * every end port, so they register again (OpenSM does the same on its first master sweep). */
  get reregister(): boolean {
    return this.programming && this.reregistering;
  }

  /** True when no action is running and none is pending (due timers do not count). */
  get idle(): boolean {
    return !this.running && this.sched.idle && this.outbox.length === 0;
  }

  /** The master with another SM_Key that the last heavy sweep found holding the fabric (this SM
   * did not program it), if any. */
  get contestedBy(): RemoteSm | undefined {
    return this.contested;
  }

  /** The SM that handed this one the subnet, while the heavy sweep that takes it over runs. */
  get handedOverBy(): RemoteSm | undefined {
    return this.handedWhileDiscovering === undefined ? undefined : this.remotes.get(this.handedWhileDiscovering);
  }
  /** The SM whose HANDOVER the sweep under way answers: it gave the subnet up, so its SMInfo
   * counts for nothing in this sweep's decision (and it may be gone: a master that stops). */
  get handingOver(): bigint | undefined {
    return this.handoverFrom;
  }

  handle(ev: SmEvent, now: number): void {
    if (this.stopped) return;
    switch (ev.type) {
      case 'start':
        this.enter('discovering', 'start');
        this.sched.heavy('start');
        return;
      case 'stop':
        this.stopped = true;
        this.enter('notActive', 'stopped');
        return;
      case 'sweepRequested':
        if (this.smState !== 'master' && this.smState !== 'discovering') return; // traps and requests are a master's business
        this.sched.request(ev.kind, ev.reason, ev.full);
        return;
      case 'multicastChanged':
        this.sched.multicastChanged(now);
        return;
      case 'discovered':
        this.fromView = ev.fromView === true;
        this.discovered(ev.remotes, ev.ownPortUp, now);
        this.reregistering = this.smState !== 'master' && ev.stateKept !== true;
        return;
      case 'smsChecked':
        this.checked(ev.remotes, now);
        return;
      case 'smInfoSet':
        this.smInfoSet(ev.control, ev.from, now);
        return;
      case 'pollAnswered':
        this.pollAnswered(ev.remote, now);
        return;
      case 'masterView':
        this.viewOf = ev.current ? ev.guid : undefined;
        // A standby whose view is not its master's rediscovers the fabric once per view of the
        // master's (started with it, it saw the fabric before the master's LIDs; or the master
        // swept a change since), so that a handover can be taken over from its view again.
        if (!ev.current && ev.theirs !== undefined && this.smState === 'standby' && this.master?.guid === ev.guid && ev.theirs !== this.refreshedFor) {
          this.refreshedFor = ev.theirs;
          this.refreshWanted = true;
        }
        return;
      case 'pollFailed':
        if (this.smState !== 'standby') return;
        this.missed++;
        this.afterPoll();
        return;
      case 'actionDone':
        this.done(ev.action, ev.outcome, now);
        return;
    }
  }

  private pollAnswered(remote: RemoteSm, now: number): void {
    this.note(remote, now);
    if (this.smState !== 'standby' || !this.master || remote.guid !== this.master.guid) return;
    // Alive while it is master, or a better SM we wait on (it may still be discovering). One
    // that says NOTACTIVE (stopped, or disabled) counts as a miss, as with OpenSM.
    if (remote.state === SmState.Master || (remote.state !== SmState.NotActive && isBetter(remote, this.self))) this.missed = 0;
    else this.missed++;
    this.master = remote;
    if (this.notifyPending) {
      this.notifyPending = false;
      this.outbox.push({ type: 'notifyMaster', to: remote });
    }
    this.afterPoll();
  }

  private afterPoll(): void {
    if (this.missed > (this.o.pollRetries ?? DEFAULT_POLL_RETRIES)) {
      const gone = this.master;
      this.master = undefined;
      this.nextPollAt = undefined;
      if (gone) this.remotes.delete(gone.guid);
      this.enter('discovering', `master ${formatGuid(gone?.guid ?? 0n)} stopped answering`);
      this.sched.heavy('master lost');
    }
  }

  private note(r: RemoteSm, now: number): void {
    if (r.guid === this.self.guid) return;
    this.remotes.set(r.guid, r);
    if (!this.firstSeen.has(r.guid)) this.firstSeen.set(r.guid, now);
  }

  /** Other SMs that count: a non-zero SM_Key other than ours means another subnet's SM. */
  private trusted(remotes: readonly RemoteSm[]): RemoteSm[] {
    return remotes.filter((r) => r.guid !== this.self.guid && !isForeignKey(r.smKey, this.self.smKey));
  }

  /** The SMs with another SM_Key that answer as MASTER: another subnet's SM on this fabric (or
   * one that would fight this one). This SM never programs a fabric such an SM holds (unless
   * `forceMaster`), and neither SM's SMInfo Sets move the other. */
  private foreignMasters(remotes: readonly RemoteSm[]): RemoteSm[] {
    return remotes.filter((r) => r.guid !== this.self.guid && isForeignKey(r.smKey, this.self.smKey) && r.state === SmState.Master);
  }

  private discovered(remotes: readonly RemoteSm[], ownPortUp: boolean, now: number): void {
    this.programming = false;
    if (!ownPortUp) {
      // Nothing to manage through a port that is down: look again later.
      if (this.smState === 'master') this.enter('discovering', 'own port down');
      this.sched.armLight(now);
      return;
    }
    const others = this.trusted(remotes);
    for (const r of others) this.note(r, now);
    const rogue = this.o.forceMaster ? undefined : best(this.foreignMasters(remotes));
    this.contested = rogue;
    if (rogue) {
      // Another SM_Key's master holds the fabric: write nothing, look again on the sweep interval.
      if (this.smState === 'master') this.enter('discovering', 'a master with another SM_Key holds the fabric');
      return;
    }
    // The SM that just handed over may not have said STANDBY yet: it is not a master to stand by for.
    const masters = others.filter((r) => r.state === SmState.Master && r.guid !== this.handoverFrom);
    if (this.smState === 'discovering') {
      // A master, or a better SM still deciding, is there: stand by for it.
      const deciding = others.filter((r) => r.guid !== this.handoverFrom && (r.state === SmState.Discovering || r.state === SmState.Standby) && isBetter(r, this.self));
      const lead = best(masters) ?? best(deciding);
      if (lead) {
        this.standBy(lead, now, lead.state === SmState.Master ? 'master found' : 'better SM found');
        return;
      }
      this.programming = true;
      return;
    }
    if (this.smState === 'master') {
      const better = this.handoverTarget(others, now);
      if (better) {
        this.handOver(better, now);
        return;
      }
      this.programming = true;
    }
  }

  /** A better master (two masters after a partition heals: the worse one hands over), a better
   * SM still discovering (as OpenSM does: it takes the subnet before it stands by under a worse
   * master; an ibsm one pulls this SA's state from us as it takes over), or a better standby that
   * holds our SA state. */
  private handoverTarget(others: readonly RemoteSm[], now: number): RemoteSm | undefined {
    const grace = 3 * (this.o.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    const ready = (r: RemoteSm): boolean => {
      const s = this.o.standbySync?.(r.guid) ?? 'current';
      return s === 'current' || (s === 'unknown' && now - (this.firstSeen.get(r.guid) ?? now) >= grace);
    };
    return best(others.filter((r) => isBetter(r, this.self) && (r.state === SmState.Master || r.state === SmState.Discovering || (r.state === SmState.Standby && ready(r)))));
  }

  /** HANDOVER carries the state fixed when it is decided (MASTER: the receiver accepts it only from
   * a master); this SM stands by at once, as OpenSM does. */
  private handOver(to: RemoteSm, now: number): void {
    this.outbox.push({ type: 'sendSmInfo', to, control: SmInfoControl.Handover, state: STATE_CODE[this.smState] });
    this.standBy(to, now, 'handover', true);
  }

  private checked(remotes: readonly RemoteSm[], now: number): void {
    const others = this.trusted(remotes);
    for (const r of others) this.note(r, now);
    if (this.smState !== 'master') return;
    // A better SM still discovering is handed the subnet now, before it stands by under this one;
    // a master that appeared (of this subnet or, unless forced, another SM_Key's), or a better
    // standby: a heavy sweep sorts it out (OpenSM does the same).
    const discovering = best(others.filter((r) => r.state === SmState.Discovering && isBetter(r, this.self) && (r.lid || r.path)));
    if (discovering) this.handOver(discovering, now);
    else if (others.some((r) => r.state === SmState.Master || (r.state === SmState.Standby && isBetter(r, this.self)))) this.sched.heavy('another SM found');
    else if (!this.o.forceMaster && this.foreignMasters(remotes).length) this.sched.heavy('a master with another SM_Key found');
  }

  private smInfoSet(control: number, from: RemoteSm, now: number): void {
    this.note(from, now);
    switch (control) {
      case SmInfoControl.Handover:
        this.handedOver(from);
        return;
      case SmInfoControl.Acknowledge:
        return;
      case SmInfoControl.Disable:
        this.master = undefined;
        this.nextPollAt = undefined;
        this.sched.dropSweeps();
        this.enter('notActive', 'disabled by the master');
        return;
      case SmInfoControl.Standby:
        this.sched.dropSweeps();
        this.standBy(from, now, 'told to stand by', true);
        return;
      case SmInfoControl.Discover:
        this.master = undefined;
        this.nextPollAt = undefined;
        this.enter('discovering', 'told to discover');
        this.sched.heavy('discover');
        return;
    }
  }

  private handedOver(from: RemoteSm): void {
    // ACKNOWLEDGE is a standby's answer and says STANDBY (OpenSM refuses it otherwise), also
    // from an SM handed the subnet while still discovering (OpenSM hands over to one).
    const ack: SmAction = { type: 'sendSmInfo', to: from, control: SmInfoControl.Acknowledge, state: SmState.Standby };
    if (this.smState === 'master') {
      // Two masters met and the other one gave way: sweep to take its ports over.
      this.outbox.push(ack);
      this.sched.heavy('handover');
      return;
    }
    if (this.smState === 'discovering' && from.guid === this.handoverFrom) {
      // The same HANDOVER again (the sender retried: our answer was late): acknowledged again,
      // the takeover under way goes on.
      this.outbox.push(ack);
      return;
    }
    // From the master this SM stood by for: its SA state and view pulled before the ACKNOWLEDGE.
    const fromMaster = this.smState === 'standby' && this.master?.guid === from.guid;
    this.outbox.push(fromMaster ? { ...ack, pullFirst: true } : ack);
    this.takeoverFrom = fromMaster ? from.guid : undefined;
    this.handedWhileDiscovering = this.smState === 'discovering' ? from.guid : undefined;
    this.master = undefined;
    this.nextPollAt = undefined;
    this.enter('discovering', `handover from ${formatGuid(from.guid)}`);
    this.handoverFrom = from.guid;
    this.sched.heavyNow('handover');
  }

  private standBy(master: RemoteSm, now: number, reason: string, quiet = false): void {
    this.master = master;
    this.viewOf = undefined;
    this.refreshedFor = undefined;
    this.refreshWanted = false;
    this.missed = 0;
    this.nextPollAt = now + (this.o.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    this.sched.standingBy();
    const entering = this.smState !== 'standby';
    this.enter('standby', reason, master);
    this.notifyPending = entering && !quiet;
  }

  private done(a: SmAction, outcome: ActionOutcome, now: number): void {
    if (this.running === a) this.running = undefined;
    switch (a.type) {
      case 'heavySweep': {
        const programmed = this.programming;
        this.programming = false;
        const fromView = this.fromView;
        this.fromView = false;
        this.handoverFrom = undefined;
        this.handedWhileDiscovering = undefined;
        this.takeoverFrom = undefined;
        const failed = outcome === 'failed';
        const first = !this.sched.haveSnapshot || this.smState !== 'master';
        const discovering = this.smState === 'discovering';
        const master = this.smState === 'master';
        if (programmed && !failed) this.enter('master', a.reason === 'start' ? 'no better SM' : a.reason);
        this.sched.heavyDone(now, { full: a.full === true, programmed, first, failed, incomplete: outcome === 'incomplete', fromView, discovering, master });
        return;
      }
      case 'lightSweep':
        this.sched.lightDone(now, outcome === 'changed');
        return;
      case 'pollMaster':
        this.nextPollAt = now + (this.o.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
        return;
      default:
        return;
    }
  }

  /** The next action to carry out, or undefined (something runs, or nothing is due). SMInfo
   * messages first, then heavy sweeps (they also program multicast), multicast, a due light
   * sweep; a standby only polls. */
  poll(now: number): SmAction | undefined {
    if (this.stopped || this.running) return undefined;
    let a: SmAction | undefined = this.outbox.shift();
    if (!a) {
      if (this.smState === 'standby') a = this.pollDue(now);
      else {
        const takeover = this.takeoverFrom !== undefined && this.viewOf === this.takeoverFrom;
        a = this.sched.next(now, { master: this.smState === 'master', discovering: this.smState === 'discovering', takeover });
      }
    }
    this.running = a;
    return a;
  }

  private pollDue(now: number): SmAction | undefined {
    if (this.refreshWanted) {
      // A discovery only: the SMInfo it reads finds the master, and this SM stays standing by.
      this.refreshWanted = false;
      return { type: 'heavySweep', reason: "refresh the standby's view", full: true };
    }
    if (!this.master || this.nextPollAt === undefined || now < this.nextPollAt) return undefined;
    this.nextPollAt = undefined;
    return { type: 'pollMaster', to: this.master };
  }

  /** When poll() will have an action without a new event (the next light sweep or poll), if ever. */
  pollAt(): number | undefined {
    if (this.stopped || this.running) return undefined;
    if (this.smState === 'standby') return this.refreshWanted ? 0 : this.nextPollAt;
    if (this.smState === 'notActive') return undefined;
    return this.sched.dueAt;
  }

  /** State changes since the last call, oldest first. */
  takeTransitions(): Transition[] {
    return this.transitions.splice(0);
  }

  private enter(to: SmStateName, reason: string, master?: RemoteSm): void {
    if (this.smState === to) return;
    this.transitions.push({ from: this.smState, to, reason, master });
    this.smState = to;
  }
}

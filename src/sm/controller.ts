/** The SM's decisions as a state machine without I/O, clock or promises (quinn-proto's
 * `Connection`, smoltcp's `poll(now)`): events go in with the time they happened, actions come
 * out one at a time, and `pollAt()` says when the controller next wants to be asked.
 *
 *   handle(event, now)  — something happened (a request, a trap, an SMInfo, an action finished)
 *   poll(now)           — the next action to carry out, when nothing is running
 *   pollAt()            — when poll() will next have something without a new event
 *
 * Work that arrives while an action runs is kept in a pending set and drained when the SM is idle,
 * so a change that arrives mid-sweep is never dropped: a multicast change during a light sweep is
 * programmed right after it, a trap during a heavy sweep gives one more heavy sweep.
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

export type SweepKind = 'heavy' | 'light';

export type SmStateName = 'notActive' | 'discovering' | 'standby' | 'master';

/** Another SM as its SMInfo showed it. */
export interface RemoteSm {
  guid: bigint;
  priority: number;
  /** SMInfo SmState (wire/sma.ts SmState). */
  state: number;
  actCount: number;
  smKey: bigint;
  /** Its port's LID, when known (for LID-routed polls and trap 144). */
  lid?: number;
  /** The DR path to its port, when known. */
  path?: readonly number[];
}

export type SmAction =
  /** Discover the fabric and the other SMs; program it when the controller says this SM masters.
   * `takeover`: handed the subnet by the master whose view of the fabric this SM's own discovery
   * is (same fingerprint, sent with the SA state): take it over from that view (every port told
   * this SM is its master, no rediscovery first) when the fabric shows no change since; a full
   * heavy sweep follows as master and verifies. `full`: rediscover the whole fabric (no local
   * sweep). */
  | { type: 'heavySweep'; reason: string; takeover?: boolean; full?: boolean }
  /** Check for changes (SwitchInfo PortStateChange, CA port states and IsSM bits, known SMs). */
  | { type: 'lightSweep' }
  /** Recompute the multicast trees over the current snapshot and write the MFT blocks that differ. */
  | { type: 'programMulticast' }
  /** SubnSet(SMInfo) with a control modifier (HANDOVER, ACKNOWLEDGE) to another SM. `state`: the
   * SmState the Set carries, fixed when the controller decides: a HANDOVER says MASTER although
   * the sender stands by by the time it goes out, an ACKNOWLEDGE says STANDBY (OpenSM and ibsm
   * refuse either otherwise). `pullFirst` (an ACKNOWLEDGE to the master this SM stood by for):
   * pull its SA state and its view's fingerprint before the Set lets it go (it serves them until
   * then), then say whether this SM's view is that master's (`masterView`). */
  | { type: 'sendSmInfo'; to: RemoteSm; control: number; state: number; pullFirst?: boolean }
  /** SubnGet(SMInfo) to the master this standby watches. */
  | { type: 'pollMaster'; to: RemoteSm }
  /** Trap 144 to the master: this SM is a standby now. */
  | { type: 'notifyMaster'; to: RemoteSm };

/** How an action ended. A light sweep that found a change says `changed`. `incomplete`: a heavy
 * sweep programmed the fabric but left some nodes, links or writes out (they failed); the next
 * sweep due is a heavy one, to try them again. */
export type ActionOutcome = 'ok' | 'changed' | 'failed' | 'incomplete';

/** When light sweeps are off, a sweep that left something out is tried again after this long. */
export const RETRY_SWEEP_MS = 10_000;

export type SmEvent =
  | { type: 'start' }
  | { type: 'stop' }
  /** A sweep asked for by an operator, a trap or a test. */
  | { type: 'sweepRequested'; kind: SweepKind; reason: string }
  /** The SA's multicast groups changed (join, leave, group created or deleted). */
  | { type: 'multicastChanged' }
  /** A heavy sweep's discovery is done: the other SMs it found (SMInfo read), and whether this
   * SM's own port is up. The shell then asks `mayProgram`.
   * `fromView`: the sweep is a takeover that did not rediscover (its view is the old master's). */
  | { type: 'discovered'; remotes: readonly RemoteSm[]; ownPortUp: boolean; fromView?: boolean }
  /** A light sweep re-read the known SMs (and any new IsSM port). */
  | { type: 'smsChecked'; remotes: readonly RemoteSm[] }
  /** A SubnSet(SMInfo) from another SM that `smInfoSetStatus` accepted. */
  | { type: 'smInfoSet'; control: number; from: RemoteSm }
  /** The master answered (or did not answer) a poll. */
  | { type: 'pollAnswered'; remote: RemoteSm }
  | { type: 'pollFailed' }
  /** After a pull of the master's SA state: whether this SM's own view of the fabric (its last
   * discovery) has the fingerprint of the master's (sa/sync.ts, model/snapshot.ts), and that
   * fingerprint (`theirs`, when the master sent one). */
  | { type: 'masterView'; guid: bigint; current: boolean; theirs?: bigint }
  | { type: 'actionDone'; action: SmAction; outcome: ActionOutcome };

export interface ControllerOptions {
  /** Light sweep interval in ms; 0 disables light sweeps. */
  sweepIntervalMs: number;
  /** This SM: its port GUID, priority (0-15) and SM_Key. */
  guid?: bigint;
  priority?: number;
  smKey?: bigint;
  /** A standby polls its master this often, and takes over after this many polls in a row go
   * unanswered. */
  pollIntervalMs?: number;
  pollRetries?: number;
  /** What a standby holds of this master's SA state: 'current', 'behind', or 'unknown' (it never
   * asked: an SM that does not sync, e.g. OpenSM). A master hands over to a current standby, and
   * to an unknown one only after it has been seen for three poll intervals (an ibsm standby has
   * pulled by then). Default: every standby is current. */
  standbySync?: (guid: bigint) => 'current' | 'behind' | 'unknown';
  /** Program the fabric even while an SM with another SM_Key answers as MASTER (an operator's
   * explicit choice: the two SMs then overwrite each other). Default false: such a fabric is
   * left to that SM, and checked again on every sweep interval. */
  forceMaster?: boolean;
}

export const DEFAULT_POLL_INTERVAL_MS = 500;
export const DEFAULT_POLL_RETRIES = 3;

export interface Transition {
  from: SmStateName;
  to: SmStateName;
  reason: string;
  /** Entering STANDBY: the SM it stands by for. */
  master?: RemoteSm;
}

const STATE_CODE: Record<SmStateName, number> = { notActive: SmState.NotActive, discovering: SmState.Discovering, standby: SmState.Standby, master: SmState.Master };

export function smStateCode(s: SmStateName): number {
  return STATE_CODE[s];
}

/** IBA 14.4.1.2: the higher priority, then the lower GUID. */
export function isBetter(a: { priority: number; guid: bigint }, b: { priority: number; guid: bigint }): boolean {
  return a.priority !== b.priority ? a.priority > b.priority : a.guid < b.guid;
}

/** An SM_Key that makes its SM another subnet's: non-zero and not ours (a zero key is what an
 * SM shows a requester it does not trust, so it counts as ours). */
export function isForeignKey(theirs: bigint, ours: bigint): boolean {
  return theirs !== 0n && theirs !== ours;
}

/** The best of some SMs. */
export function best(sms: readonly RemoteSm[]): RemoteSm | undefined {
  let b: RemoteSm | undefined;
  for (const r of sms) if (!b || isBetter(r, b)) b = r;
  return b;
}

/** Status for a SubnSet(SMInfo) received in `state` from an SM in SmState `senderState`: 0 to
 * accept, 7 (OpenSM's literal: invalid value) to refuse. HANDOVER, DISABLE, STANDBY and DISCOVER
 * come only from a master; ACKNOWLEDGE only from a standby; each only where it means something. */
export function smInfoSetStatus(state: SmStateName, control: number, senderState: number): number {
  const ok = (() => {
    switch (control) {
      case SmInfoControl.Handover:
        return senderState === SmState.Master && state !== 'notActive';
      case SmInfoControl.Acknowledge:
        return senderState === SmState.Standby;
      case SmInfoControl.Disable:
      case SmInfoControl.Standby:
        return senderState === SmState.Master && state !== 'notActive';
      case SmInfoControl.Discover:
        return senderState === SmState.Master;
      default:
        return false;
    }
  })();
  return ok ? 0 : 7;
}

export class SmController {
  private running?: SmAction;
  private heavyReason?: string;
  private lightWanted = false;
  private mcastWanted = false;
  private nextLightAt?: number;
  /** The last heavy sweep left something out (or failed): the next one due is heavy. */
  private retryHeavy = false;
  private stopped = false;
  private smState: SmStateName = 'notActive';
  /** Set once a heavy sweep programmed the fabric: light sweeps and multicast need a snapshot. */
  private haveSnapshot = false;
  /** The current heavy sweep may program (decided at `discovered`). */
  private programming = false;
  /** Other SMs by port GUID, as last read. */
  private readonly remotes = new Map<bigint, RemoteSm>();
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

  constructor(private readonly o: ControllerOptions) {
    this.self = { guid: o.guid ?? 0n, priority: o.priority ?? 0, smKey: o.smKey ?? DEFAULT_SM_KEY };
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

  /** A heavy sweep whose discovery is done may go on to program the fabric. */
  get mayProgram(): boolean {
    return this.programming;
  }

  /** True when no action is running and none is pending (due timers do not count). */
  get idle(): boolean {
    return !this.running && this.heavyReason === undefined && !this.lightWanted && !(this.mcastWanted && this.haveSnapshot) && this.outbox.length === 0;
  }

  handle(ev: SmEvent, now: number): void {
    if (this.stopped) return;
    switch (ev.type) {
      case 'start':
        this.enter('discovering', 'start');
        this.heavyReason ??= 'start';
        return;
      case 'stop':
        this.stopped = true;
        this.enter('notActive', 'stopped');
        return;
      case 'sweepRequested':
        if (this.smState !== 'master' && this.smState !== 'discovering') return; // traps and requests are a master's business
        if (ev.kind === 'heavy' || !this.haveSnapshot) this.heavyReason ??= ev.reason;
        else this.lightWanted = true;
        return;
      case 'multicastChanged':
        this.mcastWanted = true;
        return;
      case 'discovered':
        this.fromView = ev.fromView === true;
        this.discovered(ev.remotes, ev.ownPortUp, now);
        return;
      case 'smsChecked':
        this.checked(ev.remotes, now);
        return;
      case 'smInfoSet':
        this.smInfoSet(ev.control, ev.from, now);
        return;
      case 'pollAnswered':
        this.note(ev.remote, now);
        if (this.smState !== 'standby' || !this.master || ev.remote.guid !== this.master.guid) return;
        // Alive while it is master, or a better SM we wait on (it may still be discovering). One
        // that says NOTACTIVE (stopped, or disabled) counts as a miss, as with OpenSM.
        if (ev.remote.state === SmState.Master || (ev.remote.state !== SmState.NotActive && isBetter(ev.remote, this.self))) this.missed = 0;
        else this.missed++;
        this.master = ev.remote;
        if (this.notifyPending) {
          this.notifyPending = false;
          this.outbox.push({ type: 'notifyMaster', to: ev.remote });
        }
        this.afterPoll(now);
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
        this.afterPoll(now);
        return;
      case 'actionDone':
        this.done(ev.action, ev.outcome, now);
        return;
    }
  }

  private afterPoll(now: number): void {
    if (this.missed > (this.o.pollRetries ?? DEFAULT_POLL_RETRIES)) {
      const gone = this.master;
      this.master = undefined;
      this.nextPollAt = undefined;
      if (gone) this.remotes.delete(gone.guid);
      this.enter('discovering', `master ${formatGuid((gone?.guid ?? 0n))} stopped answering`);
      this.heavyReason ??= 'master lost';
    }
  }

  private note(r: RemoteSm, now: number): void {
    if (r.guid === this.self.guid) return;
    this.remotes.set(r.guid, r);
    if (!this.firstSeen.has(r.guid)) this.firstSeen.set(r.guid, now);
  }
  /** When each other SM was first seen. */
  private readonly firstSeen = new Map<bigint, number>();

  /** Other SMs that count: a non-zero SM_Key other than ours means another subnet's SM. */
  private trusted(remotes: readonly RemoteSm[]): RemoteSm[] {
    return remotes.filter((r) => r.guid !== this.self.guid && !this.isForeign(r));
  }

  private isForeign(r: RemoteSm): boolean {
    return isForeignKey(r.smKey, this.self.smKey);
  }

  /** The SMs with another SM_Key that answer as MASTER: another subnet's SM on this fabric (or
   * one that would fight this one). This SM never programs a fabric such an SM holds (unless
   * `forceMaster`), and neither SM's SMInfo Sets move the other. */
  private foreignMasters(remotes: readonly RemoteSm[]): RemoteSm[] {
    return remotes.filter((r) => r.guid !== this.self.guid && this.isForeign(r) && r.state === SmState.Master);
  }

  /** The master with another SM_Key that the last heavy sweep found holding the fabric (this SM
   * did not program it), if any. */
  get contestedBy(): RemoteSm | undefined {
    return this.contested;
  }
  private contested?: RemoteSm;

  private discovered(remotes: readonly RemoteSm[], ownPortUp: boolean, now: number): void {
    this.programming = false;
    if (!ownPortUp) {
      // Nothing to manage through a port that is down: look again later.
      if (this.smState === 'master') this.enter('discovering', 'own port down');
      this.armLight(now);
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

  /** The SM that handed this one the subnet, while the heavy sweep that takes it over runs. */
  get handedOverBy(): RemoteSm | undefined {
    return this.handedWhileDiscovering === undefined ? undefined : this.remotes.get(this.handedWhileDiscovering);
  }
  /** The SM whose HANDOVER the sweep under way answers: it gave the subnet up, so its SMInfo
   * counts for nothing in this sweep's decision (and it may be gone: a master that stops). */
  get handingOver(): bigint | undefined {
    return this.handoverFrom;
  }
  /** HANDOVER came while this SM was still discovering (it never stood by for that SM, so it
   * holds none of its SA state yet). */
  private handedWhileDiscovering?: bigint;

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
    else if (others.some((r) => r.state === SmState.Master || (r.state === SmState.Standby && isBetter(r, this.self)))) this.heavyReason ??= 'another SM found';
    else if (!this.o.forceMaster && this.foreignMasters(remotes).length) this.heavyReason ??= 'a master with another SM_Key found';
  }

  private smInfoSet(control: number, from: RemoteSm, now: number): void {
    this.note(from, now);
    switch (control) {
      case SmInfoControl.Handover: {
        // ACKNOWLEDGE is a standby's answer and says STANDBY (OpenSM refuses it otherwise), also
        // from an SM handed the subnet while still discovering (OpenSM hands over to one).
        const ack: SmAction = { type: 'sendSmInfo', to: from, control: SmInfoControl.Acknowledge, state: SmState.Standby };
        if (this.smState === 'master') {
          // Two masters met and the other one gave way: sweep to take its ports over.
          this.outbox.push(ack);
          this.heavyReason ??= 'handover';
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
        this.heavyReason = 'handover';
        return;
      }
      case SmInfoControl.Acknowledge:
        return;
      case SmInfoControl.Disable:
        this.master = undefined;
        this.nextPollAt = undefined;
        this.heavyReason = undefined;
        this.lightWanted = false;
        this.enter('notActive', 'disabled by the master');
        return;
      case SmInfoControl.Standby:
        this.heavyReason = undefined;
        this.lightWanted = false;
        this.standBy(from, now, 'told to stand by', true);
        return;
      case SmInfoControl.Discover:
        this.master = undefined;
        this.nextPollAt = undefined;
        this.enter('discovering', 'told to discover');
        this.heavyReason ??= 'discover';
        return;
    }
  }
  /** HANDOVER came from this SM: the next sweep's discovery does not stand by for it. */
  private handoverFrom?: bigint;
  /** HANDOVER came from the master this SM stood by for (a takeover from its view may follow). */
  private takeoverFrom?: bigint;
  /** The master whose view of the fabric this SM's own view is, as of the last pull. */
  private viewOf?: bigint;
  /** The next heavy sweep rediscovers the whole fabric (it verifies a takeover from a view). */
  private fullNext = false;
  /** STANDBY: the master's view this SM last rediscovered the fabric for, and whether it is to. */
  private refreshedFor?: bigint;
  private refreshWanted = false;
  /** The running heavy sweep took over from a view (it did not rediscover the fabric). */
  private fromView = false;

  private standBy(master: RemoteSm, now: number, reason: string, quiet = false): void {
    this.master = master;
    this.viewOf = undefined;
    this.refreshedFor = undefined;
    this.refreshWanted = false;
    this.missed = 0;
    this.nextPollAt = now + (this.o.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    this.nextLightAt = undefined;
    this.lightWanted = false;
    this.mcastWanted = false;
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
        if (outcome !== 'failed' && programmed) {
          const first = !this.haveSnapshot || this.smState !== 'master';
          this.haveSnapshot = true;
          this.enter('master', a.reason === 'start' ? 'no better SM' : a.reason);
          if (first || this.nextLightAt === undefined) this.armLight(now);
          if (outcome === 'incomplete') this.retryLater(now);
          // Taken over from a view: the whole fabric is rediscovered at once, as master, and
          // whatever changed is programmed (on an unchanged fabric that sweep writes nothing).
          if (fromView) {
            this.heavyReason ??= 'verify the takeover';
            this.fullNext = true;
          }
        } else if (this.smState === 'discovering') {
          // Retry on the sweep interval (after RETRY_SWEEP_MS without light sweeps).
          this.nextLightAt = now + (this.o.sweepIntervalMs > 0 ? this.o.sweepIntervalMs : RETRY_SWEEP_MS);
        } else if (outcome === 'failed' && this.smState === 'master') {
          this.retryLater(now);
        }
        return;
      }
      case 'lightSweep':
        if (outcome === 'changed') this.heavyReason ??= 'light sweep found a change';
        this.armLight(now);
        return;
      case 'pollMaster':
        this.nextPollAt = now + (this.o.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
        return;
      default:
        return;
    }
  }

  /** The next sweep due is a heavy one; without light sweeps, one is due after RETRY_SWEEP_MS. */
  private retryLater(now: number): void {
    this.retryHeavy = true;
    this.nextLightAt ??= now + (this.o.sweepIntervalMs > 0 ? this.o.sweepIntervalMs : RETRY_SWEEP_MS);
  }

  private armLight(now: number): void {
    this.nextLightAt = this.o.sweepIntervalMs > 0 ? now + this.o.sweepIntervalMs : undefined;
  }

  /** The next action to carry out, or undefined (something runs, or nothing is due). SMInfo
   * messages first, then heavy sweeps (they also program multicast), multicast, a due light
   * sweep; a standby only polls. */
  poll(now: number): SmAction | undefined {
    if (this.stopped || this.running) return undefined;
    let a: SmAction | undefined = this.outbox.shift();
    if (!a) a = this.smState === 'standby' ? this.pollDue(now) : this.sweepDue(now);
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

  private sweepDue(now: number): SmAction | undefined {
    if (this.smState === 'notActive') return undefined;
    if (this.nextLightAt !== undefined && now >= this.nextLightAt) {
      this.nextLightAt = undefined;
      if (this.retryHeavy && this.smState === 'master') this.heavyReason ??= 'retry what the last sweep left out';
      else if (this.haveSnapshot && this.smState === 'master') this.lightWanted = true;
      else if (this.smState === 'discovering') this.heavyReason ??= 'retry';
    }
    if (this.heavyReason !== undefined) {
      const a: SmAction = { type: 'heavySweep', reason: this.heavyReason };
      if (this.smState === 'discovering' && this.takeoverFrom !== undefined && this.viewOf === this.takeoverFrom) a.takeover = true;
      if (this.fullNext) a.full = true;
      this.fullNext = false;
      this.heavyReason = undefined;
      this.retryHeavy = false;
      // The heavy sweep reads the groups when it programs the MFTs, and everything a light sweep
      // would look at: neither is needed after it.
      this.mcastWanted = false;
      this.lightWanted = false;
      return a;
    }
    if (this.smState !== 'master') return undefined;
    if (this.mcastWanted && this.haveSnapshot) {
      this.mcastWanted = false;
      return { type: 'programMulticast' };
    }
    if (this.lightWanted) {
      this.lightWanted = false;
      return { type: 'lightSweep' };
    }
    return undefined;
  }

  /** When poll() will have an action without a new event (the next light sweep or poll), if ever. */
  pollAt(): number | undefined {
    if (this.stopped || this.running) return undefined;
    if (this.smState === 'standby') return this.refreshWanted ? 0 : this.nextPollAt;
    if (this.smState === 'notActive') return undefined;
    return this.nextLightAt;
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

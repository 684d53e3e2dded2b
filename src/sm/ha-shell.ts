/** The SMInfo side of the SM's shell (sm/sm.ts): it carries out the controller's actions between
 * SMs (poll the master, send HANDOVER or ACKNOWLEDGE, trap 144 to the master), reads the other
 * SMs for the controller, tells it whether this standby's view of the fabric is its master's, and
 * runs the two exchanges the controller's single action at a time cannot: a master handing over
 * as it stops, and a master deciding about an SM trap 144 just announced. Decides nothing. */
import type { SMInfo } from '../wire/sma.js';
import { PortCap, PortInfo, SmState } from '../wire/sma.js';
import { portInfoMod, SmInfoControl } from '../wire/modifiers.js';
import { SmpAttr } from '../wire/mad.js';
import type { TimerHandle } from '../util/clock.js';
import { fabricFingerprint, type DiscoveryResult } from '../model/snapshot.js';
import { best, isForeignKey, type RemoteSm, type SmAction, type SmController, type SmEvent } from './controller.js';
import { notifyMaster, pollSm, querySms, sendSmInfo, type SmPort } from './sminfo.js';
import type { SmOptions } from './sm-options.js';

/** What the SMInfo side needs of the SubnetManager. */
export interface HaHost {
  readonly o: SmOptions;
  readonly ctl: SmController;
  readonly smKey: bigint;
  stopped(): boolean;
  /** This SM's SMInfo, with its SM_Key (for a trusted SM). */
  trustedSmInfo(): SMInfo;
  /** This SM's own discovery (its last heavy sweep's, even as standby). */
  ownDisc(): DiscoveryResult | undefined;
  /** The LID of this SM's port (0 when unknown). */
  ownLid(): number;
  /** Feed the controller an event and carry on (start its next action). */
  event(ev: SmEvent): void;
  logTransitions(): void;
}

type HaAction = Extract<SmAction, { type: 'pollMaster' | 'sendSmInfo' | 'notifyMaster' }>;

export class HaShell {
  /** `ownDisc`'s fingerprint, computed when first asked (a standby's view is not changed). */
  private ownView?: { disc: DiscoveryResult; fp: bigint };
  /** What the last of the two view lines said (undefined: neither since standing by). */
  private viewSaid?: boolean;
  private ackWaiter?: { guid: bigint; resolve: () => void };
  private deciding = 0;
  private decidedWaiters: Array<() => void> = [];
  private afterHandoverSent: Array<() => void> = [];

  constructor(private readonly h: HaHost) {}

  private get o(): SmOptions {
    return this.h.o;
  }

  private now(): number {
    return this.o.clock.now();
  }

  /** Standing by again: the view lines are said afresh. */
  standingBy(): void {
    this.viewSaid = undefined;
  }

  /** An SMInfo Set from `guid` said ACKNOWLEDGE: the standby handed over to as this SM stops took it. */
  acknowledged(guid: bigint): void {
    if (this.ackWaiter?.guid === guid) this.ackWaiter.resolve();
  }

  async run(a: HaAction): Promise<void> {
    if (a.type === 'pollMaster') return this.pollMaster(a.to);
    if (a.type === 'sendSmInfo') return this.sendSmInfo(a);
    try {
      await notifyMaster(this.o.smp, a.to, this.h.ownLid(), PortCap.IsSM);
    } catch (e) {
      this.o.log.debug('trap 144 to the master not delivered', { to: a.to.guid, lid: a.to.lid, error: (e as Error).message });
    }
  }

  private async pollMaster(to: RemoteSm): Promise<void> {
    const ctl = this.h.ctl;
    try {
      const r = await pollSm(this.o.smp, to);
      // Found before it had a LID: the master's LID is what it programmed as MasterSMLID here.
      const lid = r.lid ?? to.lid ?? (await this.masterSmLidHere());
      const remote = { ...r, lid: lid || undefined, path: to.path };
      await this.o.onMasterPolled?.(remote).catch((e: unknown) => this.o.log.warn('SA state not pulled from the master', { master: remote.guid, lid: remote.lid, error: (e as Error).message }));
      this.viewChecked(remote.guid);
      ctl.handle({ type: 'pollAnswered', remote }, this.now());
    } catch (e) {
      this.o.log.debug('master poll unanswered', { master: to.guid, lid: to.lid, error: (e as Error).message });
      ctl.handle({ type: 'pollFailed' }, this.now());
    }
  }

  private async sendSmInfo(a: Extract<SmAction, { type: 'sendSmInfo' }>): Promise<void> {
    // An SM that sent us a directed-route Set before we knew it (OpenSM hands over to an SM
    // still discovering) came with neither LID nor path: the sweep since then has read it.
    const to = a.to.lid || a.to.path ? a.to : (this.h.ctl.knownSms.find((r) => r.guid === a.to.guid) ?? a.to);
    if (!to.lid && !to.path) {
      this.o.log.warn('SMInfo Set not sent: no route to the SM', { to: a.to.guid, control: a.control });
      return;
    }
    if (a.pullFirst) {
      // The master that handed over serves its state until it has the ACKNOWLEDGE.
      // Not pulled: what was pulled before may be stale, so no takeover from the view.
      const pulled = await (this.o.onHandedOver?.(to) ?? Promise.resolve()).then(
        () => true,
        (e: unknown) => (this.o.log.warn('SA state not pulled from the master', { master: to.guid, lid: to.lid, error: (e as Error).message }), false),
      );
      this.viewChecked(to.guid, pulled);
    }
    const sent = sendSmInfo(this.o.smp, to, a.control, { ...this.h.trustedSmInfo(), smState: a.state }).catch((e: unknown) => {
      this.o.log.warn('SMInfo Set not delivered', { to: a.to.guid, lid: a.to.lid, control: a.control, error: (e as Error).message });
    });
    // An ACKNOWLEDGE is not waited for: the SM that handed over may exit before it answers,
    // and the takeover does not depend on its answer.
    if (a.control !== SmInfoControl.Acknowledge) await sent;
    if (a.control === SmInfoControl.Handover) this.handoverSent();
  }

  /** After a pull of the master's state: tell the controller whether this SM's own view of the
   * fabric is the master's (never when the pull failed: `fresh` false). */
  private viewChecked(master: bigint, fresh = true): void {
    const theirs = fresh ? this.o.masterView?.() : undefined;
    const d = this.h.ownDisc();
    if (d && theirs !== undefined && this.ownView?.disc !== d) this.ownView = { disc: d, fp: fabricFingerprint(d.fabric) };
    const current = d !== undefined && theirs !== undefined && this.ownView?.fp === theirs;
    if (current !== (this.viewSaid ?? false) && (current || this.viewSaid !== undefined)) {
      if (current) this.o.log.info("this standby's view of the fabric is the master's: a handover is taken over from it", { master });
      else this.o.log.info("this standby's view of the fabric is no longer the master's: a handover is followed by a full heavy sweep", { master });
      this.viewSaid = current;
    }
    this.h.ctl.handle({ type: 'masterView', guid: master, current, ...(theirs !== undefined ? { theirs } : {}) }, this.now());
  }

  /** MasterSMLID of this SM's own port (0 when unknown). */
  private async masterSmLidHere(): Promise<number> {
    const d = this.h.ownDisc();
    if (!d) return 0;
    try {
      return PortInfo.decode(await this.o.smp.getDr([], SmpAttr.PortInfo, portInfoMod(d.smPort))).masterSmLid;
    } catch {
      return 0;
    }
  }

  /** A light sweep's re-check of the other SMs: the known ones and any port newly showing IsSM. */
  async checkSms(fresh: readonly SmPort[]): Promise<void> {
    const ports = new Map<bigint, SmPort>();
    for (const r of this.h.ctl.knownSms) if (r.path) ports.set(r.guid, { guid: r.guid, lid: r.lid ?? 0, path: r.path });
    for (const p of fresh) ports.set(p.guid, p);
    if (!ports.size) return;
    const remotes = await querySms(this.o.smp, [...ports.values()]);
    this.h.ctl.handle({ type: 'smsChecked', remotes }, this.now());
  }

  /** A master that stops hands the subnet to its best standby first (one that holds this SA's
   * state if there is one), so the standby masters at once instead of after its polls of this SM
   * go unanswered. Resolves once that standby acknowledged (or did not, within `timeoutMs`). */
  async handOverOnStop(timeoutMs: number): Promise<RemoteSm | undefined> {
    const { ctl } = this.h;
    // As they are now (the last sweep may have seen one still discovering).
    const known = await Promise.all(ctl.knownSms.filter((r) => r.lid || r.path).map((r) => pollSm(this.o.smp, r).then((x): RemoteSm => ({ ...x, lid: r.lid ?? x.lid, path: r.path }), () => undefined)));
    const standbys = known.filter((r): r is RemoteSm => r !== undefined && r.state === SmState.Standby && !isForeignKey(r.smKey, this.h.smKey));
    const current = standbys.filter((r) => (this.o.standbySync?.(r.guid) ?? 'current') === 'current');
    const to = best(current.length ? current : standbys);
    if (!to) return undefined;
    this.o.log.info('stopping: handover to {master}', { master: to.guid, lid: to.lid ?? 0 });
    // From here this SM answers SMInfo as NOTACTIVE: the new master's first sweep must not find a
    // better master still here and hand the subnet straight back (OpenSM would).
    ctl.handle({ type: 'stop' }, this.now());
    this.h.logTransitions();
    const clock = this.o.clock;
    let timer: TimerHandle | undefined;
    const acked = new Promise<void>((resolve) => {
      this.ackWaiter = { guid: to.guid, resolve };
      timer = clock.setTimeout(resolve, timeoutMs);
    });
    try {
      await sendSmInfo(this.o.smp, to, SmInfoControl.Handover, { ...this.h.trustedSmInfo(), smState: SmState.Master });
      await acked;
      // The answer to the ACKNOWLEDGE goes out at the end of this event-loop turn: let it, before
      // the caller closes the port (the new master would retry it, and log it undelivered).
      await new Promise<void>((r) => clock.defer(r));
    } catch (e) {
      this.o.log.warn('SMInfo Set not delivered', { to: to.guid, lid: to.lid, control: SmInfoControl.Handover, error: (e as Error).message });
    } finally {
      if (timer) clock.clearTimeout(timer);
      this.ackWaiter = undefined;
    }
    return to;
  }

  /** Trap 144 says the port at `lid` advertises an SM: as master, read its SMInfo at once (a
   * better SM still discovering is handed the subnet before it stands by under this one, as
   * OpenSM does). The caller then asks for a full heavy sweep. */
  async smAnnounced(lid: number): Promise<void> {
    const { ctl } = this.h;
    if (ctl.state !== 'master' || !lid) return;
    const release = this.hold();
    try {
      const r = await pollSm(this.o.smp, { guid: 0n, lid, priority: 0, state: 0, actCount: 0, smKey: 0n });
      if (!this.h.stopped()) this.h.event({ type: 'smsChecked', remotes: [{ ...r, lid, path: undefined }] });
      // Handing over: held until the HANDOVER is on its way (the sendSmInfo action releases it).
      if (!this.h.stopped() && ctl.state !== 'master') this.afterHandoverSent.push(release);
      else release();
    } catch (e) {
      release();
      this.o.log.debug('SMInfo not read', { lid, error: (e as Error).message });
    }
  }

  /** While this master decides about an SM a trap 144 just announced (reads its SMInfo, hands it
   * the subnet), SMInfo Gets wait for the decision (sm/handlers.ts, bounded): a better SM still
   * discovering then learns of the HANDOVER before it learns of a MASTER it would stand by under.
   * (A STANDBY OpenSM that finds a worse master sends it trap 144 and counts it outstanding until
   * repressed; under ibsim no repress ever arrives, so it could never sweep after the handover:
   * docs/ibsim-notes.md.) `undefined` when nothing is being decided. */
  whenDecided(): Promise<void> | undefined {
    return this.deciding ? new Promise((r) => this.decidedWaiters.push(r)) : undefined;
  }

  private hold(): () => void {
    this.deciding++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.deciding > 0) return;
      const ws = this.decidedWaiters;
      this.decidedWaiters = [];
      for (const w of ws) w();
    };
  }

  /** The HANDOVER is on its way (or this SM stopped): SMInfo Gets held for it are answered. */
  handoverSent(): void {
    const rs = this.afterHandoverSent;
    this.afterHandoverSent = [];
    for (const r of rs) r();
  }
}

/** A trap 128 whose change a local sweep already settled (issue #33). A bouncing switch-to-switch
 * link makes both its switches trap; the first trap's local sweep reads both switches' ports
 * (both flag PortStateChange) and clears the bit, so the second switch's trap, taken as a new
 * change, found nothing flagged and read every CA port (sm/local-sweep.ts `unflagged`: ~504 SMPs
 * on the 432-host tree, a bounce). Here, a trap 128 from a switch of the snapshot:
 *
 * - while the SM is busy (a sweep running or pending) is held, the latest per switch, until it is
 *   idle; then it is settled, at no SMP, when a local sweep published since read that switch's
 *   ports at or after the trap's arrival (the trap is sent after its change, so that reading saw
 *   it); else the switch is checked (below);
 * - while idle, is checked when the snapshot holds a local sweep's reading of that switch's
 *   ports (the trap may be about what it read: the other end's trap arriving late, a repeat of
 *   a trap first lost), else starts a sweep at once (a change no sweep has seen: no delay);
 * - the check: the switch's SwitchInfo; PortStateChange set: a sweep (one SMP of delay).
 *   Clear: the PortInfo of its ports, compared with the snapshot as the local sweep's
 *   exploration compares them (`portMoved`): the same, nothing to do; else a sweep. One try of
 *   each SMP (below the retry layer, whose 12 tries would delay the sweep by as many timeouts
 *   when the change cut the switch's path off): one that fails means a sweep, unless the SM went
 *   busy meanwhile (held, as above) or a local sweep read the switch since the trap.
 *
 * A trap that is lost is no business of this: the light sweeps' rotation reads every switch's
 * PortStateChange and every CA port in turn (sm/light-sweep.ts). No I/O but the SMPs; time is
 * passed in. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortInfo, SwitchInfo } from '../wire/sma.js';
import { snapshotPorts, type Snapshot } from '../model/snapshot.js';
import type { Logger } from '../util/log.js';
import { ONE_TRY, type SmpClient } from './smp-client.js';

const up = (s: number | undefined): boolean => (s ?? PortState.Down) >= PortState.Init;

/** Has a port moved since the snapshot read `was`, as the local sweep's exploration sees it: went
 * or came up, or a linked port no longer ARMED/ACTIVE (it retrained). */
export function portMoved(now: number, was: number | undefined, linked: boolean): boolean {
  return up(now) !== up(was) || (linked && now < PortState.Armed);
}

/** A local sweep's reading of a switch's ports: when, and the snapshot it published. */
interface Reading {
  at: number;
  snap: Snapshot;
}

/** A trap 128 not yet acted on: when it arrived, whether the SM is busy now, its sweep. */
interface Held {
  /** The switch's node GUID. */
  guid: bigint;
  at: number;
  busy: () => boolean;
  sweep: () => void;
}

export class TrapCheck {
  /** Traps settled with no SMP, switches checked, and checks that found nothing to sweep. */
  settledFree = 0;
  checks = 0;
  settledChecked = 0;
  /** The latest local sweep's reading of each switch's ports, by node GUID. */
  private readonly read = new Map<bigint, Reading>();
  /** Traps held while the SM was busy: switch LID → the latest arrival and its sweep. */
  private readonly held = new Map<number, Held>();
  private readonly running = new Set<number>();
  private readonly again = new Map<number, Held>();
  private latest?: Snapshot;

  constructor(
    private readonly smp: SmpClient,
    private readonly log: Logger,
  ) {}

  /** A local sweep published `snap`, having read the ports of these switches (GUID → when). */
  settled(snap: Snapshot, reads: ReadonlyMap<bigint, number>): void {
    for (const [guid, at] of reads) this.read.set(guid, { at, snap });
  }

  /** What the SM programmed may not be what the fabric holds (a state change): no reading counts. */
  forget(): void {
    this.read.clear();
  }

  /** A trap 128 from `lid` at `now`; `busy`: a sweep runs or is pending. False: not a switch of
   * the snapshot, or nothing suggests a sweep saw its change (the caller sweeps at once). */
  trap(snap: Snapshot, lid: number, now: number, busy: () => boolean, sweep: () => void): boolean {
    this.latest = snap;
    const guid = this.switchAt(snap, lid);
    if (guid === undefined) return false;
    const h: Held = { guid, at: now, busy, sweep };
    if (busy()) {
      this.held.set(lid, h);
      return true;
    }
    if (this.read.get(guid)?.snap !== snap) return false;
    this.check(lid, h);
    return true;
  }

  /** The SM is idle over `snap` (undefined: not master: the held traps are dropped, as the
   * controller drops a non-master's sweep requests): the held traps settled or checked. */
  idle(snap: Snapshot | undefined): void {
    if (!this.held.size) return;
    const held = [...this.held];
    this.held.clear();
    if (!snap) return;
    this.latest = snap;
    for (const [lid, h] of held) if (!this.readSince(h)) this.check(lid, h);
  }

  /** Did a local sweep published since read the ports of `h`'s switch at or after its arrival? */
  private readSince(h: Held): boolean {
    if ((this.read.get(h.guid)?.at ?? -Infinity) < h.at) return false;
    this.settledFree++;
    this.log.debug('trap 128: its change already read by a local sweep; no sweep', { guid: h.guid });
    return true;
  }

  /** The node GUID of the switch at `lid` in `snap`. */
  private switchAt(snap: Snapshot, lid: number): bigint | undefined {
    const ep = snapshotPorts(snap).byLid(lid);
    const n = ep && snap.fabric.nodes[ep.node];
    return n?.type === NodeType.Switch ? n.guid : undefined;
  }

  /** Check the switch of `h` over the latest snapshot, one check a switch at a time (a trap
   * meanwhile checks it again after). A change found is swept, unless the SM went busy meanwhile
   * (another trap's sweep: held for after it, which may read it, both ends of a link checked at
   * once) or a local sweep read the switch since the trap (the check may have failed over a
   * path that sweep moved). */
  private check(lid: number, h: Held): void {
    if (this.running.has(lid)) {
      this.again.set(lid, h);
      return;
    }
    const snap = this.latest!;
    if (this.switchAt(snap, lid) !== h.guid) return h.sweep();
    this.running.add(lid);
    void this.changed(snap, lid).then((changed) => {
      this.running.delete(lid);
      const next = this.again.get(lid);
      this.again.delete(lid);
      if (changed) {
        const last = next ?? h;
        if (last.busy()) this.held.set(lid, last);
        else if (!this.readSince(last)) last.sweep();
      } else if (next) this.check(lid, next);
    });
  }

  /** Has switch `lid` of `snap` a change to sweep? Never throws (an SMP that fails: yes, the
   * sweep finds out). */
  private async changed(snap: Snapshot, lid: number): Promise<boolean> {
    this.checks++;
    const ep = snapshotPorts(snap).byLid(lid)!;
    const n = snap.fabric.nodes[ep.node]!;
    const d = snap.discovery.nodes[ep.node]!;
    try {
      const si = SwitchInfo.decode(await this.smp.getDr(d.path, SmpAttr.SwitchInfo, 0, ONE_TRY));
      if (si.portStateChange) return true;
      const states = await Promise.all(Array.from({ length: n.numPorts }, (_, i) => this.smp.getDr(d.path, SmpAttr.PortInfo, i + 1, ONE_TRY).then((b) => PortInfo.decode(b).portState)));
      for (let p = 1; p <= n.numPorts; p++) {
        const now = states[p - 1]!;
        const was = d.portInfo[p]?.portState;
        if (portMoved(now, was, n.ports[p]?.peer !== undefined)) {
          this.log.debug('trap 128: a port moved since the snapshot', { node: n.desc, guid: n.guid, port: p, state: now, was: was ?? 'unknown' });
          return true;
        }
      }
      this.settledChecked++;
      this.log.debug('trap 128: PortStateChange clear and the ports as the snapshot has them; no sweep', { node: n.desc, guid: n.guid, lid });
      return false;
    } catch (e) {
      this.log.debug('trap 128 check failed', { node: n.desc, guid: n.guid, error: (e as Error).message });
      return true;
    }
  }
}

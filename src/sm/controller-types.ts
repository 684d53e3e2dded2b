/** What goes into the SM's controller (events, options) and what comes out of it (actions, state
 * changes): sm/controller.ts. Pure types and constants. */
import type { RemoteSm, SmStateName } from './election.js';

export type SweepKind = 'heavy' | 'light';

/** How a heavy sweep runs (SmController.scopeOf; sm/sweep-run.ts runs it): `full` rediscovers
 * the whole fabric; `local` re-explores around the changes over the last view (sm/local-sweep.ts)
 * and falls back to a full one when the change is not local; `takeover` programs from the view
 * the master that handed over had (its fingerprint) and falls back to a full one when the fabric
 * changed since. */
export type HeavyScope = 'full' | 'local' | 'takeover';

export type SmAction =
  /** Discover the fabric and the other SMs; program it when the controller says this SM masters.
   * `takeover`: handed the subnet by the master whose view of the fabric this SM's own discovery
   * is (same fingerprint, sent with the SA state): take it over from that view (every port told
   * this SM is its master, no rediscovery first) when the fabric shows no change since; a full
   * heavy sweep follows as master and verifies. `full`: rediscover the whole fabric (no local
   * sweep): asked for (an operator's sweep, a reload, trap 144), after a sweep that left part of
   * the fabric out, to verify a takeover, a standby's refresh, or a periodic sweep under
   * force_heavy_sweep. */
  | { type: 'heavySweep'; reason: string; takeover?: boolean; full?: boolean }
  /** Check for changes (SwitchInfo PortStateChange, CA port states and IsSM bits, known SMs).
   * `full`: every CA port (one asked for), not only the periodic share. */
  | { type: 'lightSweep'; full?: boolean }
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
 * sweep left some nodes, links or writes out (they failed); the next heavy sweep is a full one,
 * and (when it programmed) the next sweep due is a heavy one, to try them again. */
export type ActionOutcome = 'ok' | 'changed' | 'failed' | 'incomplete';

/** When light sweeps are off, a sweep that left something out is tried again after this long. */
export const RETRY_SWEEP_MS = 10_000;

export type SmEvent =
  | { type: 'start' }
  | { type: 'stop' }
  /** A sweep asked for by an operator, a trap or a test. `full`: a heavy one rediscovers the
   * whole fabric (no local sweep); a light one reads every CA port. */
  | { type: 'sweepRequested'; kind: SweepKind; reason: string; full?: boolean }
  /** The SA's multicast groups changed (join, leave, group created or deleted). */
  | { type: 'multicastChanged' }
  /** A heavy sweep's discovery is done: the other SMs it found (SMInfo read), and whether this
   * SM's own port is up. The shell then asks `mayProgram` and `reregister`.
   * `fromView`: the sweep is a takeover that did not rediscover (its view is the old master's).
   * `stateKept`: the SA holds the clients' registrations from before this SM masters (a failover
   * with the SA state pulled), so its first sweep as master needs no ClientReregister. */
  | { type: 'discovered'; remotes: readonly RemoteSm[]; ownPortUp: boolean; fromView?: boolean; stateKept?: boolean }
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
  /** This SM: its port GUID (its identity in SMInfo and elections), priority (0-15: the higher
   * wins an election) and SM_Key (SMs with another non-zero key are ignored; SMInfo carries it
   * only to trusted requesters). */
  portGuid?: bigint;
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
  /** OpenSM's force_heavy_sweep: every sweep due or asked for as light is a full heavy one. */
  forceHeavySweep?: boolean;
  /** Re-explore and re-route a local change (a trap, a light sweep's finding) without a full
   * heavy sweep (sm/local-sweep.ts); default true. */
  localSweeps?: boolean;
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

/** SMs with another SM_Key (sm/controller.ts decides what they mean: a master of theirs holds the
 * fabric, or a standby of theirs is ignored): the shell's log lines about them, said once per SM. */
import { SmState } from '../wire/sma.js';
import { formatHex } from '../wire/format.js';
import type { Logger } from '../util/log.js';
import { isForeignKey, type RemoteSm } from './controller.js';

/** Standbys with another SM_Key remembered as logged (more are logged again: the set stays small). */
const FOREIGN_STANDBYS_KEPT = 64;

export class ForeignSms {
  /** Heavy sweeps that found a master with another SM_Key holding the fabric (and so wrote
   * nothing): ibsm_foreign_master_sweeps_total. */
  contestedSweeps = 0;
  private contestLogged?: bigint;
  private readonly standbysLogged = new Set<bigint>();

  constructor(
    private readonly log: Logger,
    private readonly smKey: bigint,
  ) {}

  /** After a heavy sweep's decision: `rogue`, the master with another SM_Key the controller found
   * holding the fabric (if any); `remotes`, the SMs the sweep read. */
  note(rogue: RemoteSm | undefined, remotes: readonly RemoteSm[]): void {
    const key = (k: bigint): string => formatHex(k, 64);
    if (rogue) {
      this.contestedSweeps++;
      if (this.contestLogged !== rogue.guid) {
        this.contestLogged = rogue.guid;
        this.log.error('a master with another SM_Key holds the fabric; this SM does not program it', {
          guid: rogue.guid,
          lid: rogue.lid ?? 0,
          priority: rogue.priority,
          theirSmKey: key(rogue.smKey),
          ourSmKey: key(this.smKey),
          fix: 'give both SMs one SM_Key (--sm-key / sm_key) to run them as master and standby, stop the other SM, or start ibsm with --force-master',
        });
      }
      return;
    }
    if (this.contestLogged !== undefined) this.log.info('the master with another SM_Key is gone; this SM manages the fabric again', { guid: this.contestLogged });
    this.contestLogged = undefined;
    for (const r of remotes) {
      if (!isForeignKey(r.smKey, this.smKey) || r.state === SmState.Master || this.standbysLogged.has(r.guid)) continue;
      if (this.standbysLogged.size < FOREIGN_STANDBYS_KEPT) this.standbysLogged.add(r.guid);
      this.log.warn('an SM with another SM_Key is ignored: it can neither take this subnet nor be handed it', { guid: r.guid, lid: r.lid ?? 0, priority: r.priority, state: r.state, theirSmKey: key(r.smKey), ourSmKey: key(this.smKey) });
    }
  }
}

/** The SMInfo rules every SM of a subnet applies alike (IBA 14.4.1): which SM is better, which
 * SM_Key makes an SM another subnet's, which SubnSet(SMInfo) a state accepts. Pure. */
import { SmState } from '../wire/sma.js';
import { SmInfoControl } from '../wire/modifiers.js';

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

export const STATE_CODE: Readonly<Record<SmStateName, number>> = { notActive: SmState.NotActive, discovering: SmState.Discovering, standby: SmState.Standby, master: SmState.Master };

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
  return setAccepted(state, control, senderState) ? 0 : 7;
}

function setAccepted(state: SmStateName, control: number, senderState: number): boolean {
  switch (control) {
    case SmInfoControl.Handover:
    case SmInfoControl.Disable:
    case SmInfoControl.Standby:
      return senderState === SmState.Master && state !== 'notActive';
    case SmInfoControl.Acknowledge:
      return senderState === SmState.Standby;
    case SmInfoControl.Discover:
      return senderState === SmState.Master;
    default:
      return false;
  }
}

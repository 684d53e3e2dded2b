/** Multicast groups as records (sa/multicast.ts keeps them): the types, the MCMemberRecord
 * component masks, and the pure checks and queries over a group. */
import { McScope, JoinState, MCMemberRecord } from '../wire/sa.js';
import type { PortInfo } from '../wire/sma.js';
import type { SaContext, SaQuery } from './types.js';
import type { PartitionGroup } from '../model/partitions.js';
import type { SaLimits } from './limits.js';
import { hasPkey, pkeysOf, requesterPort } from './ports.js';
import { knownPortRate as portRate, rateGbps as gbps } from '../model/rates.js';
import { GUID_MASK } from '../util/guid.js';
import { RATE, selectorHolds } from './selector.js';

export interface McMember {
  portGuid: bigint;
  portGid: bigint;
  joinState: number;
  proxyJoin: boolean;
}

export interface McGroup {
  readonly mgid: bigint;
  readonly mlid: number;
  /** The group's parameters (PortGID, JoinState, ProxyJoin zero; selectors "exactly"). */
  readonly rec: Readonly<MCMemberRecord>;
  readonly members: ReadonlyMap<bigint, Readonly<McMember>>;
  /** Created from the SM's configuration; the last leave does not delete it. */
  readonly wellKnown: boolean;
}

/** A group as the manager keeps it (McGroup is its read-only view). */
export interface Group {
  mgid: bigint;
  mlid: number;
  rec: MCMemberRecord;
  members: Map<bigint, McMember>;
  /** Created by the SM from its configuration (partitions.conf): kept without members. */
  wellKnown: boolean;
  /** Who created it (requesterKey), counted against groupsPerRequester. */
  creator?: string;
}

export type McGroupEvent =
  | { kind: 'created'; mgid: bigint; mlid: number }
  | { kind: 'deleted'; mgid: bigint; mlid: number }
  | { kind: 'membership'; mgid: bigint; mlid: number };

/** Where traps 66/67 go (InformManager implements it). */
export interface McastTrapSink {
  mcGroupCreated(mgid: bigint, pkey: number, ctx: SaContext): unknown;
  mcGroupDeleted(mgid: bigint, pkey: number, ctx: SaContext): unknown;
}

/** A group the SM's configuration creates (model/partitions.ts). */
export type WellKnownGroupSpec = Omit<PartitionGroup, 'source'>;

export interface MulticastOptions {
  /** Highest MLID to hand out. Default 0xC000 + maxGroups - 1 (sa/limits.ts: 1,024 groups, as
   * OpenSM); a snapshot's switches bound it further by their smallest MulticastFDBCap. */
  maxMlid?: number;
  /** Bounds (maxGroups, groupsPerRequester); sa/limits.ts. */
  limits?: Partial<SaLimits>;
  traps?: McastTrapSink;
  /** PacketLifeTime of a group whose creator does not give one. Default 18 (as the subnet timeout). */
  defaultPacketLifeTime?: number;
  /** Who may join or leave for another port's PortGID (a proxy join, IBA o15-0.2.1): 'trusted'
   * (default) only a requester with the SA_Key in its SA header (IBA lets the SA refuse others);
   * 'partition' any port sharing a P_Key with that port, as OpenSM (`--sa-proxy-joins`). */
  proxyJoins?: 'trusted' | 'partition';
}

const M = (p: string): bigint => MCMemberRecord.mask(p);
export const CM = {
  mgid: M('mgid'),
  portGid: M('portGid'),
  qKey: M('qKey'),
  mlid: M('mlid'),
  mtuSelector: M('mtuSelector'),
  mtu: M('mtu'),
  tClass: M('tClass'),
  pKey: M('pKey'),
  rateSelector: M('rateSelector'),
  rate: M('rate'),
  packetLifeTimeSelector: M('packetLifeTimeSelector'),
  packetLifeTime: M('packetLifeTime'),
  sl: M('sl'),
  flowLabel: M('flowLabel'),
  hopLimit: M('hopLimit'),
  scope: M('scope'),
  joinState: M('joinState'),
  proxyJoin: M('proxyJoin'),
};
/** Components a join/leave needs. */
export const MC_JOIN_MASK = CM.mgid | CM.portGid | CM.joinState;
/** Components a create needs. */
export const MC_CREATE_MASK = MC_JOIN_MASK | CM.qKey | CM.tClass | CM.pKey | CM.flowLabel | CM.sl;

export const FULL_BITS = JoinState.FullMember | JoinState.SendOnlyFullMember;

/** o15-0.2.4 #5: every component given must match the group (MTU/rate by selector). */
export function matchesGroup(g: Group, r: MCMemberRecord, mask: bigint): boolean {
  const gr = g.rec;
  if (mask & CM.mlid && r.mlid !== gr.mlid) return false;
  if (mask & CM.qKey && r.qKey !== gr.qKey) return false;
  if (mask & CM.pKey && r.pKey !== gr.pKey) return false;
  if (mask & CM.tClass && r.tClass !== gr.tClass) return false;
  if (mask & CM.sl && r.sl !== gr.sl) return false;
  if (mask & CM.flowLabel && r.flowLabel !== gr.flowLabel) return false;
  if (mask & CM.hopLimit && r.hopLimit !== gr.hopLimit) return false;
  if (mask & CM.mtuSelector && mask & CM.mtu && !selectorHolds(r.mtuSelector, r.mtu, gr.mtu)) return false;
  if (mask & CM.rateSelector && mask & CM.rate && !selectorHolds(r.rateSelector, r.rate, gr.rate, RATE)) return false;
  return true;
}

/** The joining port can carry the group's MTU and rate. */
export function portCapable(g: Group, pi: PortInfo | undefined): boolean {
  if (!pi) return true;
  if (pi.mtuCap && pi.mtuCap < g.rec.mtu) return false;
  const r = portRate(pi);
  return !r || gbps(r) >= gbps(g.rec.rate);
}

export function hasFullMember(g: Group): boolean {
  for (const m of g.members.values()) if (m.joinState & FULL_BITS) return true;
  return false;
}

export function encodeMember(g: Group, m: McMember | undefined, showPort: boolean): Uint8Array {
  return MCMemberRecord.encode({
    ...g.rec,
    portGid: showPort && m ? m.portGid : 0n,
    joinState: showPort && m ? m.joinState : 0,
    proxyJoin: showPort && m ? Number(m.proxyJoin) : 0,
  });
}

/** The groups (and members, for a trusted requester) an MCMemberRecord Get/GetTable matches. */
export function queryGroups(groups: Iterable<Group>, q: SaQuery, r: MCMemberRecord, ctx: SaContext): Uint8Array[] {
  const mask = q.componentMask;
  const reqPort = requesterPort(ctx, q.requester);
  const reqPkeys = reqPort ? pkeysOf(ctx, reqPort) : [];
  const trusted = q.requester.trusted;
  const stateMask = (mask & CM.joinState ? 0xf : 0) as number;
  const scopeOk = (g: Group): boolean => !(mask & CM.scope) || r.scope === g.rec.scope;
  const out: Uint8Array[] = [];
  // In MGID order, as OpenSM (its groups are a map keyed by MGID): saquery -g lists the same way.
  for (const g of [...groups].sort((a, b) => (a.mgid < b.mgid ? -1 : a.mgid > b.mgid ? 1 : 0))) {
    if (mask & CM.mgid && r.mgid !== g.mgid) continue;
    if (!trusted && !hasPkey(reqPkeys, g.rec.pKey)) continue;
    if (!matchesGroup(g, r, mask) || !scopeOk(g)) continue;
    if (mask & CM.proxyJoin && !(mask & CM.portGid) && r.proxyJoin !== 0) continue;
    if (mask & CM.portGid) {
      const m = g.members.get(r.portGid & GUID_MASK);
      if (!m || (m.joinState & stateMask) !== (r.joinState & stateMask)) continue;
      if (mask & CM.proxyJoin && Number(m.proxyJoin) !== r.proxyJoin) continue;
      out.push(encodeMember(g, m, trusted));
    } else if (trusted) {
      for (const m of g.members.values()) {
        if ((m.joinState & stateMask) !== (r.joinState & stateMask)) continue;
        out.push(encodeMember(g, m, true));
      }
    } else {
      if (stateMask && r.joinState !== 0) continue; // the group record carries JoinState 0
      out.push(encodeMember(g, undefined, false));
    }
  }
  return out;
}

/** o15-0.1.5: a requested MGID must be multicast, use no reserved flags, and not claim the SA's
 * signature (0xA01B) with link-local scope. IPoIB MGIDs (0x401B, 0x601B) pass. */
export function validRequestedMgid(mgid: bigint): boolean {
  if (((mgid >> 120n) & 0xffn) !== 0xffn) return false;
  const sig = Number((mgid >> 96n) & 0xffffn);
  if (sig === 0x401b || sig === 0x601b) return true;
  const flagsScope = Number((mgid >> 112n) & 0xffn);
  if (flagsScope & 0xe0) return false;
  if (sig === 0xa01b && (flagsScope & 0xf) === McScope.LinkLocal) return false;
  return true;
}

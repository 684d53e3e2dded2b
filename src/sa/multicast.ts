/**
 * Multicast groups: the SA's MCMemberRecord handler (IBA 15.2.5.17, o15-0.1.x / o15-0.2.x).
 *
 * - SubnAdmSet = join, creating the group when its MGID is unknown (or zero: the SA assigns one,
 *   ff1<scope>:a01b:<P_Key>:<low 48 bits of the SM port GUID>:<counter>) and the create
 *   components are present (MGID, PortGID, JoinState, Q_Key, TClass, P_Key, FlowLabel, SL); the
 *   creator must be a full member. The MLID is the lowest free one from 0xC000, below the cap
 *   (sa/limits.ts maxGroups, 1,024 as OpenSM, and the switches' smallest MulticastFDBCap);
 *   beyond it, or beyond the creator's `groupsPerRequester`, a create is ERR_NO_RESOURCES.
 * - Join states are bits (full 0x1, non-member 0x2, send-only non-member 0x4, send-only full
 *   0x8) merged per port. SubnAdmDelete = leave: the given bits are cleared, the member goes when
 *   none remain, the group goes (and its MLID is freed) when no full member remains.
 * - A join or leave for another port's PortGID (a proxy join) is refused ERR_REQ_DENIED unless
 *   the requester is trusted (the SA_Key in its SA header), or `proxyJoins: 'partition'`
 *   (`--sa-proxy-joins`, OpenSM's way) lets any port of the partition do it.
 * - SubnAdmGet/GetTable: matched by component mask; the requester only sees groups whose P_Key
 *   it holds; PortGID, JoinState and ProxyJoin are zero unless the requester is trusted (SA_Key).
 * - Changes are reported to listeners (`onGroupsChanged`: the SM recomputes MFTs, see mft.ts) and
 *   as traps 66/67 to InformInfo subscribers (through the `traps` sink, e.g. InformManager).
 *
 * The group records, masks and pure checks and queries: sa/mcast-group.ts.
 */
import { Method, MadStatus } from '../wire/mad.js';
import { JoinState, MCMemberRecord, SaAttr, SaStatus, Selector, McScope } from '../wire/sa.js';
import { PortInfo } from '../wire/sma.js';
import type { SaAnswer, SaContext, SaHandler, SaQuery, SaRequester } from './types.js';
import { MCAST_LID_BASE, MCAST_LID_MAX, type McastGroupPorts } from '../routing/mcast-tree.js';
import { snapshotPorts, type Snapshot } from '../model/snapshot.js';
import type { PeerRef } from '../model/fabric.js';
import { KeyCounter, requesterKey, resolveSaLimits, type SaLimits } from './limits.js';
import { hasPkey, pkeysOf, portGuidOf, portInfoOf, portOfGid, requesterPort, sharePkey } from './ports.js';
import { knownPortRate as portRate, RATE_GBPS, rateGbps as gbps } from '../model/rates.js';
import { RATE, selectForNewGroup } from './selector.js';
import { GUID_MASK } from '../util/guid.js';
import {
  CM,
  MC_CREATE_MASK,
  MC_JOIN_MASK,
  encodeMember,
  hasFullMember,
  matchesGroup,
  portCapable,
  queryGroups,
  validRequestedMgid,
  type Group,
  type McGroup,
  type McGroupEvent,
  type McMember,
  type MulticastOptions,
  type WellKnownGroupSpec,
} from './mcast-group.js';

export { hasPkey, pkeysOf, portGidOf, portGuidOf, portInfoOf, portOfGid, requesterPort, sharePkey } from './ports.js';
export { MC_CREATE_MASK, MC_JOIN_MASK, validRequestedMgid, type McGroup, type McGroupEvent, type McMember, type McastTrapSink, type MulticastOptions, type WellKnownGroupSpec } from './mcast-group.js';

const status = (s: number): SaAnswer => ({ kind: 'status', status: s });

export class MulticastManager implements SaHandler {
  readonly attrIds = [SaAttr.MCMemberRecord] as const;
  private readonly groups = new Map<bigint, Group>();
  private readonly mlids = new Set<number>();
  private readonly listeners = new Set<(e: McGroupEvent) => void>();
  private mgidCounter = 1;
  private readonly maxMlid: number;
  private readonly limits: SaLimits;
  private readonly perCreator = new KeyCounter();
  /** Creates refused with ERR_NO_RESOURCES: no MLID free under the cap, or the creator's bound. */
  readonly stats = { refusedNoMlid: 0, refusedPerRequester: 0 };

  constructor(private readonly o: MulticastOptions = {}) {
    this.limits = resolveSaLimits(o.limits);
    this.maxMlid = Math.min(MCAST_LID_MAX, o.maxMlid ?? MCAST_LID_MAX, MCAST_LID_BASE + this.limits.maxGroups - 1);
    if (this.maxMlid < MCAST_LID_BASE) throw new RangeError(`maxMlid 0x${this.maxMlid.toString(16)} is below 0xc000`);
  }

  /** The highest MLID a create may take over `snap`: the configured bound, and 0xC000 + the
   * smallest MulticastFDBCap of the snapshot's switches - 1 (a switch with no MFT, cap 0, forwards
   * no multicast at all and does not count). */
  mlidLimit(snap: Snapshot | undefined): number {
    if (!snap) return this.maxMlid;
    let lim = FDB_LIMITS.get(snap);
    if (lim === undefined) {
      let cap = Infinity;
      for (const d of snap.discovery.nodes) {
        const c = d?.switchInfo?.multicastFdbCap;
        if (c) cap = Math.min(cap, c);
      }
      lim = Number.isFinite(cap) ? MCAST_LID_BASE + cap - 1 : MCAST_LID_MAX;
      FDB_LIMITS.set(snap, lim);
    }
    return Math.min(this.maxMlid, lim);
  }

  /** Requester ports that created groups still existing (for the bounds' metrics and tests). */
  get creators(): number {
    return this.perCreator.keys;
  }

  /** Listen for group changes (the SM recomputes and writes MFTs). Returns an unsubscribe function. */
  onGroupsChanged(fn: (e: McGroupEvent) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Current groups (read-only views). */
  list(): McGroup[] {
    return [...this.groups.values()];
  }
  get(mgid: bigint): McGroup | undefined {
    return this.groups.get(mgid);
  }
  /** MLIDs in use. */
  get mlidsInUse(): number {
    return this.mlids.size;
  }

  /** The groups' member ports in `ctx`'s fabric, for computeMfts. Members the fabric no longer has are skipped. */
  mftGroups(ctx: SaContext): McastGroupPorts[] {
    return this.mftGroupsOf(ctx.snapshot);
  }

  /** The groups' member ports in a snapshot (the SM's newest, which the SA may not have yet). */
  mftGroupsOf(snap: Snapshot): McastGroupPorts[] {
    const fp = snapshotPorts(snap);
    const out: McastGroupPorts[] = [];
    for (const g of this.groups.values()) {
      const members: PeerRef[] = [];
      for (const m of g.members.values()) {
        const r = fp.byGuid.get(m.portGuid);
        if (r) members.push({ node: r.node, port: r.port });
      }
      out.push({ mlid: g.mlid, members });
    }
    return out;
  }

  /**
   * Create a group the SM's configuration names (partitions.conf: IPoIB broadcast groups and
   * mgid= lines), before any client joins: the MLID is the lowest free one, the group is kept
   * when its last member leaves, and a join without the create components finds it. Creating
   * an MGID that exists already returns the existing group. Throws a RangeError when no MLID is
   * free.
   */
  createWellKnown(spec: WellKnownGroupSpec): McGroup {
    const have = this.groups.get(spec.mgid);
    if (have) return have;
    const mlid = this.allocMlid();
    if (mlid === undefined) throw new RangeError(`no free MLID for multicast group ${spec.mgid.toString(16)} (0xc000..0x${this.maxMlid.toString(16)} in use)`);
    const rec: MCMemberRecord = {
      ...MCMemberRecord.zero(),
      mgid: spec.mgid,
      qKey: spec.qKey,
      mlid,
      mtuSelector: Selector.Exactly,
      mtu: spec.mtu,
      tClass: spec.tClass,
      pKey: spec.pkey,
      rateSelector: Selector.Exactly,
      rate: spec.rate,
      packetLifeTimeSelector: Selector.Exactly,
      packetLifeTime: this.o.defaultPacketLifeTime ?? 18,
      sl: spec.sl,
      flowLabel: spec.flowLabel,
      hopLimit: spec.hopLimit,
      scope: spec.scope,
    };
    const g: Group = { mgid: spec.mgid, mlid, rec, members: new Map(), wellKnown: true };
    this.groups.set(spec.mgid, g);
    this.emit({ kind: 'created', mgid: g.mgid, mlid: g.mlid });
    return g;
  }

  /** The configuration's groups after a reload (partitions.conf): those it adds are created; those
   * it keeps take its parameters (Q_Key, MTU, rate, SL, TClass, FlowLabel: what joins and queries
   * see from now on); those it no longer names are the SA's as any other group (gone at once
   * without a full member, else with the last one). Throws a RangeError, having changed nothing,
   * when the new groups need more MLIDs than are free. */
  syncWellKnown(specs: readonly WellKnownGroupSpec[], ctx: SaContext | undefined): { created: McGroup[]; updated: number; released: number } {
    const wanted = new Map(specs.map((sp) => [sp.mgid, sp]));
    const fresh = specs.filter((sp) => !this.groups.has(sp.mgid));
    const released = [...this.groups.values()].filter((g) => g.wellKnown && !wanted.has(g.mgid));
    const free = this.maxMlid - MCAST_LID_BASE + 1 - this.mlids.size;
    const freed = released.filter((g) => !hasFullMember(g)).length;
    if (fresh.length > free + freed) throw new RangeError(`partitions.conf names ${fresh.length} new multicast groups; ${free + freed} MLIDs are free`);
    for (const g of released) {
      g.wellKnown = false;
      if (!hasFullMember(g)) {
        if (ctx) this.deleteGroup(g, ctx);
        else {
          this.groups.delete(g.mgid);
          this.mlids.delete(g.mlid);
          this.emit({ kind: 'deleted', mgid: g.mgid, mlid: g.mlid });
        }
      }
    }
    let updated = 0;
    for (const sp of specs) {
      const g = this.groups.get(sp.mgid);
      if (!g) continue;
      g.wellKnown = true;
      const next = { qKey: sp.qKey, mtu: sp.mtu, rate: sp.rate, sl: sp.sl, tClass: sp.tClass, flowLabel: sp.flowLabel, hopLimit: sp.hopLimit };
      if ((Object.keys(next) as (keyof typeof next)[]).some((k) => g.rec[k] !== next[k])) {
        g.rec = { ...g.rec, ...next };
        updated++;
      }
    }
    const created = fresh.map((sp) => this.createWellKnown(sp));
    return { created, updated, released: released.length };
  }

  /** A port left the fabric: drop its memberships (groups without full members go). */
  removePort(portGuid: bigint, ctx: SaContext): void {
    for (const g of [...this.groups.values()]) {
      if (!g.members.delete(portGuid)) continue;
      if (!hasFullMember(g) && !g.wellKnown) this.deleteGroup(g, ctx);
      else this.emit({ kind: 'membership', mgid: g.mgid, mlid: g.mlid });
    }
  }

  handle(q: SaQuery, ctx: SaContext): SaAnswer {
    if (q.attrId !== SaAttr.MCMemberRecord) return status(MadStatus.UnsupportedMethodAttr);
    let rec: MCMemberRecord;
    try {
      rec = MCMemberRecord.decode(q.data, 0);
    } catch {
      return status(SaStatus.ReqInvalid);
    }
    switch (q.method) {
      case Method.Set:
        return this.join(q, rec, ctx);
      case Method.Delete:
        return this.leave(q, rec, ctx);
      case Method.Get:
      case Method.GetTable: {
        const recs = queryGroups(this.groups.values(), q, rec, ctx);
        if (q.method === Method.Get) {
          if (recs.length === 0) return status(SaStatus.NoRecords);
          if (recs.length > 1) return status(SaStatus.TooManyRecords);
          return { kind: 'records', records: recs, method: Method.GetResp };
        }
        return { kind: 'records', records: recs };
      }
      default:
        return status(MadStatus.UnsupportedMethodAttr);
    }
  }

  // ------------------------------------------------------------ join / create

  private join(q: SaQuery, req: MCMemberRecord, ctx: SaContext): SaAnswer {
    const mask = q.componentMask;
    if ((mask & MC_JOIN_MASK) !== MC_JOIN_MASK) return status(SaStatus.ReqInsufficientComponents);
    const port = portOfGid(ctx, req.portGid);
    if (!port) return status(SaStatus.ReqInvalid);
    const portGuid = portGuidOf(ctx, port);
    const reqPort = requesterPort(ctx, q.requester);
    if (!reqPort && !q.requester.trusted) return status(SaStatus.ReqInvalid);
    const proxy = reqPort ? portGuidOf(ctx, reqPort) !== portGuid : true;
    if (proxy && !this.proxyAllowed(q.requester)) return status(SaStatus.ReqDenied);
    const portPkeys = pkeysOf(ctx, port);
    if (proxy && reqPort && !sharePkey(portPkeys, pkeysOf(ctx, reqPort))) return status(SaStatus.ReqInvalid);
    const joinState = req.joinState;
    if (joinState === 0) return status(SaStatus.ReqInvalid);
    const pi = portInfoOf(ctx, port);

    let g = req.mgid !== 0n ? this.groups.get(req.mgid) : undefined;
    let created = false;
    if (!g) {
      // o15-0.1.9: only a full member creates.
      if (!(joinState & JoinState.FullMember)) return status(SaStatus.ReqInvalid);
      if ((mask & MC_CREATE_MASK) !== MC_CREATE_MASK) return status(SaStatus.ReqInsufficientComponents);
      if (!hasPkey(portPkeys, req.pKey)) return status(SaStatus.ReqInvalid);
      const creator = requesterKey(q.requester);
      if (this.perCreator.get(creator) >= this.limits.groupsPerRequester) {
        this.stats.refusedPerRequester++;
        return status(SaStatus.NoResources);
      }
      const made = this.create(mask, req, pi, ctx);
      if (typeof made === 'number') return status(made);
      made.creator = creator;
      this.perCreator.inc(creator);
      g = made;
      created = true;
    } else {
      if (!matchesGroup(g, req, mask) || !portCapable(g, pi)) return status(SaStatus.ReqInvalid);
      if (!hasPkey(portPkeys, g.rec.pKey)) return status(SaStatus.ReqInvalid);
      const existing = g.members.get(portGuid);
      if (existing && !this.mayModify(existing, g, q.requester, reqPort, ctx)) return status(SaStatus.ReqInvalid);
    }

    const m = g.members.get(portGuid);
    const before = m?.joinState ?? 0;
    if (m) m.joinState |= joinState;
    else g.members.set(portGuid, { portGuid, portGid: req.portGid, joinState, proxyJoin: proxy });
    const after = g.members.get(portGuid)!;
    if (created) {
      this.emit({ kind: 'created', mgid: g.mgid, mlid: g.mlid });
      this.o.traps?.mcGroupCreated(g.mgid, g.rec.pKey, ctx);
    } else if (before !== after.joinState) this.emit({ kind: 'membership', mgid: g.mgid, mlid: g.mlid });
    return { kind: 'records', records: [encodeMember(g, after, true)], method: Method.GetResp };
  }

  private create(mask: bigint, req: MCMemberRecord, pi: PortInfo | undefined, ctx: SaContext): Group | number {
    let mgid = req.mgid;
    if (mgid === 0n) {
      const scope = mask & CM.scope && req.scope ? req.scope : McScope.LinkLocal;
      const got = this.newMgid(scope, req.pKey, ctx.smPortGuid);
      if (got === undefined) return SaStatus.NoResources;
      mgid = got;
    } else if (!validRequestedMgid(mgid)) return SaStatus.ReqInvalid;

    // MTU and rate: realizable for the creating port; supplied by the SA when not requested.
    const portMtu = pi?.mtuCap ?? 0;
    let mtu = portMtu || 4;
    if (mask & CM.mtu && mask & CM.mtuSelector && req.mtuSelector !== Selector.Best) {
      const v = selectForNewGroup(req.mtuSelector, req.mtu, portMtu);
      if (v === undefined || v < 1 || v > 5 || (portMtu && v > portMtu)) return SaStatus.ReqInvalid;
      mtu = v;
    }
    const pRate = portRate(pi);
    let rate = pRate || 3;
    if (mask & CM.rate && mask & CM.rateSelector && req.rateSelector !== Selector.Best) {
      if (!RATE_GBPS[req.rate]) return SaStatus.ReqInvalid;
      const v = selectForNewGroup(req.rateSelector, req.rate, pRate, RATE);
      if (v === undefined || !RATE_GBPS[v] || (pRate && gbps(v) > gbps(pRate))) return SaStatus.ReqInvalid;
      rate = v;
    }
    const mlid = this.allocMlid(this.mlidLimit(ctx.snapshot));
    if (mlid === undefined) {
      this.stats.refusedNoMlid++;
      return SaStatus.NoResources;
    }
    const rec: MCMemberRecord = {
      ...MCMemberRecord.zero(),
      mgid,
      qKey: req.qKey,
      mlid,
      mtuSelector: Selector.Exactly,
      mtu,
      tClass: req.tClass,
      pKey: req.pKey,
      rateSelector: Selector.Exactly,
      rate,
      packetLifeTimeSelector: Selector.Exactly,
      packetLifeTime: mask & CM.packetLifeTime ? req.packetLifeTime : (this.o.defaultPacketLifeTime ?? 18),
      sl: req.sl,
      flowLabel: req.flowLabel,
      hopLimit: mask & CM.hopLimit ? req.hopLimit : 0,
      scope: Number((mgid >> 112n) & 0xfn),
    };
    const g: Group = { mgid, mlid, rec, members: new Map(), wellKnown: false };
    this.groups.set(mgid, g);
    return g;
  }

  private newMgid(scope: number, pkey: number, smGuid: bigint): bigint | undefined {
    for (let i = 0; i < 1000; i++) {
      const n = this.mgidCounter;
      this.mgidCounter = (this.mgidCounter % 0xffffffff) + 1;
      const mgid =
        (0xffn << 120n) | (BigInt(0x10 | (scope & 0xf)) << 112n) | (0xa01bn << 96n) | (BigInt(pkey & 0xffff) << 80n) | ((smGuid & 0xffffffffffffn) << 32n) | BigInt(n);
      if (!this.groups.has(mgid)) return mgid;
    }
    return undefined;
  }

  private allocMlid(limit = this.maxMlid): number | undefined {
    for (let l = MCAST_LID_BASE; l <= limit; l++) {
      if (!this.mlids.has(l)) {
        this.mlids.add(l);
        return l;
      }
    }
    return undefined;
  }



  /** o15-0.2.1: who may modify an existing membership. */
  private mayModify(m: McMember, g: Group, req: SaRequester, reqPort: PeerRef | undefined, ctx: SaContext): boolean {
    if (!reqPort) return req.trusted;
    const own = portGuidOf(ctx, reqPort) === m.portGuid;
    if (!m.proxyJoin) return own;
    if (!own && !this.proxyAllowed(req)) return false;
    return hasPkey(pkeysOf(ctx, reqPort), g.rec.pKey);
  }

  /** Whether a requester may join or leave for another port (MulticastOptions.proxyJoins). */
  private proxyAllowed(req: SaRequester): boolean {
    return req.trusted || this.o.proxyJoins === 'partition';
  }

  // ------------------------------------------------------------ leave

  private leave(q: SaQuery, req: MCMemberRecord, ctx: SaContext): SaAnswer {
    if ((q.componentMask & MC_JOIN_MASK) !== MC_JOIN_MASK) return status(SaStatus.ReqInsufficientComponents);
    const g = this.groups.get(req.mgid);
    if (!g) return status(SaStatus.ReqInvalid);
    const guid = req.portGid & GUID_MASK;
    const m = g.members.get(guid);
    // o15-0.1.14: a member, overlapping bits, no extra bits, and the requester may modify.
    if (!m) return status(SaStatus.ReqInvalid);
    const bits = req.joinState & 0xf;
    if (!(bits & m.joinState) || (bits | m.joinState) !== m.joinState) return status(SaStatus.ReqInvalid);
    if (!this.mayModify(m, g, q.requester, requesterPort(ctx, q.requester), ctx)) return status(SaStatus.ReqInvalid);
    m.joinState &= ~bits;
    const out = encodeMember(g, m, true);
    if (m.joinState === 0) g.members.delete(guid);
    if (!hasFullMember(g) && !g.wellKnown) this.deleteGroup(g, ctx);
    else this.emit({ kind: 'membership', mgid: g.mgid, mlid: g.mlid });
    return { kind: 'records', records: [out], method: Method.DeleteResp };
  }


  private deleteGroup(g: Group, ctx: SaContext): void {
    this.groups.delete(g.mgid);
    this.mlids.delete(g.mlid);
    if (g.creator !== undefined) this.perCreator.dec(g.creator);
    this.emit({ kind: 'deleted', mgid: g.mgid, mlid: g.mlid });
    this.o.traps?.mcGroupDeleted(g.mgid, g.rec.pKey, ctx);
  }

  // ------------------------------------------------------------ queries



  private emit(e: McGroupEvent): void {
    for (const fn of this.listeners) fn(e);
  }

  /** Put back a group as another SM had it (failover, sa/sync.ts): its MGID, MLID, parameters
   * and members with their join states. An MGID or MLID already in use here is left as it is.
   * Returns the members restored. */
  restore(rec: Readonly<MCMemberRecord>, members: readonly Readonly<MCMemberRecord>[]): number {
    const put = (g: Group): void => {
      for (const m of members) g.members.set(m.portGid & GUID_MASK, { portGuid: m.portGid & GUID_MASK, portGid: m.portGid, joinState: m.joinState, proxyJoin: m.proxyJoin !== 0 });
    };
    const have = this.groups.get(rec.mgid);
    if (have) {
      // A well-known group this SM created at start (partitions.conf): the members come along.
      if (have.mlid !== rec.mlid) return 0;
      put(have);
      this.emit({ kind: 'membership', mgid: have.mgid, mlid: have.mlid });
      return members.length;
    }
    if (this.mlids.has(rec.mlid) || rec.mlid < MCAST_LID_BASE || rec.mlid > this.maxMlid) return 0;
    const g: Group = { mgid: rec.mgid, mlid: rec.mlid, rec: { ...rec, portGid: 0n, joinState: 0, proxyJoin: 0 }, members: new Map(), wellKnown: false };
    put(g);
    this.groups.set(g.mgid, g);
    this.mlids.add(g.mlid);
    this.emit({ kind: 'created', mgid: g.mgid, mlid: g.mlid });
    return g.members.size;
  }
}

/** Per snapshot: 0xC000 + its switches' smallest MulticastFDBCap - 1 (snapshots never change). */
const FDB_LIMITS = new WeakMap<Snapshot, number>();

/**
 * PathRecord (MultiPathRecord in sa/multipath.ts, TraceRecord in sa/trace.ts, the walk they share
 * in sa/path-walk.ts): paths computed from the forwarding tables the SM
 * programmed (the snapshot's routing LFTs), followed hop by hop from the source to the
 * destination LID. Pure.
 *
 * Per (SLID, DLID) pair: MTU and rate are the minimum over the links traversed (and a switch
 * end's port 0), PacketLifeTime the SA's configured value as OpenSM's packet_life_time (0 for a
 * loopback path), SL from the routing engine
 * (`routing.sl`), else the QoS level's, else with QoS on the partition's sl=, else 0, P_Key a key both ends share (the requested one must be shared),
 * Reversible when the reverse path exists under the same constraints. Selectors follow the spec
 * and OpenSM: GreaterThan / LessThan / Exactly / Best, NoRecords when one cannot be met; rates
 * compare by bandwidth (the rate enumeration is not ordered). With an LMC every LID pair of the
 * two ranges is a path: "diagonal" pairs first (Preference 0), then the rest (Preference 2), up to
 * NumbPath per port pair. SGID/DGID queries iterate the ranges; SLID/DLID pin them.
 */
import { DEFAULT_GID_PREFIX, MadStatus, Method } from '../wire/mad.js';
import { PathRecord, SaAttr, SaStatus, Selector, type PathRecord as PathRecordValue } from '../wire/sa.js';
import { SaRequestError } from './engine.js';
import { portOfGid } from './ports.js';
import { commonPkey, pkeySet, pkeyView, portPkeys, shareThis, Visibility } from './visibility.js';
import { lidRange, portKind, snapshotPorts, type EndPort } from '../model/snapshot.js';
import type { QosPort } from '../model/qos-policy.js';
import type { SaContext, SaHandler, SaQuery } from './types.js';

import { RATE_GBPS, portRate, rateCompare } from '../model/rates.js';
import { GUID_MASK } from '../util/guid.js';
import { pinfo, walkPath } from './path-walk.js';
import { RATE, selectValue } from './selector.js';
import { ComponentMaskError } from '../wire/errors.js';

export { portRate };
export { walkPath, type PathHop, type PathWalk } from './path-walk.js';

/** OpenSM's default packet_life_time. */
export const DEFAULT_PACKET_LIFE_TIME = 0x12;

// ---------- PathRecord ----------

/** Component-mask bits of each PathRecord field (both bits of ServiceID), computed once. */
const PR_BITS: Readonly<Record<string, bigint>> = Object.fromEntries(
  [...new Set(PathRecord.components.map((c) => c.path.replace(/#\d+$/, '')))].map((p) => [p, PathRecord.mask(p)]),
);
export const bit = (name: string): bigint => {
  const b = PR_BITS[name];
  if (b === undefined) throw new ComponentMaskError('PathRecord', name);
  return b;
};

/** The subnet prefix: the SM port's GidPrefix (the default link-local prefix when unset). */
export function subnetPrefix(ctx: SaContext): bigint {
  const idx = snapshotPorts(ctx.snapshot);
  const sm = idx.byGuid.get(ctx.smPortGuid);
  return (sm && pinfo(ctx, sm.node, sm.port)?.gidPrefix) || DEFAULT_GID_PREFIX;
}

function portGid(ctx: SaContext, ep: EndPort, prefix: bigint): bigint {
  return ((pinfo(ctx, ep.node, ep.port)?.gidPrefix || prefix) << 64n) | ep.guid;
}

/** Resolve a GID of this subnet to its end port; throws ReqInvalidGid for a foreign prefix or an unknown GUID. */
export function portByGid(ctx: SaContext, gid: bigint, what: string): EndPort {
  const prefix = gid >> 64n;
  if (prefix !== DEFAULT_GID_PREFIX && prefix !== subnetPrefix(ctx)) {
    throw new SaRequestError(SaStatus.ReqInvalidGid, `${what} prefix 0x${prefix.toString(16)} is not this subnet's (no router)`);
  }
  const ep = portOfGid(ctx, gid);
  if (!ep) throw new SaRequestError(SaStatus.ReqInvalidGid, `${what}: no port with GUID 0x${(gid & GUID_MASK).toString(16)}`);
  return ep;
}

/** What a path query asks, in PathRecord terms (also built from a MultiPathRecord). */
export interface PathRequest {
  rec: PathRecordValue;
  mask: bigint;
}

/** The candidate LID pairs of two end ports in preference order, narrowed by SLID/DLID when asked. */
function* lidPairs(src: EndPort, dst: EndPort, slid: number | undefined, dlid: number | undefined): Iterable<[number, number, number]> {
  const [s0, s1] = slid !== undefined ? [slid, slid] : lidRange(src);
  const [d0, d1] = dlid !== undefined ? [dlid, dlid] : lidRange(dst);
  // Preference 0: distinct LIDs on both sides (most redundant) ...
  for (let i = 0; s0 + i <= s1 && d0 + i <= d1; i++) yield [s0 + i, d0 + i, 0];
  // ... then every other pair (Preference 2).
  for (let s = s0; s <= s1; s++) for (let d = d0; d <= d1; d++) if (s - s0 !== d - d0) yield [s, d, 2];
}

interface Params {
  mtu: number;
  rate: number;
  pktLife: number;
  pkey: number;
  sl: number;
  qosClass: number;
}

/** Apply the request's constraints to a walked path; undefined when they cannot be met. */
function pathParams(ctx: SaContext, req: PathRequest, src: EndPort, dst: EndPort, slid: number, dlid: number, walk: { mtu: number; rate: number }): Params | undefined {
  const { rec, mask } = req;
  const has = (b: bigint): boolean => (mask & b) === b;
  const limited = qosLimits(ctx, req, src, dst, walk);
  let { mtu, rate } = limited;
  const loop = src.node === dst.node && src.port === dst.port;
  // PacketLifeTime: the QoS level's, else the SA's configured value (OpenSM's packet_life_time,
  // 0x12 by default); 0 for a loopback path.
  let pktLife = loop ? 0 : (limited.pktLife ?? ctx.packetLifeTime ?? DEFAULT_PACKET_LIFE_TIME);

  if (has(bit('mtuSelector') | bit('mtu'))) {
    const v = selectValue(rec.mtuSelector, rec.mtu, mtu);
    if (v === undefined) return undefined;
    mtu = v;
  }
  if (has(bit('rateSelector') | bit('rate'))) {
    if (RATE_GBPS[rec.rate] === undefined && rec.rateSelector !== Selector.Best) return undefined;
    const v = selectValue(rec.rateSelector, rec.rate, rate, RATE);
    if (v === undefined) return undefined;
    rate = v;
  }
  if (has(bit('packetLifeTimeSelector') | bit('packetLifeTime'))) {
    const v = selectValue(rec.packetLifeTimeSelector, rec.packetLifeTime, pktLife);
    if (v === undefined) return undefined;
    pktLife = v;
  }

  const view = pkeyView(ctx);
  // vport hook: a vport end has its own P_Keys (two vports of one HCA may share no partition)
  const vs = ctx.vports?.pkeys(src.guid);
  const vd = ctx.vports?.pkeys(dst.guid);
  const sk = vs ? pkeySet(vs) : view.port(src.node, src.port);
  const dk = vd ? pkeySet(vd) : view.port(dst.node, dst.port);
  // The QoS level (qos-policy.conf) of this request: limits on MTU, rate and packet lifetime, an
  // SL, and the P_Keys it allows. Applied before the request's selectors, as OpenSM.
  const level = ctx.qos?.levelFor({
    serviceId: has(bit('serviceId')) ? rec.serviceId : undefined,
    qosClass: has(bit('qosClass')) ? rec.qosClass : undefined,
    pkey: has(bit('pKey')) ? rec.pKey : undefined,
    src: qosPort(ctx, src),
    dst: qosPort(ctx, dst),
  });
  const levelPkey = (k: number): boolean => !level?.pkeys.length || level.pkeys.some(([a, b]) => BigInt(k & 0x7fff) >= a && BigInt(k & 0x7fff) <= b);
  let pkey: number;
  if (has(bit('pKey'))) {
    if (!shareThis(sk, dk, rec.pKey) || !levelPkey(rec.pKey)) return undefined;
    pkey = rec.pKey;
  } else {
    const mine = vs ?? portPkeys(ctx, src.node, src.port);
    const k = commonPkey(level?.pkeys.length ? mine.filter(levelPkey) : mine, dk, sk);
    if (k === undefined) return undefined;
    pkey = k;
  }
  if (has(bit('rawTraffic')) && rec.rawTraffic) pkey = 0;

  // SL: a layered routing engine's (dfsssp: its SLs keep the routes deadlock-free) wins over the
  // QoS level's; Subnet logs the conflict once per policy. Neither: with QoS on, the partition's
  // sl= (OpenSM's partition SL); a requested SL is checked against the first two only, as OpenSM.
  const engineSl = ctx.snapshot.routing.sl?.(slid, dlid);
  let sl = engineSl ?? level?.sl ?? (ctx.qosOn && pkey & 0x7fff ? ctx.partitions.slOf(pkey) : 0);
  if (has(bit('sl'))) {
    if ((engineSl !== undefined || level?.sl !== undefined) && sl !== rec.sl) return undefined;
    sl = rec.sl;
  }
  // QoS class: a request parameter the path carries back (a QoS policy matches on it).
  const qosClass = has(bit('qosClass')) ? rec.qosClass : 0;
  return { mtu, rate, pktLife, pkey, sl, qosClass };
}

function qosPort(ctx: SaContext, ep: EndPort): QosPort {
  const n = ctx.snapshot.fabric.nodes[ep.node]!;
  return { guid: ep.guid, kind: portKind(n.type), self: ep.guid === ctx.smPortGuid };
}

/** Apply a QoS level's MTU, rate and packet-lifetime limits to what the path can do. */
function qosLimits(ctx: SaContext, req: PathRequest, src: EndPort, dst: EndPort, walk: { mtu: number; rate: number }): { mtu: number; rate: number; pktLife?: number } {
  if (!ctx.qos) return walk;
  const { rec, mask } = req;
  const has = (b: bigint): boolean => (mask & b) === b;
  const level = ctx.qos.levelFor({
    serviceId: has(bit('serviceId')) ? rec.serviceId : undefined,
    qosClass: has(bit('qosClass')) ? rec.qosClass : undefined,
    pkey: has(bit('pKey')) ? rec.pKey : undefined,
    src: qosPort(ctx, src),
    dst: qosPort(ctx, dst),
  });
  if (!level) return walk;
  let { mtu, rate } = walk;
  if (level.mtuLimit !== undefined && mtu > level.mtuLimit) mtu = level.mtuLimit;
  if (level.rateLimit !== undefined && RATE_GBPS[level.rateLimit] !== undefined && rateCompare(rate, level.rateLimit) > 0) rate = level.rateLimit;
  return { mtu, rate, pktLife: level.packetLife };
}

/** The PathRecords of one port pair, at most `limit`. */
export function pairPaths(ctx: SaContext, req: PathRequest, src: EndPort, dst: EndPort, limit: number, prefix: bigint): Uint8Array[] {
  const { rec, mask } = req;
  const has = (b: bigint): boolean => (mask & b) === b;
  const out: Uint8Array[] = [];
  if (limit <= 0 || !src.lid || !dst.lid) return out;
  const slid = has(bit('slid')) ? rec.slid : undefined;
  const dlid = has(bit('dlid')) ? rec.dlid : undefined;
  if (slid !== undefined && (slid < lidRange(src)[0] || slid > lidRange(src)[1])) return out;
  if (dlid !== undefined && (dlid < lidRange(dst)[0] || dlid > lidRange(dst)[1])) return out;
  for (const [s, d, preference] of lidPairs(src, dst, slid, dlid)) {
    const fwd = walkPath(ctx, src, d, dst);
    if (!fwd.ok) continue;
    const p = pathParams(ctx, req, src, dst, s, d, fwd);
    if (!p) continue;
    const rev = walkPath(ctx, dst, s, src);
    const reversible = rev.ok && pathParams(ctx, req, dst, src, d, s, rev) !== undefined;
    if (has(bit('reversible')) && rec.reversible && !reversible) continue;
    out.push(
      PathRecord.encode({
        serviceId: has(bit('serviceId')) ? rec.serviceId : 0n,
        dgid: portGid(ctx, dst, prefix),
        sgid: portGid(ctx, src, prefix),
        dlid: d,
        slid: s,
        rawTraffic: has(bit('rawTraffic')) ? rec.rawTraffic : 0,
        flowLabel: has(bit('flowLabel')) ? rec.flowLabel : 0,
        hopLimit: has(bit('hopLimit')) ? rec.hopLimit : 0,
        tClass: has(bit('tClass')) ? rec.tClass : 0,
        reversible: reversible ? 1 : 0,
        numbPath: 0,
        pKey: p.pkey,
        qosClass: p.qosClass,
        sl: p.sl,
        mtuSelector: Selector.Exactly,
        mtu: p.mtu,
        rateSelector: Selector.Exactly,
        rate: p.rate,
        packetLifeTimeSelector: Selector.Exactly,
        packetLifeTime: p.pktLife,
        preference,
      }),
    );
    if (out.length >= limit) break;
  }
  return out;
}

interface Endpoints {
  src?: EndPort;
  dst?: EndPort;
}

/** The source and destination a PathRecord template names (GID first, else LID). */
export function endpoints(ctx: SaContext, req: PathRequest): Endpoints {
  const { rec, mask } = req;
  const has = (b: bigint): boolean => (mask & b) === b;
  const idx = snapshotPorts(ctx.snapshot);
  let src: EndPort | undefined;
  let dst: EndPort | undefined;
  if (has(bit('sgid'))) src = portByGid(ctx, rec.sgid, 'SGID');
  else if (has(bit('slid'))) {
    src = idx.byLid(rec.slid);
    if (!src) throw new SaRequestError(SaStatus.NoRecords, `no port has SLID ${rec.slid}`);
  }
  if (has(bit('dgid'))) {
    if (rec.dgid >> 120n === 0xffn) throw new SaRequestError(SaStatus.NoRecords, 'multicast DGIDs are answered by MCMemberRecord');
    dst = portByGid(ctx, rec.dgid, 'DGID');
  } else if (has(bit('dlid'))) {
    dst = idx.byLid(rec.dlid);
    if (!dst) throw new SaRequestError(SaStatus.NoRecords, `no port has DLID ${rec.dlid}`);
  }
  return { src, dst };
}

/** The most PathRecords one answer carries (16 MiB of records): a whole-world query of a larger
 * fabric is refused with NoResources rather than holding an unbounded answer. */
export const MAX_PATH_RECORDS = 1 << 18;

/** End ports in LID order (a stable order for "every source / destination" answers). */
const byLidCache = new WeakMap<readonly EndPort[], EndPort[]>();
function byLid(ports: readonly EndPort[]): EndPort[] {
  let sorted = byLidCache.get(ports);
  if (!sorted) byLidCache.set(ports, (sorted = ports.filter((p) => p.lid).sort((a, b) => a.lid - b.lid)));
  return sorted;
}

/** PathRecords for a query (Get: at most one). */
export function queryPaths(ctx: SaContext, q: SaQuery): Uint8Array[] {
  const inter = ctx.interSubnet?.answer(ctx, q);
  if (inter) return inter;
  const req: PathRequest = { rec: PathRecord.decode(q.data), mask: q.componentMask };
  const { src, dst } = endpoints(ctx, req);
  // Neither end given: every path the requester may see (OpenSM's "whole world"), through RMPP.
  const get = q.method === Method.Get;
  const perPair = get ? 1 : (req.mask & bit('numbPath')) === bit('numbPath') ? req.rec.numbPath : Infinity;
  const vis = new Visibility(ctx, q.requester);
  const idx = snapshotPorts(ctx.snapshot);
  const prefix = subnetPrefix(ctx);
  const out: Uint8Array[] = [];
  const all = src && dst ? [] : byLid(idx.endPorts);
  for (const s of src ? [src] : all) {
    for (const d of dst ? [dst] : all) {
      if (!vis.path(s, d)) continue;
      for (const r of pairPaths(ctx, req, s, d, perPair, prefix)) out.push(r);
      if (get && out.length) return out;
      if (out.length > MAX_PATH_RECORDS) {
        throw new SaRequestError(SaStatus.NoResources, `more than ${MAX_PATH_RECORDS} PathRecords: name a source or a destination (SLID/SGID, DLID/DGID)`);
      }
    }
  }
  return out;
}

export const pathRecordHandler: SaHandler = {
  attrIds: [SaAttr.PathRecord],
  handle(q, ctx) {
    if (q.method !== Method.Get && q.method !== Method.GetTable) throw new SaRequestError(MadStatus.UnsupportedMethodAttr, 'PathRecord supports Get and GetTable');
    return { kind: 'records', records: queryPaths(ctx, q) };
  },
};

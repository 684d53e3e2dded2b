/**
 * PathRecord, MultiPathRecord and TraceRecord: paths computed from the forwarding tables the SM
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
import { DEFAULT_GID_PREFIX, MadStatus, Method, NodeType } from '../wire/mad.js';
import { MultiPathRecord, PathRecord, SaAttr, SaStatus, Selector, TraceRecord, multiPathGids, multiPathServiceId, type PathRecord as PathRecordValue } from '../wire/sa.js';
import type { PortInfo } from '../wire/sma.js';
import { SaRequestError } from './engine.js';
import { portOfGid } from './ports.js';
import { commonPkey, pkeyView, portPkeys, shareThis, Visibility } from './visibility.js';
import { lidRange, portKind, snapshotPorts, type EndPort } from '../model/snapshot.js';
import type { QosPort } from '../model/qos-policy.js';
import type { SaContext, SaHandler, SaQuery } from './types.js';

/** The default (and link-local) GID prefix. */


import { RATE_GBPS, portRate, rateCompare } from '../model/rates.js';
import { GUID_MASK } from '../util/guid.js';
import { walkLfts, type WalkHop } from '../model/lft-walk.js';
import { RATE, selectValue } from './selector.js';

export { portRate };

// ---------- walking the forwarding tables ----------

/** One node a path goes through: the port it enters by (0 at the source) and leaves by (0 at the destination). */
export type PathHop = WalkHop;

export type PathWalk =
  | { ok: true; hops: PathHop[]; /** links traversed */ links: number; mtu: number; rate: number }
  | { ok: false; reason: string };

function pinfo(ctx: SaContext, node: number, port: number): PortInfo | undefined {
  return ctx.snapshot.discovery.nodes[node]?.portInfo[port];
}

/** Follow the LFTs from `src` towards `dlid` (owned by `dst`). */
/** OpenSM's default packet_life_time. */
export const DEFAULT_PACKET_LIFE_TIME = 0x12;

/** Walks per SA context (a new context comes with every sweep, so a cache never outlives the
 * tables it was walked on), keyed by source port and destination LID (the LID names the
 * destination port: `dst` is its owner). Bounded: cleared when full. */
const WALK_CACHE_MAX = 200_000;
const walkCache = new WeakMap<SaContext['snapshot'], Map<number, PathWalk>>();

export function walkPath(ctx: SaContext, src: EndPort, dlid: number, dst: EndPort): PathWalk {
  let cache = walkCache.get(ctx.snapshot);
  if (!cache) walkCache.set(ctx.snapshot, (cache = new Map()));
  const key = (src.node * 256 + src.port) * 0x10000 + dlid;
  const hit = cache.get(key);
  if (hit) return hit;
  if (cache.size >= WALK_CACHE_MAX) cache.clear();
  const w = walkUncached(ctx, src, dlid, dst);
  cache.set(key, w);
  return w;
}

function walkUncached(ctx: SaContext, src: EndPort, dlid: number, dst: EndPort): PathWalk {
  const { fabric, routing } = ctx.snapshot;
  if (src.node === dst.node && src.port === dst.port) {
    const pi = pinfo(ctx, src.node, src.port);
    return { ok: true, hops: [{ node: src.node, inPort: 0, outPort: 0 }], links: 0, mtu: pi?.mtuCap || 1, rate: pi ? portRate(pi) : 2 };
  }
  let mtu = Infinity;
  let rate = -1;
  let links = 0;
  // A switch's own port 0 limits what leaves or reaches it (its MTUCap may be below its links').
  const port0 = (node: number): void => {
    if (fabric.nodes[node]!.type === NodeType.Switch) mtu = Math.min(mtu, pinfo(ctx, node, 0)?.mtuCap || Infinity);
  };
  port0(src.node);
  const w = walkLfts(fabric, routing.lfts, src, dlid, dst, (node, port, peer) => {
    for (const x of [pinfo(ctx, node, port), pinfo(ctx, peer.node, peer.port)]) {
      if (!x) continue;
      mtu = Math.min(mtu, x.mtuCap || Infinity, x.neighborMtu || Infinity);
      const r = portRate(x);
      if (rate < 0 || rateCompare(r, rate) < 0) rate = r;
    }
    links++;
  });
  if (!w.ok) {
    const reason = {
      noLink: `node ${w.node} port ${w.port} has no link`,
      noRoute: `switch ${w.node} has no route to LID ${dlid}`,
      notOwner: `LID ${dlid} routed into node ${w.node}, which is not its owner`,
      loop: `no arrival at LID ${dlid} (the route loops)`,
    }[w.reason];
    return { ok: false, reason };
  }
  const end = w.hops.at(-1)!.node;
  port0(end);
  if (mtu === Infinity) mtu = pinfo(ctx, end, 0)?.mtuCap || 1;
  if (rate < 0) rate = 2;
  return { ok: true, hops: w.hops, links, mtu, rate };
}

// ---------- PathRecord ----------

/** Component-mask bits of each PathRecord field (both bits of ServiceID), computed once. */
const PR_BITS: Readonly<Record<string, bigint>> = Object.fromEntries(
  [...new Set(PathRecord.components.map((c) => c.path.replace(/#\d+$/, '')))].map((p) => [p, PathRecord.mask(p)]),
);
const bit = (name: string): bigint => {
  const b = PR_BITS[name];
  if (b === undefined) throw new Error(`PathRecord has no component "${name}"`);
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
function portByGid(ctx: SaContext, gid: bigint, what: string): EndPort {
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
  const sk = view.port(src.node, src.port);
  const dk = view.port(dst.node, dst.port);
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
    const mine = portPkeys(ctx, src.node, src.port);
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
function endpoints(ctx: SaContext, req: PathRequest): Endpoints {
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

// ---------- MultiPathRecord ----------

const MPR_BITS = Object.fromEntries(MultiPathRecord.components.map((c) => [c.path, 1n << BigInt(c.index)])) as Record<string, bigint>;
const SHARED_FIELDS = ['rawTraffic', 'flowLabel', 'hopLimit', 'tClass', 'reversible', 'numbPath', 'pKey', 'qosClass', 'sl', 'mtuSelector', 'mtu', 'rateSelector', 'rate', 'packetLifeTimeSelector', 'packetLifeTime'] as const;

/** PathRecords for every SGID × DGID pair of a MultiPathRecord, round-robin across pairs, up to NumbPath in all. */
export function queryMultiPaths(ctx: SaContext, q: SaQuery): Uint8Array[] {
  const inter = ctx.interSubnet?.answer(ctx, q);
  if (inter) return inter;
  const m = MultiPathRecord.decode(q.data);
  const mmask = q.componentMask;
  const { sgids, dgids } = multiPathGids(m);
  if (!sgids.length || !dgids.length) throw new SaRequestError(SaStatus.ReqInsufficientComponents, 'a MultiPathRecord needs SGIDCount and DGIDCount of at least 1');
  let mask = 0n;
  const rec = PathRecord.zero();
  for (const f of SHARED_FIELDS) {
    if (mmask & MPR_BITS[f]!) {
      mask |= bit(f);
      (rec as Record<string, unknown>)[f] = m[f];
    }
  }
  if (mmask & (MPR_BITS['serviceIdMsb']! | MPR_BITS['serviceIdLsb']!)) {
    mask |= bit('serviceId');
    rec.serviceId = multiPathServiceId(m);
  }
  const limit = mmask & MPR_BITS['numbPath']! ? m.numbPath : Infinity;
  const srcs = sgids.map((g) => portByGid(ctx, g, 'SGID'));
  const dsts = dgids.map((g) => portByGid(ctx, g, 'DGID'));
  const vis = new Visibility(ctx, q.requester);
  const prefix = subnetPrefix(ctx);
  const lists: Candidate[][] = [];
  for (const s of srcs) for (const d of dsts) if (vis.path(s, d)) lists.push(pairPaths(ctx, { rec, mask }, s, d, Infinity, prefix).map((r) => ({ rec: r, src: s, dst: d })));
  // Round-robin across the port pairs.
  const order: Candidate[] = [];
  for (let i = 0; ; i++) {
    let any = false;
    for (const l of lists) {
      if (i < l.length) {
        order.push(l[i]!);
        any = true;
      }
    }
    if (!any) break;
  }
  const indep = mmask & MPR_BITS['independenceSelector']! ? m.independenceSelector : 0;
  const picked = indep ? independentFirst(ctx, order, indep, limit) : order.slice(0, limit);
  return picked.map((c) => c.rec);
}

interface Candidate {
  rec: Uint8Array;
  src: EndPort;
  dst: EndPort;
}

/**
 * IndependenceSelector (MultiPathRecord): the paths chosen so that they share as little as
 * possible, greedily: each next path is the candidate with the fewest elements in common with the
 * paths already chosen (ties: round-robin order). 1 = links (directed switch egress ports), 2 =
 * switches, 3 = chassis (switches by SystemImageGUID). The end ports' own first and last hops
 * cannot differ for a single-port CA, so independence is as much as the fabric allows, not a
 * guarantee. OpenSM ignores the selector; ibsm's reading.
 */
function independentFirst(ctx: SaContext, order: readonly Candidate[], selector: number, limit: number): Candidate[] {
  const { fabric } = ctx.snapshot;
  const elements = (c: Candidate): Set<string> => {
    const dlid = PathRecord.decode(c.rec).dlid;
    const w = walkPath(ctx, c.src, dlid, c.dst);
    const out = new Set<string>();
    if (!w.ok) return out;
    for (const h of w.hops) {
      const n = fabric.nodes[h.node]!;
      if (n.type !== NodeType.Switch) continue;
      if (selector === 1) out.add(`${h.node}:${h.outPort}`);
      else if (selector === 3) out.add(n.systemImageGuid ? `sys:${n.systemImageGuid.toString(16)}` : `node:${h.node}`);
      else out.add(`node:${h.node}`);
    }
    return out;
  };
  const sets = order.map(elements);
  const used = new Set<string>();
  const taken = new Set<number>();
  const out: Candidate[] = [];
  while (out.length < limit && taken.size < order.length) {
    let best = -1;
    let bestShared = Infinity;
    for (let i = 0; i < order.length; i++) {
      if (taken.has(i)) continue;
      let shared = 0;
      for (const e of sets[i]!) if (used.has(e)) shared++;
      if (shared < bestShared) [best, bestShared] = [i, shared];
    }
    taken.add(best);
    out.push(order[best]!);
    for (const e of sets[best]!) used.add(e);
  }
  return out;
}

export const multiPathRecordHandler: SaHandler = {
  attrIds: [SaAttr.MultiPathRecord],
  handle(q, ctx) {
    if (q.method !== Method.GetMulti) throw new SaRequestError(MadStatus.UnsupportedMethodAttr, 'MultiPathRecord supports GetMulti only');
    return { kind: 'records', records: queryMultiPaths(ctx, q), method: Method.GetMultiResp };
  },
};

// ---------- TraceRecord ----------

/** TraceRecords of the path a PathRecord template names: one per node, source to destination. */
export function queryTrace(ctx: SaContext, q: SaQuery): Uint8Array[] {
  const req: PathRequest = { rec: PathRecord.decode(q.data), mask: q.componentMask };
  const { src, dst } = endpoints(ctx, req);
  if (!src || !dst) throw new SaRequestError(SaStatus.ReqInsufficientComponents, 'a trace needs both a source (SGID or SLID) and a destination (DGID or DLID)');
  if (!new Visibility(ctx, q.requester).path(src, dst)) return [];
  const has = (b: bigint): boolean => (req.mask & b) === b;
  const dlid = has(bit('dlid')) ? req.rec.dlid : dst.lid;
  if (dlid < lidRange(dst)[0] || dlid > lidRange(dst)[1]) return [];
  const walk = walkPath(ctx, src, dlid, dst);
  if (!walk.ok) return [];
  const { fabric, sweep } = ctx.snapshot;
  const prefix = subnetPrefix(ctx);
  const portId = (node: number, port: number): bigint => {
    const n = fabric.nodes[node]!;
    return port === 0 && n.type !== NodeType.Switch ? 0n : (n.ports[n.type === NodeType.Switch ? 0 : port]?.guid ?? 0n);
  };
  return walk.hops.map((h) => {
    const n = fabric.nodes[h.node]!;
    const first = h === walk.hops[0];
    const last = h === walk.hops[walk.hops.length - 1];
    return TraceRecord.encode({
      gidPrefix: prefix,
      idGeneration: sweep & 0xffff,
      nodeType: n.type,
      nodeId: n.guid,
      chassisId: n.systemImageGuid,
      entryPortId: first && n.type !== NodeType.Switch ? 0n : portId(h.node, h.inPort),
      exitPortId: last && n.type !== NodeType.Switch ? 0n : portId(h.node, h.outPort),
      entryPort: h.inPort,
      exitPort: h.outPort,
    });
  });
}

export const traceRecordHandler: SaHandler = {
  attrIds: [SaAttr.TraceRecord],
  handle(q, ctx) {
    if (q.method !== Method.GetTraceTable) throw new SaRequestError(MadStatus.UnsupportedMethodAttr, 'TraceRecord supports GetTraceTable only');
    return { kind: 'records', records: queryTrace(ctx, q), method: Method.GetTableResp };
  },
};

/** The PathRecord, MultiPathRecord and TraceRecord handlers. */
export function pathHandlers(): SaHandler[] {
  return [pathRecordHandler, multiPathRecordHandler, traceRecordHandler];
}

/**
 * PathRecords between subnets (docs/routers.md; the design of ../shared/seeds/004): a PathRecord
 * Get/GetTable whose SGID or DGID is off this subnet follows four rules:
 *
 * 1. It needs both an SGID and a DGID (an absent SGID is the requester's port GID, as OpenSM), one
 *    of them in this subnet; neither here: ERR_INVALID_GID.
 * 2. Its fields are relative to the SGID's subnet: with a local SGID they constrain the path to
 *    the router (SLID, DLID, P_Key, SL, MTU ...); with a remote SGID only the P_Key (the one P1
 *    carries) and NumbPath apply here, and its DLID names the router P1 reaches.
 * 3. The answer is relative to this SA's subnet: with a local SGID (P1), SLID = the source, DLID =
 *    a router port that reaches the DGID's prefix, SGID/DGID as asked, HopLimit 255; with a remote
 *    SGID (P2), the path from the local DGID to the router the remote packets arrive by: SGID =
 *    the local port, DGID = the remote one, SLID = the local port, DLID = that router port. The
 *    router is the one whose port in the SGID's subnet has the request's DLID (P1's router), else
 *    the router the request itself came through, else the routers' own choice (below), so packets
 *    injected with P1 arrive by the router P2 names.
 * 4. The SA answers at `<prefix>:0x0200000000000002` (the routers map that GUID to its LID).
 *
 * Several routers to one prefix: the fewest router hops, then a hash picks among them in node-GUID
 * order, the one the simulated routers use for their next hops (`routerHash(SGID, DGID prefix)`):
 * for P1 `routerHash(DGID, this prefix)`, the router the destination's packets come back by, so
 * that P2 validates; GetTable lists the others after it. P_Keys: the source (or destination), the router port and the
 * requester share the partition (sa/visibility.ts), the requested P_Key is one they share. A prefix
 * no router reaches: the `--prefix-routes` lines (OpenSM's stop-gap: the router port the first
 * matching line names, HopLimit 255; a remote SGID then gets ERR_INVALID_GID, as OpenSM), else
 * ERR_INVALID_GID. Pure.
 */
import { DEFAULT_GID_PREFIX, Method } from '../wire/mad.js';
import { MultiPathRecord, PathRecord, SaAttr, SaStatus, multiPathGids, type PathRecord as PathRecordValue } from '../wire/sa.js';
import { snapshotPorts, type EndPort } from '../model/snapshot.js';
import { routerHash, type RouterPortView } from '../model/subnets.js';
import { SaRequestError } from './engine.js';
import { pairPaths, subnetPrefix, type PathRequest } from './path.js';
import { portOfGid } from './ports.js';
import { matchPrefixRoute, type PrefixRoute } from './prefix-routes.js';
import { Visibility } from './visibility.js';
import type { InterSubnetPaths, SaContext, SaQuery } from './types.js';
import { GUID_MASK, formatGuid } from '../util/guid.js';

const HOP_LIMIT = 0xff;
const bit = (name: string): bigint => PathRecord.mask(name);
const B_SGID = bit('sgid');
const B_DGID = bit('dgid');
const B_DLID = bit('dlid');
const B_PKEY = bit('pKey');
const B_NUMB = bit('numbPath');
const B_REV = bit('reversible');

export interface InterSubnetOptions {
  /** The router ports of this subnet as the SM read them (sm/router-tables.ts). */
  routers: readonly RouterPortView[];
  /** OpenSM's prefix-routes.conf lines (sa/prefix-routes.ts), for prefixes no router reports. */
  prefixRoutes?: readonly PrefixRoute[];
}

export function interSubnetPaths(o: InterSubnetOptions): InterSubnetPaths {
  return { answer: (ctx, q) => answer(ctx, q, o) };
}


interface Router {
  view?: RouterPortView;
  ep: EndPort;
}

/** Router ports of the snapshot that reach `prefix`, fewest hops first, in node-GUID order. */
function routersTo(ctx: SaContext, o: InterSubnetOptions, prefix: bigint): Router[] {
  const idx = snapshotPorts(ctx.snapshot);
  let best = Infinity;
  let out: Router[] = [];
  for (const v of o.routers) {
    const ep = idx.byGuid.get(v.portGuid);
    if (!ep?.lid) continue;
    const r = v.reach.find((x) => x.prefix === prefix);
    if (!r) continue;
    if (r.hops < best) {
      best = r.hops;
      out = [];
    }
    if (r.hops === best) out.push({ view: v, ep });
  }
  return out.sort((a, b) => (a.view!.nodeGuid < b.view!.nodeGuid ? -1 : a.view!.nodeGuid > b.view!.nodeGuid ? 1 : 0));
}

/** The prefix-routes.conf choice: the router port of the first matching line that is here. */
function stopGapRouter(ctx: SaContext, o: InterSubnetOptions, prefix: bigint): Router | undefined {
  if (!o.prefixRoutes?.length) return undefined;
  const idx = snapshotPorts(ctx.snapshot);
  const routers = idx.endPorts.filter((e) => e.kind === 'router' && e.lid).sort((a, b) => (a.guid < b.guid ? -1 : a.guid > b.guid ? 1 : 0));
  const guid = matchPrefixRoute(o.prefixRoutes, prefix, routers.map((e) => e.guid));
  const ep = guid !== undefined ? idx.byGuid.get(guid) : undefined;
  return ep ? { ep, view: o.routers.find((v) => v.portGuid === ep.guid) } : undefined;
}

function rotate<T>(xs: readonly T[], k: number): T[] {
  if (!xs.length) return [];
  const s = k % xs.length;
  return [...xs.slice(s), ...xs.slice(0, s)];
}

function answer(ctx: SaContext, q: SaQuery, o: InterSubnetOptions): Uint8Array[] | undefined {
  if (q.attrId === SaAttr.MultiPathRecord) return multiPath(ctx, q, o);
  if (q.attrId !== SaAttr.PathRecord) return undefined;
  const rec = PathRecord.decode(q.data);
  const vis = new Visibility(ctx, q.requester);
  return pathAnswer(ctx, o, vis, rec, q.componentMask, q.method === Method.Get);
}

/** MultiPathRecord with an off-subnet SGID or DGID: each SGID x DGID pair by the PathRecord rules,
 * round-robin across the pairs, up to NumbPath. */
function multiPath(ctx: SaContext, q: SaQuery, o: InterSubnetOptions): Uint8Array[] | undefined {
  const m = MultiPathRecord.decode(q.data);
  const { sgids, dgids } = multiPathGids(m);
  const own = subnetPrefix(ctx);
  const foreign = (g: bigint): boolean => g >> 64n !== own && g >> 64n !== DEFAULT_GID_PREFIX && g >> 120n !== 0xffn;
  if (!sgids.some(foreign) && !dgids.some(foreign)) return undefined;
  const mbit = (f: string): bigint => 1n << BigInt(MultiPathRecord.components.find((c) => c.path === f)!.index);
  let mask = B_SGID | B_DGID;
  const rec = PathRecord.zero();
  for (const f of ['rawTraffic', 'flowLabel', 'hopLimit', 'tClass', 'reversible', 'pKey', 'qosClass', 'sl', 'mtuSelector', 'mtu', 'rateSelector', 'rate', 'packetLifeTimeSelector', 'packetLifeTime'] as const) {
    if (q.componentMask & mbit(f)) {
      mask |= PathRecord.mask(f);
      (rec as Record<string, unknown>)[f] = m[f];
    }
  }
  const limit = q.componentMask & mbit('numbPath') ? m.numbPath : Infinity;
  const vis = new Visibility(ctx, q.requester);
  const lists: Uint8Array[][] = [];
  for (const sgid of sgids)
    for (const dgid of dgids) {
      const inter = pathAnswer(ctx, o, vis, { ...rec, sgid, dgid }, mask, false);
      if (inter) lists.push(inter);
      else {
        // a pair inside this subnet, as path.ts answers it
        const s = portOfGid(ctx, sgid);
        const d = portOfGid(ctx, dgid);
        lists.push(s && d && vis.path(s, d) ? pairPaths(ctx, { rec, mask: mask & ~(B_SGID | B_DGID) }, s, d, Infinity, own) : []);
      }
    }
  const out: Uint8Array[] = [];
  for (let i = 0; out.length < limit; i++) {
    let any = false;
    for (const l of lists) {
      if (i < l.length && out.length < limit) {
        out.push(l[i]!);
        any = true;
      }
    }
    if (!any) break;
  }
  return out;
}

function pathAnswer(ctx: SaContext, o: InterSubnetOptions, vis: Visibility, rec: PathRecordValue, mask: bigint, get: boolean): Uint8Array[] | undefined {
  const has = (b: bigint): boolean => (mask & b) === b;
  const own = subnetPrefix(ctx);
  const local = (gid: bigint): boolean => gid >> 64n === own || gid >> 64n === DEFAULT_GID_PREFIX;
  const remoteS = has(B_SGID) && !local(rec.sgid);
  const remoteD = has(B_DGID) && !local(rec.dgid) && rec.dgid >> 120n !== 0xffn;
  if (!remoteS && !remoteD) return undefined;
  if (remoteS && remoteD) throw new SaRequestError(SaStatus.ReqInvalidGid, `neither SGID nor DGID is in this subnet (prefix ${formatGuid(own)})`);
  let sgid = rec.sgid;
  if (!has(B_SGID)) {
    // OpenSM: an absent SGID is the requester's port
    if (!vis.requester) throw new SaRequestError(SaStatus.ReqInvalidGid, 'no SGID and the requester is not known in this subnet');
    sgid = (own << 64n) | vis.requester.guid;
  }
  const perPair = get ? 1 : has(B_NUMB) && rec.numbPath ? rec.numbPath : Infinity;
  const out: Uint8Array[] = [];
  const finish = (r: Uint8Array, dgid: bigint, sgidOut?: bigint): Uint8Array => {
    const v = PathRecord.decode(r);
    return PathRecord.encode({ ...v, dgid, ...(sgidOut !== undefined ? { sgid: sgidOut } : {}), hopLimit: HOP_LIMIT });
  };

  if (!remoteS) {
    // P1: from a local source towards a router that reaches the DGID's prefix
    const prefix = rec.dgid >> 64n;
    const src = portOfGid(ctx, sgid);
    if (!src) throw new SaRequestError(SaStatus.ReqInvalidGid, `SGID: no port with GUID ${formatGuid(sgid & GUID_MASK)} in this subnet`);
    let cands = routersTo(ctx, o, prefix);
    if (!cands.length) {
      const sg = stopGapRouter(ctx, o, prefix);
      if (sg) cands = [sg];
    }
    if (!cands.length) throw new SaRequestError(SaStatus.ReqInvalidGid, `DGID prefix ${formatGuid(prefix)}: no router of this subnet reaches it`);
    const req: PathRequest = { rec, mask: mask & ~B_DGID };
    // the router the destination's packets come back by (the routers' own choice for them), so P2 validates
    for (const r of rotate(cands, routerHash(rec.dgid, own))) {
      if (!vis.path(src, r.ep)) continue;
      for (const p of pairPaths(ctx, req, src, r.ep, perPair, own)) out.push(finish(p, rec.dgid));
      if (get && out.length) break;
    }
    return get ? out.slice(0, 1) : out;
  }

  // P2: a remote source; the answer is the path from the local destination to the router its packets arrive by
  const prefix = sgid >> 64n;
  const dst = portOfGid(ctx, rec.dgid);
  if (!dst) throw new SaRequestError(SaStatus.ReqInvalidGid, `DGID: no port with GUID ${formatGuid(rec.dgid & GUID_MASK)} in this subnet`);
  const cands = routersTo(ctx, o, prefix);
  if (!cands.length) throw new SaRequestError(SaStatus.ReqInvalidGid, `SGID prefix ${formatGuid(prefix)}: no router of this subnet reaches it`);
  const byDlid = has(B_DLID) ? cands.find((r) => r.view!.ports.some((p) => p.prefix === prefix && p.lid === rec.dlid)) : undefined;
  const viaRequest = vis.requester ? cands.find((r) => r.ep.guid === vis.requester!.guid) : undefined;
  const order = byDlid ? [byDlid] : viaRequest ? [viaRequest] : rotate(cands, routerHash(sgid, own));
  const req: PathRequest = { rec, mask: mask & (B_PKEY | B_NUMB | B_REV) };
  for (const r of order) {
    if (!vis.path(dst, r.ep)) continue;
    for (const p of pairPaths(ctx, req, dst, r.ep, perPair, own)) out.push(finish(p, sgid));
    if (get && out.length) break;
  }
  return get ? out.slice(0, 1) : out;
}

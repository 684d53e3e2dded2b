/** MultiPathRecord (sa/path.ts): PathRecords for every SGID x DGID pair, round-robin across pairs,
 * independent paths first when asked. Pure. */
import { MadStatus, Method, NodeType } from '../wire/mad.js';
import { MultiPathRecord, PathRecord, SaAttr, SaStatus, multiPathGids, multiPathServiceId } from '../wire/sa.js';
import { SaRequestError } from './engine.js';
import { Visibility } from './visibility.js';
import type { EndPort } from '../model/snapshot.js';
import type { SaContext, SaHandler, SaQuery } from './types.js';
import { bit, pairPaths, portByGid, subnetPrefix } from './path.js';
import { walkPath } from './path-walk.js';

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

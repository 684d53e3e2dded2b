/** TraceRecord (sa/path.ts): one record per node of the path a PathRecord template names. Pure. */
import { MadStatus, Method, NodeType } from '../wire/mad.js';
import { PathRecord, SaAttr, SaStatus, TraceRecord } from '../wire/sa.js';
import { SaRequestError } from './engine.js';
import { Visibility } from './visibility.js';
import { lidRange } from '../model/snapshot.js';
import type { SaContext, SaHandler, SaQuery } from './types.js';
import { bit, endpoints, subnetPrefix, type PathRequest } from './path.js';
import { walkPath } from './path-walk.js';

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

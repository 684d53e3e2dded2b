/**
 * The client side of inter-subnet paths (docs/routers.md; the a-g sequence of ../shared/seeds/004):
 *
 * a. PathRecord Get to the local SA, SGID = the local port, DGID = the remote one;
 * b. its record: a path to the SA's preferred router towards the DGID's subnet;
 * c. take the next P1 (after the first: a GetTable, one path per router, once);
 * d. PathRecord Get to the remote SA (`<DGID prefix>:0x0200000000000002`, sent with a GRH to
 *    P1's DLID, the router), formatted from P1: SGID, DGID, SLID, DLID, TClass, FlowLabel, SL, P_Key;
 * e/f. its answer is P2 (relative to the remote subnet: the remote port to the router there);
 * g. validation: the local SA is asked for the reverse of P2 (SGID = the remote port, SLID/DLID =
 *    P2's); the path is valid when the packets the remote side injects with P2 arrive by P1's
 *    router (its DLID is P1's DLID) at P1's source (its SLID is P1's SLID). Not valid: back to c.
 *
 * When the remote SA cannot be reached (a timeout) the answer is P1 alone (OpenSM's stop-gap:
 * `--prefix-routes`), flagged `remoteSa: 'unreachable'`.
 */
import type { MadRpc, RequestOptions } from '../rpc/madrpc.js';
import { MadTimeoutError } from '../rpc/errors.js';
import { PathRecord, SaAttr, SaStatus, type PathRecord as PathRecordValue } from '../wire/sa.js';
import { SA_WELL_KNOWN_GUID } from '../wire/router.js';
import { SaClient, SaStatusError } from './client.js';
import { IbsmError } from '../util/errors.js';

export interface InterSubnetPathOptions {
  /** The local SA's LID. */
  saLid: number;
  sgid: bigint;
  dgid: bigint;
  /** A P_Key the path must have. */
  pkey?: number;
  smKey?: bigint;
  request?: RequestOptions;
}

export interface InterSubnetAttempt {
  p1: PathRecordValue;
  p2?: PathRecordValue;
  validation?: PathRecordValue;
  valid: boolean;
  /** Why this P1 was not kept. */
  reason?: string;
}

export interface InterSubnetPath {
  p1: PathRecordValue;
  /** undefined when the remote SA could not be reached (P1 alone, the stop-gap). */
  p2?: PathRecordValue;
  validation?: PathRecordValue;
  valid: boolean;
  remoteSa: 'answered' | 'unreachable';
  /** Every P1 tried, in order (more than one: validation failed and the sequence went back to c). */
  attempts: InterSubnetAttempt[];
  /** SA requests sent (retries included) and MADs the RPC sent, for the whole sequence. */
  saRequests: number;
  madsSent: number;
}

/** No inter-subnet path: the local SA has none, or no P1 validated. */
export class InterSubnetPathError extends IbsmError {
  override readonly name = 'InterSubnetPathError';
  constructor(
    message: string,
    readonly attempts: InterSubnetAttempt[],
  ) {
    super(message);
  }
}

const M = (names: string[]): bigint => names.reduce((m, n) => m | PathRecord.mask(n), 0n);
const P1_ASK = M(['sgid', 'dgid']);
const P2_ASK = M(['sgid', 'dgid', 'slid', 'dlid', 'tClass', 'flowLabel', 'sl', 'pKey']);
const V_ASK = M(['sgid', 'dgid', 'slid', 'dlid', 'pKey']);

/** The GID of the SA of the subnet a GID is in. */
export function saGidOf(gid: bigint): bigint {
  return ((gid >> 64n) << 64n) | SA_WELL_KNOWN_GUID;
}

export async function resolveInterSubnetPath(rpc: MadRpc, o: InterSubnetPathOptions): Promise<InterSubnetPath> {
  const sent0 = rpc.stats.sent;
  let saRequests = 0;
  const local = new SaClient(rpc, { saLid: o.saLid, smKey: o.smKey, request: o.request });
  // a, b: the SA's preferred P1 with a Get (one MAD each way); the other routers' P1s (a GetTable)
  // only when that one does not validate
  const ask = { sgid: o.sgid, dgid: o.dgid, ...(o.pkey !== undefined ? { pKey: o.pkey } : {}) };
  const askMask = P1_ASK | (o.pkey !== undefined ? PathRecord.mask('pKey') : 0n);
  saRequests++;
  let first: PathRecordValue;
  try {
    first = await local.get<PathRecordValue>(SaAttr.PathRecord, PathRecord, ask, askMask);
  } catch (e) {
    if (e instanceof SaStatusError && (e.status & 0xff00) === SaStatus.NoRecords) throw new InterSubnetPathError('the local SA has no path towards the DGID (no router reaches its subnet, or no shared partition)', []);
    throw e;
  }
  const p1s: PathRecordValue[] = [first];
  let more = false;
  const attempts: InterSubnetAttempt[] = [];
  for (let k = 0; ; k++) {
    if (k === p1s.length) {
      // c again: the other routers' P1s, once
      if (more) break;
      more = true;
      saRequests++;
      const all = await local.getTable<PathRecordValue>(SaAttr.PathRecord, PathRecord, ask, askMask);
      for (const r of all) if (!p1s.some((p) => p.dlid === r.dlid && p.slid === r.slid)) p1s.push(r);
      if (k === p1s.length) break;
    }
    const p1 = p1s[k]!;
    // c, d
    const remote = new SaClient(rpc, { saLid: p1.dlid, smKey: o.smKey, request: o.request, grh: { dgid: saGidOf(o.dgid), hopLimit: p1.hopLimit || 0xff, trafficClass: p1.tClass, flowLabel: p1.flowLabel } });
    let p2: PathRecordValue;
    try {
      saRequests++;
      p2 = await remote.get(SaAttr.PathRecord, PathRecord, { sgid: p1.sgid, dgid: p1.dgid, slid: p1.slid, dlid: p1.dlid, tClass: p1.tClass, flowLabel: p1.flowLabel, sl: p1.sl, pKey: p1.pKey }, P2_ASK);
    } catch (e) {
      if (e instanceof MadTimeoutError) {
        attempts.push({ p1, valid: false, reason: 'the remote SA did not answer' });
        return { p1, valid: false, remoteSa: 'unreachable', attempts, saRequests, madsSent: rpc.stats.sent - sent0 };
      }
      if (e instanceof SaStatusError) {
        attempts.push({ p1, valid: false, reason: `remote SA: ${e.message}` });
        continue;
      }
      throw e;
    }
    // g
    let v: PathRecordValue;
    try {
      saRequests++;
      v = await local.get(SaAttr.PathRecord, PathRecord, { sgid: p2.sgid, dgid: p2.dgid, slid: p2.slid, dlid: p2.dlid, pKey: p2.pKey }, V_ASK);
    } catch (e) {
      if (!(e instanceof SaStatusError)) throw e;
      attempts.push({ p1, p2, valid: false, reason: `validation: ${e.message}` });
      continue;
    }
    const valid = v.dlid === p1.dlid && v.slid === p1.slid;
    attempts.push({ p1, p2, validation: v, valid, ...(valid ? {} : { reason: `packets sent with P2 arrive by LID ${v.dlid}, not P1's router LID ${p1.dlid}` }) });
    if (valid) return { p1, p2, validation: v, valid, remoteSa: 'answered', attempts, saRequests, madsSent: rpc.stats.sent - sent0 };
  }
  throw new InterSubnetPathError(`no P1 of ${p1s.length} validated: ${attempts.map((a) => a.reason).join('; ')}`, attempts);
}

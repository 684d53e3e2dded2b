import type { MadRpc, SmpSink } from '../rpc/madrpc.js';
import { Method, SmpAttr } from '../wire/mad.js';

/** A directed-route Set: where, what, and the M_Key to present (default the RPC's). SmpWrite is one. */
export interface SmpSetReq {
  readonly path: readonly number[];
  readonly attr: number;
  readonly mod: number;
  readonly data: Uint8Array;
  readonly mkey?: bigint;
}

/** What the SM needs from the RPC layer to talk to SMAs: directed-route and LID-routed SMP
 * Get/Set returning the 64-byte SMP data of the response. Implemented over MadRpc. */
export interface SmpClient {
  /** `path`: egress port at each hop from the SM's node (empty: the SM's own node). */
  getDr(path: readonly number[], attrId: number, attrMod?: number): Promise<Uint8Array>;
  /** `mkey`: the M_Key to present instead of the RPC's (a port whose own key the SM learnt). */
  setDr(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, mkey?: bigint): Promise<Uint8Array>;
  /** setDr of `req` settled through a callback slot (`sink.smpOk(req, data)` or
   * `sink.smpFailed(req, e)`, exactly once) instead of a promise: no promise or closure per SMP.
   * Optional: the apply step uses setDr where it is missing. */
  setDrTo?<C extends SmpSetReq>(req: C, sink: SmpSink<C>): void;
  getLid(lid: number, attrId: number, attrMod?: number): Promise<Uint8Array>;
  setLid(lid: number, attrId: number, attrMod: number, data: Uint8Array): Promise<Uint8Array>;
  /** A LID-routed Trap (SubnTrap, attribute Notice) carrying `notice` (64 bytes of SMP data);
   * resolves when the receiver's TrapRepress arrives. */
  trap(lid: number, notice: Uint8Array): Promise<void>;
  /** SMPs sent so far (including retries). */
  readonly sent: number;
}

export type { SmpSink };

/** The SM's view of MadRpc. */
export function smpClientOf(rpc: MadRpc): SmpClient {
  return {
    getDr: (path, attrId, attrMod = 0) => rpc.smpGetDr(path, attrId, attrMod),
    setDr: (path, attrId, attrMod, data, mkey) => rpc.smpSetDr(path, attrId, attrMod, data, mkey !== undefined ? { mkey } : undefined),
    setDrTo: (req, sink) => rpc.smpSetDrTo(req.path, req.attr, req.mod, req.data, req.mkey, sink, req),
    getLid: (lid, attrId, attrMod = 0) => rpc.smpGet(lid, attrId, attrMod),
    setLid: (lid, attrId, attrMod, data) => rpc.smpSet(lid, attrId, attrMod, data),
    trap: (lid, notice) => rpc.request(rpc.buildSmpLid(Method.Trap, SmpAttr.Notice, 0, notice), { lid, qpn: 0 }, { retries: 1 }).then(() => undefined),
    get sent() {
      return rpc.stats.sent;
    },
  };
}

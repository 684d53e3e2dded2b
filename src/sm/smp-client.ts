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

/** A directed-route Get: where and what. The context a callback-slot Get (getDrTo) settles with. */
export interface SmpGetReq {
  readonly path: readonly number[];
  readonly attr: number;
  readonly mod: number;
}

/** How many times the layer below may try an SMP: `retries` after the first (default: the
 * layer's own, MadRpc's `retries`). The SM's retry layer (sm/retry.ts) asks for `ONE_TRY`: it
 * owns the SMP's whole budget, so no retries nest under its own. */
export interface SmpTry {
  readonly retries?: number;
  /** Tries of this SMP already made by the layer above (sm/retry.ts's rounds): an adaptive
   * timeout is backed off as for MadRpc's own retries (RequestOptions.priorTries). */
  readonly priorTries?: number;
}

/** One try, no retries below: what the retry layer asks of the client under it. */
export const ONE_TRY: SmpTry = Object.freeze({ retries: 0 });

/** What the SM needs from the RPC layer to talk to SMAs: directed-route and LID-routed SMP
 * Get/Set returning the 64-byte SMP data of the response. Implemented over MadRpc. `t`: the
 * tries the client may make (a client without retries of its own ignores it). */
export interface SmpClient {
  /** `path`: egress port at each hop from the SM's node (empty: the SM's own node). */
  getDr(path: readonly number[], attrId: number, attrMod?: number, t?: SmpTry): Promise<Uint8Array>;
  /** `mkey`: the M_Key to present instead of the RPC's (a port whose own key the SM learnt). */
  setDr(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, mkey?: bigint, t?: SmpTry): Promise<Uint8Array>;
  /** setDr of `req` settled through a callback slot (`sink.smpOk(req, data)` or
   * `sink.smpFailed(req, e)`, exactly once) instead of a promise: no promise or closure per SMP.
   * Optional: the apply step uses setDr where it is missing. */
  setDrTo?<C extends SmpSetReq>(req: C, sink: SmpSink<C>, t?: SmpTry): void;
  /** getDr of `req` settled through a callback slot, as setDrTo. Optional: discovery uses getDr
   * where it is missing. */
  getDrTo?<C extends SmpGetReq>(req: C, sink: SmpSink<C>, t?: SmpTry): void;
  getLid(lid: number, attrId: number, attrMod?: number, t?: SmpTry): Promise<Uint8Array>;
  setLid(lid: number, attrId: number, attrMod: number, data: Uint8Array, t?: SmpTry): Promise<Uint8Array>;
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
    getDr: (path, attrId, attrMod = 0, t) => rpc.smpGetDr(path, attrId, attrMod, undefined, t),
    setDr: (path, attrId, attrMod, data, mkey, t) => rpc.smpSetDr(path, attrId, attrMod, data, mkey !== undefined ? { ...t, mkey } : t),
    setDrTo: (req, sink, t) => rpc.smpSetDrTo(req.path, req.attr, req.mod, req.data, req.mkey, sink, req, t),
    getDrTo: (req, sink, t) => rpc.smpGetDrTo(req.path, req.attr, req.mod, sink, req, t),
    getLid: (lid, attrId, attrMod = 0, t) => rpc.smpGet(lid, attrId, attrMod, undefined, t),
    setLid: (lid, attrId, attrMod, data, t) => rpc.smpSet(lid, attrId, attrMod, data, t),
    trap: (lid, notice) => rpc.request(rpc.buildSmpLid(Method.Trap, SmpAttr.Notice, 0, notice), { lid, qpn: 0 }, { retries: 1 }).then(() => undefined),
    get sent() {
      return rpc.stats.sent;
    },
  };
}

/** MadRpc's options and counters (rpc/madrpc.ts). */
import type { MadAddress } from '../transport/types.js';
import type { DestinationKey } from './ident.js';
import type { RmppOptions } from './rmpp.js';
import type { RtoOptions } from './rto.js';

export interface MadRpcOptions {
  /** Per-try response timeout (with `adaptiveTimeout`: the first try's, until a round trip was
   * measured). Default 100 ms. */
  timeoutMs?: number;
  /** Timeouts from measured round trips (RFC 6298 SRTT/RTTVAR, Karn's rule) with the timeout
   * doubled at each retry of a request (src/rpc/rto.ts). Off by default: every try waits
   * `timeoutMs`. A request given its own `timeoutMs` keeps it. */
  adaptiveTimeout?: boolean | Omit<RtoOptions, 'initialMs'>;
  /** Extra tries after the first. Default 3. */
  retries?: number;
  /** Most requests outstanding at once. Default 16. */
  window?: number;
  /** Most requests outstanding to one destination. Default 4. */
  perDestinationWindow?: number;
  /** Destination key for the per-destination window. Default: DR path for class 0x81, else the LID. */
  destinationKey?: (mad: Uint8Array, addr: MadAddress) => DestinationKey;
  /** M_Key put in SMPs built by smpGet/smpSet/smpGetDr/smpSetDr. Default 0. */
  mkey?: bigint;
  /** RMPP in TypeScript (default on), or `false` where the kernel does RMPP (real hardware). */
  rmpp?: RmppOptions | false;
  /** First low TID to hand out (default 1; TIDs run 1..2^30-1 and wrap); tests use it to exercise wrap-around. */
  firstTid?: number;
  /** Let the event loop deliver what arrived before expiring tries (default true; see onTimer). */
  graceTurn?: boolean;
  /** Multi-segment requests from one peer LID being reassembled at once (default 16); a first
   * segment beyond it is dropped and counted in `peerRmppRefused` (the peer retries its request). */
  maxPeerRmppPerLid?: number;
}

export interface RequestOptions {
  timeoutMs?: number;
  retries?: number;
  /** Tries of this request already made by a layer above as requests of their own (the SM's
   * retry rounds): the adaptive timeout of each try here is backed off as if those had been
   * MadRpc's own (RtoEstimator.forTry(priorTries + try)), up to `timeoutMs` of the options
   * (OpenSM's transaction timeout) unless the RTO is above it. No effect on a fixed timeout. */
  priorTries?: number;
  /** Override the destination key of this request. */
  destination?: DestinationKey;
}

export interface SmpOptions extends RequestOptions {
  mkey?: bigint;
}

export interface MadRpcStats {
  /** MADs handed to the transport as requests (first tries and retries). */
  sent: number;
  retries: number;
  /** Tries that expired without a response. */
  timeouts: number;
  /** Tries the transport handed back with a non-zero status (the request, or its answer: ibsim
   * hands back an answer it lost on the way with status 110). */
  bounced: number;
  /** Requests rejected after all tries (timeouts or undeliverable). */
  failed: number;
  /** Responses matched to a request. */
  responses: number;
  /** Responses with no outstanding request (late, duplicate or foreign). */
  unmatched: number;
  /** Unsolicited MADs handed to a handler. */
  unsolicited: number;
  /** Unsolicited MADs no handler wanted. */
  unhandled: number;
  /** Responses sent with respond()/respondRmpp(). */
  responsesSent: number;
  /** Received MADs too short to carry a header, and SMP responses too short for an SMP or of
   * another attribute than their request's. */
  malformed: number;
}

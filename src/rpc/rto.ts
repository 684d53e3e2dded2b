/**
 * MadRpc's adaptive retransmission timeout, after RFC 6298: a smoothed round-trip time (SRTT) and
 * its variation (RTTVAR) from measured round trips, RTO = SRTT + max(G, 4·RTTVAR) within
 * [minMs, maxMs]. Only requests answered on their first try are measured (Karn's algorithm: the
 * answer to a retried request may belong to any of its tries). Each retry of one request doubles
 * its timeout (exponential backoff, capped at maxMs), so a congested destination sees fewer
 * retries, not more. Pure: times are passed in.
 */

export interface RtoOptions {
  /** RTO before any round trip was measured (MadRpcOptions.timeoutMs). */
  initialMs: number;
  /** Lowest RTO (a timer granularity and an SMA's processing time). Default 10 ms. */
  minMs?: number;
  /** Highest RTO, backoff included. Default max(8 × initialMs, 2000). */
  maxMs?: number;
  /** Clock granularity G of RFC 6298. Default 1 ms. */
  granularityMs?: number;
}

const ALPHA = 1 / 8;
const BETA = 1 / 4;

export class RtoEstimator {
  private srtt: number | undefined;
  private rttvar = 0;
  private rtoMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  private readonly g: number;
  /** Round trips measured so far. */
  samples = 0;

  constructor(o: RtoOptions) {
    this.minMs = o.minMs ?? 10;
    this.maxMs = Math.max(this.minMs, o.maxMs ?? Math.max(8 * o.initialMs, 2000));
    this.g = o.granularityMs ?? 1;
    this.rtoMs = this.clamp(o.initialMs);
  }

  /** The timeout of a first try now. */
  get rto(): number {
    return this.rtoMs;
  }

  /** The smoothed round trip, once one was measured. */
  get smoothedRtt(): number | undefined {
    return this.srtt;
  }

  /** A round trip of `ms` measured on a request answered at its first try. */
  sample(ms: number): void {
    const r = Math.max(0, ms);
    this.samples++;
    if (this.srtt === undefined) {
      this.srtt = r;
      this.rttvar = r / 2;
    } else {
      this.rttvar = (1 - BETA) * this.rttvar + BETA * Math.abs(this.srtt - r);
      this.srtt = (1 - ALPHA) * this.srtt + ALPHA * r;
    }
    this.rtoMs = this.clamp(this.srtt + Math.max(this.g, 4 * this.rttvar));
  }

  /** The timeout of try number `tries` (1 = the first) of one request: doubled per retry, up to
   * `ceilMs` (never below the RTO itself; default and at most maxMs). */
  forTry(tries: number, ceilMs = this.maxMs): number {
    return Math.min(Math.max(this.rtoMs, Math.min(ceilMs, this.maxMs)), this.rtoMs * 2 ** Math.max(0, Math.min(tries - 1, 20)));
  }

  private clamp(ms: number): number {
    return Math.min(this.maxMs, Math.max(this.minMs, ms));
  }
}

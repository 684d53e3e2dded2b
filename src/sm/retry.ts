/** The SM's one retry layer for its sweeps' SMPs (docs/architecture.md, "Retries"). Every SMP a
 * sweep sends is tried here at most 1 + `rounds` times in all: the client below makes one try of
 * each (ONE_TRY: MadRpc retries none of them), so no retries nest. An SMP that timed out (no
 * answer, or the transport handed it back undelivered) or came back BUSY is tried again after a
 * pause (doubling from `backoffMs` up to `maxBackoffMs`, on the injected clock).
 * A Set whose answer was lost may have taken effect, so its retry can be refused (the
 * INIT→ARMED PortInfo Set retried on a port that is Armed already: MAD status 0x1c): a Set that
 * fails is followed by a Get of the same attribute, and when the SMA already holds what the Set
 * asked for, the Set is done (its answer is the Get's). What still fails is counted by reason and
 * thrown to the sweep, which leaves that node or port out of this sweep.
 *
 * Only fabric failures are retried (MadTimeoutError, MadStatusError); anything else (a closed RPC,
 * a transport error: local problems) goes straight up. */
import { MadStatusError, MadTimeoutError } from '../rpc/errors.js';
import { PortState, SmpAttr } from '../wire/mad.js';
import { PortInfo } from '../wire/sma.js';
import type { Clock } from '../util/clock.js';
import { ONE_TRY, type SmpClient, type SmpGetReq, type SmpSetReq, type SmpSink, type SmpTry } from './smp-client.js';

/** Why an SMP was given up: no answer, or an error status the SMA stood by. */
export type SmpFailureReason = 'timeout' | 'status';

export interface SmpRetryOptions {
  /** Tries after the first (default DEFAULT_SMP_RETRY.rounds): the SMP's budget is 1 + rounds. */
  rounds?: number;
  /** Pause before the first retry (default DEFAULT_SMP_RETRY.backoffMs), doubled at each further
   * one up to `maxBackoffMs` (default: DEFAULT_SMP_RETRY.maxBackoffMs with the default backoffMs,
   * no cap with a backoffMs given). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

/** The default budget: 12 tries of an SMP, 105 ms of pauses between them at most (5 ms, then
 * 10 ms each). Under 20 % loss each way (a try answered with probability 0.64) an SMP is given up
 * once in 200,000; an SMP that is never answered costs 12 timeouts and 105 ms, no more than the
 * two layers before cost (MadRpc's 1+3 tries, or 1+2, inside 1+3 rounds here, with 140 ms of
 * pauses: 16 or 12 timeouts). */
export const DEFAULT_SMP_RETRY: Required<SmpRetryOptions> = { rounds: 11, backoffMs: 5, maxBackoffMs: 10 };

/** The try of each retry round (one try each, MadRpc retrying none): round k's timeout is MadRpc's
 * adaptive one backed off k + 1 times, as its own retries' would be (RtoEstimator.forTry), up to
 * 8 times the RTO and to MadRpc's configured timeout (unless the RTO is above it). Each round
 * being a request of its own, its timeout would otherwise be the RTO of every first try (10 ms at
 * its floor), and an SMA answering in 15 ms would be given up after its 12 tries in ~225 ms.
 * Backed off, an SMP never answered costs ~0.9 s at that floor (12 tries: 10 + 20 + 40 + 9 × 80
 * ms, and the pauses), about OpenSM's (4 tries of 200 ms). A fixed timeout (MadRpc without
 * adaptiveTimeout: the in-process fabric) is not backed off. */
const RETRY_TRIES: readonly SmpTry[] = [1, 2, 3].map((k) => Object.freeze({ retries: 0, priorTries: k }));

/** MAD status bit 0: the SMA is busy; try again later. */
const BUSY = 0x1;

/** An SMP failure the sweep survives (the fabric's, not ours). */
export function isFabricFailure(e: unknown): e is MadTimeoutError | MadStatusError {
  return e instanceof MadTimeoutError || e instanceof MadStatusError;
}

/** Does `current` (what a Get of the attribute returns now) already hold what the Set `wanted`
 * asked for? PortInfo: the state asked for (or beyond it) and the fields an SM sets; any other
 * attribute: the same bytes. */
export function alreadyThere(attr: number, wanted: Uint8Array, current: Uint8Array): boolean {
  if (attr === SmpAttr.PortInfo) {
    const w = PortInfo.decode(wanted);
    const c = PortInfo.decode(current);
    if (w.portState !== PortState.NoChange && c.portState < w.portState) return false;
    return (
      c.lid === w.lid &&
      c.lmc === w.lmc &&
      c.masterSmLid === w.masterSmLid &&
      c.gidPrefix === w.gidPrefix &&
      c.neighborMtu === w.neighborMtu &&
      c.operationalVls === w.operationalVls &&
      c.partitionEnforcementInbound === w.partitionEnforcementInbound &&
      c.partitionEnforcementOutbound === w.partitionEnforcementOutbound
    );
  }
  if (wanted.length !== current.length) return false;
  for (let i = 0; i < wanted.length; i++) if (wanted[i] !== current[i]) return false;
  return true;
}

/** An SmpClient that retries fabric failures (see the module comment). */
export class RetryingSmp implements SmpClient {
  /** SMPs given up, by reason. */
  readonly failures: Record<SmpFailureReason, number> = { timeout: 0, status: 0 };
  /** SMPs that succeeded only after a retry round. */
  recovered = 0;
  /** Sets found done by the Get after them (the answer was lost, the retry refused). */
  foundDone = 0;
  private readonly rounds: number;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(
    private readonly inner: SmpClient,
    private readonly clock: Clock,
    o: SmpRetryOptions = {},
  ) {
    this.rounds = o.rounds ?? DEFAULT_SMP_RETRY.rounds;
    this.backoffMs = o.backoffMs ?? DEFAULT_SMP_RETRY.backoffMs;
    this.maxBackoffMs = Math.max(this.backoffMs, o.maxBackoffMs ?? (o.backoffMs === undefined ? DEFAULT_SMP_RETRY.maxBackoffMs : Infinity));
  }

  get sent(): number {
    return this.inner.sent;
  }

  // The first try goes straight to the inner client with its send and one rejection handler (two
  // closures per SMP): the retry rounds (their async frames) are built only for an SMP that failed.
  // A caller's SmpTry is not taken: this layer owns the SMP's budget.
  getDr(path: readonly number[], attrId: number, attrMod = 0): Promise<Uint8Array> {
    const send = (t: SmpTry): Promise<Uint8Array> => this.inner.getDr(path, attrId, attrMod, t);
    return attempt(send).then(undefined, (e: unknown) => this.getFailed(e, send));
  }
  getLid(lid: number, attrId: number, attrMod = 0): Promise<Uint8Array> {
    const send = (t: SmpTry): Promise<Uint8Array> => this.inner.getLid(lid, attrId, attrMod, t);
    return attempt(send).then(undefined, (e: unknown) => this.getFailed(e, send));
  }
  setDr(path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, mkey?: bigint): Promise<Uint8Array> {
    return attempt(() => this.inner.setDr(path, attrId, attrMod, data, mkey, ONE_TRY)).then(undefined, (e: unknown) => this.setDrFailed(e, path, attrId, attrMod, data, mkey));
  }
  /** A directed-route Set that failed its first try: the retry rounds, then the Get after them. */
  private setDrFailed(e: unknown, path: readonly number[], attrId: number, attrMod: number, data: Uint8Array, mkey?: bigint): Promise<Uint8Array> {
    return this.setFailed(
      e,
      attrId,
      data,
      (t) => this.inner.setDr(path, attrId, attrMod, data, mkey, t),
      (t) => this.inner.getDr(path, attrId, attrMod, t),
    );
  }
  setLid(lid: number, attrId: number, attrMod: number, data: Uint8Array): Promise<Uint8Array> {
    const send = (t: SmpTry): Promise<Uint8Array> => this.inner.setLid(lid, attrId, attrMod, data, t);
    return attempt(send).then(undefined, (e: unknown) => this.setFailed(e, attrId, data, send, (t) => this.inner.getLid(lid, attrId, attrMod, t)));
  }
  /** setDr through a callback slot: the first try goes to the inner client's slot with a sink
   * that forwards successes as they are (one sink per caller's sink, kept: nothing allocated per
   * SMP); a failure goes through the same retry rounds as setDr's, then to the caller's sink. */
  setDrTo<C extends SmpSetReq>(req: C, sink: SmpSink<C>): void {
    if (!this.inner.setDrTo) return toSink(this.setDr(req.path, req.attr, req.mod, req.data, req.mkey), req, sink);
    this.inner.setDrTo(req, this.wrapped(this.setSinks, sink, this.retrySet), ONE_TRY);
  }
  private readonly setSinks = new WeakMap<object, SmpSink<never>>();
  private readonly retrySet = (r: SmpSetReq, e: Error): Promise<Uint8Array> => this.setDrFailed(e, r.path, r.attr, r.mod, r.data, r.mkey);

  /** getDr through a callback slot, as setDrTo: the first try to the inner client's slot, a
   * failure through getDr's retry rounds, then to the caller's sink. */
  getDrTo<C extends SmpGetReq>(req: C, sink: SmpSink<C>): void {
    if (!this.inner.getDrTo) return toSink(this.getDr(req.path, req.attr, req.mod), req, sink);
    this.inner.getDrTo(req, this.wrapped(this.getSinks, sink, this.retryGet), ONE_TRY);
  }
  private readonly getSinks = new WeakMap<object, SmpSink<never>>();
  private readonly retryGet = (r: SmpGetReq, e: Error): Promise<Uint8Array> => this.getFailed(e, (t) => this.inner.getDr(r.path, r.attr, r.mod, t));

  /** The caller's sink wrapped for the inner client's slot, once per sink (kept in `sinks`):
   * successes forwarded as they are, a failed first try through `retry` (the retry rounds), then
   * to the caller's sink. */
  private wrapped<C>(sinks: WeakMap<object, SmpSink<never>>, sink: SmpSink<C>, retry: (r: C, e: Error) => Promise<Uint8Array>): SmpSink<C> {
    let w = sinks.get(sink) as SmpSink<C> | undefined;
    if (!w) {
      w = {
        smpOk: (r, d) => sink.smpOk(r, d),
        smpFailed: (r, e) => toSink(retry(r, e), r, sink),
      };
      sinks.set(sink, w as SmpSink<never>);
    }
    return w;
  }

  trap(lid: number, notice: Uint8Array): Promise<void> {
    return this.inner.trap(lid, notice);
  }

  /** A Get whose first try failed with `e`: the retry rounds, then counted and thrown. */
  private async getFailed(e: unknown, op: (t: SmpTry) => Promise<Uint8Array>): Promise<Uint8Array> {
    try {
      return await this.retryAfter(e, op);
    } catch (x) {
      this.count(x);
      throw x;
    }
  }

  /** A Set whose first try failed with `e0`: the retry rounds, then the Get that may find it done. */
  private async setFailed(e0: unknown, attr: number, data: Uint8Array, op: (t: SmpTry) => Promise<Uint8Array>, read: (t: SmpTry) => Promise<Uint8Array>): Promise<Uint8Array> {
    try {
      return await this.retryAfter(e0, op);
    } catch (e) {
      if (!isFabricFailure(e)) throw e;
      // The Set may have landed (its answer lost); a refused retry may mean "already there".
      let cur: Uint8Array | undefined;
      try {
        cur = await attempt(read).then(undefined, (x: unknown) => this.retryAfter(x, read));
      } catch {
        /* unreadable: the Set's failure stands */
      }
      if (cur && alreadyThere(attr, data, cur)) {
        this.foundDone++;
        return cur;
      }
      this.count(e);
      throw e;
    }
  }

  /** After a try failed with `e`: `op` tried again after a doubling pause (capped) while it times
   * out or the SMA says BUSY, up to `rounds` more times, each try's timeout backed off as MadRpc's
   * own retries' are (RETRY_TRIES). */
  private async retryAfter(e: unknown, op: (t: SmpTry) => Promise<Uint8Array>): Promise<Uint8Array> {
    let wait = this.backoffMs;
    for (let round = 0; ; round++) {
      const again = e instanceof MadTimeoutError || (e instanceof MadStatusError && (e.status & BUSY) !== 0);
      if (!again || round >= this.rounds) throw e;
      await new Promise<void>((r) => this.clock.setTimeout(r, wait));
      wait = Math.min(wait * 2, this.maxBackoffMs);
      try {
        const r = await op(RETRY_TRIES[Math.min(round, RETRY_TRIES.length - 1)]!);
        this.recovered++;
        return r;
      } catch (x) {
        e = x;
      }
    }
  }

  private count(e: unknown): void {
    if (e instanceof MadTimeoutError) this.failures.timeout++;
    else if (e instanceof MadStatusError) this.failures.status++;
  }
}

/** A promise's outcome handed to a callback slot's sink. */
function toSink<C>(p: Promise<Uint8Array>, req: C, sink: SmpSink<C>): void {
  p.then(
    (d) => sink.smpOk(req, d),
    (e: unknown) => sink.smpFailed(req, asError(e)),
  );
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/** `op`'s first try, a synchronous throw of it as a rejection. */
function attempt(op: (t: SmpTry) => Promise<Uint8Array>): Promise<Uint8Array> {
  try {
    return op(ONE_TRY);
  } catch (e) {
    return Promise.reject(e);
  }
}

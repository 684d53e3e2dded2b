/** MadRpc settles an SMP (smpGetDr/smpGet, and smpSetDrTo's callback slot) with its data or MadStatusError as the response is
 * matched: whatever its SMA sends (nothing, a cut MAD, another attribute, an error status, the
 * answer twice, the answer after the try expired), every request settles exactly once with the
 * outcome a model of the retry rules predicts, nothing throws out of the receive path, and the
 * books are empty afterwards. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LoopbackHub } from '../src/transport/loopback.js';
import { VirtualClock } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MadStatusError, MadTimeoutError } from '../src/rpc/errors.js';
import { MgmtClass, SmpAttr, PERMISSIVE_LID, MadHeaderView, isResponse } from '../src/wire/mad.js';
import { smpResponse, tidLow } from '../src/wire/builders.js';

const SMA_LID = 2;
const TIMEOUT = 100;

/** What the SMA does with one try of a request. */
type Act = 'none' | 'short' | 'wrongAttr' | 'status' | 'ok' | 'dup' | 'late';
const ACTS: Act[] = ['none', 'short', 'wrongAttr', 'status', 'ok', 'dup', 'late'];

type Outcome = { ok: true; req: number; tryNo: number } | { ok: false; kind: 'status' | 'timeout' };

/** The model: which try answers, by the rules of MadRpc (a matched response settles; a cut one
 * or one of another attribute is dropped and the try times out; a late answer is taken by the next
 * try when that one is not answered at once, and is unmatched after the last). */
function expected(req: number, acts: Act[]): Outcome {
  for (let i = 0; i < acts.length; i++) {
    const a = acts[i]!;
    if (a === 'ok' || a === 'dup') return { ok: true, req, tryNo: i + 1 };
    if (a === 'status') return { ok: false, kind: 'status' };
    if (a === 'late' && i + 1 < acts.length) {
      const next = acts[i + 1]!;
      if (next === 'ok' || next === 'dup') return { ok: true, req, tryNo: i + 2 };
      if (next === 'status') return { ok: false, kind: 'status' };
      return { ok: true, req, tryNo: i + 1 };
    }
  }
  return { ok: false, kind: 'timeout' };
}

function setup(retries: number, adaptive = false) {
  const hub = new LoopbackHub({ route: (_m, addr) => hub.get(addr.lid === PERMISSIVE_LID ? SMA_LID : addr.lid) });
  const clock = new VirtualClock();
  const sm = hub.endpoint({ lid: 1 });
  const sma = hub.endpoint({ lid: SMA_LID });
  for (const ep of [sm, sma]) {
    ep.register(MgmtClass.SubnLid, 1);
    ep.register(MgmtClass.SubnDirected, 1);
  }
  const rpc = new MadRpc(sm, clock, { window: 256, perDestinationWindow: 256, retries, timeoutMs: TIMEOUT, adaptiveTimeout: adaptive });
  return { clock, sma, rpc };
}

describe('MadRpc: every SMP settles exactly once, whatever the response', () => {
  it('matches the model for random scripts of responses (DR and LID-routed, Gets and Sets, promises and the callback slot, fixed and adaptive timeouts)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.record({ dr: fc.boolean(), set: fc.boolean(), slot: fc.boolean(), acts: fc.array(fc.constantFrom(...ACTS), { minLength: 4, maxLength: 4 }) }), { minLength: 1, maxLength: 24 }),
        fc.integer({ min: 25, max: 255 }),
        fc.boolean(),
        async (retries, reqs, cut, adaptive) => {
          // Adaptive timeouts (their deadlines out of order: the heap beside the ring) change
          // when a late answer lands, so there only the settling is checked, not which try won.
          const { clock, sma, rpc } = setup(retries, adaptive);
          const triesByTid = new Map<number, number>();
          let sent = 0;
          let thrown = 0;
          const reply = (r: Uint8Array, addr: { lid: number; qpn: number }) => {
            sent++;
            sma.send(r, addr);
          };
          sma.onReceive((m) => {
            const h = MadHeaderView.over(m.data);
            if (isResponse(h.method)) return;
            const tid = tidLow(m.data);
            const tryNo = (triesByTid.get(tid) ?? 0) + 1;
            triesByTid.set(tid, tryNo);
            const req = h.attrMod;
            const act = reqs[req]!.acts[tryNo - 1] ?? 'none';
            const r = smpResponse(m.data, act === 'status' ? 0x1c : 0);
            r[64] = req;
            r[65] = tryNo;
            switch (act) {
              case 'none':
                return;
              case 'short':
                return reply(r.slice(0, cut), m.addr);
              case 'wrongAttr':
                MadHeaderView.over(r).attrId = SmpAttr.NodeDescription;
                return reply(r, m.addr);
              case 'dup':
                reply(r, m.addr);
                return reply(r.slice(), m.addr);
              case 'late':
                clock.setTimeout(() => reply(r, m.addr), TIMEOUT * 1.5);
                return;
              default:
                return reply(r, m.addr);
            }
          });
          const settled = reqs.map(() => 0);
          const got: (Outcome | undefined)[] = reqs.map(() => undefined);
          const onOk = (i: number, d: Uint8Array) => {
            settled[i]!++;
            got[i] = { ok: true, req: d[0]!, tryNo: d[1]! };
          };
          const onErr = (i: number, e: unknown) => {
            settled[i]!++;
            if (e instanceof MadStatusError) got[i] = { ok: false, kind: 'status' };
            else if (e instanceof MadTimeoutError) got[i] = { ok: false, kind: 'timeout' };
            else thrown++;
          };
          // The callback slot: one sink for every request, told apart by its context.
          const sink = { smpOk: onOk, smpFailed: onErr };
          const ps = reqs.map((q, i) => {
            const data = new Uint8Array(64);
            if (q.dr && q.set && q.slot) {
              rpc.smpSetDrTo([1, 2], SmpAttr.NodeInfo, i, data, undefined, sink, i);
              return Promise.resolve();
            }
            const p = q.dr
              ? q.set
                ? rpc.smpSetDr([1, 2], SmpAttr.NodeInfo, i, data)
                : rpc.smpGetDr([1, 2], SmpAttr.NodeInfo, i)
              : q.set
                ? rpc.smpSet(SMA_LID, SmpAttr.NodeInfo, i, data)
                : rpc.smpGet(SMA_LID, SmpAttr.NodeInfo, i);
            return p.then(
              (d) => onOk(i, d),
              (e: unknown) => onErr(i, e),
            );
          });
          // Virtual time runs until every request has settled (adaptive timeouts double per
          // retry: four tries may wait longer than four fixed ones); a request that never
          // settles makes runUntil throw.
          await clock.runUntil(() => settled.every((n) => n > 0), 120_000);
          await clock.advanceAsync(TIMEOUT * 4); // the late answers still on their way arrive
          await Promise.all(ps);
          expect(thrown).toBe(0);
          expect(settled).toEqual(reqs.map(() => 1));
          if (!adaptive) expect(got).toEqual(reqs.map((q, i) => expected(i, q.acts.slice(0, retries + 1))));
          else expect(got.every((g) => g !== undefined)).toBe(true);
          expect(rpc.outstandingCount + rpc.queuedCount).toBe(0);
          // Every response the SMA sent is accounted for once: matched, unmatched or malformed.
          const s = rpc.stats;
          expect(s.responses + s.unmatched + s.malformed).toBe(sent);
          rpc.close();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a cut response or one of another attribute is counted malformed and the try still answers', async () => {
    const { clock, sma, rpc } = setup(0);
    sma.onReceive((m) => {
      if (isResponse(MadHeaderView.over(m.data).method)) return;
      const r = smpResponse(m.data);
      r[64] = 7;
      sma.send(r.slice(0, 100), m.addr);
      const other = r.slice();
      MadHeaderView.over(other).attrId = SmpAttr.SwitchInfo;
      sma.send(other, m.addr);
      sma.send(r, m.addr);
    });
    const p = rpc.smpGetDr([1], SmpAttr.NodeInfo, 0);
    await clock.advanceAsync(1);
    expect((await p)[0]).toBe(7);
    expect(rpc.stats).toMatchObject({ responses: 1, malformed: 2, failed: 0 });
  });

  it("a reused request's books: the deadline of the request it served before does not expire it", async () => {
    const { clock, sma, rpc } = setup(1);
    let answer = true;
    sma.onReceive((m) => {
      if (isResponse(MadHeaderView.over(m.data).method) || !answer) return;
      sma.send(smpResponse(m.data), m.addr);
    });
    await rpc.smpGetDr([1], SmpAttr.NodeInfo, 0); // answered at once: its deadline (t=100) is stale
    answer = false;
    await clock.advanceAsync(50);
    let failed: unknown;
    const b = rpc.smpGetDr([1], SmpAttr.NodeInfo, 1).catch((e: unknown) => (failed = e));
    await clock.advanceAsync(60); // t=110: past the first request's deadline, not the second's
    expect(rpc.stats).toMatchObject({ sent: 2, timeouts: 0, retries: 0 });
    await clock.advanceAsync(50); // t=160: the second's first try expired
    expect(rpc.stats).toMatchObject({ sent: 3, timeouts: 1, retries: 1 });
    await clock.advanceAsync(200);
    await b;
    expect(failed).toBeInstanceOf(MadTimeoutError);
    expect(rpc.outstandingCount + rpc.queuedCount).toBe(0);
  });

  it('the callback slot: an SMP that cannot be built, or sent on a closed RPC, settles once through the sink before the call returns; close() fails what is pending through it', () => {
    const { sma, rpc } = setup(0);
    sma.onReceive(() => undefined); // never answers
    const calls: Array<[string, number, string]> = [];
    const sink = {
      smpOk: (c: number) => calls.push(['ok', c, '']),
      smpFailed: (c: number, e: Error) => calls.push(['failed', c, e.name]),
    };
    rpc.smpSetDrTo(new Array<number>(70).fill(1), SmpAttr.NodeInfo, 0, new Uint8Array(64), undefined, sink, 1); // 70 hops: cannot be built
    expect(calls).toEqual([['failed', 1, 'EncodeError']]);
    rpc.smpSetDrTo([1], SmpAttr.NodeInfo, 0, new Uint8Array(64), undefined, sink, 2);
    rpc.smpSetDrTo([1], SmpAttr.NodeInfo, 1, new Uint8Array(64), undefined, sink, 3);
    expect(calls.length).toBe(1);
    expect(rpc.outstandingCount).toBe(2);
    rpc.close();
    expect(calls).toEqual([['failed', 1, 'EncodeError'], ['failed', 2, 'RpcClosedError'], ['failed', 3, 'RpcClosedError']]);
    rpc.smpSetDrTo([1], SmpAttr.NodeInfo, 0, new Uint8Array(64), undefined, sink, 4);
    expect(calls[3]).toEqual(['failed', 4, 'RpcClosedError']);
    expect(calls.length).toBe(4);
  });
});

/** MadRpc's adaptive timeouts (src/rpc/rto.ts: RFC 6298 SRTT/RTTVAR, Karn's rule, backoff) and
 * its handling of an answer handed back undelivered (ibsim's `Error`: the SMA acted, the answer
 * came back with status 110). */
import { describe, expect, it } from 'vitest';
import { LoopbackHub } from '../src/transport/loopback.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { RtoEstimator } from '../src/rpc/rto.js';
import { MadTimeoutError } from '../src/rpc/errors.js';
import { MgmtClass, Method, PERMISSIVE_LID, SmpAttr, SmpDr } from '../src/wire/mad.js';
import type { ReceivedMad } from '../src/transport/types.js';
import { drive } from './helpers/drive.js';

describe('RtoEstimator', () => {
  it('starts at the initial timeout, follows RFC 6298 on samples, and stays within its bounds', () => {
    const e = new RtoEstimator({ initialMs: 200, minMs: 10, maxMs: 4000 });
    expect(e.rto).toBe(200);
    e.sample(20); // SRTT 20, RTTVAR 10: RTO = 20 + 40
    expect(e.smoothedRtt).toBe(20);
    expect(e.rto).toBe(60);
    e.sample(20); // RTTVAR 7.5, SRTT 20: 20 + 30
    expect(e.rto).toBeCloseTo(50, 9);
    for (let i = 0; i < 200; i++) e.sample(1);
    expect(e.rto).toBe(10); // never below minMs
    for (let i = 0; i < 200; i++) e.sample(9000);
    expect(e.rto).toBe(4000); // never above maxMs
  });

  it('doubles per retry of one request, capped at maxMs', () => {
    const e = new RtoEstimator({ initialMs: 100, maxMs: 1000 });
    expect([1, 2, 3, 4, 5, 30].map((t) => e.forTry(t))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});

function rig(opts: { adaptive: boolean; delayMs: number; answer: (m: ReceivedMad, n: number) => 'answer' | 'lose' | 'bounce-answer' }) {
  const clock = new VirtualClock();
  const hub = new LoopbackHub({ route: (_m, addr) => (addr.lid === PERMISSIVE_LID ? hub.get(2) : hub.get(addr.lid)) });
  const sm = hub.endpoint({ lid: 1 });
  const sma = hub.endpoint({ lid: 2 });
  for (const ep of [sm, sma]) ep.register(MgmtClass.SubnDirected, 1);
  let n = 0;
  const acted: number[] = [];
  sma.onReceive((m) => {
    const k = n++;
    acted.push(k);
    const what = opts.answer(m, k);
    if (what === 'lose') return;
    const v = SmpDr.decode(m.data);
    const r = SmpDr.encode({ ...v, method: Method.GetResp, direction: 1, hopPointer: v.hopCount, data: new Uint8Array(64) }, m.data.slice());
    clock.setTimeout(() => {
      // 'bounce-answer': what ibsim does under Error: the answer comes back to the sender with status 110.
      if (what === 'bounce-answer') sm.deliver({ data: r, addr: m.addr, status: 110 });
      else sma.send(r, m.addr);
    }, opts.delayMs);
  });
  const rpc = new MadRpc(sm, clock, { timeoutMs: 200, retries: 3, adaptiveTimeout: opts.adaptive ? { minMs: 5 } : false });
  return { clock, rpc, acted };
}

describe('MadRpc adaptive timeouts', () => {
  it('measures round trips and times a lost answer out after the adapted RTO, not the initial timeout', async () => {
    const r = rig({ adaptive: true, delayMs: 2, answer: (_m, k) => (k === 40 ? 'lose' : 'answer') });
    for (let i = 0; i < 40; i++) await drive(r.clock, r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0));
    expect(r.rpc.rto!.samples).toBe(40);
    const rto = r.rpc.rto!.rto;
    expect(rto).toBeLessThan(20);
    const t0 = r.clock.now();
    await drive(r.clock, r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0));
    // One lost try, then the retry answered: the whole request took about one RTO plus a round trip.
    expect(r.rpc.stats.timeouts).toBe(1);
    expect(r.clock.now() - t0).toBeLessThan(rto + 10);
    expect(r.clock.now() - t0).toBeGreaterThanOrEqual(rto);
  });

  it('backs off: the tries of a request that is never answered wait RTO, 2·RTO, 4·RTO, 8·RTO', async () => {
    const r = rig({ adaptive: true, delayMs: 0, answer: () => 'lose' });
    const t0 = r.clock.now();
    await expect(drive(r.clock, r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0))).rejects.toThrow(MadTimeoutError);
    expect(r.clock.now() - t0).toBe(200 + 400 + 800 + 1600);
    expect(r.acted).toHaveLength(4);
  });

  it('Karn: a request answered only after a retry gives no sample', async () => {
    const r = rig({ adaptive: true, delayMs: 1, answer: (_m, k) => (k === 0 ? 'lose' : 'answer') });
    await drive(r.clock, r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0));
    expect(r.rpc.rto!.samples).toBe(0);
    expect(r.rpc.rto!.rto).toBe(200);
  });

  it('off by default: every try waits timeoutMs', async () => {
    const r = rig({ adaptive: false, delayMs: 0, answer: () => 'lose' });
    const t0 = r.clock.now();
    await expect(drive(r.clock, r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0))).rejects.toThrow(MadTimeoutError);
    expect(r.clock.now() - t0).toBe(4 * 200);
  });
});

describe('MadRpc and an answer handed back undelivered (status 110)', () => {
  it('tries again at once instead of waiting for the timeout; the SMA sees every try', async () => {
    const r = rig({ adaptive: false, delayMs: 0, answer: (_m, k) => (k < 2 ? 'bounce-answer' : 'answer') });
    const t0 = r.clock.now();
    const p = r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0);
    await flushMicrotasks();
    await drive(r.clock, p);
    expect(r.clock.now() - t0).toBe(0);
    expect(r.acted).toHaveLength(3);
    expect(r.rpc.stats.bounced).toBe(2);
    expect(r.rpc.stats.retries).toBe(2);
    expect(r.rpc.stats.timeouts).toBe(0);
  });

  it('gives up after its tries with MadTimeoutError naming status 110', async () => {
    const r = rig({ adaptive: false, delayMs: 0, answer: () => 'bounce-answer' });
    const err = await drive(r.clock, r.rpc.smpGetDr([1], SmpAttr.NodeInfo, 0)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MadTimeoutError);
    expect((err as MadTimeoutError).transportStatus).toBe(110);
    expect(r.acted).toHaveLength(4);
  });
});

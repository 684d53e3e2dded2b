import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { LoopbackHub } from '../src/transport/loopback.js';
import { withFaults, type FaultSpec } from '../src/transport/fault.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { RmppAbortError, RmppTimeoutError } from '../src/rpc/errors.js';
import { reassembleRmpp, segmentRmpp } from '../src/rpc/rmpp.js';
import { RmppFlag, RmppStatus, RmppType, decodeRmpp, encodeRmpp, rmppData, rmppStopOrAbort } from '../src/wire/rmpp.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { Rng } from '../src/util/rng.js';
import type { ReceivedMad, Transport } from '../src/transport/types.js';

const CLIENT = 1;
const SA = 2;
const HDR = 56;

function saRequest(method: number = Method.GetTable, attrId = 0x0011): Uint8Array {
  const b = new Uint8Array(256);
  b[0] = 1;
  b[1] = MgmtClass.SubnAdm;
  b[2] = 2;
  b[3] = method;
  b[16] = attrId >> 8;
  b[17] = attrId & 0xff;
  return b;
}

function responseHeader(req: Uint8Array): Uint8Array {
  const h = req.slice(0, HDR);
  h[3] = Method.GetTableResp;
  h[45] = 3; // AttributeOffset (8-byte words), just to see it carried
  return h;
}

function payloadOf(seed: number, len: number): Uint8Array {
  const r = new Rng(seed);
  const p = new Uint8Array(len);
  for (let i = 0; i < len; i++) p[i] = r.int(256);
  return p;
}

const RMPP_OPTS = { ackTimeoutMs: 40, retries: 12, receiveTimeoutMs: 2000, totalTimeoutMs: 120_000, lingerMs: 500, windowSize: 8 };

function pair(faults?: { seed: number } & FaultSpec, opts: { rmpp?: false } = {}) {
  const hub = new LoopbackHub();
  const clock = new VirtualClock();
  const c = hub.endpoint({ lid: CLIENT, tidHighBits: 0x00070001 });
  const s = hub.endpoint({ lid: SA });
  c.register(MgmtClass.SubnAdm, 2);
  s.register(MgmtClass.SubnAdm, 2, { methods: [Method.GetTable] });
  const ct: Transport = faults ? withFaults(c, faults, clock) : c;
  const st: Transport = faults ? withFaults(s, { ...faults, seed: faults.seed + 1 }, clock) : s;
  const rmpp = opts.rmpp === false ? false : RMPP_OPTS;
  const client = new MadRpc(ct, clock, { timeoutMs: 60, retries: 20, rmpp });
  const server = new MadRpc(st, clock, { rmpp });
  return { hub, clock, client, server, c, s, ct, st };
}

async function runUntil<T>(clock: VirtualClock, p: Promise<T>, maxMs = 200_000): Promise<T> {
  let done = false;
  const q = p.finally(() => (done = true));
  q.catch(() => undefined);
  await clock.runUntil(() => done, maxMs).catch(() => undefined);
  await flushMicrotasks();
  if (!done) throw new Error(`not settled after ${maxMs} virtual ms`);
  return q;
}

describe('RMPP segmentation', () => {
  it('splits into 200-byte SA segments with kernel-style PayloadLength and flags, and reassembles', () => {
    const req = saRequest();
    const hdr = responseHeader(req);
    const payload = payloadOf(1, 450);
    const segs = segmentRmpp(hdr, payload);
    expect(segs.length).toBe(3);
    const hs = segs.map((s) => decodeRmpp(s));
    expect(hs.map((h) => h.data1)).toEqual([1, 2, 3]);
    expect(hs.map((h) => h.type)).toEqual([1, 1, 1]);
    expect(hs.map((h) => h.flags)).toEqual([RmppFlag.Active | RmppFlag.First, RmppFlag.Active, RmppFlag.Active | RmppFlag.Last]);
    expect(hs.map((h) => h.data2)).toEqual([3 * 20 + 450, 0, 20 + 50]);
    for (const s of segs) {
      expect(s.length).toBe(256);
      expect(s[45]).toBe(3); // the SA header is repeated in every segment
      expect(s[3]).toBe(Method.GetTableResp);
    }
    expect(Array.from(segs[1]!.subarray(56, 256))).toEqual(Array.from(payload.subarray(200, 400)));
    const whole = reassembleRmpp(segs, 50);
    expect(whole.length).toBe(56 + 450);
    expect(Array.from(whole.subarray(56))).toEqual(Array.from(payload));
  });
  it('always makes at least one segment', () => {
    const segs = segmentRmpp(responseHeader(saRequest()), new Uint8Array(0));
    expect(segs.length).toBe(1);
    expect(decodeRmpp(segs[0]!).data2).toBe(20);
    expect(segmentRmpp(responseHeader(saRequest()), new Uint8Array(200)).length).toBe(1);
    expect(segmentRmpp(responseHeader(saRequest()), new Uint8Array(201)).length).toBe(2);
  });
});

async function transfer(seed: number, len: number, faults?: FaultSpec) {
  const env = pair(faults ? { seed, ...faults } : undefined);
  const payload = payloadOf(seed, len);
  const sent: Promise<void>[] = [];
  env.server.onUnsolicited(MgmtClass.SubnAdm, (req) => {
    sent.push(env.server.respondRmpp(req, responseHeader(req.data), payload));
  }, { method: Method.GetTable });
  const got = await runUntil(env.clock, env.client.request(saRequest(), { lid: SA, qpn: 1 }));
  return { env, payload, got, sent };
}

describe('RMPP transfers over MadRpc', () => {
  it.each([1, 2, 50])('reassembles %i segment(s) exactly on a clean link, with ACKs and window', async (n) => {
    const len = n === 1 ? 137 : (n - 1) * 200 + 77;
    const { env, payload, got, sent } = await transfer(n, len);
    expect(got.data.length).toBe(HDR + len);
    expect(Array.from(got.data.subarray(HDR))).toEqual(Array.from(payload));
    expect(got.data[3]).toBe(Method.GetTableResp);
    await Promise.all(sent);
    expect(env.server.rmppStats.segmentsSent).toBe(n);
    expect(env.server.rmppStats.segmentsResent).toBe(0);
    if (n > 1) {
      expect(env.server.rmppStats.transfersSent).toBe(1);
      // window 8: ACKs after segments 1, 9, 17, ... and the last
      expect(env.client.rmppStats.acksSent).toBe(n === 2 ? 2 : 1 + Math.floor((n - 1) / 8) + ((n - 1) % 8 ? 1 : 0));
    }
    expect(env.client.rmppStats.transfersReceived).toBe(1);
  });

  it('reassembles exactly under seeded loss, duplication, reordering and delay (property over seeds)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.constantFrom(1, 2, 50), async (seed, n) => {
        const len = n === 1 ? 1 + (seed % 200) : (n - 1) * 200 + 1 + (seed % 200);
        const { env, payload, got } = await transfer(seed, len, { drop: 0.08, duplicate: 0.08, reorder: 0.15, delay: [0, 6] });
        expect(got.data.length).toBe(HDR + len);
        expect(Buffer.from(got.data.subarray(HDR)).equals(Buffer.from(payload))).toBe(true);
        const fs = (env.ct as ReturnType<typeof withFaults>).stats;
        expect(fs.send.seen + fs.receive.seen).toBeGreaterThan(0);
      }),
      { numRuns: 24, seed: 4242 },
    );
  }, 20_000);

  it('actually exercised the faults (a lossy 50-segment run resends and sees duplicates)', async () => {
    const { env, payload, got } = await transfer(99, 49 * 200 + 5, { drop: 0.1, duplicate: 0.1, reorder: 0.2, delay: [0, 4] });
    expect(Buffer.from(got.data.subarray(HDR)).equals(Buffer.from(payload))).toBe(true);
    const fsv = (env.st as ReturnType<typeof withFaults>).stats;
    expect(fsv.send.dropped).toBeGreaterThan(0);
    expect(env.server.rmppStats.segmentsResent).toBeGreaterThan(0);
    expect(env.client.rmppStats.duplicateSegments).toBeGreaterThan(0);
  });

  it('receiver gives up with RmppTimeoutError when the sender disappears mid-transfer', async () => {
    const env = pair();
    env.server.onUnsolicited(MgmtClass.SubnAdm, (req) => {
      env.server.respondRmpp(req, responseHeader(req.data), payloadOf(5, 20 * 200)).catch(() => undefined);
      void env.s.close(); // the SA vanishes after its first segment
    });
    const err = await runUntil(env.clock, env.client.request(saRequest(), { lid: SA, qpn: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RmppTimeoutError);
    expect((err as RmppTimeoutError).role).toBe('receive');
    expect((err as Error).message).toMatch(/RMPP receive .* gave up after 1 segments: no new segment for 2000 ms/);
    expect(env.client.outstandingCount).toBe(0);
  });

  it('sender gives up with RmppTimeoutError (too many retries) when the receiver disappears', async () => {
    const env = pair();
    let done: Promise<void> | undefined;
    env.server.onUnsolicited(MgmtClass.SubnAdm, (req) => {
      done = env.server.respondRmpp(req, responseHeader(req.data), payloadOf(6, 30 * 200));
      done.catch(() => undefined);
      void env.c.close(); // the requester vanishes right after asking
    });
    env.client.request(saRequest(), { lid: SA, qpn: 1 }).catch(() => undefined);
    while (!done) await flushMicrotasks();
    const err = await runUntil(env.clock, done!).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RmppTimeoutError);
    expect((err as RmppTimeoutError).role).toBe('send');
    expect((err as Error).message).toMatch(/no ACK after 13 sends/);
  });

  it('rejects the transfer with RmppAbortError when the sending peer ABORTs', async () => {
    const env = pair();
    // a hand-driven SA: first segment, then ABORT
    env.s.onReceive((m: ReceivedMad) => {
      if ((m.data[26]! & RmppFlag.Active) !== 0) return; // our ACK
      const segs = segmentRmpp(responseHeader(m.data), payloadOf(7, 1000));
      env.s.send(segs[0]!, m.addr);
      const ab = segs[0]!.slice();
      encodeRmpp(rmppStopOrAbort(RmppType.Abort, RmppStatus.Unspecified), ab);
      env.s.send(ab, m.addr);
    });
    const err = await runUntil(env.clock, env.client.request(saRequest(), { lid: SA, qpn: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RmppAbortError);
    expect((err as RmppAbortError).byPeer).toBe(true);
    expect((err as RmppAbortError).rmppStatus).toBe(127);
  });

  it('rejects the send with RmppAbortError when the receiving peer STOPs, and ABORTs on a bad ACK', async () => {
    for (const mode of ['stop', 'badack'] as const) {
      const env = pair();
      let done: Promise<void> | undefined;
      env.server.onUnsolicited(MgmtClass.SubnAdm, (req) => {
        done = env.server.respondRmpp(req, responseHeader(req.data), payloadOf(8, 1000));
        done.catch(() => undefined);
      });
      const seen: number[] = [];
      env.c.onReceive((m) => {
        const h = decodeRmpp(m.data);
        seen.push(h.type);
        if (h.type !== RmppType.Data) return;
        const ctl = m.data.slice(0, 256);
        ctl[3] = m.data[3]! ^ 0x80;
        encodeRmpp(mode === 'stop' ? rmppStopOrAbort(RmppType.Stop, RmppStatus.ResourcesExhausted) : { ...rmppData(0, false, false, 0), type: RmppType.Ack, flags: RmppFlag.Active, data1: 4, data2: 5 }, ctl);
        env.c.send(ctl, m.addr);
      });
      env.c.send(saRequest(), { lid: SA, qpn: 1 });
      const err = await runUntil(env.clock, (async () => {
        while (!done) await flushMicrotasks();
        return done;
      })()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RmppAbortError);
      if (mode === 'stop') {
        expect((err as RmppAbortError).kind).toBe('STOP');
        expect((err as RmppAbortError).byPeer).toBe(true);
      } else {
        expect((err as RmppAbortError).rmppStatus).toBe(RmppStatus.SegmentNumberTooBig);
        await flushMicrotasks();
        expect(seen).toContain(RmppType.Abort);
      }
    }
  });

  it('with rmpp off (kernel RMPP) sends one long MAD and passes long responses through', async () => {
    const payload = payloadOf(3, 777);
    const env2 = pair(undefined, { rmpp: false });
    env2.server.onUnsolicited(MgmtClass.SubnAdm, (req) => void env2.server.respondRmpp(req, responseHeader(req.data), payload));
    const got = await runUntil(env2.clock, env2.client.request(saRequest(), { lid: SA, qpn: 1 }));
    expect(got.data.length).toBe(HDR + 777);
    const h = decodeRmpp(got.data);
    expect(h.flags).toBe(RmppFlag.Active | RmppFlag.First | RmppFlag.Last);
    expect(h.data2).toBe(20 + 777);
    expect(Buffer.from(got.data.subarray(HDR)).equals(Buffer.from(payload))).toBe(true);
    expect(env2.client.rmppStats.acksSent).toBe(0);
    expect(env2.server.rmppStats.segmentsSent).toBe(0);
  });

  it('reassembles a multi-segment RMPP request from a peer, ACKs it and dispatches it whole', async () => {
    const env = pair();
    const got: ReceivedMad[] = [];
    env.server.onUnsolicited(MgmtClass.SubnAdm, (m) => got.push(m), { method: Method.GetMulti });
    const acks: number[][] = [];
    env.c.onReceive((m) => {
      const h = decodeRmpp(m.data);
      if (h.type === RmppType.Ack) acks.push([h.data1, h.data2, m.data[3]!]);
    });
    const req = saRequest(Method.GetMulti, 0x0038);
    req.set([0xde, 0xad, 0xbe, 0xef], 12);
    const payload = payloadOf(12, 3 * 200 + 10);
    for (const seg of segmentRmpp(req.slice(0, HDR), payload)) env.c.send(seg, { lid: SA, qpn: 1, qkey: 0x80010000 });
    await flushMicrotasks();
    expect(got.length).toBe(1);
    expect(got[0]!.data.length).toBe(HDR + payload.length);
    expect(Buffer.from(got[0]!.data.subarray(HDR)).equals(Buffer.from(payload))).toBe(true);
    // ACK of segment 1 opens the window; the final ACK names the last segment; method flipped to the response
    expect(acks).toEqual([
      [1, 1 + RMPP_OPTS.windowSize, Method.GetMulti | 0x80],
      [4, 4, Method.GetMulti | 0x80],
    ]);
  });

  it('a repeated request while its transfer runs joins the running transfer', async () => {
    const env = pair();
    const calls: Promise<void>[] = [];
    let segsOut = 0;
    env.server.onUnsolicited(MgmtClass.SubnAdm, (req) => {
      calls.push(env.server.respondRmpp(req, responseHeader(req.data), payloadOf(2, 5 * 200)));
    });
    env.c.onReceive((m) => {
      if (decodeRmpp(m.data).type === RmppType.Data) segsOut++;
    });
    const req = saRequest();
    req[15] = 9;
    env.c.send(req, { lid: SA, qpn: 1 });
    env.c.send(req, { lid: SA, qpn: 1 });
    await flushMicrotasks();
    expect(calls.length).toBe(2);
    expect(calls[1]).toBe(calls[0]);
    expect(segsOut).toBe(1); // window 1 until the receiver ACKs (and this raw client never does)
    env.server.close();
    await expect(calls[0]).rejects.toThrow(/closed/);
  });
});

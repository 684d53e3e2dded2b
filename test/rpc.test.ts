import { describe, expect, it } from 'vitest';
import { LoopbackHub, type LoopbackEndpoint } from '../src/transport/loopback.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MadStatusError, MadTimeoutError, RpcClosedError } from '../src/rpc/errors.js';
import { MgmtClass, Method, SmpAttr, SmpDr, SmpLid, PERMISSIVE_LID } from '../src/wire/mad.js';
import type { ReceivedMad } from '../src/transport/types.js';
import { TransportError } from '../src/transport/types.js';

const SM_LID = 1;
const SMA_LID = 2;

/** A hub where DR SMPs (LID 0xffff) go to the SMA endpoint, unless `unroutable` says the path is bad. */
function setup(opts: { window?: number; perDestinationWindow?: number; retries?: number; timeoutMs?: number; tidHighBits?: number; unroutable?: (m: Uint8Array) => boolean; firstTid?: number } = {}) {
  const hub = new LoopbackHub({
    route: (mad, addr) => {
      if (addr.lid === PERMISSIVE_LID) return opts.unroutable?.(mad) ? undefined : hub.get(SMA_LID);
      return hub.get(addr.lid);
    },
  });
  const clock = new VirtualClock();
  const smEp = hub.endpoint({ lid: SM_LID, tidHighBits: opts.tidHighBits });
  const smaEp = hub.endpoint({ lid: SMA_LID, tidHighBits: 0x5a5a0000 });
  for (const ep of [smEp, smaEp]) {
    ep.register(MgmtClass.SubnLid, 1);
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnAdm, 2);
  }
  const rpc = new MadRpc(smEp, clock, { window: opts.window, perDestinationWindow: opts.perDestinationWindow, retries: opts.retries ?? 2, timeoutMs: opts.timeoutMs ?? 50, firstTid: opts.firstTid });
  return { hub, clock, smEp, smaEp, rpc };
}

/** A DR response to `req`: direction bit set, method GetResp, TID echoed, data from `fill`. */
function drResponse(req: Uint8Array, data: Uint8Array, status = 0): Uint8Array {
  const r = req.slice();
  const v = SmpDr.decode(r);
  return SmpDr.encode({ ...v, method: Method.GetResp, direction: 1, status, hopPointer: v.hopCount, data }, r);
}

function answerWith(ep: LoopbackEndpoint, fn: (m: ReceivedMad) => Uint8Array | undefined): void {
  ep.onReceive((m) => {
    const r = fn(m);
    if (r) ep.send(r, m.addr);
  });
}

describe('MadRpc over loopback', () => {
  it('sends a DR Get with the right framing and returns the response data (TID high bits set by the transport)', async () => {
    const { smaEp, rpc } = setup({ tidHighBits: 0x00120034 });
    const seen: ReturnType<typeof SmpDr.decode>[] = [];
    answerWith(smaEp, (m) => {
      const v = SmpDr.decode(m.data);
      seen.push(v);
      const data = new Uint8Array(64);
      data.set(v.initialPath.slice(0, v.hopCount + 1));
      data[63] = v.attrMod & 0xff;
      return drResponse(m.data, data);
    });
    const got = await rpc.smpGetDr([1, 3, 7], SmpAttr.PortInfo, 5);
    expect(Array.from(got.subarray(0, 4))).toEqual([0, 1, 3, 7]);
    expect(got[63]).toBe(5);
    expect(got.length).toBe(64);
    const req = seen[0]!;
    expect(req).toMatchObject({ mgmtClass: 0x81, method: Method.Get, direction: 0, hopPointer: 0, hopCount: 3, attrId: SmpAttr.PortInfo, attrMod: 5, drSlid: 0xffff, drDlid: 0xffff });
    expect(req.tid >> 32n).toBe(0x00120034n);
    expect(rpc.stats).toMatchObject({ sent: 1, responses: 1, retries: 0, timeouts: 0 });
  });

  it('matches on the low 32 bits of the TID and the class only', async () => {
    const { smaEp, rpc, clock } = setup({ retries: 0 });
    let mode: 'other-high' | 'wrong-class' = 'other-high';
    answerWith(smaEp, (m) => {
      const r = drResponse(m.data, new Uint8Array(64).fill(9));
      r[8] ^= 0xff; // responder mangles the high TID bits: still ours
      if (mode === 'wrong-class') {
        const l = SmpLid.decode(r);
        return SmpLid.encode({ ...l, mgmtClass: MgmtClass.SubnLid }, new Uint8Array(256));
      }
      return r;
    });
    expect((await rpc.smpGetDr([], SmpAttr.NodeInfo))[0]).toBe(9);
    mode = 'wrong-class';
    const p = rpc.smpGetDr([], SmpAttr.NodeInfo);
    const err = p.catch((e: unknown) => e);
    await clock.advanceAsync(60);
    expect(await err).toBeInstanceOf(MadTimeoutError);
    expect(rpc.stats.unmatched).toBe(1);
  });

  it('retries on timeout, counts timeouts and retries, and succeeds on a later try', async () => {
    const { smaEp, rpc, clock } = setup({ retries: 3, timeoutMs: 100 });
    let n = 0;
    answerWith(smaEp, (m) => (++n <= 2 ? undefined : drResponse(m.data, new Uint8Array(64).fill(n))));
    const p = rpc.smpGetDr([2], SmpAttr.NodeInfo);
    let settled = false;
    void p.then(() => (settled = true));
    await clock.advanceAsync(99);
    expect(settled).toBe(false);
    expect(rpc.stats.sent).toBe(1);
    await clock.advanceAsync(1);
    expect(rpc.stats.sent).toBe(2);
    await clock.advanceAsync(100);
    expect((await p)[0]).toBe(3);
    expect(rpc.stats).toMatchObject({ sent: 3, retries: 2, timeouts: 2, responses: 1, failed: 0 });
  });

  it('gives up with a MadTimeoutError naming class, attribute, destination and tries', async () => {
    const { rpc, clock, smaEp } = setup({ retries: 2, timeoutMs: 100 });
    smaEp.onReceive(() => undefined);
    const err = rpc.smpGetDr([1, 4], SmpAttr.SwitchInfo, 0).catch((e: unknown) => e);
    await clock.advanceAsync(1000);
    const e = (await err) as MadTimeoutError;
    expect(e).toBeInstanceOf(MadTimeoutError);
    expect(e.tries).toBe(3);
    expect(e.transportStatus).toBe(0);
    expect(e.message).toMatch(/SubnDirected Get SwitchInfo\(0x0012\).*DR path 0,1,4.*3 tries/);
    expect(rpc.stats).toMatchObject({ sent: 3, timeouts: 3, retries: 2, failed: 1 });
    expect(rpc.outstandingCount).toBe(0);
  });

  it('retries at once when the transport hands the MAD back with status 110, then fails without waiting', async () => {
    const { rpc } = setup({ retries: 2, timeoutMs: 10_000, unroutable: (m) => m[SmpDr.fields['initialPath']!.bit / 8 + 1] === 9 });
    const e = (await rpc.smpGetDr([9], SmpAttr.NodeInfo).catch((x: unknown) => x)) as MadTimeoutError;
    expect(e).toBeInstanceOf(MadTimeoutError);
    expect(e.transportStatus).toBe(110);
    expect(e.tries).toBe(3);
    expect(rpc.stats).toMatchObject({ sent: 3, bounced: 3, retries: 2, timeouts: 0, failed: 1 });
  });

  it('turns a non-zero MAD status into MadStatusError', async () => {
    const { rpc, smaEp } = setup();
    answerWith(smaEp, (m) => drResponse(m.data, new Uint8Array(64), 0x1c));
    const e = (await rpc.smpSetDr([1], SmpAttr.PortInfo, 1, new Uint8Array(64)).catch((x: unknown) => x)) as MadStatusError;
    expect(e).toBeInstanceOf(MadStatusError);
    expect(e.status).toBe(0x1c);
    expect(e.message).toMatch(/Set PortInfo.*invalid attribute/);
  });

  it('LID-routed smpGet/smpSet carry the M_Key and go to the LID', async () => {
    const hub = new LoopbackHub();
    const clock = new VirtualClock();
    const a = hub.endpoint({ lid: 1 });
    const b = hub.endpoint({ lid: 7 });
    a.register(1, 1);
    b.register(1, 1);
    const rpc = new MadRpc(a, clock, { mkey: 0x1122334455667788n });
    const seen: ReturnType<typeof SmpLid.decode>[] = [];
    b.onReceive((m) => {
      const v = SmpLid.decode(m.data);
      seen.push(v);
      b.send(SmpLid.encode({ ...v, method: Method.GetResp, data: new Uint8Array([v.attrMod]) }), m.addr);
    });
    expect((await rpc.smpGet(7, SmpAttr.NodeInfo, 42))[0]).toBe(42);
    await rpc.smpSet(7, SmpAttr.PortInfo, 3, new Uint8Array(64), { mkey: 5n });
    expect(seen[0]!.mkey).toBe(0x1122334455667788n);
    expect(seen[1]!.mkey).toBe(5n);
    expect(seen[1]!.method).toBe(Method.Set);
  });

  it('never has more outstanding than the global and per-destination windows, and queues FIFO', async () => {
    const { smaEp, rpc } = setup({ window: 6, perDestinationWindow: 2, retries: 0, timeoutMs: 1e9 });
    const held: ReceivedMad[] = [];
    const perDest = new Map<string, number>();
    let maxGlobal = 0;
    let maxPerDest = 0;
    const keyOf = (m: Uint8Array) => String(SmpDr.decode(m).initialPath[1]);
    smaEp.onReceive((m) => {
      held.push(m);
      const k = keyOf(m.data);
      perDest.set(k, (perDest.get(k) ?? 0) + 1);
      maxGlobal = Math.max(maxGlobal, held.length);
      maxPerDest = Math.max(maxPerDest, perDest.get(k)!);
    });
    const order: number[] = [];
    const all: Promise<void>[] = [];
    for (let i = 0; i < 60; i++) {
      const dest = i % 3 === 0 ? 1 : 2 + (i % 5); // destination 1 gets a third of the traffic
      all.push(rpc.smpGetDr([dest], SmpAttr.NodeInfo, i).then((d) => void order.push(d[0]!)));
    }
    await flushMicrotasks();
    expect(rpc.outstandingCount).toBe(6);
    expect(rpc.queuedCount).toBe(54);
    let answered = 0;
    while (answered < 60) {
      await flushMicrotasks();
      // answer a pseudo-random one of the held requests
      const idx = (answered * 7) % held.length;
      const m = held.splice(idx, 1)[0]!;
      const k = keyOf(m.data);
      perDest.set(k, perDest.get(k)! - 1);
      smaEp.send(drResponse(m.data, new Uint8Array([SmpDr.decode(m.data).attrMod])), m.addr);
      answered++;
    }
    await Promise.all(all);
    expect(maxGlobal).toBe(6);
    expect(maxPerDest).toBe(2);
    expect(order.slice().sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    // per destination, requests were sent in the order they were made
    expect(rpc.stats.sent).toBe(60);
  });

  it('sends queued requests to one destination in FIFO order', async () => {
    const { smaEp, rpc } = setup({ window: 1, perDestinationWindow: 1, timeoutMs: 1e9 });
    const mods: number[] = [];
    answerWith(smaEp, (m) => {
      const v = SmpDr.decode(m.data);
      mods.push(v.attrMod);
      return drResponse(m.data, new Uint8Array(64));
    });
    await Promise.all(Array.from({ length: 10 }, (_, i) => rpc.smpGetDr([1], SmpAttr.NodeInfo, i)));
    expect(mods).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('wraps the TID counter and never uses low TID 0', async () => {
    const { smaEp, rpc } = setup({ firstTid: 0x3ffffffe });
    const tids: bigint[] = [];
    answerWith(smaEp, (m) => {
      tids.push(SmpDr.decode(m.data).tid & 0xffffffffn);
      return drResponse(m.data, new Uint8Array(64));
    });
    for (let i = 0; i < 3; i++) await rpc.smpGetDr([], SmpAttr.NodeInfo);
    expect(tids).toEqual([0x3ffffffen, 0x3fffffffn, 1n]);
  });

  it('dispatches unsolicited MADs to the most specific handler and respond() echoes the full TID', async () => {
    const { smEp, smaEp, rpc } = setup();
    const got: string[] = [];
    rpc.onUnsolicited(MgmtClass.SubnLid, () => got.push('class'));
    rpc.onUnsolicited(MgmtClass.SubnLid, (m) => {
      got.push('trap');
      rpc.respond(m, SmpLid.encode({ ...SmpLid.decode(m.data), method: Method.TrapRepress }));
    }, { method: Method.Trap });
    const off = rpc.onUnsolicited(MgmtClass.SubnLid, () => got.push('trap-notice'), { method: Method.Trap, attrId: 0x99 });
    const replies: ReceivedMad[] = [];
    smaEp.onReceive((m) => replies.push(m));
    const trap = SmpLid.encode({ baseVersion: 1, mgmtClass: 1, classVersion: 1, method: Method.Trap, tid: 0xabcdef0012345678n, attrId: SmpAttr.Notice });
    smaEp.send(trap, { lid: SM_LID, qpn: 0 });
    smaEp.send(SmpLid.encode({ baseVersion: 1, mgmtClass: 1, classVersion: 1, method: Method.Trap, attrId: 0x99 }), { lid: SM_LID, qpn: 0 });
    smaEp.send(SmpLid.encode({ baseVersion: 1, mgmtClass: 1, classVersion: 1, method: Method.Get, attrId: 0x99 }), { lid: SM_LID, qpn: 0 });
    smaEp.send(SmpLid.encode({ baseVersion: 1, mgmtClass: 3, classVersion: 2, method: Method.Get }), { lid: SM_LID, qpn: 1 });
    await flushMicrotasks();
    off();
    smaEp.send(SmpLid.encode({ baseVersion: 1, mgmtClass: 1, classVersion: 1, method: Method.Trap, attrId: 0x99 }), { lid: SM_LID, qpn: 0 });
    await flushMicrotasks();
    expect(got).toEqual(['trap', 'trap-notice', 'class', 'trap']);
    expect(rpc.stats.unsolicited).toBe(4);
    expect(rpc.stats.unhandled).toBe(1);
    // the trap repress went back to the sender with the full TID, high bits as set by the sender's transport
    expect(replies.length).toBe(2);
    const rep = SmpLid.decode(replies[0]!.data);
    expect(rep.method).toBe(Method.TrapRepress);
    expect(rep.tid).toBe((0x5a5a0000n << 32n) | 0x12345678n);
    expect(smEp.local.lid).toBe(SM_LID);
  });

  it('rejects a request whose send throws, and close() rejects what is pending', async () => {
    const { rpc, hub } = setup({ timeoutMs: 1e9 });
    const lone = hub.endpoint({ lid: 9 });
    const r2 = new MadRpc(lone, new VirtualClock());
    await expect(r2.smpGet(2, SmpAttr.NodeInfo)).rejects.toBeInstanceOf(TransportError);
    const p = rpc.smpGetDr([1], SmpAttr.NodeInfo).catch((e: unknown) => e);
    rpc.close();
    expect(await p).toBeInstanceOf(RpcClosedError);
    await expect(rpc.smpGetDr([1], SmpAttr.NodeInfo)).rejects.toBeInstanceOf(RpcClosedError);
  });
});

describe('VirtualClock (heap)', () => {
  it('fires in time order, FIFO for ties, skipping cleared timers', () => {
    const c = new VirtualClock();
    const out: string[] = [];
    c.setTimeout(() => out.push('b'), 20);
    const x = c.setTimeout(() => out.push('x'), 5);
    c.setTimeout(() => out.push('a1'), 10);
    c.setTimeout(() => {
      out.push('a2');
      c.setTimeout(() => out.push('c'), 0);
    }, 10);
    c.clearTimeout(x);
    expect(c.pending).toBe(3);
    c.advance(15);
    expect(out).toEqual(['a1', 'a2', 'c']);
    expect(c.now()).toBe(15);
    c.advance(5);
    expect(out).toEqual(['a1', 'a2', 'c', 'b']);
    expect(c.pending).toBe(0);
  });
});

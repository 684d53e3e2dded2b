import { describe, expect, it } from 'vitest';
import { LoopbackHub } from '../src/transport/loopback.js';
import { withFaults, type FaultOptions } from '../src/transport/fault.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { Method, SmpAttr, SmpLid } from '../src/wire/mad.js';

function rig(opts: FaultOptions) {
  const hub = new LoopbackHub();
  const clock = new VirtualClock();
  const a = hub.endpoint({ lid: 1 });
  const b = hub.endpoint({ lid: 2 });
  a.register(1, 1);
  b.register(1, 1);
  const fa = withFaults(a, opts, clock);
  const got: number[] = [];
  const statuses: number[] = [];
  b.onReceive((m) => got.push(m.data[255]!));
  fa.onReceive((m) => statuses.push(m.status));
  const send = (i: number) => {
    const mad = new Uint8Array(256);
    mad[1] = 1;
    mad[3] = Method.Get;
    mad[255] = i;
    fa.send(mad, { lid: 2, qpn: 0 });
  };
  return { hub, clock, a, b, fa, got, statuses, send };
}

async function run(opts: FaultOptions, n = 200) {
  const r = rig(opts);
  for (let i = 0; i < n; i++) {
    r.send(i & 0xff);
    if (i % 10 === 9) await r.clock.advanceAsync(3);
  }
  await r.clock.advanceAsync(100);
  return r;
}

describe('fault injector', () => {
  it('is reproducible for a seed and differs between seeds', async () => {
    const o = { drop: 0.2, duplicate: 0.1, reorder: 0.2, delay: [0, 4] as [number, number] };
    const x = await run({ seed: 7, ...o });
    const y = await run({ seed: 7, ...o });
    const z = await run({ seed: 8, ...o });
    expect(y.got).toEqual(x.got);
    expect(y.fa.stats).toEqual(x.fa.stats);
    expect(z.got).not.toEqual(x.got);
  });

  it('drops, duplicates and reorders at roughly the configured rates and counts it', async () => {
    const r = await run({ seed: 3, drop: 0.25, duplicate: 0.2, reorder: 0.3 }, 2000);
    const s = r.fa.stats.send;
    expect(s.seen).toBe(2000);
    expect(s.dropped).toBeGreaterThan(400);
    expect(s.dropped).toBeLessThan(600);
    expect(s.duplicated).toBeGreaterThan(220);
    expect(s.duplicated).toBeLessThan(380);
    expect(r.got.length).toBe(s.passed);
    expect(s.passed).toBe(2000 - s.dropped + s.duplicated);
    // reordering happened: the delivered sequence is not sorted (mod 256 runs)
    let inversions = 0;
    for (let i = 1; i < r.got.length; i++) if (((r.got[i]! - r.got[i - 1]! + 256) & 0xff) > 128) inversions++;
    expect(inversions).toBeGreaterThan(50);
    expect(r.fa.stats.receive.seen).toBe(0);
  });

  it('applies faults per direction', async () => {
    const r = rig({ seed: 1, receive: { drop: 1 } });
    r.b.onReceive((m) => r.b.send(m.data, m.addr)); // echo
    const back: number[] = [];
    r.fa.onReceive((m) => back.push(m.data[255]!));
    for (let i = 0; i < 10; i++) r.send(i);
    await flushMicrotasks();
    expect(r.fa.stats.send).toMatchObject({ seen: 10, passed: 10, dropped: 0 });
    expect(r.fa.stats.receive).toMatchObject({ seen: 10, dropped: 10 });
    expect(back).toEqual([]);
  });

  it('bounces with status 110 like ibsim, delays on the clock, and corrupts exactly one bit', async () => {
    const r = rig({ seed: 5, send: { bounce: 1 } });
    r.send(1);
    await flushMicrotasks();
    expect(r.statuses).toEqual([110]);
    expect(r.got).toEqual([]);

    const d = rig({ seed: 5, delay: [10, 10] });
    d.send(1);
    await flushMicrotasks();
    expect(d.got).toEqual([]);
    await d.clock.advanceAsync(10);
    expect(d.got).toEqual([1]);

    const c = rig({ seed: 9, corrupt: 1, corruptFrom: 64 });
    const raw: Uint8Array[] = [];
    c.b.onReceive((m) => raw.push(m.data));
    c.send(0);
    await flushMicrotasks();
    const orig = new Uint8Array(256);
    orig[1] = 1;
    orig[3] = Method.Get;
    let bits = 0;
    let firstDiff = -1;
    for (let i = 0; i < 256; i++) {
      const x = raw[0]![i]! ^ orig[i]!;
      if (x && firstDiff < 0) firstDiff = i;
      for (let k = 0; k < 8; k++) bits += (x >> k) & 1;
    }
    expect(bits).toBe(1);
    expect(firstDiff).toBeGreaterThanOrEqual(64);
  });

  it('MadRpc completes every request through a lossy, duplicating link, counting retries and late/duplicate responses', async () => {
    const hub = new LoopbackHub();
    const clock = new VirtualClock();
    const a = hub.endpoint({ lid: 1 });
    const b = hub.endpoint({ lid: 2 });
    a.register(1, 1);
    b.register(1, 1);
    b.onReceive((m) => {
      const v = SmpLid.decode(m.data);
      b.send(SmpLid.encode({ ...v, method: Method.GetResp, data: new Uint8Array([v.attrMod & 0xff]) }), m.addr);
    });
    const fa = withFaults(a, { seed: 11, drop: 0.15, duplicate: 0.1, delay: [0, 3] }, clock);
    const rpc = new MadRpc(fa, clock, { timeoutMs: 20, retries: 8, window: 8 });
    let ok = 0;
    const all = Array.from({ length: 300 }, (_, i) => rpc.smpGet(2, SmpAttr.NodeInfo, i).then((d) => void (d[0] === (i & 0xff) && ok++)));
    await clock.runUntil(Promise.all(all), 20_000);
    expect(ok).toBe(300);
    expect(rpc.stats.retries).toBeGreaterThan(0);
    expect(rpc.stats.timeouts).toBe(rpc.stats.retries);
    expect(rpc.stats.unmatched).toBeGreaterThan(0);
    expect(rpc.stats.sent).toBe(300 + rpc.stats.retries);
    expect(rpc.stats.failed).toBe(0);
  });
});

/** The apply step over the SMP client's callback slot (apply without a promise per write):
 * every write settles once (its hook called once), at most `window` are in flight, the retry
 * rounds of RetryingSmp still run behind the slot (a timeout retried, a refused Set found done by
 * its Get), a hook that throws stops new writes and rejects once the writes in flight settled,
 * and the slot gives the same results as the promise path (setDr) on the same script. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { apply, type ApplyHooks } from '../src/sm/apply.js';
import { RetryingSmp } from '../src/sm/retry.js';
import type { SmpClient, SmpSetReq, SmpSink } from '../src/sm/smp-client.js';
import type { SmpWrite } from '../src/sm/programmed.js';
import { MadStatusError, MadTimeoutError } from '../src/rpc/errors.js';
import { VirtualClock } from '../src/util/clock.js';
import { SmpAttr } from '../src/wire/mad.js';

const ident = { mgmtClass: 0x81, method: 2, attrId: SmpAttr.LinearForwardingTable, attrMod: 0, destination: 'DR path 0,1' };

/** What the fake SMA does with each try of a write: answer, time out, or refuse with a status. */
type Act = 'ok' | 'timeout' | 'status';

/** A fake SmpClient whose answers come one event-loop turn later (as a real one's do), by a
 * script per write (keyed by `mod`); `slot` chooses whether it offers setDrTo. The SMA "holds"
 * what a Set that got through (ok, or a status after landing: 'status' is a refused retry of a
 * landed Set when `landed` says so) wrote. */
function fakeClient(script: Map<number, Act[]>, slot: boolean, landed = new Set<number>()) {
  const tries = new Map<number, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const held = new Map<number, Uint8Array>();
  const act = (mod: number): Act => {
    const n = (tries.get(mod) ?? 0) + 1;
    tries.set(mod, n);
    return script.get(mod)?.[n - 1] ?? 'ok';
  };
  const later = <T>(f: () => T): Promise<T> =>
    new Promise((res, rej) =>
      setImmediate(() => {
        try {
          res(f());
        } catch (e) {
          rej(e);
        }
      }),
    );
  const set = (mod: number, data: Uint8Array): Promise<Uint8Array> => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const a = act(mod);
    return later(() => {
      inFlight--;
      if (a === 'timeout') throw new MadTimeoutError({ ...ident, attrMod: mod }, 4);
      if (a === 'status') {
        if (landed.has(mod)) held.set(mod, data);
        throw new MadStatusError({ ...ident, attrMod: mod }, 0x1c, new Uint8Array(256));
      }
      held.set(mod, data);
      return data;
    });
  };
  const c: SmpClient = {
    getDr: (_path, _attr, mod = 0) => later(() => held.get(mod) ?? new Uint8Array(64)),
    setDr: (_path, _attr, mod, data) => set(mod, data),
    getLid: () => Promise.reject(new Error('unused')),
    setLid: () => Promise.reject(new Error('unused')),
    trap: () => Promise.resolve(),
    sent: 0,
  };
  if (slot)
    c.setDrTo = <C extends SmpSetReq>(req: C, sink: SmpSink<C>): void => {
      set(req.mod, req.data).then(
        (d) => sink.smpOk(req, d),
        (e: Error) => sink.smpFailed(req, e),
      );
    };
  return { client: c, stats: () => ({ maxInFlight, tries }) };
}

function writes(n: number): SmpWrite[] {
  return Array.from({ length: n }, (_, i) => ({ path: [1], attr: SmpAttr.LinearForwardingTable, mod: i, data: new Uint8Array(64).fill(i & 0xff), effect: { kind: 'lft', guid: 1n, block: i } }));
}

function recorder() {
  const oks = new Map<number, number>();
  const fails = new Map<number, number>();
  const hooks: ApplyHooks = {
    ok: (w) => void oks.set(w.mod, (oks.get(w.mod) ?? 0) + 1),
    failed: (w) => void fails.set(w.mod, (fails.get(w.mod) ?? 0) + 1),
  };
  return { hooks, oks, fails };
}

/** Run virtual-clock retries and setImmediate answers until `p` settles. */
async function drive<T>(clock: VirtualClock, p: Promise<T>): Promise<T> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 10_000 && !done; i++) {
    await new Promise((r) => setImmediate(r));
    await clock.advanceAsync(10);
  }
  return p;
}

describe('apply over the callback slot', () => {
  it('settles every write once, keeps the window, and agrees with the promise path (fast-check scripts)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.array(fc.constantFrom<Act>('ok', 'timeout', 'status'), { minLength: 1, maxLength: 5 }), { minLength: 40, maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
        async (n, window, acts, land) => {
          const results = [];
          for (const slot of [true, false]) {
            const script = new Map(acts.map((a, i) => [i, a]));
            const landed = new Set(land.flatMap((b, i) => (b ? [i] : [])));
            const f = fakeClient(script, slot, landed);
            const clock = new VirtualClock();
            const smp = new RetryingSmp(f.client, clock, { rounds: 2, backoffMs: 5 });
            const r = recorder();
            const res = await drive(clock, apply(smp, writes(n), r.hooks, window));
            for (let i = 0; i < n; i++) expect((r.oks.get(i) ?? 0) + (r.fails.get(i) ?? 0)).toBe(1);
            expect(res.ok + res.failed.length).toBe(n);
            expect(res.ok).toBe(r.oks.size);
            expect(f.stats().maxInFlight).toBeLessThanOrEqual(window);
            results.push({ ok: [...r.oks.keys()].sort((a, b) => a - b), failed: res.failed.map((x) => x.write.mod).sort((a, b) => a - b), recovered: smp.recovered, foundDone: smp.foundDone, failures: { ...smp.failures } });
          }
          expect(results[0]).toEqual(results[1]);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a timed-out write is retried behind the slot, and a refused Set that landed is found done by its Get', async () => {
    const script = new Map<number, Act[]>([
      [1, ['timeout', 'ok']],
      [2, ['status', 'status', 'status', 'status']],
      [3, ['status', 'status', 'status', 'status']],
    ]);
    const f = fakeClient(script, true, new Set([2]));
    const clock = new VirtualClock();
    const smp = new RetryingSmp(f.client, clock, { rounds: 3, backoffMs: 5 });
    const r = recorder();
    const res = await drive(clock, apply(smp, writes(4), r.hooks, 2));
    expect(res.ok).toBe(3); // 0 at once, 1 after its retry, 2 found done
    expect(res.failed.map((x) => x.write.mod)).toEqual([3]);
    expect(res.failed[0]!.error).toBeInstanceOf(MadStatusError);
    expect(smp.recovered).toBe(1);
    expect(smp.foundDone).toBe(1);
    expect(smp.failures).toEqual({ timeout: 0, status: 1 });
    expect(f.stats().tries.get(1)).toBe(2);
  });

  it('a hook that throws: no write starts after it, the step rejects with its error once the writes in flight settled', async () => {
    const f = fakeClient(new Map(), true);
    const clock = new VirtualClock();
    const smp = new RetryingSmp(f.client, clock);
    let oks = 0;
    const boom = new Error('hook failed');
    const hooks: ApplyHooks = {
      ok: (w) => {
        oks++;
        if (w.mod === 1) throw boom;
      },
      failed: () => undefined,
    };
    await expect(drive(clock, apply(smp, writes(20), hooks, 4))).rejects.toBe(boom);
    // 0..3 went out; 0's answer let 4 go; 1's hook threw: 2, 3 and 4 settled, nothing more started
    expect(oks).toBe(5);
    expect(f.stats().tries.size).toBe(5);
  });

  it('no writes: resolves at once with nothing done', async () => {
    const f = fakeClient(new Map(), true);
    const res = await apply(new RetryingSmp(f.client, new VirtualClock()), [], recorder().hooks);
    expect(res).toEqual({ ok: 0, failed: [] });
  });

  it('a write source is asked for the next write only as the window has room (never more than `window` handed out and unsettled), over either inner client', async () => {
    for (const slot of [true, false]) {
      const f = fakeClient(new Map([[5, ['timeout', 'ok']], [9, ['status', 'status', 'status', 'status']]]), slot);
      const clock = new VirtualClock();
      const smp = new RetryingSmp(f.client, clock, { rounds: 3, backoffMs: 5 });
      const all = writes(30);
      let handed = 0;
      let settled = 0;
      let most = 0;
      let afterEnd = 0;
      const src = {
        next: () => {
          if (handed === all.length) {
            afterEnd++;
            return undefined;
          }
          most = Math.max(most, ++handed - settled);
          return all[handed - 1];
        },
      };
      const oks: number[] = [];
      const hooks: ApplyHooks = { ok: (w) => (settled++, void oks.push(w.mod)), failed: () => void settled++ };
      const res = await drive(clock, apply(smp, src, hooks, 4));
      expect(res.ok, `slot=${slot}`).toBe(29);
      expect(res.failed.map((x) => x.write.mod)).toEqual([9]);
      expect(new Set(oks).size).toBe(29);
      expect(afterEnd, 'asked once past the end').toBe(1);
      // RetryingSmp offers the slot over either inner client: the source is asked as writes settle
      expect(most, `slot=${slot}`).toBe(4);
    }
  });
});

/** MadRpc's books (rpc/pending.ts, rpc/timeouts.ts) with their pooled, preallocated structures:
 * the slot table finds every pending request by its TID however many are booked (it grows), a
 * reused Pending's generation wraps as the deadline ring stores it, and deadlines in order (the
 * ring) and out of order (the heap) expire each once, in time order. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { RequestTable, St, type Pending } from '../src/rpc/pending.js';
import { TryDeadlines } from '../src/rpc/timeouts.js';

function book(t: RequestTable, dest: number, timeoutMs = 100): Pending {
  const p = t.acquire();
  p.key = t.allocTid();
  p.mgmtClass = 0x81;
  p.dest = dest;
  p.timeoutMs = timeoutMs;
  t.add(p);
  return p;
}

describe("MadRpc's books", () => {
  it('the slot table finds 5,000 pending requests by TID and class, and none once settled', () => {
    const sent: Pending[] = [];
    const t = new RequestTable(100_000, 100_000, 1, (p) => sent.push(p));
    const ps = Array.from({ length: 5000 }, (_, i) => book(t, i % 97));
    expect(new Set(ps.map((p) => p.key)).size).toBe(5000);
    expect(sent.length).toBe(5000);
    for (const p of ps) {
      expect(t.lookup(p.key, 0x81)).toBe(p);
      expect(t.lookup(p.key, 0x01)).toBeUndefined();
    }
    for (const p of ps.slice(0, 2500)) t.settle(p);
    for (const [i, p] of ps.entries()) expect(t.lookup(p.key, 0x81)).toBe(i < 2500 ? undefined : p);
    expect(t.outstandingCount).toBe(2500);
    // TIDs keep running on: a new request never takes the TID of one still pending
    const q = book(t, 1);
    expect(ps.slice(2500).some((p) => p.key === q.key)).toBe(false);
  });

  it('a reused Pending: its generation wraps at 2^31 as the deadline ring keeps it, and its deadline still fires once', async () => {
    const clock = new VirtualClock();
    const t = new RequestTable(8, 8, 1, () => undefined);
    const expired: Pending[] = [];
    const d = new TryDeadlines(clock, false, (p) => expired.push(p));
    const p = book(t, 1);
    t.settle(p);
    p.gen = 0x7fffffff;
    t.release(p);
    const again = book(t, 1);
    expect(again).toBe(p);
    expect(again.gen).toBe(-0x80000000);
    again.tries = 1;
    d.arm(again);
    await clock.advanceAsync(99);
    expect(expired).toEqual([]);
    await clock.advanceAsync(1);
    expect(expired).toEqual([again]);
    expect(again.state).toBe(St.Outstanding);
  });

  it('deadlines in order and out of order expire each once, in time order; stale ones never', async () => {
    const clock = new VirtualClock();
    const t = new RequestTable(64, 64, 1, () => undefined);
    const expired: number[] = [];
    const d = new TryDeadlines(clock, false, (p) => expired.push(p.key));
    const arm = (timeoutMs: number): Pending => {
      const p = book(t, 1, timeoutMs);
      p.tries = 1;
      d.arm(p);
      return p;
    };
    const a = arm(100); // ring
    const b = arm(200); // ring
    const c = arm(20); // far earlier than the ring's last: the heap
    const e = arm(190); // a little earlier than b's 200: joins the ring at 200
    const stale = arm(50); // heap; answered before it expires
    t.settle(stale);
    await clock.advanceAsync(250);
    expect(expired).toEqual([c.key, a.key, b.key, e.key]);
  });
});

/** The simulated fabric's scheduler (sim/scheduler.ts): events run by due time, then in the order
 * they were scheduled, whatever mix of delays (the FIFO buckets by due time give the order a heap
 * of every event gave), including events scheduled while others run; arrival events are reused
 * without one arrival's packet reaching another's handler; cancel and close drop events. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { VirtualClock } from '../src/util/clock.js';
import { Scheduler, type SimEvent } from '../src/sim/scheduler.js';
import { newPacket, type Packet } from '../src/sim/packet.js';
import type { SimNode } from '../src/sim/node.js';

const NODE = {} as SimNode;

describe('sim scheduler', () => {
  it('runs events by due time, ties in scheduling order, also for events scheduled while running', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.boolean(), fc.integer({ min: 0, max: 3 })), { minLength: 1, maxLength: 200 }), (specs) => {
        const clock = new VirtualClock();
        const ran: Array<{ id: number; at: number }> = [];
        const want: Array<{ id: number; at: number; seq: number }> = [];
        let seq = 0;
        const arrivals = new Map<Packet, number>();
        const s = new Scheduler(clock, false, (ev: SimEvent) => ran.push({ id: arrivals.get(ev.pkt!)!, at: clock.now() }));
        let id = 0;
        const add = (delay: number, arrival: boolean, children: number): void => {
          const me = id++;
          want.push({ id: me, at: clock.now() + delay, seq: seq++ });
          if (arrival) {
            const pkt = newPacket(new Uint8Array(1), 0, 0, 0, 0, true);
            arrivals.set(pkt, me);
            s.scheduleArrival(delay, pkt, NODE, 1, true, 1);
          } else {
            s.schedule(delay, () => {
              ran.push({ id: me, at: clock.now() });
              // events scheduled while this one runs (delay 0 ties with what is due now)
              for (let k = 0; k < children; k++) add(k % 2, k % 3 === 0, 0);
            });
          }
        };
        for (const [d, arrival, children] of specs) add(d, arrival, children);
        clock.advance(100);
        expect(s.pending).toBe(0);
        const order = [...want].sort((a, b) => a.at - b.at || a.seq - b.seq).map((w) => w.id);
        expect(ran.map((r) => r.id)).toEqual(order);
        for (const r of ran) expect(r.at).toBe(want.find((w) => w.id === r.id)!.at);
      }),
      { numRuns: 150, seed: 16 },
    );
  });

  it('a reused arrival event carries the new packet, node and ports, never the old ones', () => {
    const clock = new VirtualClock();
    const seen: Array<[Packet | undefined, number, boolean, number]> = [];
    const s = new Scheduler(clock, false, (ev) => seen.push([ev.pkt, ev.port, ev.sma, ev.arrivalPort]));
    const a = newPacket(new Uint8Array(1), 1, 2, 0, 0, true);
    const b = newPacket(new Uint8Array(1), 3, 4, 0, 0, true);
    s.scheduleArrival(1, a, NODE, 5, true, 6);
    clock.advance(1);
    s.scheduleArrival(1, b, NODE, 7, false, 8);
    clock.advance(1);
    expect(seen).toEqual([
      [a, 5, true, 6],
      [b, 7, false, 8],
    ]);
  });

  it('a cancelled event does not run; close drops everything', () => {
    const clock = new VirtualClock();
    const ran: number[] = [];
    const s = new Scheduler(clock, false);
    const e1 = s.schedule(1, () => ran.push(1));
    s.schedule(1, () => ran.push(2));
    s.cancel(e1);
    clock.advance(1);
    expect(ran).toEqual([2]);
    s.schedule(1, () => ran.push(3));
    expect(s.pending).toBe(1);
    s.close();
    expect(s.pending).toBe(0);
    clock.advance(5);
    expect(ran).toEqual([2]);
  });
});

/** PerfMgr's per-port state kept in typed arrays, mutated in place: the 64-bit totals stay exact
 * past 2^53, the totals record a reader kept does not change under later readings, and a port
 * that stops offering the extended counters goes on from its last 64-bit reading. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { accumulate, cleared } from '../src/sm/perf-counters.js';
import { PortCounters, type PortCountersExtended } from '../src/wire/pma.js';

const reading = (v: Partial<PortCounters>): PortCounters => ({ ...PortCounters.zero(), ...v });
const ext = (v: Partial<Record<'xmitData' | 'rcvData' | 'xmitPkts' | 'rcvPkts', bigint>>): PortCountersExtended =>
  ({ portSelect: 1, counterSelect: 0, counterSelect2: 0, xmitData: 0n, rcvData: 0n, xmitPkts: 0n, rcvPkts: 0n, unicastXmitPkts: 0n, unicastRcvPkts: 0n, multicastXmitPkts: 0n, multicastRcvPkts: 0n, reserved0: 0, ...v }) as never;

describe('PerfMgr counter state', () => {
  it('64-bit totals are exact past 2^53 ', () => {
    // rising 64-bit readings from a zeroed counter: the total is the last reading, to the unit
    fc.assert(
      fc.property(fc.array(fc.bigInt({ min: 0n, max: 2n ** 58n }), { minLength: 1, maxLength: 20 }), (steps) => {
        let r = accumulate(undefined, { counters: reading({}), extended: ext({}) });
        let v = 0n;
        for (const s of steps) {
          v += s;
          r = accumulate(r.state, { counters: reading({}), extended: ext({ xmitData: v, rcvPkts: v * 3n }) });
        }
        expect(r.state.totals.xmitData).toBe(v);
        expect(r.state.totals.rcvPkts).toBe(v * 3n);
        expect(r.clearedByOther).toEqual([]);
      }),
    );
    let r = accumulate(undefined, { counters: reading({}), extended: ext({ xmitData: 2n ** 53n + 1n }) });
    r = accumulate(r.state, { counters: reading({}), extended: ext({ xmitData: 2n ** 60n + 3n }) });
    expect(r.state.totals.xmitData).toBe(2n ** 60n + 3n);
    expect(r.delta.xmitData).toBe(2n ** 60n + 3n - (2n ** 53n + 1n));
  });

  it('a totals record kept by a reader does not change under later readings; the next one shows them', () => {
    let r = accumulate(undefined, { counters: reading({ symbolErrors: 3, xmitPkts: 10 }) });
    const kept = r.state.totals;
    expect(r.state.totals).toBe(kept); // one record per reading, however often it is asked for
    r = accumulate(r.state, { counters: reading({ symbolErrors: 5, xmitPkts: 25 }) });
    expect(kept.symbolErrors).toBe(3n);
    expect(kept.xmitPkts).toBe(10n);
    expect(r.state.totals.symbolErrors).toBe(5n);
    expect(r.state.totals.xmitPkts).toBe(25n);
    expect(r.state.samples).toBe(2);
  });

  it('narrow readings after 64-bit ones go on from the last 64-bit reading; a clear zeroes only what it names', () => {
    let r = accumulate(undefined, { counters: reading({}), extended: ext({ rcvData: 1000n }) });
    r = accumulate(r.state, { counters: reading({ rcvData: 1500, rcvErrors: 40_000 }) });
    expect(r.delta.rcvData).toBe(500n);
    expect(r.clearedByOther).toEqual([]);
    r = accumulate(r.state, { counters: reading({ rcvData: 200, rcvErrors: 40_000 }) });
    expect(r.clearedByOther).toEqual(['rcvData']);
    expect(r.state.totals.rcvData).toBe(1000n + 500n + 200n);
    expect(r.clear.counterSelect).not.toBe(0); // rcvErrors (16 bits) past half range
    const s = cleared(r.state, r.clear);
    expect(s.last.rcvErrors).toBe(0n);
    expect(s.last.rcvData).toBe(200n);
  });
});

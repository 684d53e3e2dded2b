/** sa/selector: IBA's component selectors, one evaluator for PathRecords and joins, against the
 * rules as IBA 15.2.5.16 and OpenSM apply them (values chosen by hand). */
import { describe, expect, it } from 'vitest';
import { NUMERIC, RATE, selectForNewGroup, selectValue, selectorHolds } from '../src/sa/selector.js';
import { RATE_GBPS } from '../src/model/rates.js';
import { Selector } from '../src/wire/sa.js';

describe('selectors', () => {
  it('choose from what is available: greater than, less than (one step down), exactly (at most what is there), best', () => {
    // MTU codes: 4 (2048) available.
    expect(selectValue(Selector.GreaterThan, 3, 4)).toBe(4);
    expect(selectValue(Selector.GreaterThan, 4, 4)).toBeUndefined();
    expect(selectValue(Selector.LessThan, 5, 4)).toBe(4);
    expect(selectValue(Selector.LessThan, 4, 4)).toBe(3);
    expect(selectValue(Selector.LessThan, 1, 4)).toBeUndefined();
    expect(selectValue(Selector.Exactly, 3, 4)).toBe(3);
    expect(selectValue(Selector.Exactly, 5, 4)).toBeUndefined();
    expect(selectValue(Selector.Best, 1, 4)).toBe(4);
    // Rates by Gb/s: 7 (40 Gb/s) available; "less than 40" is the fastest rate below it, 30 Gb/s (code 4).
    expect(selectValue(Selector.LessThan, 7, 7, RATE)).toBe(4);
    expect(selectValue(Selector.GreaterThan, 6, 7, RATE)).toBe(7);
    expect(selectValue(Selector.Exactly, 3, 7, RATE)).toBe(3);
    expect(selectValue(Selector.Exactly, 21, 7, RATE)).toBeUndefined();
  });

  it('check a fixed value (a group joined): rates compared by Gb/s', () => {
    expect(selectorHolds(Selector.Exactly, 4, 4, NUMERIC)).toBe(true);
    expect(selectorHolds(Selector.Exactly, 3, 4)).toBe(false);
    expect(selectorHolds(Selector.GreaterThan, 3, 4)).toBe(true);
    expect(selectorHolds(Selector.LessThan, 3, 4)).toBe(false);
    expect(selectorHolds(Selector.Best, 5, 1)).toBe(true);
    expect(selectorHolds(Selector.GreaterThan, 3, 7, RATE)).toBe(true); // 40 > 10 Gb/s
    expect(selectorHolds(Selector.LessThan, 7, 3, RATE)).toBe(true);
  });

  it("choose a new group's MTU and rate (MCMemberRecord create) as the SA's own rules did before they were one evaluator", () => {
    // The witness: the creation rules as sa/multicast.ts wrote them inline (a value, or refused).
    const gbps = (c: number): number => RATE_GBPS[c] ?? 0;
    const nextRate = (code: number, dir: 1 | -1): number => {
      let best = 0;
      for (const [c, v] of Object.entries(RATE_GBPS)) if (dir > 0 ? v > gbps(code) && (!best || v < gbps(best)) : v < gbps(code) && (!best || v > gbps(best))) best = Number(c);
      return best;
    };
    const oldMtu = (sel: number, w: number, portMtu: number): number | 'refused' => {
      let mtu: number;
      if (sel === Selector.GreaterThan) {
        if (portMtu && w >= portMtu) return 'refused';
        mtu = portMtu || w + 1;
      } else if (sel === Selector.LessThan) mtu = portMtu && w > portMtu ? portMtu : w - 1;
      else mtu = w;
      return mtu < 1 || mtu > 5 || (portMtu && mtu > portMtu) ? 'refused' : mtu;
    };
    const oldRate = (sel: number, w: number, pRate: number): number | 'refused' => {
      if (!RATE_GBPS[w]) return 'refused';
      let rate: number;
      if (sel === Selector.GreaterThan) {
        if (pRate && gbps(w) >= gbps(pRate)) return 'refused';
        rate = pRate || nextRate(w, +1);
      } else if (sel === Selector.LessThan) rate = pRate && gbps(w) > gbps(pRate) ? pRate : nextRate(w, -1);
      else rate = w;
      return !RATE_GBPS[rate] || (pRate && gbps(rate) > gbps(pRate)) ? 'refused' : rate;
    };
    // The checks sa/multicast.ts makes around the evaluator.
    const newMtu = (sel: number, w: number, portMtu: number): number | 'refused' => {
      const v = selectForNewGroup(sel, w, portMtu);
      return v === undefined || v < 1 || v > 5 || (portMtu && v > portMtu) ? 'refused' : v;
    };
    const newRate = (sel: number, w: number, pRate: number): number | 'refused' => {
      if (!RATE_GBPS[w]) return 'refused';
      const v = selectForNewGroup(sel, w, pRate, RATE);
      return v === undefined || !RATE_GBPS[v] || (pRate && gbps(v) > gbps(pRate)) ? 'refused' : v;
    };
    const sels = [Selector.GreaterThan, Selector.LessThan, Selector.Exactly];
    let compared = 0;
    for (const sel of sels) {
      for (let w = 0; w <= 7; w++) for (let have = 0; have <= 5; have++, compared++) expect(newMtu(sel, w, have), `MTU sel ${sel} want ${w} port ${have}`).toBe(oldMtu(sel, w, have));
      for (let w = 0; w <= 28; w++) for (const have of [0, ...Object.keys(RATE_GBPS).map(Number)]) {
        compared++;
        expect(newRate(sel, w, have), `rate sel ${sel} want ${w} port ${have}`).toBe(oldRate(sel, w, have));
      }
    }
    expect(compared).toBeGreaterThan(2000);
    // Hand-chosen: without a known port rate, "greater than 10 Gb/s" is the next rate up (14 Gb/s, code 11).
    expect(selectForNewGroup(Selector.GreaterThan, 3, 0, RATE)).toBe(11);
    expect(selectForNewGroup(Selector.LessThan, 4, 0)).toBe(3);
    expect(selectForNewGroup(Selector.GreaterThan, 3, 4)).toBe(4);
  });
});

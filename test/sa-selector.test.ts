/** sa/selector: IBA's component selectors, one evaluator for PathRecords and joins, against the
 * rules as IBA 15.2.5.16 and OpenSM apply them (values chosen by hand). */
import { describe, expect, it } from 'vitest';
import { NUMERIC, RATE, selectValue, selectorHolds } from '../src/sa/selector.js';
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
});

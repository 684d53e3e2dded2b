/** IBA's component selectors (15.2.5.16: GreaterThan, LessThan, Exactly, Best) over the three
 * scales they apply to: MTU codes, rate codes (ordered by Gb/s) and packet lifetimes. One
 * evaluator for PathRecords (choose a value from what the path allows) and MCMemberRecord joins
 * (check a group's value). Pure. */
import { Selector } from '../wire/sa.js';
import { RATES_ASCENDING, rateCompare } from '../model/rates.js';

/** An ordered scale: compare two codes, and the largest code below one (undefined if none). */
export interface SelectorScale {
  cmp(a: number, b: number): number;
  below(v: number): number | undefined;
}

/** MTU codes (1 = 256 ... 5 = 4096) and packet lifetimes: plain numbers, 1 the least a "less
 * than" may go down to (as OpenSM). */
export const NUMERIC: SelectorScale = { cmp: (a, b) => a - b, below: (v) => (v > 1 ? v - 1 : undefined) };
/** Rate codes, ordered by their Gb/s. */
export const RATE: SelectorScale = {
  cmp: rateCompare,
  below: (v) => {
    const lower = RATES_ASCENDING.filter((r) => rateCompare(r, v) < 0);
    return lower.length ? lower[lower.length - 1] : undefined;
  },
};

/** The value to put in an answer when the best available is `have` and the request asks for
 * (`sel`, `want`); undefined when the request cannot be met. Best: what is available (the caller
 * has already taken the largest MTU/rate or the smallest lifetime). */
export function selectValue(sel: number, want: number, have: number, scale: SelectorScale = NUMERIC): number | undefined {
  switch (sel) {
    case Selector.GreaterThan:
      return scale.cmp(have, want) > 0 ? have : undefined;
    case Selector.LessThan:
      return scale.cmp(have, want) < 0 ? have : scale.below(want);
    case Selector.Exactly:
      return scale.cmp(have, want) >= 0 ? want : undefined;
    default:
      return have;
  }
}

/** Does a fixed value `have` (a group's) satisfy (`sel`, `want`)? */
export function selectorHolds(sel: number, want: number, have: number, scale: SelectorScale = NUMERIC): boolean {
  const c = scale.cmp(have, want);
  switch (sel) {
    case Selector.GreaterThan:
      return c > 0;
    case Selector.LessThan:
      return c < 0;
    case Selector.Exactly:
      return c === 0;
    default:
      return true;
  }
}

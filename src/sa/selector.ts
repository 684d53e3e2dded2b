/** IBA's component selectors (15.2.5.16: GreaterThan, LessThan, Exactly, Best) over the three
 * scales they apply to: MTU codes, rate codes (ordered by Gb/s) and packet lifetimes. One
 * evaluator for PathRecords (choose a value from what the path allows), MCMemberRecord joins
 * (check a group's value) and group creation (choose the group's value). Pure. */
import { Selector } from '../wire/sa.js';
import { RATES_ASCENDING, rateCompare } from '../model/rates.js';

/** An ordered scale: compare two codes, and the largest code below one and the smallest above
 * it (undefined if none). */
export interface SelectorScale {
  cmp(a: number, b: number): number;
  below(v: number): number | undefined;
  above(v: number): number | undefined;
}

/** MTU codes (1 = 256 ... 5 = 4096) and packet lifetimes: plain numbers, 1 the least a "less
 * than" may go down to (as OpenSM). */
export const NUMERIC: SelectorScale = { cmp: (a, b) => a - b, below: (v) => (v > 1 ? v - 1 : undefined), above: (v) => v + 1 };
/** Rate codes, ordered by their Gb/s. */
export const RATE: SelectorScale = {
  cmp: rateCompare,
  below: (v) => {
    const lower = RATES_ASCENDING.filter((r) => rateCompare(r, v) < 0);
    return lower.length ? lower[lower.length - 1] : undefined;
  },
  above: (v) => RATES_ASCENDING.find((r) => rateCompare(r, v) > 0),
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

/** The value a new multicast group takes for (`sel`, `want`) when the creating port allows up to
 * `have`, 0 when that is not known: as selectValue, and without `have` the nearest value the
 * selector allows (GreaterThan: the next above `want`, LessThan: the next below, Exactly: `want`).
 * The caller checks the scale's range. */
export function selectForNewGroup(sel: number, want: number, have: number, scale: SelectorScale = NUMERIC): number | undefined {
  if (have) return selectValue(sel, want, have, scale);
  switch (sel) {
    case Selector.GreaterThan:
      return scale.above(want);
    case Selector.LessThan:
      return scale.below(want);
    default:
      return want;
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

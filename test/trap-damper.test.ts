/** TrapDamper (sm/trap-damper.ts): per source, the first `limit` traps of a window pass, the next
 * one is the storm (once), the rest are damped until a whole window stays under the limit; its
 * state stays bounded whatever the number of sources. */
import { describe, expect, it } from 'vitest';
import { TrapDamper } from '../src/sm/trap-damper.js';

describe('TrapDamper', () => {
  it('passes the limit, reports the storm once, damps the rest, and calms down after a quiet window', () => {
    const d = new TrapDamper({ windowMs: 1000, limit: 3 });
    const v = [0, 1, 2, 3, 4, 5].map((i) => d.admit(9, i));
    expect(v).toEqual(['pass', 'pass', 'pass', 'storm', 'damped', 'damped']);
    expect(d.admit(10, 6)).toBe('pass'); // another source is not affected
    // Still babbling in the next window: still damped, no second storm line.
    for (let i = 0; i < 10; i++) expect(d.admit(9, 1000 + i)).toBe('damped');
    // A window under the limit (two traps), then it passes again.
    expect(d.admit(9, 2000)).toBe('damped');
    expect(d.admit(9, 2001)).toBe('damped');
    expect(d.admit(9, 3000)).toBe('pass');
    expect(d.storms).toBe(1);
  });

  it('keeps at most maxSources sources', () => {
    const d = new TrapDamper({ maxSources: 100 });
    for (let lid = 1; lid <= 10_000; lid++) d.admit(lid, lid);
    expect(d.size).toBeLessThanOrEqual(100);
  });
});

/** Issue #11 item 6, the CI subset of scripts/fuzz.mjs: seeded generated and mutated MADs (SMP
 * responses the SM decodes, traps, SMInfo, SA requests, RMPP segments) into a running SM + SA on
 * the in-process fabric; no throw out of the receive path, no unhandled rejection, and afterwards
 * the SM still sweeps the whole fabric and the SA still answers. (Needs dist/: npx tsc first.) */
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without types
import { runFuzz } from '../scripts/fuzz.mjs';

interface FuzzResult {
  injected: number;
  byKind: Record<string, number>;
  crashes: number;
  unhandled: number;
  errors: string[];
  fabricUp: boolean;
  saAnswers: boolean;
  rpcStats: { responses: number; unsolicited: number };
  rmppStats: { acksReceived: number; segmentsReceived: number };
  saByStatus: Record<string, number>;
  ok: boolean;
}

describe('fuzzing the SM and SA (seeded subset of scripts/fuzz.mjs)', () => {
  it.each([1, 2, 3])('seed %i: 30,000 MADs, 0 crashes, 0 unhandled rejections, the SM and SA still work', async (seed) => {
    const r = (await runFuzz({ count: 30_000, seed })) as FuzzResult;
    expect(r.errors).toEqual([]);
    expect(r.crashes).toBe(0);
    expect(r.unhandled).toBe(0);
    expect(r.injected).toBeGreaterThanOrEqual(30_000);
    // Every kind was exercised, and reached the code it aims at.
    for (const k of ['smp-response', 'trap', 'sminfo', 'sa', 'rmpp']) expect(r.byKind[k], k).toBeGreaterThan(1000);
    expect(r.rpcStats.unsolicited).toBeGreaterThan(10_000);
    expect(r.rmppStats.segmentsReceived).toBeGreaterThan(0);
    expect(r.saByStatus['0x0000'] ?? 0).toBeGreaterThan(0);
    expect(Object.keys(r.saByStatus).length).toBeGreaterThan(4);
    expect(r.fabricUp).toBe(true);
    expect(r.saAnswers).toBe(true);
    expect(r.ok).toBe(true);
  });
});

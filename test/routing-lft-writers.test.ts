// The LFT writers of ftree and nue (src/routing/lft-writers.ts) against plain byte-by-byte writes: any sequence
// of runs and columns leaves the tables exactly as writing each entry directly would.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ColumnBuffer, RunWriter } from '../src/routing/lft-writers.js';

const N_SW = 4;
const LEN = 96;
const tables = (): { all: Uint8Array; rows: Uint8Array[] } => {
  const all = new Uint8Array(N_SW * LEN).fill(255);
  return { all, rows: Array.from({ length: N_SW }, (_, s) => all.subarray(s * LEN, (s + 1) * LEN)) };
};

// One segment: switch s, LIDs l0 .. l0+m-1, candidate list (ports) with its version, rotation r.
const segment = fc.record({
  s: fc.integer({ min: 0, max: N_SW - 1 }),
  l0: fc.integer({ min: 0, max: LEN - 1 }),
  m: fc.integer({ min: 1, max: 40 }),
  list: fc.integer({ min: 0, max: 4 }),
  r: fc.integer({ min: 0, max: 7 }),
});
// Candidate lists: the 4th has the 1st's content without a version, the 5th its length, not its order.
const LISTS = [Uint8Array.of(1, 2, 3), Uint8Array.of(7), Uint8Array.of(4, 5, 6, 8, 9), Uint8Array.of(1, 2, 3), Uint8Array.of(2, 3, 1)];

describe('RunWriter', () => {
  it('writes what direct writes would, for any segments (extended or not)', () => {
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 60 }), fc.boolean(), (segs, chain) => {
        const want = tables();
        const got = tables();
        const runs = new RunWriter(got.rows, N_SW, 8);
        let next = new Int32Array(N_SW).fill(-1);
        for (const g of segs) {
          const ports = LISTS[g.list]!;
          const nc = ports.length;
          // chain: continue the switch's previous segment (so runs really get extended)
          let l0 = g.l0;
          let r = g.r % nc;
          if (chain && next[g.s]! >= 0) {
            // the next LIDs; mostly the rotation continued, sometimes not
            l0 = next[g.s]! & 0xffff;
            if (g.r < 5) r = (next[g.s]! >>> 16) % nc;
          }
          const m = Math.min(g.m, LEN - l0);
          if (m <= 0) continue;
          // a LID is written by one segment only (as in ftree): skip overlaps
          if (want.rows[g.s]!.subarray(l0, l0 + m).some((x) => x !== 255)) continue;
          for (let j = 0; j < m; j++) want.rows[g.s]![l0 + j] = ports[(r + j) % nc]!;
          runs.add(g.s, l0, m, ports, 0, nc, r, g.list === 3 ? -1 : g.list);
          next = next.slice();
          next[g.s] = (l0 + m) | (((r + m) % nc) << 16);
        }
        runs.flushAll();
        expect(got.all).toEqual(want.all);
      }),
      { numRuns: 300 },
    );
  });
});

describe('ColumnBuffer', () => {
  it('writes each column to every table, NO_ROUTE where nothing was set, and only those LIDs', () => {
    fc.assert(
      fc.property(fc.oneof(fc.uniqueArray(fc.integer({ min: 0, max: LEN - 1 }), { maxLength: 70 }), fc.integer({ min: 0, max: LEN - 30 }).map((l0) => Array.from({ length: 30 }, (_, i) => l0 + i))), fc.array(fc.integer({ min: 0, max: 254 }), { minLength: N_SW, maxLength: N_SW }), (lids, vals) => {
        const want = tables();
        const got = tables();
        for (const row of [...want.rows, ...got.rows]) row.fill(17);
        const cols = new ColumnBuffer(got.rows, N_SW, 8);
        lids.forEach((lid, i) => {
          const c = cols.column(lid);
          for (let s = 0; s < N_SW; s++) {
            const set = (i + s) % 3 !== 0;
            if (set) cols.buf[s * cols.width + c] = vals[s]!;
            want.rows[s]![lid] = set ? vals[s]! : 255;
          }
        });
        cols.flush();
        expect(got.all).toEqual(want.all);
      }),
      { numRuns: 200 },
    );
  });
});

/** The LFT shadow as a view of the routing table it was programmed from (sm/programmed.ts,
 * issue #32): no copy of a table whose blocks the switch acknowledged; a new routing's blocks that
 * differ are unknown again and written; a block acknowledged or read back that is not the
 * borrowed table's makes the shadow copy it first, never writing through into a routing result. */
import { describe, expect, it } from 'vitest';
import { Programmed, type SmpWrite } from '../src/sm/programmed.js';
import { SmpAttr } from '../src/wire/mad.js';
import { lftBlockMod } from '../src/wire/modifiers.js';

const GUID = 0x1234n;
const BLOCKS = 3;
/** A routing table of LIDs 0..150 (3 blocks, the last one partly past its end). */
const table = (fill: (lid: number) => number) => Uint8Array.from({ length: 151 }, (_, lid) => fill(lid));
const write = (t: Uint8Array, b: number, data?: Uint8Array): SmpWrite => ({
  path: [0, 1],
  attr: SmpAttr.LinearForwardingTable,
  mod: lftBlockMod(b),
  data: data ?? new Uint8Array(t.buffer, t.byteOffset + b * 64, 64),
  effect: { kind: 'lft', guid: GUID, block: b },
});
const entries = (p: Programmed) => {
  const st = p.lfts.get(GUID)!;
  return Array.from({ length: BLOCKS * 64 }, (_, i) => (i < st.table.length ? st.table[i] : 0xff));
};

describe('the LFT shadow', () => {
  it('borrows the routing table: blocks acknowledged from it are known at no copy', () => {
    const p = new Programmed();
    const t1 = table((lid) => 1 + (lid % 4));
    const st = p.lftShadowOver(GUID, BLOCKS, t1);
    expect(st.table).toBe(t1);
    expect(Array.from(st.known)).toEqual([0, 0, 0]);
    p.record(write(t1, 0));
    p.record(write(t1, 1));
    // the last block as the planner cuts it: the table's entries, then 255
    const last = Uint8Array.from({ length: 64 }, (_, i) => (128 + i < t1.length ? t1[128 + i]! : 0xff));
    p.record(write(t1, 2, last));
    expect(st.table).toBe(t1);
    expect(st.borrowed).toBe(true);
    expect(Array.from(st.known)).toEqual([1, 1, 1]);
  });

  it('moves to a new routing table: the blocks that differ are unknown, the rest stay known', () => {
    const p = new Programmed();
    const t1 = table((lid) => 1 + (lid % 4));
    p.lftShadowOver(GUID, BLOCKS, t1);
    for (let b = 0; b < BLOCKS - 1; b++) p.record(write(t1, b));
    const t2 = t1.slice();
    t2[70] = 9; // block 1 differs
    const st = p.lftShadowOver(GUID, BLOCKS, t2);
    expect(st.table).toBe(t2);
    expect(Array.from(st.known)).toEqual([1, 0, 0]);
    expect(t1[70]).toBe(1 + (70 % 4)); // the old table is not written
  });

  it('copies before holding a block unlike the borrowed table (acknowledged from another, or read back)', () => {
    const p = new Programmed();
    const t1 = table(() => 1);
    p.lftShadowOver(GUID, BLOCKS, t1);
    p.record(write(t1, 0));
    const other = new Uint8Array(64).fill(7);
    p.record(write(t1, 1, other));
    const st = p.lfts.get(GUID)!;
    expect(st.borrowed).toBe(false);
    expect(st.table).not.toBe(t1);
    expect(Array.from(t1.subarray(64, 128))).toEqual(new Array(64).fill(1)); // the routing table untouched
    expect(entries(p).slice(0, 128)).toEqual([...new Array(64).fill(1), ...new Array(64).fill(7)]);
    expect(Array.from(st.known)).toEqual([1, 1, 0]);

    const q = new Programmed();
    q.lftShadowOver(GUID, BLOCKS, t1);
    q.learnLft(GUID, 2, BLOCKS, new Uint8Array(64).fill(5));
    expect(q.lfts.get(GUID)!.borrowed).toBe(false);
    expect(Array.from(t1.subarray(128))).toEqual(new Array(t1.length - 128).fill(1));
    expect(entries(q).slice(128)).toEqual(new Array(64).fill(5));
  });
});

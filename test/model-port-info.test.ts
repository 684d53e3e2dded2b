/** The PortInfo a sweep keeps (model/port-info.ts): every field reads as `PortInfo.decode` reads it
 * from the same bytes, a spread through portInfoValue is the decoded value, the copy does not alias
 * the SMP it came from, and assignments write the field's bits. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { PortInfo } from '../src/wire/sma.js';
import { DecodeError } from '../src/wire/errors.js';
import { keepPortInfo, portInfoValue, rekeepPortInfo } from '../src/model/port-info.js';

const bytes64 = fc.uint8Array({ minLength: 64, maxLength: 64 });

describe('kept PortInfo', () => {
  it('reads every field as PortInfo.decode does, and spreads through portInfoValue to the decoded value', () => {
    fc.assert(
      fc.property(bytes64, (b) => {
        const want = PortInfo.decode(b);
        const kept = keepPortInfo(b);
        for (const k of Object.keys(want) as (keyof PortInfo)[]) expect(kept[k], k).toEqual(want[k]);
        expect({ ...portInfoValue(kept) }).toEqual(want);
        // a plain value is passed through as it is
        expect(portInfoValue(want)).toBe(want);
      }),
      { numRuns: 200, seed: 16 },
    );
  });

  it('copies the bytes (a later change to the SMP buffer does not show) and takes a longer data area', () => {
    const smp = new Uint8Array(200);
    smp.set(PortInfo.encode({ lid: 0x1234, portState: 4, lmc: 2 }));
    const kept = keepPortInfo(smp);
    smp.fill(0);
    expect([kept.lid, kept.portState, kept.lmc]).toEqual([0x1234, 4, 2]);
  });

  it('many kept PortInfos hold their own values (chunks of the arena do not overlap)', () => {
    const kept = Array.from({ length: 1000 }, (_, i) => keepPortInfo(PortInfo.encode({ lid: i + 1, masterSmLid: 1000 - i })));
    kept.forEach((pi, i) => expect([pi.lid, pi.masterSmLid]).toEqual([i + 1, 1000 - i]));
  });

  it('an assignment writes the field (as a planner or a test adjusting a discovered port does)', () => {
    const kept = keepPortInfo(PortInfo.encode({ operationalVls: 1, lid: 9 }));
    kept.operationalVls = 3;
    expect(kept.operationalVls).toBe(3);
    expect(kept.lid).toBe(9);
    expect(PortInfo.decode(PortInfo.encode(portInfoValue(kept))).operationalVls).toBe(3);
  });

  it('kept again over a kept one: the same object reads the answer, its neighbours in the arena untouched', () => {
    const a = keepPortInfo(PortInfo.encode({ lid: 1, portState: 2 }));
    const b = keepPortInfo(PortInfo.encode({ lid: 2, portState: 2 }));
    const smp = new Uint8Array(200);
    smp.set(PortInfo.encode({ lid: 1, portState: 4 }));
    expect(rekeepPortInfo(a, smp)).toBe(a);
    expect(a.portState).toBe(4);
    expect({ ...portInfoValue(a) }).toEqual(PortInfo.decode(smp));
    smp[0] = 0xff; // still a copy of the SMP's bytes
    expect(a.lid).toBe(1);
    expect(b.lid).toBe(2);
    expect(b.portState).toBe(2);
    // a plain value, or none, is kept anew
    const plain = PortInfo.decode(PortInfo.encode({ lid: 3 }));
    const kept = rekeepPortInfo(plain, PortInfo.encode({ lid: 3, portState: 4 }));
    expect(kept).not.toBe(plain);
    expect(kept.portState).toBe(4);
    expect(rekeepPortInfo(undefined, PortInfo.encode({ lid: 5 })).lid).toBe(5);
    expect(() => rekeepPortInfo(a, new Uint8Array(63))).toThrow(DecodeError);
  });

  it('a data area shorter than a PortInfo is a DecodeError, as for PortInfo.decode', () => {
    expect(() => keepPortInfo(new Uint8Array(63))).toThrow(DecodeError);
    expect(() => PortInfo.decode(new Uint8Array(63))).toThrow(DecodeError);
  });
});

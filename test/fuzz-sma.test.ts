/**
 * Property and fuzz tests for every SMA attribute layout, the Notice and the trap details:
 * random valid values round-trip; random bytes re-encode to themselves with reserved bits cleared;
 * random, short and mutated inputs produce a value or a DecodeError, never anything else.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readBits, writeBits, type AnyLayout } from '../src/wire/layout.js';
import { DecodeError } from '../src/wire/errors.js';
import { arbValue } from './helpers/arb.js';
import { SMA_ATTRIBUTES, VLArbitrationEntry, RandomForwardingEntry } from '../src/wire/sma.js';
import { Notice, NoticeSmp, TRAP_DETAILS, decodeNotice } from '../src/wire/notice.js';

const LAYOUTS: AnyLayout[] = [...new Set([...Object.values(SMA_ATTRIBUTES), ...Object.values(TRAP_DETAILS), Notice, NoticeSmp, VLArbitrationEntry, RandomForwardingEntry])];
const RUNS = { numRuns: 150 };


/** Bit positions of reserved fields (recursively), relative to the layout start. */
function reservedBits(l: AnyLayout, base = 0, out: [number, number][] = []): [number, number][] {
  for (const f of Object.values(l.fields)) {
    if (f.kind === 'reserved') out.push([base + f.bit, f.width]);
    else if (f.kind === 'struct') reservedBits(f.layout, base + f.bit, out);
    else if (f.kind === 'array' && f.elem.kind === 'struct') {
      for (let i = 0; i < f.count; i++) reservedBits(f.elem.layout, base + f.elem.bit + i * f.stride, out);
    }
  }
  return out;
}

function decodeOrDecodeError(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DecodeError);
  }
}

describe.each(LAYOUTS.map((l) => [l.name + '/' + l.byteLength, l] as const))('%s', (_name, layout) => {
  it('round-trips random valid values', () => {
    fc.assert(
      fc.property(arbValue(layout), fc.integer({ min: 0, max: 16 }), (v, off) => {
        const buf = new Uint8Array(off + layout.byteLength + 3).fill(0xa5);
        layout.encode(v, buf, off);
        expect(layout.decode(buf, off)).toEqual(v);
        expect(buf.subarray(0, off).every((b) => b === 0xa5)).toBe(true);
        expect(buf.subarray(off + layout.byteLength).every((b) => b === 0xa5)).toBe(true);
      }),
      RUNS,
    );
  });
  it('re-encodes random bytes to the same bytes with reserved bits cleared', () => {
    const hasString = Object.values(layout.fields).some((f) => f.kind === 'string');
    fc.assert(
      // strings: ASCII bytes only (invalid UTF-8 is covered by the known-issue test below)
      fc.property(fc.uint8Array({ minLength: layout.byteLength, maxLength: layout.byteLength, max: hasString ? 0x7f : 0xff }), (raw) => {
        const expected = Uint8Array.from(raw);
        for (const [bit, width] of reservedBits(layout)) for (let b = bit; b < bit + width; b++) writeBits(expected, b, 1, 0);
        const again = layout.encode(layout.decode(raw));
        if (!hasString) expect(Buffer.from(again).toString('hex')).toBe(Buffer.from(expected).toString('hex'));
        else expect(layout.decode(again)).toEqual(layout.decode(raw)); // bytes after a NUL are dropped
        // reserved bits are never read into the value
        for (const [bit, width] of reservedBits(layout)) for (let b = bit; b < bit + width; b++) expect(readBits(again, b, 1)).toBe(0);
      }),
      RUNS,
    );
  });
  it('decodes random, short and misplaced input to a value or a DecodeError only', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: layout.byteLength * 2 }), fc.integer({ min: -4, max: layout.byteLength * 2 }), (raw, off) => {
        decodeOrDecodeError(() => layout.decode(raw, off));
      }),
      RUNS,
    );
    expect(() => layout.decode(new Uint8Array(layout.byteLength - 1))).toThrow(DecodeError);
    expect(() => layout.decode(new Uint8Array(layout.byteLength), 1)).toThrow(DecodeError);
    expect(() => layout.decode(new Uint8Array(layout.byteLength), 0.5)).toThrow(DecodeError);
    expect(() => layout.decode(null as unknown as Uint8Array)).toThrow(DecodeError);
  });
});

describe('decodeNotice fuzz', () => {
  it('returns a notice or throws DecodeError for random and mutated input', () => {
    const generic = fc.tuple(fc.constantFrom(...Object.keys(TRAP_DETAILS).map(Number), 1, 300), fc.uint8Array({ minLength: 80, maxLength: 80 })).map(([trap, b]) => {
      b[0] = b[0]! | 0x80; // IsGeneric
      b[4] = trap >> 8;
      b[5] = trap & 0xff;
      return b;
    });
    fc.assert(
      fc.property(
        fc.oneof(generic, fc.uint8Array({ maxLength: 100 })),
        fc.integer({ min: -2, max: 30 }),
        fc.constantFrom('smp' as const, 'full' as const),
        (raw, off, form) => {
          decodeOrDecodeError(() => {
            const d = decodeNotice(raw, off, form);
            if (d.notice.isGeneric && TRAP_DETAILS[d.notice.trapNumber]) expect(d.details?.trap).toBe(d.notice.trapNumber);
            else expect(d.details).toBeNull();
          });
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('known issue (src/wire/layout.ts string fields)', () => {
  // A NodeDescription that is not valid UTF-8 (Latin-1 from some vendors, or a multi-byte character
  // cut at byte 64) decodes with U+FFFD replacements (3 bytes each), and the value then no longer
  // fits 64 bytes: re-encoding it (e.g. into an SA NodeRecord) throws EncodeError. Flip to `it`
  // once layout.ts truncates at a character boundary or decodes such bytes losslessly.
  it('re-encodes a decoded NodeDescription holding invalid UTF-8, cut at a character boundary', async () => {
    const { NodeDescription } = await import('../src/wire/sma.js');
    const raw = new Uint8Array(64).fill(0xe9); // 'é' in Latin-1: each byte decodes to U+FFFD (3 bytes)
    const out = NodeDescription.encode(NodeDescription.decode(raw));
    expect(out.length).toBe(64);
    // 21 whole replacement characters fit in 64 bytes; the 64th byte is padding.
    expect(Array.from(out.subarray(0, 3))).toEqual([0xef, 0xbf, 0xbd]);
    expect(out[63]).toBe(0);
    expect(NodeDescription.decode(out).description).toBe('\ufffd'.repeat(21));
  });
});

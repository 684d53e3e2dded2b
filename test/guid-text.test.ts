/** util/guid: the one parser of 64-bit numbers (command line, config files, partitions.conf, ibsm
 * query), of OpenSM's hex GUID files and of integers as on a command line, against hand-chosen
 * values at the edges of each rule. */
import { describe, expect, it } from 'vitest';
import { formatGuid, parseHexGuid, parseU64, parseUintText } from '../src/util/guid.js';

describe('64-bit numbers and GUIDs as text', () => {
  it('parseU64: 0x and 1 to 16 hex digits, or decimal below 2^64', () => {
    expect(parseU64('0x0002c90300a1b2c3')).toBe(0x0002c90300a1b2c3n);
    expect(parseU64('0XFF')).toBe(255n);
    expect(parseU64('18446744073709551615')).toBe((1n << 64n) - 1n);
    expect(parseU64('18446744073709551616')).toBeUndefined(); // 2^64
    expect(parseU64('0xffffffffffffffff')).toBe((1n << 64n) - 1n);
    expect(parseU64('0x10000000000000000')).toBeUndefined(); // 17 digits
    for (const bad of ['', '0x', 'ff', '-1', '1e3', ' 1', '0x1g', '1.0']) expect(parseU64(bad), bad).toBeUndefined();
    expect(parseU64(formatGuid(0x1234n))).toBe(0x1234n);
  });
  it("parseHexGuid: OpenSM's GUID files, hex with 0x optional", () => {
    expect(parseHexGuid('0002c90300a1b2c3')).toBe(0x0002c90300a1b2c3n);
    expect(parseHexGuid('0x0002c90300a1b2c3')).toBe(0x0002c90300a1b2c3n);
    expect(parseHexGuid('0X1f')).toBe(31n);
    expect(parseHexGuid('10')).toBe(16n); // hex, not decimal
    for (const bad of ['', '0x', '12345678901234567', 'xyz', '0x-1']) expect(parseHexGuid(bad), bad).toBeUndefined();
  });
  it('parseUintText: 0x hex or decimal; NaN otherwise', () => {
    expect(parseUintText('0x10')).toBe(16);
    expect(parseUintText('10')).toBe(10);
    expect(parseUintText('010')).toBe(10); // decimal, not C octal
    for (const bad of ['', '-1', '1.5', '0x', 'ten']) expect(parseUintText(bad), bad).toBeNaN();
  });
});

/** The lexical level of ibsim's topology files (model/netfile.ts): lines, C number parsing as
 * ibsim's strtoul/atoi do it, and ibsim's bit encodings of widths and speeds. */
import { GUID_MASK } from '../util/guid.js';

const W_1X = 1, W_4X = 2, W_8X = 4, W_12X = 8, W_2X = 16;
export const S_SDR = 1, S_DDR = 2, S_QDR = 4;
const E_FDR = 1, E_EDR = 2, E_HDR = 4, E_NDR = 8;
export const DEFAULT_WIDTH = W_4X;
export const DEFAULT_SPEED = S_SDR;
export const MAX_INCLUDE_DEPTH = 8;
export const NODE_DESC_BYTES = 63;

export interface Line {
  text: string;
  no: number;
}

export class LineReader {
  private i = 0;
  private readonly lines: string[];
  constructor(
    text: string,
    readonly file: string,
  ) {
    this.lines = text.split('\n');
    if (this.lines.length > 0 && this.lines[this.lines.length - 1] === '') this.lines.pop();
  }
  next(): Line | undefined {
    if (this.i >= this.lines.length) return undefined;
    const raw = this.lines[this.i++]!;
    return { text: raw.endsWith('\r') ? raw.slice(0, -1) : raw, no: this.i };
  }
}

/** C strtoul/strtoull with base 0 (0x hex, leading-0 octal, decimal); `value` 0 when no digits. */
export function cStrToBig(s: string): { value: bigint; digits: boolean } {
  let i = 0;
  while (i < s.length && /\s/.test(s[i]!)) i++;
  let neg = false;
  if (s[i] === '+' || s[i] === '-') {
    neg = s[i] === '-';
    i++;
  }
  let base = 10;
  if (s[i] === '0' && (s[i + 1] === 'x' || s[i + 1] === 'X') && /[0-9a-fA-F]/.test(s[i + 2] ?? '')) {
    base = 16;
    i += 2;
  } else if (s[i] === '0') base = 8;
  let v = 0n;
  let digits = false;
  for (; i < s.length; i++) {
    const d = parseInt(s[i]!, base);
    if (Number.isNaN(d)) break;
    v = (v * BigInt(base) + BigInt(d)) & GUID_MASK;
    digits = true;
  }
  return { value: neg ? -v & GUID_MASK : v, digits };
}

export function cNum(s: string): number {
  const v = cStrToBig(s).value;
  return v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
}

/** C atoi: optional blanks and sign, decimal digits. */
export function cAtoi(s: string): number {
  const m = /^\s*([+-]?\d+)/.exec(s);
  return m ? parseInt(m[1]!, 10) : 0;
}

export function truncateUtf8(s: string, maxBytes: number): string {
  if (Buffer.byteLength(s, 'utf8') <= maxBytes) return s;
  let out = '';
  let n = 0;
  for (const ch of s) {
    const b = Buffer.byteLength(ch, 'utf8');
    if (n + b > maxBytes) break;
    out += ch;
    n += b;
  }
  return out;
}

export function highestBit(mask: number, order: Array<[number, string]>): string | undefined {
  for (const [bit, name] of order) if (mask & bit) return name;
  return undefined;
}
export const WIDTH_ORDER: Array<[number, string]> = [[W_12X, '12x'], [W_8X, '8x'], [W_4X, '4x'], [W_2X, '2x'], [W_1X, '1x']];
export const SPEED_ORDER: Array<[number, string]> = [[S_QDR, 'QDR'], [S_DDR, 'DDR'], [S_SDR, 'SDR']];
export const EXT_ORDER: Array<[number, string]> = [[E_NDR, 'NDR'], [E_HDR, 'HDR'], [E_EDR, 'EDR'], [E_FDR, 'FDR']];

/** What ibsim enables for a rate printed by ibnetdiscover (e.g. "4x" + "QDR"). */
export const WIDTH_TEXT: Record<string, number> = { '12': W_1X | W_4X | W_12X, '8': W_8X, '4': W_1X | W_4X, '1': W_1X, '2': W_2X };
export const SPEED_TEXT: Array<[string, { speed: number; ext?: number; ext2?: number }]> = [
  ['SDR', { speed: S_SDR }],
  ['DDR', { speed: S_SDR | S_DDR }],
  ['QDR', { speed: S_SDR | S_DDR | S_QDR }],
  ['FDR', { speed: S_SDR | S_DDR | S_QDR, ext: E_FDR }],
  ['EDR', { speed: S_SDR | S_DDR | S_QDR, ext: E_FDR | E_EDR }],
  ['HDR', { speed: S_SDR | S_DDR | S_QDR, ext: E_FDR | E_EDR | E_HDR }],
  ['NDR', { speed: S_SDR | S_DDR | S_QDR, ext: E_FDR | E_EDR | E_HDR | E_NDR }],
  ['XDR', { speed: S_SDR | S_DDR | S_QDR, ext: E_FDR | E_EDR | E_HDR | E_NDR, ext2: 1 }],
  ['FDR10', { speed: S_SDR | S_DDR | S_QDR }],
];

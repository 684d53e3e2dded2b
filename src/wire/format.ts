/** Formatting of field values for the smpquery/saquery-style dumps. */
import type { FieldSpec } from './fields.js';

export function formatHex(v: number | bigint, width: number): string {
  return '0x' + v.toString(16).padStart(Math.ceil(width / 4), '0');
}

/** Format a 128-bit GID the way the diags do: prefix and GUID as IPv6-style groups. */
export function formatGid(v: bigint): string {
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16).padStart(4, '0'));
  return groups.join(':');
}

/** Parse an IPv6-text GID (as inet_pton(AF_INET6)); undefined when malformed. */
export function parseGidText(text: string): bigint | undefined {
  const t = text.trim();
  if (!/^[0-9a-fA-F:]+$/.test(t) || (t.match(/::/g) ?? []).length > 1) return undefined;
  const [head, tail] = t.includes('::') ? t.split('::') : [t, undefined];
  const part = (s: string | undefined): string[] => (s ? s.split(':') : []);
  const h = part(head);
  const tl = part(tail);
  if ([...h, ...tl].some((g) => g.length === 0 || g.length > 4)) return undefined;
  const fill = tail === undefined ? 0 : 8 - h.length - tl.length;
  if (fill < (tail === undefined ? 0 : 1) || h.length + tl.length + fill !== 8) return undefined;
  let v = 0n;
  for (const g of [...h, ...Array<string>(fill).fill('0'), ...tl]) v = (v << 16n) | BigInt(parseInt(g, 16));
  return v;
}

export function formatValue(f: FieldSpec, v: unknown): string {
  switch (f.kind) {
    case 'uint': {
      const n = v as number;
      const named = f.names?.[n];
      if (named !== undefined) return named;
      return f.radix === 'hex' ? formatHex(n, f.width) : String(n);
    }
    case 'u64':
      return formatHex(v as bigint, f.width);
    case 'gid':
      return formatGid(v as bigint);
    case 'bytes':
      return Array.from(v as Uint8Array, (x) => x.toString(16).padStart(2, '0')).join('');
    case 'string':
      return v as string;
    case 'array':
      return (v as unknown[]).map((e) => (f.elem.kind === 'struct' ? JSON.stringify(e, bigintJson) : formatValue(f.elem, e))).join(' ');
    case 'struct':
    case 'reserved':
      return '';
  }
}

function bigintJson(_k: string, v: unknown): unknown {
  return typeof v === 'bigint' ? formatHex(v, 64) : v;
}

/** The dotted-label line the diags print: "Label:" padded with dots to column 33. */
export function dumpLine(label: string, value: string, indent = ''): string {
  const head = `${label}:`;
  return `${indent}${head}${'.'.repeat(Math.max(1, 33 - head.length))}${value}`;
}

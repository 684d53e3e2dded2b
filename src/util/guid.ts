/** The one text form of a 64-bit GUID (and of other 64-bit identifiers: SM_Key, M_Key): 16
 * lower-case hex digits, zero-padded, as OpenSM and the diags print them. */

/** The low 64 bits of a 128-bit GID: its GUID (interface ID). */
export const GUID_MASK = (1n << 64n) - 1n;

/** `0x0002c90300a1b2c3`. */
export function formatGuid(g: bigint): string {
  return '0x' + guidHex(g);
}

/** `0002c90300a1b2c3` (no prefix: ibnetdiscover's `S-`/`H-` names, file names, element ids). */
export function guidHex(g: bigint): string {
  return g.toString(16).padStart(16, '0');
}

/** A 64-bit number as an operator writes it on a command line, in a config file or in
 * partitions.conf: 0x and 1 to 16 hex digits, or decimal below 2^64; undefined otherwise. */
export function parseU64(text: string): bigint | undefined {
  if (!/^(0x[0-9a-f]{1,16}|\d+)$/i.test(text)) return undefined;
  const v = BigInt(text);
  return v <= GUID_MASK ? v : undefined;
}

/** A GUID as OpenSM's GUID files and prefix-routes.conf hold it (read with strtoull, base 16):
 * 1 to 16 hex digits, 0x optional; undefined otherwise. */
export function parseHexGuid(text: string): bigint | undefined {
  if (!/^(0x)?[0-9a-f]{1,16}$/i.test(text)) return undefined;
  return BigInt(/^0x/i.test(text) ? text : `0x${text}`);
}

/** A non-negative integer as on a command line: 0x hex or decimal; NaN otherwise (the caller
 * checks its range). */
export function parseUintText(text: string): number {
  return /^0x[0-9a-f]+$/i.test(text) ? parseInt(text, 16) : /^\d+$/.test(text) ? Number(text) : NaN;
}

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

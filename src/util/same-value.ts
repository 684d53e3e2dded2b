/** Value equality of plain data (numbers, strings, bigints, arrays, objects in the same key
 * order), as JSON with bigints written apart from numbers: what a reload compares settings by. */
export function sameValue(a: unknown, b: unknown): boolean {
  const j = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x)) ?? 'undefined';
  return j(a) === j(b);
}

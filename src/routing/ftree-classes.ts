/**
 * ftree's switch classes: switches that see the same links toward a destination get the same
 * candidate ports, so ftree computes them once per class and destination (at 46,080 end ports:
 * 72 classes below the top instead of 2,880 switches, 48 down-link classes).
 */
import { csr } from './graph.js';

/** Numbers (< 2^32) as a string key, two UTF-16 units each. */
function chars(xs: readonly number[]): string {
  let out = '';
  for (let i = 0; i < xs.length; i += 4096) {
    const part: number[] = [];
    for (const x of xs.slice(i, i + 4096)) part.push(x & 0xffff, x >>> 16);
    out += String.fromCharCode(...part);
  }
  return out;
}

/** Switches by their down links (switch and port, in order): a class id per switch. */
export function downClasses(nSw: number, downStart: Int32Array, downList: Int32Array, adjSw: Int32Array, adjPort: Int32Array): Int32Array {
  const out = new Int32Array(nSw);
  const byKey = new Map<string, number>();
  const xs: number[] = [];
  for (let s = 0; s < nSw; s++) {
    xs.length = 0;
    for (let j = downStart[s]!; j < downStart[s + 1]!; j++) xs.push(adjSw[downList[j]!]!, adjPort[downList[j]!]!);
    const key = chars(xs);
    let c = byKey.get(key);
    if (c === undefined) byKey.set(key, (c = byKey.size));
    out[s] = c;
  }
  return out;
}

/** Switches grouped by their up links (switch and port, in order) and their parents (the switches
 *  with down links to them): toward any destination switch T, the members of a class that are not
 *  T or its ancestors are all in T's up/down part or all outside it, with the same candidates
 *  (prepare computes them once per class). Classes by level, top first; a switch without parents
 *  (a top switch) is in none, as it is never below another. */
export interface SwitchClasses {
  order: Int32Array;
  parStart: Int32Array;
  parList: Int32Array;
  memStart: Int32Array;
  memList: Int32Array;
  /** Per class: the version of its last candidate list and that list's ports (`width` per class). */
  ver: Int32Array;
  pat: Uint8Array;
  patN: Int32Array;
  width: number;
  versions: number;
}

export function switchClasses(nSw: number, level: Int32Array, upStart: Int32Array, upSw: Int32Array, upPort: Uint8Array, downStart: Int32Array, downSw: Int32Array): SwitchClasses {
  const parents: number[][] = Array.from({ length: nSw }, () => []);
  for (let x = 0; x < nSw; x++) for (let j = downStart[x]!; j < downStart[x + 1]!; j++) parents[downSw[j]!]!.push(x);
  const byKey = new Map<string, number>();
  const members: number[][] = [];
  const parentsOf: number[][] = [];
  const levelOf: number[] = [];
  let width = 1;
  for (let s = 0; s < nSw; s++) {
    const p = parents[s]!;
    if (p.length === 0) continue;
    p.sort((a, b) => a - b);
    const ups: number[] = [];
    for (let j = upStart[s]!; j < upStart[s + 1]!; j++) ups.push(upSw[j]!, upPort[j]!);
    width = Math.max(width, upStart[s + 1]! - upStart[s]!);
    const key = `${chars(ups)}/${chars(p)}`;
    let c = byKey.get(key);
    if (c === undefined) {
      c = members.length;
      byKey.set(key, c);
      members.push([]);
      parentsOf.push([...new Set(p)]);
      levelOf.push(level[s]!);
    }
    members[c]!.push(s);
  }
  const n = members.length;
  const order = Int32Array.from({ length: n }, (_, c) => c).sort((a, b) => levelOf[b]! - levelOf[a]! || a - b);
  const par = csr(parentsOf);
  const mem = csr(members);
  return { order, parStart: par.start, parList: par.list, memStart: mem.start, memList: mem.list, ver: new Int32Array(n), pat: new Uint8Array(n * width), patN: new Int32Array(n).fill(-1), width, versions: 0 };
}

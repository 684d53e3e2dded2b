/** The SA's per-requester queues (util/fair-queues.ts): round-robin order, the bound, the longest
 * queue giving way, and the empty queues dropped past the kept number. */
import { describe, expect, it } from 'vitest';
import { FairQueues } from '../src/util/fair-queues.js';

function drain<K, T>(f: FairQueues<K, T>): T[] {
  const out: T[] = [];
  for (let x = f.shift(); x !== undefined; x = f.shift()) out.push(x);
  return out;
}

describe('FairQueues', () => {
  it('gives one item per key per turn, in the order the keys arrived', () => {
    const f = new FairQueues<number, string>(100);
    for (const s of ['a1', 'a2', 'a3']) f.push(1, s);
    f.push(2, 'b1');
    f.push(3, 'c1');
    f.push(2, 'b2');
    expect(f.size).toBe(6);
    expect(drain(f)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(f.size).toBe(0);
    expect(f.shift()).toBeUndefined();
  });

  it('when full, the longest queue gives way to a shorter one; an item as long as the rest is refused', () => {
    const f = new FairQueues<number, string>(4);
    for (let i = 1; i <= 4; i++) expect(f.push(1, `a${i}`)).toBeUndefined();
    // Full: key 2 (empty) takes the place of key 1's newest.
    expect(f.push(2, 'b1')).toBe('a4');
    expect(f.size).toBe(4);
    // Key 1 (3 waiting) is longer than key 2's 1 + 1: it gives way again.
    expect(f.push(2, 'b2')).toBe('a3');
    // Now 2 and 2: key 2 is refused its own item, and so is key 1.
    expect(f.push(2, 'b3')).toBe('b3');
    expect(f.push(1, 'a5')).toBe('a5');
    expect(drain(f)).toEqual(['a1', 'b1', 'a2', 'b2']);
  });

  it('keeps empty queues up to the kept number and drops them all when a new key passes it', () => {
    const f = new FairQueues<number, number>(10, 3);
    for (const k of [1, 2, 3]) f.push(k, k);
    expect(drain(f)).toEqual([1, 2, 3]);
    f.push(4, 4); // three empty queues kept: dropped, then key 4 added
    f.push(1, 1); // key 1 comes back as a new queue after key 4
    expect(drain(f)).toEqual([4, 1]);
  });

  it('refuses a key its own item at once beyond perKey, leaving the others room', () => {
    const f = new FairQueues<number, string>(100, undefined, 2);
    expect(f.push(1, 'a1')).toBeUndefined();
    expect(f.push(1, 'a2')).toBeUndefined();
    expect(f.push(1, 'a3')).toBe('a3');
    expect(f.push(2, 'b1')).toBeUndefined();
    expect(f.size).toBe(3);
    expect(drain(f)).toEqual(['a1', 'b1', 'a2']);
    // drained: key 1 has room again
    expect(f.push(1, 'a4')).toBeUndefined();
  });

  it('setMax changes the bound of all keys together', () => {
    const f = new FairQueues<number, number>(2);
    f.push(1, 1);
    f.push(2, 2);
    expect(f.push(3, 3)).toBe(3);
    f.setMax(3);
    expect(f.push(3, 3)).toBeUndefined();
    expect(drain(f)).toEqual([1, 2, 3]);
  });

  it('clear empties everything', () => {
    const f = new FairQueues<number, number>(10);
    f.push(1, 1);
    f.push(2, 2);
    f.clear();
    expect(f.size).toBe(0);
    expect(f.shift()).toBeUndefined();
    f.push(3, 3);
    expect(drain(f)).toEqual([3]);
  });
});

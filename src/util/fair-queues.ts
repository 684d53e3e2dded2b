/** Bounded queues, one per key (the SA's requester LIDs), drained round-robin: each key with
 * items gives one per turn, so a flood from one key delays another key's item by one turn, not by
 * the flood. One key holds at most `perKey` (beyond, its own item is refused at once); together
 * they hold at most `max` (which may change: `setMax`), and when full the longest queue gives way
 * to a shorter one. Pure: no I/O, no time. */
import { Fifo } from './fifo.js';

interface KeyQueue<T> {
  readonly q: Fifo<T>;
  inRing: boolean;
}

/** Empty per-key queues kept before they are dropped (all at once, when a new key arrives). */
export const QUEUES_KEPT = 1024;

export class FairQueues<K, T> {
  /** Each key's queue, kept while empty (a Map entry removed and added back per burst reallocates
   * the table of a long-lived Map in the old space: issue #29's flood profile); the empty ones are
   * dropped once there are more than `kept`. */
  private readonly queues = new Map<K, KeyQueue<T>>();
  /** The queues with items, in round-robin order. */
  private readonly ring = new Fifo<KeyQueue<T>>();
  private count = 0;

  constructor(
    private max: number,
    private readonly kept = QUEUES_KEPT,
    private readonly perKey = Infinity,
  ) {}

  /** A new bound for all keys together (items already queued beyond it stay and drain). */
  setMax(max: number): void {
    this.max = max;
  }

  /** Items waiting, all keys together. */
  get size(): number {
    return this.count;
  }

  /** Queue `item` under `key`. What is refused, if anything: `item` itself when all is full and no
   * queue is longer than this key's + 1, else the newest item of the longest queue, which gave way. */
  push(key: K, item: T): T | undefined {
    let e = this.queues.get(key);
    if (e && e.q.size >= this.perKey) return item;
    let refused: T | undefined;
    if (this.count >= this.max) {
      refused = this.giveWay(e?.q.size ?? 0);
      if (refused === undefined) return item;
    }
    if (!e) {
      if (this.queues.size >= this.kept) for (const [k, x] of this.queues) if (!x.q.size) this.queues.delete(k);
      this.queues.set(key, (e = { q: new Fifo(), inRing: false }));
    }
    e.q.push(item);
    if (!e.inRing) {
      e.inRing = true;
      this.ring.push(e);
    }
    this.count++;
    return refused;
  }

  /** The next item in round-robin order. */
  shift(): T | undefined {
    const e = this.ring.shift();
    if (!e) return undefined;
    const item = e.q.shift()!;
    this.count--;
    if (e.q.size) this.ring.push(e);
    else e.inRing = false;
    return item;
  }

  clear(): void {
    this.queues.clear();
    this.ring.clear();
    this.count = 0;
  }

  /** Take the newest item of the longest queue if it is longer than `than` + 1. */
  private giveWay(than: number): T | undefined {
    let longest: Fifo<T> | undefined;
    this.ring.forEach((e) => {
      if (!longest || e.q.size > longest.size) longest = e.q;
    });
    if (!longest || longest.size <= than + 1) return undefined;
    this.count--;
    return longest.pop();
  }
}

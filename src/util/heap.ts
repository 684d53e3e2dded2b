/** A binary min-heap ordered by a comparator (used for timer queues). */
export class Heap<T> {
  private readonly a: T[] = [];
  constructor(private readonly less: (x: T, y: T) => boolean) {}
  get size(): number {
    return this.a.length;
  }
  peek(): T | undefined {
    return this.a[0];
  }
  push(v: T): void {
    const a = this.a;
    let i = a.length;
    a.push(v);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pv = a[p]!;
      if (!this.less(v, pv)) break;
      a[i] = pv;
      i = p;
    }
    a[i] = v;
  }
  pop(): T | undefined {
    const a = this.a;
    const n = a.length;
    if (n === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (n > 1) {
      const m = n - 1;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= m) break;
        const r = l + 1;
        const c = r < m && this.less(a[r]!, a[l]!) ? r : l;
        if (!this.less(a[c]!, last)) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
  clear(): void {
    this.a.length = 0;
  }
}

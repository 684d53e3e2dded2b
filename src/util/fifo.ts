/** A FIFO with O(1) shift (and pop of the newest). */
export class Fifo<T> {
  private a: (T | undefined)[] = [];
  private h = 0;
  get size(): number {
    return this.a.length - this.h;
  }
  push(v: T): void {
    this.a.push(v);
  }
  shift(): T | undefined {
    if (this.h >= this.a.length) return undefined;
    const v = this.a[this.h];
    this.a[this.h++] = undefined;
    if (this.h === this.a.length) {
      // Empty: start over in the same array (an idle queue keeps no slots of its last burst).
      this.a.length = 0;
      this.h = 0;
    } else if (this.h > 1024 && this.h * 2 > this.a.length) {
      this.a = this.a.slice(this.h);
      this.h = 0;
    }
    return v;
  }
  /** Take the newest (the last pushed) out. */
  pop(): T | undefined {
    if (this.h >= this.a.length) return undefined;
    return this.a.pop();
  }
  /** Call `fn` on each item, oldest first. */
  forEach(fn: (v: T) => void): void {
    for (let i = this.h; i < this.a.length; i++) fn(this.a[i] as T);
  }
  /** Drop everything. */
  clear(): void {
    this.a = [];
    this.h = 0;
  }
  drain(): T[] {
    const out = this.a.slice(this.h) as T[];
    this.a = [];
    this.h = 0;
    return out;
  }
}

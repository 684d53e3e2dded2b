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
    if (this.h > 1024 && this.h * 2 > this.a.length) {
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

/** A file written in the background with the latest value saved, atomically (FILE.tmp-PID renamed
 * over FILE, as OpenSM's fsync_high_avail_files). `save` only takes the value; saves that come
 * while a write is on its way are coalesced: the latest wins, the ones between are never written.
 * A write that fails is counted and handed to `onFailure` (the caller logs it); the next save tries
 * again. The guid2lid file (api/guid2lid-file.ts) and the health state file
 * (api/health-store-file.ts) are written so. */
import { rename, writeFile } from 'node:fs/promises';

export class LatestFile<T> {
  /** Files written. */
  written = 0;
  /** Writes that failed. */
  failures = 0;
  /** The value to write next (the latest saved), if any. */
  private next?: T;
  /** The writer, while it runs. */
  private running?: Promise<void>;

  constructor(
    readonly path: string,
    /** The file's text for a value, taken when it is written. */
    private readonly format: (value: T) => string,
    private readonly onFailure: (error: string, failures: number) => void,
  ) {}

  save(value: T): void {
    this.next = value;
    this.running ??= this.drain();
  }

  /** Resolves once every value saved so far is written (or its write failed). */
  flush(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    try {
      while (this.next !== undefined) {
        const value = this.next;
        this.next = undefined;
        const tmp = `${this.path}.tmp-${process.pid}`;
        try {
          await writeFile(tmp, this.format(value));
          await rename(tmp, this.path);
          this.written++;
        } catch (e) {
          this.failures++;
          this.onFailure((e as Error).message, this.failures);
        }
      }
    } finally {
      this.running = undefined;
    }
  }
}

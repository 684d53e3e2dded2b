/** The guid2lid file as the sweep's store (sm/lids.ts Guid2LidStore), off the sweep's path: `save`
 * only takes the map; the file is written in the background, atomically (FILE.tmp-PID renamed
 * over FILE, as OpenSM's fsync_high_avail_files), in OpenSM's format. Saves that come while a
 * write is on its way are coalesced: the latest map wins, the ones between are never written. A
 * write that fails is logged (the file, the error) and counted; the next save tries again. */
import { rename, writeFile } from 'node:fs/promises';
import { formatGuid2Lid, type Guid2LidStore, type LidRange } from '../sm/lids.js';
import type { Logger } from '../util/log.js';

export class Guid2LidFile implements Guid2LidStore {
  /** Files written. */
  written = 0;
  /** Writes that failed. */
  failures = 0;
  /** The map to write next (the latest saved), if any. */
  private next?: ReadonlyMap<bigint, LidRange>;
  /** The writer, while it runs. */
  private running?: Promise<void>;

  constructor(
    readonly path: string,
    private readonly log: Logger,
  ) {}

  save(map: ReadonlyMap<bigint, LidRange>): void {
    this.next = map;
    this.running ??= this.drain();
  }

  /** Resolves once every map saved so far is written (or its write failed). */
  flush(): Promise<void> {
    return this.running ?? Promise.resolve();
  }

  private async drain(): Promise<void> {
    try {
      for (let map = this.next; map; map = this.next) {
        this.next = undefined;
        const tmp = `${this.path}.tmp-${process.pid}`;
        try {
          await writeFile(tmp, formatGuid2Lid(map));
          await rename(tmp, this.path);
          this.written++;
        } catch (e) {
          this.failures++;
          this.log.warn('guid2lid not saved', { file: this.path, error: (e as Error).message, failures: this.failures });
        }
      }
    } finally {
      this.running = undefined;
    }
  }
}

/** The health state file (sm/health-store.ts): the isolations kept across a restart, next to the
 * guid2lid file. Read at start (a file that cannot be used is logged and left: the SM starts with
 * nothing isolated); written on every change of the isolations, off the sweep's path and
 * atomically, the latest state winning (api/latest-file.ts, as the guid2lid file). */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { formatHealthState, parseHealthState, type KeptIsolation } from '../sm/health-store.js';
import type { HealthStore } from '../sm/health-phase.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import { LatestFile } from './latest-file.js';

/** The file's name, in the guid2lid file's directory. */
export const HEALTH_STATE_FILE = 'ibsm-health.json';

/** Where the health state is kept for a guid2lid file (undefined: no guid2lid file, no state file). */
export const healthStatePath = (guid2lid: string | undefined): string | undefined => (guid2lid && guid2lid !== 'none' ? path.join(path.dirname(guid2lid), HEALTH_STATE_FILE) : undefined);

export class HealthStateFile implements HealthStore {
  /** The writer; `since` goes out in wall-clock time, taken when the file is written. */
  private readonly file: LatestFile<readonly KeptIsolation[]>;

  constructor(
    readonly path: string,
    private readonly log: Logger,
    private readonly clock: Clock,
    private readonly wallNow: () => number = Date.now,
  ) {
    this.file = new LatestFile(path, (s) => {
      const off = this.offset();
      return formatHealthState(s, (since) => since + off);
    }, (error, failures) => log.warn('health state not saved', { file: path, error, failures }));
  }

  /** Files written. */
  get written(): number {
    return this.file.written;
  }

  /** Writes that failed. */
  get failures(): number {
    return this.file.failures;
  }

  /** The SM's clock time → wall-clock time (and back, negated). */
  private offset(): number {
    return this.wallNow() - this.clock.now();
  }

  load(): KeptIsolation[] {
    if (!existsSync(this.path)) return [];
    try {
      const off = this.offset();
      const isolated = parseHealthState(readFileSync(this.path, 'utf8'), this.path).map((i) => ({ ...i, since: i.since - off }));
      this.log.info('health state loaded', { file: this.path, isolated: isolated.length });
      return isolated;
    } catch (e) {
      this.log.warn('health state file not used', { file: this.path, error: (e as Error).message });
      return [];
    }
  }

  save(isolated: readonly KeptIsolation[]): void {
    this.file.save(isolated);
  }

  /** Resolves once every state saved so far is written (or its write failed). */
  flush(): Promise<void> {
    return this.file.flush();
  }
}

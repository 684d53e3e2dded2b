/** The guid2lid file as the sweep's store (sm/lids.ts Guid2LidStore), off the sweep's path: `save`
 * only takes the map; the file is written in the background, atomically, in OpenSM's format, the
 * latest map winning (api/latest-file.ts). A write that fails is logged (the file, the error) and
 * counted; the next save tries again. */
import { formatGuid2Lid, type Guid2LidStore, type LidRange } from '../sm/lids.js';
import type { Logger } from '../util/log.js';
import { LatestFile } from './latest-file.js';

export class Guid2LidFile extends LatestFile<ReadonlyMap<bigint, LidRange>> implements Guid2LidStore {
  constructor(path: string, log: Logger) {
    super(path, formatGuid2Lid, (error, failures) => log.warn('guid2lid not saved', { file: path, error, failures }));
  }
}

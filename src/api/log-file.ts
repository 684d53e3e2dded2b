/** The SM's log file (`logFile`): appended to, rotated at a size, reopened after logrotate. */
import { closeSync, fstatSync, ftruncateSync, openSync, renameSync, writeSync } from 'node:fs';
import type { LogSink } from '../util/log.js';

/** A log sink appending to a file. When a line would take it past maxMb (OpenSM's log_max_size),
 * the file is rotated: renamed FILE.1 (replacing the previous FILE.1) and a new FILE begun, so the
 * log holds at most 2 × maxMb on disk and the lines just before the rotation are kept (OpenSM
 * truncates them away); where the rename fails the file is truncated, as OpenSM does. maxMb 0:
 * never. `truncate`: empty the file at start (opensm.conf accum_log_file FALSE). `reopen` opens the path again (after logrotate moved the file away). */
export function fileLogSink(file: string, maxMb = 0, truncate = false): LogSink & { close(): void; reopen(): void } {
  let fd = openSync(file, truncate ? 'w' : 'a');
  let size = fstatSync(fd).size;
  const rotate = (): void => {
    try {
      renameSync(file, `${file}.1`);
      const next = openSync(file, 'a');
      closeSync(fd);
      fd = next;
    } catch {
      ftruncateSync(fd, 0);
    }
    size = 0;
  };
  return {
    reopen() {
      try {
        const next = openSync(file, 'a');
        closeSync(fd);
        fd = next;
        size = fstatSync(fd).size;
      } catch {
        /* keep writing where we were */
      }
    },
    write(line: string) {
      const s = line + '\n';
      try {
        if (maxMb > 0 && size + s.length > maxMb * 1024 * 1024) rotate();
        size += writeSync(fd, s);
      } catch {
        /* a full disk must not stop the SM */
      }
    },
    close: () => closeSync(fd),
  };
}

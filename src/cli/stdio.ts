/** The process's own stdout and stderr for the commands, each made only when first used: making
 * the stream of a pipe loads node:net and node:stream (start-up time: scripts/bench/README.md, "Figures behind source comments"), which `ibsm run`
 * never needs (it logs with writeSync to fd 2, util/log.ts). */
import { fstatSync, statSync } from 'node:fs';

export const PROCESS_IO = {
  get stdout(): NodeJS.WriteStream {
    return process.stdout;
  },
  get stderr(): NodeJS.WriteStream {
    return process.stderr;
  },
};

/** Whether fd 2 is a terminal, without making process.stderr when it is a pipe, a file or
 * /dev/null (a daemon's stderr): only a character device can be a terminal, /dev/null is one that
 * never is, and only for another is the stream asked. */
export function stderrIsTty(): boolean {
  try {
    const st = fstatSync(2);
    if (!st.isCharacterDevice()) return false;
    if (st.rdev === statSync('/dev/null').rdev) return false;
  } catch {
    return false;
  }
  return process.stderr.isTTY === true;
}

/** Sockets for the tests of ibsm's local servers. */
import { spawnSync } from 'node:child_process';

/** A socket file no one serves: a child listens on it and is killed with SIGKILL (no unlink). */
export function staleSocket(sock: string): void {
  const r = spawnSync(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(sock)}, () => process.kill(process.pid, 'SIGKILL'))`]);
  if (r.signal !== 'SIGKILL') throw new Error(`no stale socket made at ${sock}: ${r.stderr}`);
}

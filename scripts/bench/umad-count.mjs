// The umad_send counting shim (umad-count.c: SMPs and LFT Sets sent, first-send time, CPU), built
// with cc into a bench's scratch directory; preloaded beside umad2sim into both SMs.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Build `dir`/umad-count.so from umad-count.c; returns its path. */
export function buildShim(dir) {
  const so = path.join(dir, 'umad-count.so');
  const r = spawnSync('cc', ['-shared', '-fPIC', '-O2', '-o', so, path.join(here, 'umad-count.c'), '-ldl'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`building the umad_send counting shim failed:\n${r.stderr}`);
  return so;
}

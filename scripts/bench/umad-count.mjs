// The umad_send counting shim (umad-count.c: SMPs and LFT Sets sent, first-send time, CPU), built
// with cc into a bench's scratch directory; preloaded beside umad2sim into both SMs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
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

/** What the shim counted so far in `file` (its layout: umad-count.c): SMPs sent (SubnLid and
 * SubnDirected, every method) and LFT blocks written (their Sets of LinearForwardingTable). */
export function readCounts(file) {
  if (!existsSync(file)) return { smps: 0, lft: 0 };
  const b = readFileSync(file);
  if (b.length < 64 || b.readBigUInt64LE(0) !== 0x31544e43444d4155n) return { smps: 0, lft: 0 };
  let smps = 0;
  let lft = 0;
  for (let i = 0; i < Number(b.readBigUInt64LE(8)); i++) {
    const k = b.readBigUInt64LE(64 + 16 * i);
    if (k === 0n) continue;
    const key = Number(k - 1n);
    const n = Number(b.readBigUInt64LE(72 + 16 * i));
    const cls = key >>> 24;
    if (cls !== 0x01 && cls !== 0x81) continue;
    smps += n;
    if (((key >>> 16) & 0xff) === 0x02 && (key & 0xffff) === 0x19) lft += n;
  }
  return { smps, lft };
}

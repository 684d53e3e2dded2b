// The umad_send counting shim (umad-count.c: SMPs and LFT Sets sent, first-send time, CPU), built
// with cc into a bench's scratch directory; preloaded beside umad2sim into both SMs.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** An SM under the counting shim `shim` (beside umad2sim), in its scratch directory `cache`:
 * `ibsm` its command line (ibsm's output kept in cache/ibsm.log too), or else OpenSM with
 * `osmConf` after `force_log_flush TRUE` in its opensm.conf and `osmArgs` (its log cache/opensm.log).
 * `env(extra)` is the environment of an ibsim client with `extra` (ibsim.mjs clientEnv).
 * Returns { kind, child, log() (the SM's log so far), counts() (readCounts) }. */
export function startCountedSm({ kind, cache, shim, env, ibsm, osmConf = '', osmArgs = [], umad2sim }) {
  mkdirSync(cache, { recursive: true });
  const countFile = path.join(cache, 'counts');
  const extra = { UMAD_COUNT_FILE: countFile, LD_PRELOAD: `${shim} ${umad2sim}`, OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache };
  let argv = ibsm;
  let logFile;
  if (!argv) {
    logFile = path.join(cache, 'opensm.log');
    const conf = path.join(cache, 'opensm.conf');
    writeFileSync(conf, `force_log_flush TRUE\n${osmConf}`);
    argv = ['opensm', '-F', conf, '-f', logFile, ...osmArgs];
  }
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@" 2>&1', 'bash', ...argv], { env: env(extra), cwd: cache, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out += d;
    if (!logFile) appendFileSync(path.join(cache, 'ibsm.log'), d);
  });
  const log = () => (logFile ? (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') : out);
  return { kind, child, log, counts: () => readCounts(countFile) };
}

#!/usr/bin/env node
// Start-up benchmark: how long ibsm takes from process start to its first SMP, to SUBNET UP and
// from SUBNET UP to exit (`ibsm run --umad --once` on ibsim's 4-host example fabric, counted by the
// same umad_send shim as sm-vs-opensm.mjs), side by side with the floor this machine gives any
// Node process started the same way: `node -e 0` and the same with ibsm's V8 flags, under the same
// preloads (umad2sim and the shim), without NODE_EXTRA_CA_CERTS too when it is set (as the bin
// runs), and `ibsm --version` (the bundle compiled and evaluated,
// no SM). Runs are interleaved (one of each per round, each on a fresh ibsim); medians printed,
// with the load average before and after. Asserts nothing.
//
//   npm run build && node scripts/bench/startup.mjs [--runs N] [--cli FILE[,FILE...]] [--opensm] [--keep]
//     --runs N     rounds (default 5)
//     --cli FILES  the ibsm command(s) (default dist/bundle/ibsm.cjs, run through its shebang);
//                  several (e.g. a build from before a change, then this one) run interleaved
//     --opensm     OpenSM in each round too (`opensm -o`), its first SMP and SUBNET UP
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientEnv, startIbsim, UMAD2SIM } from './ibsim.mjs';
import { buildShim } from './umad-count.mjs';
import { argv, opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const runs = Math.max(1, Number(opt('--runs', '5')));
const clis = opt('--cli', path.join(here, '../../dist/bundle/ibsm.cjs')).split(',').map((f) => path.resolve(f));
const withOpensm = argv.includes('--opensm');
const NET = '/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca';
const SIM_HOST = 'Hca1';

for (const cli of clis) if (!existsSync(cli)) throw new Error(`${cli} not found: run "npm run build" first (or pass --cli)`);
// The (first) bin's V8 flags, from its shebang.
const nodeFlags = readFileSync(clis[0], 'utf8').split('\n', 1)[0].replace(/^#!.*?node\s*/, '').split(/\s+/).filter(Boolean);
const label = (cli) => (clis.length > 1 ? `${path.relative(process.cwd(), cli) || cli}: ` : 'ibsm ');


/** The shim's first-send time (µs since the epoch) and CPU µs (umad-count.c's header). */
function readCounts(file) {
  if (!existsSync(file)) return {};
  const b = readFileSync(file);
  if (b.length < 64) return {};
  return { firstSendUs: Number(b.readBigUInt64LE(48)), cpuUs: Number(b.readBigUInt64LE(56)) };
}

/** Run one command as the SM bench does (bash, ulimit, exec); wall figures from just before the spawn. */
async function runOne(cmd, args, env, cwd, upFile) {
  const t0 = Date.now();
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let upAt;
  const onData = (d) => {
    out += d;
    if (upAt === undefined && out.includes('SUBNET UP')) upAt = Date.now();
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  const code = await new Promise((r) => child.once('close', (c, s) => r(c ?? s)));
  const end = Date.now();
  const r = { code, exitMs: end - t0, out };
  let line = out.split('\n').find((l) => l.includes('SUBNET UP'));
  if (line) {
    const ts = Date.parse(line.split(/\s/)[0]);
    r.upMs = (Number.isFinite(ts) ? ts : upAt) - t0;
  }
  if (upFile && existsSync(upFile)) {
    line = readFileSync(upFile, 'utf8').split('\n').find((l) => l.includes('SUBNET UP'));
    const m = line && /^\w{3} +\d+ (\d\d):(\d\d):(\d\d) (\d{6})/.exec(line);
    if (m) {
      const d = new Date(t0);
      d.setHours(Number(m[1]), Number(m[2]), Number(m[3]), 0);
      r.upMs = d.getTime() + Number(m[4]) / 1000 - t0;
    }
  }
  if (r.upMs !== undefined) r.upToExitMs = r.exitMs - r.upMs;
  return { ...r, t0 };
}

const med = (xs) => {
  const v = xs.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  return v.length ? v[(v.length - 1) >> 1] : undefined;
};
const fmt = (x) => (x === undefined ? '-' : x.toFixed(0));

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-startup-'));
const shim = buildShim(dir);
const load0 = os.loadavg();
const CA = process.env.NODE_EXTRA_CA_CERTS;
const NO_CA = `node ${nodeFlags.join(' ')} -e 0, no NODE_EXTRA_CA_CERTS`;
const rows = { 'node -e 0': [], [`node ${nodeFlags.join(' ')} -e 0`]: [], ...(CA ? { [NO_CA]: [] } : {}) };
for (const cli of clis) {
  rows[label(cli) + '--version'] = [];
  rows[label(cli) + 'run --umad --once'] = [];
}
if (withOpensm) rows['opensm -o'] = [];
const LIMITS = { nodes: 2048, switches: 256, ports: 13312 };
try {
  for (let run = 0; run < runs; run++) {
    const cwd = path.join(dir, `run${run}`);
    mkdirSync(cwd, { recursive: true });
    const counts = path.join(dir, `run${run}.counts`);
    // One command on a fresh ibsim (every SM finds the fabric as ibsim starts it). CPU (user +
    // system, every thread) from the shim's header, written at exit by any process it is preloaded in.
    const counted = async (name, cmd, args, extraEnv = {}, upFile) => {
      const sim = await startIbsim(NET, { dir, limits: LIMITS, prefix: 'ibsmstart' });
      try {
        rmSync(counts, { force: true });
        const env = clientEnv(sim, SIM_HOST, { UMAD_COUNT_FILE: counts, LD_PRELOAD: `${shim} ${UMAD2SIM}`, ...extraEnv });
        for (const [k, v] of Object.entries(env)) if (v === undefined) delete env[k];
        const r = await runOne(cmd, args, env, cwd, upFile);
        const c = readCounts(counts);
        if (c.firstSendUs) r.firstSmpMs = c.firstSendUs / 1000 - r.t0;
        if (c.cpuUs) r.cpuMs = c.cpuUs / 1000;
        rows[name].push(r);
        return r;
      } finally {
        await sim.stop();
      }
    };
    await counted('node -e 0', process.execPath, ['-e', '0']);
    await counted(`node ${nodeFlags.join(' ')} -e 0`, process.execPath, [...nodeFlags, '-e', '0']);
    // The bin starts node without it (its shebang's env -u): the floor it has.
    if (CA) await counted(NO_CA, process.execPath, [...nodeFlags, '-e', '0'], { NODE_EXTRA_CA_CERTS: undefined });
    // Several commands: in turn first and last, round by round.
    for (const cli of run % 2 ? [...clis].reverse() : clis) {
      await counted(label(cli) + '--version', cli, ['--version']);
      rmSync(path.join(cwd, 'guid2lid'), { force: true });
      const r = await counted(label(cli) + 'run --umad --once', cli, ['run', '--umad', '--once', '--guid2lid', path.join(cwd, 'guid2lid')]);
      if (r.code !== 0) console.log(`${cli} exited ${r.code}:\n${r.out.trim().split('\n').slice(-4).join('\n')}`);
    }
    if (withOpensm) {
      const log = path.join(cwd, 'opensm.log');
      await counted('opensm -o', 'opensm', ['-o', '-F', '/dev/null', '-f', log, '--dump_files_dir', cwd], { OSM_CACHE_DIR: cwd, OSM_TMP_DIR: cwd }, log);
    }
  }
} finally {
  if (!argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
const load1 = os.loadavg();
console.log(`start-up, median of ${runs} interleaved rounds (ms from just before the spawn; ibsim ${path.basename(NET)}, attached at ${SIM_HOST}; ${clis.map((c) => path.relative(process.cwd(), c) || c).join(', ')})`);
console.log(`load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`);
const head = ['', 'exit', '1st SMP', 'SUBNET UP', 'UP→exit', 'CPU'];
const w = Math.max(32, ...Object.keys(rows).map((k) => k.length + 2));
console.log(head[0].padEnd(w) + head.slice(1).map((h) => h.padStart(10)).join(''));
for (const [name, rs] of Object.entries(rows)) {
  const cells = [med(rs.map((r) => r.exitMs)), med(rs.map((r) => r.firstSmpMs)), med(rs.map((r) => r.upMs)), med(rs.map((r) => r.upToExitMs)), med(rs.map((r) => r.cpuMs))];
  console.log(name.padEnd(w) + cells.map((c) => fmt(c).padStart(10)).join(''));
}

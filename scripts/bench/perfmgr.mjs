#!/usr/bin/env node
// The cost of PerfMgr: ibsm with --perfmgr beside ibsm without it (the SM's idle cost), and
// OpenSM with and without its PerfMgr (--perfmgr), on the same 1,024-host ibsim fabric, one fresh
// ibsim per run, median of --runs runs.
//
// Both SMs run under the same umad_send counting shim (scripts/bench/umad-count.c, built here with
// cc), whose counters live in a shared mapping this script samples every 20 ms: a PerfMgr sweep is
// a burst of PMA (class 0x04) sends; its MADs are the PMA sends of the burst (Gets and the Sets that
// clear counters), its time from the burst's first send to its last (20 ms resolution; bursts are
// apart by more than --gap ms of silence). CPU is the SM process's utime+stime (/proc/PID/stat)
// over a window of --window seconds that starts 2 s after SUBNET UP, scaled to a minute; RSS is
// the process's peak. Light sweeps run in every configuration (every 10 s, both SMs' default).
// Prints one table and asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/perfmgr.mjs [options]
//     --fabric SPEC     default gen:fattree2:leaves=32,spines=16,hosts=32 (1,024 hosts, 48 switches)
//     --interval S      PerfMgr sweep interval of both SMs (default 10)
//     --window S        CPU window (default 60)
//     --runs N          runs per configuration (default 3; the table shows medians)
//     --configs LIST    ibsm,ibsm+pm,opensm,opensm+pm,opensm+pm16 (default all five; opensm+pm16 is
//                       OpenSM's PerfMgr with perfmgr_max_outstanding_queries 16 instead of 500)
//     --gap MS          silence that ends a sweep's burst (default 1500)
//     --osm-args "..."  more OpenSM arguments (e.g. "-D 0x43" for its PerfMgr's log lines)
//     --osm-conf "..."  more opensm.conf lines, separated by \n (e.g. "perfmgr_max_outstanding_queries 16")
//     --detail          print every burst of PMA sends
//     --keep            keep the scratch directory
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild } from './ibsim.mjs';
import { buildShim } from './umad-count.mjs';
import { argv, opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';
const SPEC = opt('--fabric', 'gen:fattree2:leaves=32,spines=16,hosts=32');
const INTERVAL = Number(opt('--interval', '10'));
const WINDOW = Number(opt('--window', '60'));
const RUNS = Number(opt('--runs', '3'));
const GAP = Number(opt('--gap', '1500'));
const OSM_ARGS = opt('--osm-args', '').split(' ').filter(Boolean);
// more opensm.conf lines, "\n"-separated (e.g. "perfmgr_max_outstanding_queries 16")
const OSM_CONF = opt('--osm-conf', '').split('\\n').filter(Boolean).map((l) => l + '\n').join('');
const CONFIGS = opt('--configs', 'ibsm,ibsm+pm,opensm,opensm+pm,opensm+pm16').split(',').filter(Boolean);
const distDir = path.join(here, '../../dist');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

function need() {
  const missing = [];
  for (const c of ['ibsim', 'cc', ...(CONFIGS.some((c) => c.startsWith('opensm')) ? ['opensm'] : [])]) if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) missing.push(c);
  if (!existsSync(UMAD2SIM)) missing.push(UMAD2SIM);
  if (missing.length) throw new Error(`missing: ${missing.join(', ')} (apt-get install ibsim-utils opensm gcc libibumad-dev)`);
  if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error(`${distDir}/cli/main.js not found: run "npx tsc -p tsconfig.json" first`);
}


/** PMA (class 0x04) sends by method, from the shim's file (layout: umad-count.c); undefined before it exists. */
function pmaSends(file) {
  let b;
  try {
    b = readFileSync(file);
  } catch {
    return undefined;
  }
  if (b.length < 64 || b.readBigUInt64LE(0) !== 0x31544e43444d4155n) return undefined;
  const slots = Number(b.readBigUInt64LE(8));
  const out = { get: 0, set: 0, total: Number(b.readBigUInt64LE(32)), maxRssKB: Number(b.readBigUInt64LE(40)) };
  for (let i = 0; i < slots; i++) {
    const k = b.readBigUInt64LE(64 + 16 * i);
    if (k === 0n) continue;
    const key = Number(k - 1n);
    if (key >>> 24 !== 0x04) continue;
    const n = Number(b.readBigUInt64LE(72 + 16 * i));
    if (((key >>> 16) & 0xff) === 0x02) out.set += n;
    else out.get += n;
  }
  return out;
}



function cpuTicks(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]); // utime, stime (fields 14, 15)
  } catch {
    return undefined;
  }
}
function vmHWMkB(pid) {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** One SM run on a fresh ibsim: CPU over the window, PerfMgr bursts. */
async function runOne(config, fab, shim, dir, k) {
  const sim = await startIbsim(fab.netFile, { dir, limits: fab.limits, prefix: 'pmbench' });
  const tag = `${config}-${k}`;
  const counts = path.join(dir, `${tag}.counts`);
  const osmLog = path.join(dir, `${tag}.osm.log`);
  const cache = path.join(dir, `${tag}.cache`);
  mkdirSync(cache, { recursive: true });
  const pm = /\+pm/.test(config);
  // OpenSM buffers its log file: flushed lines let this script see SUBNET UP while it runs
  const osmConf = path.join(dir, `${tag}.opensm.conf`);
  // opensm+pm16: OpenSM's PerfMgr with 16 queries outstanding (its default 500 overruns ibsim)
  writeFileSync(osmConf, `force_log_flush TRUE\n${config === 'opensm+pm16' ? 'perfmgr_max_outstanding_queries 16\n' : ''}${OSM_CONF}`);
  const env = { ...process.env, IBSIM_SOCKNAME: sim.sockname, SIM_HOST: fab.simHost, LD_PRELOAD: `${shim} ${UMAD2SIM}`, UMAD_COUNT_FILE: counts, OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache };
  delete env.NODE_OPTIONS;
  const [cmd, args] = config.startsWith('ibsm')
    ? [process.execPath, [path.join(distDir, 'cli/main.js'), 'run', '--umad', '--sweep-interval', '10', '--guid2lid', path.join(cache, 'guid2lid'), ...(pm ? ['--perfmgr', '--perfmgr-interval', String(INTERVAL)] : [])]]
    : ['opensm', ['-F', osmConf, '-f', osmLog, '-s', '10', '--dump_files_dir', cache, ...(pm ? ['--perfmgr', '--perfmgr_sweep_time_s', String(INTERVAL)] : []), ...OSM_ARGS]];
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr.setEncoding('utf8').on('data', (d) => (out = (out + d).slice(-20_000)));
  const t0 = Date.now();
  const r = { config, up: false };
  try {
    // SUBNET UP (ibsm's stderr, OpenSM's log file)
    const upDeadline = t0 + 300_000;
    for (;;) {
      const text = config.startsWith('ibsm') ? out : existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '';
      if (text.includes('SUBNET UP')) break;
      if (child.exitCode !== null || Date.now() > upDeadline) throw new Error(`${config}: no SUBNET UP (exit ${child.exitCode}):\n${out.slice(-800)}`);
      await sleep(50);
    }
    r.up = true;
    r.upMs = Date.now() - t0;
    // sample the shim until the window is over, then one more interval for the last burst
    const bursts = [];
    let last = 0;
    let lastSet = 0;
    let cur;
    let cpu0;
    const winStart = Date.now() + 2000;
    const winEnd = winStart + WINDOW * 1000;
    let hwm = 0;
    while (Date.now() < winEnd) {
      await sleep(20);
      const now = Date.now();
      if (cpu0 === undefined && now >= winStart) cpu0 = cpuTicks(child.pid);
      hwm = Math.max(hwm, vmHWMkB(child.pid));
      const c = pmaSends(counts);
      if (!c) continue;
      if (c.get + c.set > last + lastSet) {
        if (!cur || now - cur.end > GAP) bursts.push((cur = { start: now, end: now, gets: 0, sets: 0 }));
        cur.end = now;
        cur.gets += c.get - last;
        cur.sets += c.set - lastSet;
        last = c.get;
        lastSet = c.set;
      }
      if (child.exitCode !== null) throw new Error(`${config} exited during the window (${child.exitCode}):\n${out.slice(-800)}`);
    }
    const cpu1 = cpuTicks(child.pid);
    r.cpuSecPerMin = ((cpu1 - cpu0) / TICK) * (60 / WINDOW);
    r.rssMB = hwm / 1024;
    // a burst still going at the window's end is left out
    const done = bursts.filter((b) => Date.now() - b.end > GAP || b !== cur);
    if (argv.includes('--detail')) for (const b of bursts) process.stderr.write(`      burst at +${b.start - t0} ms: ${b.end - b.start} ms, ${b.gets} Gets, ${b.sets} Sets\n`);
    r.sweeps = done.length;
    r.first = done[0];
    r.steady = done.slice(1);
  } finally {
    await stopChild(child, 10_000);
    await sim.stop();
  }
  return r;
}

const median = (xs) => {
  const v = xs.filter((x) => x !== undefined && Number.isFinite(x)).sort((a, b) => a - b);
  if (!v.length) return undefined;
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};
const fmt = (x, d = 0) => (x === undefined ? '-' : x.toFixed(d));

async function main() {
  need();
  const { loadFabricSpec } = await import(pathToFileURL(path.join(distDir, 'model/load.js')).href);
  const { formatIbnetdiscover } = await import(pathToFileURL(path.join(distDir, 'model/ibnetdiscover.js')).href);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-pm-bench-'));
  try {
    const fabric = loadFabricSpec(SPEC);
    const netFile = path.join(dir, 'fabric.net');
    writeFileSync(netFile, formatIbnetdiscover(fabric, { timestamp: 'perfmgr-bench' }));
    const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(readFileSync(netFile, 'utf8'))?.[1];
    const hosts = fabric.nodes.filter((n) => n.type !== 2).length;
    const switches = fabric.nodes.length - hosts;
    const linked = fabric.nodes.reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer).length, 0);
    const fab = { netFile, simHost, limits: ibsimLimits(fabric) };
    const shim = buildShim(dir);
    console.log(`PerfMgr cost on ibsim: ${SPEC}: ${hosts} hosts, ${switches} switches, ${linked} linked ports; PerfMgr interval ${INTERVAL} s, light sweeps every 10 s;`);
    console.log(`CPU over ${WINDOW} s from 2 s after SUBNET UP, per minute; median of ${RUNS} runs, a fresh ibsim each (scratch ${dir})`);
    const rows = [];
    for (const config of CONFIGS) {
      const runs = [];
      for (let k = 0; k < RUNS; k++) {
        try {
          const r = await runOne(config, fab, shim, dir, k);
          runs.push(r);
          const st = r.steady ?? [];
          process.stderr.write(`   ${config} run ${k + 1}: CPU ${fmt(r.cpuSecPerMin, 2)} s/min, ${r.sweeps ?? 0} PerfMgr sweeps, steady MADs ${fmt(median(st.map((b) => b.gets + b.sets)))}, steady ms ${fmt(median(st.map((b) => b.end - b.start)))}\n`);
        } catch (e) {
          console.log(`   ${config} run ${k + 1}: ${e.message}`);
        }
      }
      const steady = (f) => median(runs.map((r) => median((r.steady ?? []).map(f))));
      rows.push({
        config,
        runs: runs.length,
        cpu: median(runs.map((r) => r.cpuSecPerMin)),
        rss: median(runs.map((r) => r.rssMB)),
        sweeps: median(runs.map((r) => r.sweeps)),
        firstMads: median(runs.map((r) => r.first && r.first.gets + r.first.sets)),
        firstMs: median(runs.map((r) => r.first && r.first.end - r.first.start)),
        mads: steady((b) => b.gets + b.sets),
        sets: steady((b) => b.sets),
        ms: steady((b) => b.end - b.start),
      });
    }
    const head = ['config', 'runs', 'CPU s/min', 'RSS MB', 'PM sweeps', '1st MADs', '1st ms', 'MADs/sweep', 'clears', 'sweep ms', 'MADs/port'];
    const w = [11, 5, 10, 8, 10, 9, 8, 11, 7, 9, 10];
    const line = (cells) => console.log(cells.map((c, i) => (i === 0 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join(' '));
    console.log('');
    line(head);
    for (const r of rows) line([r.config, r.runs, fmt(r.cpu, 2), fmt(r.rss, 0), fmt(r.sweeps), fmt(r.firstMads), fmt(r.firstMs), fmt(r.mads), fmt(r.sets), fmt(r.ms), r.mads !== undefined ? (r.mads / linked).toFixed(2) : '-']);
    const base = (c) => rows.find((r) => r.config === c)?.cpu;
    for (const [sm, pm] of [['ibsm', 'ibsm+pm'], ['opensm', 'opensm+pm'], ['opensm', 'opensm+pm16']]) {
      const a = base(sm);
      const b = base(pm);
      if (a !== undefined && b !== undefined) console.log(`   ${pm}: PerfMgr adds ${(b - a).toFixed(2)} CPU s per minute (${fmt(a, 2)} idle → ${fmt(b, 2)} with PerfMgr every ${INTERVAL} s)`);
    }
    console.log('MADs/sweep and sweep ms: medians over the sweeps after the first (the first also asks each PMA its ClassPortInfo);');
    console.log('clears: PortCounters Sets (counters cleared before they saturate); sweep ms: first to last PMA send of the burst, 20 ms resolution.');
  } finally {
    if (!argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}

await main();

#!/usr/bin/env node
// SM benchmark: ibsm and OpenSM side by side on the same ibsim fabrics, one fresh ibsim per run.
//
// OpenSM falls back to minhop when the engine asked for does not apply; ibsm is given the same
// fallback (--routing E,minhop), and the "used" column shows which engine routed.
//
// For every fabric × engine × SM: time from process start to SUBNET UP (both SMs' own log
// timestamps), to the first umad_send and from SUBNET UP to exit, SMPs sent, LFT blocks set and
// PortInfo sets, CPU time (user + system) and peak RSS (counted for both SMs by the same umad_send
// shim, scripts/bench/umad-count.c, built here with cc), and the route verifier's figures
// (dist/routing/verify.js) on the LFTs read back from the switches with ibroute after the SM has
// exited (ibroute skips the last block when the top LID is a multiple of 64: that block is read
// with smpdump). Each SM runs --runs times, interleaved (ibsm, OpenSM, ibsm, ...); the table shows
// the median of every figure, the routes are verified after the first run. Asserts nothing.
//
//   npm run build && node scripts/bench/sm-vs-opensm.mjs [options]
//     --fabrics small,400,ft3-large,torus,rrg   which fabrics (default: these five; also large, lid64)
//     --runs N                      runs per SM and engine (default 3; the median is shown)
//     --engines minhop,updn,ftree,dfsssp
//     --large SPEC                  the large fabric (default gen:fattree3:radix=24, see README)
//     --sms ibsm,opensm             which SMs
//     --dist DIR                    a built dist/ (default: this repo's dist)
//     --cli FILE                    the ibsm command run (default: DIR/bundle/ibsm.cjs, the esbuild
//                                   bundle of npm run build, run as the installed bin is, through
//                                   its shebang; else node DIR/cli/main.js)
//     --timeout S                   per SM run (default 600)
//     --detail                      print both SMs' per-attribute send counts
//     --keep                        keep the scratch directory (ibsm's log of the last run of
//                                   each engine is its ibsm-ENGINE.out, OpenSM's opensm-ENGINE.osm.log)
//     --ibsm-node-flags S           node flags for ibsm, run as node S CLI (e.g. to profile:
//                                   "--cpu-prof --cpu-prof-dir=/tmp/p"; the bin's own shebang
//                                   flags are not applied then)
//     --phases once,idle            once: the --once runs above (default); idle: each SM running
//                                   with light sweeps (scripts/bench/sm-idle.mjs): CPU, ibsim CPU
//                                   and SMPs per minute after SUBNET UP, then a cable pulled: the
//                                   time to the SM's last LFT Set for it (--runs runs, medians)
//     --idle-seconds S              how long the idle phase measures (default 30)
//     --idle-settle S               the wait after SUBNET UP and the last Set before it (default 20)
//     --idle-interval S             the light sweep interval of both SMs (default 5: ibsm
//                                   --sweep-interval 5, OpenSM -s 5)
// The in-process routing figures (10k/50k end ports) are scripts/bench/routing.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchFabrics, prepareFabric } from './sm-fabrics.mjs';
import { startIbsim, clientEnv, runClient, UMAD2SIM } from './ibsim.mjs';
import { buildShim } from './umad-count.mjs';
import { readLfts } from './lft-readback.mjs';
import { opt, flag } from './args.mjs';
import { idleRun, medianIdle, printIdle } from './sm-idle.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

const distDir = path.resolve(opt('--dist', path.join(here, '../../dist')));
const cliFile = path.resolve(opt('--cli', existsSync(path.join(distDir, 'bundle/ibsm.cjs')) ? path.join(distDir, 'bundle/ibsm.cjs') : path.join(distDir, 'cli/main.js')));
// The bin runs as the installed command does, through its shebang (and its V8 flags).
const cliIsBin = cliFile.endsWith(path.join('bundle', 'ibsm.cjs'));
const engines = opt('--engines', 'minhop,updn,ftree,dfsssp').split(',').filter(Boolean);
const sms = opt('--sms', 'ibsm,opensm').split(',').filter(Boolean);
const timeoutMs = Number(opt('--timeout', '600')) * 1000;
const LARGE = opt('--large', 'gen:fattree3:radix=24');
const runs = Math.max(1, Number(opt('--runs', '3')));
const ibsmNodeFlags = opt('--ibsm-node-flags', '').split(' ').filter(Boolean);
// A second ibsm in the same interleaved runs (`--sms ibsm,ibsm-b,opensm`): --ibsm-b-env "K=V ..."
// adds to its environment, --cli-b runs another bundle (an A/B on the same machine state).
const ibsmBEnv = Object.fromEntries(opt('--ibsm-b-env', '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const cliFileB = path.resolve(opt('--cli-b', cliFile));
const phases = opt('--phases', 'once').split(',').filter(Boolean);
const idleSeconds = Number(opt('--idle-seconds', '30'));
const idleInterval = Number(opt('--idle-interval', '5'));
const idleSettle = Number(opt('--idle-settle', '20'));

const FABRICS = benchFabrics(LARGE);
const fabricKeys = opt('--fabrics', 'small,400,ft3-large,torus,rrg').split(',').filter(Boolean);

const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);

function need() {
  const missing = [];
  for (const c of ['ibsim', 'ibroute', 'ibnetdiscover', 'smpdump', 'cc', ...(sms.includes('opensm') ? ['opensm'] : [])]) {
    if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) missing.push(c);
  }
  if (!existsSync(UMAD2SIM)) missing.push(UMAD2SIM);
  if (missing.length) throw new Error(`missing: ${missing.join(', ')} (apt-get install ibsim-utils infiniband-diags opensm gcc libibumad-dev)`);
  if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error(`${distDir}/cli/main.js not found: run "npx tsc -p tsconfig.json" first (or pass --dist)`);
}

/** Decode the shim's counter file (layout: see umad-count.c). */
function readCounts(file) {
  if (!existsSync(file)) return undefined;
  const b = readFileSync(file);
  if (b.length < 64 || b.readBigUInt64LE(0) !== 0x31544e43444d4155n) return undefined;
  const slots = Number(b.readBigUInt64LE(8));
  const byKey = new Map();
  for (let i = 0; i < slots; i++) {
    const k = b.readBigUInt64LE(64 + 16 * i);
    if (k === 0n) continue;
    const key = Number(k - 1n);
    byKey.set(key, Number(b.readBigUInt64LE(72 + 16 * i)));
  }
  const get = (cls, method, attr) => byKey.get(((cls << 24) | (method << 16) | attr) >>> 0) ?? 0;
  let smps = 0;
  for (const [key, n] of byKey) if (key >>> 24 === 0x01 || key >>> 24 === 0x81) smps += n;
  return {
    total: Number(b.readBigUInt64LE(32)),
    sendErrors: Number(b.readBigUInt64LE(16)),
    badStatus: Number(b.readBigUInt64LE(24)),
    maxRssKB: Number(b.readBigUInt64LE(40)),
    firstSendUs: Number(b.readBigUInt64LE(48)),
    cpuUs: Number(b.readBigUInt64LE(56)),
    smps,
    lftSets: get(0x81, 0x02, 0x19) + get(0x01, 0x02, 0x19),
    portInfoSets: get(0x81, 0x02, 0x15) + get(0x01, 0x02, 0x15),
    byKey,
  };
}

const ATTR = { 0x10: 'NodeDesc', 0x11: 'NodeInfo', 0x12: 'SwitchInfo', 0x14: 'GUIDInfo', 0x15: 'PortInfo', 0x16: 'PKeyTable', 0x17: 'SL2VL', 0x18: 'VLArb', 0x19: 'LFT', 0x1a: 'RFT', 0x1b: 'MFT', 0x20: 'SMInfo', 0x30: 'VendorDiag', 0x31: 'LedInfo', 0xff90: 'MlnxExtPortInfo' };
const METHOD = { 0x01: 'Get', 0x02: 'Set', 0x05: 'Trap', 0x06: 'Send', 0x07: 'TrapRepress', 0x81: 'GetResp', 0x12: 'GetTable', 0x92: 'GetTableResp' };
function describeKey(key) {
  const cls = key >>> 24;
  const m = (key >>> 16) & 0xff;
  const a = key & 0xffff;
  return `class 0x${cls.toString(16).padStart(2, '0')} ${METHOD[m] ?? '0x' + m.toString(16)} ${ATTR[a] ?? '0x' + a.toString(16).padStart(4, '0')}`;
}

// ---------------------------------------------------------------------------------------------
// ibsim.


// ---------------------------------------------------------------------------------------------
// Preloaded clients.


/** CPU (user + system) a process has used so far, in ms (ibsim's: the floor it sets an SM). */
function cpuMsOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

function vmHWMkB(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

const MONTHS = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
/** OpenSM log time "Nov 29 21:53:28 013388" (local time, no year) in epoch ms. */
function osmTime(line, ref) {
  const m = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6})/.exec(line);
  if (!m) return undefined;
  const d = new Date(ref);
  d.setMonth(MONTHS[m[1]], Number(m[2]));
  d.setHours(Number(m[3]), Number(m[4]), Number(m[5]), 0);
  return d.getTime() + Number(m[6]) / 1000;
}

/** Run one SM under the shim; returns its figures. */
async function runSm(kind, engine, sim, simHost, shim, dir) {
  const counts = path.join(dir, `${kind}-${engine}.counts`);
  const osmLog = path.join(dir, `${kind}-${engine}.osm.log`);
  // A fresh cache per run: OpenSM's guid2lid (and ibsm's --guid2lid) from an earlier run, or from
  // another fabric whose GUIDs overlap, would hand out its LIDs (a higher top LID: more LFT blocks).
  const cache = path.join(dir, `${kind}-${engine}.cache`);
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const isIbsm = kind.startsWith('ibsm');
  const cli = kind === 'ibsm-b' ? cliFileB : cliFile;
  const env = clientEnv(sim, simHost, { UMAD_COUNT_FILE: counts, LD_PRELOAD: `${shim} ${UMAD2SIM}`, OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache, ...(kind === 'ibsm-b' ? ibsmBEnv : {}) });
  // The bin's shebang unsets NODE_EXTRA_CA_CERTS (a CA file read at start-up); so does node S CLI.
  if (isIbsm && ibsmNodeFlags.length) delete env.NODE_EXTRA_CA_CERTS;
  const [cmd, args] =
    isIbsm
      ? [cliIsBin && !ibsmNodeFlags.length ? cli : process.execPath, [...(cliIsBin && !ibsmNodeFlags.length ? [] : [...ibsmNodeFlags, cli]), 'run', '--umad', '--once', '--routing', engine === 'minhop' ? 'minhop' : `${engine},minhop`, '--guid2lid', path.join(cache, 'guid2lid')]]
      : ['opensm', ['-o', '-R', engine, '-F', '/dev/null', '-f', osmLog, '--dump_files_dir', cache]];
  // OpenSM appends to its log: start from an empty one, or an earlier run's SUBNET UP line is found.
  rmSync(osmLog, { force: true });
  const simCpu0 = cpuMsOf(sim.pid);
  const t0 = Date.now();
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let upSeenAt;
  const onData = (d) => {
    out += d;
    if (upSeenAt === undefined && out.includes('SUBNET UP')) upSeenAt = Date.now();
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  let hwm = 0;
  const poll = setInterval(() => (hwm = Math.max(hwm, vmHWMkB(child.pid))), 25);
  const killer = setTimeout(() => {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {}
  }, timeoutMs);
  const [code, signal] = await new Promise((r) => child.once('close', (c, s) => r([c, s])));
  const tEnd = Date.now();
  clearInterval(poll);
  clearTimeout(killer);
  const c = readCounts(counts);
  const r = { sm: kind, engine, code, signal, exitMs: tEnd - t0, counts: c, rssMB: ((c?.maxRssKB || hwm) / 1024), simCpuMs: cpuMsOf(sim.pid) - simCpu0 };
  if (c?.firstSendUs) r.firstSmpMs = c.firstSendUs / 1000 - t0;
  if (c?.cpuUs) {
    r.cpuMs = c.cpuUs / 1000;
    if (c.smps) r.usPerSmp = c.cpuUs / c.smps;
  }
  // ibsm's output (its log) beside OpenSM's: the scratch directory's <sm>-<engine>.out (--keep keeps it).
  if (isIbsm) writeFileSync(path.join(dir, `${kind}-${engine}.out`), out);
  if (isIbsm) {
    const line = out.split('\n').find((l) => l.includes('SUBNET UP'));
    if (line) {
      const ts = Date.parse(line.split(/\s/)[0]);
      r.upMs = Number.isFinite(ts) ? ts - t0 : upSeenAt - t0;
      r.smMs = Number(/ ms=(\d+)/.exec(line)?.[1]);
      r.smSmps = Number(/ smps=(\d+)/.exec(line)?.[1]);
      r.used = /engine=(\S+)/.exec(line)?.[1];
    }
    r.tail = out.split('\n').filter(Boolean).slice(-4).join('\n');
  } else {
    const text = existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '';
    const line = text.split('\n').find((l) => l.includes('SUBNET UP'));
    if (line) r.upMs = osmTime(line, t0) - t0;
    const m = /osm_ucast_mgr_process: (\S+) tables configured/.exec(text) ?? /ucast_mgr_route: (\S+) tables configured/.exec(text);
    r.used = m?.[1];
    r.tail = text.split('\n').filter((l) => / ERR |SUBNET UP|failed|fall/i.test(l)).slice(-4).join('\n');
  }
  if (r.upMs !== undefined) r.exitAfterUpMs = r.exitMs - r.upMs;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Read the routes back and verify them.
async function verifyFabric(sim, simHost, dir, mods) {
  const env = clientEnv(sim, simHost);
  const d = await runClient('ibnetdiscover', [], env, dir);
  if (d.code !== 0) return { error: `ibnetdiscover failed: ${d.err.trim().split('\n').pop()}` };
  const fabric = mods.parseIbnetdiscover(d.out, 'ibnetdiscover');
  const switches = [];
  fabric.nodes.forEach((n, i) => {
    if (n.type === 2) switches.push({ i, lid: n.ports[0]?.lid ?? 0 });
  });
  const { lfts, errors, patched } = await readLfts(fabric, switches, env, dir);
  const v = mods.verifyRoutes(fabric, lfts, { stretch: false });
  return { v, errors, switches: switches.length, patched };
}

// ---------------------------------------------------------------------------------------------

const fmt = (x, d = 0) => (x === undefined || x === null || Number.isNaN(x) ? '-' : typeof x === 'number' ? x.toFixed(d) : String(x));

/** "ok": every CA pair and every switch reaches every LID, loop-free; "sw:N": CA pairs all fine
 * but N (switch, LID) routes fail; "fail:N": N CA pairs unreachable; "+loop" when routes loop. */
function reach(v) {
  if (!v) return 'n/a';
  if (v.ok) return 'ok';
  const loop = v.loopEntries ? '+loop' : '';
  return v.unreachablePairs ? `fail:${v.unreachablePairs}${loop}` : `sw:${v.unreachableFromSwitches}${loop}`;
}

function printTable(fab, rows) {
  console.log(`\n== ${fab.label}: ${fab.hosts} hosts, ${fab.switches} switches (SMs attached at ${fab.simHost ?? 'the first node'}; median of ${runs} run${runs > 1 ? 's' : ''})`);
  const head = ['SM', 'engine', 'used', 'UP ms', 'SM ms', '1st SMP', 'UP→exit', 'CPU ms', 'µs/SMP', 'sim CPU', 'SMPs', 'LFT sets', 'PI sets', 'drops', 'RSS MB', 'max r/l', 'mean r/l', 'reach'];
  const w = [7, 7, 7, 8, 7, 8, 8, 8, 7, 8, 8, 8, 7, 6, 7, 8, 9, 9];
  const line = (cells) => console.log(cells.map((c, i) => (i < 3 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join(' '));
  line(head);
  for (const r of rows) {
    const v = r.verify?.v;
    line([
      r.sm,
      r.engine,
      r.code === 0 ? (r.used ?? '?') : `exit ${r.code ?? r.signal}`,
      fmt(r.upMs),
      fmt(r.smMs),
      fmt(r.firstSmpMs),
      fmt(r.exitAfterUpMs),
      fmt(r.cpuMs),
      fmt(r.usPerSmp, 1),
      fmt(r.simCpuMs),
      fmt(r.counts?.smps),
      fmt(r.counts?.lftSets),
      fmt(r.counts?.portInfoSets),
      fmt(r.counts ? r.counts.badStatus + r.counts.sendErrors : undefined),
      fmt(r.rssMB, 1),
      fmt(v?.linkLoad.max),
      fmt(v?.linkLoad.mean, 1),
      reach(v),
    ]);
  }
  for (const e of engines) {
    const b = rows.find((r) => r.sm === 'opensm' && r.engine === e);
    if (!b) continue;
    for (const a of rows.filter((r) => r.sm.startsWith('ibsm') && r.engine === e)) {
      const ratio = (x, y) => (x && y ? (x / y).toFixed(2) : '-');
      console.log(
        `   ${e}: ${a.sm}/OpenSM  UP time ${ratio(a.upMs, b.upMs)}x   CPU ${ratio(a.cpuMs, b.cpuMs)}x   CPU/SMP ${ratio(a.usPerSmp, b.usPerSmp)}x   RSS ${ratio(a.rssMB, b.rssMB)}x   SMPs ${ratio(a.counts?.smps, b.counts?.smps)}x   LFT sets ${ratio(a.counts?.lftSets, b.counts?.lftSets)}x   max routes/link ${ratio(a.verify?.v?.linkLoad.max, b.verify?.v?.linkLoad.max)}x`,
      );
    }
  }
}

/** One row of medians from the runs of one SM and engine (counts and the routes: the first run's). */
function medianRow(list) {
  const ok = list.filter((r) => r.upMs !== undefined);
  const use = ok.length ? ok : list;
  const med = (k) => {
    const xs = use.map((r) => r[k]).filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
    return xs.length ? (xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2) : undefined;
  };
  const first = use[0];
  const row = { ...first, verify: list.find((r) => r.verify)?.verify };
  for (const k of ['upMs', 'smMs', 'firstSmpMs', 'exitAfterUpMs', 'exitMs', 'cpuMs', 'usPerSmp', 'simCpuMs', 'rssMB']) row[k] = med(k);
  if (first.counts) {
    row.counts = { ...first.counts };
    for (const k of ['smps', 'lftSets', 'portInfoSets', 'badStatus', 'sendErrors']) {
      const xs = use.map((r) => r.counts?.[k]).filter((x) => x !== undefined).sort((a, b) => a - b);
      row.counts[k] = xs[(xs.length - 1) >> 1];
    }
  }
  if (list.some((r) => r.code !== 0)) row.code = list.find((r) => r.code !== 0).code ?? row.code;
  return row;
}

function printDetail(rows) {
  const keys = new Set();
  for (const r of rows) for (const k of r.counts?.byKey.keys() ?? []) keys.add(k);
  const cols = rows.map((r) => `${r.sm}/${r.engine}`);
  console.log('   sends per (class, method, attribute):');
  console.log('   ' + ''.padEnd(34) + cols.map((c) => c.padStart(14)).join(''));
  for (const k of [...keys].sort((a, b) => a - b)) console.log('   ' + describeKey(k).padEnd(34) + rows.map((r) => String(r.counts?.byKey.get(k) ?? 0).padStart(14)).join(''));
}

/** The idle phase of one fabric: --runs runs of each SM, interleaved; medians printed. */
async function idlePhase(fab, dir, shim) {
  const byKind = new Map(sms.map((k) => [k, []]));
  for (let run = 0; run < runs; run++) {
    for (const kind of sms) {
      const cli = { cliFile, cliIsBin: cliIsBin && !ibsmNodeFlags.length };
      const r = await idleRun(kind, fab, { dir, shim, ...cli, nodeFlags: ibsmNodeFlags, readCounts, seconds: idleSeconds, intervalS: idleInterval, settleS: idleSettle, topo: fab.topo }).catch((e) => (console.log(`   idle ${kind}: ${e.message}`), undefined));
      if (!r) continue;
      byKind.get(kind).push(r);
      process.stderr.write(`   [${fab.key}] idle ${kind} run ${run + 1}: up ${fmt(r.upMs)} ms, CPU ${fmt(r.cpuPerMin)} ms/min, ibsim CPU ${fmt(r.simCpuPerMin)} ms/min, ${fmt(r.smpsPerMin)} SMPs/min, cut ${r.cut?.what}: last LFT Set after ${fmt(r.cut?.ms)} ms (${fmt(r.cut?.lft)} LFT Sets, ${fmt(r.cut?.smps)} SMPs); CPU ms/min by thread ${JSON.stringify(r.threads ?? {})}\n`);
    }
  }
  printIdle(fab, sms.filter((k) => byKind.get(k).length).map((k) => medianIdle(byKind.get(k))), idleInterval, idleSeconds);
}

async function main() {
  need();
  const mods = {
    ...(await dist('model/load.js')),
    ...(await dist('model/ibnetdiscover.js')),
    ...(await dist('routing/verify.js')),
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-sm-bench-'));
  const shim = buildShim(dir);
  console.log(`ibsm vs OpenSM on ibsim (fresh ibsim per run; counts from the umad_send shim; ibsm is ${path.relative(process.cwd(), cliFile) || cliFile}; scratch ${dir})`);
  console.log('UP ms: process start to the SUBNET UP log line; SM ms: ibsm\'s own ms=; 1st SMP: process start to the first umad_send; UP→exit: SUBNET UP to exit;');
  console.log('CPU ms: user + system at exit (every thread); µs/SMP: CPU ms per SMP sent; sim CPU: ibsim\'s CPU ms while the SM ran; drops: sends returned with an error status; RSS: peak;');
  console.log('max/mean r/l: verifier routes per directed switch-to-switch link, on LFTs read back with ibroute;');
  console.log('reach: ok = every CA pair and every switch reaches every LID; sw:N = CA pairs ok, N (switch, LID) routes fail; fail:N = N CA pairs unreachable.');
  try {
    for (const key of fabricKeys) {
      const fab = prepareFabric(FABRICS, key, dir, mods);
      if (phases.includes('idle')) await idlePhase(fab, dir, shim);
      if (!phases.includes('once')) continue;
      const rows = [];
      for (const engine of engines) {
        const byKind = new Map(sms.map((k) => [k, []]));
        for (let run = 0; run < runs; run++) {
          for (const smKind of sms) {
            let sim;
            try {
              sim = await startIbsim(fab.netFile, { dir, limits: fab.limits, prefix: 'h9bench' });
            } catch (e) {
              console.log(`${fab.label}: ${e.message}`);
              break;
            }
            try {
              const r = await runSm(smKind, engine, sim, fab.simHost, shim, dir);
              if (run === 0 && !flag('--no-verify') && (r.code === 0 || r.upMs !== undefined)) r.verify = await verifyFabric(sim, fab.simHost, dir, mods);
              if (r.code !== 0 || r.upMs === undefined) console.log(`   ${smKind}/${engine} exit ${r.code ?? r.signal}:\n${r.tail}`);
              if (r.verify?.errors?.length) console.log(`   ${smKind}/${engine}: ${r.verify.errors.length} LFT read errors, e.g. ${r.verify.errors[0]}`);
              if (r.verify?.patched) console.log(`   ${smKind}/${engine}: top LID a multiple of 64: the last LFT block of ${r.verify.patched} switches read with smpdump (ibroute skips it)`);
              const v = r.verify?.v;
              if (v && !v.ok && v.failures[0]) console.log(`   ${smKind}/${engine}: ${v.failureGroups} route failure groups, e.g. ${v.failures[0].kind} to LID ${v.failures[0].dlid} at ${v.failures[0].at}: ${v.failures[0].detail} (${v.failures[0].switches} switches)`);
              if (r.verify?.error) console.log(`   ${smKind}/${engine}: ${r.verify.error}`);
              byKind.get(smKind).push(r);
              process.stderr.write(`   [${fab.key}] ${smKind}/${engine} run ${run + 1}: up ${fmt(r.upMs)} ms, first SMP ${fmt(r.firstSmpMs)} ms, exit ${fmt(r.exitAfterUpMs)} ms after UP, ${fmt(r.counts?.smps)} SMPs, CPU ${fmt(r.cpuMs)} ms, sim CPU ${fmt(r.simCpuMs)} ms, RSS ${fmt(r.rssMB, 1)} MB\n`);
            } finally {
              await sim.stop();
            }
          }
        }
        for (const k of sms) if (byKind.get(k).length) rows.push(medianRow(byKind.get(k)));
      }
      printTable(fab, rows);
      if (flag('--detail')) printDetail(rows);
    }
    console.log('\nIn-process routing time and memory per engine (fat trees of ~10,000 and ~50,000 end ports): node scripts/bench/routing.mjs');
  } finally {
    if (!flag('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}

await main();

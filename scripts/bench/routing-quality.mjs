#!/usr/bin/env node
// Routing quality on ibsim fabrics, ibsm and OpenSM side by side: for every (SM, engine) a fresh
// ibsim, one SM sweep, then the tables read back with the real tools: ibnetdiscover (the fabric
// and LIDs), ibroute (every switch's LFT), PathRecord Gets (the SL of every source→destination
// pair, for engines that use more than one VL: sl-readback.mjs) and smpquery sl2vl (one switch's table). The
// project's verifier (dist/routing/verify.js) then gives, on both SMs' tables alike: routes per
// directed switch-to-switch link (max/mean), VLs used, reachability and deadlock freedom (CDG
// cycles per VL). Routing time: ibsm's "routing done ms=" log field; OpenSM's from its log
// (ucast manager start to "tables configured"). Prints one table per fabric; asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/routing-quality.mjs [options]
//     --fabrics ft3-large,torus,rrg     which fabrics (default: all three)
//     --opensm nue,torus-2QoS,dor,dfsssp,ftree,updn,minhop   OpenSM engines (default: all)
//     --ibsm default,nue,torus,ftree    ibsm engines ("default" = the default chain)
//     --no-sl                           skip the PathRecord SL read-back (deadlock freedom then
//                                       only for one-VL engines)
//     --keep                            keep the scratch directory
// Deadlock freedom of multi-VL tables needs every pair's SL: when the SA does not answer every
// pair's Get, the column shows "?SL n%" (the share of CA pairs whose SL was read) instead of a
// verdict. Tables with per-port SL2VL (ibsm's 2-VL torus, OpenSM's torus-2QoS) are not judged
// right yet: one switch's sl2vl pair is read. One-VL tables (SL2VL maps every SL to one VL)
// need no SLs.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild, clientEnv, runClient, UMAD2SIM } from './ibsim.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const distDir = path.join(here, '../../dist');
const argv = process.argv.slice(2);
const opt = (name, def) => {
  const i = argv.indexOf(name);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : def;
};
const flag = (name) => argv.includes(name);
const FABRICS = {
  'ft3-large': { label: 'ft3-large', spec: 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12' },
  torus: { label: 'torus 6x6x6', spec: 'gen:torus:6x6x6,hosts=4', dims: [6, 6, 6] },
  rrg: { label: 'rrg-200', spec: 'gen:random:switches=200,degree=8,hosts=8,seed=1' },
  smoke: { label: 'smoke test: torus 5x5x3', spec: 'gen:torus:5x5x3,hosts=1', dims: [5, 5, 3] },
};
const fabricKeys = opt('--fabrics', 'ft3-large,torus,rrg').split(',').filter(Boolean);
const osmEngines = opt('--opensm', 'nue,torus-2QoS,dor,dfsssp,ftree,updn,minhop').split(',').filter(Boolean);
const ibsmEngines = opt('--ibsm', 'default').split(',').filter(Boolean);
const withSl = !flag('--no-sl');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);

function need() {
  const missing = [];
  for (const c of ['ibsim', 'ibroute', 'ibnetdiscover', 'saquery', 'smpquery', 'opensm']) if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) missing.push(c);
  if (!existsSync(UMAD2SIM)) missing.push(UMAD2SIM);
  if (missing.length) throw new Error(`missing: ${missing.join(', ')} (apt-get install ibsim-utils infiniband-diags opensm)`);
  if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error(`${distDir}/cli/main.js not found: run "npx tsc -p tsconfig.json" first`);
}

// ---- ibsim and preloaded clients (as in sm-vs-opensm.mjs) ------------------------------------

// ---- one SM run --------------------------------------------------------------------------------
const MONTHS = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
function osmTime(line) {
  const m = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6})/.exec(line);
  if (!m) return undefined;
  const d = new Date();
  d.setMonth(MONTHS[m[1]], Number(m[2]));
  d.setHours(Number(m[3]), Number(m[4]), Number(m[5]), 0);
  return d.getTime() + Number(m[6]) / 1000;
}

/** OpenSM options for an engine: nue and dfsssp get 8 VLs, torus-2QoS a torus config. */
function osmOptions(engine, fab, dir) {
  const lines = ['max_op_vls 8', 'nue_max_num_vls 8', 'force_log_flush TRUE'];
  if (engine === 'torus-2QoS' && fab.dims) {
    const byDesc = new Map(fab.fabric.nodes.map((n) => [n.desc, n.guid]));
    const g = (c) => '0x' + byDesc.get(`sw-${c.join('-')}`).toString(16).padStart(16, '0');
    const conf = path.join(dir, 'torus-2QoS.conf');
    writeFileSync(conf, [`torus ${fab.dims.join(' ')}`, `xp_link ${g([0, 0, 0])} ${g([1, 0, 0])}`, `yp_link ${g([0, 0, 0])} ${g([0, 1, 0])}`, `zp_link ${g([0, 0, 0])} ${g([0, 0, 1])}`, ''].join('\n'));
    lines.push(`torus_config ${conf}`, 'qos TRUE');
  }
  const file = path.join(dir, `opensm-${engine}.conf`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** Start one SM, wait for SUBNET UP, read everything back while it (and its SA) still runs,
 *  then stop it by PID (SIGTERM, then SIGKILL: OpenSM may need it). */
async function runSm(kind, engine, sim, fab, dir, mods) {
  const cache = path.join(dir, `${kind}-${engine}.cache`);
  mkdirSync(cache, { recursive: true });
  const osmLog = path.join(cache, 'osm.log');
  const env = clientEnv(sim, fab.simHost, { OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache });
  const [cmd, args] =
    kind === 'ibsm'
      ? [process.execPath, [path.join(distDir, 'cli/main.js'), 'run', '--umad', '--routing', engine === 'default' ? mods.DEFAULT_FALLBACK.join(',') : engine, '--guid2lid', path.join(cache, 'guid2lid'), '--sweep-interval', '0']]
      : ['opensm', ['-R', engine, '-F', osmOptions(engine, fab, dir), '-f', osmLog, '-s', '0', '--dump_files_dir', cache]];
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const logText = () => (kind === 'ibsm' ? out : existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '');
  const deadline = Date.now() + 900_000;
  while (!logText().includes('SUBNET UP') && child.exitCode === null && child.signalCode === null && Date.now() < deadline) await sleep(200);
  const text = logText();
  const r = { sm: kind, engine, up: text.includes('SUBNET UP') };
  if (kind === 'ibsm') {
    const line = text.split('\n').find((l) => l.includes('routing done'));
    r.used = /engine=(\S+)/.exec(line ?? '')?.[1];
    r.routeMs = Number(/ ms=(\d+)/.exec(line ?? '')?.[1]);
    r.errors = text.split('\n').filter((l) => /\berror\b|ERR/i.test(l)).slice(0, 3);
  } else {
    const lines = text.split('\n');
    const done = lines.findIndex((l) => /tables configured/.test(l));
    // The unicast manager's first line before "tables configured" (the engine's own start line).
    let start = -1;
    for (let i = done - 1; i >= 0; i--) if (/ucast_mgr|osm_ucast|routing engine|build_lid_matrices/i.test(lines[i])) start = i;
    r.used = /: (\S+) tables configured/.exec(lines[done] ?? '')?.[1] ?? /(\S+) tables configured/.exec(lines[done] ?? '')?.[1];
    if (start >= 0 && done >= 0) r.routeMs = osmTime(lines[done]) - osmTime(lines[start]);
    r.errors = lines.filter((l) => / ERR /.test(l)).slice(0, 3).map((l) => l.replace(/^.*? ERR /, 'ERR '));
  }
  try {
    if (r.up) r.rb = await readBack(sim, fab, dir, mods);
  } finally {
    await stopChild(child);
  }
  if (!r.up) r.errors = [...(r.errors ?? []), ...out.trim().split('\n').slice(-2)];
  return r;
}

/** Read the fabric, LFTs, SLs and one SL2VL table back; verify with the project's verifier. */
async function readBack(sim, fab, dir, mods) {
  const env = clientEnv(sim, fab.simHost);
  const d = await runClient('ibnetdiscover', [], env, dir, 600_000);
  if (d.code !== 0) return { error: `ibnetdiscover failed: ${d.err.trim().split('\n').pop()}` };
  const fabric = mods.parseIbnetdiscover(d.out, 'ibnetdiscover');
  const switches = [];
  fabric.nodes.forEach((n, i) => n.type === 2 && switches.push({ i, lid: n.ports[0]?.lid ?? 0 }));
  const lfts = new Map();
  const errors = [];
  const queue = switches.slice();
  const worker = async () => {
    for (let s = queue.shift(); s; s = queue.shift()) {
      const r = await runClient('ibroute', ['-n', String(s.lid)], env, dir, 600_000);
      if (r.code !== 0) {
        errors.push(`ibroute ${s.lid}: ${r.err.trim().split('\n').pop()}`);
        continue;
      }
      const entries = [...r.out.matchAll(/^0x([0-9a-f]+) (\d+)/gim)].map((m) => [parseInt(m[1], 16), Number(m[2])]);
      const t = new Uint8Array(entries.reduce((a, [l]) => Math.max(a, l), 0) + 1).fill(255);
      for (const [l, p] of entries) t[l] = p;
      lfts.set(s.i, t);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  // SL2VL of one switch port pair (uniform tables assumed; torus-2QoS programs per-port tables).
  let sl2vl;
  const sw0 = switches[0];
  const q = await runClient('smpquery', ['sl2vl', String(sw0.lid), '1', '2'], env, dir, 600_000);
  const rows = [...q.out.matchAll(/ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})/g)];
  const m = rows.find((x) => x[1] !== '0' && x[1] !== x[2]);
  if (m) sl2vl = m[3].split('|').map((x) => x.trim()).filter((x) => x !== '').map(Number);
  if (flag('--debug')) console.log(`smpquery sl2vl:\n${q.out}${q.err}`);
  // SLs per (source LID, destination LID).
  let sl;
  let slErrors = 0;
  let slError = '';
  let slCoverage = 0;
  if (withSl) {
    const caLids = [];
    for (const n of fabric.nodes) if (n.type !== 2) for (const p of n.ports) if (p?.lid) caLids.push(p.lid);
    // One PathRecord Get per pair from one preloaded process (scripts/bench/sl-readback.mjs).
    const table = new Map();
    const lidsFile = path.join(dir, 'sl-lids.json');
    const outFile = path.join(dir, 'sl-out.json');
    // destinations: every LID, switches' too (the verifier follows CA routes to switch LIDs, on their SLs)
    const allLids = [];
    for (const n of fabric.nodes) for (const p of n.ports) if (p?.lid && (n.type !== 2 || p.num === 0)) allLids.push(p.lid);
    writeFileSync(lidsFile, JSON.stringify({ sources: caLids, dests: allLids }));
    rmSync(outFile, { force: true });
    const r = await runClient(process.execPath, [path.join(here, 'sl-readback.mjs'), distDir, lidsFile, outFile], env, dir, 1_800_000);
    if (r.code !== 0 || !existsSync(outFile)) {
      slErrors = caLids.length * (allLids.length - 1);
      slError = (r.err || r.out).trim().split('\n').slice(-2).join(' ');
    } else {
      const got = JSON.parse(readFileSync(outFile, 'utf8'));
      slErrors = got.failed;
      if (got.failed) slError = `${got.failed} PathRecord Gets unanswered`;
      got.sources.forEach((s, i) => {
        const row = new Map();
        got.dests.forEach((d, j) => got.sl[i][j] !== 255 && row.set(d, got.sl[i][j]));
        table.set(s, row);
      });
      if (flag('--debug')) console.log(`SL read-back: ${got.sources.length} sources, ${got.dests.length} destinations, ${got.failed} failed, ${got.ms} ms`);
    }
    sl = (s, dl) => table.get(s)?.get(dl) ?? 0;
    let have = 0;
    for (const s of caLids) for (const d of caLids) if (s !== d && table.get(s)?.has(d)) have++;
    slCoverage = caLids.length > 1 ? have / (caLids.length * (caLids.length - 1)) : 1;
  }
  const v = mods.verifyRoutes(fabric, lfts, { stretch: false, ...(sl ? { sl } : {}), ...(sl2vl ? { sl2vl } : {}) });
  return { v, errors, slErrors, slError, sl2vl, slCoverage, multiVl: !!sl2vl && new Set(sl2vl).size > 1 };
}

const fmt = (x, d = 0) => (x === undefined || x === null || Number.isNaN(x) ? '-' : typeof x === 'number' ? x.toFixed(d) : String(x));

async function main() {
  need();
  const mods = { ...(await dist('model/load.js')), ...(await dist('model/ibnetdiscover.js')), ...(await dist('routing/verify.js')), ...(await dist('routing/registry.js')) };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-routing-quality-'));
  console.log(`routing quality, ibsm and OpenSM on the same ibsim fabrics (scratch ${dir})`);
  console.log('max/mean: routes per directed switch-to-switch link (verifier on tables read back with ibnetdiscover + ibroute);');
  console.log('VLs: VLs the routes use (SLs from saquery PathRecords, SL2VL from smpquery); deadlock-free: no CDG cycle on any VL;');
  console.log('route ms: ibsm "routing done ms=", OpenSM log from the unicast manager start to "tables configured".');
  try {
    for (const key of fabricKeys) {
      const base = FABRICS[key];
      if (!base) throw new Error(`unknown fabric "${key}" (${Object.keys(FABRICS).join(', ')})`);
      const fabric = mods.loadFabricSpec(base.spec);
      const netFile = path.join(dir, `${key}.net`);
      writeFileSync(netFile, mods.formatIbnetdiscover(fabric, { timestamp: 'routing-quality' }));
      const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(readFileSync(netFile, 'utf8'))?.[1];
      const fab = { ...base, key, fabric, netFile, simHost, limits: ibsimLimits(fabric) };
      const hosts = fabric.nodes.filter((n) => n.type !== 2).length;
      const rows = [];
      const runs = [...ibsmEngines.map((e) => ['ibsm', e]), ...osmEngines.map((e) => ['opensm', e])];
      for (const [kind, engine] of runs) {
        const sim = await startIbsim(netFile, { dir, limits: fab.limits, prefix: 'rq' });
        try {
          const r = await runSm(kind, engine, sim, fab, dir, mods);
          rows.push(r);
          process.stderr.write(`   [${key}] ${kind}/${engine}: used ${r.used ?? '-'}, max ${fmt(r.rb?.v?.linkLoad.max)}, df ${r.rb?.v?.deadlockFree}\n`);
        } finally {
          await sim.stop();
        }
      }
      console.log(`\n== ${fab.label} (${base.spec}): ${hosts} hosts, ${fabric.nodes.length - hosts} switches`);
      const w = [7, 11, 11, 9, 9, 4, 9, 6, 9];
      const line = (cells) => console.log(cells.map((c, i) => (i < 3 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join(' '));
      line(['SM', 'engine', 'used', 'max r/l', 'mean r/l', 'VLs', 'deadlock', 'reach', 'route ms']);
      for (const r of rows) {
        const v = r.rb?.v;
        line([r.sm, r.engine, r.up ? (r.used ?? '?') : 'no SUBNET UP', fmt(v?.linkLoad.max), fmt(v?.linkLoad.mean, 1), fmt(v?.vlsUsed), v ? (r.rb.multiVl && r.rb.slCoverage < 1 ? `?SL ${(100 * r.rb.slCoverage).toFixed(0)}%` : v.deadlockFree ? 'free' : 'CYCLES') : '-', v ? (v.unreachablePairs || v.loopEntries ? `fail:${v.unreachablePairs}` : 'ok') : '-', fmt(r.routeMs)]);
        for (const e of r.errors ?? []) console.log(`        ${e}`);
        if (r.rb?.errors?.length) console.log(`        ${r.rb.errors.length} LFT read errors, e.g. ${r.rb.errors[0]}`);
        if (flag('--debug')) console.log(`        sl2vl ${r.rb?.sl2vl?.join(',')}; ${JSON.stringify(v?.cdg?.map((c) => [c.vl, c.cyclicComponents]))}`);
        if (r.rb?.slErrors) console.log(`        ${r.rb.slErrors} PathRecord queries failed (their SLs taken as 0), e.g. ${r.rb.slError}`);
      }
    }
  } finally {
    if (!flag('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}

await main();

#!/usr/bin/env node
// Routing quality on ibsim fabrics, ibsm and OpenSM side by side: for every (SM, engine) a fresh
// ibsim, one SM sweep, then the tables read back from the switches while the SM still runs:
// ibnetdiscover (the fabric and LIDs), ibroute (every switch's LFT), every switch's SL2VL table by
// (in port, out port) (SMP Gets from one process, sl2vl-readback.mjs; a few switches compared with
// `smpquery sl2vl`), and, when some SL2VL table maps SLs to different VLs, the SL of every CA →
// LID pair (PathRecord Gets, sl-readback.mjs). The project's verifier (dist/routing/verify.js)
// then gives, on both SMs' tables alike: routes per directed switch-to-switch link (max/mean),
// VLs used, reachability and deadlock freedom (cycles of the channel dependency graph over
// (link, VL), the VL taken per hop from the tables read), once over routes to every LID and once
// over routes to CA LIDs only. Beside each fabric: lower bounds of the busiest link from the
// topology (routing-bounds.mjs) and, on fat trees, the busiest link per layer. Routing time:
// ibsm's "routing done ms=" log field; OpenSM's from its log (ucast manager start to "tables
// configured"), median of --runs runs (the read-back only after the first). Asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/routing-quality.mjs [options]
//     --fabrics ft3-large,torus,rrg     which fabrics (default: these three; small ones to try
//                                       the bench: ft-small, torus4, smoke)
//     --opensm nue,torus-2QoS,dor,dfsssp,ftree,updn,minhop   OpenSM engines (default: all)
//     --ibsm default,nue,...            ibsm engines ("default" = the default chain; default:
//                                       default,nue,dfsssp,updn,minhop)
//     --runs N                          runs per SM and engine for the routing time (default 3)
//     --no-sl                           skip the PathRecord SL read-back (multi-VL verdicts then "?SL")
//     --spot N                          switches whose SL2VL tables smpquery checks (default 2)
//     --dir PREFIX                      scratch directory prefix (default $TMPDIR/routing-quality-)
//     --keep                            keep the scratch directory
// OpenSM runs with `max_op_vls 8`; nue with `nue_max_num_vls 8` and QoS on (`qos TRUE`,
// `qos_max_vls 8`, SL n → VL n): its man page requires QoS when nue uses more than one VL, else
// its layers' SLs all reach VL 0 (ibsim's default SL2VL table) and the tables can deadlock.
// torus-2QoS gets a torus config and QoS on. dfsssp programs its own SL2VL tables.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild, clientEnv, runClient, UMAD2SIM } from './ibsim.mjs';
import { loadBoundsModules, loadByLayer, topologyBounds } from './routing-bounds.mjs';
import { readLfts } from './lft-readback.mjs';
import { killOnInterrupt } from './procs.mjs';
import { opt, flag } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const distDir = path.join(here, '../../dist');
const FABRICS = {
  'ft3-large': { label: 'ft3-large', spec: 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12' },
  torus: { label: 'torus 6x6x6', spec: 'gen:torus:6x6x6,hosts=4', dims: [6, 6, 6] },
  rrg: { label: 'rrg-200', spec: 'gen:random:switches=200,degree=8,hosts=8,seed=1' },
  smoke: { label: 'smoke test: torus 5x5x3', spec: 'gen:torus:5x5x3,hosts=1', dims: [5, 5, 3] },
  'ft-small': { label: 'ft-small', spec: 'gen:fattree3:pods=4,leaves=4,spines=2,cores=4,hosts=3' },
  torus4: { label: 'torus 4x4x4', spec: 'gen:torus:4x4x4,hosts=2', dims: [4, 4, 4] },
};
const fabricKeys = opt('--fabrics', 'ft3-large,torus,rrg').split(',').filter(Boolean);
const osmEngines = opt('--opensm', 'nue,torus-2QoS,dor,dfsssp,ftree,updn,minhop').split(',').filter(Boolean);
const ibsmEngines = opt('--ibsm', 'default,nue,dfsssp,updn,minhop').split(',').filter(Boolean);
const withSl = !flag('--no-sl');
const runs = Math.max(1, Number(opt('--runs', '3')));
// OpenSM engines run with QoS on (see the header).
const qosEngines = opt('--qos', 'nue,torus-2QoS').split(',');
let runCounter = 0;
// Children alive (the SM, ibsim), killed by PID if this bench is interrupted.
const live = new Set();
killOnInterrupt(live);
// "E-noqos": OpenSM engine E with QoS off whatever --qos says (nue then routes on 1 VL: WRN NUE48).
const noQos = (e) => e.endsWith('-noqos');
const osmEngine = (e) => e.replace(/-noqos$/, '');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);

function need() {
  const missing = [];
  for (const c of ['ibsim', 'ibroute', 'ibnetdiscover', 'smpdump', 'smpquery', 'opensm']) if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) missing.push(c);
  if (!existsSync(UMAD2SIM)) missing.push(UMAD2SIM);
  if (missing.length) throw new Error(`missing: ${missing.join(', ')} (apt-get install ibsim-utils infiniband-diags opensm)`);
  if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error(`${distDir}/cli/main.js not found: run "npx tsc -p tsconfig.json" first`);
}

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

/** OpenSM options for an engine: 8 VLs; QoS with SL n → VL n for the --qos engines (nue: its
 *  layers are SLs), torus-2QoS a torus config and QoS (it programs its own SL2VL tables). */
function osmOptions(engine, fab, dir) {
  const lines = ['max_op_vls 8', 'nue_max_num_vls 8', 'force_log_flush TRUE'];
  if (qosEngines.includes(engine) && engine !== 'torus-2QoS' && !noQos(engine)) lines.push('qos TRUE', 'qos_max_vls 8', 'qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7');
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
async function runSm(kind, engine, sim, fab, dir, mods, withReadBack) {
  const cache = path.join(dir, `${kind}-${engine}-${runCounter++}.cache`);
  mkdirSync(cache, { recursive: true });
  const osmLog = path.join(cache, 'osm.log');
  const env = clientEnv(sim, fab.simHost, { OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache });
  const [cmd, args] =
    kind === 'ibsm'
      ? [process.execPath, [path.join(distDir, 'cli/main.js'), 'run', '--umad', '--routing', engine === 'default' ? mods.DEFAULT_FALLBACK.join(',') : engine, '--guid2lid', path.join(cache, 'guid2lid'), '--sweep-interval', '0']]
      : ['opensm', ['-R', osmEngine(engine), '-F', osmOptions(engine, fab, dir), '-f', osmLog, '-s', '0', '-D', '0x07', '--dump_files_dir', cache]];
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  live.add(child.pid);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const logText = () => (kind === 'ibsm' ? out : existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '');
  try {
    const deadline = Date.now() + 900_000;
    while (!logText().includes('SUBNET UP') && child.exitCode === null && child.signalCode === null && Date.now() < deadline) {
      if (!existsSync(cache)) throw new Error(`scratch directory ${cache} vanished (removed by another process?)`);
      await sleep(200);
    }
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
      // The unicast manager's "building routing with 'E' routing algorithm" (a VERBOSE line: -D 0x07)
      // of the first engine tried (a fallback's time includes the failed engine's, as ibsm's does).
      const first = lines.findIndex((l) => /building routing with/.test(l));
      const start = first >= 0 && first < done ? first : -1;
      r.used = /: (\S+) tables configured/.exec(lines[done] ?? '')?.[1] ?? /(\S+) tables configured/.exec(lines[done] ?? '')?.[1];
      if (start >= 0 && done >= 0) r.routeMs = osmTime(lines[done]) - osmTime(lines[start]);
      r.errors = lines.filter((l) => / ERR /.test(l)).slice(0, 3).map((l) => l.replace(/^.*? ERR /, 'ERR '));
    }
    if (r.up && withReadBack) r.rb = await readBack(sim, fab, dir, mods);
    if (!r.up) r.errors = [...(r.errors ?? []), ...out.trim().split('\n').slice(-2)];
    return r;
  } finally {
    await stopChild(child);
    live.delete(child.pid);
  }
}

/** Every switch's SL2VL tables by (in, out) port (sl2vl-readback.mjs, a batched SMP reader), a
 *  few switches' compared with `smpquery sl2vl`; as the verifier's sl2vlByPorts. `slMatters`:
 *  some table maps two SLs to different VLs (else a route's VL does not depend on its SL). */
async function readSl2vl(env, dir, fabric, switches) {
  const inFile = path.join(dir, 'sl2vl-in.json');
  const outFile = path.join(dir, 'sl2vl-out.json');
  const linked = (n) => n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
  writeFileSync(inFile, JSON.stringify({ switches: switches.map((s) => ({ lid: s.lid, ports: linked(fabric.nodes[s.i]) })) }));
  rmSync(outFile, { force: true });
  const r = await runClient(process.execPath, [path.join(here, 'sl2vl-readback.mjs'), distDir, inFile, outFile], env, dir, 1_800_000);
  if (r.code !== 0 || !existsSync(outFile)) return { error: `sl2vl-readback failed: ${(r.err || r.out).trim().split('\n').slice(-2).join(' ')}` };
  const got = JSON.parse(readFileSync(outFile, 'utf8'));
  const byPorts = new Map();
  const vlsSeen = new Set();
  let slMatters = false;
  let pairs = 0;
  switches.forEach((s, k) => {
    const stride = fabric.nodes[s.i].ports.length;
    const vl = new Uint8Array(stride * stride * 16);
    const t = got.tables[k];
    t.pairs.forEach(([inP, outP], j) => {
      const row = t.vls[j];
      if (!row) return;
      pairs++;
      vl.set(row, (inP * stride + outP) * 16);
      for (const x of row) vlsSeen.add(x);
      if (row.some((x) => x !== row[0])) slMatters = true;
    });
    byPorts.set(s.i, { stride, vl });
  });
  // The witness: `smpquery sl2vl LID OUT` (every in port of one out port per call) on a few switches.
  let compared = 0;
  const mismatches = [];
  const spot = Number(opt('--spot', '2'));
  for (const s of switches.filter((_, k) => k % Math.max(1, Math.floor(switches.length / spot)) === 0).slice(0, spot)) {
    const t = byPorts.get(s.i);
    for (const outP of linked(fabric.nodes[s.i])) {
      const q = await runClient('smpquery', ['sl2vl', String(s.lid), String(outP)], env, dir, 120_000);
      for (const m of q.out.matchAll(/ports: in\s+(\d+), out\s+(\d+):\s*\|((?:\s*\d+\|){16})/g)) {
        const inP = Number(m[1]);
        if (inP === 0 || inP === outP || Number(m[2]) !== outP || !fabric.nodes[s.i].ports[inP]?.peer) continue;
        const want = m[3].split('|').map((x) => x.trim()).filter((x) => x !== '').map(Number);
        const have = [...t.vl.subarray((inP * t.stride + outP) * 16, (inP * t.stride + outP + 1) * 16)];
        compared++;
        if (want.join() !== have.join()) mismatches.push(`LID ${s.lid} in ${inP} out ${outP}: smpquery ${want.join(',')}, read ${have.join(',')}`);
      }
    }
  }
  return { byPorts, slMatters, vls: [...vlsSeen].sort((a, b) => a - b), pairs, failed: got.failed, firstError: got.firstError, ms: got.ms, compared, mismatches };
}

/** The SL of CA source LID → every LID (switches' too: the verifier follows CA routes to switch
 *  LIDs, on their SLs), by PathRecord Gets (sl-readback.mjs). Read for one CA per switch to every
 *  LID, then checked on a sample of the other CAs' pairs (a quarter as many Gets); when one of
 *  them differs from its switch's CA, every pair is read. */
async function readSls(env, dir, fabric) {
  const allLids = [];
  const caLids = [];
  const swOfCa = new Map();
  const rep = new Map();
  fabric.nodes.forEach((n) => {
    for (const p of n.ports) {
      if (!p?.lid || (n.type === 2 && p.num !== 0)) continue;
      allLids.push(p.lid);
      if (n.type === 2) continue;
      caLids.push(p.lid);
      const sw = p.peer?.node ?? -1;
      swOfCa.set(p.lid, sw);
      if (!rep.has(sw)) rep.set(sw, p.lid);
    }
  });
  const run = async (name, input) => {
    const lidsFile = path.join(dir, `sl-${name}.json`);
    const outFile = path.join(dir, `sl-${name}-out.json`);
    writeFileSync(lidsFile, JSON.stringify(input));
    rmSync(outFile, { force: true });
    const r = await runClient(process.execPath, [path.join(here, 'sl-readback.mjs'), distDir, lidsFile, outFile], env, dir, 3_600_000);
    if (r.code !== 0 || !existsSync(outFile)) return { error: (r.err || r.out).trim().split('\n').slice(-2).join(' ') };
    return JSON.parse(readFileSync(outFile, 'utf8'));
  };
  const table = (got) => {
    const si = new Map(got.sources.map((l, i) => [l, i]));
    const di = new Map(got.dests.map((l, j) => [l, j]));
    return (s, d) => got.sl[si.get(s)]?.[di.get(d)] ?? 255;
  };
  const coverage = (get, sources) => {
    let have = 0;
    let want = 0;
    for (const s of sources) for (const d of caLids) if (s !== d) (want++, get(s, d) !== 255 && have++);
    return want ? have / want : 1;
  };
  const reps = [...rep.values()];
  const first = await run('reps', { sources: reps, dests: allLids });
  if (first.error) return { coverage: 0, error: first.error };
  const repSl = table(first);
  // The check: other CAs' pairs, spread over sources and destinations.
  const others = caLids.filter((l) => rep.get(swOfCa.get(l)) !== l);
  const want = Math.max(2000, Math.ceil((reps.length * allLids.length) / 4));
  const step = Math.max(1, Math.floor((others.length * allLids.length) / want));
  const pairs = [];
  for (let k = 0; k < others.length * allLids.length; k += step) {
    const s = others[k % others.length];
    const d = allLids[Math.floor(k / others.length)];
    if (s !== d) pairs.push([s, d]);
  }
  const check = pairs.length ? await run('check', { pairs }) : { pairs: [], sl: [], failed: 0, ms: 0 };
  if (check.error) return { coverage: 0, error: check.error };
  let differ = 0;
  check.pairs.forEach(([s, d], i) => {
    const r = repSl(rep.get(swOfCa.get(s)), d);
    if (check.sl[i] !== 255 && r !== 255 && check.sl[i] !== r) differ++;
  });
  const used = new Set([...first.sl.flat(), ...check.sl].filter((x) => x !== 255));
  const base = { checked: check.pairs.length, differ, gets: reps.length * allLids.length + check.pairs.length, ms: first.ms + check.ms, failed: first.failed + check.failed };
  if (!differ) {
    const sl = (s, d) => {
      const v = repSl(rep.get(swOfCa.get(s)) ?? s, d);
      return v === 255 ? 0 : v;
    };
    return { ...base, sl, bySwitch: true, coverage: coverage(repSl, reps), sls: [...used].sort((x, y) => x - y), error: base.failed ? `${base.failed} PathRecord Gets unanswered` : '' };
  }
  const all = await run('all', { sources: caLids, dests: allLids });
  if (all.error) return { ...base, coverage: 0, error: all.error };
  const allSl = table(all);
  const sl = (s, d) => {
    const v = allSl(s, d);
    return v === 255 ? 0 : v;
  };
  for (const x of all.sl.flat()) if (x !== 255) used.add(x);
  return { ...base, sl, bySwitch: false, gets: base.gets + caLids.length * allLids.length, ms: base.ms + all.ms, failed: all.failed, coverage: coverage(allSl, caLids), sls: [...used].sort((x, y) => x - y), error: all.failed ? `${all.failed} PathRecord Gets unanswered` : '' };
}

/** Read the fabric, LFTs, SL2VL tables and (where they matter) SLs back; verify with the
 *  project's verifier, once over every destination LID and once over CA destinations only. */
async function readBack(sim, fab, dir, mods) {
  const env = clientEnv(sim, fab.simHost);
  const t0 = Date.now();
  const d = await runClient('ibnetdiscover', [], env, dir, 600_000);
  if (d.code !== 0) return { error: `ibnetdiscover failed: ${d.err.trim().split('\n').pop()}` };
  const fabric = mods.parseIbnetdiscover(d.out, 'ibnetdiscover');
  const switches = [];
  fabric.nodes.forEach((n, i) => n.type === 2 && switches.push({ i, lid: n.ports[0]?.lid ?? 0 }));
  const { lfts, errors, patched } = await readLfts(fabric, switches, env, dir);
  const tLft = Date.now();
  const s2v = await readSl2vl(env, dir, fabric, switches);
  if (s2v.error) return { error: s2v.error, errors };
  const tS2v = Date.now();
  const sls = s2v.slMatters && withSl ? await readSls(env, dir, fabric) : undefined;
  const tSl = Date.now();
  const opts = { stretch: false, sl2vl: new Array(16).fill(0), sl2vlByPorts: s2v.byPorts, ...(sls?.sl ? { sl: sls.sl, slBySourceSwitch: sls.bySwitch } : {}) };
  const v = mods.verifyRoutes(fabric, lfts, opts);
  // CA destinations only: the switch LIDs' entries removed (their routes then fail and add no
  // channel dependency). OpenSM's nue routes switch LIDs outside its deadlock-free layers.
  const swLids = new Set(switches.map((s) => s.lid));
  const caLfts = new Map([...lfts].map(([k, t]) => [k, t.map((p, l) => (swLids.has(l) ? 255 : p))]));
  const vCa = mods.verifyRoutes(fabric, caLfts, opts);
  const b = topologyBounds(mods.bounds, fabric);
  const layers = loadByLayer(mods.bounds, b, lfts);
  const timing = { lftMs: tLft - t0, sl2vlMs: tS2v - tLft, slMs: tSl - tS2v, verifyMs: Date.now() - tSl };
  return { v, vCa, errors, patched, s2v, sls, bounds: b, layers, timing };
}

/** The deadlock cell: a verdict only when everything it depends on was read. */
function verdict(rb, v) {
  if (!v) return '-';
  if (rb.s2v.failed) return '?SL2VL';
  if (rb.s2v.slMatters && (!rb.sls || rb.sls.coverage < 1)) return `?SL ${(100 * (rb.sls?.coverage ?? 0)).toFixed(0)}%`;
  return v.deadlockFree ? 'free' : 'CYCLES';
}

const fmt = (x, d = 0) => (x === undefined || x === null || Number.isNaN(x) ? '-' : typeof x === 'number' ? x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : String(x));
const median = (xs) => {
  const a = xs.filter((x) => Number.isFinite(x)).sort((p, q) => p - q);
  return a.length ? a[Math.floor((a.length - 1) / 2)] : undefined;
};

/** The issue's goal for a fabric, judged on ibsm's default chain against the OpenSM rows of the run. */
function goals(key, rows, bounds) {
  const osm = (e) => rows.find((r) => r.sm === 'opensm' && r.engine === e && r.rb?.v);
  const ok = (c) => (c === undefined ? 'not judged' : c ? 'met' : 'NOT met');
  const out = [];
  // The goal is the default chain's (what `ibsm run` does); other engines only without a default row.
  const ibsm = rows.filter((x) => x.sm === 'ibsm' && x.rb?.v);
  for (const r of ibsm.some((x) => x.engine === 'default') ? ibsm.filter((x) => x.engine === 'default') : ibsm) {
    const v = r.rb.v;
    const df = verdict(r.rb, v);
    const name = `ibsm ${r.engine}${r.used && r.used !== r.engine ? ` (${r.used})` : ''}`;
    if (key === 'ft3-large') {
      const unreachable = bounds.bound > 2515 ? ` (no routing can: the topology's bound is ${fmt(bounds.bound)})` : '';
      out.push(`${name}: max ${fmt(v.linkLoad.max)} ≤ 2,515: ${ok(v.linkLoad.max <= 2515)}${unreachable}; ${(v.linkLoad.max / bounds.bound).toFixed(2)}× the bound${r.rb.layers.perLayer.length ? `; per layer ${r.rb.layers.perLayer.map((x, k) => `${bounds.layers[k].name} ${fmt(x)} (${(x / bounds.layers[k].cutBound).toFixed(2)}× its cut)`).join(', ')}` : ''}`);
    } else if (key === 'torus') {
      const dor = osm('dor');
      out.push(`${name}: deadlock-free ${df === 'free' ? 'yes' : df}, max ${fmt(v.linkLoad.max)} ≤ OpenSM dor's ${fmt(dor?.rb.v.linkLoad.max)}: ${ok(dor ? df === 'free' && v.linkLoad.max <= dor.rb.v.linkLoad.max : undefined)}`);
    } else if (key === 'rrg') {
      const mh = osm('minhop');
      const nue = osm('nue');
      const c = mh && nue ? df === 'free' && v.vlsUsed <= 8 && v.linkLoad.max <= 1.1 * mh.rb.v.linkLoad.max && v.linkLoad.max <= nue.rb.v.linkLoad.max : undefined;
      out.push(`${name}: deadlock-free ${df === 'free' ? 'yes' : df} on ${v.vlsUsed} VLs, max ${fmt(v.linkLoad.max)} ≤ 1.1 × OpenSM minhop's ${fmt(mh?.rb.v.linkLoad.max)} = ${fmt(mh ? 1.1 * mh.rb.v.linkLoad.max : undefined)} and ≤ OpenSM nue's ${fmt(nue?.rb.v.linkLoad.max)}: ${ok(c)}`);
    }
  }
  return out;
}

async function main() {
  need();
  const mods = { ...(await dist('model/load.js')), ...(await dist('model/ibnetdiscover.js')), ...(await dist('routing/verify.js')), ...(await dist('routing/registry.js')), bounds: await loadBoundsModules(distDir) };
  // Not /tmp/ibsm-*: other benches' scratch directories are named so (and cleaned up so).
  const dir = mkdtempSync(opt('--dir', path.join(os.tmpdir(), 'routing-quality-')));
  const tStart = Date.now();
  console.log(`routing quality, ibsm and OpenSM on the same ibsim fabrics (scratch ${dir}; ${runs} run${runs > 1 ? 's' : ''} per SM and engine)`);
  console.log('max/mean: CA-to-CA routes per directed switch-to-switch link (the verifier, on tables read back with ibnetdiscover + ibroute);');
  console.log('VLs: VLs the routes use, per hop (SL2VL of every switch by in/out port, read with SMPs; SLs from PathRecord Gets where the tables');
  console.log('  tell SLs apart); deadlock: no channel-dependency cycle on any (link, VL), over routes to every LID; CA→CA: routes to CA LIDs only;');
  console.log(`route ms: ibsm "routing done ms=", OpenSM log from "building routing with" to "tables configured"${runs > 1 ? ` (median of ${runs} [each run])` : ''}.`);
  try {
    for (const key of fabricKeys) {
      const base = FABRICS[key];
      if (!base) throw new Error(`unknown fabric "${key}" (${Object.keys(FABRICS).join(', ')})`);
      const tFab = Date.now();
      const fabric = mods.loadFabricSpec(base.spec);
      const netFile = path.join(dir, `${key}.net`);
      writeFileSync(netFile, mods.formatIbnetdiscover(fabric, { timestamp: 'routing-quality' }));
      const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(readFileSync(netFile, 'utf8'))?.[1];
      const fab = { ...base, key, fabric, netFile, simHost, limits: ibsimLimits(fabric) };
      const hosts = fabric.nodes.filter((n) => n.type !== 2).length;
      const rows = [];
      const list = [...ibsmEngines.map((e) => ['ibsm', e]), ...osmEngines.map((e) => ['opensm', e])];
      for (const [kind, engine] of list) {
        let row;
        const times = [];
        for (let run = 0; run < runs; run++) {
          const sim = await startIbsim(netFile, { dir, limits: fab.limits, prefix: 'rq' });
          live.add(sim.pid);
          try {
            const r = await runSm(kind, engine, sim, fab, dir, mods, run === 0);
            times.push(r.routeMs);
            if (run === 0) row = r;
            if (!r.up) break;
          } finally {
            await sim.stop();
            live.delete(sim.pid);
          }
        }
        row.times = times;
        rows.push(row);
        const rb = row.rb;
        process.stderr.write(`   [${key}] ${kind}/${engine}: used ${row.used ?? '-'}, max ${fmt(rb?.v?.linkLoad.max)}, ${rb?.v ? verdict(rb, rb.v) : rb?.error ?? 'no read-back'}, route ms ${times.join(' ')}; read-back ms ${JSON.stringify(rb?.timing ?? {})}\n`);
      }
      const b = rows.find((r) => r.rb?.bounds)?.rb.bounds;
      console.log(`\n== ${fab.label} (${base.spec}): ${hosts} hosts, ${fabric.nodes.length - hosts} switches (${((Date.now() - tFab) / 60000).toFixed(1)} min)`);
      if (b) {
        const parts = b.layers.map((l) => `${l.name} cut ${fmt(l.cutBound)}`);
        console.log(`lower bound of the busiest link from the topology: ${[...parts, `mean ${fmt(b.meanBound)}`].join(', ')} → ${fmt(b.bound)}`);
      }
      const layerNames = b?.layers.map((l) => l.name) ?? [];
      const head = ['SM', 'engine', 'used', 'max r/l', 'mean r/l', ...layerNames, 'VLs', 'deadlock', 'CA→CA', 'reach', 'route ms'];
      const w = head.map((h, i) => (i < 3 ? [7, 11, 11][i] : Math.max(9, h.length)));
      const line = (cells) => console.log(cells.map((c, i) => (i < 3 ? String(c).padEnd(w[i]) : String(c).padStart(w[i]))).join(' ') );
      line(head);
      for (const r of rows) {
        const rb = r.rb;
        const v = rb?.v;
        const ms = median(r.times);
        const msCell = r.times.length > 1 ? `${fmt(ms)} [${r.times.map((t) => fmt(t)).join(' ')}]` : fmt(ms);
        line([r.sm, r.engine, r.up ? (r.used ?? '?') : 'no SUBNET UP', fmt(v?.linkLoad.max), fmt(v?.linkLoad.mean, 1), ...layerNames.map((_, k) => fmt(rb?.layers?.perLayer[k])), fmt(v?.vlsUsed), rb?.v ? verdict(rb, v) : '-', rb?.vCa ? verdict(rb, rb.vCa) : '-', v ? (v.unreachablePairs || v.loopEntries ? `fail:${v.unreachablePairs}` : 'ok') : '-', msCell]);
        for (const e of r.errors ?? []) console.log(`        ${e}`);
        if (rb?.error) console.log(`        read-back: ${rb.error}`);
        if (rb?.errors?.length) console.log(`        ${rb.errors.length} LFT read errors, e.g. ${rb.errors[0]}`);
        if (rb?.patched) console.log(`        the last LFT block of ${rb.patched} switches read with smpdump (ibroute skips it: top LID a multiple of 64)`);
        if (rb?.s2v) {
          const s = rb.s2v;
          console.log(`        SL2VL: ${fmt(s.pairs)} (in, out) tables read, VLs in them ${s.vls.join(',')}${s.slMatters ? '' : ' (no table tells SLs apart: SLs not needed)'}${s.failed ? `, ${s.failed} Gets failed (${s.firstError})` : ''}; smpquery agrees on ${s.compared - s.mismatches.length} of ${s.compared}${s.mismatches.length ? `: ${s.mismatches[0]}` : ''}`);
        }
        if (rb?.sls) {
          const x = rb.sls;
          const how = x.bySwitch ? `one CA per switch to every LID, ${fmt(x.checked)} other pairs agree` : `${x.differ} of ${fmt(x.checked)} checked pairs differ from their switch's CA: every pair read`;
          console.log(`        SLs used ${x.sls?.join(',') ?? '-'} (${fmt(x.gets)} PathRecord Gets, ${fmt(x.ms / 1000, 1)} s: ${how})${x.error ? `; ${x.error}` : ''}`);
        }
        if (rb?.layers && Math.abs(rb.layers.max - v.linkLoad.max) > 0.5) console.log(`        per-link count ${rb.layers.max} differs from the verifier's max ${v.linkLoad.max}`);
        if (flag("--debug") && v) console.log(`        failures ${JSON.stringify(v.failures.slice(0, 2))}`);
        if (flag("--debug") && v) console.log(`        cdg ${JSON.stringify(v.cdg.map((c) => [c.vl, c.cyclicComponents]))}; CA→CA ${JSON.stringify(rb.vCa.cdg.map((c) => [c.vl, c.cyclicComponents]))}`);
      }
      for (const g of goals(key, rows, b ?? { bound: NaN })) console.log(`goal: ${g}`);
    }
    console.log(`\nfull run: ${((Date.now() - tStart) / 60000).toFixed(1)} min`);
  } finally {
    if (!flag('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}

await main();

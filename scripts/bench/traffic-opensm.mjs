#!/usr/bin/env node
// Routing judged by the traffic it carries (issue #35), ibsm and OpenSM side by side: on each
// fabric, OpenSM runs each engine on a fresh ibsim; once SUBNET UP, the fabric and LIDs are read
// back with ibnetdiscover and every switch's LFT with ibroute (lft-readback.mjs, as
// routing-quality.mjs does); ibsm's engines route the same fabric in-process (the tables its SM
// would program). The project's traffic evaluator (dist/routing/traffic.js) then gives, on both
// alike, the per-flow bandwidth normalised to the injection rate for random bisections (EBB) and
// all-to-all (shift phases): mean and min/p1/p50. Hosts are counted in port GUID order on both,
// so shifts mean the same hosts. Deadlock freedom per row: the verifier's CDG verdict on the
// tables (ibsm's with their SLs and VLs; OpenSM's over one VL: minhop, updn, ftree); OpenSM's
// multi-VL engines (dfsssp, nue with 8 VLs) are taken as they claim (routing-quality.mjs checks
// them with SL2VL read-back). Asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/traffic-opensm.mjs [options]
//     --fabrics ft2,ft2-over,...   which fabrics (default: all of FABRICS below)
//     --opensm minhop,updn,ftree,dfsssp,nue   OpenSM engines (default: these)
//     --ibsm default,ftree,...     ibsm engines ("default" = the default chain; default: default
//                                  and every engine)
//     --samples N                  EBB bisections (default 100)
//     --seeds 1,2,3,4,5            EBB at each seed of the bisections (default 1): the EBB
//                                  column and the goals take the median over them, and a line
//                                  per set of tables gives each seed's figure
//     --save DIR                   write OpenSM's tables there (<fabric>-<engine>.json: its
//                                  ibnetdiscover text and every switch's LFT) for analysis
//     --a2a N                      all-to-all shift phases at most (default 1000: all on the
//                                  smaller fabrics, evenly spaced on the larger)
//     --dir PREFIX                 scratch directory prefix; --keep keeps it
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild, clientEnv, runClient, UMAD2SIM } from './ibsim.mjs';
import { readLfts } from './lft-readback.mjs';
import { killOnInterrupt } from './procs.mjs';
import { opt, flag } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const distDir = path.join(here, '../../dist');
const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The routing-quality set (#35): fat trees of 2 and 3 levels (non-blocking, oversubscribed,
 *  degraded), a 6x6x6 torus, rrg-200, a dragonfly. `drop`: every drop-th switch-to-switch link
 *  cut (a degraded tree). `nonBlocking`: the shift goal applies. */
const FABRICS = {
  ft2: { spec: 'gen:fattree2:leaves=16,spines=8,hosts=8', nonBlocking: true },
  'ft2-over': { spec: 'gen:fattree2:leaves=16,spines=4,hosts=8' },
  ft3: { spec: 'gen:fattree3:radix=8', nonBlocking: true },
  'ft3-large': { spec: 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12' },
  'ft3-degraded': { spec: 'gen:fattree3:radix=8', drop: 23 },
  torus: { spec: 'gen:torus:6x6x6,hosts=4' },
  rrg: { spec: 'gen:random:switches=200,degree=8,hosts=8,seed=1' },
  dragonfly: { spec: 'gen:dragonfly:a=6,p=3,h=3' },
};
const fabricKeys = opt('--fabrics', Object.keys(FABRICS).join(',')).split(',').filter(Boolean);
const osmEngines = opt('--opensm', 'minhop,updn,ftree,dfsssp,nue').split(',').filter(Boolean);
const samples = Number(opt('--samples', '100'));
const seeds = opt('--seeds', '1').split(',').filter(Boolean).map(Number);
const saveDir = opt('--save', '');
const a2a = Number(opt('--a2a', '1000'));
const live = new Set();
killOnInterrupt(live);

function need() {
  const missing = [];
  for (const c of ['ibsim', 'ibroute', 'ibnetdiscover', 'opensm']) if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) missing.push(c);
  if (!existsSync(UMAD2SIM)) missing.push(UMAD2SIM);
  if (missing.length) throw new Error(`missing: ${missing.join(', ')} (apt-get install ibsim-utils infiniband-diags opensm)`);
}

/** OpenSM with 8 VLs; nue with QoS on and SL n → VL n (its layers are SLs: routing-quality.mjs). */
function osmConf(engine, dir) {
  const lines = ['max_op_vls 8', 'nue_max_num_vls 8', 'force_log_flush TRUE'];
  if (engine === 'nue') lines.push('qos TRUE', 'qos_max_vls 8', 'qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7');
  const file = path.join(dir, `opensm-${engine}.conf`);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

/** One OpenSM run: SUBNET UP, the fabric and LFTs read back, OpenSM stopped by PID. */
async function runOpenSm(engine, fab, dir, mods) {
  const sim = await startIbsim(fab.netFile, { dir, limits: fab.limits, prefix: 'trf' });
  live.add(sim.pid);
  const cache = mkdtempSync(path.join(dir, `osm-${engine}-`));
  const osmLog = path.join(cache, 'osm.log');
  const env = clientEnv(sim, fab.simHost, { OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache });
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', 'opensm', '-R', engine, '-F', osmConf(engine, dir), '-f', osmLog, '-s', '0', '--dump_files_dir', cache], { env, cwd: cache, stdio: 'ignore' });
  live.add(child.pid);
  const log = () => (existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '');
  try {
    const deadline = Date.now() + 900_000;
    while (!log().includes('SUBNET UP') && child.exitCode === null && Date.now() < deadline) await sleep(200);
    const text = log();
    if (!text.includes('SUBNET UP')) return { error: `no SUBNET UP: ${text.split('\n').filter((l) => / ERR /.test(l)).slice(0, 2).join(' | ')}` };
    const used = /(\S+) tables configured/.exec(text.split('\n').find((l) => /tables configured/.test(l)) ?? '')?.[1];
    const d = await runClient('ibnetdiscover', [], clientEnv(sim, fab.simHost), dir, 600_000);
    if (d.code !== 0) return { error: `ibnetdiscover failed: ${d.err.trim().split('\n').pop()}` };
    const fabric = mods.parseIbnetdiscover(d.out, 'ibnetdiscover');
    const switches = [];
    fabric.nodes.forEach((n, i) => n.type === 2 && switches.push({ i, lid: n.ports[0]?.lid ?? 0 }));
    const { lfts, errors } = await readLfts(fabric, switches, clientEnv(sim, fab.simHost), dir);
    if (saveDir) {
      mkdirSync(saveDir, { recursive: true });
      writeFileSync(path.join(saveDir, `${fab.key}-${engine}.json`), JSON.stringify({ ibnetdiscover: d.out, lfts: [...lfts].map(([s, t]) => [s, Array.from(t)]) }));
    }
    return { fabric, lfts, used, errors };
  } finally {
    await stopChild(child);
    live.delete(child.pid);
    await sim.stop();
    live.delete(sim.pid);
    rmSync(cache, { recursive: true, force: true });
  }
}

/** The figures of one set of tables: EBB, all-to-all, the verifier's verdict. */
function judge(mods, fabric, lfts, tables) {
  const t0 = Date.now();
  const bySeed = seeds.map((seed) => mods.evaluateTraffic(fabric, lfts, { kind: 'ebb' }, { samples, seed }));
  const ebb = [...bySeed].sort((a, b) => a.mean - b.mean)[(bySeed.length - 1) >> 1];
  ebb.bySeed = bySeed.map((x) => x.mean);
  const all = mods.evaluateTraffic(fabric, lfts, { kind: 'alltoall' }, { samples: a2a });
  const v = mods.verifyRoutes(fabric, tables, { stretch: false });
  return { ebb, all, v, ms: Date.now() - t0 };
}

/** Cut every `drop`-th switch-to-switch link (both ends), deterministically. */
function degrade(fabric, drop) {
  let k = 0;
  let cut = 0;
  fabric.nodes.forEach((n, i) => {
    if (n.type !== 2) return;
    n.ports.forEach((p, pn) => {
      if (!p?.peer || fabric.nodes[p.peer.node].type !== 2 || p.peer.node < i) return;
      if (++k % drop) return;
      delete fabric.nodes[p.peer.node].ports[p.peer.port].peer;
      delete p.peer;
      cut++;
    });
  });
  return cut;
}

const f3 = (x) => (x === undefined ? '-' : x.toFixed(3));

async function main() {
  need();
  const mods = { ...(await dist('model/load.js')), ...(await dist('model/ibnetdiscover.js')), ...(await dist('routing/verify.js')), ...(await dist('routing/registry.js')), ...(await dist('routing/traffic.js')), ...(await dist('sm/lids.js')) };
  const ibsmEngines = opt('--ibsm', ['default', ...mods.engineNames()].join(',')).split(',').filter(Boolean);
  const dir = mkdtempSync(opt('--dir', path.join(os.tmpdir(), 'traffic-opensm-')));
  mkdirSync(dir, { recursive: true });
  const tStart = Date.now();
  console.log(`traffic through the tables, ibsm and OpenSM on the same fabrics (${samples} random bisections, all-to-all in at most ${a2a} shift phases; scratch ${dir})`);
  console.log(`per-flow bandwidth / injection rate by max-min fair sharing (docs/traffic.md): EBB mean (min p1 p50${seeds.length > 1 ? `; the median over seeds ${seeds.join(',')}` : ''}), all-to-all mean (min p1 p50); CDG: the verifier's deadlock verdict (OpenSM dfsssp/nue: claimed)`);
  try {
    for (const key of fabricKeys) {
      const base = FABRICS[key];
      if (!base) throw new Error(`unknown fabric "${key}" (${Object.keys(FABRICS).join(', ')})`);
      const fabric = mods.loadFabricSpec(base.spec);
      const cut = base.drop ? degrade(fabric, base.drop) : 0;
      const netFile = path.join(dir, `${key}.net`);
      writeFileSync(netFile, mods.formatIbnetdiscover(fabric, { timestamp: 'traffic-opensm' }));
      const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(readFileSync(netFile, 'utf8'))?.[1];
      const fab = { key, netFile, simHost, limits: ibsimLimits(fabric) };
      const hosts = fabric.nodes.filter((n) => n.type !== 2).length;
      console.log(`\n== ${key} (${base.spec}${cut ? `, ${cut} switch links cut` : ''}): ${hosts} hosts, ${fabric.nodes.length - hosts} switches`);
      const head = ['SM', 'engine', 'used', 'VLs', 'CDG', 'EBB mean', 'EBB min/p1/p50', 'a2a mean', 'a2a min/p1/p50', 'eval s'];
      const w = [7, 9, 9, 4, 7, 9, 20, 9, 20, 7];
      const line = (c) => console.log(c.map((x, i) => (i < 3 ? String(x).padEnd(w[i]) : String(x).padStart(w[i]))).join(' '));
      line(head);
      const rows = [];
      const row = (sm, engine, used, vls, r, claimed) => {
        const cdg = claimed ?? (r.v.deadlockFree ? 'free' : 'cycles');
        rows.push({ sm, engine, used, vls, cdg, r });
        line([sm, engine, used, vls, cdg, f3(r.ebb.mean), `${f3(r.ebb.min)} ${f3(r.ebb.p1)} ${f3(r.ebb.p50)}`, f3(r.all.mean), `${f3(r.all.min)} ${f3(r.all.p1)} ${f3(r.all.p50)}`, (r.ms / 1000).toFixed(1)]);
        if (seeds.length > 1) console.log(`        EBB at seeds ${seeds.join(',')}: ${r.ebb.bySeed.map((x) => x.toFixed(5)).join(' ')} (median ${r.ebb.mean.toFixed(5)})`);
        if (r.ebb.unrouted || r.all.unrouted) console.log(`        unrouted flows: EBB ${r.ebb.unrouted}, a2a ${r.all.unrouted}`);
      };
      // ibsm: in-process, the tables its SM programs.
      const own = mods.loadFabricSpec(base.spec);
      if (base.drop) degrade(own, base.drop);
      mods.assignLids(own, { lmc: 0 });
      for (const e of ibsmEngines) {
        try {
          const res = mods.routeWithFallback(own, e === 'default' ? mods.DEFAULT_FALLBACK : [e], { lmc: 0 });
          const r = res.result;
          const j = judge(mods, own, r.lfts, r);
          row('ibsm', e, res.engine, r.vlsUsed ?? 1, j);
        } catch (err) {
          console.log(`ibsm    ${e.padEnd(9)} ${err.message.split('\n')[0].slice(0, 100)}`);
        }
      }
      for (const e of osmEngines) {
        const t0 = Date.now();
        const got = await runOpenSm(e, fab, dir, mods);
        if (got.error) {
          console.log(`opensm  ${e.padEnd(9)} ${got.error}`);
          continue;
        }
        const j = judge(mods, got.fabric, got.lfts, got.lfts);
        const multi = e === 'dfsssp' || e === 'nue';
        row('opensm', e, got.used ?? '?', multi ? '≤8' : 1, j, multi ? 'claimed' : undefined);
        process.stderr.write(`   [${key}] opensm/${e}: ${((Date.now() - t0) / 1000).toFixed(0)} s${got.errors.length ? `, ${got.errors.length} LFT read errors` : ''}\n`);
      }
      goals(key, base, rows);
    }
    console.log(`\nfull run: ${((Date.now() - tStart) / 60000).toFixed(1)} min`);
  } finally {
    if (!flag('--keep')) rmSync(dir, { recursive: true, force: true });
  }
}

/** The issue's goals on ibsm's default chain: EBB ≥ OpenSM's best deadlock-free engine's and
 *  ≥ 0.95 × OpenSM's best; shifts ≥ 0.9 of full on the non-blocking trees. OpenSM's deadlock-free
 *  rows: updn, ftree (as used), dfsssp, nue; not minhop (nor a fallback to it). */
function goals(key, base, rows) {
  const d = rows.find((r) => r.sm === 'ibsm' && r.engine === 'default');
  const osm = rows.filter((r) => r.sm === 'opensm');
  if (!d || !osm.length) return;
  const df = osm.filter((r) => r.used !== 'minhop' && r.cdg !== 'cycles');
  const best = (xs) => xs.reduce((a, r) => (!a || r.r.ebb.mean > a.r.ebb.mean ? r : a), undefined);
  const bDf = best(df);
  const bAll = best(osm);
  const e = d.r.ebb.mean;
  const parts = [];
  if (bDf) parts.push(`EBB ${f3(e)} ≥ OpenSM's best deadlock-free (${bDf.engine} ${f3(bDf.r.ebb.mean)}): ${e >= bDf.r.ebb.mean - 1e-9 ? 'met' : 'NOT met'}`);
  parts.push(`≥ 0.95 × OpenSM's best (${bAll.engine} ${f3(bAll.r.ebb.mean)}): ${e >= 0.95 * bAll.r.ebb.mean ? 'met' : 'NOT met'} (${f3(e / bAll.r.ebb.mean)}×)`);
  if (base.nonBlocking) parts.push(`all-to-all shifts min ${f3(d.r.all.min)}, mean ${f3(d.r.all.mean)} ≥ 0.9: ${d.r.all.min >= 0.9 ? 'met' : d.r.all.mean >= 0.9 ? 'met on the mean, not every flow' : 'NOT met'}`);
  console.log(`goal [${key}] ibsm default (${d.used}): ${parts.join('; ')}`);
}

await main();

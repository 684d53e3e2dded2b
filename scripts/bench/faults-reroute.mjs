#!/usr/bin/env node
// Link-down half of the faults benchmark (issue #11): a core link of a 1,000+ host fat tree on
// ibsim goes down (console `Unlink`) and comes back (`ReLink`), under ibsm and under OpenSM, each
// on its own fresh ibsim, attached at the first host of the topology.
//
// Per SM and per event:
//   ms to routes  from the console command to the last LFT Set the SM sent (the counting shim,
//                 umad-count.c as in sm-vs-opensm.mjs, polled every 2 ms; settled once nothing
//                 changes for --settle seconds); the resolution is the polling interval
//   LFT blocks    LFT Sets the SM sent for the event (the shim's count)
//   SMPs          every SMP the SM sent for the event
//   max r/l       the verifier's busiest directed switch-to-switch link (CA-to-CA routes), on the
//                 LFTs read back with ibroute from every switch, before / after the unlink /
//                 after the relink; "reach" ok when every CA pair and switch reaches every LID
//   intact        after the relink, whether every switch holds the tables it held before
//   path changes  SlimUpdate's measure (dist/routing/incremental-changes.js): (switch, LID) pairs
//                 whose path changed, tables read back before vs after the unlink
// Each SM's unlink and relink are repeated --repeat times on the same ibsim (ms, blocks, SMPs:
// the median, every run in brackets); the tables are read back and verified after the first.
// Below the table: the LFT blocks and path changes of a full re-route with ibsm's default chain
// on the broken fabric (computed offline from the tables read before), for the "< 10 %" and
// "80 % fewer path changes" comparisons.
// Asserts nothing. Goals: < 300 ms, < 10 % of the blocks, busiest link ≤ 1.2×.
//
//   npx tsc -p tsconfig.json && node scripts/bench/faults-reroute.mjs [options]
//     --fabric SPEC     default gen:fattree3:radix=16 (1,024 hosts, 320 switches)
//     --link SW         the switch whose first uplink is cut (default sw-l2-5)
//     --to PREFIX       ...to a switch whose description starts with PREFIX (default sw-l3-: a
//                       core; sw-l2- for a leaf-spine link of a 2-level tree)
//     --sms LIST        ibsm,opensm
//     --opensm-routing  OpenSM's -R (default: its own default, minhop)
//     --settle S        quiet time that ends an event (default 3)
//     --repeat N        unlink/relink events per SM (default 3)
//     --keep            keep the scratch directory
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild } from './ibsim.mjs';
import { buildShim, startCountedSm } from './umad-count.mjs';
import { argv, opt } from './args.mjs';
import { upAndSettled } from './procs.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';
const distDir = path.resolve(here, '../../dist');
const SPEC = opt('--fabric', 'gen:fattree3:radix=16');
const LINK_SW = opt('--link', 'sw-l2-5');
const TO = opt('--to', 'sw-l3-');
const SMS = opt('--sms', 'ibsm,opensm').split(',').filter(Boolean);
const OSM_ROUTING = opt('--opensm-routing', '');
const SETTLE_MS = Number(opt('--settle', '3')) * 1000;
const REPEAT = Math.max(1, Number(opt('--repeat', '3')));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const c of ['ibsim', 'ibroute', 'ibnetdiscover', 'cc', ...(SMS.includes('opensm') ? ['opensm'] : [])]) {
  if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) throw new Error(`missing ${c} (apt-get install ibsim-utils infiniband-diags opensm gcc libibumad-dev)`);
}
if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error('dist/cli/main.js not found: run "npx tsc -p tsconfig.json" first');
const mod = async (p) => import(pathToFileURL(path.join(distDir, p)).href);
const { loadFabricSpec } = await mod('model/load.js');
const { formatIbnetdiscover, parseIbnetdiscover } = await mod('model/ibnetdiscover.js');
const { verifyRoutes, routeWithFallback, DEFAULT_FALLBACK } = await mod('routing/index.js');
const { cloneFabric } = await mod('model/fabric.js');
const { pathChanges } = await mod('routing/incremental-changes.js');

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-faults-reroute-'));
const shim = buildShim(dir);

// ---------------------------------------------------------------------------------------------
// ibsim, tools, SMs.
const env = (sim, host, extra = {}) => {
  const e = { ...process.env, IBSIM_SOCKNAME: sim.sockname, LD_PRELOAD: UMAD2SIM, ...extra };
  delete e.NODE_OPTIONS;
  if (host) e.SIM_HOST = host;
  else delete e.SIM_HOST;
  return e;
};
function run(sim, args) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', ...args], { env: env(sim, undefined), cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    const t = setTimeout(() => stopChild(child), 60_000);
    child.once('close', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}
/** The fabric as ibnetdiscover shows it (with LIDs) and every switch's LFT read with ibroute. */
async function readBack(sim) {
  const d = await run(sim, ['ibnetdiscover']);
  const fabric = parseIbnetdiscover(d.out, 'ibnetdiscover');
  const queue = fabric.nodes.map((n, i) => ({ n, i })).filter((x) => x.n.type === 2);
  const lfts = new Map();
  const worker = async () => {
    for (let s = queue.shift(); s; s = queue.shift()) {
      const r = await run(sim, ['ibroute', '-n', String(s.n.ports[0]?.lid ?? 0)]);
      const entries = [...r.out.matchAll(/^0x([0-9a-f]+) (\d+)/gim)].map((m) => [parseInt(m[1], 16), Number(m[2])]);
      const t = new Uint8Array(entries.reduce((a, [l]) => Math.max(a, l), 0) + 1).fill(255);
      for (const [l, p] of entries) t[l] = p;
      lfts.set(s.i, t);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]); // ibsim serves at most 10 clients
  return { fabric, lfts };
}
const byGuid = (f, lfts) => new Map([...lfts].map(([i, t]) => [f.nodes[i].guid, t]));
function blocksDiffer(a, b) {
  let n = 0;
  for (const [g, ta] of a) {
    const tb = b.get(g) ?? new Uint8Array(0);
    const len = Math.max(ta.length, tb.length);
    for (let blk = 0; blk * 64 < len; blk++) {
      for (let i = blk * 64; i < Math.min(len, blk * 64 + 64); i++) {
        if ((ta[i] ?? 255) !== (tb[i] ?? 255)) {
          n++;
          break;
        }
      }
    }
  }
  return n;
}

function startSm(kind, sim, host, tag) {
  const ibsm = kind === 'ibsm' ? [process.execPath, path.join(distDir, 'cli/main.js'), 'run', '--umad'] : undefined;
  // ibsm's log kept in the scratch directory too (--keep), for the timeline of an event.
  return startCountedSm({ kind, cache: path.join(dir, tag), shim, umad2sim: UMAD2SIM, env: (extra) => env(sim, host, extra), ibsm, osmArgs: OSM_ROUTING ? ['-R', OSM_ROUTING] : [] });
}

/** Send a console command and watch the SM's LFT Sets until quiet: ms to the last one, blocks, SMPs. */
async function event(sim, sm, cmd) {
  const c0 = sm.counts();
  const t0 = performance.now();
  await sim.write(cmd);
  let last = c0;
  let lastLftAt;
  let lastChange = performance.now();
  while (performance.now() - lastChange < SETTLE_MS) {
    await sleep(2);
    const c = sm.counts();
    if (c.lft !== last.lft) lastLftAt = performance.now();
    if (c.lft !== last.lft || c.smps !== last.smps) lastChange = performance.now();
    last = c;
    if (performance.now() - t0 > 120_000) break;
  }
  return { ms: lastLftAt === undefined ? undefined : lastLftAt - t0, lft: last.lft - c0.lft, smps: last.smps - c0.smps };
}

// ---------------------------------------------------------------------------------------------
const topo = loadFabricSpec(SPEC);
const netFile = path.join(dir, 'fabric.net');
writeFileSync(netFile, formatIbnetdiscover(topo, { timestamp: 'faults-reroute' }));
const text = readFileSync(netFile, 'utf8');
const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(text)?.[1];
const limits = ibsimLimits(topo);
const cutNode = topo.nodes.find((n) => n.desc === LINK_SW);
if (!cutNode) throw new Error(`no switch "${LINK_SW}" in ${SPEC}`);
const cutPort = cutNode.ports.findIndex((p, i) => i > 0 && p?.peer && topo.nodes[p.peer.node].type === 2 && topo.nodes[p.peer.node].desc.startsWith(TO));
if (cutPort < 0) throw new Error(`${LINK_SW} has no link to a switch ${TO}*`);
const cutName = `S-${cutNode.guid.toString(16).padStart(16, '0')}`;
const cutPeer = topo.nodes[cutNode.ports[cutPort].peer.node].desc;
const hosts = topo.nodes.filter((n) => n.type !== 2).length;
console.log(`== ${SPEC}: ${hosts} hosts, ${topo.nodes.length - hosts} switches; cut ${LINK_SW} port ${cutPort} (to ${cutPeer}); SMs at ${simHost}`);

const rows = [];
let fullRef;
for (const kind of SMS) {
  const sim = await startIbsim(netFile, { dir, limits, prefix: 'ibsmfr', timeoutMs: 60_000 + limits.nodes * 5 });
  const sm = startSm(kind, sim, simHost, kind);
  const row = { kind };
  try {
    await upAndSettled(sm, kind, { upMs: 600_000, settleMs: SETTLE_MS });
    const before = await readBack(sim);
    const vb = verifyRoutes(before.fabric, before.lfts, { stretch: false });
    row.before = vb.linkLoad.max;
    row.reachBefore = vb.ok ? 'ok' : `fail:${vb.unreachablePairs}`;
    if (!vb.ok) row.failBefore = vb.failures.slice(0, 2).map((x) => `${x.kind} LID ${x.dlid} at ${x.at}: ${x.detail}`).join('; ');
    const allBlocks = [...before.lfts.values()].reduce((a, t) => a + Math.ceil(t.length / 64), 0);
    row.allBlocks = allBlocks;
    if (kind === 'ibsm') {
      // What a full re-route of the broken fabric with ibsm's chain would write (offline).
      const broken = cloneFabric(before.fabric);
      const ni = broken.nodes.findIndex((n) => n.guid === cutNode.guid);
      const pr = broken.nodes[ni].ports[cutPort].peer;
      broken.nodes[ni].ports[cutPort].peer = undefined;
      broken.nodes[pr.node].ports[pr.port].peer = undefined;
      const full = routeWithFallback(broken, DEFAULT_FALLBACK, { lmc: 0 });
      fullRef = { engine: full.engine, blocks: blocksDiffer(byGuid(before.fabric, before.lfts), byGuid(broken, full.result.lfts)), all: allBlocks, max: verifyRoutes(broken, full.result, { stretch: false }).linkLoad.max, paths: pathChanges(before.fabric, { lfts: before.lfts }, broken, full.result) };
    }
    row.downs = [];
    row.ups = [];
    for (let k = 0; k < REPEAT; k++) {
      row.downs.push(await event(sim, sm, `Unlink "${cutName}"[${cutPort}]`));
      if (k === 0) {
        const down = await readBack(sim);
        const vd = verifyRoutes(down.fabric, down.lfts, { stretch: false });
        row.afterDown = vd.linkLoad.max;
        row.reachDown = vd.ok ? 'ok' : `fail:${vd.unreachablePairs}`;
        row.paths = pathChanges(before.fabric, { lfts: before.lfts }, down.fabric, { lfts: down.lfts });
      }
      row.ups.push(await event(sim, sm, `ReLink "${cutName}"[${cutPort}]`));
      if (k === 0) {
        const up = await readBack(sim);
        const vu = verifyRoutes(up.fabric, up.lfts, { stretch: false });
        row.afterUp = vu.linkLoad.max;
        row.reachUp = vu.ok ? 'ok' : `fail:${vu.unreachablePairs}`;
        row.intact = blocksDiffer(byGuid(before.fabric, before.lfts), byGuid(up.fabric, up.lfts)) === 0 ? 'yes' : 'no';
        row.pathsBack = pathChanges(before.fabric, { lfts: before.lfts }, up.fabric, { lfts: up.lfts });
      }
    }
    if (kind === 'ibsm') row.note = [...sm.log().matchAll(/^.*(?:local sweep done|incremental re-route|discovery done|trap received|link (?:down|up) ).*$/gm)].map((m) => m[0]).slice(-12).join(' | ');
  } catch (e) {
    row.error = e.message;
  } finally {
    await stopChild(sm.child);
    await sim.stop();
  }
  rows.push(row);
}

const f = (x, d = 0) => (x === undefined ? '-' : typeof x === 'number' ? x.toFixed(d) : String(x));
const median = (xs) => {
  const v = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
  return v.length ? v[(v.length - 1) >> 1] : undefined;
};
/** "median [each run]" of one field of the events. */
const runs = (evs, k) => `${f(median(evs.map((e) => e[k])))}${evs.length > 1 ? ` [${evs.map((e) => f(e[k])).join(' ')}]` : ''}`;
const hdr = ['SM', 'event', 'ms to routes', 'LFT blocks', '% of all', 'SMPs', 'max r/l before', 'max r/l after', 'ratio', 'reach', 'intact', 'path changes'];
const lines = [hdr];
for (const r of rows) {
  if (r.error) {
    lines.push([r.kind, 'error', r.error]);
    continue;
  }
  const pc = (p) => (p ? `${p.changed} of ${p.pairs}` : '-');
  lines.push([r.kind, 'unlink', runs(r.downs, 'ms'), runs(r.downs, 'lft'), f((100 * median(r.downs.map((e) => e.lft))) / r.allBlocks, 1), runs(r.downs, 'smps'), f(r.before), f(r.afterDown), f(r.afterDown / r.before, 2), r.reachDown, '', pc(r.paths)]);
  lines.push([r.kind, 'relink', runs(r.ups, 'ms'), runs(r.ups, 'lft'), f((100 * median(r.ups.map((e) => e.lft))) / r.allBlocks, 1), runs(r.ups, 'smps'), f(r.before), f(r.afterUp), f(r.afterUp / r.before, 2), r.reachUp, r.intact, pc(r.pathsBack)]);
}
const w = hdr.map((_, i) => Math.max(...lines.map((l) => String(l[i] ?? '').length)));
for (const l of lines) console.log(l.map((c, i) => String(c ?? '').padEnd(w[i])).join('  '));
if (fullRef) {
  console.log(`full re-route of the broken fabric with ${DEFAULT_FALLBACK.join(',')} (offline, engine ${fullRef.engine}): ${fullRef.blocks} of ${fullRef.all} LFT blocks differ from the intact tables; busiest link ${fullRef.max}; ${fullRef.paths.changed} of ${fullRef.paths.pairs} (switch, LID) paths change`);
  for (const r of rows) if (r.paths) console.log(`SlimUpdate: ${r.kind}'s re-route changes ${r.paths.changed} paths, ${f(100 * (1 - r.paths.changed / fullRef.paths.changed), 1)} % fewer than the full re-route's ${fullRef.paths.changed}`);
}
for (const r of rows) if (r.failBefore) console.log(`${r.kind}: routes read back before the unlink fail: ${r.failBefore}`);
for (const r of rows) if (r.note) console.log(`${r.kind} log:\n  ${r.note.split(' | ').join('\n  ')}`);
if (argv.includes('--keep')) console.log(`scratch: ${dir}`);
else rmSync(dir, { recursive: true, force: true });

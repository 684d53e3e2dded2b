#!/usr/bin/env node
// Faults benchmark (issue 11): ibsm and OpenSM side by side on the same ibsim fabrics, one fresh
// ibsim per run.
//
// Part 1, MAD loss on the SM's own port. For each loss rate (ibsim's console
// `Error "<SM host>"[1] <pct>`, set before the SM starts): the time from the SM's process start to
// its SUBNET UP log line (both SMs' own log timestamps), the heavy sweeps it took, and, once the
// loss is switched off again, what the real tools see: links ACTIVE (iblinkinfo, every link from
// both ends) and the routes (ibroute on every switch, checked by dist/routing/verify.js: "ok" when
// every CA pair and every switch reaches every LID, loop-free). The loss is counted by ibsim
// itself: PortRcvErrors of the SM's port (perfquery), one per MAD dropped there.
// ibsm runs `ibsm run --umad --once`; OpenSM runs without -o (under loss its first sweep may
// not come up; it keeps sweeping) and is stopped by PID once its log says SUBNET UP (or at the
// timeout).
//
// Part 2, a core link down and back up on a 1,000+ host fat tree (default the 1,024-host ft3):
// faults-reroute.mjs run with the same SMs, its table printed here (time from the Unlink to the
// last LFT block the SM sent, LFT blocks written, SMPs, routes per link max before and after,
// path changes; the same for the ReLink).
//
// Prints one table; asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/faults.mjs [options]
//     --fabric SPEC     default gen:fattree2:leaves=24,spines=12,hosts=18 (432 hosts)
//     --loss LIST       loss rates in % (default 0,1,5,10,20)
//     --sms ibsm,opensm which SMs
//     --timeout S       per SM run (default 120)
//     --parts LIST      loss,link (default both)
//     --link-fabric S   part 2's fabric (default gen:fattree3:radix=16)
//     --repeat N        part 2's unlink/relink events per SM (default 3)
//     --keep            keep the scratch directory
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild, clientEnv, runClient } from './ibsim.mjs';
import { waitExit } from './wait-exit.mjs';
import { opt, flag } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const distDir = path.resolve(here, '../../dist');
const SPEC = opt('--fabric', 'gen:fattree2:leaves=24,spines=12,hosts=18');
const LOSS = opt('--loss', '0,1,5,10,20').split(',').filter(Boolean).map(Number);
const SMS = opt('--sms', 'ibsm,opensm').split(',').filter(Boolean);
const TIMEOUT_MS = Number(opt('--timeout', '120')) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const c of ['ibsim', 'ibroute', 'ibnetdiscover', 'iblinkinfo', 'perfquery', ...(SMS.includes('opensm') ? ['opensm'] : [])]) {
  if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) throw new Error(`missing ${c} (apt-get install ibsim-utils infiniband-diags opensm)`);
}
if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error('dist/cli/main.js not found: run "npx tsc -p tsconfig.json" first');
const mods = {
  ...(await import(pathToFileURL(path.join(distDir, 'model/load.js')).href)),
  ...(await import(pathToFileURL(path.join(distDir, 'model/ibnetdiscover.js')).href)),
  ...(await import(pathToFileURL(path.join(distDir, 'routing/verify.js')).href)),
};

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-faults-'));

// ---------------------------------------------------------------------------------------------
// ibsim with a console on a fifo; stopped by PID.




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

// ---------------------------------------------------------------------------------------------
// One SM run under loss.
async function runSm(kind, sim, simHost, tag) {
  const cache = path.join(dir, `${tag}.cache`);
  mkdirSync(cache, { recursive: true });
  const osmLog = path.join(cache, 'opensm.log');
  const osmConf = path.join(cache, 'opensm.conf');
  writeFileSync(osmConf, 'force_log_flush TRUE\n');
  const env = clientEnv(sim, simHost, { OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache });
  const [cmd, args] = kind === 'ibsm' ? [process.execPath, [path.join(distDir, 'cli/main.js'), 'run', '--umad', '--once']] : ['opensm', ['-F', osmConf, '-f', osmLog, '--dump_files_dir', cache]];
  const t0 = Date.now();
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const osmText = () => (existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '');
  const deadline = t0 + TIMEOUT_MS;
  let timedOut = false;
  if (kind === 'opensm') {
    while (!osmText().includes('SUBNET UP') && child.exitCode === null && Date.now() < deadline) await sleep(50);
    timedOut = !osmText().includes('SUBNET UP');
    await sleep(300); // let it finish the sweep it logged (its tables are in)
    await stopChild(child);
  }
  if (!(await waitExit(child, Math.max(1000, deadline - Date.now())))) {
    timedOut = true;
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {}
    await waitExit(child, 5000);
  }
  const r = { sm: kind, code: child.exitCode, timedOut };
  if (kind === 'ibsm') {
    const line = out.split('\n').find((l) => l.includes('SUBNET UP'));
    if (line) r.upMs = Date.parse(line.split(/\s/)[0]) - t0;
    r.sweeps = (out.match(/discovery done/g) ?? []).length;
    r.left = (out.match(/left out|write failed/g) ?? []).length;
    r.tail = out.split('\n').filter((l) => / error |ibsm: /.test(l)).slice(-2).join(' | ');
  } else {
    const text = osmText();
    const line = text.split('\n').find((l) => l.includes('SUBNET UP'));
    if (line) r.upMs = osmTime(line, t0) - t0;
    r.sweeps = (text.match(/Entering heavy sweep|osm_ucast_mgr_process|ucast_mgr_route: \S+ tables configured/g) ?? []).length || undefined;
    r.errs = (text.match(/ ERR /g) ?? []).length;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// What the real tools see afterwards.
async function witness(sim, simHost) {
  const env = clientEnv(sim, simHost);
  const links = await runClient('iblinkinfo', [], env, dir);
  // Cabled ports only (an uncabled one shows `==>  [  ] "" ( )`).
  const cabled = links.out.split('\n').filter((l) => l.includes('==(') && !/==>\s+\[\s*\]\s+""/.test(l));
  const all = cabled.length;
  const active = cabled.filter((l) => /==\([^)]*Active\//.test(l)).length;
  const d = await runClient('ibnetdiscover', [], env, dir);
  if (d.code !== 0) return { all, active, error: 'ibnetdiscover failed' };
  const fabric = mods.parseIbnetdiscover(d.out, 'ibnetdiscover');
  const switches = [];
  fabric.nodes.forEach((n, i) => n.type === 2 && switches.push({ i, lid: n.ports[0]?.lid ?? 0 }));
  const lfts = new Map();
  let missing = 0;
  const queue = switches.slice();
  const worker = async () => {
    for (let s = queue.shift(); s; s = queue.shift()) {
      if (!s.lid) {
        missing++;
        continue;
      }
      const r = await runClient('ibroute', ['-n', String(s.lid)], env, dir);
      if (r.code !== 0) {
        missing++;
        continue;
      }
      const entries = [...r.out.matchAll(/^0x([0-9a-f]+) (\d+)/gim)].map((m) => [parseInt(m[1], 16), Number(m[2])]);
      const top = entries.reduce((a, [l]) => Math.max(a, l), 0);
      const t = new Uint8Array(top + 1).fill(255);
      for (const [l, p] of entries) t[l] = p;
      lfts.set(s.i, t);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  const v = mods.verifyRoutes(fabric, lfts, { stretch: false });
  const routes = missing ? `no LFT:${missing}` : v.ok ? 'ok' : v.unreachablePairs ? `fail:${v.unreachablePairs}` : `sw:${v.unreachableFromSwitches}`;
  return { all, active, routes };
}

async function dropsAt(sim, simHost) {
  const r = await runClient('perfquery', [], clientEnv(sim, simHost), dir);
  return Number(/^PortRcvErrors:\.+(\d+)$/m.exec(r.out)?.[1] ?? NaN);
}

// ---------------------------------------------------------------------------------------------
async function lossPart(netFile, simHost, limits) {
  const rows = [];
  for (const pct of LOSS) {
    for (const kind of SMS) {
      const sim = await startIbsim(netFile, { dir, limits, prefix: 'ibsmfaults' });
      try {
        await sim.console(`Error "${simHost}"[1] ${pct}`);
        const r = await runSm(kind, sim, simHost, `${kind}-${pct}`);
        await sim.console(`Error "${simHost}"[1] 0`);
        r.drops = await dropsAt(sim, simHost);
        Object.assign(r, await witness(sim, simHost));
        rows.push({ pct, ...r });
        if (process.env.FAULTS_DEBUG) process.stderr.write(JSON.stringify({ pct, ...r }) + '\n');
      } finally {
        await sim.stop();
      }
    }
  }
  const fmt = (x) => (x === undefined || Number.isNaN(x) ? '-' : String(Math.round(x)));
  console.log('\nMAD loss on the SM\'s port (ibsim Error "<SM host>"[1] <pct>)');
  console.log('loss %  SM      SUBNET UP ms  sweeps  dropped  links ACTIVE  routes   note');
  for (const r of rows) {
    const note = r.timedOut ? 'timed out' : r.sm === 'ibsm' ? (r.code !== 0 ? `exit ${r.code} ${r.tail}` : r.left ? `${r.left} left out` : '') : r.errs ? `${r.errs} ERR lines` : '';
    console.log(`${String(r.pct).padStart(6)}  ${r.sm.padEnd(6)}  ${fmt(r.upMs).padStart(12)}  ${fmt(r.sweeps).padStart(6)}  ${fmt(r.drops).padStart(7)}  ${`${r.active}/${r.all}`.padStart(12)}  ${String(r.routes ?? r.error).padEnd(7)}  ${note}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Part 2: LINK DOWN / UP ON A 1,000+ HOST FAT TREE (faults-reroute.mjs, same SMs).
function linkPart() {
  const args = [path.join(here, 'faults-reroute.mjs'), '--fabric', opt('--link-fabric', 'gen:fattree3:radix=16'), '--sms', SMS.join(','), '--repeat', opt('--repeat', '3'), ...(flag('--keep') ? ['--keep'] : [])];
  console.log('\nA core link down and back up (faults-reroute.mjs)');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`faults-reroute.mjs exited with ${code}`))));
  });
}
// ---------------------------------------------------------------------------------------------

async function main() {
  const fabric = mods.loadFabricSpec(SPEC);
  const netFile = path.join(dir, 'fabric.net');
  const text = mods.formatIbnetdiscover(fabric, { timestamp: 'faults' });
  writeFileSync(netFile, text);
  const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(text)[1];
  const hosts = fabric.nodes.filter((n) => n.type !== 2).length;
  console.log(`fabric ${SPEC}: ${fabric.nodes.length} nodes, ${hosts} hosts; SMs at ${simHost}; ${os.cpus().length} cores`);
  console.log('SUBNET UP ms: process start to the SM\'s SUBNET UP log line; sweeps: heavy sweeps until then (ibsm: discoveries; OpenSM: LFT configurations logged);');
  console.log('dropped: PortRcvErrors of the SM\'s port (ibsim counts each MAD it dropped there); links ACTIVE: iblinkinfo, each link from both ends;');
  console.log('routes: ibroute on every switch, verified ("ok": every CA pair and switch reaches every LID, loop-free). Tools run after the loss is off.');
  const parts = opt('--parts', 'loss,link').split(',');
  if (parts.includes('loss')) await lossPart(netFile, simHost, ibsimLimits(fabric));
  if (parts.includes('link')) await linkPart();
}

try {
  await main();
} finally {
  if (!flag('--keep')) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}

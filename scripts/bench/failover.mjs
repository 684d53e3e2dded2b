#!/usr/bin/env node
// Failover benchmark (issue #27's matrix): on an ibsim fabric of 1,000+ hosts, the subnet moving
// from one SM to another, for ibsm->ibsm, OpenSM->ibsm, ibsm->OpenSM and OpenSM->OpenSM, both SMs
// at their defaults (SM_Key 1 on both; OpenSM polls its master every 10 s and takes over after 4
// misses, ibsm every 500 ms after 3), and OpenSM as the new master again with ibsm's polling
// (500 ms x 3, "-fast"). Three events: the old master killed with -9 ("kill"), stopped with
// SIGTERM ("term": a clean stop; ibsm hands over to its standby as it stops, OpenSM does not),
// and a better SM started while the old one masters ("higher": priority 5 over 2). One fresh
// ibsim per case; the old master runs at the first host of the topology, the new one at the second.
//
// Method, per case:
//   1. start the old master, wait for its SUBNET UP; for kill/term start the standby (priority 2,
//      under the counting shim, umad-count.c as in sm-vs-opensm.mjs) and wait until it says
//      STANDBY; read the LIDs (ibnetdiscover) and pick a sample of CA ports: 24 spread over the
//      fabric (--sample N), plus the new master's own port;
//   2. the event: kill -9 or SIGTERM of the old master (by PID), or the start of the better SM
//      (priority 5, counted) for "higher";
//   3. read the PortInfo of every sampled port (SubnGet by LID, all at once, a round every few
//      milliseconds: portinfo-watch.mjs, one ibsim client at the third host, started before the
//      event) until every one shows the new master's LID as its SMLid. "ports moved" is the time
//      from the event to the read that saw the last sampled port moved; its resolution is one
//      round ("round ms"). "MASTER" is the new master's own log time of
//      taking over (ibsm: `entering MASTER`; OpenSM: `Entering MASTER state`), from the event.
//   4. "LFT blocks" is the LFT Sets the new master sent after the event until it settled (ibsm: its
//      sweep after taking over done, OpenSM: 3 s after the sample moved; the shim's count); "SMPs"
//      what it sent until the sample had moved, "SMPs settled" until it settled. On an unchanged
//      fabric the goal is 0 LFT blocks.
// Prints one table; asserts nothing. Goals (#27): ibsm as the new master < 3 s after kill -9 and
// < 0.5 s after a clean stop of the old master.
//
//   npx tsc -p tsconfig.json && node scripts/bench/failover.mjs [options]
//     --fabric SPEC     default gen:fattree2:leaves=32,spines=16,hosts=32 (1,024 hosts)
//     --cases LIST      OLD-NEW-EVENT[-fast], e.g. ibsm-opensm-kill-fast; default: every pair x
//                       kill, term, higher, and the OpenSM-as-new-master kill cases again -fast
//     --sample N        sampled CA ports (default 24)
//     --timeout S       per phase (default 300)
//     --keep            keep the scratch directory, with each SM's log (<case>-master/log, <case>-new/log)
//     --sm-args "ARGS"  more arguments for every ibsm (e.g. "--verbose": its sweep phase lines)
//     --sm-node-args "ARGS"  Node options for every ibsm (e.g. "--cpu-prof --cpu-prof-dir D")
//     --sm-dist DIR     the ibsm under test: DIR/cli/main.js (default this checkout's dist/; e.g.
//                       an older commit compiled elsewhere, for before/after figures)
//   FAILOVER_DEBUG=1 prints each phase and polling round on stderr.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild } from './ibsim.mjs';
import { buildShim, readCounts } from './umad-count.mjs';
import { argv, opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';
const distDir = path.resolve(here, '../../dist');
const SPEC = opt('--fabric', 'gen:fattree2:leaves=32,spines=16,hosts=32');
const PAIRS_ALL = ['ibsm-ibsm', 'opensm-ibsm', 'ibsm-opensm', 'opensm-opensm'];
const DEFAULT_CASES = [...PAIRS_ALL.flatMap((p) => ['kill', 'term', 'higher'].map((e) => `${p}-${e}`)), 'ibsm-opensm-kill-fast', 'opensm-opensm-kill-fast'];
const PAIRS = opt('--cases', DEFAULT_CASES.join(',')).split(',').filter(Boolean);
const SAMPLE = Number(opt('--sample', '24'));
const SM_ARGS = opt('--sm-args', '').split(' ').filter(Boolean);
const SM_DIST = path.resolve(opt('--sm-dist', distDir));
const SM_NODE_ARGS = opt('--sm-node-args', '').split(' ').filter(Boolean);
const PHASE_MS = Number(opt('--timeout', '300')) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const c of ['ibsim', 'opensm', 'smpquery', 'ibnetdiscover', 'cc']) {
  if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) throw new Error(`missing ${c} (apt-get install ibsim-utils infiniband-diags opensm gcc libibumad-dev)`);
}
if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error('dist/cli/main.js not found: run "npx tsc -p tsconfig.json" first');

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-failover-'));

// The counting shim (see umad-count.c and sm-vs-opensm.mjs).
const shim = buildShim(dir);
const counts = readCounts;

// ---------------------------------------------------------------------------------------------
// ibsim and clients.
const env = (sim, host, extra = {}) => {
  const e = { ...process.env, IBSIM_SOCKNAME: sim.sockname, LD_PRELOAD: UMAD2SIM, ...extra };
  delete e.NODE_OPTIONS;
  if (host) e.SIM_HOST = host;
  else delete e.SIM_HOST;
  return e;
};
function tool(sim, args) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', ...args], { env: env(sim, undefined), cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    const t = setTimeout(() => stopChild(child), 30_000);
    child.once('close', () => {
      clearTimeout(t);
      resolve(out);
    });
  });
}

/** Start one SM; its log (ibsm: stdout+stderr; OpenSM: its log file) through log(). */
function startSm(kind, sim, host, priority, tag, o = {}) {
  const cache = path.join(dir, tag);
  mkdirSync(cache, { recursive: true });
  const countFile = path.join(cache, 'counts');
  const extra = o.counted ? { UMAD_COUNT_FILE: countFile, LD_PRELOAD: `${shim} ${UMAD2SIM}` } : {};
  let cmd;
  let args;
  let logFile;
  if (kind === 'ibsm') {
    cmd = process.execPath;
    args = [...SM_NODE_ARGS, path.join(SM_DIST, 'cli/main.js'), 'run', '--umad', '--priority', String(priority), '--guid2lid', path.join(cache, 'guid2lid'), ...SM_ARGS];
  } else {
    logFile = path.join(cache, 'opensm.log');
    const conf = path.join(cache, 'opensm.conf');
    writeFileSync(conf, (o.fastPoll ? 'sminfo_polling_timeout 500\npolling_retry_number 3\n' : '') + 'force_log_flush TRUE\n');
    cmd = 'opensm';
    args = ['-F', conf, '-p', String(priority), '-f', logFile];
  }
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@" 2>&1', 'bash', cmd, ...args], { env: env(sim, host, { OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache, ...extra }), cwd: cache, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  const log = () => (logFile ? (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') : out);
  return { kind, child, log, counts: () => counts(countFile), save: () => kind === 'ibsm' && writeFileSync(path.join(cache, 'log'), out) };
}
/** portinfo-watch.mjs at the third host: `ready` once its port is open, `go()` starts its reads,
 * `result` its JSON line. */
function watcher(sim, want, lids) {
  const child = spawn(process.execPath, [path.join(here, 'portinfo-watch.mjs'), '--want', String(want), '--lids', lids.join(','), '--timeout', String(PHASE_MS / 1000)], { env: env(sim, hosts[2]), cwd: dir, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let ready;
  let result;
  const readyP = new Promise((r) => (ready = r));
  const resultP = new Promise((r, j) => {
    result = r;
    child.once('close', (code) => j(new Error(`portinfo-watch.mjs exited (${code}) before its result`)));
  });
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out += d;
    if (out.includes('ready\n')) ready();
    const line = out.split('\n').find((l) => l.startsWith('{'));
    if (line) result(JSON.parse(line));
  });
  return { ready: readyP, result: resultP, go: () => child.stdin.write('go\n') };
}
async function waitFor(what, pred, ms = PHASE_MS) {
  if (process.env.FAILOVER_DEBUG) console.error(`waiting: ${what}`);
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms / 1000} s`);
    await sleep(100);
  }
}
const isUp = (sm) => sm.log().includes('SUBNET UP');
const isStandby = (sm) => (sm.kind === 'ibsm' ? /entering STANDBY/.test(sm.log()) : /Entering STANDBY state/.test(sm.log()));

const MONTHS = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };
/** When the SM logged taking over (epoch ms), if it did. */
function masterAt(sm, ref) {
  if (sm.kind === 'ibsm') {
    const m = /^(\S+) info\s+(?:IBSM-\d+\s+)?entering MASTER/m.exec(sm.log());
    return m ? Date.parse(m[1]) : undefined;
  }
  const lines = sm.log().split('\n').filter((l) => l.includes('Entering MASTER state'));
  const m = /^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6})/.exec(lines.at(-1) ?? '');
  if (!m) return undefined;
  const d = new Date(ref);
  d.setMonth(MONTHS[m[1]], Number(m[2]));
  d.setHours(Number(m[3]), Number(m[4]), Number(m[5]), 0);
  return d.getTime() + Number(m[6]) / 1000;
}

// ---------------------------------------------------------------------------------------------
const { loadFabricSpec } = await import(pathToFileURL(path.join(distDir, 'model/load.js')).href);
const { formatIbnetdiscover, parseIbnetdiscover } = await import(pathToFileURL(path.join(distDir, 'model/ibnetdiscover.js')).href);
const fabric = loadFabricSpec(SPEC);
const netFile = path.join(dir, 'fabric.net');
writeFileSync(netFile, formatIbnetdiscover(fabric, { timestamp: 'failover' }));
// SIM_HOST takes the node's name in the .net file; ibnetdiscover shows its description (after #).
const caLines = [...readFileSync(netFile, 'utf8').matchAll(/^(?:Ca|Hca)\s+\d+\s+"([^"]+)"\s*#\s*"([^"]*)"/gm)];
const hosts = caLines.map((m) => m[1]);
const descOf = new Map(caLines.map((m) => [m[1], m[2]]));
const limits = ibsimLimits(fabric);
console.log(`== ${SPEC}: ${hosts.length} hosts, ${fabric.nodes.length - hosts.length} switches; old master at ${hosts[0]}, new one at ${hosts[1]}; both SMs at their defaults`);

async function runPair(pair) {
  const [mk, sk, event, fast] = pair.split('-');
  if (!['ibsm', 'opensm'].includes(mk) || !['ibsm', 'opensm'].includes(sk) || !['kill', 'term', 'higher'].includes(event)) throw new Error(`case ${pair}: expected OLD-NEW-(kill|term|higher)[-fast]`);
  const sim = await startIbsim(netFile, { dir, limits, prefix: 'ibsmfo', timeoutMs: 60_000 });
  const sms = [];
  try {
    const higher = event === 'higher';
    const master = startSm(mk, sim, hosts[0], higher ? 2 : 5, `${pair}-master`);
    sms.push(master);
    await waitFor('master SUBNET UP', () => isUp(master));
    const start = () => startSm(sk, sim, hosts[1], higher ? 5 : 2, `${pair}-new`, { counted: true, fastPoll: fast === 'fast' });
    let standby;
    if (!higher) {
      standby = start();
      sms.push(standby);
      await waitFor('standby STANDBY', () => isStandby(standby));
      await sleep(2000);
    }
    const seen = parseIbnetdiscover(await tool(sim, ['ibnetdiscover']));
    const caLid = (desc) => seen.nodes.find((n) => n.desc === desc)?.ports.find((p) => p?.lid)?.lid;
    const newLid = caLid(descOf.get(hosts[1]));
    const all = seen.nodes.filter((n) => n.type !== 2).map((n) => n.ports.find((p) => p?.lid)?.lid).filter(Boolean);
    const sample = [...new Set([newLid, ...Array.from({ length: SAMPLE }, (_, i) => all[Math.floor((i * all.length) / SAMPLE)])])];
    if (process.env.FAILOVER_DEBUG) console.error(`new SM LID ${newLid}, sample ${sample.join(',')}`);
    const watch = watcher(sim, newLid, sample);
    await watch.ready;
    const before = standby?.counts() ?? { smps: 0, lft: 0 };
    const t0 = Date.now();
    watch.go();
    if (event === 'kill') process.kill(master.child.pid, 'SIGKILL');
    else if (event === 'term') void stopChild(master.child, 30_000);
    else {
      standby = start();
      sms.push(standby);
    }
    const watched = await watch.result;
    const moved = new Map(Object.entries(watched.moved).map(([lid, at]) => [Number(lid), at - t0]));
    const rounds = [watched.roundMs];
    if (process.env.FAILOVER_DEBUG) console.error(`${moved.size}/${sample.length} moved in ${watched.rounds} rounds; new SM log tail: ${standby.log().trim().split('\n').at(-1)}`);
    const after = standby.counts();
    // What the new master sent until it settled: an ibsm's sweep after it took over (a takeover
    // from its view is verified by a full heavy sweep) done, else 3 s (OpenSM's first sweep may
    // still be writing when the sample has moved).
    if (standby.kind === 'ibsm') await waitFor('new master settled', () => /entering MASTER[^]*heavy sweep done/.test(standby.log()), 30_000).catch(() => undefined);
    else await sleep(3000);
    const settled = standby.counts();
    const at = masterAt(standby, t0);
    const name = `${mk}->${sk} ${event}`;
    return {
      pair: fast === 'fast' ? `${name} (500 ms x 3)` : name,
      master: at !== undefined ? at - t0 : undefined,
      moved: moved.size === sample.length ? Math.max(...moved.values()) : undefined,
      round: rounds.length ? Math.round(rounds.reduce((a, b) => a + b, 0) / rounds.length) : 0,
      lft: settled.lft - before.lft,
      smps: after.smps - before.smps,
      smpsSettled: settled.smps - before.smps,
      sample: sample.length,
    };
  } finally {
    for (const sm of sms) await stopChild(sm.child);
    if (argv.includes('--keep')) for (const sm of sms) sm.save();
    await sim.stop();
  }
}

const rows = [];
try {
  for (const p of PAIRS) {
    try {
      rows.push(await runPair(p));
    } catch (e) {
      rows.push({ pair: p, error: e.message });
    }
    const r = rows.at(-1);
    console.log(r.error ? `${r.pair}: ${r.error}` : `${r.pair}: MASTER ${r.master === undefined ? '-' : Math.round(r.master)} ms, ports moved ${r.moved ?? '-'} ms (round ${r.round} ms), LFT blocks ${r.lft}, SMPs ${r.smps} (settled ${r.smpsSettled})`);
  }
} finally {
  if (!argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
const pad = (s, n) => String(s).padStart(n);
console.log(`\n${'pair'.padEnd(30)} ${pad('MASTER ms', 10)} ${pad('ports moved ms', 15)} ${pad('round ms', 9)} ${pad('LFT blocks', 11)} ${pad('SMPs', 8)} ${pad('SMPs settled', 13)}`);
for (const r of rows) {
  if (r.error) console.log(`${r.pair.padEnd(30)} ${r.error}`);
  else console.log(`${r.pair.padEnd(30)} ${pad(r.master === undefined ? '-' : Math.round(r.master), 10)} ${pad(r.moved ?? '-', 15)} ${pad(r.round, 9)} ${pad(r.lft, 11)} ${pad(r.smps, 8)} ${pad(r.smpsSettled, 13)}`);
}
console.log(`(sample: ${rows.find((r) => r.sample)?.sample ?? 0} CA ports incl. the new master's own; MASTER from the new master's log, from the event; SMPs sent by the new master from the event until the sample had moved, and until it settled (ibsm: its sweep after taking over done; OpenSM: 3 s more); LFT blocks until it settled)`);

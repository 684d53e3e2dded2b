#!/usr/bin/env node
// Failover benchmark: a master SM killed with kill -9 on an ibsim fabric of 1,000+ hosts, and a
// standby taking over, for ibsm->ibsm, OpenSM->ibsm, ibsm->OpenSM and OpenSM->OpenSM (OpenSM as
// standby with its default polling, 10 s x 4 retries, and with ibsm's, 500 ms x 3). One fresh
// ibsim per pair; the master runs at the first host of the topology (priority 5), the standby at
// the second (priority 2); both SM_Key 1 (OpenSM's default; ibsm gets --sm-key 1).
//
// Method, per pair:
//   1. start the master, wait for its SUBNET UP; start the standby under the counting shim
//      (umad-count.c, as in sm-vs-opensm.mjs) and wait until it says STANDBY;
//   2. read the LIDs (ibnetdiscover) and pick a sample of CA ports: 24 spread over the fabric
//      (--sample N), plus the standby's own port;
//   3. kill -9 the master (by PID), then poll `smpquery portinfo <lid>` over the sample, four at
//      a time (ibsim holds only 10 clients, and the dead master stays listed), until every
//      sampled port shows the standby's LID as its SMLid. "ports moved" is the time from the kill
//      to the round in which the last sampled port was seen moved; its resolution is one polling
//      round (printed as "round ms"). "MASTER" is the standby's own log time of taking over
//      (ibsm: `entering MASTER`; OpenSM: `Entering MASTER state`), relative to the kill.
//   4. "LFT blocks" is the LFT Sets the new master sent after the kill (the shim's count, which
//      is 0 before: a standby writes nothing); "SMPs" likewise.
// Prints one table; asserts nothing. Goal: ibsm->ibsm under 5 s with 0 LFT blocks.
//
//   npx tsc -p tsconfig.json && node scripts/bench/failover.mjs [options]
//     --fabric SPEC     default gen:fattree2:leaves=32,spines=16,hosts=32 (1,024 hosts)
//     --pairs LIST      ibsm-ibsm,opensm-ibsm,ibsm-opensm,ibsm-opensm-fast,opensm-opensm,opensm-opensm-fast
//     --sample N        sampled CA ports (default 24)
//     --timeout S       per phase (default 300)
//     --keep            keep the scratch directory
//   FAILOVER_DEBUG=1 prints each phase and polling round on stderr.
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
const distDir = path.resolve(here, '../../dist');
const SPEC = opt('--fabric', 'gen:fattree2:leaves=32,spines=16,hosts=32');
const PAIRS = opt('--pairs', 'ibsm-ibsm,opensm-ibsm,ibsm-opensm,ibsm-opensm-fast,opensm-opensm,opensm-opensm-fast').split(',').filter(Boolean);
const SAMPLE = Number(opt('--sample', '24'));
const PHASE_MS = Number(opt('--timeout', '300')) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

for (const c of ['ibsim', 'opensm', 'smpquery', 'ibnetdiscover', 'cc']) {
  if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) throw new Error(`missing ${c} (apt-get install ibsim-utils infiniband-diags opensm gcc libibumad-dev)`);
}
if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error('dist/cli/main.js not found: run "npx tsc -p tsconfig.json" first');

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-failover-'));

// The counting shim (see umad-count.c and sm-vs-opensm.mjs).
const shim = buildShim(dir);
function counts(file) {
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
    if (cls === 0x01 || cls === 0x81) smps += n;
    if ((cls === 0x01 || cls === 0x81) && ((key >>> 16) & 0xff) === 0x02 && (key & 0xffff) === 0x19) lft += n;
  }
  return { smps, lft };
}

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
    args = [path.join(distDir, 'cli/main.js'), 'run', '--umad', '--priority', String(priority), '--sm-key', '1', '--guid2lid', path.join(cache, 'guid2lid')];
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
  return { kind, child, log, counts: () => counts(countFile) };
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
    const m = /^(\S+) info\s+entering MASTER/m.exec(sm.log());
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
console.log(`== ${SPEC}: ${hosts.length} hosts, ${fabric.nodes.length - hosts.length} switches; master at ${hosts[0]} (priority 5), standby at ${hosts[1]} (priority 2)`);

async function runPair(pair) {
  const [mk, sk, fast] = pair.split('-');
  const sim = await startIbsim(netFile, { dir, limits, prefix: 'ibsmfo', timeoutMs: 60_000 });
  const sms = [];
  try {
    const master = startSm(mk, sim, hosts[0], 5, `${pair}-master`);
    sms.push(master);
    await waitFor('master SUBNET UP', () => isUp(master));
    const standby = startSm(sk, sim, hosts[1], 2, `${pair}-standby`, { counted: true, fastPoll: fast === 'fast' || sk === 'ibsm' });
    sms.push(standby);
    await waitFor('standby STANDBY', () => isStandby(standby));
    await sleep(2000);
    const seen = parseIbnetdiscover(await tool(sim, ['ibnetdiscover']));
    const caLid = (desc) => seen.nodes.find((n) => n.desc === desc)?.ports.find((p) => p?.lid)?.lid;
    const newLid = caLid(descOf.get(hosts[1]));
    const all = seen.nodes.filter((n) => n.type !== 2).map((n) => n.ports.find((p) => p?.lid)?.lid).filter(Boolean);
    const sample = [...new Set([newLid, ...Array.from({ length: SAMPLE }, (_, i) => all[Math.floor((i * all.length) / SAMPLE)])])];
    if (process.env.FAILOVER_DEBUG) console.error(`new SM LID ${newLid}, sample ${sample.join(',')}`);
    const before = standby.counts();
    const t0 = Date.now();
    process.kill(master.child.pid, 'SIGKILL');
    const moved = new Map();
    const rounds = [];
    while (moved.size < sample.length && Date.now() - t0 < PHASE_MS) {
      const r0 = Date.now();
      const todo = sample.filter((l) => !moved.has(l));
      for (let i = 0; i < todo.length; i += 4) {
        await Promise.all(
          todo.slice(i, i + 4).map(async (lid) => {
            const out = await tool(sim, ['smpquery', 'portinfo', String(lid)]);
            if (Number(/^SMLid:\.+(\d+)$/m.exec(out)?.[1]) === newLid) moved.set(lid, Date.now() - t0);
          }),
        );
      }
      rounds.push(Date.now() - r0);
      if (process.env.FAILOVER_DEBUG) console.error(`round ${rounds.length}: ${moved.size}/${sample.length} moved; standby log tail: ${standby.log().trim().split('\n').at(-1)}`);
    }
    const after = standby.counts();
    const at = masterAt(standby, t0);
    return {
      pair: fast === 'fast' ? `${mk}->${sk} (500 ms x 3)` : sk === 'opensm' ? `${mk}->${sk} (defaults)` : `${mk}->${sk}`,
      master: at !== undefined ? at - t0 : undefined,
      moved: moved.size === sample.length ? Math.max(...moved.values()) : undefined,
      round: rounds.length ? Math.round(rounds.reduce((a, b) => a + b, 0) / rounds.length) : 0,
      lft: after.lft - before.lft,
      smps: after.smps - before.smps,
      sample: sample.length,
    };
  } finally {
    for (const sm of sms) await stopChild(sm.child);
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
    console.log(r.error ? `${r.pair}: ${r.error}` : `${r.pair}: MASTER ${r.master === undefined ? '-' : Math.round(r.master)} ms, ports moved ${r.moved ?? '-'} ms (round ${r.round} ms), LFT blocks ${r.lft}, SMPs ${r.smps}`);
  }
} finally {
  if (!argv.includes('--keep')) rmSync(dir, { recursive: true, force: true });
}
const pad = (s, n) => String(s).padStart(n);
console.log(`\n${'pair'.padEnd(30)} ${pad('MASTER ms', 10)} ${pad('ports moved ms', 15)} ${pad('round ms', 9)} ${pad('LFT blocks', 11)} ${pad('SMPs', 8)}`);
for (const r of rows) {
  if (r.error) console.log(`${r.pair.padEnd(30)} ${r.error}`);
  else console.log(`${r.pair.padEnd(30)} ${pad(r.master === undefined ? '-' : Math.round(r.master), 10)} ${pad(r.moved ?? '-', 15)} ${pad(r.round, 9)} ${pad(r.lft, 11)} ${pad(r.smps, 8)}`);
}
console.log(`(sample: ${rows.find((r) => r.sample)?.sample ?? 0} CA ports incl. the standby's own; MASTER from the standby's log; LFT blocks and SMPs sent by the new master after the kill)`);

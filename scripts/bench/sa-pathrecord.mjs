#!/usr/bin/env node
// PathRecord Get rate: ibsm's SA against OpenSM's, side by side through ibsim, plus the in-process
// rate (SaEngine alone, and SaServer answering an SaClient over the in-process fabric).
//
//   node scripts/bench/sa-pathrecord.mjs [--clients 4] [--outstanding 16] [--seconds 10] [--inproc 20000]
//                                        [--topo gen:fattree3:radix=16 | <file>]
//                                        [--sa opensm,ibsm,ibsm-nocache,noop] [--client c|node] [--skip-ibsim]
//
// Through ibsim: for each responder a fresh ibsim of the topology, the responder at its first node
// (OpenSM first; the others then start from OpenSM's guid2lid so all serve the same LIDs), and
// `--clients` preloaded flood clients at different CA nodes, each keeping `--outstanding` PathRecord
// Gets in flight for `--seconds`, all starting at the same instant.
//   - Responders: `opensm`; `ibsm`; `ibsm-nocache`, ibsm with its PathRecord answer cache off, so
//     every answer is computed (as for queries that never repeat); and `noop`,
//     scripts/bench/sa-echo.c, which sends every request straight back and computes nothing (ibsm
//     --once assigns the LIDs first): what ibsim and the clients cost on their own.
// The machine is saturated during a flood, so the rate is set by the CPU each answer costs
// everyone. From OpenSM's run the bench derives what an SA costing no CPU at all could reach: the
// bound on any SA measured through ibsim on this machine.
//   - Clients: `c` (default) is scripts/bench/sa-flood.c, a few microseconds of CPU per request;
//     `node` is test/fixtures/ibsim-sa-client.mjs, which costs more CPU than the SA it floods.
// The CPU time each responder process and ibsim spent during the flood is read from /proc and shown
// per answer. Every process started here is stopped by its PID.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ibsimLimitArgs } from './ibsim-limits.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';
const CLI = path.join(ROOT, 'dist/cli/main.js');
const CLIENT = path.join(ROOT, 'test/fixtures/ibsim-sa-client.mjs');
const BENCH = path.join(ROOT, 'scripts/bench');

const { values: o } = parseArgs({
  options: {
    clients: { type: 'string', default: '4' },
    outstanding: { type: 'string', default: '16' },
    seconds: { type: 'string', default: '10' },
    inproc: { type: 'string', default: '20000' },
    topo: { type: 'string', default: 'gen:fattree3:radix=16' },
    'skip-ibsim': { type: 'boolean', default: false },
    /** Responders to flood through ibsim, in order: opensm, ibsm, ibsm-nocache (ibsm run --sa-cache 0),
     * noop ("both" = opensm,ibsm). Without opensm first, ibsm assigns the LIDs. */
    sa: { type: 'string', default: 'opensm,ibsm,ibsm-nocache,noop' },
    client: { type: 'string', default: 'c' },
  },
});
const nClients = Number(o.clients);
const outstanding = Number(o.outstanding);
const durationMs = Number(o.seconds) * 1000;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const scratch = mkdtempSync(path.join(os.tmpdir(), 'ibsm-bench-sa-'));
let seq = 0;

const { loadFabricSpec } = await dist('model/load.js');
const { formatIbnetdiscover } = await dist('model/ibnetdiscover.js');
const { parseGuid2Lid } = await dist('sm/lids.js');

/** The topology as a file ibsim reads. */
function topoFile() {
  if (existsSync(o.topo)) return o.topo;
  const f = path.join(scratch, 'topo.net');
  writeFileSync(f, formatIbnetdiscover(loadFabricSpec(o.topo), { timestamp: 'bench' }));
  return f;
}

function child(cmd, args, { env = {}, cwd = scratch, preload = false } = {}) {
  const e = { ...process.env, ...env };
  if (preload) e.LD_PRELOAD = UMAD2SIM;
  const p = spawn('bash', ['-c', `${preload ? 'ulimit -n 1024 && ' : ''}exec "$@"`, 'bash', cmd, ...args], { cwd, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  p.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const done = new Promise((r) => p.once('close', (code) => r(code)));
  return { pid: p.pid, out: () => out, done, stop: async () => {
    try { process.kill(p.pid, 'SIGTERM'); } catch { /* gone */ }
    const t = setTimeout(() => { try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ } }, 5000);
    await done;
    clearTimeout(t);
  } };
}

function listening(sock) {
  const want = `@${sock}:ctl`;
  // abstract names show NUL padding as '@'
  return readFileSync('/proc/net/unix', 'utf8').split('\n').some((l) => {
    const i = l.indexOf(want);
    return i >= 0 && /^@*\s*$/.test(l.slice(i + want.length));
  });
}

async function until(what, pred, ms) {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}

async function startIbsim(file) {
  const sock = `ibsmbench${process.pid}_${seq++}`;
  const fifo = path.join(scratch, `${sock}.fifo`);
  spawnSync('mkfifo', [fifo]);
  // ibsim's default limits are raised to fit the fabric.
  const f = loadFabricSpec(file);
  const p = child('bash', ['-c', `exec ibsim ${ibsimLimitArgs(f).join(' ')} -s "${file}" <> "${fifo}"`], { env: { IBSIM_SOCKNAME: sock } });
  // `bash -c exec` keeps the PID: p.pid is ibsim itself.
  try {
    await until('ibsim listening', () => listening(sock), 10_000 + f.nodes.length * 5);
  } catch (e) {
    await p.stop();
    throw e;
  }
  return { sock, pid: p.pid, stop: p.stop };
}

/** Build one of the C helpers (sa-flood, sa-echo) into the scratch directory. */
const built = new Map();
function cBinary(name) {
  if (built.has(name)) return built.get(name);
  const out = path.join(scratch, name);
  const r = spawnSync('cc', ['-O2', '-o', out, path.join(BENCH, `${name}.c`), '-libumad'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`building ${name}.c failed (needs cc and libibumad-dev): ${r.error?.message ?? r.stderr}`);
  built.set(name, out);
  return out;
}

/** CPU seconds the whole machine has been busy so far (every core; /proc/stat, idle and iowait excluded). */
function boxBusySeconds() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  return (total - f[3] - (f[4] ?? 0)) / 100;
}

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100; // utime, stime (fields 14, 15), in clock ticks
  } catch {
    return NaN;
  }
}

async function startSa(kind, sock, g2lIn) {
  const dir = mkdtempSync(path.join(scratch, `${kind}-`));
  if (kind === 'noop') {
    // ibsm brings the subnet up and exits; the no-op responder then takes the SM's node and LID.
    const g2l = path.join(dir, 'guid2lid');
    if (g2lIn) writeFileSync(g2l, g2lIn);
    const sm = child(process.execPath, [CLI, 'run', '--umad', '--once', '--guid2lid', g2l], { env: { IBSIM_SOCKNAME: sock }, cwd: dir, preload: true });
    const code = await sm.done;
    if (code !== 0) throw new Error(`ibsm run --once failed (${code}):\n${sm.out()}`);
    const p = child(cBinary('sa-echo'), [], { env: { IBSIM_SOCKNAME: sock, SIM_SET_ISSM: '1' }, cwd: dir, preload: true });
    await until('no-op responder ready', () => p.out().includes('READY'), 10_000);
    return { pid: p.pid, stop: p.stop, guid2lid: readFileSync(g2l, 'utf8') };
  }
  if (kind === 'opensm') {
    const log = path.join(dir, 'opensm.log');
    const p = child('opensm', ['-D', '0x05', '-f', log], { env: { IBSIM_SOCKNAME: sock, OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, cwd: dir, preload: true });
    await until('OpenSM SUBNET UP', () => existsSync(log) && readFileSync(log, 'utf8').includes('SUBNET UP'), 60_000);
    const g2l = path.join(dir, 'guid2lid');
    await until('OpenSM guid2lid', () => existsSync(g2l), 10_000);
    return { pid: p.pid, stop: p.stop, guid2lid: readFileSync(g2l, 'utf8') };
  }
  const g2l = path.join(dir, 'guid2lid');
  if (g2lIn) writeFileSync(g2l, g2lIn);
  const extra = kind === 'ibsm-nocache' ? ['--sa-cache', '0'] : [];
  const p = child(process.execPath, [CLI, 'run', '--umad', '--sweep-interval', '10', '--guid2lid', g2l, ...extra], { env: { IBSIM_SOCKNAME: sock }, cwd: dir, preload: true });
  await until('ibsm SUBNET UP', () => p.out().includes('SUBNET UP'), 60_000);
  await until('ibsm guid2lid', () => existsSync(g2l), 10_000);
  process.stderr.write(`ibsm SM pid ${p.pid}\n`);
  return { pid: p.pid, stop: p.stop, guid2lid: readFileSync(g2l, 'utf8') };
}

/** CA node ids (SIM_HOST) and every end-port LID. */
function targets(file, g2l) {
  const hosts = [...readFileSync(file, 'utf8').matchAll(/^(?:Hca|Ca)\s+\d+\s+"([^"]+)"/gm)].map((m) => m[1]);
  const lids = [...parseGuid2Lid(g2l).values()].map((r) => r.base);
  return { hosts, lids };
}

async function floodThroughIbsim(kind, file, g2lIn) {
  const ib = await startIbsim(file);
  let sa;
  try {
    sa = await startSa(kind, ib.sock, g2lIn);
    const { hosts, lids } = targets(file, sa.guid2lid);
    const picked = Array.from({ length: Math.min(nClients, hosts.length) }, (_, i) => hosts[Math.floor((i * hosts.length) / Math.min(nClients, hosts.length))]);
    const startAt = Date.now() + 2500; // every client attached and ready before the clock starts
    const env = (h) => ({ IBSIM_SOCKNAME: ib.sock, SIM_HOST: h });
    const procs = picked.map((h) =>
      o.client === 'node'
        ? child(process.execPath, [CLIENT, JSON.stringify({ ops: [{ op: 'flood', dlids: lids, outstanding, durationMs, startAt }] })], { env: env(h), preload: true })
        : child(cBinary('sa-flood'), ['0', '0', String(outstanding), String(durationMs), String(startAt), lids.join(',')], { env: env(h), preload: true }),
    );
    // CPU of the responder and of ibsim over the flood itself.
    const cpu = new Promise((resolve) => {
      setTimeout(() => {
        const a = [cpuSeconds(sa.pid), cpuSeconds(ib.pid), boxBusySeconds()];
        setTimeout(
          () => resolve({ sa: cpuSeconds(sa.pid) - a[0], ibsim: cpuSeconds(ib.pid) - a[1], box: boxBusySeconds() - a[2], seconds: (durationMs - 200) / 1000 }),
          durationMs - 200,
        );
      }, Math.max(0, startAt - Date.now() + 100));
    });
    await Promise.all(procs.map((p) => p.done));
    const used = await cpu;
    let answered = 0;
    let ok = 0;
    let timeouts = 0;
    let maxMs = 0;
    for (const p of procs) {
      const line = p.out().split('\n').find((l) => l.startsWith('RESULT '));
      if (!line) throw new Error(`${kind}: a client failed:\n${p.out()}`);
      const r = JSON.parse(line.slice(7));
      answered += r.answered;
      ok += r.ok;
      timeouts += r.timeouts;
      maxMs = Math.max(maxMs, r.elapsedMs);
      if (r.errors) throw new Error(`${kind}: ${r.errors} answers were errors or wrong (not a GetResp with the DLID asked for)`);
    }
    const rate = answered / (maxMs / 1000);
    const perAnswer = (s) => (s / used.seconds / rate) * 1e6;
    return { answered, ok, timeouts, rate, guid2lid: sa.guid2lid, clients: procs.length, saUs: perAnswer(used.sa), ibsimUs: perAnswer(used.ibsim), boxUs: perAnswer(used.box), busyCores: used.box / used.seconds };
  } finally {
    await sa?.stop();
    await ib.stop();
  }
}

async function inProcess(n) {
  const { SimFabric } = await dist('sim/fabric.js');
  const { AsapClock } = await dist('util/asap-clock.js');
  const { RealClock } = await dist('util/clock.js');
  const { MadRpc } = await dist('rpc/madrpc.js');
  const { Subnet } = await dist('subnet.js');
  const { smpClientOf } = await dist('sm/smp-client.js');
  const { Logger } = await dist('util/log.js');
  const { MgmtClass, Method, NodeType } = await dist('wire/mad.js');
  const { PathRecord, SaAttr, SA_CLASS_VERSION, SA_DATA_SIZE } = await dist('wire/sa.js');
  const { SaClient } = await dist('sa/client.js');
  const clock = new RealClock();
  const sim = new SimFabric(loadFabricSpec(topoFile()), { clock: new AsapClock() });
  const smEp = sim.attach(0);
  smEp.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  smEp.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const smRpc = new MadRpc(smEp, clock, { window: 256, perDestinationWindow: 16 });
  const subnet = new Subnet({ rpc: smRpc, portGuid: smEp.local.portGuid, smp: smpClientOf(smRpc), clock, log: new Logger(undefined, 'warn'), routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: 0 });
  await subnet.start();
  const snap = subnet.sm.current;
  const ends = [];
  snap.fabric.nodes.forEach((nd, i) => nd.ports.forEach((p, pn) => p?.lid && (nd.type === NodeType.Switch ? pn === 0 : true) && ends.push({ lid: p.lid, guid: p.guid, ca: nd.type !== NodeType.Switch, node: i })));
  const cas = ends.filter((e) => e.ca);
  const ctx = subnet.sa.context;
  const mask = PathRecord.mask('slid', 'dlid');
  // 1. the engine alone
  const queries = cas.map((s, i) => {
    const d = ends[(i * 7 + 3) % ends.length];
    const data = new Uint8Array(SA_DATA_SIZE);
    PathRecord.encode({ slid: s.lid, dlid: d.lid }, data, 0);
    return { method: Method.Get, attrId: SaAttr.PathRecord, attrMod: 0, componentMask: mask, data, requester: { lid: s.lid, portGuid: s.guid, smKey: 0n, trusted: false, qpn: 1 } };
  });
  let okE = 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) if (subnet.engine.answer(queries[i % queries.length], ctx).kind === 'records') okE++;
  const engineRate = n / (Number(process.hrtime.bigint() - t0) / 1e9);
  // 2. SaServer answering SaClients over the in-process fabric (MAD encode/decode, MadRpc both ends)
  const cEps = cas.slice(0, Math.max(1, nClients)).map((c) => {
    const ep = sim.attach(c.node);
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    return { ep, rpc: new MadRpc(ep, clock, { window: 256, perDestinationWindow: 256, timeoutMs: 2000, retries: 0 }), lid: c.lid };
  });
  const per = Math.ceil(n / cEps.length);
  let okS = 0;
  const t1 = process.hrtime.bigint();
  await Promise.all(
    cEps.map(async ({ rpc, lid }) => {
      const client = new SaClient(rpc, { saLid: snap.smLid });
      let k = 0;
      const one = async () => {
        while (k < per) {
          const dlid = ends[k++ % ends.length].lid;
          await client.request(Method.Get, SaAttr.PathRecord, PathRecord, { slid: lid, dlid }, mask);
          okS++;
        }
      };
      await Promise.all(Array.from({ length: outstanding }, one));
    }),
  );
  const serverRate = okS / (Number(process.hrtime.bigint() - t1) / 1e9);
  for (const c of cEps) {
    c.rpc.close();
    await c.ep.close();
  }
  subnet.stop();
  smRpc.close();
  await smEp.close();
  sim.close();
  return { engineRate, okE, serverRate, okS };
}

const file = topoFile();
const rows = [];
const fmt = (x) => Math.round(x).toLocaleString('en-US');
const kinds = (o.sa === 'both' ? 'opensm,ibsm' : o.sa).split(',').filter(Boolean);
const NAMES = { opensm: 'OpenSM SA via ibsim', ibsm: 'ibsm SA via ibsim', 'ibsm-nocache': 'ibsm SA, --sa-cache 0, via ibsim', noop: 'no-op responder via ibsim' };
for (const k of kinds) if (!NAMES[k]) throw new Error(`--sa takes opensm, ibsm, ibsm-nocache and noop (got "${k}")`);
if (!['c', 'node'].includes(o.client)) throw new Error(`--client must be c or node (got "${o.client}")`);
const viaIbsim = {};
if (!o['skip-ibsim']) {
  let g2l = '';
  for (const k of kinds) {
    const r = await floodThroughIbsim(k, file, g2l || undefined);
    g2l ||= r.guid2lid;
    rows.push([NAMES[k], r.rate, `${r.answered} answers, ${r.timeouts} timeouts; CPU per answer: ${r.saUs.toFixed(1)} us responder, ${r.ibsimUs.toFixed(1)} us ibsim, ${r.boxUs.toFixed(1)} us whole machine (${r.busyCores.toFixed(2)} cores busy)`]);
    viaIbsim[k] = r.rate;
    if (k === 'opensm') viaIbsim.zeroCostBound = (r.rate * r.boxUs) / (r.boxUs - r.saUs);
  }
}
const ip = await inProcess(Number(o.inproc));
rows.push(['ibsm SaEngine in-process', ip.engineRate, `${ip.okE} PathRecords`]);
rows.push(['ibsm SaServer+SaClient in-process', ip.serverRate, `${ip.okS} PathRecords over the in-process fabric`]);

process.stdout.write(`PathRecord Get rate (${o.topo}; through ibsim: ${o.seconds}s per responder, ${nClients} ${o.client === 'c' ? 'C' : 'Node'} clients x ${outstanding} outstanding)\n`);
for (const [name, rate, note] of rows) process.stdout.write(`  ${name.padEnd(36)} ${fmt(rate).padStart(10)} /s   ${note}\n`);
if (viaIbsim.opensm && viaIbsim.ibsm) process.stdout.write(`  ibsm / OpenSM through ibsim: ${(viaIbsim.ibsm / viaIbsim.opensm).toFixed(2)}x (goal: >= 2x)\n`);
if (viaIbsim.opensm && viaIbsim['ibsm-nocache']) process.stdout.write(`  ibsm without its answer cache / OpenSM through ibsim: ${(viaIbsim['ibsm-nocache'] / viaIbsim.opensm).toFixed(2)}x\n`);
if (viaIbsim.opensm && viaIbsim.noop) process.stdout.write(`  no-op responder / OpenSM through ibsim: ${(viaIbsim.noop / viaIbsim.opensm).toFixed(2)}x (a C responder that computes nothing)\n`);
if (viaIbsim.zeroCostBound) {
  // The machine is saturated during a flood: the rate is the busy cores over the CPU each answer
  // costs everyone (clients, ibsim, kernel, SA). An SA costing nothing saves only its own share.
  process.stdout.write(`  an SA using no CPU at all could reach about ${fmt(viaIbsim.zeroCostBound)} /s here, ${(viaIbsim.zeroCostBound / viaIbsim.opensm).toFixed(2)}x OpenSM (OpenSM's whole-machine CPU per answer without its own)\n`);
}

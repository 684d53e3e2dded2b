#!/usr/bin/env node
// The fuzz and abuse harness of issue #29: an SM on ibsim attacked from several simulated hosts at
// once, and on its own host through its control socket, web view and metrics endpoint, while a
// legitimate client asks PathRecords. Records the SM's RSS (idle, peak), its log growth, /metrics'
// size before and after, and the legitimate PathRecord latency (idle, during) throughout.
//
//   node scripts/bench/abuse.mjs [--sm ibsm,opensm] [--topo gen:fattree2:leaves=4,spines=2,hosts=4]
//        [--sa 1000000] [--sminfo 100000] [--conns 10000] [--hosts 4] [--json]
//        [--progress] [--idle-ms 3000] [--cli FILE] [--ibsm-node-flags="FLAGS"]
//
// --progress prints the attack's state every 2 s on stderr (RSS, heap, external); --idle-ms how
// long the idle RSS and PathRecord latency are sampled; --cli runs ibsm as `node [FLAGS] FILE`
// (e.g. dist/cli/main.js) and --ibsm-node-flags gives node's flags (the shebang's are then not
// applied: give them, e.g. "--max-semi-space-size=4 --trace-gc-nvp").
//
// --sa SA MADs in all (random attributes and methods, RMPP headers; test/fixtures/
// ibsim-abuse-host.mjs `sa`), from --hosts hosts at once; --sminfo SubnSet(SMInfo) with wrong
// SM_Keys to the SM's port, from two more hosts; --conns abusive connections in all (ibsm only):
// control-socket connections left idle, half-sent lines and over-long requests; HTTP slowloris
// connections (half-sent heads) to the web view and the metrics endpoint, held 300 at a time;
// HTTP requests with a bad Host header, a bad method, a bad path. Meanwhile `ibsm status` goes
// through the control socket every 250 ms. OpenSM (--sm opensm) gets the same MAD attacks.
// Every process started here is stopped by its PID. Run `npm run build` first (ibsm runs as its
// bin, dist/bundle/ibsm.cjs).
//
// As a module: `runAbuse(options)` returns the figures (test/harden-abuse.test.ts runs it short).
import { mkdtempSync, readFileSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { spawnSync } from 'node:child_process';
import { ibsimLimitArgs } from './ibsim-limits.mjs';
import { connectionAbuse } from './abuse-conns.mjs';
import { child, listening, rssMb, sleep, until } from './procs.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// ibsm as installed: the package's bin (its shebang gives V8's flags: a young generation of at
// most 4 MB per semi-space, scripts/build-bundle.mjs), not dist/cli/main.js under a plain node.
const BIN = path.join(ROOT, 'dist/bundle/ibsm.cjs');
const HOST = path.join(ROOT, 'test/fixtures/ibsim-abuse-host.mjs');
let seq = 0;

const quantile = (xs, q) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

function httpGet(port, urlPath, { host = `127.0.0.1:${port}`, method = 'GET' } = {}) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: urlPath, method, headers: { host }, agent: false, timeout: 10_000 }, (res) => {
      let n = 0;
      let text = '';
      res.on('data', (d) => {
        n += d.length;
        if (text.length < 1 << 20) text += d;
      });
      res.on('end', () => resolve({ status: res.statusCode, bytes: n, text }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, error: e.message }));
    req.end();
  });
}

/** Abusive connections to ibsm's local servers, `count` in all, spread over the kinds. */
async function abuseConnections(count, at, stopped) {
  const { kinds, release } = connectionAbuse(at);
  let done = 0;
  while (done < count && !stopped()) {
    await Promise.all(Array.from({ length: Math.min(16, count - done) }, (_, i) => kinds[(done + i) % kinds.length]().catch(() => undefined)));
    done += Math.min(16, count - done);
  }
  release();
  return done;
}

/**
 * @param {{ sm?: 'ibsm'|'opensm', topo?: string, sa?: number, sminfo?: number, conns?: number, hosts?: number, idleMs?: number }} o
 */
export async function runAbuse(o = {}) {
  const kind = o.sm ?? 'ibsm';
  const topo = o.topo ?? 'gen:fattree2:leaves=4,spines=2,hosts=4';
  const nSa = o.sa ?? 20_000;
  const nSmInfo = o.sminfo ?? 5_000;
  const nConns = kind === 'ibsm' ? (o.conns ?? 500) : 0;
  const nHosts = o.hosts ?? 3;
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'ibsm-abuse-'));
  const { loadFabricSpec } = await import(path.join(ROOT, 'dist/model/load.js'));
  const { formatIbnetdiscover } = await import(path.join(ROOT, 'dist/model/ibnetdiscover.js'));
  const { controlRequest } = await import(path.join(ROOT, 'dist/cli/control.js'));
  const f = loadFabricSpec(topo);
  const file = path.join(scratch, 'topo.net');
  writeFileSync(file, formatIbnetdiscover(f, { timestamp: 'bench' }));
  const hosts = [...readFileSync(file, 'utf8').matchAll(/^(?:Hca|Ca)\s+\d+\s+"([^"]+)"/gm)].map((m) => m[1]);
  if (hosts.length < nHosts + 4) throw new Error(`${topo}: ${hosts.length} hosts, the harness needs ${nHosts + 4}`);
  const sock = `ibsmabuse${process.pid}_${seq++}`;
  const fifo = path.join(scratch, `${sock}.fifo`);
  spawnSync('mkfifo', [fifo]);
  const procs = [];
  const ib = child('bash', ['-c', `exec ibsim ${ibsimLimitArgs(f).join(' ')} -s "${file}" <> "${fifo}"`], { env: { IBSIM_SOCKNAME: sock }, cwd: scratch });
  procs.push(ib);
  const env = { IBSIM_SOCKNAME: sock };
  const say = o.progress ?? (() => undefined);
  const out = { sm: kind, topo, sa: nSa, sminfo: nSmInfo, conns: 0, hosts: nHosts };
  let sm;
  try {
    await until('ibsim listening', () => listening(sock), 20_000);
    const dir = mkdtempSync(path.join(scratch, `${kind}-`));
    const log = path.join(dir, kind === 'ibsm' ? 'ibsm.log' : 'opensm.log');
    const at = { socket: path.join(dir, 'ibsm.sock'), web: 0, metrics: 0 };
    if (kind === 'opensm') {
      sm = child('opensm', ['-d2', '-f', log], { env: { ...env, OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, cwd: dir, preload: true });
    } else {
      at.web = 21000 + ((process.pid * 13 + seq) % 20000);
      at.metrics = at.web + 1;
      const bin = o.cli ?? BIN;
      const cmd = o.nodeFlags?.length || o.cli ? [process.execPath, ...(o.nodeFlags ?? []), bin] : [bin];
      sm = child(cmd[0], [...cmd.slice(1), 'run', '--umad', '--sm-key', '0x5eb0', '--sweep-interval', '10', '--log-file', log, '--metrics-listen', `127.0.0.1:${at.metrics}`, '--web', `127.0.0.1:${at.web}`, '--control-socket', at.socket], { env, cwd: dir, preload: true });
    }
    procs.push(sm);
    say('waiting for SUBNET UP');
    await until(`${kind} SUBNET UP`, () => existsSync(log) && readFileSync(log, 'utf8').includes('SUBNET UP'), 90_000);
    await sleep(1500);
    const logSize = () => statSync(log).size + sm.bytes();
    // The legitimate client at the last host, asking the path to the one before it.
    const dHost = hosts[hosts.length - 2];
    // ibnetdiscover names a CA "H-<node GUID>" (its SIM_HOST name); its port 1 has the port GUID.
    const dGuid = f.nodes.find((n) => n.guid === BigInt('0x' + dHost.slice(2))).ports[1].guid;
    const legit = child(process.execPath, [HOST, JSON.stringify({ op: 'legit', dgid: '0x' + ((0xfe80000000000000n << 64n) | BigInt(dGuid)).toString(16), intervalMs: 50 })], { env: { ...env, SIM_HOST: hosts[hosts.length - 1] }, cwd: dir, preload: true });
    procs.push(legit);
    say('legit client starting');
    await until('legit client', () => legit.out().includes('READY') || !legit.alive(), 30_000);
    const idleMs = o.idleMs ?? 3000;
    const rssIdle = [];
    const tIdle = Date.now() + idleMs;
    while (Date.now() < tIdle) {
      rssIdle.push(rssMb(sm.pid));
      await sleep(100);
    }
    const lat = () => [...legit.out().matchAll(/^Q ([\d.]+)$/gm)].map((m) => Number(m[1]));
    const fails = () => [...legit.out().matchAll(/^F (.*)$/gm)].map((m) => m[1]);
    const idleLat = lat();
    out.idle = { rssMb: quantile(rssIdle, 0.5), pathRecordMs: { p50: quantile(idleLat, 0.5), p99: quantile(idleLat, 0.99), n: idleLat.length } };
    if (kind === 'ibsm') out.idle.metricsBytes = (await httpGet(at.metrics, '/metrics')).bytes;
    out.idle.logBytes = logSize();

    say(`idle: ${JSON.stringify(out.idle)}`);
    // The attacks, all at once.
    const t0 = Date.now();
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, rssMb(sm.pid) || 0);
        await sleep(100);
      }
    })();
    const attackers = [];
    for (let i = 0; i < nHosts; i++) attackers.push(child(process.execPath, [HOST, JSON.stringify({ op: 'sa', count: Math.ceil(nSa / nHosts), seed: 100 + i })], { env: { ...env, SIM_HOST: hosts[1 + i] }, cwd: dir, preload: true }));
    for (let i = 0; i < 2; i++) attackers.push(child(process.execPath, [HOST, JSON.stringify({ op: 'sminfo', count: Math.ceil(nSmInfo / 2), seed: 200 + i })], { env: { ...env, SIM_HOST: hosts[1 + nHosts + i] }, cwd: dir, preload: true }));
    procs.push(...attackers);
    let attacking = true;
    const statuses = { ok: 0, failed: 0 };
    const ops =
      kind === 'ibsm'
        ? (async () => {
            while (attacking) {
              await controlRequest(at.socket, { cmd: 'status' }, 10_000).then(
                () => statuses.ok++,
                () => statuses.failed++,
              );
              await sleep(250);
            }
          })()
        : Promise.resolve();
    const conns = kind === 'ibsm' ? abuseConnections(nConns, at, () => false) : Promise.resolve(0);
    // ibsim wedges now and then under such a flood (spinning on a full client socket, reading none:
    // docs/ibsim-notes.md); no legitimate answer for 30 s (failures do not count: a wedged ibsim
    // still times requests out) ends the run, said in `wedged`.
    let answered = -1;
    let since = Date.now();
    const watchdog = setInterval(() => {
      const n = lat().length;
      if (n !== answered) [answered, since] = [n, Date.now()];
      else if (Date.now() - since > 30_000 && !out.wedged) {
        out.wedged = 'no PathRecord answered for 30 s; attackers stopped';
        for (const a of attackers) void a.stop();
      }
    }, 1000);
    const watch = setInterval(async () => {
      if (!o.progress) return;
      const m = kind === 'ibsm' ? await httpGet(at.metrics, '/metrics') : {};
      const mb = (name) => (Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(m.text ?? '')?.[1]) / 1048576).toFixed(1);
      say(`attackers: ${attackers.map((a) => (a.alive() ? 'running' : 'done')).join(' ')}; legit answers ${lat().length}; metrics ${m.status} ${m.bytes ?? m.error}; rss ${rssMb(sm.pid).toFixed(0)} MB, heap ${mb('nodejs_heap_size_total_bytes')} (used ${mb('nodejs_heap_size_used_bytes')}), external ${mb('nodejs_external_memory_bytes')} MB`);
    }, 2000);
    const results = await Promise.all(attackers.map(async (a) => (await a.done, a.out())));
    clearInterval(watch);
    clearInterval(watchdog);
    say('attackers done');
    out.conns = await conns;
    say('connections done');
    attacking = false;
    await ops;
    out.attackMs = Date.now() - t0;
    await sleep(2000); // what the SM still had queued
    sampling = false;
    await sampler;
    const during = lat().slice(idleLat.length);
    out.attackers = results.map((r) => {
      const line = r.split('\n').find((l) => l.startsWith('RESULT '));
      return line ? JSON.parse(line.slice(7)) : r.slice(-300);
    });
    out.after = { alive: sm.alive(), rssPeakMb: peak, logBytes: logSize(), pathRecordMs: { p50: quantile(during, 0.5), p99: quantile(during, 0.99), max: Math.max(...during), n: during.length }, pathRecordFailures: fails().length, failureSample: fails().slice(0, 3) };
    if (kind === 'ibsm') {
      out.after.metricsBytes = (await httpGet(at.metrics, '/metrics')).bytes;
      out.after.status = statuses;
      out.after.suppressedLines = (readFileSync(log, 'utf8').match(/IBSM-8050/g) ?? []).length;
    }
    out.checks = {
      alive: sm.alive(),
      rssPeakWithin1_5xIdle: peak <= 1.5 * out.idle.rssMb,
      logGrowthUnder1MB: out.after.logBytes - out.idle.logBytes <= 1 << 20,
      metricsWithin2x: kind === 'ibsm' ? out.after.metricsBytes <= 2 * out.idle.metricsBytes : undefined,
      pathRecordP99Within2xIdle: out.after.pathRecordMs.p99 <= 2 * out.idle.pathRecordMs.p99,
      everyPathRecordAnswered: fails().length === 0,
    };
  } finally {
    for (const p of procs.reverse()) await p.stop();
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values: a } = parseArgs({
    options: {
      sm: { type: 'string', default: 'ibsm' },
      topo: { type: 'string', default: 'gen:fattree2:leaves=4,spines=2,hosts=4' },
      sa: { type: 'string', default: '1000000' },
      sminfo: { type: 'string', default: '100000' },
      conns: { type: 'string', default: '10000' },
      hosts: { type: 'string', default: '4' },
      json: { type: 'boolean', default: false },
      progress: { type: 'boolean', default: false },
      'idle-ms': { type: 'string', default: '3000' },
      cli: { type: 'string' },
      'ibsm-node-flags': { type: 'string', default: '' },
    },
  });
  const nodeFlags = a['ibsm-node-flags'].split(' ').filter(Boolean);
  const progress = a.progress ? (line) => console.error(`${new Date().toISOString().slice(11, 19)} ${line}`) : undefined;
  for (const sm of a.sm.split(',')) {
    const r = await runAbuse({ sm, topo: a.topo, sa: Number(a.sa), sminfo: Number(a.sminfo), conns: Number(a.conns), hosts: Number(a.hosts), nodeFlags, progress, idleMs: Number(a['idle-ms']), cli: a.cli });
    console.log(a.json ? JSON.stringify(r) : JSON.stringify(r, null, 2));
  }
}

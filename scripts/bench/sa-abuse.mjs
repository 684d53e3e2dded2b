#!/usr/bin/env node
// One abusive host against the SA, ibsm beside OpenSM on the same ibsim fabric (issue #11 item 5).
//
//   node scripts/bench/sa-abuse.mjs [--topo gen:fattree2:leaves=4,spines=2,hosts=8] [--sm opensm,ibsm]
//                                   [--groups 1000] [--informs 50000] [--noack 5000] [--outstanding 16] [--rounds 2]
//
// For each SM, a fresh ibsim of the topology, the SM at its first node, and one preloaded client
// (test/fixtures/ibsim-sa-abuse.mjs) at another CA that runs, in order: `--groups` MCMemberRecord
// creates with `--outstanding` in flight; `--informs` InformInfo Sets (100 distinct subscriptions
// over and over), both `--rounds` times (the groups and subscriptions of round 1 stay: later rounds
// show the bounds holding and whether memory keeps growing); then `--noack` NodeRecord GetTables
// whose RMPP answers it never ACKs, after which ibsm's metrics endpoint is read and the SM gets
// SIGTERM (does its event loop still run?). After each phase
// the SM's resident memory (VmRSS), the statuses the client got, and the SM's log size. Prints
// figures, asserts nothing. Every process started here is stopped by its PID. Run `npm run build`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { ibsimLimitArgs } from './ibsim-limits.mjs';
import { child as spawnChild, listening, rssMb, sleep, until } from './procs.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'dist/cli/main.js');
const CLIENT = path.join(ROOT, 'test/fixtures/ibsim-sa-abuse.mjs');
const { values: o } = parseArgs({
  options: {
    topo: { type: 'string', default: 'gen:fattree2:leaves=4,spines=2,hosts=8' },
    sm: { type: 'string', default: 'opensm,ibsm' },
    groups: { type: 'string', default: '1000' },
    informs: { type: 'string', default: '50000' },
    noack: { type: 'string', default: '5000' },
    outstanding: { type: 'string', default: '16' },
    /** Run the three phases this many times (RSS that stops growing after the first is not a leak). */
    rounds: { type: 'string', default: '2' },
  },
});
const scratch = mkdtempSync(path.join(os.tmpdir(), 'ibsm-bench-abuse-'));
const child = (cmd, args, opts = {}) => spawnChild(cmd, args, { cwd: scratch, ...opts });
let seq = 0;
const { loadFabricSpec } = await import(path.join(ROOT, 'dist/model/load.js'));
const { formatIbnetdiscover } = await import(path.join(ROOT, 'dist/model/ibnetdiscover.js'));

const f = loadFabricSpec(o.topo);
const file = path.join(scratch, 'topo.net');
writeFileSync(file, formatIbnetdiscover(f, { timestamp: 'bench' }));
const hosts = [...readFileSync(file, 'utf8').matchAll(/^(?:Hca|Ca)\s+\d+\s+"([^"]+)"/gm)].map((m) => m[1]);

async function run(kind) {
  const sock = `ibsmabuse${process.pid}_${seq++}`;
  const fifo = path.join(scratch, `${sock}.fifo`);
  spawnSync('mkfifo', [fifo]);
  const ib = child('bash', ['-c', `exec ibsim ${ibsimLimitArgs(f).join(' ')} -s "${file}" <> "${fifo}"`], { env: { IBSIM_SOCKNAME: sock } });
  const rows = [];
  let sm;
  try {
    await until('ibsim listening', () => listening(sock), 20_000);
    const dir = mkdtempSync(path.join(scratch, `${kind}-`));
    let logBytes;
    let metricsPort;
    if (kind === 'opensm') {
      const log = path.join(dir, 'opensm.log');
      sm = child('opensm', ['-d2', '-f', log], { env: { IBSIM_SOCKNAME: sock, OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, cwd: dir, preload: true });
      await until('OpenSM SUBNET UP', () => existsSync(log) && readFileSync(log, 'utf8').includes('SUBNET UP'), 60_000);
      logBytes = () => statSync(log).size + sm.bytes();
    } else {
      metricsPort = 20000 + ((process.pid * 7 + seq) % 20000);
      sm = child(process.execPath, [CLI, 'run', '--umad', '--sweep-interval', '10', '--metrics-port', String(metricsPort)], { env: { IBSIM_SOCKNAME: sock }, cwd: dir, preload: true });
      await until('ibsm SUBNET UP', () => sm.out().includes('SUBNET UP'), 60_000);
      logBytes = () => sm.bytes();
    }
    await sleep(1000);
    rows.push({ phase: 'up', rss: rssMb(sm.pid), log: logBytes() });
    const phase = async (name, op, count) => {
      if (!count) return;
      const c = child(process.execPath, [CLIENT, JSON.stringify({ op, count, outstanding: Number(o.outstanding) })], { env: { IBSIM_SOCKNAME: sock, SIM_HOST: hosts[Math.floor(hosts.length / 2)] }, preload: true });
      const timer = setTimeout(() => void c.stop(), 120_000); // a wedged ibsim (it spins under OpenSM at its MLID cap) ends the phase
      await c.done;
      clearTimeout(timer);
      const line = c.out().split('\n').find((l) => l.startsWith('RESULT '));
      await sleep(2000);
      rows.push({ phase: name, rss: rssMb(sm.pid), log: logBytes(), alive: sm.alive(), result: line ? JSON.parse(line.slice(7)) : c.out().slice(-300) });
    };
    for (let round = 1; round <= Number(o.rounds); round++) {
      await phase(`${round}: ${o.groups} creates`, 'mcast', Number(o.groups));
      await phase(`${round}: ${o.informs} InformInfo`, 'inform', Number(o.informs));
    }
    // Last: the unACKed GetTable flood leaves ibsim spinning (its own limit, docs/ibsim-notes.md),
    // with the sockets toward it full. Is the SM's event loop still free? Metrics, then SIGTERM.
    await phase(`${o.noack} GetTable no ACK`, 'noack', Number(o.noack));
    if (metricsPort) {
      const t0 = Date.now();
      const ctl = new AbortController();
      const to = setTimeout(() => ctl.abort(), 5000);
      const m = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { signal: ctl.signal }).then((r) => r.text(), (e) => `no answer (${e.name})`);
      clearTimeout(to);
      rows.push({ phase: 'metrics after flood', rss: rssMb(sm.pid), log: logBytes(), result: m.startsWith('no answer') ? m : `answered in ${Date.now() - t0} ms` });
    }
    const t1 = Date.now();
    try {
      process.kill(sm.pid, 'SIGTERM');
    } catch {
      /* gone */
    }
    const exited = await Promise.race([sm.done.then(() => true), sleep(10_000).then(() => false)]);
    rows.push({ phase: 'SIGTERM', rss: NaN, log: logBytes(), result: exited ? `exited in ${Date.now() - t1} ms` : 'still running after 10 s' });
  } finally {
    await sm?.stop();
    await ib.stop();
  }
  return rows;
}

console.log(`SA abuse from one host on ibsim, ${o.topo} (${f.nodes.length} nodes), ${o.outstanding} outstanding`);
for (const kind of o.sm.split(',')) {
  const rows = await run(kind);
  console.log(`\n${kind}`);
  for (const r of rows) {
    // OpenSM's InformInfo answers do not decode in ibsm's client (DecodeError): they are answers all the same.
    const res = r.result ? ` ${typeof r.result === 'string' ? r.result : JSON.stringify(r.result)}` : '';
    console.log(`  ${r.phase.padEnd(24)} RSS ${Number.isNaN(r.rss) ? '    -' : r.rss.toFixed(0).padStart(5)} MB  log ${String(r.log).padStart(9)} B${r.alive === false ? '  SM EXITED' : ''}${res}`);
  }
}

#!/usr/bin/env node
// MAD round trips through ibsim: a minimal C loop over libibumad (umad-rtt.c) against ibsm's
// UmadTransport (native addon) with the same window of outstanding directed-route NodeInfo Gets.
// Figures are printed, never asserted.
//
// usage: node scripts/bench/umad-rtt.mjs [--seconds S] [--hops 0|1] [--windows 1,16,64]
// Needs: npm run build (dist/), npm run build:native, ibsim-utils, libibumad-dev, cc.
// (Run with --child internally: the preloaded ibsm side of one measurement.)
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { flag, opt } from './args.mjs';
import { UMAD2SIM } from './ibsim.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const arg = opt;

if (flag('--child')) await child();
else await main();

// ---------- the ibsm side (runs preloaded) ----------
async function child() {
  const seconds = Number(arg('--seconds', '3'));
  const window = Number(arg('--window', '16'));
  const hops = Number(arg('--hops', '1'));
  const { openUmad } = await import(path.join(root, 'dist/transport/umad.js'));
  const { SmpDr, MgmtClass, Method, SmpAttr, PERMISSIVE_LID } = await import(path.join(root, 'dist/wire/mad.js'));
  const t = openUmad({});
  t.register(MgmtClass.SubnLid, 1);
  t.register(MgmtClass.SubnDirected, 1);
  const initialPath = new Array(64).fill(0);
  initialPath[1] = 1;
  const mad = SmpDr.encode({
    baseVersion: 1,
    mgmtClass: MgmtClass.SubnDirected,
    classVersion: 1,
    method: Method.Get,
    hopCount: hops,
    attrId: SmpAttr.NodeInfo,
    drSlid: PERMISSIVE_LID,
    drDlid: PERMISSIVE_LID,
    initialPath,
  });
  const dv = new DataView(mad.buffer, mad.byteOffset, mad.byteLength);
  const addr = { lid: PERMISSIVE_LID, qpn: 0 };
  const outstanding = new Set();
  let seq = 1;
  let done = 0;
  let errors = 0;
  let running = true;
  const start = performance.now();
  const sendOne = () => {
    dv.setUint32(12, seq); // low 32 TID bits: ours to match on
    outstanding.add(seq);
    seq = (seq + 1) >>> 0 || 1;
    t.send(mad, addr); // the addon copies the bytes before returning, so one buffer serves all
  };
  let finish;
  const drained = new Promise((r) => (finish = r));
  t.onReceive((m) => {
    const tid = ((m.data[12] << 24) | (m.data[13] << 16) | (m.data[14] << 8) | m.data[15]) >>> 0;
    if (!outstanding.delete(tid)) return;
    if (m.status !== 0) errors++;
    else done++;
    if (running) sendOne();
    else if (outstanding.size === 0) finish();
  });
  setTimeout(() => {
    running = false;
    if (outstanding.size === 0) finish();
    setTimeout(finish, 2000).unref(); // MADs lost at the end
  }, seconds * 1000);
  for (let i = 0; i < window; i++) sendOne();
  await drained;
  const elapsed = (performance.now() - start) / 1000;
  await t.close();
  process.stdout.write(JSON.stringify({ done, errors, seconds: Number(elapsed.toFixed(3)), rate: Math.round(done / elapsed) }) + '\n');
}

// ---------- the driver ----------
async function main() {
  const seconds = Number(arg('--seconds', '3'));
  const hops = Number(arg('--hops', '1'));
  const windows = arg('--windows', '1,16,64').split(',').map(Number);
  for (const [what, p] of [
    ['dist/transport/umad.js (run: npm run build)', path.join(root, 'dist/transport/umad.js')],
    ['build/Release/ibsm_umad.node (run: npm run build:native)', path.join(root, 'build/Release/ibsm_umad.node')],
    ['ibsim (install ibsim-utils)', '/usr/bin/ibsim'],
    [UMAD2SIM + ' (install ibsim-utils)', UMAD2SIM],
  ]) {
    if (!existsSync(p)) throw new Error(`missing ${what}`);
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-bench-'));
  try {
    const bin = path.join(dir, 'umad-rtt');
    const cc = spawnSync('cc', ['-O2', '-Wall', '-o', bin, path.join(here, 'umad-rtt.c'), '-libumad'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`building umad-rtt.c failed:\n${cc.stderr}`);
    const net = path.join(dir, 'bench.net');
    writeFileSync(net, 'Hca 2 "H1"\n[1] "S1"[1]\n\nSwitch 8 "S1"\n[1] "H1"[1]\n');
    const sim = await startIbsim(net, dir);
    try {
      const rows = [];
      for (const w of windows) {
        const c = await runPreloaded(sim, dir, bin, [String(seconds), String(w), String(hops)], seconds);
        const n = await runPreloaded(sim, dir, process.execPath, [fileURLToPath(import.meta.url), '--child', '--seconds', String(seconds), '--window', String(w), '--hops', String(hops)], seconds);
        rows.push({ w, c, n });
      }
      console.log(`DR NodeInfo Get round trips through ibsim (hop count ${hops}, ${seconds} s per run)`);
      console.log('outstanding   C libibumad/s   ibsm/s   ibsm/C   (errors C/ibsm)');
      for (const { w, c, n } of rows) {
        console.log(
          `${String(w).padStart(11)}   ${String(c.rate).padStart(13)}   ${String(n.rate).padStart(6)}   ${(n.rate / c.rate).toFixed(2).padStart(6)}   (${c.errors}/${n.errors})`,
        );
      }
    } finally {
      await sim.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function startIbsim(net, dir) {
  const sockname = `ibsmbench${process.pid}`;
  const fifo = path.join(dir, 'console');
  const log = path.join(dir, 'ibsim.log');
  if (spawnSync('mkfifo', [fifo]).status !== 0) throw new Error('mkfifo failed');
  const p = spawn('bash', ['-c', 'exec ibsim -s "$1" <> "$2" > "$3" 2>&1', 'ibsim', net, fifo, log], { env: { ...process.env, IBSIM_SOCKNAME: sockname }, stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  const want = `@${sockname}:ctl`;
  while (!readFileSync('/proc/net/unix', 'utf8').split('\n').some((l) => l.includes(want) && /^@*\s*$/.test(l.slice(l.indexOf(want) + want.length)))) {
    if (p.exitCode !== null || Date.now() > deadline) throw new Error(`ibsim did not start:\n${readFileSync(log, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    sockname,
    console: (cmd) => appendFile(fifo, cmd + '\n'),
    stop: async () => {
      if (p.exitCode === null) {
        process.kill(p.pid, 'SIGTERM');
        await new Promise((r) => p.once('exit', r));
      }
    },
  };
}

// One measurement in a preloaded child under a 1024 open-file limit, killed by PID if it hangs.
function runPreloaded(sim, dir, cmd, args, seconds) {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, IBSIM_SOCKNAME: sim.sockname, LD_PRELOAD: UMAD2SIM, SIM_HOST: 'H1' };
    const c = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    const timer = setTimeout(() => process.kill(c.pid, 'SIGKILL'), (seconds + 15) * 1000);
    c.once('close', (code) => {
      clearTimeout(timer);
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) reject(new Error(`${path.basename(cmd)} failed (code ${code}):\n${out}\n${err}`));
      else resolve(JSON.parse(line));
    });
  });
}

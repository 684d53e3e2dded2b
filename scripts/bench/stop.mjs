#!/usr/bin/env node
// Stop benchmark (issue #28): how long an idle SM takes from SIGTERM to its exit, on ibsim's
// 4-host example fabric: ibsm through its launcher (dist/bundle/ibsm, native/ibsm-launch.c: the
// signal goes to the launcher, which passes it on and exits after its child), ibsm through the bin
// (dist/bundle/ibsm.cjs, no launcher) and OpenSM at its defaults, side by side. Each SM is started
// on a fresh ibsim, left idle 500 ms after SUBNET UP (ibsm: after its idle-time work, the
// rehearsed re-route), then sent SIGTERM by PID; the figure is the time to the process's exit (all
// its pipes closed). Runs interleaved; medians printed, with the exit status and whether ibsm
// logged its stopping line. Asserts nothing.
//
//   npm run build && node scripts/bench/stop.mjs [--runs N]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { clientEnv, startIbsim } from './ibsim.mjs';
import { opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const runs = Math.max(1, Number(opt('--runs', '7')));
const NET = '/usr/share/doc/ibsim-utils/net-examples/net.2sw2path4hca';
const LIMITS = { nodes: 2048, switches: 256, ports: 13312 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Start `cmd` (bash, ulimit, exec: the PID is the command's), wait for `ready` in its output,
 * idle 500 ms, SIGTERM; ms from the signal to the exit. */
async function stopOne(cmd, args, env, cwd, ready) {
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const closed = new Promise((r) => child.once('close', (code, signal) => r(code ?? signal)));
  for (const end = Date.now() + 60_000; Date.now() < end && !ready.test(out) && child.exitCode === null; ) await sleep(5);
  await sleep(500);
  const t0 = performance.now();
  process.kill(child.pid, 'SIGTERM');
  const kill = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await closed;
  clearTimeout(kill);
  return { ms: performance.now() - t0, code, stopLine: /IBSM-8002 ibsm stopping reason=SIGTERM/.test(out) };
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-stop-'));
const IBSM_READY = /IBSM-4012 incremental re-route rehearsed|SUBNET UP/;
const sms = {
  'ibsm (launcher, dist/bundle/ibsm)': (cwd) => [path.join(here, '../../dist/bundle/ibsm'), ['run', '--umad', '--verbose', '--control-socket', 'none', '--guid2lid', path.join(cwd, 'guid2lid')], {}, IBSM_READY],
  'ibsm (bin, dist/bundle/ibsm.cjs)': (cwd) => [path.join(here, '../../dist/bundle/ibsm.cjs'), ['run', '--umad', '--verbose', '--control-socket', 'none', '--guid2lid', path.join(cwd, 'guid2lid')], {}, IBSM_READY],
  'opensm': (cwd) => ['opensm', ['-F', '/dev/null', '-f', path.join(cwd, 'opensm.log'), '--dump_files_dir', cwd], { OSM_CACHE_DIR: cwd, OSM_TMP_DIR: cwd }, /SUBNET UP/],
};
const rows = Object.fromEntries(Object.keys(sms).map((k) => [k, []]));
const load0 = os.loadavg();
try {
  for (let run = 0; run < runs; run++) {
    const names = run % 2 ? Object.keys(sms).reverse() : Object.keys(sms);
    for (const name of names) {
      const cwd = path.join(dir, `run${run}-${rows[name].length}-${name.split(' ')[0]}-${names.indexOf(name)}`);
      mkdirSync(cwd, { recursive: true });
      const [cmd, args, extra, ready] = sms[name](cwd);
      const sim = await startIbsim(NET, { dir, limits: LIMITS, prefix: 'ibsmstop' });
      try {
        rows[name].push(await stopOne(cmd, args, clientEnv(sim, 'Hca1', extra), cwd, ready));
      } finally {
        await sim.stop();
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const load1 = os.loadavg();
const med = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
console.log(`idle SIGTERM to exit, median of ${runs} interleaved runs (ibsim ${path.basename(NET)}, attached at Hca1)`);
console.log(`load average before ${load0.map((x) => x.toFixed(2)).join(' ')}, after ${load1.map((x) => x.toFixed(2)).join(' ')}`);
for (const [name, rs] of Object.entries(rows)) {
  const codes = [...new Set(rs.map((r) => String(r.code)))].join('/');
  const lines = name.startsWith('ibsm') ? `, stopping line ${rs.filter((r) => r.stopLine).length}/${rs.length}` : '';
  console.log(`${name.padEnd(36)} ${med(rs.map((r) => r.ms)).toFixed(1).padStart(8)} ms  (min ${Math.min(...rs.map((r) => r.ms)).toFixed(1)}, max ${Math.max(...rs.map((r) => r.ms)).toFixed(1)}; exit ${codes}${lines})`);
}

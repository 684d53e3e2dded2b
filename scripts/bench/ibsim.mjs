// ibsim for the benches, in one place: started on a topology file with its console on a fifo
// (opened read-write so the console never sees EOF), its own IBSIM_SOCKNAME, stopped by PID
// (SIGTERM, then SIGKILL), never by name.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { waitExit } from './wait-exit.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The preload that puts a libibumad client (the SMs, the diags) on ibsim. */
export const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';

/** The environment of a preloaded client of `sim`, attached at `simHost` (default ibsim's first node). */
export function clientEnv(sim, simHost, extra = {}) {
  const env = { ...process.env, IBSIM_SOCKNAME: sim.sockname, LD_PRELOAD: UMAD2SIM, ...extra };
  delete env.NODE_OPTIONS;
  if (simHost) env.SIM_HOST = simHost;
  return env;
}

/** Run a client to completion under a 1024 open-file limit (umad2sim owns fds from 1024 up);
 * killed by PID after `ms`. Resolves with { code, signal, out, err }. */
export function runClient(cmd, args, env, cwd, ms = 120_000) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const t = setTimeout(() => {
      try {
        process.kill(child.pid, 'SIGKILL');
      } catch {}
    }, ms);
    child.once('close', (code, signal) => {
      clearTimeout(t);
      resolve({ code, signal, out, err });
    });
  });
}

/** Whether an abstract unix socket of that name is listening (ibsim's `<sockname>:ctl`). */
export function abstractSocketExists(name) {
  const want = '@' + name;
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .some((l) => {
      const i = l.indexOf(want);
      return i >= 0 && /^@*\s*$/.test(l.slice(i + want.length)); // the name's NUL padding shows as @
    });
}

/** Stop a child by its PID: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stopChild(child, graceMs = 5000) {
  for (const sig of ['SIGTERM', 'SIGKILL']) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(child.pid, sig);
    } catch {}
    if (await waitExit(child, sig === 'SIGTERM' ? graceMs : 5000)) return;
  }
}

let simCounter = 0;

/**
 * Start ibsim on `netFile` with `limits` ({ nodes, switches, ports }: ibsim-limits.mjs) and wait
 * until its console prompts. Scratch files go to `dir`; `prefix` names its IBSIM_SOCKNAME (with
 * this process's PID and a counter). Resolves with:
 *   sockname, pid, log (its console output file),
 *   console(cmd): one console command, resolved at ibsim's next prompt,
 *   write(cmd): the command written, not waited for,
 *   stop(): by PID.
 */
export async function startIbsim(netFile, { dir, limits, prefix = 'ibsmbench', timeoutMs = 20_000 + limits.nodes * 5 }) {
  const sockname = `${prefix}${process.pid}_${simCounter++}`;
  const fifo = path.join(dir, `ibsim-${sockname}.fifo`);
  const log = path.join(dir, `ibsim-${sockname}.log`);
  if (spawnSync('mkfifo', [fifo]).status !== 0) throw new Error(`mkfifo ${fifo} failed`);
  const args = ['-N', String(limits.nodes), '-S', String(limits.switches), '-P', String(limits.ports), '-s', netFile];
  // exec: the PID we hold is ibsim's.
  const child = spawn('bash', ['-c', 'exec ibsim "$@" <> "$F" > "$L" 2>&1', 'ibsim', ...args], { env: { ...process.env, IBSIM_SOCKNAME: sockname, F: fifo, L: log }, stdio: 'ignore' });
  const text = () => (existsSync(log) ? readFileSync(log, 'utf8') : '');
  const prompts = () => (text().match(/sim> /g) ?? []).length;
  const stop = async () => {
    await stopChild(child);
    rmSync(fifo, { force: true });
  };
  const deadline = Date.now() + timeoutMs;
  while (!abstractSocketExists(`${sockname}:ctl`) || prompts() === 0) {
    if (child.exitCode !== null || child.signalCode !== null || text().includes('ibpanic') || Date.now() > deadline) {
      await stop();
      throw new Error(`ibsim did not come up on ${netFile}:\n${text().split('\n').slice(-5).join('\n')}`);
    }
    await sleep(20);
  }
  const consoleCmd = async (cmd) => {
    const before = prompts();
    appendFileSync(fifo, cmd + '\n');
    const limit = Date.now() + 10_000;
    while (prompts() <= before) {
      if (Date.now() > limit) throw new Error(`ibsim did not answer "${cmd}"`);
      await sleep(10);
    }
  };
  return { sockname, pid: child.pid, log, console: consoleCmd, write: (cmd) => appendFile(fifo, cmd + '\n'), stop };
}

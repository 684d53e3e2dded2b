// ibsim for the benches, in one place: started on a topology file with its console on a fifo
// (opened read-write so the console never sees EOF), its own IBSIM_SOCKNAME, stopped by PID
// (SIGTERM, then SIGKILL), never by name.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { waitExit } from './wait-exit.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

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

/** Stop a child by its PID: SIGTERM, then SIGKILL if it is still there after 5 s. */
export async function stopChild(child) {
  for (const sig of ['SIGTERM', 'SIGKILL']) {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(child.pid, sig);
    } catch {}
    if (await waitExit(child, 5000)) return;
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

// Processes of the ibsim benches (sa-abuse.mjs, abuse.mjs): a child with its output kept (the first
// MB) and counted, stopped by its PID (SIGTERM, then SIGKILL after 5 s); whether ibsim listens; a
// poll until a condition holds; a process's resident memory.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function child(cmd, args, { env = {}, cwd, preload = false } = {}) {
  const e = { ...process.env, ...env };
  if (preload) e.LD_PRELOAD = UMAD2SIM;
  const p = spawn('bash', ['-c', `${preload ? 'ulimit -n 1024 && ' : ''}exec "$@"`, 'bash', cmd, ...args], { cwd, env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let bytes = 0;
  const take = (d) => {
    bytes += d.length;
    if (out.length < 1 << 20) out += d;
  };
  p.stdout.setEncoding('utf8').on('data', take);
  p.stderr.setEncoding('utf8').on('data', take);
  const done = new Promise((r) => p.once('close', (code) => r(code)));
  let exited = false;
  void done.then(() => (exited = true));
  return {
    pid: p.pid,
    out: () => out,
    bytes: () => bytes,
    alive: () => !exited,
    done,
    stop: async () => {
      try {
        process.kill(p.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      const t = setTimeout(() => {
        try {
          process.kill(p.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 5000);
      await done;
      clearTimeout(t);
    },
  };
}

export function listening(sock) {
  const want = `@${sock}:ctl`;
  return readFileSync('/proc/net/unix', 'utf8').split('\n').some((l) => {
    const i = l.indexOf(want);
    return i >= 0 && /^@*\s*$/.test(l.slice(i + want.length));
  });
}
export async function until(what, pred, ms) {
  const end = Date.now() + ms;
  while (!(await pred())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await sleep(100);
  }
}
export function rssMb(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** On SIGINT/SIGTERM, SIGKILL every PID in `live` (the children a bench started and still runs:
 * ibsim, the SMs) and exit 130, so an interrupted bench leaves nothing behind. */
export function killOnInterrupt(live) {
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      for (const pid of live) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
      process.exit(130);
    });
  }
}

/** An SM started by a bench (`log()` its output so far, `child`, `counts()` from umad-count.mjs):
 * wait for its SUBNET UP (at most `upMs`), then until it sent no SMP for `settleMs` (its start-up
 * sweeps, OpenSM's first ones, ibsm's multicast programming and SA warm-up). */
export async function upAndSettled(sm, kind, { upMs, settleMs }) {
  const deadline = Date.now() + upMs;
  while (!/SUBNET UP/.test(sm.log())) {
    if (Date.now() > deadline || sm.child.exitCode !== null) throw new Error(`${kind}: no SUBNET UP`);
    await sleep(100);
  }
  for (let prev = -1; sm.counts().smps !== prev; ) {
    prev = sm.counts().smps;
    await sleep(settleMs);
  }
}

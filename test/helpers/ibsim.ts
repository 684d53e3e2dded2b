/** Test harness for ibsim: start a private simulated fabric, drive its console, and run programs
 * attached to it through the umad2sim preload (in child processes: never preload vitest itself).
 *
 * Each start uses its own IBSIM_SOCKNAME (pid + counter), a fifo opened read-write as ibsim's
 * console (so it never sees EOF), and is stopped by PID only. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const UMAD2SIM = '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so';
export const IBSIM_EXAMPLES = '/usr/share/doc/ibsim-utils/net-examples';

export interface IbsimOptions {
  /** Extra ibsim arguments, e.g. ['-N', '4096'] to raise its node limit. */
  args?: string[];
  /** How long to wait for ibsim's control socket (default 10 s). */
  startTimeoutMs?: number;
}

export interface Ibsim {
  readonly sockname: string;
  /** The environment a client needs (IBSIM_SOCKNAME). */
  readonly env: Readonly<Record<string, string>>;
  readonly pid: number;
  /** ibsim's stdout+stderr. */
  readonly logPath: string;
  /** Send one console command, wait until ibsim has processed it (its next prompt), and return
   * what it printed in between. */
  console(cmd: string): Promise<string>;
  /** ibsim's output so far. */
  log(): string;
  stop(): Promise<void>;
}

export interface RunOptions {
  ibsim: Ibsim;
  /** Working directory (umad2sim writes sys-<pid>/ there); default: a fresh dir under os.tmpdir(). */
  cwd?: string;
  /** Attach at this node (SIM_HOST), e.g. "Hca1"; default: the first node of the topology. */
  simHost?: string;
  /** Mark the client as SM (SIM_SET_ISSM=1). */
  setIsSm?: boolean;
  env?: Record<string, string>;
  timeoutMs: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

let counter = 0;
const PROMPT = 'sim> ';

/** Throws an actionable error when the simulator or the preload is not installed. */
export function requireIbsim(): void {
  const r = spawnSync('bash', ['-c', 'command -v ibsim'], { encoding: 'utf8' });
  if (r.status !== 0 || !existsSync(UMAD2SIM)) {
    throw new Error(`ibsim tests need ibsim and ${UMAD2SIM}: install them with: sudo apt-get install ibsim-utils libibumad-dev`);
  }
}

/** True when an abstract unix socket named @<name> is bound (ibsim listens on @<sockname>:ctl). */
export function abstractSocketExists(name: string): boolean {
  const want = '@' + name;
  return readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .some((line) => {
      const i = line.indexOf(want);
      return i >= 0 && /^@*\s*$/.test(line.slice(i + want.length));
    });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function countPrompts(s: string): number {
  let n = 0;
  for (let i = s.indexOf(PROMPT); i >= 0; i = s.indexOf(PROMPT, i + PROMPT.length)) n++;
  return n;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

export async function startIbsim(netFile: string, opts: IbsimOptions = {}): Promise<Ibsim> {
  requireIbsim();
  if (!existsSync(netFile)) throw new Error(`ibsim topology file ${netFile} does not exist`);
  const sockname = `ibsm${process.pid}_${counter++}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), `ibsm-ibsim-${sockname}-`));
  const fifo = path.join(dir, 'console');
  const logPath = path.join(dir, 'ibsim.log');
  const mk = spawnSync('mkfifo', [fifo], { encoding: 'utf8' });
  if (mk.status !== 0) throw new Error(`mkfifo ${fifo} failed: ${mk.stderr}`);
  writeFileSync(logPath, '');
  // `exec` so the PID we hold is ibsim's own; the fifo is opened read-write so ibsim never sees EOF.
  const child = spawn('bash', ['-c', 'exec ibsim -s "$@" <> "$IBSM_FIFO" >> "$IBSM_LOG" 2>&1', 'ibsim', ...(opts.args ?? []), netFile], {
    env: { ...process.env, IBSIM_SOCKNAME: sockname, IBSM_FIFO: fifo, IBSM_LOG: logPath },
    stdio: 'ignore',
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start ibsim');
  const log = (): string => readFileSync(logPath, 'utf8');
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* already gone */
      }
      if (!(await waitExit(child, 5000))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
        await waitExit(child, 5000);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + (opts.startTimeoutMs ?? 10_000);
  while (!abstractSocketExists(`${sockname}:ctl`)) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const out = log();
      await stop();
      throw new Error(`ibsim exited before listening (code ${child.exitCode}, signal ${child.signalCode}):\n${out}`);
    }
    if (Date.now() > deadline) {
      const out = log();
      await stop();
      throw new Error(`ibsim did not open @${sockname}:ctl within ${opts.startTimeoutMs ?? 10_000} ms:\n${out}`);
    }
    await sleep(20);
  }
  // Wait for the first prompt so console commands are not mixed with start-up output.
  while (countPrompts(log()) === 0 && Date.now() < deadline) await sleep(20);

  let queue: Promise<unknown> = Promise.resolve();
  const sendConsole = async (cmd: string): Promise<string> => {
    if (cmd.includes('\n')) throw new Error('one console command at a time');
    const start = log().lastIndexOf(PROMPT) + PROMPT.length;
    const before = countPrompts(log());
    await appendFile(fifo, cmd + '\n');
    const limit = Date.now() + 10_000;
    for (;;) {
      const text = log();
      if (countPrompts(text) > before) return text.slice(start, text.lastIndexOf(PROMPT));
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`ibsim exited while running "${cmd}":\n${text}`);
      if (Date.now() > limit) throw new Error(`ibsim did not answer "${cmd}" within 10 s:\n${text}`);
      await sleep(10);
    }
  };
  return {
    sockname,
    env: { IBSIM_SOCKNAME: sockname },
    pid,
    logPath,
    console: (cmd: string): Promise<string> => {
      const next = queue.then(() => sendConsole(cmd));
      queue = next.catch(() => undefined);
      return next;
    },
    log,
    stop,
  };
}

export interface PreloadedProcess {
  readonly pid: number;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Everything written to stderr so far. */
  stderr(): string;
  /** Wait until stdout has a line for which `pred` is true; returns that line. */
  waitForLine(pred: (line: string) => boolean, timeoutMs: number): Promise<string>;
  /** Resolves when the process has exited (killed by PID on timeout). */
  readonly done: Promise<RunResult>;
  /** Send a signal by PID (default SIGTERM) and wait for the exit. */
  stop(signal?: NodeJS.Signals): Promise<RunResult>;
}

/** Start a program attached to the fabric (LD_PRELOAD=umad2sim) under a 1024 open-file limit:
 * umad2sim takes over fds from 1024 up, so a real fd there would be misread. */
export function startPreloaded(cmd: string, args: readonly string[], opts: RunOptions): PreloadedProcess {
  const ownCwd = opts.cwd === undefined;
  const cwd = opts.cwd ?? mkdtempSync(path.join(os.tmpdir(), 'ibsm-client-'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...opts.ibsim.env,
    ...opts.env,
    LD_PRELOAD: UMAD2SIM,
  };
  delete env.NODE_OPTIONS; // the test runner's loader hooks must not follow into the child
  if (opts.simHost !== undefined) env.SIM_HOST = opts.simHost;
  if (opts.setIsSm) env.SIM_SET_ISSM = '1';
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${cmd}`);
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    for (const w of waiters) w();
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let timedOut = false;
  const kill = (signal: NodeJS.Signals): void => {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  };
  const timer = setTimeout(() => {
    timedOut = true;
    kill('SIGKILL');
  }, opts.timeoutMs);
  const done = new Promise<RunResult>((resolve) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      for (const w of waiters) w();
      if (ownCwd && code === 0) rmSync(cwd, { recursive: true, force: true });
      resolve({ code, signal, stdout, stderr, timedOut });
    }),
  );
  let exited = false;
  void done.then(() => (exited = true));
  return {
    pid,
    stdout: () => stdout,
    stderr: () => stderr,
    done,
    waitForLine: (pred, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        const check = (): void => {
          const line = stdout.split('\n').find(pred);
          if (line !== undefined) finish(() => resolve(line));
          else if (exited || child.exitCode !== null) finish(() => reject(new Error(`${cmd} exited (code ${child.exitCode}) before printing the expected line:\n${stdout}\n${stderr}`)));
        };
        const t = setTimeout(() => finish(() => reject(new Error(`${cmd} did not print the expected line within ${timeoutMs} ms:\n${stdout}\n${stderr}`))), timeoutMs);
        const finish = (f: () => void): void => {
          clearTimeout(t);
          waiters.delete(check);
          f();
        };
        waiters.add(check);
        check();
      }),
    stop: (signal: NodeJS.Signals = 'SIGTERM') => {
      if (!exited) kill(signal);
      return done;
    },
  };
}

/** Run a program attached to the fabric to completion (see startPreloaded). */
export function runPreloaded(cmd: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  return startPreloaded(cmd, args, opts).done;
}

/** Run a node script attached to the fabric (see runPreloaded). */
export function runNodePreloaded(script: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  return runPreloaded(process.execPath, [script, ...args], opts);
}

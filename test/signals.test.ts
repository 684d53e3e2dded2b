/** Signals from the process's first instant (issue #28; native/ibsm-launch.c, the launcher, and
 * src/cli/signals.ts, the bin's first statement). Each of SIGTERM, SIGINT, SIGHUP and SIGUSR1 is
 * sent to `ibsm run` (the launcher, dist/bundle/ibsm, the process operators and systemd signal)
 * 1 ms, 10 ms and 50 ms after it started and in the middle of the first sweep, on the embedded
 * simulated fabric and through ibsim (--umad). Witnesses: no TCP port is ever listened on by the
 * launcher or its child (their sockets against /proc/net/tcp{,6}) and 127.0.0.1:9229 never
 * accepts a connection (Node's inspector, which SIGUSR1 opens by default); SIGTERM and SIGINT log
 * the stopping line with their name and exit 0, whenever they come (Node's start-up included: the
 * launcher holds them until the bin's listeners are installed); after SIGHUP and SIGUSR1 the SM
 * goes on (SUBNET UP) and a SIGTERM then stops it the same way. The idle SIGTERM's exit time is
 * printed. Another command than `run` ignores SIGUSR1 too and ends by SIGTERM as Node's default
 * (the launcher ends by the signal its child ended by); the launcher killed (SIGKILL), the SM
 * stops (the child's parent-death signal, SIGTERM) with the stopping line. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadFabricSpec } from '../src/model/load.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { startIbsim, UMAD2SIM, type Ibsim } from './helpers/ibsim.js';
import { logRe } from './helpers/log-lines.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'dist/bundle/ibsm');
const SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGUSR1'] as const;
const WHEN = [1, 10, 50, 'mid-sweep'] as const;
const SPEC = 'gen:fattree2:leaves=12,spines=6,hosts=12';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The process and its descendants (the launcher's child, node). */
function family(pid: number): number[] {
  const all = [pid];
  for (let i = 0; i < all.length; i++) {
    try {
      for (const t of readdirSync(`/proc/${all[i]}/task`)) all.push(...readFileSync(`/proc/${all[i]}/task/${t}/children`, 'utf8').split(' ').filter(Boolean).map(Number));
    } catch {
      /* gone */
    }
  }
  return all;
}

/** TCP ports the process or a descendant listens on (their socket inodes among the LISTEN rows). */
function listeningPorts(pid: number): number[] {
  return family(pid).flatMap(ownListeningPorts);
}

function ownListeningPorts(pid: number): number[] {
  let inodes: Set<string>;
  try {
    inodes = new Set(
      readdirSync(`/proc/${pid}/fd`)
        .map((fd) => {
          try {
            return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
          } catch {
            return undefined;
          }
        })
        .filter((x): x is string => x !== undefined),
    );
  } catch {
    return [];
  }
  const ports: number[] = [];
  for (const f of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length < 10 || c[3] !== '0A' || !inodes.has(c[9]!)) continue;
      ports.push(parseInt(c[1]!.split(':')[1]!, 16));
    }
  }
  return ports;
}

/** Whether 127.0.0.1:9229 accepts a connection. */
function inspectorOpen(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port: 9229 });
    const done = (v: boolean): void => {
      s.destroy();
      resolve(v);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(500, () => done(false));
  });
}

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  /** Ports seen listening, and whether 9229 ever answered. */
  listened: number[];
  inspector: boolean;
}

/** The launcher with `args`; under umad2sim through bash, for its 1024 open-file limit (umad2sim
 * takes the fds from 1024 up), which then execs the launcher (same PID). */
function start(args: string[], env: Record<string, string | undefined>, cwd: string): ChildProcessWithoutNullStreams {
  if (env.LD_PRELOAD === undefined) return spawn(BIN, args, { cwd, env });
  return spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', BIN, ...args], { cwd, env });
}

/** Until `pid` is the launcher (bash has exec'd it): the times are counted from there. */
async function launched(pid: number): Promise<void> {
  const bin = realpathSync(BIN);
  for (let i = 0; i < 5000; i++) {
    try {
      // the launcher, past its C start-up: its first act blocks the signals (SigBlk bit 15)
      if (readlinkSync(`/proc/${pid}/exe`) === bin && /^SigBlk:\s*[0-9a-f]*[4-7c-f][0-9a-f]{3}$/im.test(readFileSync(`/proc/${pid}/status`, 'utf8'))) return;
    } catch {
      return; // gone: the outcome says why
    }
    await new Promise((r) => setImmediate(r));
  }
}

/** `ibsm run` with `sig` sent at `when`; after SIGHUP/SIGUSR1, a SIGTERM once the subnet is up. */
async function signalRun(args: string[], env: Record<string, string | undefined>, sig: (typeof SIGNALS)[number], when: (typeof WHEN)[number]): Promise<Outcome> {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'ibsm-signals-'));
  const child = start(['run', ...args], env, cwd);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('close', (code, signal) => r({ code, signal })));
  let gone = false;
  void exited.then(() => (gone = true));
  const listened = new Set<number>();
  let inspector = false;
  // The probes, every 20 ms while the process lives.
  const probing = (async () => {
    while (!gone) {
      for (const p of listeningPorts(child.pid!)) listened.add(p);
      if (await inspectorOpen()) inspector = true;
      await sleep(20);
    }
  })();
  const kill = (s: NodeJS.Signals): void => {
    try {
      process.kill(child.pid!, s);
    } catch {
      /* gone */
    }
  };
  const until = async (re: RegExp, ms: number): Promise<boolean> => {
    for (const end = Date.now() + ms; Date.now() < end && !gone; await sleep(2)) if (re.test(out)) return true;
    return re.test(out);
  };
  if (when === 'mid-sweep') {
    expect(await until(logRe('IBSM-1022'), 30_000), out).toBe(true);
  } else {
    await launched(child.pid!);
    await sleep(when);
  }
  kill(sig);
  if (sig === 'SIGHUP' || sig === 'SIGUSR1') {
    await until(logRe('IBSM-1001'), 60_000);
    await sleep(100);
    kill('SIGTERM');
  }
  const t = setTimeout(() => kill('SIGKILL'), 60_000);
  const r = await exited;
  clearTimeout(t);
  await probing;
  rmSync(cwd, { recursive: true, force: true });
  return { ...r, out, listened: [...listened], inspector };
}

/** The matrix on one backend. */
async function matrix(args: string[], env: Record<string, string | undefined>): Promise<void> {
  for (const sig of SIGNALS) {
    for (const when of WHEN) {
      const o = await signalRun(args, env, sig, when);
      const what = `${sig} at ${when}${typeof when === 'number' ? ' ms' : ''}:\n${o.out}`;
      expect(o.inspector, `127.0.0.1:9229 answered after ${what}`).toBe(false);
      expect(o.listened, `TCP ports listened on after ${what}`).toEqual([]);
      expect(o.out, what).not.toMatch(/Debugger listening/);
      expect({ code: o.code, signal: o.signal }, what).toEqual({ code: 0, signal: null });
      const stopped = sig === 'SIGHUP' || sig === 'SIGUSR1' ? 'SIGTERM' : sig;
      expect(o.out, what).toMatch(logRe('IBSM-8002', `reason=${stopped}\\b`));
      if (sig === 'SIGHUP' || sig === 'SIGUSR1') expect(o.out, what).toMatch(logRe('IBSM-1001'));
    }
  }
}

/** SIGTERM once the SM is idle (after SUBNET UP and its idle-time work): ms to exit. */
async function idleStop(args: string[], env: Record<string, string | undefined>): Promise<number> {
  const child = start(['run', '--verbose', ...args], env, mkdtempSync(path.join(os.tmpdir(), 'ibsm-signals-')));
  let out = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stdout.resume();
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  for (const end = Date.now() + 60_000; Date.now() < end && !logRe('IBSM-4012').test(out); ) await sleep(10);
  await sleep(200);
  const t0 = performance.now();
  process.kill(child.pid!, 'SIGTERM');
  const code = await exited;
  const ms = performance.now() - t0;
  expect(code, out).toBe(0);
  expect(out).toMatch(logRe('IBSM-8002', 'reason=SIGTERM'));
  return ms;
}

describe('signals from the first instant', () => {
  it('on the embedded simulated fabric: every signal at 1, 10, 50 ms and mid-sweep', async () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const args = ['--sim', SPEC, '--control-socket', 'none'];
    await matrix(args, env);
    const ms = await idleStop(args, env);
    console.log(`idle SIGTERM to exit, embedded fabric: ${ms.toFixed(1)} ms`);
  }, 600_000);

  it('the launcher killed (SIGKILL): the SM stops by its parent-death signal, with the stopping line', async () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'ibsm-signals-'));
    const child = start(['run', '--sim', SPEC, '--control-socket', 'none'], env, cwd);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
    // 'close': every holder of the pipes gone, the SM (the launcher's child) included
    const closed = new Promise<void>((r) => child.once('close', () => r()));
    for (const end = Date.now() + 60_000; Date.now() < end && !logRe('IBSM-1001').test(out); ) await sleep(10);
    const sm = family(child.pid!).slice(1);
    expect(sm, out).toHaveLength(1);
    process.kill(child.pid!, 'SIGKILL');
    const t = setTimeout(() => sm.forEach((p) => process.kill(p, 'SIGKILL')), 60_000);
    await closed;
    clearTimeout(t);
    rmSync(cwd, { recursive: true, force: true });
    expect(out).toMatch(logRe('IBSM-8002', 'reason=SIGTERM\\b'));
  }, 120_000);

  it('another command (ibsm status waiting on a control socket that never answers): SIGUSR1 ignored, SIGTERM its default', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-signals-sock-'));
    const sock = path.join(dir, 'silent.sock');
    const server = net.createServer(() => undefined);
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      const child = spawn(BIN, ['status', '--socket', sock], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('close', (code, signal) => r({ code, signal })));
      // connected (the server saw it): the bin's first statement is long past
      await new Promise<void>((r) => server.once('connection', () => r()));
      process.kill(child.pid!, 'SIGUSR1');
      await sleep(300);
      expect(await inspectorOpen()).toBe(false);
      expect(listeningPorts(child.pid!)).toEqual([]);
      expect(child.exitCode, out).toBeNull();
      process.kill(child.pid!, 'SIGTERM');
      expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
      expect(out).not.toMatch(/Debugger listening/);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  describe('through ibsim', () => {
    let ib: Ibsim;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-signals-net-'));
      const file = path.join(dir, 'fabric.net');
      writeFileSync(file, formatIbnetdiscover(loadFabricSpec(SPEC), { timestamp: 'x' }));
      ib = await startIbsim(file);
    });
    afterAll(async () => {
      await ib?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('every signal at 1, 10, 50 ms and mid-sweep, on --umad', async () => {
      const env: Record<string, string | undefined> = { ...process.env, ...ib.env, LD_PRELOAD: UMAD2SIM };
      delete env.NODE_OPTIONS;
      const args = ['--umad', '--control-socket', 'none', '--guid2lid', 'none'];
      await matrix(args, env);
      const ms = await idleStop(args, env);
      console.log(`idle SIGTERM to exit, ibsim: ${ms.toFixed(1)} ms`);
    }, 600_000);
  });
});

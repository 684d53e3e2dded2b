/** The Debian package (#36): scripts/build-sea.mjs makes the single executable, scripts/build-deb.mjs
 * the .deb; it is installed with dpkg -i (root: CI runs as root; not root is a failure, not a
 * skip), /usr/sbin/ibsm (the launcher, running the single executable /usr/lib/ibsm/ibsm) runs
 * --version, run --once on the embedded fabric, stops with the stopping line on a SIGTERM 1 ms after
 * its start, and runs run --umad --once on ibsim under umad2sim with no node on PATH, the units pass systemd-analyze verify where it is
 * installed, the service is not started, and dpkg -r leaves only the config, --purge nothing. */
import { afterAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { IBSIM_EXAMPLES, runPreloaded, startIbsim } from './helpers/ibsim.js';
import { logRe } from './helpers/log-lines.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-deb-'));
// Out of dist/ (what npm packs, while test/package packs it).
const BUNDLE = path.join(ROOT, '.tmp', `bundle-deb-${process.pid}`);
// The long steps (builds, lintian) asynchronous: a worker blocked for a minute misses vitest's RPC
// deadline ("Timeout calling onTaskUpdate", an error of the run although the test passed).
const run = promisify(execFile);
/** The launcher's first act blocks SIGTERM (native/ibsm-launch.c): bit 15 of /proc/PID/status SigBlk. */
const launcherBlocks = (pid: number): boolean => {
  try {
    const m = /^SigBlk:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m !== null && (BigInt('0x' + m[1]) & (1n << 14n)) !== 0n;
  } catch {
    return false;
  }
};
const dpkg = (...args: string[]) => spawnSync('dpkg', args, { encoding: 'utf8', timeout: 120_000 });
// A PATH with no node on it (node may be in /usr/bin: only /usr/sbin, checked below).
const NO_NODE_PATH = '/usr/sbin';
const FILES = ['/usr/sbin/ibsm', '/usr/lib/ibsm/ibsm', '/lib/systemd/system/ibsm.service', '/lib/systemd/system/ibsm@.service', '/usr/share/man/man8/ibsm.8.gz', '/usr/share/doc/ibsm'];
// The conffiles: left by dpkg -r, gone with --purge.
const CONFIG = ['/etc/ibsm/ibsm.conf', '/etc/logrotate.d/ibsm'];

afterAll(() => {
  if (process.getuid?.() === 0 && dpkg('-s', 'ibsm').status === 0) dpkg('--purge', 'ibsm');
  rmSync(dir, { recursive: true, force: true });
  rmSync(BUNDLE, { recursive: true, force: true });
});

describe('the Debian package', () => {
  it('builds, installs, runs without node, removes to its config and purges to nothing', async () => {
    expect(process.getuid?.(), 'installing a package needs root (CI runs as root)').toBe(0);
    expect(dpkg('-s', 'ibsm').status, 'a package ibsm is installed already: remove it first').not.toBe(0);
    const exe = path.join(dir, 'ibsm');
    // Its own bundle, not dist/bundle, which test/bundle rebuilds meanwhile.
    await run(process.execPath, [path.join(ROOT, 'scripts/build-bundle.mjs'), '--out', BUNDLE], { cwd: ROOT, timeout: 180_000 });
    await run(process.execPath, [path.join(ROOT, 'scripts/build-sea.mjs'), '--out', exe, '--bundle', BUNDLE], { cwd: ROOT, timeout: 120_000 });
    await run(process.execPath, [path.join(ROOT, 'scripts/build-deb.mjs'), '--exe', exe, '--out', dir], { cwd: ROOT, timeout: 300_000 });
    const deb = readdirSync(dir).find((f) => f.endsWith('.deb'));
    expect(deb).toBeDefined();
    const info = execFileSync('dpkg-deb', ['-f', path.join(dir, deb!), 'Depends'], { encoding: 'utf8' });
    expect(info).toMatch(/libibumad3/);
    // lintian: no error (.ci/run installs it; the overrides the package ships name why)
    const lint = await run('lintian', ['--fail-on', 'error', path.join(dir, deb!)], { encoding: 'utf8', timeout: 120_000 }).then(
      (r) => ({ status: 0, ...r }),
      (e: { code?: number; stdout?: string; stderr?: string }) => ({ status: e.code ?? 1, stdout: e.stdout ?? '', stderr: e.stderr ?? String(e) }),
    );
    expect(lint.status, lint.stdout + lint.stderr).toBe(0);
    expect(lint.stdout).not.toMatch(/^E: /m);

    try {
      const inst = dpkg('-i', path.join(dir, deb!));
      expect(inst.status, inst.stderr).toBe(0);
      for (const f of [...FILES, ...CONFIG, '/var/cache/ibsm']) expect(existsSync(f), f).toBe(true);
      const env = { PATH: NO_NODE_PATH, HOME: dir };
      expect(spawnSync('/bin/sh', ['-c', 'command -v node'], { env, encoding: 'utf8' }).status, 'no node on that PATH').not.toBe(0);
      const v = spawnSync('ibsm', ['--version'], { env, encoding: 'utf8' });
      expect(v.stdout.trim(), v.stderr).toMatch(/^ibsm \d+\.\d+\.\d+/);
      // Where the package put things, as --help and the man page name them (#36).
      const help = spawnSync('ibsm', ['--help'], { env, encoding: 'utf8' }).stdout;
      const man = execFileSync('zcat', ['/usr/share/man/man8/ibsm.8.gz'], { encoding: 'utf8' }).replace(/\\-/g, '-');
      for (const f of ['/etc/ibsm/ibsm.conf', '/etc/logrotate.d/ibsm', '/var/cache/ibsm/', '/lib/systemd/system/ibsm.service', '/usr/sbin/ibsm']) {
        expect(help, `ibsm --help names ${f}`).toContain(f);
        expect(man, `ibsm(8) names ${f}`).toContain(f);
      }
      const conf = spawnSync('ibsm', ['config', '--check'], { env, encoding: 'utf8' });
      expect(conf.status, conf.stdout + conf.stderr).toBe(0);
      expect(conf.stdout + conf.stderr).toContain('/etc/ibsm/ibsm.conf');
      const once = spawnSync('ibsm', ['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once'], { env, encoding: 'utf8', cwd: dir, timeout: 60_000 });
      expect(once.status, once.stderr).toBe(0);
      expect(once.stdout + once.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 '));
      // /usr/sbin/ibsm is the launcher (native/ibsm-launch.c), the single executable its child: a
      // SIGTERM 1 ms after the start, during Node's start-up, is still the stopping line and exit 0
      const early = spawn('/usr/sbin/ibsm', ['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--control-socket', 'none'], { env, cwd: dir });
      let earlyOut = '';
      early.stdout.setEncoding('utf8').on('data', (d: string) => (earlyOut += d));
      early.stderr.setEncoding('utf8').on('data', (d: string) => (earlyOut += d));
      const earlyEnd = new Promise<{ code: number | null; signal: string | null }>((r) => early.once('close', (code, signal) => r({ code, signal })));
      // Once the process is the launcher with the signals blocked (before, a signal meets the
      // spawning fork or the C start-up, not ibsm: under load that took over 1 ms), 1 ms on.
      for (let i = 0; i < 5000; i++) {
        let exe = '';
        try {
          exe = readlinkSync(`/proc/${early.pid}/exe`);
        } catch {
          break; // gone: the outcome says why
        }
        // ...and past its first instructions: the launcher has SIGTERM blocked (SigBlk bit 15)
        if (exe === '/usr/sbin/ibsm' && launcherBlocks(early.pid!)) break;
        await new Promise((r) => setImmediate(r));
      }
      await new Promise((r) => setTimeout(r, 1));
      early.kill('SIGTERM');
      expect(await earlyEnd, earlyOut).toEqual({ code: 0, signal: null });
      expect(earlyOut).toMatch(logRe('IBSM-8002', 'reason=SIGTERM\\b'));

      const ib = await startIbsim(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'));
      try {
        // the helper starts it through bash (for its ulimit): bash alone beside /usr/sbin
        const bin = path.join(dir, 'bin');
        mkdirSync(bin);
        symlinkSync('/bin/bash', path.join(bin, 'bash'));
        const r = await runPreloaded('/usr/sbin/ibsm', ['run', '--umad', '--once'], { ibsim: ib, simHost: 'Hca1', cwd: dir, env: { ...env, PATH: `${bin}:${NO_NODE_PATH}` }, timeoutMs: 60_000 });
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout + r.stderr).toMatch(logRe('IBSM-1001'));
      } finally {
        await ib.stop();
      }
      // the addon written out where only root writes, per version
      expect(readdirSync('/var/cache/ibsm/native').some((f) => f.startsWith('ibsm_umad-') && f.endsWith('.node'))).toBe(true);

      if (spawnSync('systemd-analyze', ['--version']).status === 0) {
        const verify = spawnSync('systemd-analyze', ['verify', '/lib/systemd/system/ibsm.service', '/lib/systemd/system/ibsm@.service'], { encoding: 'utf8' });
        expect(verify.stderr.split('\n').filter((l) => /ibsm/.test(l) && !/rdma\.service/.test(l)), verify.stderr).toEqual([]);
      }
      if (existsSync('/run/systemd/system')) expect(spawnSync('systemctl', ['is-active', 'ibsm.service']).status, 'installing never starts the SM').not.toBe(0);

      const rm = dpkg('-r', 'ibsm');
      expect(rm.status, rm.stderr).toBe(0);
      for (const f of [...FILES, '/var/cache/ibsm']) expect(existsSync(f), f).toBe(false);
      for (const f of CONFIG) expect(existsSync(f), `${f}: the config stays until purge`).toBe(true);
      const purge = dpkg('--purge', 'ibsm');
      expect(purge.status, purge.stderr).toBe(0);
      for (const f of [...CONFIG, '/etc/ibsm']) expect(existsSync(f), f).toBe(false);
      expect(dpkg('-s', 'ibsm').status).not.toBe(0);
    } finally {
      if (dpkg('-s', 'ibsm').status === 0) dpkg('--purge', 'ibsm');
    }
  }, 180_000);
});

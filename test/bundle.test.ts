/** The bundled command (scripts/build-bundle.mjs → dist/bundle/): one CommonJS file with V8's code
 * cache and the bin that runs it, which the package names. The bin runs every command path it was
 * built from — the version read relative to the bundle, `run` on the simulated fabric (the SM, SA
 * and simulator evaluated on demand inside the file) and `discover` — and V8 accepts the cache
 * when the bin runs through its shebang, rejects it (and compiles afresh) without its flags. */
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'dist/bundle/ibsm.cjs');
const CODE = path.join(ROOT, 'dist/bundle/main.cjs');
const run = (args: string[], env: Record<string, string> = {}) => spawnSync(BIN, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });

describe('the bundled ibsm command', () => {
  it('builds one file and its code cache, the bin the package names; runs version, run --once and discover', () => {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-bundle.mjs')], { cwd: ROOT, stdio: 'pipe', timeout: 180_000 });
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect(path.resolve(ROOT, pkg.bin.ibsm!)).toBe(BIN);
    expect(readFileSync(BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env -S -u NODE_EXTRA_CA_CERTS node --max-semi-space-size=4');
    expect(readFileSync(CODE, 'utf8'), 'no require of another file of the package').not.toMatch(/require\(["']\.\.?\//);
    expect(readFileSync(CODE, 'utf8'), 'ASCII only: V8 keeps it a one-byte string').not.toMatch(/[^\x00-\x7f]/);

    const v = run(['--version'], { IBSM_CODE_CACHE: 'report' });
    expect(v.stdout.trim()).toBe(`ibsm ${pkg.version}`);
    expect(v.stderr).toContain('ibsm: code cache accepted');
    // without the shebang's flags V8 rejects the cache, and the command still runs
    const plain = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', env: { ...process.env, IBSM_CODE_CACHE: 'report' } });
    expect(plain.stdout.trim()).toBe(`ibsm ${pkg.version}`);
    expect(plain.stderr).toContain('ibsm: code cache rejected');
    // The shebang's env(1) drops NODE_EXTRA_CA_CERTS: Node 20 reads that file before any script
    // runs (~45 ms of start-up for a system bundle), and ibsm makes no TLS connection. node itself
    // warns about a missing one; the bin never reads it.
    const ca = { NODE_EXTRA_CA_CERTS: path.join(os.tmpdir(), 'ibsm-no-such-ca-bundle.pem') };
    expect(spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', env: { ...process.env, ...ca } }).stderr).toContain('Ignoring extra certs');
    const noCa = run(['--version'], ca);
    expect(noCa.stdout.trim()).toBe(`ibsm ${pkg.version}`);
    expect(noCa.stderr).not.toContain('extra certs');

    const up = run(['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once']);
    expect(up.status, up.stderr).toBe(0);
    expect(up.stdout + up.stderr).toMatch(/SUBNET UP nodes=7 switches=3 endPorts=7 /);
    const topo = run(['discover', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2']);
    expect(topo.status, topo.stderr).toBe(0);
    expect(topo.stdout.match(/^Switch\s/gm)?.length).toBe(3);
    expect(topo.stdout.match(/^Ca\s/gm)?.length).toBe(4);
    // a usage error exits 2 through the bin as through dist/cli/main.js
    expect(run(['run', '--no-such-option']).status).toBe(2);

    // Start-up (#16): `run --once` with its stdio on pipes loads none of node:http, node:crypto,
    // node:net, node:stream (the metrics, web view and control socket load them when served; the
    // stdio streams are made only when written to), nor node:module (the bin wraps the bundle
    // itself; the addon is loaded with process.dlopen) nor node:v8 (cli/tiering.ts sets V8 flags
    // through its binding). A preload names the modules loaded at exit.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-bundle-'));
    const preload = path.join(dir, 'modules.cjs');
    writeFileSync(preload, "process.on('exit', () => require('fs').writeSync(2, 'MODULES ' + process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ') + '\\n'));\n");
    const lean = run(['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once'], { NODE_OPTIONS: `--require ${preload}` });
    expect(lean.stderr).toMatch(/SUBNET UP nodes=7 /);
    const loaded = /MODULES (.*)/.exec(lean.stderr)?.[1]?.split(' ') ?? [];
    expect(loaded).toContain('fs');
    for (const m of ['http', 'crypto', 'net', 'stream', 'tty', 'perf_hooks', 'module', 'v8']) expect(loaded, m).not.toContain(m);
    // The same with stdout and stderr on /dev/null (a daemon's; a character device, as a terminal
    // is): no stream either, nor for --version (one line written to fd 1 directly). The witness:
    // config writes to stdout, and makes its stream.
    const listed = path.join(dir, 'modules.txt');
    const preloadFile = path.join(dir, 'modules-file.cjs');
    writeFileSync(preloadFile, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(listed)}, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => m.slice(13)).join(' ')));\n`);
    const quiet = (args: string[]): string[] => {
      const r = spawnSync(BIN, args, { cwd: ROOT, stdio: 'ignore', timeout: 120_000, env: { ...process.env, NODE_OPTIONS: `--require ${preloadFile}` } });
      expect(r.status, args.join(' ')).toBe(0);
      return readFileSync(listed, 'utf8').split(' ');
    };
    const daemon = quiet(['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once']);
    expect(daemon).toContain('fs');
    for (const m of ['net', 'stream', 'tty']) expect(daemon, m).not.toContain(m);
    expect(quiet(['--version'])).not.toContain('stream');
    expect(quiet(['config'])).toContain('stream');

    // `run` exits as soon as main resolves (process.exit: no 'beforeExit', the 'exit' handlers
    // run); another command ends when the event loop is empty (the witness: 'beforeExit').
    const exits = path.join(dir, 'exits.cjs');
    writeFileSync(exits, "process.on('beforeExit', () => require('fs').writeSync(2, 'BEFOREEXIT\\n')); process.on('exit', () => require('fs').writeSync(2, 'EXIT\\n'));\n");
    const ran = run(['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once'], { NODE_OPTIONS: `--require ${exits}` });
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(/SUBNET UP nodes=7 /);
    expect(ran.stderr).toContain('EXIT');
    expect(ran.stderr).not.toContain('BEFOREEXIT');
    expect(run(['run', '--no-such-option'], { NODE_OPTIONS: `--require ${exits}` }).status).toBe(2);
    const other = run(['discover', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2'], { NODE_OPTIONS: `--require ${exits}` });
    expect(other.stdout.match(/^Switch\s/gm)?.length).toBe(3);
    expect(other.stderr).toContain('BEFOREEXIT');

    // The generated codecs come precompiled in the bundle (compiled into its code cache): a run
    // through the bin compiles none with `new Function`; the tsc build (the witness) compiles them.
    const counter = path.join(dir, 'new-function.cjs');
    writeFileSync(counter, "let n = 0; const F = Function; globalThis.Function = new Proxy(F, { construct(t, a) { n++; return Reflect.construct(t, a); } }); process.on('exit', () => require('fs').writeSync(2, 'NEWFUNCTION ' + n + '\\n'));\n");
    const simArgs = ['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once'];
    const viaBin = run(simArgs, { NODE_OPTIONS: `--require ${counter}` });
    expect(viaBin.stderr).toMatch(/SUBNET UP nodes=7 /);
    expect(/NEWFUNCTION (\d+)/.exec(viaBin.stderr)?.[1]).toBe('0');
    const viaTsc = spawnSync(process.execPath, ['--require', counter, path.join(ROOT, 'dist/cli/main.js'), ...simArgs], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(viaTsc.stderr).toMatch(/SUBNET UP nodes=7 /);
    expect(Number(/NEWFUNCTION (\d+)/.exec(viaTsc.stderr)?.[1])).toBeGreaterThan(5);
    rmSync(dir, { recursive: true, force: true });
  }, 240_000);
});

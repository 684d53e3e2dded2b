/** The bundled command (scripts/build-bundle.mjs → dist/bundle/): one CommonJS file with V8's code
 * cache and the bin that runs it, which the package names. The bin runs every command path it was
 * built from — the version read relative to the bundle, `run` on the simulated fabric (the SM, SA
 * and simulator evaluated on demand inside the file) and `discover` — and V8 accepts the cache
 * when the bin runs through its shebang, rejects it (and compiles afresh) without its flags. Then
 * the bin's CA listing on the addon's thread for `run --umad`, on ibsim (below). The launcher
 * (dist/bundle/ibsm) runs the bin with the shebang's flags and environment. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { IBSIM_EXAMPLES, runPreloaded, startIbsim, UMAD2SIM, type Ibsim } from './helpers/ibsim.js';
import os from 'node:os';
import path from 'node:path';
import { hasCode, logRe } from './helpers/log-lines.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'dist/bundle/ibsm.cjs');
const CODE = path.join(ROOT, 'dist/bundle/main.cjs');
const run = (args: string[], env: Record<string, string> = {}) => spawnSync(BIN, args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000, env: { ...process.env, ...env } });

describe('the bundled ibsm command', () => {
  it('builds one file and its code cache, the bin the package names; runs version, run --once and discover', () => {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/build-bundle.mjs')], { cwd: ROOT, stdio: 'pipe', timeout: 180_000 });
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    expect(path.resolve(ROOT, pkg.bin.ibsm!)).toBe(BIN);
    expect(readFileSync(BIN, 'utf8').split('\n')[0]).toBe('#!/usr/bin/env -S -u NODE_EXTRA_CA_CERTS MALLOC_ARENA_MAX=1 node --max-semi-space-size=4 --inspect-port=[fe80::1]:9229');
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

    // The launcher (native/ibsm-launch.c, dist/bundle/ibsm): the bin as its child with the
    // shebang's flags (V8 accepts the cache made with them) and environment (no extra certs read);
    // the child's exit status is its own; a node that cannot be run is named, exit 127.
    const LAUNCHER = path.join(ROOT, 'dist/bundle/ibsm');
    const lv = spawnSync(LAUNCHER, ['--version'], { encoding: 'utf8', env: { ...process.env, ...ca, IBSM_CODE_CACHE: 'report' } });
    expect(lv.stdout.trim(), lv.stderr).toBe(`ibsm ${pkg.version}`);
    expect(lv.stderr).toContain('ibsm: code cache accepted');
    expect(lv.stderr).not.toContain('extra certs');
    expect(spawnSync(LAUNCHER, ['run', '--no-such-option']).status).toBe(2);
    const badNode = spawnSync(LAUNCHER, ['--version'], { encoding: 'utf8', env: { ...process.env, IBSM_NODE: '/nonexistent/node' } });
    expect(badNode.status).toBe(127);
    expect(badNode.stderr).toMatch(/IBSM_NODE \/nonexistent\/node: No such file/);
    // started with SIGCHLD ignored (inherited so: the child would be reaped unseen), it still
    // sees its child's end and exits as it did
    const noChld = spawnSync('bash', ['-c', 'trap "" CHLD; exec "$0" --version', LAUNCHER], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
    expect({ status: noChld.status, out: noChld.stdout.trim() }).toEqual({ status: 0, out: `ibsm ${pkg.version}` });

    const up = run(['run', '--sim', 'gen:fattree2:leaves=2,spines=1,hosts=2', '--once']);
    expect(up.status, up.stderr).toBe(0);
    expect(up.stdout + up.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 switches=3 endPorts=7 '));
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
    expect(lean.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 '));
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
    expect(ran.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 '));
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
    expect(viaBin.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 '));
    expect(/NEWFUNCTION (\d+)/.exec(viaBin.stderr)?.[1]).toBe('0');
    const viaTsc = spawnSync(process.execPath, ['--require', counter, path.join(ROOT, 'dist/cli/main.js'), ...simArgs], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(viaTsc.stderr).toMatch(logRe('IBSM-1001', 'nodes=7 '));
    expect(Number(/NEWFUNCTION (\d+)/.exec(viaTsc.stderr)?.[1])).toBeGreaterThan(5);
    rmSync(dir, { recursive: true, force: true });
  }, 240_000);
});

// Start-up (#16): for `ibsm run --umad` (and discover, query) the bin starts listing the CAs on a
// thread of the addon's before it compiles the bundle (under ibsim, umad2sim's first call writes
// its whole sysfs tree, ~10 ms, now beside the code cache's deserialization). Here, after the
// test above built the bundle, on ibsim through the real libibumad and umad2sim:
// - the listing the thread made is the one listCas() makes on the main thread, and names the port
//   ibstat (the witness, a separate C program) names;
// - the bin's run --umad --once reaches SUBNET UP on that port (--guid), and umad2sim's sysfs tree
//   is gone from its working directory at exit; its discover --umad prints what the tsc build does;
// - a usage error while the listing waits on ibsim exits 2 once the thread is done, so ibsim is
//   not left with a client gone half way through connecting;
// - with no ibsim listening the listing is not started (umad2sim's first call would never return):
//   the bin says why and exits 1, as the bundle does without it.
const ADDON = path.join(ROOT, 'build/Release/ibsm_umad.node');
const TIMEOUT = 60_000;
const NET = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');

// Prefetched, then listed again on the main thread: both listings, BigInts as hex.
const LISTER = `
const a = { exports: {} };
process.dlopen(a, ${JSON.stringify(ADDON)});
const hex = (k, v) => (typeof v === 'bigint' ? '0x' + v.toString(16).padStart(16, '0') : v);
const started = a.exports.prefetchCas();
const again = a.exports.prefetchCas();
const pre = a.exports.listCas();
const fresh = a.exports.listCas();
console.log(JSON.stringify({ started, again, pre, fresh }, hex));
`;

let ib: Ibsim;
let dir: string;
const sysTrees = (cwd: string): string[] => readdirSync(cwd).filter((f) => f.startsWith('sys-'));

describe('the bin lists the CAs on a thread of its own for run --umad', () => {
  beforeAll(async () => {
    // The bundle the test above built (this file runs its tests in order).
    if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
    ib = await startIbsim(NET);
    dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-prefetch-'));
  });
  afterAll(async () => {
    await ib?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the prefetched listing is the one listCas gives on the main thread, with the port ibstat names', async () => {
    const script = path.join(dir, 'lister.cjs');
    writeFileSync(script, LISTER);
    const r = await runPreloaded(process.execPath, [script], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { started: boolean; again: boolean; pre: { name: string; ports: { portGuid: string; portNum: number }[] }[]; fresh: unknown };
    expect(out.started).toBe(true);
    expect(out.again, 'one listing thread at a time').toBe(false);
    expect(out.pre).toEqual(out.fresh);
    expect(out.pre.length).toBe(1);
    const ibstat = await runPreloaded('ibstat', ['-p'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(ibstat.code, ibstat.stderr).toBe(0);
    expect(out.pre[0]!.ports.map((p) => p.portGuid)).toEqual(ibstat.stdout.trim().split('\n'));
    expect(sysTrees(dir)).toEqual([]);
  });

  it('run --umad --once through the bin comes up on that port; no sysfs tree left', async () => {
    const ibstat = await runPreloaded('ibstat', ['-p'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    const guid = ibstat.stdout.trim().split('\n')[0]!;
    const r = await runPreloaded(BIN, ['run', '--umad', '--once', '--guid', guid, '--guid2lid', 'none'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(logRe('IBSM-8001', `backend=umad port=\\S+/1 portGuid=${guid}`));
    expect(r.stderr).toMatch(logRe('IBSM-1001', 'nodes=6 switches=2 '));
    expect(sysTrees(dir)).toEqual([]);
  });

  it('discover --umad through the bin prints what the tsc build prints (no listing thread there), the switches ibnetdiscover finds', async () => {
    const viaBin = await runPreloaded(BIN, ['discover', '--umad'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(viaBin.code, viaBin.stderr).toBe(0);
    const viaTsc = await runPreloaded(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), 'discover', '--umad'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    const body = (t: string): string => t.replace(/^# Topology file: generated on .*$/m, ''); // its time
    expect(body(viaBin.stdout)).toBe(body(viaTsc.stdout));
    const witness = await runPreloaded('ibnetdiscover', [], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(viaBin.stdout.match(/^Switch\s/gm)?.length).toBe(witness.stdout.match(/^Switch\s/gm)?.length);
    expect(viaBin.stdout.match(/^Switch\s/gm)?.length).toBe(2);
    expect(sysTrees(dir)).toEqual([]);
  });

  it('a usage error while the listing waits on ibsim: exit 2 once it is done; ibsim left with no dangling client', async () => {
    // ibsim suspended (its console's Wait): umad2sim's first call, on the listing thread, waits for
    // its answer while the bin meets the usage error. The bin waits for the thread at exit, so
    // umad2sim finishes connecting and then disconnects (its exit handler). Without that wait
    // the process would be gone half way through the connection, and ibsim, connecting back to
    // the client that asked, panics ("can't connect to in socket") and exits: the witness is
    // ibsim still answering, with no client attached.
    const waiting = ib.console('Wait 1');
    await new Promise((r) => setTimeout(r, 50)); // ibsim has read the command by then
    const r = await runPreloaded(BIN, ['run', '--umad', '--once', '--routing', 'no-such-engine'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('unknown routing engine "no-such-engine"');
    await waiting;
    expect((await ib.console('Attached')).trim()).toBe('');
    expect(sysTrees(dir)).toEqual([]);
  });

  it('no ibsim listening: not started (it would never return); the bin says why and exits 1', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, LD_PRELOAD: UMAD2SIM, IBSIM_SOCKNAME: `ibsm-no-such-sim-${process.pid}` };
    delete env.NODE_OPTIONS;
    const r = spawnSync('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', BIN, 'run', '--umad', '--once'], { cwd: dir, env, encoding: 'utf8', timeout: TIMEOUT });
    expect(r.signal, 'did not hang').toBeNull();
    expect(r.status).toBe(1);
    expect(hasCode(r.stderr, 'IBSM-9103')).toBe(true);
    expect(r.stderr).toContain(`no ibsim is listening on socket \\"ibsm-no-such-sim-${process.pid}\\"`);
  });
});

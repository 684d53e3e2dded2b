/** Start-up (#16): the bundled bin (dist/bundle/ibsm.cjs, `npm run build`) starts listing the CAs
 * for `ibsm run --umad` (and discover, query) on a thread of the addon's own before it compiles the bundle (under ibsim,
 * umad2sim's first call writes its whole sysfs tree, ~10 ms, now beside the code cache's
 * deserialization). On ibsim through the real libibumad and umad2sim:
 * - the listing the thread made is the one listCas() makes on the main thread, and names the port
 *   ibstat (the witness, a separate C program) names;
 * - the bin's run --umad --once reaches SUBNET UP on that port (--guid), and umad2sim's sysfs tree
 *   is gone from its working directory at exit; its discover --umad prints what the tsc build does;
 * - a usage error while the listing waits on ibsim exits 2 once the thread is done, so ibsim is
 *   not left with a client gone half way through connecting;
 * - with no ibsim listening the listing is not started (umad2sim's first call would never return):
 *   the bin says why and exits 1, as the bundle does without it. */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IBSIM_EXAMPLES, runPreloaded, startIbsim, UMAD2SIM, type Ibsim } from './helpers/ibsim.js';
import { spawnSync } from 'node:child_process';

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'dist/bundle/ibsm.cjs');
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

beforeAll(async () => {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  ib = await startIbsim(NET);
  dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-prefetch-'));
});
afterAll(async () => {
  await ib?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the bin lists the CAs on a thread of its own for run --umad', () => {
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
    expect(r.stderr).toMatch(new RegExp(`ibsm starting backend=umad port=\\S+/1 portGuid=${guid}`));
    expect(r.stderr).toMatch(/SUBNET UP nodes=6 switches=2 /);
    expect(sysTrees(dir)).toEqual([]);
  });

  it('discover --umad through the bin prints what the tsc build prints (no listing thread there), the switches ibnetdiscover finds', async () => {
    const viaBin = await runPreloaded(BIN, ['discover', '--umad'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(viaBin.code, viaBin.stderr).toBe(0);
    const viaTsc = await runPreloaded(process.execPath, [path.join(ROOT, 'dist/cli/main.js'), 'discover', '--umad'], { ibsim: ib, simHost: 'Hca1', cwd: dir, timeoutMs: TIMEOUT });
    expect(viaBin.stdout).toBe(viaTsc.stdout);
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
    expect(r.stderr).toContain('no usable device; ibsm stops');
    expect(r.stderr).toContain(`no ibsim is listening on socket \\"ibsm-no-such-sim-${process.pid}\\"`);
  });
});

/** Start-up and memory (#16): `ibsm run --umad` holds V8's optimizing compiler (TurboFan) back
 * until the process has used a budget of CPU (src/cli/tiering.ts). Observed in child processes
 * with V8's own witness, %GetOptimizationStatus (--allow-natives-syntax; compilation on the main
 * thread, so a hot function is optimized by the time it returns): a function hot enough to be
 * optimized stays unoptimized while TurboFan is held, and is optimized once the budget is spent;
 * without the hold (the witness) the same function is optimized at once. And the bin's code cache
 * stays valid after such a run: V8 checks a cache against the hash of its flags, so the bin sets
 * --opt back before it writes one (a cache written with --no-opt still set is rejected: the
 * witness); the hold's other flag (Sparkplug without batch compilation) is set back at exit before
 * the bin's handler writes the cache. */
import { describe, expect, it } from 'vitest';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const TIERING = pathToFileURL(path.join(ROOT, 'dist/cli/tiering.js')).href;
const BUNDLE = path.join(ROOT, 'dist/bundle');

// A hot function, run before and after the CPU budget is spent (burnt in a loop, then one check
// interval waited out). TURBOFANNED: V8's OptimizationStatus bit for TurboFan code.
const PROBE = `
const { holdTurbofan, turbofanHeld } = await import(process.argv[2]);
const budget = Number(process.argv[4]);
function hot(x) { let s = 0; for (let i = 0; i < 100; i++) s += (x * i) % 7; return s; }
const run = () => { let s = 0; for (let i = 0; i < 200000; i++) s += hot(i); return s; };
const TURBOFANNED = 1 << 6;
const tf = () => (%GetOptimizationStatus(hot) & TURBOFANNED) !== 0;
if (process.argv[3] === 'hold') await holdTurbofan(budget);
run();
const before = { optimized: tf(), held: turbofanHeld() };
while ((process.cpuUsage().user + process.cpuUsage().system) / 1000 < budget + 20) {}
await new Promise((r) => setTimeout(r, 600));
run();
console.log(JSON.stringify({ before, after: { optimized: tf(), held: turbofanHeld() } }));
`;

function probe(mode: 'hold' | 'none'): { before: { optimized: boolean; held: boolean }; after: { optimized: boolean; held: boolean } } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-tiering-'));
  try {
    const file = path.join(dir, 'probe.mjs');
    writeFileSync(file, PROBE);
    const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', file, TIERING, mode, '300'], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').pop()!);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A warm function, alone (no batch of others to fill): while held, Sparkplug compiles it as soon
// as it is warm; V8's default (batch compilation) leaves it in the interpreter for its batch.
// BASELINE: V8's OptimizationStatus bit for Sparkplug code.
const WARM = `
const { holdTurbofan } = await import(process.argv[2]);
if (process.argv[3] === 'hold') await holdTurbofan(60_000);
else if (process.argv[3] === 'no-opt') (await import('node:v8')).setFlagsFromString('--no-opt');
function warm(x) { let s = 0; for (let i = 0; i < 50; i++) s += (x + i) & 3; return s; }
let s = 0;
for (let i = 0; i < 60; i++) s += warm(i);
const BASELINE = 1 << 15;
console.log(JSON.stringify({ baseline: (%GetOptimizationStatus(warm) & BASELINE) !== 0, s }));
`;

function warmProbe(mode: 'hold' | 'no-opt'): boolean {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-tiering-'));
  try {
    const file = path.join(dir, 'warm.mjs');
    writeFileSync(file, WARM);
    const r = spawnSync(process.execPath, ['--allow-natives-syntax', file, TIERING, mode], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').pop()!).baseline;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// The budget spent inside one synchronous stretch (a long routing: no timer fires): the hold's own
// timer cannot let go, checkTurbofanHold() (called from the SM's routing ticks) does, at once.
const SYNC = `
const { holdTurbofan, turbofanHeld, checkTurbofanHold } = await import(process.argv[2]);
await holdTurbofan(200);
const burn = (check) => {
  const until = (process.cpuUsage().user + process.cpuUsage().system) / 1000 + 260;
  let x = 0;
  while ((process.cpuUsage().user + process.cpuUsage().system) / 1000 < until) { x++; if (check) checkTurbofanHold(); }
  return turbofanHeld();
};
const withoutCheck = burn(false);
const withCheck = burn(true);
console.log(JSON.stringify({ withoutCheck, withCheck }));
`;

// The SM's progress (cli/run.ts hands every onProgress phase to turbofanOnProgress) with a budget
// of a minute unspent: a discovery's report keeps the hold, a routing's lets it go; the hot
// function (PROBE's) is run after each report.
const PROGRESS = `
const { holdTurbofan, turbofanHeld, turbofanOnProgress } = await import(process.argv[2]);
function hot(x) { let s = 0; for (let i = 0; i < 100; i++) s += (x * i) % 7; return s; }
const run = () => { let s = 0; for (let i = 0; i < 200000; i++) s += hot(i); return s; };
const TURBOFANNED = 1 << 6;
const tf = () => (%GetOptimizationStatus(hot) & TURBOFANNED) !== 0;
await holdTurbofan(60_000);
const at = (phase, d) => { turbofanOnProgress(phase, d); run(); return { held: turbofanHeld(), optimized: tf() }; };
if (process.argv[3] === 'big') {
  // The start of a routing of a big fabric (5k nodes, 416 switches: 2.3M switch x node pairs).
  console.log(JSON.stringify({ bigStart: at('routing', { ms: 0, nodes: 5536, switches: 416 }) }));
} else {
  const discover = at('discover');
  // The start of a small one (1,136 nodes, 112 switches: 127k pairs) keeps the hold.
  const smallStart = at('routing', { ms: 0, nodes: 1136, switches: 112 });
  const routing = at('routing', { ms: 100 });
  console.log(JSON.stringify({ discover, smallStart, routing }));
}
`;

describe('TurboFan held back on a device until a CPU budget is spent', () => {
  it('a budget spent within one synchronous stretch: still held without a check (the timer cannot fire), let go by checkTurbofanHold()', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-tiering-'));
    try {
      const file = path.join(dir, 'sync.mjs');
      writeFileSync(file, SYNC);
      const r = spawnSync(process.execPath, [file, TIERING], { encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout.trim().split('\n').pop()!)).toEqual({ withoutCheck: true, withCheck: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
  it("a routing's progress lets the hold go at once with the budget unspent, and so does the start of a big fabric's routing; another phase's report, or a small fabric's routing start, does not (the hot function optimized only after)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-tiering-'));
    try {
      const file = path.join(dir, 'progress.mjs');
      writeFileSync(file, PROGRESS);
      const run = (...args: string[]): unknown => {
        const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--no-concurrent-recompilation', file, TIERING, ...args], { encoding: 'utf8', timeout: 60_000 });
        expect(r.status, r.stderr).toBe(0);
        return JSON.parse(r.stdout.trim().split('\n').pop()!);
      };
      const held = { held: true, optimized: false };
      expect(run()).toEqual({ discover: held, smallStart: held, routing: { held: false, optimized: true } });
      // A routing of a big fabric lets TurboFan go as it starts (TURBOFAN_ROUTING_PAIRS).
      expect(run('big')).toEqual({ bigStart: { held: false, optimized: true } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
  it('while held, a warm function runs as Sparkplug code at once; under --no-opt alone (batch compilation) it is still interpreted', () => {
    expect(warmProbe('hold')).toBe(true);
    expect(warmProbe('no-opt')).toBe(false);
  }, 60_000);

  it('a hot function stays unoptimized while held and is optimized after the budget; optimized at once without the hold', () => {
    const held = probe('hold');
    expect(held.before).toEqual({ optimized: false, held: true });
    expect(held.after).toEqual({ optimized: true, held: false });
    const witness = probe('none');
    expect(witness.before).toEqual({ optimized: true, held: false });
  }, 60_000);

  it('the bin writes a code cache V8 accepts after a run --umad that held TurboFan; one written under --no-opt is rejected', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-tiering-cache-'));
    try {
      // A copy of the bundle at the depth the bin expects (package.json two levels up).
      const bundle = path.join(dir, 'dist/bundle');
      cpSync(BUNDLE, bundle, { recursive: true });
      cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
      const bin = path.join(bundle, 'ibsm.cjs');
      const env: NodeJS.ProcessEnv = { ...process.env };
      delete env.LD_PRELOAD;
      delete env.NODE_OPTIONS;
      // run --umad on a CA that does not exist: TurboFan held, then "no usable device"; the cache is written at exit.
      const w = spawnSync(bin, ['run', '--umad', '--ca', 'ibsm-no-such-ca', '--once'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...env, IBSM_CODE_CACHE: 'write' } });
      expect(w.stderr).toContain('no usable device');
      const v = spawnSync(bin, ['--version'], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { ...env, IBSM_CODE_CACHE: 'report' } });
      expect(v.stderr).toContain('ibsm: code cache accepted');

      // The witness: a cache made while --no-opt is set does not fit a process started without it.
      const src = 'function f() { return 1 + 2; } f();';
      const make = `const vm = require('node:vm'); const s = new vm.Script(${JSON.stringify(src)}, { filename: 'x.js' }); s.runInThisContext(); require('node:v8').setFlagsFromString(process.argv[2]); require('node:fs').writeFileSync(process.argv[1], s.createCachedData());`;
      const use = `const vm = require('node:vm'); const s = new vm.Script(${JSON.stringify(src)}, { filename: 'x.js', cachedData: require('node:fs').readFileSync(process.argv[1]) }); console.log(s.cachedDataRejected ? 'rejected' : 'accepted');`;
      const cache = path.join(dir, 'x.cache');
      const verdict = (flag: string): string => {
        expect(spawnSync(process.execPath, ['-e', make, cache, flag], { encoding: 'utf8', env }).status).toBe(0);
        return spawnSync(process.execPath, ['-e', use, cache], { encoding: 'utf8', env }).stdout.trim();
      };
      expect(verdict('--no-opt')).toBe('rejected');
      expect(verdict('--opt')).toBe('accepted');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

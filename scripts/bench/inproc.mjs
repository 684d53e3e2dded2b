// In-process fabric at scale (#16): `ibsm run --once --sim <fat tree>` on the 11,664-host and the
// 46,080-host three-level fat trees; prints SUBNET UP time (the SM's own ms= figure), peak RSS of
// the whole process (simulator included), SMPs, CPU and wall time, median of --runs per size.
// Asserts nothing (the goals of #16: 11,664 hosts < 6 s and < 500 MB; 46,080 hosts < 30 s and
// < 1.5 GB are printed beside the figures).
//
//   node scripts/bench/inproc.mjs [--runs 3] [--sizes 11664,46080] [--entry main|bin]
//
// --entry main runs `node dist/cli/main.js` (plain node flags); bin runs dist/bundle/ibsm.cjs with
// the flags of its shebang (as installed). Each run is its own process; its peak RSS and CPU are
// read by a preload (this file with INPROC_PRELOAD=1) from process.resourceUsage() at exit.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

if (process.env.INPROC_PRELOAD === '1') {
  process.on('exit', () => {
    const u = process.resourceUsage();
    process.stderr.write(`\nINPROC maxRSSkB=${u.maxRSS} cpuUs=${u.userCPUTime + u.systemCPUTime}\n`);
  });
} else {
  await main();
}

async function main() {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const arg = opt;
  const runs = Number(arg('--runs', '3'));
  const entry = arg('--entry', 'main');
  const SIZES = {
    11664: { spec: 'gen:fattree3:radix=36', goalMs: 6000, goalMB: 500 },
    46080: { spec: 'gen:fattree3:pods=48,leaves=24,spines=24,cores=576,hosts=40', goalMs: 30000, goalMB: 1500 },
  };
  const sizes = arg('--sizes', '11664,46080').split(',').map(Number);
  for (const s of sizes) if (!SIZES[s]) throw new Error(`--sizes: ${s} is not one of ${Object.keys(SIZES).join(', ')}`);
  const nodeArgs = (() => {
    if (entry === 'main') return [join(root, 'dist/cli/main.js')];
    if (entry !== 'bin') throw new Error(`--entry: main or bin, got ${entry}`);
    const bin = join(root, 'dist/bundle/ibsm.cjs');
    const shebang = readFileSync(bin, 'utf8').split('\n', 1)[0];
    const flags = shebang.replace(/^#!.*?node\s*/, '').split(/\s+/).filter(Boolean);
    return [...flags, bin];
  })();
  const median = (xs) => {
    const v = xs.filter((x) => x !== undefined).sort((a, b) => a - b);
    return v.length ? v[(v.length - 1) >> 1] : undefined;
  };
  const one = (spec) =>
    new Promise((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const child = spawn(process.execPath, ['--import', pathToFileURL(fileURLToPath(import.meta.url)).href, ...nodeArgs, 'run', '--once', '--sim', spec], {
        env: { ...process.env, INPROC_PRELOAD: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', reject);
      child.on('exit', (code) => {
        const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
        const up = /SUBNET UP .*?smps=(\d+) ms=(\d+)/.exec(out);
        const ru = /INPROC maxRSSkB=(\d+) cpuUs=(\d+)/.exec(out);
        if (code !== 0 || !up || !ru) return reject(new Error(`run failed (exit ${code}): ${out.slice(-2000)}`));
        resolve({ upMs: Number(up[2]), smps: Number(up[1]), rssMB: Number(ru[1]) / 1024, cpuS: Number(ru[2]) / 1e6, wallS: wallMs / 1000 });
      });
    });
  console.log(`ibsm run --once --sim, entry ${entry} (${nodeArgs.slice(0, -1).join(' ') || 'no node flags'}), median of ${runs}`);
  console.log(['hosts', 'runs', 'SUBNET UP ms', 'goal ms', 'peak RSS MB', 'goal MB', 'SMPs', 'CPU s', 'wall s', 'each run (ms / MB)'].join(' | '));
  for (const s of sizes) {
    const { spec, goalMs, goalMB } = SIZES[s];
    const rs = [];
    for (let i = 0; i < runs; i++) rs.push(await one(spec));
    const row = [
      s,
      runs,
      median(rs.map((r) => r.upMs)),
      goalMs,
      median(rs.map((r) => r.rssMB)).toFixed(0),
      goalMB,
      median(rs.map((r) => r.smps)),
      median(rs.map((r) => r.cpuS)).toFixed(1),
      median(rs.map((r) => r.wallS)).toFixed(1),
      rs.map((r) => `${r.upMs}/${r.rssMB.toFixed(0)}`).join(' '),
    ];
    console.log(row.join(' | '));
  }
}

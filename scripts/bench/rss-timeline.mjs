// Where the peak RSS of one `ibsm run --umad --once` goes: the SM on a fresh ibsim of a fabric
// (sm-vs-opensm.mjs's names: 5k, 10k, ...; default 10k), its VmRSS sampled every --every ms
// (default 5) beside its own log lines, printed as a timeline: each log line with the RSS when it
// was written, the peak and where it fell. --cli FILE picks another build (default the bundle's
// bin); --args "..." adds options to the run (-v: every sweep phase's line).
//   node scripts/bench/rss-timeline.mjs [--fabric 10k] [--every 5] [--cli FILE] [--args "..."]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchFabrics, prepareFabric } from './sm-fabrics.mjs';
import { startIbsim, clientEnv } from './ibsim.mjs';
import { opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const key = opt('--fabric', '10k');
const every = Number(opt('--every', '5'));
const cli = path.resolve(opt('--cli', path.join(root, 'dist/bundle/ibsm.cjs')));
const extra = opt('--args', '').split(/\s+/).filter(Boolean);

const mods = {
  ...(await import(pathToFileURL(path.join(root, 'dist/model/load.js')).href)),
  ...(await import(pathToFileURL(path.join(root, 'dist/model/ibnetdiscover.js')).href)),
};
const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-rss-'));
// a name of sm-vs-opensm's (sm-fabrics.mjs), or a generator spec
const fabrics = benchFabrics();
fabrics[key] ??= { label: key, source: key };
const { netFile, simHost, limits } = prepareFabric(fabrics, key, dir, mods);
const sim = await startIbsim(netFile, { dir, limits, prefix: 'rsstl' });
try {
  const env = clientEnv(sim, simHost);
  const args = ['run', '--umad', '--once', '--routing', 'minhop', '--guid2lid', path.join(dir, 'guid2lid'), ...extra];
  const t0 = Date.now();
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cli, ...args], { env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const samples = [];
  const lines = [];
  const rssKb = () => {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : 0;
    } catch {
      return 0;
    }
  };
  let buf = '';
  const onData = (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push({ t: Date.now() - t0, rss: rssKb(), text: buf.slice(0, i) });
      buf = buf.slice(i + 1);
    }
  };
  child.stdout.setEncoding('utf8').on('data', onData);
  child.stderr.setEncoding('utf8').on('data', onData);
  const poll = setInterval(() => {
    const r = rssKb();
    if (r) samples.push({ t: Date.now() - t0, rss: r });
  }, every);
  await new Promise((r) => child.once('close', r));
  clearInterval(poll);
  const peak = samples.reduce((a, s) => (s.rss > a.rss ? s : a), { t: 0, rss: 0 });
  const mb = (kb) => (kb / 1024).toFixed(1);
  for (const l of lines) console.log(`${String(l.t).padStart(6)} ms ${mb(l.rss).padStart(6)} MB  ${l.text.slice(0, 150)}`);
  console.log(`\nRSS every ~${every} ms (${samples.length} samples), MB:`);
  const step = Math.max(1, Math.floor(samples.length / 60));
  for (let i = 0; i < samples.length; i += step) {
    const s = samples.slice(i, i + step).reduce((a, x) => (x.rss > a.rss ? x : a));
    console.log(`${String(s.t).padStart(6)} ms ${mb(s.rss).padStart(6)} ${'#'.repeat(Math.round(s.rss / 4096))}`);
  }
  console.log(`\npeak ${mb(peak.rss)} MB at ${peak.t} ms`);
} finally {
  await sim.stop();
  rmSync(dir, { recursive: true, force: true });
}

#!/usr/bin/env node
// Unresponsive SMAs on ibsim, beside OpenSM (issue #33 item 2): one spine of the fat tree dies
// once the SM is up (ibsim's `Error "<spine>"[port] 100` on each of its ports: whatever enters it
// is lost, SMPs to its SMA and those it would forward), then for --window seconds, with a sweep
// interval of 10 s for each SM: the heavy sweeps it ran, the SMPs it gave up on timeouts, and
// (ibsm) each heavy sweep's time. SMs: OpenSM (its defaults, sweep_interval 10), ibsm without the
// policy, ibsm with `--health-unresponsive 2:isolate`. One fresh ibsim per SM run.
// Counted from the logs: ibsm's IBSM-2001 (a discovery: a heavy sweep), IBSM-1034's givenUp= (SMPs
// given up after every retry), IBSM-1002's ms=; OpenSM's "SUBNET UP" lines (one a heavy sweep that
// completed) and its ERR 3120 lines (one per SMP that timed out).
//
// Prints one table; asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/unresponsive-ibsim.mjs [--fabric SPEC] [--window S] [--sms opensm,ibsm-off,ibsm-isolate]
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { startIbsim, stopChild, clientEnv } from './ibsim.mjs';
import { opt } from './args.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const imp = (p) => import(pathToFileURL(path.join(root, 'dist', p)).href);
const { loadFabricSpec } = await imp('model/load.js');
const { formatIbnetdiscover } = await imp('model/ibnetdiscover.js');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SPEC = opt('--fabric', 'gen:fattree2:leaves=24,spines=12,hosts=18');
const WINDOW_MS = Number(opt('--window', '60')) * 1000;
const SMS = opt('--sms', 'opensm,ibsm-off,ibsm-isolate').split(',');

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-unresp-bench-'));
const f = loadFabricSpec(SPEC);
const text = formatIbnetdiscover(f, { timestamp: 'unresponsive' });
const net = path.join(dir, 'fabric.net');
writeFileSync(net, text);
const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(text)[1];
const sw = (i) => f.nodes[i].type === 2;
const spine = f.nodes.findIndex((n, i) => sw(i) && n.ports.every((p) => !p?.peer || sw(p.peer.node)));
const spineName = new RegExp(`^Switch\\s+\\d+\\s+"([^"]+)"\\s+#\\s+"${f.nodes[spine].desc}"`, 'm').exec(text)[1];
const links = f.nodes[spine].ports.filter((p, pn) => pn > 0 && p?.peer).length;

async function run(kind) {
  const sim = await startIbsim(net, { dir, limits: ibsimLimits(f), prefix: 'ibsmunresp' });
  const cache = path.join(dir, kind);
  mkdirSync(cache, { recursive: true });
  const osmLog = path.join(cache, 'opensm.log');
  const osmConf = path.join(cache, 'opensm.conf');
  writeFileSync(osmConf, 'force_log_flush TRUE\nsweep_interval 10\n');
  const env = clientEnv(sim, simHost, { OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache });
  const ibsmArgs = [path.join(root, 'dist/cli/main.js'), 'run', '--umad', '--sweep-interval', '10', ...(kind === 'ibsm-isolate' ? ['--health-unresponsive', '2:isolate'] : [])];
  const [cmd, args] = kind.startsWith('ibsm') ? [process.execPath, ibsmArgs] : ['opensm', ['-F', osmConf, '-f', osmLog, '--dump_files_dir', cache]];
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d) => (out += d));
  const log = () => (kind === 'opensm' ? (existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '') : out);
  try {
    const t0 = Date.now();
    while (!log().includes('SUBNET UP') && Date.now() - t0 < 120_000) await sleep(100);
    if (!log().includes('SUBNET UP')) return { kind, error: 'no SUBNET UP' };
    await sleep(2000);
    const from = log().length;
    for (let p = 1; p < f.nodes[spine].ports.length; p++) if (f.nodes[spine].ports[p]?.peer) await sim.console(`Error "${spineName}"[${p}] 100`);
    await sleep(WINDOW_MS);
    const after = log().slice(from);
    const count = (re) => (after.match(re) ?? []).length;
    if (kind === 'opensm') return { kind, heavy: count(/SUBNET UP/g), givenUp: count(/ERR 3120/g) };
    const sum = (re) => [...after.matchAll(re)].reduce((a, m) => a + Number(m[1]), 0);
    const ms = [...after.matchAll(/IBSM-1002 heavy sweep done.* ms=(\d+)/g)].map((m) => Number(m[1]));
    return { kind, heavy: count(/IBSM-2001/g), givenUp: sum(/IBSM-1034 .*givenUp=(\d+)/g), isolated: count(/IBSM-2075/g) > 0, ms };
  } finally {
    await stopChild(child);
    await sim.stop();
  }
}

console.log(`unresponsive spine on ibsim: ${SPEC} (${f.nodes.filter((n) => !sw(f.nodes.indexOf(n))).length} hosts), ${f.nodes[spine].desc} dead (${links} links) for ${WINDOW_MS / 1000} s, sweep interval 10 s`);
console.log('SM            heavy sweeps  SMPs given up  isolated  heavy sweep ms');
for (const kind of SMS) {
  const r = await run(kind);
  if (r.error) console.log(`${kind.padEnd(12)}  ${r.error}`);
  else console.log(`${kind.padEnd(12)}  ${String(r.heavy).padStart(12)}  ${String(r.givenUp).padStart(13)}  ${String(r.isolated ?? '-').padStart(8)}  ${(r.ms ?? []).join(' ') || '-'}`);
}

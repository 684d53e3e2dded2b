#!/usr/bin/env node
// The flapping bench (issue #33, Done-when item 2): one link of a 432-host two-level fat tree on
// ibsim bounces every --period seconds (console `Unlink`, then `ReLink` half a period later) for
// --minutes, then stays up; three runs side by side, each on its own fresh ibsim (own
// IBSIM_SOCKNAME), the SM attached at the first host:
//   ibsm-flap  ibsm with --health-flap POLICY (default 5/60:isolate:60)
//   ibsm       ibsm without a flapping policy
//   opensm     OpenSM at its defaults
// The run goes on for the quiet time + a light sweep interval + --margin after the flapping ends,
// so the policy's release is seen (every SM gets the same tail).
//
// Per SM, during the flapping and in the tail after it:
//   heavy     full heavy sweeps: ibsm's "discovery done" lines (IBSM-2001); OpenSM's "SUBNET UP"
//             (its log at its default verbosity writes one per heavy sweep that programmed)
//   local     ibsm's local sweeps ("local sweep done", IBSM-1201); OpenSM has none
//   LFT       LFT blocks written (Sets of LinearForwardingTable), counted by the umad_send shim
//             (umad-count.c, preloaded into both SMs the same way, as sm-vs-opensm.mjs does)
//   SMPs      every SMP the SM sent (the same shim)
//   CPU s     the SM process's user + system time (/proc/PID/stat, every thread)
// and for ibsm-flap: the bounce at which the link was isolated (IBSM-2065), what the SM did from
// the next bounce to the end of the flapping (should be no sweep and no LFT block), and when it
// was released (IBSM-2066) after the flapping stopped; the port's state read with smpquery at the
// end of the flapping (INIT: held) and at the end (ACTIVE: released).
// Asserts nothing; prints the table and the machine's load average.
//
//   npx tsc -p tsconfig.json && node scripts/bench/health-flap.mjs [options]
//     --minutes M       flapping time (default 5)
//     --period S        one bounce every S seconds (default 2: down S/2, up S/2)
//     --policy P        ibsm-flap's --health-flap (default 5/60:isolate:60)
//     --fabric SPEC     default gen:fattree2:leaves=24,spines=12,hosts=18 (432 hosts, 36 switches)
//     --host-link       bounce a leaf's host link instead of a leaf-spine link
//     --sms LIST        default ibsm-flap,ibsm,opensm
//     --margin S        after quiet time + sweep interval (default 20)
//     --keep            keep the scratch directory (the SMs' logs)
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ibsimLimits } from './ibsim-limits.mjs';
import { clientEnv, runClient, startIbsim, stopChild, UMAD2SIM } from './ibsim.mjs';
import { buildShim, startCountedSm } from './umad-count.mjs';
import { killOnInterrupt, upAndSettled } from './procs.mjs';
import { flag, opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const distDir = path.resolve(here, '../../dist');
const SPEC = opt('--fabric', 'gen:fattree2:leaves=24,spines=12,hosts=18');
const MINUTES = Number(opt('--minutes', '5'));
const PERIOD_MS = Number(opt('--period', '2')) * 1000;
const POLICY = opt('--policy', '5/60:isolate:60');
const SMS = opt('--sms', 'ibsm-flap,ibsm,opensm').split(',').filter(Boolean);
const MARGIN_MS = Number(opt('--margin', '20')) * 1000;
const INTERVAL_S = 10; // the light sweep interval: ibsm's default and OpenSM's sweep_interval
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const live = new Set();
killOnInterrupt(live);

for (const c of ['ibsim', 'smpquery', 'cc', ...(SMS.includes('opensm') ? ['opensm'] : [])]) {
  if (spawnSync('bash', ['-c', `command -v ${c}`]).status !== 0) throw new Error(`missing ${c} (apt-get install ibsim-utils infiniband-diags opensm gcc libibumad-dev)`);
}
if (!existsSync(path.join(distDir, 'cli/main.js'))) throw new Error('dist/cli/main.js not found: run "npx tsc -p tsconfig.json" first');
const mod = async (p) => import(pathToFileURL(path.join(distDir, p)).href);
const { loadFabricSpec } = await mod('model/load.js');
const { formatIbnetdiscover } = await mod('model/ibnetdiscover.js');
const { parseFlapPolicy } = await mod('sm/health-flap-policy.js');
const quietMs = parseFlapPolicy(POLICY).quietMs;

const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-health-flap-'));
const shim = buildShim(dir);
const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** CPU seconds (user + system, every thread) of a live process. */
function cpuS(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / TICK; // fields 14 and 15 of stat(5)
  } catch {
    return NaN;
  }
}

function startSm(kind, sim, host) {
  const ibsm = kind.startsWith('ibsm') ? [process.execPath, path.join(distDir, 'cli/main.js'), 'run', '--umad', '--sweep-interval', String(INTERVAL_S), ...(kind === 'ibsm-flap' ? ['--health-flap', POLICY] : [])] : undefined;
  const sm = startCountedSm({ kind, cache: path.join(dir, kind), shim, umad2sim: UMAD2SIM, env: (extra) => clientEnv(sim, host, extra), ibsm, osmConf: `sweep_interval ${INTERVAL_S}\n` });
  live.add(sm.child.pid);
  return sm;
}

/** What the SM did so far: log length, shim counts, CPU, time. */
const mark = (sm) => ({ t: performance.now(), at: sm.log().length, ...sm.counts(), cpu: cpuS(sm.child.pid) });
const lines = (text, re) => (text.match(re) ?? []).length;
/** What the SM did between two marks. */
function between(sm, a, b) {
  const text = sm.log().slice(a.at, b.at);
  const ibsm = sm.kind.startsWith('ibsm');
  return {
    heavy: ibsm ? lines(text, /IBSM-2001/g) : lines(text, /SUBNET UP/g),
    local: ibsm ? lines(text, /IBSM-1201/g) : undefined,
    lft: b.lft - a.lft,
    smps: b.smps - a.smps,
    cpu: b.cpu - a.cpu,
    s: (b.t - a.t) / 1000,
  };
}

/** The link's port state as smpquery reads it (by directed route from the SM's node is not
 * needed: LID-routed to the switch, whose LID the fabric has by then). */
async function portState(sim, guid, port) {
  const r = await runClient('smpquery', ['-G', 'portinfo', `0x${guid.toString(16)}`, String(port)], clientEnv(sim, undefined), dir, 30_000);
  return /^LinkState:\.*(\w+)/m.exec(r.out)?.[1] ?? `? (${(r.err || r.out).trim().split('\n')[0]})`;
}

// ---------------------------------------------------------------------------------------------
const topo = loadFabricSpec(SPEC);
const netFile = path.join(dir, 'fabric.net');
writeFileSync(netFile, formatIbnetdiscover(topo, { timestamp: 'health-flap' }));
const simHost = /^(?:Ca|Hca)\s+\d+\s+"([^"]+)"/m.exec(readFileSync(netFile, 'utf8'))?.[1];
const limits = ibsimLimits(topo);
const isSw = (n) => n.type === 2;
// The last leaf (away from the SM's host on the first one): its first uplink, or its first host.
const leaf = topo.nodes.findLast((n) => isSw(n) && n.ports.some((p) => p?.peer && !isSw(topo.nodes[p.peer.node])));
const port = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && isSw(topo.nodes[p.peer.node]) !== flag('--host-link'));
const peer = topo.nodes[leaf.ports[port].peer.node];
const simName = `S-${leaf.guid.toString(16).padStart(16, '0')}`;
const hosts = topo.nodes.filter((n) => !isSw(n)).length;
const bounces = Math.max(1, Math.round((MINUTES * 60_000) / PERIOD_MS));
const tailMs = quietMs + INTERVAL_S * 1000 + MARGIN_MS;
console.log(`== ${SPEC}: ${hosts} hosts, ${topo.nodes.length - hosts} switches; ${leaf.desc} port ${port} (to ${peer.desc}) bounced every ${PERIOD_MS / 1000} s for ${MINUTES} min (${bounces} bounces), then ${Math.round(tailMs / 1000)} s up; policy ${POLICY}; SMs at ${simHost}`);
console.log(`load average at start: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')} (${os.cpus().length} cores)`);

const rows = [];
for (const kind of SMS) {
  const sim = await startIbsim(netFile, { dir, limits, prefix: 'ibsmflap', timeoutMs: 60_000 + limits.nodes * 5 });
  live.add(sim.pid);
  const sm = startSm(kind, sim, simHost);
  const row = { kind };
  try {
    await upAndSettled(sm, kind, { upMs: 300_000, settleMs: 3000 });
    const m0 = mark(sm);
    const t0 = performance.now();
    for (let k = 0; k < bounces; k++) {
      const at = t0 + k * PERIOD_MS;
      await sleep(Math.max(0, at - performance.now()));
      await sim.write(`Unlink "${simName}"[${port}]`);
      await sleep(Math.max(0, at + PERIOD_MS / 2 - performance.now()));
      await sim.write(`ReLink "${simName}"[${port}]`);
      if (row.isoBounce === undefined && /IBSM-2065/.test(sm.log())) {
        row.isoBounce = k + 1; // seen by the end of this bounce
        row.isoS = (performance.now() - t0) / 1000;
        row.mIso = mark(sm);
      } else if (row.mIso && !row.mAfter) row.mAfter = mark(sm); // from the bounce after the isolation
    }
    await sleep(Math.max(0, t0 + bounces * PERIOD_MS - performance.now()));
    const mEnd = mark(sm);
    row.stateEnd = await portState(sim, leaf.guid, port);
    while (performance.now() - mEnd.t < tailMs) {
      if (row.releasedS === undefined && /IBSM-2066/.test(sm.log().slice(mEnd.at))) row.releasedS = (performance.now() - mEnd.t) / 1000;
      await sleep(200);
    }
    const mFinal = mark(sm);
    row.stateFinal = await portState(sim, leaf.guid, port);
    row.flap = between(sm, m0, mEnd);
    row.tail = between(sm, mEnd, mFinal);
    if (row.mAfter) row.after = between(sm, row.mAfter, mEnd);
    if (row.mIso) row.isolation = between(sm, m0, row.mIso);
  } catch (e) {
    row.error = e.message;
  } finally {
    await stopChild(sm.child);
    live.delete(sm.child.pid);
    await sim.stop();
    live.delete(sim.pid);
  }
  rows.push(row);
  console.log(`${kind} done`);
}

const f = (x, d = 0) => (x === undefined || Number.isNaN(x) ? '-' : typeof x === 'number' ? x.toFixed(d) : String(x));
const hdr = ['SM', 'period', 's', 'heavy', 'local', 'LFT blocks', 'SMPs', 'CPU s', 'port state after'];
const out = [hdr];
for (const r of rows) {
  if (r.error) {
    out.push([r.kind, 'error', r.error]);
    continue;
  }
  const line = (name, x, state) => [r.kind, name, f(x.s), f(x.heavy), f(x.local), f(x.lft), f(x.smps), f(x.cpu, 2), state ?? ''];
  out.push(line(`flapping (${bounces} bounces)`, r.flap, r.stateEnd));
  out.push(line('tail (link up)', r.tail, r.stateFinal));
}
const w = hdr.map((_, i) => Math.max(...out.map((l) => String(l[i] ?? '').length)));
for (const l of out) console.log(l.map((c, i) => String(c ?? '').padEnd(w[i])).join('  '));
for (const r of rows) {
  if (r.error || !r.kind.endsWith('-flap')) continue;
  if (r.isoBounce === undefined) {
    console.log(`${r.kind}: never isolated`);
    continue;
  }
  const a = r.after;
  console.log(`${r.kind}: isolated by bounce ${r.isoBounce} (${f(r.isoS, 1)} s into the flapping; until then ${r.isolation.heavy} heavy + ${r.isolation.local} local sweeps, ${r.isolation.lft} LFT blocks, ${r.isolation.smps} SMPs)`);
  if (a) console.log(`${r.kind}: from the bounce after the isolation to the end of the flapping (${f(a.s)} s): ${a.heavy} heavy sweeps, ${a.local} local sweeps, ${a.lft} LFT blocks, ${a.smps} SMPs (${f(a.smps / (a.s / (PERIOD_MS / 1000)), 1)} a bounce, light sweeps included), ${f(a.cpu, 2)} CPU s`);
  console.log(`${r.kind}: released ${r.releasedS === undefined ? 'never (within the tail)' : `${f(r.releasedS, 1)} s after the flapping stopped (quiet time ${quietMs / 1000} s, light sweep every ${INTERVAL_S} s)`}`);
}
console.log(`load average at end: ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
if (flag('--keep')) console.log(`scratch: ${dir}`);
else rmSync(dir, { recursive: true, force: true });

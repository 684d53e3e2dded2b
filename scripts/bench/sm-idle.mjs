// The idle phase of sm-vs-opensm.mjs (issue #32): a running SM on a big fabric spends most of its
// life idle, sweeping lightly. One SM at a time on a fresh ibsim, both with the same light sweep
// interval (ibsm --sweep-interval S, OpenSM -s S, otherwise at its defaults), both under the same
// umad_send counting shim:
//   - after SUBNET UP and a settle (no Set sent for one sweep interval and a second, then
//     `settleS` more, default 20 s), over
//     `seconds`: the SM's CPU (user + system from /proc/PID/stat), ibsim's CPU, and the SMPs the SM
//     sent (the shim's live counts), each per minute;
//   - then a cable pulled (ibsim console `Unlink` of a leaf's port to a spine): the time from the
//     console command to the last LFT Set the SM sent for it (none for a sweep interval and a
//     second after it), the LFT Sets and the SMPs sent until then.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { startIbsim, clientEnv, stopChild, UMAD2SIM } from './ibsim.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** CPU (user + system) a process has used so far, in ms. */
export function cpuMsOf(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
  } catch {
    return NaN;
  }
}

/** CPU ms so far of each thread of a process, summed by thread name (/proc/PID/task); the main
 * thread (its TID the PID) as "main". */
export function threadCpuOf(pid) {
  const out = new Map();
  let tids = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const st = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = tid === String(pid) ? 'main' : st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(') ') + 2).split(' ');
      out.set(name, (out.get(name) ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

/** The cable to pull: a leaf's (a switch with CA ports) first port to another switch, as ibsim names it. */
export function cableOf(topo) {
  const isSw = (i) => topo.nodes[i].type === 2;
  for (const n of topo.nodes) {
    if (n.type !== 2 || !n.ports.some((p) => p?.peer && !isSw(p.peer.node))) continue;
    const port = n.ports.findIndex((p, i) => i > 0 && p?.peer && isSw(p.peer.node));
    if (port > 0) return { name: `S-${n.guid.toString(16).padStart(16, '0')}`, port, desc: n.desc };
  }
  return undefined;
}

/** Sends so far from the shim's live counts: SMPs, Sets, LFT Sets. */
function live(readCounts, file) {
  const c = readCounts(file);
  if (!c) return { smps: 0, sets: 0, lft: 0 };
  let sets = 0;
  for (const [key, n] of c.byKey) if ((key >>> 24 === 0x01 || key >>> 24 === 0x81) && ((key >>> 16) & 0xff) === 0x02) sets += n;
  return { smps: c.smps, sets, lft: c.lftSets };
}

/**
 * One idle run of `kind` on `fab` (sm-vs-opensm.mjs prepareFabric). Returns
 * { sm, upMs, cpuPerMin, simCpuPerMin, smpsPerMin, setsIdle, threads, cut: { ms, lft, smps } };
 * `threads`: the SM's CPU ms per minute by thread name over the idle window. `nodeFlags`: node flags
 * for ibsm (run as node FLAGS CLI; e.g. --cpu-prof).
 */
export async function idleRun(kind, fab, { dir, shim, cliFile, cliIsBin, readCounts, seconds, intervalS, topo, settleS = 20, nodeFlags = [] }) {
  const sim = await startIbsim(fab.netFile, { dir, limits: fab.limits, prefix: 'h9idle', timeoutMs: 60_000 + fab.limits.nodes * 5 });
  const tag = `idle-${kind}`;
  const cache = path.join(dir, tag);
  rmSync(cache, { recursive: true, force: true });
  mkdirSync(cache, { recursive: true });
  const countFile = path.join(cache, 'counts');
  const osmLog = path.join(cache, 'opensm.log');
  const osmConf = path.join(cache, 'opensm.conf');
  writeFileSync(osmConf, 'force_log_flush TRUE\n'); // its log read as it goes
  const env = clientEnv(sim, fab.simHost, { UMAD_COUNT_FILE: countFile, LD_PRELOAD: `${shim} ${UMAD2SIM}`, OSM_CACHE_DIR: cache, OSM_TMP_DIR: cache });
  const [cmd, args] =
    kind === 'ibsm'
      ? [cliIsBin && !nodeFlags.length ? cliFile : process.execPath, [...(cliIsBin && !nodeFlags.length ? [] : [...nodeFlags, cliFile]), 'run', '--umad', '--routing', 'minhop', '--sweep-interval', String(intervalS), '--guid2lid', path.join(cache, 'guid2lid')]]
      : ['opensm', ['-s', String(intervalS), '-F', osmConf, '-f', osmLog, '--dump_files_dir', cache]];
  const t0 = Date.now();
  const child = spawn('bash', ['-c', 'ulimit -n 1024 && exec "$@"', 'bash', cmd, ...args], { env, cwd: cache, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const take = (d) => {
    if (out.length < 8 << 20) out += d;
  };
  child.stdout.setEncoding('utf8').on('data', take);
  child.stderr.setEncoding('utf8').on('data', take);
  const log = () => (kind === 'ibsm' ? out : existsSync(osmLog) ? readFileSync(osmLog, 'utf8') : '');
  const r = { sm: kind };
  try {
    const upBy = Date.now() + 900_000;
    while (!log().includes('SUBNET UP')) {
      if (Date.now() > upBy || child.exitCode !== null) throw new Error(`${kind}: no SUBNET UP (${child.exitCode !== null ? `exit ${child.exitCode}` : 'timed out'})\n${log().split('\n').slice(-4).join('\n')}`);
      await sleep(100);
    }
    r.upMs = Date.now() - t0;
    // Settled: no Set for a sweep interval and a second (OpenSM's second sweep, ibsm's multicast).
    const quietMs = intervalS * 1000 + 1000;
    for (let prev = live(readCounts, countFile).sets, since = Date.now(); Date.now() - since < quietMs; ) {
      await sleep(250);
      const s = live(readCounts, countFile).sets;
      if (s !== prev) [prev, since] = [s, Date.now()];
      if (Date.now() - t0 > 900_000) break;
    }
    // Then `settleS` more: one-off work after SUBNET UP that sends nothing (ibsm: the intact
    // routing's load and the re-route rehearsal of sm/local-sweep.ts) is not idle.
    await sleep(settleS * 1000);
    // (the SM is bash's exec: the same PID)
    const a = { cpu: cpuMsOf(child.pid), sim: cpuMsOf(sim.pid), c: live(readCounts, countFile), t: performance.now(), th: threadCpuOf(child.pid) };
    await sleep(seconds * 1000);
    const b = { cpu: cpuMsOf(child.pid), sim: cpuMsOf(sim.pid), c: live(readCounts, countFile), t: performance.now(), th: threadCpuOf(child.pid) };
    const perMin = (x) => (x * 60_000) / (b.t - a.t);
    r.threads = Object.fromEntries([...b.th].map(([k, v]) => [k, Math.round(perMin(v - (a.th.get(k) ?? 0)))]).filter(([, v]) => v > 0));
    r.cpuPerMin = perMin(b.cpu - a.cpu);
    r.simCpuPerMin = perMin(b.sim - a.sim);
    r.smpsPerMin = perMin(b.c.smps - a.c.smps);
    r.setsIdle = b.c.sets - a.c.sets;
    // A cable pulled: the time to the SM's last LFT Set for it.
    const cut = cableOf(topo);
    if (cut) {
      const c0 = live(readCounts, countFile);
      const tc = performance.now();
      await sim.write(`Unlink "${cut.name}"[${cut.port}]`);
      // Done when no LFT Set came for the quiet time after the last one (three times that when
      // none came at all); light sweeps' SMPs go on meanwhile and do not count.
      let last = c0;
      let atLast = c0;
      let lastLftAt;
      for (;;) {
        await sleep(20);
        const c = live(readCounts, countFile);
        const now = performance.now();
        if (c.lft !== last.lft) [lastLftAt, atLast] = [now, c];
        last = c;
        if (now - (lastLftAt ?? tc) > (lastLftAt === undefined ? 3 : 1) * quietMs || now - tc > 300_000) break;
      }
      last = atLast;
      r.cut = { what: `${cut.desc}[${cut.port}]`, ms: lastLftAt === undefined ? undefined : lastLftAt - tc, lft: last.lft - c0.lft, smps: last.smps - c0.smps };
    }
  } finally {
    await stopChild(child);
    if (kind === 'ibsm') writeFileSync(path.join(cache, 'ibsm.out'), out);
    await sim.stop();
  }
  return r;
}

/** Print the idle rows of one fabric (medians when several runs). */
export function printIdle(fab, rows, intervalS, seconds) {
  const fmt = (x, d = 0) => (x === undefined || Number.isNaN(x) ? '-' : x.toFixed(d));
  console.log(`\n== idle, ${fab.label}: ${fab.hosts} hosts, ${fab.switches} switches; light sweeps every ${intervalS} s, measured over ${seconds} s after SUBNET UP`);
  const head = ['SM', 'runs', 'UP ms', 'CPU ms/min', 'sim CPU ms/min', 'SMPs/min', 'Sets idle', 'cut: ms to last LFT Set', 'LFT Sets', 'SMPs'];
  console.log(head.join(' | '));
  for (const r of rows) console.log([r.sm, r.runs, fmt(r.upMs), fmt(r.cpuPerMin), fmt(r.simCpuPerMin), fmt(r.smpsPerMin), fmt(r.setsIdle), fmt(r.cut?.ms), fmt(r.cut?.lft), fmt(r.cut?.smps)].join(' | '));
  const [a, b] = ['ibsm', 'opensm'].map((k) => rows.find((r) => r.sm === k));
  if (a && b) {
    const ratio = (x, y) => (x && y ? (x / y).toFixed(2) : '-');
    console.log(`   ibsm/OpenSM  CPU/min ${ratio(a.cpuPerMin, b.cpuPerMin)}x   sim CPU/min ${ratio(a.simCpuPerMin, b.simCpuPerMin)}x   SMPs/min ${ratio(a.smpsPerMin, b.smpsPerMin)}x   cut to routes ${ratio(a.cut?.ms, b.cut?.ms)}x`);
  }
}

/** Medians of several idle runs of one SM. */
export function medianIdle(list) {
  const med = (get) => {
    const xs = list.map(get).filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((p, q) => p - q);
    return xs.length ? (xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2) : undefined;
  };
  return {
    sm: list[0].sm,
    runs: list.length,
    upMs: med((r) => r.upMs),
    cpuPerMin: med((r) => r.cpuPerMin),
    simCpuPerMin: med((r) => r.simCpuPerMin),
    smpsPerMin: med((r) => r.smpsPerMin),
    setsIdle: med((r) => r.setsIdle),
    cut: { ms: med((r) => r.cut?.ms), lft: med((r) => r.cut?.lft), smps: med((r) => r.cut?.smps) },
  };
}

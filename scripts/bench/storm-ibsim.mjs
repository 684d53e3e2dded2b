#!/usr/bin/env node
// The re-registration storm through ibsim, ibsm beside OpenSM (issue #32): one ibsim of the
// topology per SM, the SM at the first node, and a host process (scripts/bench/storm-client.c) at
// each of `--hosts` CA nodes, all starting at the same instant: each joins the IPoIB broadcast group,
// registers a ServiceRecord and an InformInfo, and asks PathRecords to `--peers` other hosts (see
// storm-client.c for the exact requests, resends and BUSY retries). Measured per SM, medians over
// `--runs`: the time until every host has all its answers, answers lost (no answer after 8 sends or
// still BUSY after 8 retries), BUSY answers, the SM's CPU over the storm and its RSS after it.
//
//   node scripts/bench/storm-ibsim.mjs [--topo gen:fattree2:leaves=16,spines=8,hosts=16] [--hosts 128]
//                                      [--peers 16] [--runs 3] [--sm opensm,ibsm]
//                                      [--ibsm-node-flags="--cpu-prof --cpu-prof-dir=DIR"] [--rounds N]
// --sm floor: ibsim's own floor, an "SA" that answers every request at once without computing
// anything (storm-floor.c, at the SM's port after OpenSM brought the subnet up and left).
// --rounds N: the storm N times on the same SM (each round new host processes), each round reported
// on its own: the first meets an SM whose SA has answered nothing yet, the later ones a warm one.
//
// OpenSM runs at its defaults (-D 0x05 for the SUBNET UP line in its log). Every process is stopped
// by its PID.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startIbsim } from './ibsim.mjs';
import { ibsimLimits } from './ibsim-limits.mjs';
import { child, rssMb, until } from './procs.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// ibsm as operators run it: the bundled bin through its shebang (its V8 flags and code cache), as
// sm-vs-opensm.mjs runs it; with --ibsm-node-flags, node BIN (the shebang's flags not applied).
const BIN = path.join(ROOT, 'dist/bundle/ibsm.cjs');
const { values: o } = parseArgs({
  options: {
    topo: { type: 'string', default: 'gen:fattree2:leaves=16,spines=8,hosts=16' },
    hosts: { type: 'string', default: '128' },
    peers: { type: 'string', default: '16' },
    runs: { type: 'string', default: '3' },
    sm: { type: 'string', default: 'opensm,ibsm' },
    'ibsm-node-flags': { type: 'string', default: '' },
    rounds: { type: 'string', default: '1' },
  },
});
const scratch = mkdtempSync(path.join(os.tmpdir(), 'ibsm-bench-storm-'));
const { loadFabricSpec } = await import(path.join(ROOT, 'dist/model/load.js'));
const { formatIbnetdiscover } = await import(path.join(ROOT, 'dist/model/ibnetdiscover.js'));

const fabric = loadFabricSpec(o.topo);
const netFile = path.join(scratch, 'topo.net');
writeFileSync(netFile, formatIbnetdiscover(fabric, { timestamp: 'bench' }));
// The CA nodes, as ibsim names them (SIM_HOST: the quoted name of each Ca/Hca line of the file), in
// the file's order: the SM takes the first, the hosts the next ones.
const caGuids = new Map(fabric.nodes.filter((n) => n.type !== 2).map((n) => [n.guid, n.ports.find((p, i) => i > 0 && p?.peer)?.guid]));
const cas = [...readFileSync(netFile, 'utf8').matchAll(/^(?:Hca|Ca)\s+\d+\s+"([^"]+)"/gm)].map((m) => ({ desc: m[1], guid: caGuids.get(BigInt(`0x${m[1].slice(2)}`)) }));
if (cas.some((c) => c.guid === undefined)) throw new Error('a CA of the topology file has no linked port');
// The node the SMs attach at (no SIM_HOST: ibsim's first node, the first of the file): the floor's
// responder takes its place there.
const smNode = /^(?:Switch|Hca|Ca)\s+\d+\s+"([^"]+)"/m.exec(readFileSync(netFile, 'utf8'))[1];
const nHosts = Math.min(Number(o.hosts), cas.length - 1);
const hosts = cas.slice(1, 1 + nHosts);
const peers = Number(o.peers);

const client = path.join(scratch, 'storm-client');
const floor = path.join(scratch, 'storm-floor');
for (const [bin, src] of [[client, 'storm-client.c'], [floor, 'storm-floor.c']]) {
  const cc = spawnSync('cc', ['-O2', '-o', bin, path.join(ROOT, 'scripts/bench', src), '-libumad'], { encoding: 'utf8' });
  if (cc.status !== 0) throw new Error(`building ${src} failed (needs cc and libibumad-dev): ${cc.stderr}`);
}

function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return (Number(rest[11]) + Number(rest[12])) / 100;
  } catch {
    return NaN;
  }
}

async function startSm(kind, sock) {
  const dir = mkdtempSync(path.join(scratch, `${kind}-`));
  if (kind === 'floor') {
    // OpenSM brings the subnet up (every port's SMLID names its port) and goes; the floor's
    // responder then takes the SA's requests at that port (storm-floor.c).
    const osm = await startSm('opensm', sock);
    await osm.stop();
    const p = child(floor, [], { env: { IBSIM_SOCKNAME: sock, SIM_HOST: smNode, SIM_SET_ISSM: '1' }, preload: true });
    await until('storm-floor READY', () => p.out().includes('READY'), 30_000);
    return p;
  }
  if (kind === 'opensm') {
    const log = path.join(dir, 'opensm.log');
    const p = child('opensm', ['-D', '0x05', '-f', log], { env: { IBSIM_SOCKNAME: sock, OSM_CACHE_DIR: dir, OSM_TMP_DIR: dir }, cwd: dir, preload: true });
    await until('OpenSM SUBNET UP', () => existsSync(log) && readFileSync(log, 'utf8').includes('SUBNET UP'), 120_000);
    return p;
  }
  const nodeFlags = o['ibsm-node-flags'].split(' ').filter(Boolean);
  const argv = nodeFlags.length ? [process.execPath, [...nodeFlags, BIN, 'run', '--umad']] : [BIN, ['run', '--umad']];
  const p = child(argv[0], argv[1], { env: { IBSIM_SOCKNAME: sock }, cwd: dir, preload: true });
  await until('ibsm SUBNET UP', () => p.out().includes('SUBNET UP'), 120_000);
  return p;
}

/** One storm: every host process started, all at one instant; their results summed. */
async function storm(kind, ib, sm, procs) {
  const startAt = Date.now() + 3000 + nHosts * 20; // every host attached before the clock starts
  for (let i = 0; i < nHosts; i++) {
    const list = Array.from({ length: peers }, (_, k) => hosts[(i + 1 + k * 7) % nHosts].guid.toString(16)).join(',');
    procs.push(child(client, [String(startAt), list], { env: { IBSIM_SOCKNAME: ib.sockname, SIM_HOST: hosts[i].desc }, preload: true }));
    await new Promise((r) => setTimeout(r, 15)); // ibsim takes its clients' connections one at a time
  }
  while (Date.now() < startAt - 50) await new Promise((r) => setTimeout(r, 20));
  const cpu0 = cpuSeconds(sm.pid);
  // A host ends within 8 resends plus 8 BUSY back-offs of its last request (< 20 s); longer means
  // ibsim wedged (docs/ibsim-notes.md): say so rather than wait for ever.
  let timer;
  const wedged = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${kind}: the hosts did not finish within 120 s (ibsim wedged?)`)), 120_000); });
  const codes = await Promise.race([Promise.all(procs.map((p) => p.done)), wedged]).finally(() => clearTimeout(timer));
  const cpu = cpuSeconds(sm.pid) - cpu0;
  const sum = (k) => rs.reduce((a, r) => a + r[k], 0);
  const rs = procs.map((p, i) => {
    const line = p.out().split('\n').find((l) => l.startsWith('RESULT '));
    if (!line) throw new Error(`${kind}: host ${hosts[i].desc} failed (exit ${codes[i]}):\n${p.out()}`);
    return JSON.parse(line.slice(7));
  });
  const firstError = rs.find((r) => r.firstError)?.firstError;
  if (firstError) process.stderr.write(`${kind}: ${sum('errors')} answers were errors, the first: ${firstError}\n`);
  return { lastMs: Math.max(...rs.map((r) => r.lastMs)), ok: sum('ok'), lost: sum('lost'), busy: sum('busy'), timeouts: sum('timeouts'), errors: sum('errors'), cpu, rss: rssMb(sm.pid) };
}

async function once(kind) {
  const ib = await startIbsim(netFile, { dir: scratch, limits: ibsimLimits(fabric), prefix: 'ibsmstorm' });
  let sm;
  const procs = [];
  try {
    sm = await startSm(kind, ib.sockname);
    await new Promise((r) => setTimeout(r, 2000)); // the SM's first sweep's tail (ibsm: its idle-time work)
    const rounds = [];
    for (let k = 0; k < Number(o.rounds); k++) {
      rounds.push(await storm(kind, ib, sm, procs));
      for (const p of procs.splice(0)) if (p.alive()) await p.stop();
    }
    return rounds;
  } finally {
    for (const p of procs) if (p.alive()) await p.stop();
    await sm?.stop();
    await ib.stop();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const kinds = o.sm.split(',');
const results = Object.fromEntries(kinds.map((k) => [k, []]));
// Alternate the SMs run by run, so that the machine's load drifts over both alike.
for (let r = 0; r < Number(o.runs); r++) for (const k of kinds) results[k].push(await once(k));
const requests = nHosts * (3 + peers);
process.stdout.write(`re-registration storm through ibsim: ${o.topo}, ${nHosts} host processes, ${requests} requests (join + ServiceRecord + InformInfo + ${peers} PathRecords each), medians of ${o.runs}\n`);
const rounds = Number(o.rounds);
for (let round = 0; round < rounds; round++) {
  const tag = rounds > 1 ? ` round ${round + 1}${round === 0 ? ' (cold SA)' : ''}` : '';
  for (const k of kinds) {
    const rs = results[k].map((runRounds) => runRounds[round]);
    process.stdout.write(
      `  ${k.padEnd(7)}${tag} every host answered in ${median(rs.map((r) => r.lastMs))} ms (runs: ${rs.map((r) => r.lastMs).join(', ')}); ` +
        `answered ${median(rs.map((r) => r.ok))}/${requests}, lost ${median(rs.map((r) => r.lost))}, errors ${median(rs.map((r) => r.errors))}, BUSY ${median(rs.map((r) => r.busy))}, resent after 1 s ${median(rs.map((r) => r.timeouts))}; ` +
        `SM CPU ${median(rs.map((r) => r.cpu)).toFixed(2)} s, RSS ${median(rs.map((r) => r.rss)).toFixed(0)} MB\n`,
    );
  }
  const ms = (k) => median(results[k].map((runRounds) => runRounds[round].lastMs));
  if (results.opensm && results.ibsm) process.stdout.write(`  ibsm / OpenSM${tag}, time until every host is answered: ${(ms('ibsm') / ms('opensm')).toFixed(2)}x (goal <= 0.5x, none lost)\n`);
  if (results.opensm && results.floor) process.stdout.write(`  floor / OpenSM${tag}: ${(ms('floor') / ms('opensm')).toFixed(2)}x (no SA through ibsim answers faster than the floor)\n`);
  if (results.opensm && results.ibsm && results.floor) process.stdout.write(`  above the floor, ibsm / OpenSM${tag}: ${((ms('ibsm') - ms('floor')) / Math.max(0.5, ms('opensm') - ms('floor'))).toFixed(2)}x\n`);
}

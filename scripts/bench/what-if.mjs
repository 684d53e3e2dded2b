#!/usr/bin/env node
// What-if at scale (routing/what-if.ts, `ibsm route FILE --what-if links`): every switch-to-switch
// link of ft3-large (1,536 hosts) and 1,000 sampled links of the 46,080-host fat tree, each failed
// in turn and re-routed as the running SM would (the incremental re-route where its local sweep
// does, else the engine chain in full), then judged. In-process, from dist/. Prints per fabric:
// the set-up (load, LIDs, the baseline routing; the baseline's verification and intact routing
// are inside the what-if's time), the cases' wall and CPU time, per-case median/p90/max, how many
// were incremental, and the summary's figures; the goals of issue #33 beside them (ft3-large
// < 60 s, 1,000 links of 46,080 hosts < 10 min). OpenSM has no what-if to compare with: it
// re-routes the whole fabric on every change (its LFT blocks for one failure are measured by
// scripts/bench/faults-reroute.mjs). Asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/what-if.mjs [options]
//     --fabrics ft3-large,46080      which fabrics (default: both; ft-small to try the bench)
//     --verify full|fast             per-case judgement (default: full on ft3-large, fast on 46080)
//     --sample N                     links sampled (default: all on ft3-large, 1000 on 46080)
//     --seed N                       sample seed (default 1)
//     --runs N                       runs, median reported (default 1)
//     --dump FILE                    each case's result as a JSON line, but its time, with a hash of
//                                    its tables and notes (keepTables), then the summary: two builds'
//                                    files are byte-identical when their results are (the last run's;
//                                    its times then include the hashing)
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = (m) => pathToFileURL(path.join(here, '../../dist', m)).href;
const { loadFabricSpec } = await import(dist('model/load.js'));
const { assignLids } = await import(dist('sm/lids.js'));
const { routeWithFallback, DEFAULT_FALLBACK } = await import(dist('routing/registry.js'));
const { linkCases, whatIfSteps } = await import(dist('routing/what-if.js'));
const { Rng } = await import(dist('util/rng.js'));

const FABRICS = {
  'ft-small': { spec: 'gen:fattree3:radix=10', verify: 'full', sample: 0, goalS: 60, goalCases: 0 },
  'ft3-large': { spec: 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12', verify: 'full', sample: 0, goalS: 60, goalCases: 0 },
  46080: { spec: 'gen:fattree3:pods=48,leaves=24,spines=24,cores=576,hosts=40', verify: 'fast', sample: 1000, goalS: 600, goalCases: 1000 },
};
const keys = opt('--fabrics', 'ft3-large,46080').split(',').filter(Boolean);
const runs = Number(opt('--runs', '1'));
const seed = Number(opt('--seed', '1'));
const dump = opt('--dump', '');
const asJson = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? x.toString() : x));
/** A case's result as --dump writes it: no time, its tables and notes as a hash. */
function dumpLine(r) {
  const { ms: _ms, fabric: _f, routing, ...rest } = r;
  const h = createHash('sha256');
  for (const [n, t] of [...routing.lfts].sort((a, b) => a[0] - b[0])) h.update(String(n)).update(t);
  h.update(JSON.stringify(routing.notes ?? []));
  return asJson({ ...rest, tables: h.digest('hex') });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * (xs.length - 1)))];

for (const key of keys) {
  const fab = FABRICS[key];
  if (!fab) throw new Error(`unknown fabric ${key}; known: ${Object.keys(FABRICS).join(', ')}`);
  const verify = opt('--verify', fab.verify);
  const sample = Number(opt('--sample', String(fab.sample)));
  const walls = [];
  let last;
  for (let run = 0; run < runs; run++) {
    const t0 = performance.now();
    const f = loadFabricSpec(fab.spec);
    assignLids(f, { lmc: 0 });
    const routed = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 });
    const setupMs = performance.now() - t0;
    let cases = linkCases(f);
    const all = cases.length;
    if (sample > 0 && sample < all) {
      const pick = new Rng(seed);
      const chosen = new Set();
      while (chosen.size < sample) chosen.add(pick.int(all));
      cases = [...chosen].sort((a, b) => a - b).map((i) => cases[i]);
    }
    const cpu0 = process.cpuUsage();
    const t1 = performance.now();
    const steps = whatIfSteps(f, routed.result, cases, { engines: DEFAULT_FALLBACK, routing: { lmc: 0 }, verify, maxLocalChanges: 16, keepTables: dump !== '' }, () => performance.now());
    const per = [];
    const lines = [];
    let firstAt;
    let cpuFirst;
    let summary;
    for (;;) {
      const s = steps.next();
      if (s.done) {
        summary = s.value;
        if (dump) {
          const { ms: _ms, ...rest } = summary;
          lines.push(asJson(rest));
          writeFileSync(dump, lines.join('\n') + '\n');
        }
        break;
      }
      if (dump) lines.push(dumpLine(s.value));
      if (firstAt === undefined) {
        firstAt = performance.now() - t1;
        cpuFirst = process.cpuUsage();
      }
      per.push(s.value.ms);
      if (per.length % 100 === 0) process.stderr.write(`  ${key}: ${per.length}/${cases.length} cases, ${((performance.now() - t1) / 1000).toFixed(1)} s\n`);
    }
    const wall = performance.now() - t1;
    const cpu = process.cpuUsage(cpu0);
    // CPU of the cases after the first (the first one also pays the baseline).
    const cpuRest = process.cpuUsage(cpuFirst);
    const restCpuMs = per.length > 1 ? (cpuRest.user + cpuRest.system) / 1000 / (per.length - 1) : NaN;
    walls.push(wall);
    last = { f, all, cases: cases.length, setupMs, wall, cpuS: (cpu.user + cpu.system) / 1e6, firstAt, per, restCpuMs, summary, engine: routed.engine, verify };
  }
  const l = last;
  const s = l.summary;
  const wall = median(walls);
  console.log(`\n${key}: ${fab.spec}`);
  console.log(`  fabric            ${l.f.nodes.filter((n) => n.type === 2).length} switches, ${s.baseline.endPorts} end ports, ${l.all} switch-to-switch links; ${l.engine}; set-up (load, LIDs, route) ${(l.setupMs / 1000).toFixed(1)} s`);
  console.log(`  cases             ${l.cases}${l.cases < l.all ? ` sampled (seed ${seed})` : ' (every link)'}, verify ${l.verify}`);
  // The goal is for every link (goalCases 0) or that many cases: a smaller run is extrapolated
  // (the baseline once, then the mean case), and says so.
  const goalCases = fab.goalCases || l.all;
  const baseS = (l.firstAt - l.per[0]) / 1000;
  const meanS = l.per.reduce((a, b) => a + b, 0) / l.per.length / 1000;
  const forGoal = l.cases === goalCases ? wall / 1000 : baseS + goalCases * meanS;
  const goalText = `goal ${goalCases} cases < ${fab.goalS} s: ${forGoal < fab.goalS ? 'met' : 'NOT met'}${l.cases === goalCases ? '' : ` (extrapolated from ${l.cases} cases: ${forGoal.toFixed(0)} s)`}`;
  console.log(`  what-if time      ${(wall / 1000).toFixed(1)} s wall (median of ${runs}), ${l.cpuS.toFixed(1)} s CPU; baseline (verify + intact) ${baseS.toFixed(1)} s   ${goalText}`);
  console.log(`  per case (ms)     mean ${(meanS * 1000).toFixed(0)}  median ${median(l.per).toFixed(0)}  p90 ${pct(l.per, 0.9).toFixed(0)}  max ${Math.max(...l.per).toFixed(0)}; CPU mean ${l.restCpuMs.toFixed(0)} (the cases after the first)`);
  console.log(`  re-routes         ${s.incremental} incremental, ${s.full} full; ${s.failed} fail verification, ${s.losing} lose pairs`);
  console.log(`  busiest link      baseline ${s.baseline.busiestLink}; worst case ${s.worst.busiestLink[0]?.value ?? s.baseline.busiestLink}`);
  console.log(`  LFT blocks        worst case ${s.worst.lftBlocks[0]?.value ?? 0}`);
  if (s.worst.meanHops.length) console.log(`  mean hops         baseline ${s.baseline.hops.mean.toFixed(3)}; worst case ${s.worst.meanHops[0].value.toFixed(3)}`);
}

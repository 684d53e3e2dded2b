#!/usr/bin/env node
// Route one spec with one engine, then run the verifier N times and print each time (for
// `node --cpu-prof --cpu-prof-dir DIR scripts/bench/verify-profile.mjs ENGINE [SPEC] [N]`: the
// profile then shows where the verifier spends its time). Prints figures; asserts nothing.
//
// With `--against DIR` (another build's dist/, e.g. a copy of main's), the two verifiers run
// interleaved on the same routes in this one process (A = DIR, B = this tree's dist), each time
// printed with the load average, the medians at the end, and whether the two full report JSONs
// are identical (exit code 1 when they are not).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadavg } from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const argv = process.argv.slice(2);
const ai = argv.indexOf('--against');
const against = ai >= 0 ? path.resolve(argv[ai + 1]) : undefined;
if (ai >= 0) argv.splice(ai, 2);
const [engine = 'updn', specArg = '50k', nArg = '1'] = argv;
const from = (dir) => (p) => pathToFileURL(path.join(dir, p)).href;
const dist = from(path.join(root, 'dist'));
const spec = specArg === '50k' ? 'gen:fattree3:pods=48,leaves=24,spines=24,cores=576,hosts=40' : specArg === '10k' ? 'gen:fattree3:radix=36' : specArg;
const { loadFabricSpec } = await import(dist('model/load.js'));
const { assignLids } = await import(dist('sm/lids.js'));
const { getEngine, verifyRoutes } = await import(dist('routing/index.js'));
const fabric = loadFabricSpec(spec);
assignLids(fabric, { lmc: 0 });
let t = performance.now();
const res = getEngine(engine).route(fabric, { lmc: 0 });
console.log(`${engine} route ${(performance.now() - t).toFixed(0)} ms`);
const verifiers = [['B', verifyRoutes]];
if (against) verifiers.unshift(['A', (await import(from(against)('routing/verify.js'))).verifyRoutes]);
const times = new Map(verifiers.map(([k]) => [k, { ms: [], cpu: [] }]));
const json = new Map();
for (let i = 0; i < Number(nArg); i++) {
  for (const [k, verify] of verifiers) {
    t = performance.now();
    const c0 = process.cpuUsage();
    const v = verify(fabric, res);
    const c = process.cpuUsage(c0);
    const ms = performance.now() - t;
    const cpu = (c.user + c.system) / 1000;
    times.get(k).ms.push(ms);
    times.get(k).cpu.push(cpu);
    if (against && i === 0) json.set(k, JSON.stringify(v));
    console.log(`${against ? `${k} ` : ''}verify ${ms.toFixed(0)} ms (CPU ${cpu.toFixed(0)} ms, load ${loadavg()[0].toFixed(2)}) ok=${v.ok} deadlockFree=${v.deadlockFree} vls=${v.vlsUsed} maxLoad=${v.linkLoad.max} hops=${v.hops.max}/${v.hops.mean.toFixed(4)} cdg=${v.cdg.map((c) => `${c.vl}:${c.dependencies}`).join(',')}`);
  }
}
if (against) {
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor((a.length - 1) / 2)];
  for (const [k, { ms, cpu }] of times) console.log(`${k} (${k === 'A' ? against : 'this tree'}): median verify ${med(ms).toFixed(0)} ms, CPU ${med(cpu).toFixed(0)} ms over ${ms.length}`);
  const same = json.get('A') === json.get('B');
  console.log(`reports ${same ? 'identical' : 'DIFFER'} (${json.get('B').length} characters of JSON)`);
  if (!same) process.exitCode = 1;
}

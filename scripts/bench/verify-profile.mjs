#!/usr/bin/env node
// Route one spec with one engine, then run the verifier N times and print each time (for
// `node --cpu-prof --cpu-prof-dir DIR scripts/bench/verify-profile.mjs ENGINE [SPEC] [N]`: the
// profile then shows where the verifier spends its time). Prints figures; asserts nothing.
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => pathToFileURL(path.join(root, 'dist', p)).href;
const [engine = 'updn', specArg = '50k', nArg = '1'] = process.argv.slice(2);
const spec = specArg === '50k' ? 'gen:fattree3:pods=48,leaves=24,spines=24,cores=576,hosts=40' : specArg === '10k' ? 'gen:fattree3:radix=36' : specArg;
const { loadFabricSpec } = await import(dist('model/load.js'));
const { assignLids } = await import(dist('sm/lids.js'));
const { getEngine, verifyRoutes } = await import(dist('routing/index.js'));
const fabric = loadFabricSpec(spec);
assignLids(fabric, { lmc: 0 });
let t = performance.now();
const res = getEngine(engine).route(fabric, { lmc: 0 });
console.log(`${engine} route ${(performance.now() - t).toFixed(0)} ms`);
for (let i = 0; i < Number(nArg); i++) {
  t = performance.now();
  const c0 = process.cpuUsage();
  const v = verifyRoutes(fabric, res);
  const c = process.cpuUsage(c0);
  console.log(`verify ${(performance.now() - t).toFixed(0)} ms (CPU ${((c.user + c.system) / 1000).toFixed(0)} ms) ok=${v.ok} deadlockFree=${v.deadlockFree} vls=${v.vlsUsed} maxLoad=${v.linkLoad.max} hops=${v.hops.max}/${v.hops.mean.toFixed(4)} cdg=${v.cdg.map((c) => `${c.vl}:${c.dependencies}`).join(',')}`);
}

#!/usr/bin/env node
/** The expected topology's cost (issue #33): the comparison alone (model/topology-compare.ts, pure)
 * on fat trees of growing size, clean and with two cables swapped, and a whole first heavy sweep
 * of `ibsm run --sim SPEC --once` with and without `--topology` (the pinned file of the same
 * fabric): SUBNET UP's ms, medians of --runs. OpenSM has no such comparison (nothing to put beside).
 *   node scripts/bench/topology-check.mjs [--runs 5] [--specs gen:fattree3:radix=24,...] */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { loadFabricSpec } from '../../dist/model/load.js';
import { cloneFabric } from '../../dist/model/fabric.js';
import { formatIbnetdiscover } from '../../dist/model/ibnetdiscover.js';
import { compareTopology } from '../../dist/model/topology-compare.js';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : def;
};
const runs = Number(arg('runs', '5'));
const specs = arg('specs', 'gen:fattree3:radix=16,gen:fattree3:radix=24,gen:fattree3:radix=36').split(',');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cli = path.resolve('dist/cli/main.js');
const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-topo-'));

console.log('| fabric | nodes | compare, clean | compare, 2 cables swapped | first heavy sweep | with --topology |');
console.log('|---|---|---|---|---|---|');
for (const spec of specs) {
  const f = loadFabricSpec(spec);
  const same = cloneFabric(f);
  const swapped = cloneFabric(f);
  // two host cables of the first leaf swapped
  const leaf = swapped.nodes.findIndex((n) => n.type === 2 && n.ports.filter((p) => p?.peer && swapped.nodes[p.peer.node].type !== 2).length >= 2);
  const [p1, p2] = swapped.nodes[leaf].ports.flatMap((p, i) => (p?.peer && swapped.nodes[p.peer.node].type !== 2 ? [i] : [])).slice(0, 2);
  const h1 = swapped.nodes[leaf].ports[p1].peer;
  const h2 = swapped.nodes[leaf].ports[p2].peer;
  swapped.nodes[leaf].ports[p1].peer = h2;
  swapped.nodes[leaf].ports[p2].peer = h1;
  swapped.nodes[h1.node].ports[h1.port].peer = { node: leaf, port: p2 };
  swapped.nodes[h2.node].ports[h2.port].peer = { node: leaf, port: p1 };
  const time = (g, want) => {
    const t = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      const m = compareTopology(f, g);
      t.push(performance.now() - t0);
      if (m.length !== want) throw new Error(`${spec}: ${m.length} mismatches, expected ${want}`);
    }
    return median(t);
  };
  const clean = time(same, 0);
  const sw = time(swapped, 2);
  const file = path.join(dir, 'pinned.topo');
  writeFileSync(file, formatIbnetdiscover(f, { timestamp: 'x' }));
  const sweep = (extra) => {
    const t = [];
    for (let i = 0; i < runs; i++) {
      const r = spawnSync(process.execPath, [cli, 'run', '--sim', spec, '--once', '--guid2lid', 'none', ...extra], { encoding: 'utf8' });
      const m = /IBSM-1001 SUBNET UP .* ms=(\d+)/.exec(r.stderr + r.stdout);
      if (!m) throw new Error(`${spec}: no SUBNET UP\n${r.stderr}`);
      t.push(Number(m[1]));
    }
    return median(t);
  };
  const plain = sweep([]);
  const topo = sweep(['--topology', file]);
  console.log(`| ${spec} | ${f.nodes.length} | ${clean.toFixed(1)} ms | ${sw.toFixed(1)} ms | ${plain} ms | ${topo} ms |`);
}

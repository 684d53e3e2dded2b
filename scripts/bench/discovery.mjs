#!/usr/bin/env node
// Discovery benchmark: a directed-route sweep of generated fabrics from ~100 to 20,000+ end ports
// on the in-process simulated fabric. Prints SMPs sent (and the minimum a DR sweep needs), wall
// time, time per end port (flat = linear growth) and peak memory. Each size runs in its own child
// process so the peak RSS is that fabric's alone. Asserts nothing.
//
//   node scripts/bench/discovery.mjs [spec ...]     (needs `npm run build` first)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '../../dist');

const DEFAULT_SPECS = [
  'gen:fattree2:leaves=10,spines=5,hosts=10',
  'gen:fattree3:radix=16',
  'gen:fattree3:radix=24',
  'gen:fattree3:radix=32',
  'gen:fattree3:radix=36',
  'gen:fattree3:radix=44',
];

async function one(spec) {
  const { loadFabricSpec } = await import(path.join(dist, 'model/load.js'));
  const { SimFabric } = await import(path.join(dist, 'sim/fabric.js'));
  const { MadRpc } = await import(path.join(dist, 'rpc/madrpc.js'));
  const { RealClock } = await import(path.join(dist, 'util/clock.js'));
  const { AsapClock } = await import(path.join(dist, 'util/asap-clock.js'));
  const { discover } = await import(path.join(dist, 'sm/discovery.js'));
  const { smpClientOf } = await import(path.join(dist, 'sm/smp-client.js'));
  const fabric = loadFabricSpec(spec);
  const switches = fabric.nodes.filter((n) => n.type === 2);
  const endPorts = fabric.nodes.filter((n) => n.type !== 2).reduce((a, n) => a + n.ports.filter((p) => p?.peer).length, 0);
  // The minimum a DR sweep needs (see src/sm/discovery.ts).
  let minimum = 1;
  for (const n of fabric.nodes) {
    if (n.type === 2) minimum += 2 + n.numPorts + 1;
    else minimum += 1 + 2 * n.ports.filter((p) => p?.peer).length;
  }
  let swLinks = 0;
  for (const n of switches) for (let i = 1; i < n.ports.length; i++) if (n.ports[i]?.peer && fabric.nodes[n.ports[i].peer.node].type === 2) swLinks++;
  minimum += swLinks / 2;

  const sim = new SimFabric(fabric, { clock: new AsapClock() });
  const ep = sim.attach(0);
  ep.register(0x81, 1);
  const rpc = new MadRpc(ep, new RealClock(), { window: 256, perDestinationWindow: 16, timeoutMs: 1000 });
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const res = await discover(smpClientOf(rpc));
  const ms = performance.now() - t0;
  rpc.close();
  sim.close();
  const rssMB = process.resourceUsage().maxRSS / 1024;
  return { spec, endPorts, switches: switches.length, smps: res.smps, minimum, retries: rpc.stats.retries, ms, rssMB, heapMB: (process.memoryUsage().heapUsed - heap0) / 2 ** 20 };
}

if (process.argv[2] === '--one') {
  const r = await one(process.argv[3]);
  process.stdout.write(JSON.stringify(r) + '\n');
} else {
  const specs = process.argv.slice(2).length ? process.argv.slice(2) : DEFAULT_SPECS;
  const rows = [];
  console.log('ibsm discovery benchmark (in-process simulated fabric, DR sweep from the first switch)');
  console.log(['spec'.padEnd(42), 'end ports', 'switches', '    SMPs', ' minimum', 'retries', '   wall ms', 'µs/end port', 'SMPs/s', 'peak RSS MB'].join('  '));
  for (const spec of specs) {
    const r = spawnSync(process.execPath, ['--max-old-space-size=8192', fileURLToPath(import.meta.url), '--one', spec], { encoding: 'utf8' });
    if (r.status !== 0) {
      console.log(`${spec}: failed\n${r.stderr}`);
      continue;
    }
    const x = JSON.parse(r.stdout.trim().split('\n').pop());
    rows.push(x);
    console.log(
      [
        spec.padEnd(42),
        String(x.endPorts).padStart(9),
        String(x.switches).padStart(8),
        String(x.smps).padStart(8),
        String(x.minimum).padStart(8),
        String(x.retries).padStart(7),
        x.ms.toFixed(0).padStart(10),
        ((x.ms * 1000) / x.endPorts).toFixed(1).padStart(11),
        String(Math.round((x.smps / x.ms) * 1000)).padStart(6),
        x.rssMB.toFixed(0).padStart(11),
      ].join('  '),
    );
  }
}

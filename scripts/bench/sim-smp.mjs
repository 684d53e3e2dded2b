// The in-process simulator's own cost per SMP (#16): the 11,664-host fat tree (gen:fattree3:radix=36)
// built in a SimFabric, then directed-route SMPs sent from host 0 with 256 in flight and answered
// straight back (no SM, no RPC): a Get NodeInfo of every switch (the discovery's kind) and LFT
// block Sets (the forwarding-table phase's kind). Prints CPU µs per SMP, median of --runs. Asserts
// nothing (a benchmark); the simulator's behaviour is in test/sim-*.test.ts.
//
//   node scripts/bench/sim-smp.mjs [--runs 3] [--sets 200000] [--dist dist]
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

const arg = opt;
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = join(root, arg('--dist', 'dist'));
const imp = (p) => import(pathToFileURL(join(dist, p)).href);
const { generateFabric } = await imp('model/generators.js');
const { SimFabric } = await imp('sim/fabric.js');
const { AsapClock } = await imp('util/asap-clock.js');
const { smpDr } = await imp('wire/builders.js');
const { Method, SmpAttr, MgmtClass } = await imp('wire/mad.js');

const runs = Number(arg('--runs', '3'));
const sets = Number(arg('--sets', '200000'));
const fabric = generateFabric('gen:fattree3:radix=36');
const sim = new SimFabric(fabric, { clock: new AsapClock(), seed: 1 });
// DR paths to every switch: breadth-first from node 0 (a host) over the model's links
const start = fabric.nodes.findIndex((n) => n.type !== 2);
const paths = new Map([[start, []]]);
const q = [start];
for (let h = 0; h < q.length; h++) {
  const u = q[h];
  const n = fabric.nodes[u];
  if (u !== start && n.type !== 2) continue;
  n.ports.forEach((p, pn) => {
    if (!p?.peer || paths.has(p.peer.node)) return;
    paths.set(p.peer.node, [...paths.get(u), pn]);
    q.push(p.peer.node);
  });
}
const switches = [...paths.keys()].filter((i) => fabric.nodes[i].type === 2);
const ep = sim.attach(start);
ep.register(MgmtClass.SubnDirected, 1, { methods: [] });

/** Send `total` SMPs made by `make(i)` with `window` in flight; resolves with the CPU ms taken
 * (process CPU, not wall time: the machine is shared). */
function pumpSmps(total, make, window = 256) {
  return new Promise((resolve) => {
    let sent = 0;
    let got = 0;
    const c0 = process.cpuUsage();
    ep.onReceive(() => {
      got++;
      if (sent < total) ep.send(make(sent++), { lid: 0xffff, qpn: 0 });
      if (got === total) {
        const c = process.cpuUsage(c0);
        resolve((c.user + c.system) / 1000);
      }
    });
    while (sent < Math.min(window, total)) ep.send(make(sent++), { lid: 0xffff, qpn: 0 });
  });
}
const lftData = new Uint8Array(64).fill(1);
const getNi = (i) => smpDr(paths.get(switches[i % switches.length]), { method: Method.Get, attrId: SmpAttr.NodeInfo, tid: BigInt(i + 1) });
const setLft = (i) => smpDr(paths.get(switches[i % switches.length]), { method: Method.Set, attrId: SmpAttr.LinearForwardingTable, attrMod: Math.floor(i / switches.length) % 200, data: lftData, tid: BigInt(i + 1) });
const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
const res = { get: [], set: [] };
for (let r = 0; r < runs; r++) {
  res.get.push((await pumpSmps(sets, getNi)) * 1000 / sets);
  res.set.push((await pumpSmps(sets, setLft)) * 1000 / sets);
}
console.log(`sim SMP cost, ${fabric.nodes.length} nodes, ${sets} SMPs a kind, median of ${runs} (${dist})`);
console.log(`Get NodeInfo (DR): ${median(res.get).toFixed(2)} CPU µs/SMP  (each: ${res.get.map((x) => x.toFixed(2)).join(' ')})`);
console.log(`Set LFT block (DR): ${median(res.set).toFixed(2)} CPU µs/SMP  (each: ${res.set.map((x) => x.toFixed(2)).join(' ')})`);
sim.close();

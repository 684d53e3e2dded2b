#!/usr/bin/env node
// Inter-subnet paths on the in-process fabric (issue #15): three subnets joined by routers, one
// ibsm SM+SA per subnet, clients resolving host pairs across subnets with the a-g sequence
// (local SA P1, remote SA through the router P2, validation at the local SA).
//
//   node scripts/bench/inter-subnet.mjs [--topo gen:subnets:count=3,shape=line,routers=2,leaves=12,spines=4,hosts=28]
//                                       [--pairs 200] [--clients 1,16,64] [--reps 3] [--seed 7]
//
// Prints, per repetition and as medians: the bring-up (every SUBNET UP and the router tables), one
// pair resolved alone by a fresh client (median of 51, after 50 to warm the code: time, SA
// requests, MADs sent by the client), and pairs resolved per second
// by N concurrent clients (each at its own host, each resolving its share of --pairs seeded
// random cross-subnet pairs). Beside it the stop-gap figure (what OpenSM's prefix-routes.conf
// offers: one PathRecord to the local SA, P1 alone, no remote SA, no validation), measured on the
// same fabric: OpenSM itself cannot run here (ibsim has no routers, OpenSM's SA knows no remote
// SA). Asserts nothing. Run `npm run build` first.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const imp = (p) => import(path.join(ROOT, 'dist', p));
const { openSubnets } = await imp('api/subnets.js');
const { resolveInterSubnetPath } = await imp('sa/inter-subnet-client.js');
const { SaClient } = await imp('sa/client.js');
const { PathRecord, SaAttr } = await imp('wire/sa.js');
const { Logger, MemorySink } = await imp('util/log.js');
const { Rng } = await imp('util/rng.js');

const { values: o } = parseArgs({
  options: {
    topo: { type: 'string', default: 'gen:subnets:count=3,shape=line,routers=2,leaves=12,spines=4,hosts=28' },
    pairs: { type: 'string', default: '200' },
    clients: { type: 'string', default: '1,16,64' },
    reps: { type: 'string', default: '3' },
    seed: { type: 'string', default: '7' },
  },
});
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

async function rep(r) {
  const t0 = process.hrtime.bigint();
  const net = await openSubnets({ sim: o.topo, sweepIntervalS: 0, log: new Logger(new MemorySink(), 'warn'), seed: 1 });
  await net.start();
  const upMs = ms(t0);
  const hosts = [];
  for (const s of net.subnets)
    for (const n of s.part.nodes) {
      const node = net.sim.nodes[n];
      if (node.type === 1 && n !== s.part.smNode) hosts.push({ node: n, subnet: s, gid: (s.part.prefix << 64n) | node.ports[1].guid });
    }
  const rng = new Rng(Number(o.seed) + r);
  const pick = () => {
    for (;;) {
      const a = hosts[rng.int(hosts.length)];
      const b = hosts[rng.int(hosts.length)];
      if (a.subnet !== b.subnet) return [a, b];
    }
  };
  const out = { upMs, hosts: hosts.length, single: {}, concurrent: {} };
  // one pair alone (median over 51 pairs, after 50 not measured: the code warm)
  {
    const times = [], reqs = [], mads = [], stop = [];
    for (let i = -50; i < 51; i++) {
      const [a, b] = pick();
      const c = net.client(a.node);
      const saLid = c.subnet.sm.snapshot.smLid;
      let t = process.hrtime.bigint();
      const res = await resolveInterSubnetPath(c.rpc, { saLid, sgid: a.gid, dgid: b.gid });
      if (i >= 0) {
        times.push(ms(t));
        reqs.push(res.saRequests);
        mads.push(res.madsSent);
      }
      // the stop-gap: P1 alone from the local SA
      const sa = new SaClient(c.rpc, { saLid });
      t = process.hrtime.bigint();
      await sa.get(SaAttr.PathRecord, PathRecord, { sgid: a.gid, dgid: b.gid }, PathRecord.mask('sgid') | PathRecord.mask('dgid'));
      if (i >= 0) stop.push(ms(t));
      await c.close();
    }
    out.single = { ms: median(times), saRequests: median(reqs), mads: median(mads), stopGapMs: median(stop) };
  }
  for (const nc of o.clients.split(',').map(Number)) {
    const total = Number(o.pairs);
    const per = Math.max(1, Math.ceil(total / nc));
    const starts = [];
    const used = new Set();
    while (starts.length < nc && used.size < hosts.length) {
      const h = hosts[rng.int(hosts.length)];
      if (used.has(h.node)) continue;
      used.add(h.node);
      starts.push(h);
    }
    const clients = starts.map((h) => ({ h, c: net.client(h.node) }));
    let done = 0, failed = 0, reqs = 0, mads = 0;
    const t = process.hrtime.bigint();
    await Promise.all(
      clients.map(async ({ h, c }) => {
        const saLid = c.subnet.sm.snapshot.smLid;
        for (let i = 0; i < per; i++) {
          let b;
          do b = hosts[rng.int(hosts.length)];
          while (b.subnet === h.subnet);
          try {
            const res = await resolveInterSubnetPath(c.rpc, { saLid, sgid: h.gid, dgid: b.gid });
            done++;
            reqs += res.saRequests;
            mads += res.madsSent;
          } catch {
            failed++;
          }
        }
      }),
    );
    const el = ms(t);
    for (const { c } of clients) await c.close();
    out.concurrent[nc] = { pairs: done, failed, pairsPerS: (done / el) * 1000, saRequestsPerPair: reqs / Math.max(1, done), madsPerPair: mads / Math.max(1, done) };
  }
  await net.stop();
  return out;
}

const reps = [];
for (let r = 0; r < Number(o.reps); r++) {
  const x = await rep(r);
  reps.push(x);
  console.log(`rep ${r + 1}: ${x.hosts} hosts, up+router tables ${x.upMs.toFixed(0)} ms; one pair ${x.single.ms.toFixed(2)} ms (${x.single.saRequests} SA requests, ${x.single.mads} MADs) vs stop-gap P1 alone ${x.single.stopGapMs.toFixed(2)} ms (1 SA request); ` +
    Object.entries(x.concurrent).map(([n, c]) => `${n} clients ${c.pairsPerS.toFixed(0)} pairs/s${c.failed ? ` (${c.failed} failed)` : ''}`).join(', '));
}
console.log(`\nmedians of ${reps.length} (${o.topo}, ${reps[0].hosts} hosts)`);
console.log(`  bring-up (3x SUBNET UP + router tables): ${median(reps.map((x) => x.upMs)).toFixed(0)} ms`);
console.log(`  one pair, a-g:            ${median(reps.map((x) => x.single.ms)).toFixed(2)} ms, ${median(reps.map((x) => x.single.saRequests))} SA requests, ${median(reps.map((x) => x.single.mads))} MADs sent by the client`);
console.log(`  one pair, stop-gap (P1):  ${median(reps.map((x) => x.single.stopGapMs)).toFixed(2)} ms, 1 SA request (OpenSM prefix-routes: no P2, no validation)`);
for (const n of Object.keys(reps[0].concurrent)) {
  console.log(`  ${n.padStart(3)} concurrent clients: ${median(reps.map((x) => x.concurrent[n].pairsPerS)).toFixed(0)} pairs/s, ${median(reps.map((x) => x.concurrent[n].saRequestsPerPair)).toFixed(2)} SA requests/pair, failed ${median(reps.map((x) => x.concurrent[n].failed))}`);
}
process.exit(0);

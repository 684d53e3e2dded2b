#!/usr/bin/env node
// The re-registration storm (issue #32), in-process: after a failover or a restart every host is
// told to re-register (ClientReregister) and at once, as the kernel and the usual daemons do:
//   - joins the IPoIB broadcast group of the default partition (MCMemberRecord Set, full member);
//   - registers a ServiceRecord (its own service ID) and an InformInfo (all traps);
//   - asks PathRecords to 16 peers: a PathRecord Get by SGID and DGID, reversible, one path, as the
//     kernel's SA client does for librdmacm (ib_sa_path_rec_get: Get, not GetTable).
// Every host's client is attached to its own CA port of the in-process fabric, all of them started
// at the same instant. Measured: the time until every client has all its answers (and the time for
// 50% and 99% of them), answers lost (a request that failed after the client's retries) or refused
// with BUSY, the SM process's CPU during the storm and its peak RSS.
//
//   node scripts/bench/storm.mjs [--topo gen:fattree3:...] [--hosts N] [--peers 16] [--runs 1]
//
// --hosts limits the clients to the first N CAs (default every CA). The SM, the simulated fabric and
// the clients share this process (and its CPU): the CPU and RSS figures are the whole process's.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { openSm, openSaClient, gidOf } = await import(path.join(ROOT, 'dist/index.js'));
const { MadStatus } = await import(path.join(ROOT, 'dist/wire/mad.js'));
const { PathRecord, SaAttr } = await import(path.join(ROOT, 'dist/wire/sa.js'));
const PATH_MASK = PathRecord.mask('sgid', 'dgid', 'reversible', 'numbPath');
const MAD_STATUS_BUSY = MadStatus.Busy;

const { values: o } = parseArgs({
  options: {
    topo: { type: 'string', default: 'gen:fattree3:radix=32' },
    hosts: { type: 'string', default: '0' },
    peers: { type: 'string', default: '16' },
    runs: { type: 'string', default: '1' },
  },
});
const IPOIB_BCAST = 0xff12401bffff000000000000ffffffffn; // ff12:401b:ffff::ffff:ffff (P_Key 0xffff)
const peers = Number(o.peers);

function pct(sorted, p) {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

async function once() {
  const sm = await openSm({ sim: o.topo, sweepIntervalS: 0 });
  await sm.start();
  const snap = sm.snapshot;
  const cas = [];
  snap.fabric.nodes.forEach((n, i) => {
    if (n.type === 1) for (let p = 1; p < n.ports.length; p++) if (n.ports[p]?.lid) cas.push({ node: i, guid: n.ports[p].guid });
  });
  const n = Number(o.hosts) > 0 ? Math.min(Number(o.hosts), cas.length) : cas.length;
  const hosts = cas.slice(0, n);
  const t0open = performance.now();
  const clients = [];
  for (const h of hosts) clients.push(await openSaClient({ sm, attach: String(h.node) }));
  const openMs = performance.now() - t0open;
  const done = [];
  let lost = 0;
  let busy = 0;
  const errors = new Map();
  // A BUSY answer is retried after a random delay that doubles each time (from 20 ms, at most 8
  // tries), as a client should; what fails after that, or with another error, is lost.
  const byKind = { join: [], service: [], inform: [], path: [] };
  const ask = async (kind, f) => {
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await f();
        byKind[kind].push(performance.now() - t0);
        return r;
      } catch (e) {
        if (e?.status !== undefined && (e.status & 0xff) === MAD_STATUS_BUSY && attempt < 7) {
          busy++;
          await new Promise((r) => setTimeout(r, 20 * 2 ** attempt * (0.5 + Math.random())));
          continue;
        }
        const k = `${e?.constructor?.name ?? 'Error'}${e?.status !== undefined ? ` status 0x${e.status.toString(16)}` : ''}`;
        errors.set(k, (errors.get(k) ?? 0) + 1);
        lost++;
        return undefined;
      }
    }
  };
  const rss0 = process.memoryUsage().rss;
  let peakRss = rss0;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (c, i) => {
      const jobs = [
        ask('join', () => c.join(IPOIB_BCAST)),
        ask('service', () => c.registerService({ serviceId: 0x1000000000000000n + BigInt(i), serviceName: `storm-${i}` })),
        ask('inform', () => c.subscribe()),
      ];
      for (let k = 1; k <= peers; k++) {
        const d = hosts[(i + k * 97) % hosts.length];
        jobs.push(ask('path', () => c.get(SaAttr.PathRecord, PathRecord, { sgid: gidOf(hosts[i].guid), dgid: gidOf(d.guid), reversible: 1, numbPath: 1 }, PATH_MASK)));
      }
      await Promise.all(jobs);
      done.push(performance.now() - t0);
    }),
  );
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  clearInterval(sampler);
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  done.sort((a, b) => a - b);
  const kinds = Object.fromEntries(Object.entries(byKind).map(([k, v]) => (v.sort((a, b) => a - b), [k, { p50: pct(v, 50), max: v[v.length - 1] }])));
  for (const c of clients) await c.close();
  await sm.stop();
  return { hosts: n, requests: n * (3 + peers), openMs, ms, p50: pct(done, 50), p99: pct(done, 99), lost, busy, errors: Object.fromEntries(errors), cpuS: (cpu.user + cpu.system) / 1e6, peakRssMB: peakRss / 2 ** 20, kinds, rss0MB: rss0 / 2 ** 20 };
}

const rows = [];
for (let r = 0; r < Number(o.runs); r++) rows.push(await once());
for (const r of rows) {
  process.stdout.write(
    `storm ${o.topo}: ${r.hosts} hosts, ${r.requests} requests (join + ServiceRecord + InformInfo + ${peers} PathRecords each)\n` +
      `  every client answered in ${(r.ms / 1000).toFixed(2)} s (p50 ${(r.p50 / 1000).toFixed(2)} s, p99 ${(r.p99 / 1000).toFixed(2)} s); lost ${r.lost}, BUSY answers retried ${r.busy}${Object.keys(r.errors).length ? ` ${JSON.stringify(r.errors)}` : ''}\n` +
      `  process CPU during the storm ${r.cpuS.toFixed(2)} s (SM, SA, fabric and clients); RSS ${r.rss0MB.toFixed(0)} MB before, peak ${r.peakRssMB.toFixed(0)} MB; clients opened in ${(r.openMs / 1000).toFixed(2)} s\n` +
      `  answered by kind (p50 / last, s): ${Object.entries(r.kinds).map(([k, v]) => `${k} ${(v.p50 / 1000).toFixed(2)} / ${(v.max / 1000).toFixed(2)}`).join(', ')}\n`,
  );
}

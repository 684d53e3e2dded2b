// The forwarding-table phase alone, in process (#16): the subnet of a fat tree is brought up once
// by ibsm's SM on the in-process fabric, then every switch's LFT is programmed again from scratch
// (a fresh shadow: every block written) through the SM's own path — lftPlan → apply →
// RetryingSmp → MadRpc's callback slot → the simulated fabric and its SMAs — --runs times. Prints
// the CPU µs per LFT block (process.cpuUsage around the apply step), wall ms and GC, median of the
// runs. Asserts nothing (a benchmark); the behaviour is in test/sm-*.test.ts and test/sim-*.test.ts.
//
//   node scripts/bench/lft-apply.mjs [--runs 5] [--sim gen:fattree3:radix=36] [--dist dist]
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PerformanceObserver } from 'node:perf_hooks';
import { opt } from './args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const distArg = opt('--dist', 'dist');
const dist = distArg.startsWith('/') ? distArg : join(root, distArg);
const imp = (p) => import(pathToFileURL(join(dist, p)).href);
const { MgmtClass, Method } = await imp('wire/mad.js');
const { MadRpc } = await imp('rpc/madrpc.js');
const { RealClock } = await imp('util/clock.js');
const { AsapClock } = await imp('util/asap-clock.js');
const { Logger } = await imp('util/log.js');
const { loadFabricSpec } = await imp('model/load.js');
const { SimFabric } = await imp('sim/fabric.js');
const { smpClientOf } = await imp('sm/smp-client.js');
const { RetryingSmp } = await imp('sm/retry.js');
const { Programmed } = await imp('sm/programmed.js');
// the LFT phase's own interleave and window where the build has them (as sm/sweep.ts uses them)
const { lftPlan, LFT_INTERLEAVE } = await imp('sm/plan-tables.js');
const applyMod = await imp('sm/apply.js');
const { LFT_APPLY_WINDOW } = applyMod;
const apply = applyMod.apply ?? applyMod.applyAll; // applyAll before the one apply step (#31)
const { Subnet } = await imp('subnet.js');

const runs = Number(opt('--runs', '5'));
const spec = opt('--sim', 'gen:fattree3:radix=36');
const clock = new RealClock();
const fabric = loadFabricSpec(spec, { seed: 1 });
const sim = new SimFabric(fabric, { clock: new AsapClock(), seed: 1 });
const ep = sim.attach(0);
ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
// as api/backend.ts attaches the SM in process
const rpc = new MadRpc(ep, clock, { timeoutMs: 1000, retries: 3, window: 256, perDestinationWindow: 16 });
const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(undefined, 'warn'), routing: ['ftree'], lmc: 0, sweepIntervalMs: 0, seed: 1 });
await subnet.start();
const snap = subnet.sm.current;
// the SM stops (no sweep of its own runs beside the measurement); its RPC and the fabric stay
subnet.stop();
const smp = new RetryingSmp(smpClientOf(rpc), clock);

let gcMs = 0;
const obs = new PerformanceObserver((l) => {
  for (const e of l.getEntries()) gcMs += e.duration;
});
obs.observe({ entryTypes: ['gc'] });

const rows = [];
for (let r = 0; r < runs; r++) {
  const programmed = new Programmed();
  const hooks = { ok: (w) => programmed.record(w), failed: () => undefined };
  const plan = lftPlan(snap.discovery, snap.routing, snap.maxLid, programmed, undefined, LFT_INTERLEAVE);
  plan.skipSwitchInfo();
  await new Promise((res) => setImmediate(res));
  const gc0 = gcMs;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const res = await apply(smp, plan, hooks, LFT_APPLY_WINDOW);
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  await new Promise((res) => setImmediate(res)); // let the observer report this run's GCs
  if (res.failed.length) throw new Error(`${res.failed.length} LFT blocks failed`);
  rows.push({ blocks: res.ok, cpuUs: (c.user + c.system) / res.ok, wall, gc: gcMs - gc0 });
}
obs.disconnect();
const med = (k) => rows.map((x) => x[k]).sort((a, b) => a - b)[(rows.length - 1) >> 1];
console.log(`${spec}: ${rows[0].blocks} LFT blocks a run, ${runs} runs (${dist})`);
console.log(`CPU µs/block median ${med('cpuUs').toFixed(2)} (each ${rows.map((x) => x.cpuUs.toFixed(2)).join(' ')}); wall ms median ${med('wall').toFixed(0)}; GC ms median ${med('gc').toFixed(0)}`);
rpc.close();
await ep.close();
sim.close();

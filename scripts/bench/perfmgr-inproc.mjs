// In-process PerfMgr cost: CPU per PMA MAD on a generated fabric (the in-process SimFabric answers
// the PMAs, so the figure includes its side too). No assertion.
// node scripts/bench/perfmgr-inproc.mjs [--fabric gen:fattree2:leaves=32,spines=16,hosts=32] [--sweeps 10]
import { VirtualClock } from '../../dist/util/clock.js';
import { SimFabric } from '../../dist/sim/fabric.js';
import { loadFabricSpec } from '../../dist/model/load.js';
import { MadRpc } from '../../dist/rpc/madrpc.js';
import { MgmtClass, Method } from '../../dist/wire/mad.js';
import { Subnet } from '../../dist/subnet.js';
import { smpClientOf } from '../../dist/sm/smp-client.js';
import { PerfMgr } from '../../dist/sm/perfmgr.js';
import { Logger, MemorySink } from '../../dist/util/log.js';
import { opt } from './args.mjs';

const arg = opt;
const spec = arg('--fabric', 'gen:fattree2:leaves=32,spines=16,hosts=32');
const sweeps = Number(arg('--sweeps', '10'));
const clock = new VirtualClock();
const sim = new SimFabric(loadFabricSpec(spec), { clock, seed: 5 });
const ep = sim.attach(0);
ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
const log = new Logger(new MemorySink(), 'info');
const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log, routing: ['minhop'], lmc: 0, sweepIntervalMs: 0, saServer: { schedule: (fn) => queueMicrotask(fn) } });
await clock.runUntil(subnet.start(), 600_000);
const pm = new PerfMgr({ rpc, log });
const fabric = subnet.sm.current.fabric;
await clock.runUntil(pm.sweep(fabric), 600_000); // warm-up (learns the capabilities)
const m0 = pm.totals.mads;
const c0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
for (let i = 0; i < sweeps; i++) await clock.runUntil(pm.sweep(fabric), 600_000);
const c = process.cpuUsage(c0);
const wall = Number(process.hrtime.bigint() - t0) / 1e6;
const mads = pm.totals.mads - m0;
console.log(`${spec}: ${sweeps} sweeps, ${mads} PMA MADs, ${((c.user + c.system) / mads).toFixed(1)} µs CPU per PMA MAD, ${((wall * 1000) / mads).toFixed(1)} µs wall per MAD`);
process.exit(0);

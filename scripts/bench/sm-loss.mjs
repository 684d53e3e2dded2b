// The SM's first heavy sweep in process with its own link losing MADs (#31, one retry layer): the
// SMPs sent, the virtual time to SUBNET UP and what was left out, median over seeds of the
// simulator's loss. `--dist DIR` runs another build (before/after). Asserts nothing.
//
//   node scripts/bench/sm-loss.mjs [--loss 0.2] [--sim gen:fattree2:leaves=8,spines=4,hosts=8] [--seeds 5] [--dist dist]
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const distArg = opt('--dist', 'dist');
const dist = distArg.startsWith('/') ? distArg : join(root, distArg);
const rate = Number(opt('--loss', '0.2'));
const spec = opt('--sim', 'gen:fattree2:leaves=8,spines=4,hosts=8');
const seeds = Number(opt('--seeds', '5'));
const imp = (p) => import(pathToFileURL(join(dist, p)).href);
const { VirtualClock } = await imp('util/clock.js');
const { SimFabric } = await imp('sim/fabric.js');
const { MadRpc } = await imp('rpc/madrpc.js');
const { MgmtClass, Method, NodeType } = await imp('wire/mad.js');
const { SubnetManager } = await imp('sm/sm.js');
const { smpClientOf } = await imp('sm/smp-client.js');
const { Logger, MemorySink } = await imp('util/log.js');
const { loadFabricSpec } = await imp('model/load.js');

const runs = [];
for (let seed = 1; seed <= seeds; seed++) {
  const f = loadFabricSpec(spec);
  const at = f.nodes.findIndex((n) => n.type !== NodeType.Switch);
  const clock = new VirtualClock();
  const sim = new SimFabric(f, { clock, seed });
  const ep = sim.attach(at);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  // MadRpc as the tests' rig has it (50 ms tries, 3 retries of its own for what asks for them).
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8 });
  sim.setLinkFaults(at, 1, { dropRate: rate });
  const sm = new SubnetManager({ smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink(), 'info'), routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: 0 });
  const st = await clock.runUntil(sm.start(), 600_000);
  runs.push({ smps: rpc.stats.sent, ms: Math.round(clock.now()), leftOut: st.skippedNodes + st.skippedLinks + st.failedWrites, heavySweeps: sm.stats.filter((s) => s.kind === 'heavy').length });
  sm.stop();
}
const median = (k) => runs.map((r) => r[k]).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
console.log(`${spec}, ${rate * 100} % loss each way on the SM's link, ${seeds} seeds (${dist})`);
console.log(`median SMPs ${median('smps')}, virtual ms to SUBNET UP ${median('ms')}, left out ${median('leftOut')}, heavy sweeps ${median('heavySweeps')}`);
console.log(JSON.stringify(runs));

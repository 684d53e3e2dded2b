#!/usr/bin/env node
// Unresponsive SMAs (issue #33 item 2, --health-unresponsive): what one dead SMA costs each heavy
// sweep, with and without the policy. In-process fabric on a virtual clock (the figures are the
// sweep's virtual time, deterministic: no noise from this machine), the SM's SMPs through MadRpc
// with the umad backend's timeout (200 ms) and the SM's retry layer (12 tries of an SMP). One
// spine's SMA is silenced (the sim's smaSilent: every SMP that reaches it is lost, the switch
// still forwards) after the SM is up; then --sweeps heavy sweeps, each timed. OpenSM cannot run on
// this fabric (in-process): its behaviour without such a policy is that of "off" (it sweeps the
// node each time and waits for its timeouts).
//
// Prints one table (median over the sweeps after the K-th, and the first ones); asserts nothing.
//
//   npx tsc -p tsconfig.json && node scripts/bench/unresponsive.mjs [--fabric SPEC] [--sweeps N] [--timeout MS]
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => import(pathToFileURL(join(root, 'dist', p)).href);
const [{ VirtualClock }, { SimFabric }, { loadFabricSpec }, { MadRpc }, mad, { SubnetManager }, { smpClientOf }, { installSmHandlers }, { Logger, MemorySink }, { parseUnresponsivePolicy }] = await Promise.all(
  ['util/clock.js', 'sim/fabric.js', 'model/load.js', 'rpc/madrpc.js', 'wire/mad.js', 'sm/sm.js', 'sm/smp-client.js', 'sm/handlers.js', 'util/log.js', 'sm/health-unresponsive.js'].map(dist),
);
const { MgmtClass, Method, NodeType } = mad;

const spec = opt('--fabric', 'gen:fattree2:leaves=24,spines=12,hosts=18');
const sweeps = Number(opt('--sweeps', '6'));
const timeoutMs = Number(opt('--timeout', '200'));

async function run(policy) {
  const f = loadFabricSpec(spec);
  const clock = new VirtualClock();
  const sim = new SimFabric(f, { clock, seed: 1 });
  const ep = sim.attach(f.nodes.findIndex((n) => n.type !== NodeType.Switch));
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs, retries: 3, window: 256, perDestinationWindow: 16 });
  const log = new Logger(new MemorySink(), 'warn');
  const sm = new SubnetManager({ smp: smpClientOf(rpc), clock, log, routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: 0, topology: { unresponsive: policy ? parseUnresponsivePolicy(policy) : undefined } });
  installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log });
  await clock.runUntil(sm.start(), 600_000);
  const sw = (i) => f.nodes[i].type === NodeType.Switch;
  const spine = f.nodes.findIndex((n, i) => sw(i) && n.ports.every((p) => !p?.peer || sw(p.peer.node)));
  sim.node(f.nodes[spine].guid).smaSilent = true;
  const out = [];
  for (let k = 0; k < sweeps; k++) {
    const t0 = clock.now();
    const g0 = sm.smpFailures.timeout;
    const st = await clock.runUntil(sm.sweep('heavy'), 600_000);
    out.push({ ms: clock.now() - t0, smps: st.smps, givenUp: sm.smpFailures.timeout - g0, isolated: sm.health.state.isolated.length });
  }
  sm.stop?.();
  rpc.close();
  return out;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`unresponsive SMA: ${spec}, one spine silenced, ${sweeps} heavy sweeps, SMP timeout ${timeoutMs} ms (virtual time)`);
console.log('policy        sweep  ms (virtual)  SMPs  given up  isolated');
for (const policy of [undefined, '2:isolate']) {
  const rows = await run(policy);
  rows.forEach((r, i) => console.log(`${(policy ?? 'off').padEnd(12)}  ${String(i + 1).padStart(5)}  ${r.ms.toFixed(0).padStart(12)}  ${String(r.smps).padStart(4)}  ${String(r.givenUp).padStart(8)}  ${r.isolated}`));
  const later = rows.slice(2);
  console.log(`${(policy ?? 'off').padEnd(12)}  median of sweeps 3..${sweeps}: ${median(later.map((r) => r.ms)).toFixed(0)} ms, ${median(later.map((r) => r.smps))} SMPs, ${median(later.map((r) => r.givenUp))} given up`);
}

// SR-IOV vports at scale (issue #34): the first heavy sweep of an in-process fabric of 1,000 hosts
// (a 2-level fat tree) with 16 vports a host (8 of them LidRequired: 8,000 vport LIDs), beside the
// same fabric without vports. OpenSM (upstream) manages no vports, so there is no OpenSM column.
// Per run, in its own process (virtual clock, the SM and the simulator in one process): wall ms
// to SUBNET UP, SMPs sent, peak RSS of the process; then checks (not timed) that every vport is
// ACTIVE, the LIDs are unique and every switch forwards each vport LID as its host's LID; then
// 100 vports created on one host and the next light sweep's SMPs. Median of --runs. Asserts nothing.
//
//   node scripts/bench/vports.mjs [--runs 3] [--spec gen:fattree2:leaves=50,spines=10,hosts=20] [--vports 16]
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { opt } from './args.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dist = (p) => pathToFileURL(join(root, 'dist', p)).href;

if (process.env.VPORT_BENCH_CHILD) await child(process.env.VPORT_BENCH_CHILD, Number(process.env.VPORT_BENCH_N));
else await main();

async function child(spec, perHost) {
  const { loadFabricSpec } = await import(dist('model/load.js'));
  const { VirtualClock } = await import(dist('util/clock.js'));
  const { SimFabric } = await import(dist('sim/fabric.js'));
  const { MadRpc } = await import(dist('rpc/madrpc.js'));
  const { MgmtClass, Method, NodeType, PortState } = await import(dist('wire/mad.js'));
  const { SubnetManager } = await import(dist('sm/sm.js'));
  const { smpClientOf } = await import(dist('sm/smp-client.js'));
  const { installSmHandlers } = await import(dist('sm/handlers.js'));
  const { Logger, MemorySink } = await import(dist('util/log.js'));
  const fabric = loadFabricSpec(spec);
  const clock = new VirtualClock();
  const virtualization = perHost > 0 ? { vportCap: 256, vports: perHost - 1 } : undefined; // + vport 0
  const sim = new SimFabric(fabric, { clock, seed: 7, ...(virtualization ? { virtualization } : {}) });
  const ep = sim.attach(fabric.nodes.findIndex((n) => n.type === NodeType.CA));
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 3, window: 256, perDestinationWindow: 16 });
  const sink = new MemorySink();
  const interval = 5000;
  const sm = new SubnetManager({ smp: smpClientOf(rpc), clock, log: new Logger(sink, 'info'), routing: ['ftree', 'updn', 'minhop'], lmc: 0, sweepIntervalMs: interval });
  installSmHandlers(rpc, sm, { portGuid: ep.local.portGuid, log: new Logger(sink, 'info') });
  const t0 = performance.now();
  await clock.runUntil(sm.start(), 600_000);
  const ms = performance.now() - t0;
  const smps = rpc.stats.sent;
  // checks
  let vports = 0, active = 0, withLid = 0, badRoutes = 0;
  const lids = new Set();
  for (const n of sim.nodes) for (const p of n.ports) if (p?.info.lid) lids.add(p.info.lid);
  const switches = sim.nodes.filter((n) => n.isSwitch).map((s) => sim.lft(s.guid));
  let dup = 0;
  for (const v of sim.vports.all()) {
    vports++;
    if (v.state === PortState.Active) active++;
    if (!v.lidRequired) continue;
    withLid++;
    if (lids.has(v.lid)) dup++;
    lids.add(v.lid);
    const host = v.virt.port.info.lid;
    for (const lft of switches) if (lft[v.lid] !== lft[host]) badRoutes++;
  }
  // the route verifier over vport LIDs: for each LidRequired vport index, the fabric as the SM
  // knows it with every host's port LID replaced by that vport's, over the LFTs the switches hold
  const { verifyRoutes } = await import(dist('routing/verify.js'));
  const snapF = sm.current.fabric;
  const lftsByIdx = new Map();
  snapF.nodes.forEach((n, i) => { if (n.type === NodeType.Switch) lftsByIdx.set(i, sim.lft(n.guid)); });
  let verifySets = 0, verifyOk = 0;
  const indices = new Set([...sim.vports.all()].filter((v) => v.lidRequired).map((v) => v.index));
  for (const k of indices) {
    const nodes = snapF.nodes.map((n) => ({ ...n, ports: n.ports.map((p) => p && { ...p }) }));
    nodes.forEach((n) => {
      if (n.type === NodeType.Switch) return;
      for (const p of n.ports) {
        if (!p) continue;
        const v = sim.vports.virt(n.guid, p.num).vports.get(k);
        if (v) { p.lid = v.lid; p.lmc = 0; }
      }
    });
    verifySets++;
    if (verifyRoutes({ ...snapF, nodes }, lftsByIdx).ok) verifyOk++;
  }
  // 100 vports at run time on one host, the next light sweep
  let lightSmps, lightActive;
  if (perHost > 0) {
    const ca = sim.nodes.find((n) => n.type === NodeType.CA && n.idx !== ep.nodeIdx);
    const created = Array.from({ length: 100 }, (_, i) => sim.vports.create(ca.guid, 1, { lidRequired: i % 2 === 0 }));
    const s0 = rpc.stats.sent;
    await clock.advanceAsync(2 * interval);
    lightSmps = rpc.stats.sent - s0;
    lightActive = created.filter((v) => v.state === PortState.Active && (!v.lidRequired || v.lid > 0)).length;
  }
  const rssMB = Math.round(process.resourceUsage().maxRSS / 1024); // peak: the verifier runs above
  process.stdout.write(JSON.stringify({ ms: Math.round(ms), smps, rssMB, vports, active, withLid, dup, badRoutes, verify: perHost > 0 ? `${verifyOk}/${verifySets}` : '-', lightSmps, lightActive }) + '\n');
  sm.stop?.();
  process.exit(0);
}

async function main() {
  const runs = Number(opt('--runs', '3'));
  const spec = opt('--spec', 'gen:fattree2:leaves=50,spines=10,hosts=20');
  const perHost = Number(opt('--vports', '16'));
  const one = (n) =>
    new Promise((resolve, reject) => {
      const c = spawn(process.execPath, [fileURLToPath(import.meta.url)], { env: { ...process.env, VPORT_BENCH_CHILD: spec, VPORT_BENCH_N: String(n) }, stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      c.stdout.on('data', (d) => (out += d));
      c.on('error', reject);
      c.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`child exited ${code}: ${out}`))));
    });
  const median = (xs) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1];
  const res = { without: [], with: [] };
  for (let i = 0; i < runs; i++) {
    res.without.push(await one(0));
    res.with.push(await one(perHost));
  }
  console.log(`fabric ${spec}, ${perHost} vports a host (half LidRequired), median of ${runs} runs (in process, virtual clock)`);
  console.log('| fabric | UP wall ms | SMPs | RSS MB | vports | ACTIVE | vport LIDs | dup LIDs | LFT entries wrong | verifier over vport LIDs | +100 vports: SMPs of 2 intervals | ACTIVE |');
  console.log('|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const [name, rs] of Object.entries(res)) {
    const m = (k) => median(rs.map((r) => r[k] ?? 0));
    const last = rs.at(-1);
    console.log(`| ${name} vports | ${m('ms')} | ${m('smps')} | ${m('rssMB')} | ${last.vports} | ${last.active} | ${last.withLid} | ${last.dup} | ${last.badRoutes} | ${last.verify} | ${last.lightSmps ?? '-'} | ${last.lightActive ?? '-'} |`);
  }
}

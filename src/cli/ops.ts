/**
 * Operating a running SM: what its control socket answers (`controlTargetOf`), and the client
 * commands `ibsm status | resweep | reroute | dump | topo`.
 */
import type { IbsmSm } from '../api/sm.js';
import { isSwitch } from '../model/fabric.js';
import { formatIbnetdiscover } from '../model/ibnetdiscover.js';
import { loadFabricSpec } from '../model/load.js';
import { snapshotPorts, type Snapshot } from '../model/snapshot.js';
import { DEFAULT_FALLBACK, routeWithFallback } from '../routing/registry.js';
import { verifyRoutes, type VerifyReport } from '../routing/verify.js';
import { DEFAULT_TRAFFIC_SAMPLES, trafficLine, trafficSteps, type TrafficPattern } from '../routing/traffic.js';
import { routesPerLink } from '../routing/incremental.js';
import { assignLids, formatGuid2Lid, type LidRange } from '../sm/lids.js';
import { ERROR_COUNTERS } from '../sm/perf-counters.js';
import { dumpLfts, dumpMfts, dumpVports, type MftEntries } from '../view/dumps.js';
import { vportRows } from '../sm/vport-ops.js';
import { dumpHealth } from '../view/topology-health.js';
import { mismatchText } from '../model/topology-compare.js';
import { formatGuid } from '../util/guid.js';
import { topologyDot, topologyJson, topologySvg, topologyView, viewMemory, type TopologyView } from '../view/topology.js';
import { openBackend } from '../api/backend.js';
import { discover } from '../sm/discovery.js';
import { smpClientOf } from '../sm/smp-client.js';
import { parseCommandLine, UsageError } from '../config/parse.js';
import { DEFAULT_CONTROL_SOCKET, type Command } from '../config/options.js';
import { controlRequest, DUMPS, vportRequestOf, type ControlTarget, type DumpKind, type TopoFormat, type VportRequest } from './control.js';
import { parseNodeRef } from '../api/backend.js';
import { SubnetNotUpError } from '../util/errors.js';
import { liveWhatIf } from './what-if.js';
import { manualIsolation } from '../sm/health-manual.js';
import type { Isolation } from '../model/topology-classes.js';

interface Io {
  stdout: { write(s: string): unknown };
}

const MCAST_BASE = 0xc000;

/** A switch's MFT as MLID → ports, from the blocks the SM programmed. */
function mftOf(sm: IbsmSm, guid: bigint): MftEntries {
  const entries = new Map<number, number[]>();
  for (const b of sm.subnet.sm.mftEntries(guid)) {
    b.masks.forEach((mask, i) => {
      if (!mask) return;
      const mlid = MCAST_BASE + b.block * 32 + i;
      const ports = entries.get(mlid) ?? [];
      for (let bit = 0; bit < 16; bit++) if (mask & (1 << bit)) ports.push(b.position * 16 + bit);
      entries.set(mlid, ports.sort((x, y) => x - y));
    });
  }
  return { guid, entries };
}

export function renderTopology(v: TopologyView, format: TopoFormat): string {
  return format === 'dot' ? topologyDot(v) : format === 'svg' ? topologySvg(v) : JSON.stringify(topologyJson(v), null, 1) + '\n';
}

/** What the control socket of `sm` answers. */
export function controlTargetOf(sm: IbsmSm): ControlTarget {
  const started = Date.now();
  let lastChange: { at: string; sweep: number; nodesAdded: number; nodesRemoved: number; linksAdded: number; linksRemoved: number } | undefined;
  sm.events.on('topologyChanged', (c) => {
    lastChange = { at: new Date().toISOString(), sweep: c.sweep, nodesAdded: c.nodesAdded.length, nodesRemoved: c.nodesRemoved.length, linksAdded: c.linksAdded.length, linksRemoved: c.linksRemoved.length };
  });
  // what the pictures showed since the SM started: a link or node missing now is drawn down or gone
  const memory = viewMemory();
  const verified = new WeakMap<Snapshot, VerifyReport>();
  let saSample = { at: started, received: 0 };
  const snapshot = (): Snapshot => {
    const s = sm.subnet.sm.current;
    if (!s) throw new SubnetNotUpError('the subnet is not up yet');
    return s;
  };
  return {
    status() {
      const snap = sm.subnet.sm.current;
      const done = sm.subnet.sm.sweepsDone;
      let routing: unknown;
      if (snap) {
        let r = verified.get(snap);
        if (!r) verified.set(snap, (r = verifyRoutes(snap.fabric, snap.routing, { stretch: false })));
        routing = { engine: snap.routing.engine, deadlockFree: r.deadlockFree, vlsUsed: r.vlsUsed, unreachablePairs: r.unreachablePairs, loops: r.loopEntries, routesPerLink: { max: r.linkLoad.max, mean: Number(r.linkLoad.mean.toFixed(1)) } };
      }
      const sa = sm.subnet.sa?.stats;
      const now = Date.now();
      const rate = sa ? (sa.received - saSample.received) / Math.max(0.001, (now - saSample.at) / 1000) : 0;
      if (sa) saSample = { at: now, received: sa.received };
      const perf = sm.perf;
      const errorPorts = perf
        ? [...perf.monitored()].filter((p) => [...ERROR_COUNTERS].some((n) => p.counters.totals[n] > 0n)).slice(0, 20).map((p) => ({ node: p.nodeDesc, guid: p.nodeGuid, port: p.portNum, lid: p.lid, errors: Object.fromEntries([...ERROR_COUNTERS].filter((n) => p.counters.totals[n] > 0n).map((n) => [n, Number(p.counters.totals[n])])) }))
        : undefined;
      return {
        role: sm.subnet.sm.state,
        uptimeSeconds: Math.round((now - started) / 1000),
        sweeps: { heavy: done.heavy, light: done.light },
        fabric: snap ? { nodes: snap.fabric.nodes.length, switches: snap.fabric.nodes.filter(isSwitch).length, endPorts: snapshotPorts(snap).endPorts.filter((e) => e.lid).length, maxLid: snap.maxLid } : undefined,
        lastChange,
        routing,
        sa: sa ? { requests: sa.received, requestsPerSecond: Number(rate.toFixed(1)), errors: sa.errors } : undefined,
        perfmgr: perf ? { sweeps: perf.totals.sweeps, portFailures: perf.totals.failures, portsWithErrors: errorPorts } : undefined,
        health: healthStatus(sm),
      };
    },
    resweep: (heavy) => sm.subnet.sm.sweep(heavy ? 'heavy' : 'light'),
    reroute: () => sm.subnet.sm.reroute(),
    dump(what: DumpKind) {
      const snap = snapshot();
      switch (what) {
        case 'lfts':
          return dumpLfts(snap.fabric, snap.routing.lfts, snap.maxLid);
        case 'mfts':
          return dumpMfts(snap.fabric, snap.fabric.nodes.filter(isSwitch).map((n) => mftOf(sm, n.guid)));
        case 'topology':
          return formatIbnetdiscover(snap.fabric, { sourceNode: snap.discovery.smNode, sourcePort: snap.discovery.smPort });
        case 'traffic':
          return trafficDump(snap);
        case 'health':
          return dumpHealth(sm.subnet.sm.health.state, sm.backend.clock.now(), sm.options?.topology);
        case 'vports':
          return dumpVports(vportRows(sm.subnet.sm.vports, snap.fabric));
        case 'lids': {
          const m = new Map<bigint, LidRange>();
          for (const e of snapshotPorts(snap).endPorts) if (e.lid) m.set(e.guid, { base: e.lid, lmc: e.lmc });
          return formatGuid2Lid(m);
        }
      }
    },
    async isolate(target, release) {
      // health hook: manual isolate/release (sm/health-manual.ts); a heavy sweep applies it.
      const keeper = sm.subnet.sm.health;
      let out: unknown;
      if (release) {
        const { released, refused } = keeper.releaseByHand(target);
        out = { released: released.map(isolationText), ...(refused.length ? { refused: refused.map((i) => `${isolationText(i)}: held by the expected topology until it matches`) } : {}) };
      } else {
        const i = manualIsolation(snapshot().fabric, target, sm.backend.clock.now(), keeper.state.isolated);
        out = { isolated: isolationText(i), new: keeper.isolateByHand(i) };
      }
      await sm.subnet.sm.sweep('heavy');
      return out;
    },
    whatIf: (spec, verify) => liveWhatIf(sm, snapshot(), sm.subnet.routingConfig, spec, verify),
    topo(format) {
      const snap = snapshot();
      return renderTopology(topologyView(snap.fabric, { routes: routesPerLink(snap.fabric, snap.routing), memory, health: sm.subnet.sm.health.state }), format);
    },
    ...(sm.sim ? { vport: (req: VportRequest) => vportAct(sm, req) } : {}),
  };
}

const endName = (e: { guid: bigint; desc: string; port: number }): string => `"${e.desc}" (${formatGuid(e.guid)})${e.port ? ` port ${e.port}` : ''}`;
const isolationText = (i: Isolation): string => `${i.kind} ${endName(i.a)}${i.b ? ` - ${endName(i.b)}` : ''} (${i.cls}, ${i.source})`;

/** `ibsm vport create|destroy` on the embedded simulated fabric: the hypervisor acts; the SM finds
 * the change at its next light sweep (a port just given virtualization: a heavy sweep is asked). */
function vportAct(sm: IbsmSm, req: VportRequest): unknown {
  const r = sm.sim!.vports.hypervisor(req.action, parseNodeRef(req.node), req.port, req.count);
  if (r.enabled) void sm.subnet.sm.sweep('heavy').catch(() => undefined);
  return { [req.action === 'create' ? 'created' : 'destroyed']: r.vports, ...(r.enabled ? { virtualizationEnabled: true } : {}), note: r.enabled ? 'the port had no virtualization: a heavy sweep was asked for' : 'the SM takes them at its next light sweep' };
}

/** `ibsm status`'s health: the isolations held and the mismatches with the expected topology
 * (the first 20 of each, one line each; `ibsm dump health` has them all). */
function healthStatus(sm: IbsmSm): unknown {
  const h = sm.subnet.sm.health.state;
  if (!sm.options?.topology && !h.isolated.length) return undefined;
  return {
    ...(sm.options?.topology ? { topology: sm.options.topology, mismatches: h.mismatches.length, mismatchList: h.mismatches.slice(0, 20).map(mismatchText) } : {}),
    isolated: h.isolated.length,
    isolatedList: h.isolated.slice(0, 20).map(isolationText),
  };
}

/** `ibsm dump traffic`: EBB and all-to-all on the snapshot's tables (routing/traffic.ts), a phase
 *  at a time with the event loop given back in between, so the SM goes on answering meanwhile. */
export async function trafficDump(snap: Snapshot): Promise<string> {
  const patterns: TrafficPattern[] = [{ kind: 'ebb' }, { kind: 'alltoall' }];
  let out = `traffic on the tables of sweep ${snap.sweep} (${snap.routing.engine}), per-flow bandwidth / injection rate (docs/traffic.md)\n`;
  for (const p of patterns) {
    const steps = trafficSteps(snap.fabric, snap.routing.lfts, p, { samples: DEFAULT_TRAFFIC_SAMPLES });
    for (let r = steps.next(); ; r = steps.next()) {
      if (r.done) {
        out += `${r.value.pattern.padEnd(9)} ${trafficLine(r.value)}\n`;
        break;
      }
      await new Promise<void>((res) => setImmediate(res));
    }
  }
  return out;
}

/** `ibsm status | resweep | reroute | dump | vport`: one request to the running SM's control socket. */
export async function controlMain(cmd: Exclude<Command, 'run' | 'discover' | 'route' | 'query' | 'config' | 'topo' | 'check' | 'what-if'>, argv: string[], io: Io): Promise<number> {
  const args = parseCommandLine(cmd, argv);
  const socket = (args.values.get('socket') as string | undefined) ?? DEFAULT_CONTROL_SOCKET;
  const json = args.values.get('json') === true;
  let result: unknown;
  if (cmd === 'dump') {
    const what = args.positionals[0];
    if (!what || !(DUMPS as readonly string[]).includes(what)) throw new UsageError(`dump what? one of ${DUMPS.join(', ')}`, 'dump');
    result = await controlRequest(socket, { cmd: 'dump', what: what as DumpKind });
    io.stdout.write(json ? JSON.stringify({ [what]: result }) + '\n' : String(result));
    return 0;
  }
  if (cmd === 'isolate' || cmd === 'release') {
    const target = args.positionals[0];
    if (!target || args.positionals.length > 1) throw new UsageError(`${cmd} what? one NODE[:PORT] (a node GUID, a port GUID or a description)`, cmd);
    result = await controlRequest(socket, { cmd, target });
    io.stdout.write(json ? JSON.stringify(result) + '\n' : textOf(result));
    return 0;
  }
  if (cmd === 'vport') {
    const [action, where, n, extra] = args.positionals;
    if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, 'vport');
    result = await controlRequest(socket, vportRequestOf(action, where, n));
    io.stdout.write(json ? JSON.stringify(result) + '\n' : textOf(result));
    return 0;
  }
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}"`, cmd);
  result = await controlRequest(socket, cmd === 'resweep' ? { cmd, heavy: args.values.get('heavy') === true } : { cmd });
  io.stdout.write(json ? JSON.stringify(result) + '\n' : textOf(result));
  return 0;
}

/** A JSON answer as indented "key: value" lines. */
function textOf(v: unknown, indent = ''): string {
  if (v === null || typeof v !== 'object') return `${indent}${String(v)}\n`;
  return Object.entries(v as Record<string, unknown>)
    .filter(([, x]) => x !== undefined)
    .map(([k, x]) => (x !== null && typeof x === 'object' ? `${indent}${k}:\n${textOf(x, indent + '  ')}` : `${indent}${k}: ${String(x)}\n`))
    .join('');
}

/** `ibsm topo`: the running SM's picture (its socket), or one made here from --sim or --umad. */
export async function topoMain(argv: string[], io: Io): Promise<number> {
  const args = parseCommandLine('topo', argv);
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}"`, 'topo');
  const format = (args.values.get('format') as TopoFormat | undefined) ?? 'svg';
  const sim = args.values.get('sim') as string | undefined;
  const umad = args.values.get('umad') === true;
  if (sim !== undefined && umad) throw new UsageError('give either --sim or --umad, not both', 'topo');
  if (sim !== undefined) {
    // offline: the fabric routed with the default chain, as `ibsm route` does
    const f = loadFabricSpec(sim);
    assignLids(f, { lmc: 0 });
    const routed = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 });
    io.stdout.write(renderTopology(topologyView(f, { routes: routesPerLink(f, routed.result) }), format));
    return 0;
  }
  if (umad) {
    const be = await openBackend({ umad: true, ca: args.values.get('ca') as string | undefined, port: args.values.get('port') as number | undefined });
    try {
      const res = await discover(smpClientOf(be.rpc), {});
      io.stdout.write(renderTopology(topologyView(res.fabric), format));
    } finally {
      await be.close();
    }
    return 0;
  }
  const socket = (args.values.get('socket') as string | undefined) ?? DEFAULT_CONTROL_SOCKET;
  io.stdout.write(String(await controlRequest(socket, { cmd: 'topo', format })));
  return 0;
}

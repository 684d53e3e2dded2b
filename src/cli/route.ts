/** `ibsm route <topology file | gen:spec> [--engine NAME[,NAME...]] [--lmc N] [--roots GUID,..] [--root-guid-file FILE] [--guid-routing-order-file FILE] [--seed N] [--max-vls N] [--traffic ebb|alltoall|shift:K|FILE [--traffic-samples N] [--traffic-seed N]] [--what-if links|switches|LIST [--what-if-verify full|fast]] [--json]`
 *  Load a fabric, assign LIDs, route it, verify the tables and print the figures (with --traffic,
 *  the bandwidth the patterns' flows get through the tables: routing/traffic.ts; with --what-if,
 *  each failure case re-routed as the running SM would and judged: routing/what-if.ts).
 *  Exit status: 0 routes verified (--what-if: every case verified, no pair lost), 1 verification failed, 2 bad usage / cannot load / cannot route. */
import { performance } from 'node:perf_hooks';
import { RoutingError, routeWithFallback, engineNames, enginesWithoutRouteOrder, parseRouteOrder, verifyRoutes, type FallbackResult, type LoadStats, type VerifyReport } from '../routing/index.js';
import { fmtGuid } from '../routing/graph.js';
import type { RoutingOptions } from '../routing/types.js';
import type { Fabric } from '../model/fabric.js';
import { LOCAL_MAX_CHANGES } from '../sm/local-sweep.js';
import { assignLids, LidSpaceExhausted } from '../sm/lids.js';
import { loadFabricSpec, TopologyError } from '../model/load.js';
import { commandHelp, parseCommandLine, UsageError } from '../config/parse.js';
import { defaultOf, optionByName } from '../config/options.js';
import { GuidFileError, parseGuidFile } from '../model/guid-file.js';
import { readNamedFile } from '../config/files.js';
import { runWhatIf } from './what-if.js';
import { evaluateTraffic, parseTrafficPattern, PATTERN_SYNTAX, trafficLine, TrafficError, type TrafficStats } from '../routing/traffic.js';

export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

interface Args {
  spec: string;
  engines: string[];
  lmc: number;
  roots?: bigint[];
  cnGuids?: bigint[];
  ioGuids?: bigint[];
  routeOrder?: bigint[];
  routeOrderNoScatter: boolean;
  seed?: number;
  maxVls?: number;
  json: boolean;
  /** --traffic patterns (routing/traffic.ts), --traffic-samples, --traffic-seed. */
  traffic: string[];
  trafficSamples: number;
  trafficSeed: number;
  /** --what-if cases (routing/what-if.ts) and how each is verified. */
  whatIf?: string;
  whatIfVerify: 'full' | 'fast';
}

function parseArgs(argv: string[]): Args | 'help' {
  const p = parseCommandLine('route', argv);
  if (p.help) return 'help';
  if (p.positionals.length > 1) throw new UsageError(`only one topology may be given (got "${p.positionals[0]}" and "${p.positionals[1]}")`, 'route');
  const spec = p.positionals[0];
  if (spec === undefined) throw new UsageError('missing the topology: a file (ibnetdiscover, ibsim .net or JSON) or gen:<kind>:<params>', 'route');
  const v = <T>(name: string): T | undefined => (p.values.get(name) ?? defaultOf(optionByName(name)!)) as T | undefined;
  const guid = (g: string): bigint => BigInt(g.startsWith('0x') ? g : '0x' + g);
  /** The GUIDs of a --*-guid-file option, if given. */
  const guidFile = (name: string, parse = parseGuidFile): bigint[] | undefined => {
    const file = v<string>(name);
    if (file === undefined) return undefined;
    const text = readNamedFile(file, name);
    if (typeof text !== 'string') throw new UsageError(text.message, 'route');
    return parse(text, file);
  };
  if (p.values.has('what-if') && p.values.has('traffic')) throw new UsageError('--what-if and --traffic: one at a time (--what-if judges each failure case, --traffic the tables as they are)', 'route');
  const fromFile = guidFile('root-guid-file');
  let roots = v<string[]>('roots')?.map(guid);
  if (fromFile) roots = [...(roots ?? []), ...fromFile];
  return { spec, engines: v<string[]>('engine')!, lmc: v<number>('lmc')!, roots, cnGuids: guidFile('cn-guid-file'), ioGuids: guidFile('io-guid-file'), routeOrder: guidFile('guid-routing-order-file', parseRouteOrder), routeOrderNoScatter: v<boolean>('guid-routing-order-no-scatter') ?? false, seed: v<number>('seed'), maxVls: v<number>('max-vls'), json: v<boolean>('json') ?? false, traffic: v<string[]>('traffic') ?? [], trafficSamples: v<number>('traffic-samples')!, trafficSeed: v<number>('traffic-seed')!, whatIf: v<string>('what-if'), whatIfVerify: v<'full' | 'fast'>('what-if-verify')! };
}

export async function routeMain(argv: string[], io: CliIo): Promise<number> {
  const usage = commandHelp('route', `engines: ${engineNames().join(', ')}\n`);
  let args: Args;
  try {
    const p = parseArgs(argv);
    if (p === 'help') {
      io.stdout.write(usage);
      return 0;
    }
    args = p;
  } catch (e) {
    if (e instanceof UsageError || e instanceof RoutingError) {
      io.stderr.write(`ibsm route: ${e.message}\n(ibsm route --help lists its options)\n`);
      return 2;
    }
    if (e instanceof GuidFileError) {
      io.stderr.write(`ibsm route: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  let fabric;
  try {
    fabric = loadFabricSpec(args.spec, args.seed !== undefined ? { seed: args.seed } : {});
    assignLids(fabric, { lmc: args.lmc });
  } catch (e) {
    if (e instanceof TopologyError || e instanceof LidSpaceExhausted || e instanceof RangeError) {
      io.stderr.write(`ibsm route: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  let routed: FallbackResult;
  const t0 = performance.now();
  try {
    routed = routeWithFallback(fabric, args.engines, {
      lmc: args.lmc,
      ...(args.roots ? { roots: args.roots } : {}),
      ...(args.cnGuids ? { cnGuids: args.cnGuids } : {}),
      ...(args.ioGuids ? { ioGuids: args.ioGuids } : {}),
      ...(args.routeOrder ? { routeOrder: args.routeOrder, routeOrderNoScatter: args.routeOrderNoScatter } : {}),
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
      ...(args.maxVls !== undefined ? { maxVls: args.maxVls } : {}),
    });
  } catch (e) {
    if (e instanceof RoutingError) {
      io.stderr.write(`ibsm route: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  const routeMs = performance.now() - t0;
  if (args.whatIf !== undefined) return whatIfMain(args, fabric, routed, io);
  if (args.routeOrder && enginesWithoutRouteOrder([routed.engine]).length) routed.result.notes.push(`${routed.engine} routes in its own order: --guid-routing-order-file is not used by it (only ${engineNames().filter((n) => !enginesWithoutRouteOrder([n]).length).join(', ')} take it)`);
  const t1 = performance.now();
  const report = verifyRoutes(fabric, routed.result);
  const verifyMs = performance.now() - t1;
  const r = routed.result;
  let traffic: TrafficStats[];
  try {
    traffic = trafficOf(args, fabric, r.lfts);
  } catch (e) {
    if (e instanceof TrafficError || e instanceof UsageError) {
      io.stderr.write(`ibsm route: ${e.message}\n`);
      return 2;
    }
    throw e;
  }

  if (args.json) {
    const out = {
      topology: args.spec,
      engine: routed.engine,
      requested: args.engines,
      skipped: routed.skipped,
      lmc: args.lmc,
      maxLid: r.maxLid,
      routeMs: Math.round(routeMs * 10) / 10,
      verifyMs: Math.round(verifyMs * 10) / 10,
      vlsUsed: r.vlsUsed ?? 1,
      ...(r.sl2vl ? { sl2vl: r.sl2vl } : {}),
      deadlockFreeClaimed: r.deadlockFree ?? false,
      ...(r.roots ? { roots: r.roots.map(fmtGuid) } : {}),
      notes: r.notes,
      verify: report,
      ...(traffic.length ? { traffic } : {}),
    };
    io.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } else {
    io.stdout.write(formatTable(args, routed, report, routeMs, verifyMs, traffic));
  }
  return report.ok ? 0 : 1;
}

function fmtNum(n: number, digits = 2): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

function loadLine(l: LoadStats): string {
  return `max ${fmtNum(l.max)}  mean ${fmtNum(l.mean)}  min ${fmtNum(l.min)}  p50 ${fmtNum(l.p50)}  p99 ${fmtNum(l.p99)}  (${l.links} links)`;
}

/** The --traffic patterns evaluated on the tables (routing/traffic.ts). */
function trafficOf(args: Args, fabric: Parameters<typeof evaluateTraffic>[0], lfts: Parameters<typeof evaluateTraffic>[1]): TrafficStats[] {
  const readText = (file: string): string => {
    const t = readNamedFile(file, 'traffic');
    if (typeof t !== 'string') throw new UsageError(`${t.message} (a --traffic pattern is ${PATTERN_SYNTAX})`, 'route');
    return t;
  };
  return args.traffic.map((spec) => evaluateTraffic(fabric, lfts, parseTrafficPattern(spec, readText), { samples: args.trafficSamples, seed: args.trafficSeed }));
}

function formatTable(args: Args, routed: FallbackResult, v: VerifyReport, routeMs: number, verifyMs: number, traffic: TrafficStats[]): string {
  const r = routed.result;
  const rows: Array<[string, string]> = [];
  rows.push(['topology', args.spec]);
  rows.push(['engine', routed.engine + (routed.skipped.length ? `  (skipped: ${routed.skipped.map((s) => s.engine).join(', ')})` : '')]);
  rows.push(['switches', String(v.switches)]);
  rows.push(['end ports', `${v.endPorts} (LMC ${args.lmc})`]);
  rows.push(['LIDs', `${v.lids} (max LID ${r.maxLid})`]);
  rows.push(['time to route', `${routeMs.toFixed(1)} ms`]);
  rows.push(['time to verify', `${verifyMs.toFixed(1)} ms`]);
  rows.push(['reachability', v.unreachablePairs === 0 && v.unreachableFromSwitches === 0 ? `OK (${v.pairs} CA→LID pairs, ${v.switches}×${v.lids} switch routes)` : `FAILED: ${v.unreachablePairs} of ${v.pairs} CA pairs, ${v.unreachableFromSwitches} switch routes`]);
  rows.push(['loops', v.loopEntries === 0 ? 'none' : `${v.loopLids} LIDs (${v.loopEntries} switch routes)`]);
  rows.push(['hops', `max ${v.hops.max}  mean ${fmtNum(v.hops.mean)}`]);
  if (v.stretch) rows.push(['stretch', `max ${fmtNum(v.stretch.max)}  mean ${fmtNum(v.stretch.mean, 3)}  (${v.stretch.pairsAboveShortest} pairs longer than shortest)`]);
  rows.push(['VLs used', String(r.vlsUsed ?? v.vlsUsed)]);
  for (const c of v.cdg) rows.push([`CDG VL${c.vl}`, c.cyclicComponents === 0 ? `acyclic (${c.dependencies} dependencies)` : `${c.cyclicComponents} cyclic component(s), ${c.channelsInCycles} channels (${c.dependencies} dependencies)`]);
  rows.push(['routes per link', loadLine(v.linkLoad)]);
  rows.push(['LIDs per port', loadLine(v.lftPortLoad)]);
  for (const t of traffic) rows.push([`traffic ${t.pattern}`, trafficLine(t)]);
  rows.push(['result', !v.ok ? 'FAILED' : v.deadlockFree ? 'OK' : 'OK (every LID reached, but the CDG has cycles: not deadlock-free)']);
  const w = Math.max(...rows.map(([k]) => k.length));
  let out = rows.map(([k, val]) => `${k.padEnd(w)}  ${val}`).join('\n') + '\n';
  const cyc = v.cdg.find((c) => c.exampleCycle);
  if (cyc?.exampleCycle) out += `\nexample credit loop on VL${cyc.vl}:\n  ${cyc.exampleCycle.join('\n  → ')}\n`;
  if (v.failures.length) {
    out += `\nfailures (${v.failureGroups} group(s)${v.failures.length < v.failureGroups ? `, first ${v.failures.length}` : ''}):\n`;
    for (const f of v.failures) out += `  [${f.kind}] ${f.detail} (${f.switches} switches, ${f.sources} CA sources)\n`;
  }
  if (r.notes.length) out += `\nnotes:\n${r.notes.map((n) => `  ${n}`).join('\n')}\n`;
  return out;
}

/** --what-if: the cases over the routed fabric, a line each as it is computed (text), or one JSON
 *  document at the end. */
function whatIfMain(args: Args, fabric: Fabric, routed: FallbackResult, io: CliIo): number {
  const routing: RoutingOptions = { lmc: args.lmc, ...(args.roots ? { roots: args.roots } : {}), ...(args.cnGuids ? { cnGuids: args.cnGuids } : {}), ...(args.ioGuids ? { ioGuids: args.ioGuids } : {}), ...(args.routeOrder ? { routeOrder: args.routeOrder, routeOrderNoScatter: args.routeOrderNoScatter } : {}), ...(args.seed !== undefined ? { seed: args.seed } : {}), ...(args.maxVls !== undefined ? { maxVls: args.maxVls } : {}) };
  try {
    const r = runWhatIf(fabric, routed.result, args.whatIf!, { engines: args.engines, routing, verify: args.whatIfVerify, maxLocalChanges: LOCAL_MAX_CHANGES }, args.json ? undefined : (s) => io.stdout.write(s));
    if (args.json) io.stdout.write(JSON.stringify({ topology: args.spec, whatIf: args.whatIf, ...r.json }, null, 1) + '\n');
    return r.summary.failed || r.summary.losing ? 1 : 0;
  } catch (e) {
    if (e instanceof RoutingError) {
      io.stderr.write(`ibsm route: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
}

/** `ibsm route <topology file | gen:spec> --engine NAME[,NAME...] [--lmc N] [--roots GUID,..] [--seed N] [--max-vls N] [--json]`
 *  Load a fabric, assign LIDs, route it, verify the tables and print the figures.
 *  Exit status: 0 routes verified, 1 verification failed, 2 bad usage / cannot load / cannot route. */
import { performance } from 'node:perf_hooks';
import { RoutingError, routeWithFallback, engineNames, getEngine, verifyRoutes, type FallbackResult, type LoadStats, type VerifyReport } from '../routing/index.js';
import { fmtGuid } from '../routing/graph.js';
import { assignLids, LidSpaceExhausted } from '../sm/lids.js';
import { loadFabricSpec, TopologyError } from '../model/load.js';

export interface CliIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

const USAGE = `usage: ibsm route <topology file | gen:<kind>:<params>> [options]
  --engine NAME[,NAME...]  routing engine, or an ordered fallback list (default ftree,updn,minhop)
                           engines: ${'{ENGINES}'}
  --lmc N                  LMC for CA ports, 0..7 (default 0)
  --roots GUID[,GUID...]   root switches for updn/ftree (a CA port GUID means its switch)
  --seed N                 seed for generators and for randomised tie-breaks
  --max-vls N              virtual layers dfsssp may use (default 8)
  --json                   print the result as JSON
`;

class UsageError extends Error {
  override readonly name = 'UsageError';
}

interface Args {
  spec: string;
  engines: string[];
  lmc: number;
  roots?: bigint[];
  seed?: number;
  maxVls?: number;
  json: boolean;
}

function parseIntArg(flag: string, v: string | undefined, min: number, max: number): number {
  if (v === undefined || !/^\d+$/.test(v)) throw new UsageError(`${flag} needs an integer ${min}..${max}${v === undefined ? '' : `, got "${v}"`}`);
  const n = Number(v);
  if (n < min || n > max) throw new UsageError(`${flag} must be ${min}..${max}, got ${n}`);
  return n;
}

function parseArgs(argv: string[]): Args | 'help' {
  let spec: string | undefined;
  const a: Omit<Args, 'spec'> = { engines: ['ftree', 'updn', 'minhop'], lmc: 0, json: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const eq = arg.indexOf('=');
    const flag = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '-h':
      case '--help':
        return 'help';
      case '--engine':
      case '-e': {
        const v = value();
        if (!v) throw new UsageError('--engine needs a name');
        a.engines = v.split(',').map((s) => s.trim()).filter(Boolean);
        for (const e of a.engines) getEngine(e);
        break;
      }
      case '--lmc':
        a.lmc = parseIntArg('--lmc', value(), 0, 7);
        break;
      case '--seed':
        a.seed = parseIntArg('--seed', value(), 0, 2 ** 32 - 1);
        break;
      case '--max-vls':
        a.maxVls = parseIntArg('--max-vls', value(), 1, 15);
        break;
      case '--roots': {
        const v = value();
        if (!v) throw new UsageError('--roots needs GUIDs, e.g. --roots 0x0002c90000000001,0x0002c90000000002');
        a.roots = v.split(',').map((g) => {
          const t = g.trim();
          if (!/^(0x)?[0-9a-fA-F]{1,16}$/.test(t)) throw new UsageError(`--roots: "${t}" is not a GUID (hex, e.g. 0x0002c90000000001)`);
          return BigInt(t.startsWith('0x') ? t : '0x' + t);
        });
        break;
      }
      case '--json':
        a.json = true;
        break;
      default:
        if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
        if (spec !== undefined) throw new UsageError(`only one topology may be given (got "${spec}" and "${arg}")`);
        spec = arg;
    }
  }
  if (spec === undefined) throw new UsageError('missing the topology: a file (ibnetdiscover, ibsim .net or JSON) or gen:<kind>:<params>');
  return { spec, ...a };
}

export async function routeMain(argv: string[], io: CliIo): Promise<number> {
  const usage = USAGE.replace('{ENGINES}', engineNames().join(', '));
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
      io.stderr.write(`ibsm route: ${e.message}\n${usage}`);
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
  const t1 = performance.now();
  const report = verifyRoutes(fabric, routed.result);
  const verifyMs = performance.now() - t1;
  const r = routed.result;

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
    };
    io.stdout.write(JSON.stringify(out, null, 2) + '\n');
  } else {
    io.stdout.write(formatTable(args, routed, report, routeMs, verifyMs));
  }
  return report.ok ? 0 : 1;
}

function fmtNum(n: number, digits = 2): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

function loadLine(l: LoadStats): string {
  return `max ${fmtNum(l.max)}  mean ${fmtNum(l.mean)}  min ${fmtNum(l.min)}  p50 ${fmtNum(l.p50)}  p99 ${fmtNum(l.p99)}  (${l.links} links)`;
}

function formatTable(args: Args, routed: FallbackResult, v: VerifyReport, routeMs: number, verifyMs: number): string {
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

#!/usr/bin/env node
/** The `ibsm` command: every command's options come from the one table (config/options.ts) through
 * the one parser (config/parse.ts). What a command needs beyond parsing its options (the SM, SA,
 * routing engines, simulator, discovery) is imported when that command runs, so start-up only
 * loads the option table and the parser. */
import { readFileSync, realpathSync, writeSync } from 'node:fs';
import { commandHelp, GLOBAL_USAGE, parseCommandLine, UsageError } from '../config/parse.js';
import { formatEffectiveConfig, resolveConfig, setting, type EffectiveConfig } from '../config/file.js';
import { COMMANDS, type Command } from '../config/options.js';
import { Logger, ProgressTty } from '../util/log.js';
import { processHost } from '../util/host.js';
import { PROCESS_IO } from './stdio.js';
import { installEarlySignals } from './signals.js';

export { UsageError };
export { PROCESS_IO } from './stdio.js';

export interface Io {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** --sim and --umad exclude each other, wherever each came from. */
function checkBackend(c: EffectiveConfig): void {
  if (setting(c, 'sim') !== undefined && setting(c, 'umad') === true) throw new UsageError('give either --sim or --umad, not both');
}

async function discoverCmd(argv: string[], io: Io): Promise<number> {
  const args = parseCommandLine('discover', argv);
  if (args.help) return help(io, 'discover');
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}"`, 'discover');
  const c = resolveConfig('discover', args, undefined, processHost());
  checkBackend(c);
  const [{ discover }, { smpClientOf }, { formatIbnetdiscover }, { fabricToJson }, { openBackend }] = await Promise.all([
    import('../sm/discovery.js'),
    import('../sm/smp-client.js'),
    import('../model/ibnetdiscover.js'),
    import('../model/json.js'),
    import('../api/backend.js'),
  ]);
  const { optionsFor, smOptionsOf } = await import('../api/sm-config.js');
  const be = await openBackend(optionsFor('backend', smOptionsOf(c)));
  try {
    const smp = smpClientOf(be.rpc);
    // On a terminal: the progress line, ended before anything else is written (an error included).
    const tty = io.stderr === process.stderr && process.stderr.isTTY ? new ProgressTty((s) => io.stderr.write(s)) : undefined;
    let res: Awaited<ReturnType<typeof discover>>;
    try {
      res = await discover(smp, { onProgress: tty ? (p) => tty.progress(`discovering: ${p.nodes} nodes, ${p.smps} SMPs`) : undefined });
    } finally {
      tty?.end();
    }
    if (setting(c, 'json')) io.stdout.write(fabricToJson(res.fabric) + '\n');
    else io.stdout.write(formatIbnetdiscover(res.fabric, { sourceNode: res.smNode, sourcePort: res.smPort }));
    return 0;
  } finally {
    await be.close();
  }
}

/** The effective configuration of `ibsm run` (defaults ← config file ← command line). */
export function runConfig(argv: string[], cmd: 'run' | 'config' = 'run', defaultFile?: string): { config: EffectiveConfig; help: boolean } {
  const args = parseCommandLine(cmd, argv);
  if (args.help) return { config: { settings: new Map() }, help: true };
  if (args.positionals.length) throw new UsageError(`unexpected argument "${args.positionals[0]}"`, cmd);
  // The host facts the defaults go by (root, under ibsim), read here at the edge.
  const config = resolveConfig(cmd, args, defaultFile, processHost());
  checkBackend(config);
  if (setting(config, 'metrics-port') !== undefined && setting(config, 'metrics-listen') !== undefined) throw new UsageError('give either --metrics-port or --metrics-listen, not both', cmd);
  return { config, help: false };
}

async function runCmd(argv: string[], io: Io): Promise<number> {
  let r: ReturnType<typeof runConfig>;
  try {
    r = runConfig(argv);
  } catch (e) {
    // A configuration refused ends the process too: with --log-format json, as a JSON log line
    // with its code (scripts read one format); in text, as the usage message below.
    const { logFatal, logFormatOfArgv, runIoOf } = await import('./run.js');
    if (!(e instanceof UsageError) || logFormatOfArgv(argv) !== 'json') throw e;
    return logFatal(new Logger({ write: (l) => void io.stderr.write(l + '\n') }, 'info', 'json'), e, 'start', false, runIoOf(io));
  }
  if (r.help) return help(io, 'run');
  // On a device, TurboFan waits for the first 2 s of CPU (cli/tiering.ts).
  if (setting(r.config, 'umad') === true) await (await import('./tiering.js')).holdTurbofan();
  // While the heap is small, V8's old generation grows little past its live size (cli/heap.ts).
  await (await import('./heap.js')).holdHeapGrowth();
  const { runSm, runIoOf } = await import('./run.js');
  // A reload (SIGHUP, ibsm reload) reads the configuration as this start did: file and command line.
  return runSm(r.config, runIoOf(io), () => runConfig(argv).config);
}

async function configCmd(argv: string[], io: Io): Promise<number> {
  if (!argv.includes('--check')) {
    const r = runConfig(argv, 'config');
    if (r.help) return help(io, 'config');
    io.stdout.write(formatEffectiveConfig(r.config));
    return 0;
  }
  // --check: the options, the config file and every file it names, without running. Each problem
  // on its own line (file:line where there is one); exit 0 when all is good, 2 when not.
  if (argv.includes('--help') || argv.includes('-h')) return help(io, 'config');
  const { checkConfiguration } = await import('../config/files.js');
  const check = await checkConfiguration(() => runConfig(argv, 'config').config);
  const problems = check.ok ? [] : check.problems;
  if (!check.config) {
    for (const p of problems) io.stdout.write(`problem: ${p.message}\n`);
    io.stdout.write(`configuration refused: ${problems.length} problem${problems.length > 1 ? 's' : ''}\n`);
    return 2;
  }
  const files = check.files ?? {};
  const r = { config: check.config };
  const f = r.config.file;
  if (f) io.stdout.write(`config file ${f.file} (${f.format}): read\n`);
  for (const n of f?.notes ?? []) io.stdout.write(`note: ${n}\n`);
  for (const d of files.guid2lidDropped ?? []) io.stdout.write(`note: guid2lid entry not used: ${d}\n`);
  const said: Array<[keyof typeof files, string, (v: never) => string]> = [
    ['partitions', 'partitions', (p: { partitions: unknown[] }) => `${p.partitions.length} partitions`],
    ['qos', 'qos-policy', (q: { rules: unknown[] }) => `${q.rules.length} match rules`],
    ['roots', 'root-guid-file', (g: unknown[]) => `${g.length} GUIDs`],
    ['cnGuids', 'cn-guid-file', (g: unknown[]) => `${g.length} GUIDs`],
    ['ioGuids', 'io-guid-file', (g: unknown[]) => `${g.length} GUIDs`],
    ['routeOrder', 'guid-routing-order-file', (g: unknown[]) => `${g.length} GUIDs`],
    ['prefixRoutes', 'prefix-routes', (g: unknown[]) => `${g.length} routes`],
    ['guid2lid', 'guid2lid', (g: Map<unknown, unknown>) => `${g.size} entries`],
    ['topology', 'sim', (t: { nodes: unknown[] }) => `${t.nodes.length} nodes`],
    ['expectedTopology', 'topology', (t: { nodes: unknown[] }) => `${t.nodes.length} nodes expected`],
  ];
  for (const [k, opt, what] of said) if (files[k] !== undefined) io.stdout.write(`${opt} ${setting<string>(r.config, opt)}: good (${what(files[k] as never)})\n`);
  for (const p of problems) io.stdout.write(`problem: ${p.message}\n`);
  io.stdout.write(problems.length ? `configuration refused: ${problems.length} problem${problems.length > 1 ? 's' : ''}\n` : 'configuration good\n');
  return problems.length ? 2 : 0;
}

function help(io: Io, cmd: Command, extra = ''): number {
  io.stdout.write(commandHelp(cmd, extra));
  return 0;
}

function version(io: Io): number {
  const line = `ibsm ${readVersion()}\n`;
  // One short line to the process's own stdout goes to fd 1 directly: making process.stdout (a
  // stream, loading node:stream and its kin) would be a good part of what --version costs (cli/stdio.ts).
  if (io === PROCESS_IO) {
    try {
      writeSync(1, line);
      return 0;
    } catch {
      // fd 1 refused it: through the stream, which reports the error as before
    }
  }
  io.stdout.write(line);
  return 0;
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [cmd, ...rest] = argv;
  const known = (COMMANDS as readonly string[]).includes(cmd ?? '') ? (cmd as Command) : undefined;
  try {
    const end = rest.indexOf('--');
    if (known && (end < 0 ? rest : rest.slice(0, end)).some((a) => a === '-V' || a === '--version')) return version(io);
    switch (cmd) {
      case 'discover':
        return await discoverCmd(rest, io);
      case 'route': {
        const { routeMain } = await import('./route.js');
        return await routeMain(rest, io);
      }
      case 'run':
        return await runCmd(rest, io);
      case 'config':
        return await configCmd(rest, io);
      case 'status':
      case 'resweep':
      case 'reroute':
      case 'reload':
      case 'isolate':
      case 'release':
      case 'dump':
      case 'vport': {
        if (rest.includes('--help') || rest.includes('-h')) return help(io, cmd);
        const { controlMain } = await import('./ops.js');
        return await controlMain(cmd, rest, io);
      }
      case 'check': {
        const { checkMain } = await import('./check.js');
        return await checkMain(rest, io, () => help(io, 'check'));
      }
      case 'what-if': {
        if (rest.includes('--help') || rest.includes('-h')) return help(io, cmd);
        const { whatIfClientMain } = await import('./what-if.js');
        return await whatIfClientMain(rest, io);
      }
      case 'topo': {
        if (rest.includes('--help') || rest.includes('-h')) return help(io, cmd);
        const { topoMain } = await import('./ops.js');
        return await topoMain(rest, io);
      }
      case 'query': {
        const { queryMain } = await import('./query.js');
        const { openQuerySession } = await import('./session.js');
        return await queryMain(rest, io, { openRpc: openQuerySession });
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout.write(GLOBAL_USAGE);
        return cmd === undefined ? 2 : 0;
      case '--version':
      case '-V':
        return version(io);
      default:
        throw new UsageError(`unknown command "${cmd}" (commands: ${COMMANDS.join(', ')})`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      const c = e.command ?? known;
      io.stderr.write(`ibsm${c ? ` ${c}` : ''}: ${e.message}\n${c ? `(ibsm ${c} --help lists its options)\n` : GLOBAL_USAGE}`);
      return 2;
    }
    const err = e as Error;
    io.stderr.write(`ibsm: ${err.name && err.name !== 'Error' ? err.name + ': ' : ''}${err.message}\n`);
    if (process.env.IBSM_DEBUG) io.stderr.write(`${err.stack}\n`);
    return 1;
  }
}

/** The package's version: package.json two levels up (dist/cli/, dist/bundle/), or the one the
 * single executable was built with (it has no package.json beside it: scripts/launcher.mjs). */
export function readVersion(): string {
  const built = (globalThis as { __ibsmVersion?: string }).__ibsmVersion;
  if (built !== undefined) return built;
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

// (Under the single executable argv[1] is the command as typed, `ibsm` found on PATH: no file here.)
const isMain = ((): boolean => {
  try {
    return process.argv[1] !== undefined && new URL(import.meta.url).pathname === realpathSync(process.argv[1]);
  } catch {
    return false;
  }
})();
// No top-level await: the bundle (scripts/build-bundle.mjs) is CommonJS, for V8's code cache.
if (isMain) {
  // The signals before anything else (the bin installs them earlier still): cli/signals.ts.
  installEarlySignals(process.argv[2] === 'run');
  void main(process.argv.slice(2), PROCESS_IO).then((code) => {
    process.exitCode = code;
  });
}

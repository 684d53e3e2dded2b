#!/usr/bin/env node
/** The `ibsm` command. */
import { readFileSync, realpathSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { discover } from '../sm/discovery.js';
import { smpClientOf } from '../sm/smp-client.js';
import { formatIbnetdiscover } from '../model/ibnetdiscover.js';
import { fabricToJson } from '../model/json.js';
import { openBackend, DEFAULT_SIM_SPEC } from './backend.js';
import { Logger } from '../util/log.js';
import { runSm, type RunOptions } from './run.js';
import { engineNames } from '../routing/registry.js';

export interface Io {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const USAGE = `usage: ibsm <command> [options]

commands:
  discover [--sim <file|gen:spec> | --umad [--ca NAME] [--port N]] [--json]
      directed-route sweep; prints the topology in ibnetdiscover's format (or JSON)
  route <file|gen:spec> --engine NAME [--lmc N] [--roots GUID,...] [--seed N] [--json]
      run a routing engine offline and print the verifier's figures
  run [--sim <file|gen:spec> | --umad [--ca NAME] [--port N]] [--routing a,b] [--lmc N]
      [--guid2lid FILE] [--partitions FILE] [--sweep-interval S] [--config FILE] [--once]
      [--log-format text|json] [--verbose] [--mkey KEY] [--mkey-protect 0-3] [--mkey-lease S]
      [--subnet-timeout N] [--priority N] [--sm-key KEY] [--poll-interval MS] [--poll-retries N]
      [--seed N] [--metrics-port N] [--sa-cache N] [--qos-policy FILE]
      the subnet manager and SA; logs "SUBNET UP" when the subnet is up
      (SMPs lost or refused are retried; what still fails is logged, counted and left for the next
       sweep: nothing the fabric does ends it; no engine of --routing applies: updn, and an ERROR)
      (--priority 0-15: the higher wins the SM election; a standby polls the master every
       --poll-interval ms, default 500, and takes over after --poll-retries misses, default 3)
      (--sa-cache: PathRecord answers kept per sweep for repeated queries, default 32768, 0 = off)
      (--qos-policy: OpenSM's qos-policy.conf decides PathRecord SLs and MTU/rate limits)
  query <record> [filters] [--sim <file|gen:spec> | --umad [--ca NAME] [--ca-port N]] [--json]
      SA client (like saquery); on --sim the subnet is brought up in-process first
      (ibsm query --help lists the records and filters)

With neither --sim nor --umad, commands run on the embedded simulated fabric (${DEFAULT_SIM_SPEC}).
`;

const backendOptions = {
  sim: { type: 'string' },
  umad: { type: 'boolean' },
  ca: { type: 'string' },
  port: { type: 'string' },
  seed: { type: 'string' },
  attach: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** " (did you mean X?)" for the closest name by edit distance, when one is close. */
function suggest(word: string, names: readonly string[]): string {
  const dist = (a: string, b: string): number => {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) d[0]![j] = j;
    for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length]![b.length]!;
  };
  let best: string | undefined;
  let bd = Infinity;
  for (const n of names) {
    const x = dist(word, n);
    if (x < bd) [best, bd] = [n, x];
  }
  return best !== undefined && bd <= 2 ? ` (did you mean "${best}"?)` : '';
}

function intOpt(name: string, v: string | undefined, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${v}"`);
  return n;
}

function parse<O extends NonNullable<ParseArgsConfig['options']>>(argv: string[], options: O, positionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: positionals, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

async function discoverCmd(argv: string[], io: Io): Promise<number> {
  const { values } = parse(argv, { ...backendOptions, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (values.sim && values.umad) throw new UsageError('give either --sim or --umad, not both');
  const be = await openBackend({
    sim: values.sim,
    umad: values.umad,
    ca: values.ca,
    port: intOpt('port', values.port, 1, 254),
    seed: intOpt('seed', values.seed, 0, 2 ** 31),
    attach: values.attach,
  });
  try {
    const smp = smpClientOf(be.rpc);
    const progress = process.stderr.isTTY ? (p: { nodes: number; smps: number }) => process.stderr.write(`\rdiscovering: ${p.nodes} nodes, ${p.smps} SMPs`) : undefined;
    const res = await discover(smp, { onProgress: progress });
    if (progress) process.stderr.write('\n');
    if (values.json) io.stdout.write(fabricToJson(res.fabric) + '\n');
    else io.stdout.write(formatIbnetdiscover(res.fabric, { sourceNode: res.smNode, sourcePort: res.smPort }));
    return 0;
  } finally {
    await be.close();
  }
}

interface ConfigFile {
  sim?: string;
  umad?: boolean;
  ca?: string;
  port?: number;
  routing?: string | string[];
  lmc?: number;
  guid2lid?: string;
  partitions?: string;
  sweepInterval?: number;
  logFormat?: 'text' | 'json';
  verbose?: boolean;
  mkey?: string;
  mkeyProtectBits?: number;
  mkeyLease?: number;
  subnetTimeout?: number;
  priority?: number;
  smKey?: string;
  pollInterval?: number;
  pollRetries?: number;
  metricsPort?: number;
  saCache?: number;
  qosPolicy?: string;
}

const CONFIG_KEYS = new Set(['sim', 'umad', 'ca', 'port', 'routing', 'lmc', 'guid2lid', 'partitions', 'sweepInterval', 'logFormat', 'verbose', 'mkey', 'mkeyProtectBits', 'mkeyLease', 'subnetTimeout', 'priority', 'smKey', 'pollInterval', 'pollRetries', 'metricsPort', 'saCache', 'qosPolicy']);

export function readConfig(file: string): ConfigFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`config file ${file}: ${(e as Error).message}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new UsageError(`config file ${file}: expected a JSON object`);
  for (const k of Object.keys(raw)) if (!CONFIG_KEYS.has(k)) throw new UsageError(`config file ${file}: unknown key "${k}" (known: ${[...CONFIG_KEYS].join(', ')})`);
  return raw as ConfigFile;
}

async function runCmd(argv: string[], io: Io): Promise<number> {
  const { values } = parse(argv, {
    ...backendOptions,
    routing: { type: 'string' },
    lmc: { type: 'string' },
    guid2lid: { type: 'string' },
    partitions: { type: 'string' },
    'sweep-interval': { type: 'string' },
    config: { type: 'string' },
    once: { type: 'boolean' },
    'log-format': { type: 'string' },
    verbose: { type: 'boolean', short: 'v' },
    mkey: { type: 'string' },
    'mkey-protect': { type: 'string' },
    'mkey-lease': { type: 'string' },
    'subnet-timeout': { type: 'string' },
    priority: { type: 'string' },
    'sm-key': { type: 'string' },
    'poll-interval': { type: 'string' },
    'poll-retries': { type: 'string' },
    'metrics-port': { type: 'string' },
    'sa-cache': { type: 'string' },
    'qos-policy': { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const cfg: ConfigFile = values.config ? readConfig(values.config) : {};
  const sim = values.sim ?? cfg.sim;
  const umad = values.umad ?? cfg.umad ?? false;
  if (sim && umad) throw new UsageError('give either --sim or --umad, not both');
  const logFormat = values['log-format'] ?? cfg.logFormat ?? 'text';
  if (logFormat !== 'text' && logFormat !== 'json') throw new UsageError(`--log-format must be text or json, got "${logFormat}"`);
  const routingRaw = values.routing ?? cfg.routing ?? 'ftree,updn,minhop';
  if (typeof routingRaw !== 'string' && !(Array.isArray(routingRaw) && routingRaw.every((r) => typeof r === 'string'))) throw new UsageError('routing must be a comma-separated list of engine names (or, in a config file, an array of names)');
  const routing = (Array.isArray(routingRaw) ? routingRaw : routingRaw.split(',')).map((s) => s.trim()).filter(Boolean);
  // Checked before the first SMP: a typo must not leave a half-configured fabric behind.
  const known = engineNames();
  for (const r of routing) if (!known.includes(r)) throw new UsageError(`unknown routing engine "${r}"${suggest(r, known)}; known engines: ${known.join(', ')}`);
  if (!routing.length) throw new UsageError('--routing names no engine');
  const num = (name: string, cli: string | undefined, conf: number | undefined, min: number, max: number): number | undefined =>
    cli !== undefined ? intOpt(name, cli, min, max) : conf !== undefined ? intOpt(name, String(conf), min, max) : undefined;
  const key = (name: string, text: string | undefined): bigint | undefined => {
    if (text === undefined) return undefined;
    if (typeof text !== 'string' || !/^(0x[0-9a-fA-F]{1,16}|\d+)$/.test(text) || BigInt(text) >= 1n << 64n) throw new UsageError(`--${name} must be a 64-bit number (e.g. 0x1234), got "${text}"`);
    return BigInt(text);
  };
  const mkey = key('mkey', values.mkey ?? cfg.mkey);
  const smKey = key('sm-key', values['sm-key'] ?? cfg.smKey);
  const opts: RunOptions = {
    sim,
    umad,
    ca: values.ca ?? cfg.ca,
    port: num('port', values.port, cfg.port, 1, 254),
    attach: values.attach,
    seed: intOpt('seed', values.seed, 0, 2 ** 31),
    routing,
    lmc: num('lmc', values.lmc, cfg.lmc, 0, 7) ?? 0,
    guid2lidFile: values.guid2lid ?? cfg.guid2lid,
    partitionsFile: values.partitions ?? cfg.partitions,
    qosPolicyFile: values['qos-policy'] ?? cfg.qosPolicy,
    sweepIntervalS: num('sweep-interval', values['sweep-interval'], cfg.sweepInterval, 0, 86400) ?? 10,
    once: values.once ?? false,
    mkey,
    mkeyProtectBits: num('mkey-protect', values['mkey-protect'], cfg.mkeyProtectBits, 0, 3),
    mkeyLease: num('mkey-lease', values['mkey-lease'], cfg.mkeyLease, 0, 65535),
    subnetTimeout: num('subnet-timeout', values['subnet-timeout'], cfg.subnetTimeout, 0, 31),
    priority: num('priority', values.priority, cfg.priority, 0, 15),
    smKey,
    pollIntervalMs: num('poll-interval', values['poll-interval'], cfg.pollInterval, 10, 600_000),
    pollRetries: num('poll-retries', values['poll-retries'], cfg.pollRetries, 0, 100),
    log: new Logger(undefined, values.verbose || cfg.verbose ? 'debug' : 'info', logFormat),
    progress: process.stderr.isTTY === true,
    metricsPort: num('metrics-port', values['metrics-port'], cfg.metricsPort, 1, 65535),
    saCache: num('sa-cache', values['sa-cache'], cfg.saCache, 0, 1_000_000),
  };
  return runSm(opts);
}

export async function main(argv: string[], io: Io): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case 'discover':
        return await discoverCmd(rest, io);
      case 'route': {
        const { routeMain } = await import('./route.js');
        return await routeMain(rest, io);
      }
      case 'run':
        return await runCmd(rest, io);
      case 'query': {
        const { queryMain } = await import('./query.js');
        const { openQuerySession } = await import('./session.js');
        return await queryMain(rest, io, { openRpc: openQuerySession });
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.stdout.write(USAGE);
        return cmd === undefined ? 2 : 0;
      case '--version':
        io.stdout.write(`ibsm ${readVersion()}\n`);
        return 0;
      default:
        throw new UsageError(`unknown command "${cmd}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`ibsm: ${e.message}\n${USAGE}`);
      return 2;
    }
    const err = e as Error;
    io.stderr.write(`ibsm: ${err.name && err.name !== 'Error' ? err.name + ': ' : ''}${err.message}\n`);
    if (process.env.IBSM_DEBUG) io.stderr.write(`${err.stack}\n`);
    return 1;
  }
}

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

const isMain = process.argv[1] !== undefined && new URL(import.meta.url).pathname === realpathSync(process.argv[1]);
if (isMain) {
  const code = await main(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr });
  process.exitCode = code;
}

/** The files a configuration names (partitions.conf, qos-policy.conf, the GUID files, guid2lid,
 * prefix-routes.conf, the topology file), read and checked whole, without touching the fabric:
 * `ibsm config --check`, the start of `ibsm run` (before the first SMP) and a reload (SIGHUP,
 * `ibsm reload`: the new configuration is checked whole before anything changes) all use
 * `loadConfigFiles`. Every problem is typed (ConfigProblem) and names where the file was given
 * (`--partitions`, `partition_config_file at /etc/opensm/opensm.conf:167`, `"partitions" in
 * ibsm.conf`), the file's role and, for a parse error, file:line. */
import { readFileSync } from 'node:fs';
import { parsePartitions, PartitionPlan } from '../model/partitions.js';
import { parseQosPolicy, type QosPolicy } from '../model/qos-policy.js';
import { parseGuid2Lid, type LidRange } from '../sm/lids.js';
import { parsePrefixRoutes, type PrefixRoute } from '../sa/prefix-routes.js';
import { parseGuidFile } from '../model/guid-file.js';
import { parseRouteOrder } from '../routing/route-order.js';
import type { Fabric } from '../model/fabric.js';
import { setting, type EffectiveConfig } from './file.js';
import { UsageError } from './parse.js';
import { optionByName } from './options.js';
import { IbsmError } from '../util/errors.js';

/** The options that name a file, with the file's role (what it is for). */
export const FILE_ROLES: Readonly<Record<string, string>> = {
  partitions: 'partitions.conf: the partitions, their P_Keys and IPoIB groups',
  'qos-policy': 'qos-policy.conf: the QoS policy (PathRecord SLs and limits)',
  'root-guid-file': 'the root switch GUIDs for updn/ftree',
  'cn-guid-file': 'the compute-node port GUIDs for ftree',
  'io-guid-file': 'the I/O-node port GUIDs for ftree',
  'guid-routing-order-file': 'the port GUIDs minhop, updn and dfsssp route first, in order',
  'prefix-routes': 'prefix-routes.conf: routers for off-subnet GIDs',
  guid2lid: 'the guid2lid file: LIDs kept across restarts',
  sim: 'the topology file of the simulated fabric',
  topology: 'the expected topology (ibnetdiscover format or a cabling plan)',
};

/** One problem of a configuration's files. */
export interface ConfigProblem {
  /** The option (long name) that names the file. */
  option: string;
  file: string;
  /** Where the file was given: `--partitions`, `partition_config_file at FILE:LINE`, `"partitions" in FILE`. */
  origin: string;
  kind: 'missing' | 'not-a-file' | 'unreadable' | 'invalid';
  /** The whole message (names the origin, the role and the file, or the file:line of a parse error). */
  message: string;
}

/** The configuration's files, parsed. */
export interface ConfigFiles {
  partitions?: PartitionPlan;
  qos?: QosPolicy;
  roots?: bigint[];
  cnGuids?: bigint[];
  ioGuids?: bigint[];
  routeOrder?: bigint[];
  prefixRoutes?: PrefixRoute[];
  guid2lid?: Map<bigint, LidRange>;
  /** Duplicates in the guid2lid file and how they were resolved (file:line each). */
  guid2lidDropped?: string[];
  topology?: Fabric;
  /** The expected topology (--topology). */
  expectedTopology?: Fabric;
}


/** A file's text, or the problem reading it (ENOENT, EISDIR, EACCES in words). */
export function readNamedFile(file: string, option: string, origin = `--${option}`): string | ConfigProblem {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const [kind, why]: [ConfigProblem['kind'], string] =
      code === 'ENOENT' ? ['missing', 'does not exist'] : code === 'EISDIR' ? ['not-a-file', 'is a directory, not a file'] : code === 'EACCES' ? ['unreadable', 'cannot be read (permission denied)'] : ['unreadable', `cannot be read (${(e as Error).message})`];
    return { option, file, origin, kind, message: `${origin} ${file} (${FILE_ROLES[option] ?? 'a file'}): ${why}` };
  }
}

/** A file problem as an error to throw (a configuration refused: exit 2). */
export class ConfigFileError extends IbsmError {
  override readonly name = 'ConfigFileError';
  /** `file`: the first problem's. */
  constructor(readonly problems: readonly ConfigProblem[]) {
    super(problems.map((p) => p.message).join('\n'), { file: problems[0]?.file });
  }
}

/** Where an option's value came from, as an operator finds it again. */
export function originOf(c: EffectiveConfig, option: string): string {
  const s = c.settings.get(option);
  const o = optionByName(option);
  if (!s || s.source === 'command line' || s.source === 'default') return `--${option}`;
  const f = c.file;
  const line = f?.lines?.get(option);
  if (f?.format === 'opensm.conf' && o?.opensm) return `${o.opensm} at ${f.file}${line ? `:${line}` : ''}`;
  return `"${o?.key ?? option}" in ${f?.file ?? s.source.slice(5)}`;
}

/** Read and check every file the configuration names. Nothing is thrown for a file: each problem
 * is returned (typed), with what could be read. `topology: false`: the topology file only read,
 * not parsed (the start of `ibsm run`, which loads it next). */
export async function loadConfigFiles(c: EffectiveConfig, o: { topology?: boolean } = {}): Promise<{ files: ConfigFiles; problems: ConfigProblem[] }> {
  // the topology loaders only for a topology file (not loaded on a device)
  const sim = setting<string>(c, 'sim');
  const topo = sim !== undefined && !sim.startsWith('gen:') && setting(c, 'umad') !== true;
  const parseTopologyText = topo && o.topology !== false ? (await import('../model/load.js')).parseTopologyText : topo ? () => undefined : undefined;
  const files: ConfigFiles = {};
  const problems: ConfigProblem[] = [];
  const each = <T>(option: string, parse: (text: string, file: string) => T, exists?: 'may-not-exist'): T | undefined => {
    const file = setting<string>(c, option);
    if (file === undefined || file === 'none') return undefined;
    const origin = originOf(c, option);
    const text = readNamedFile(file, option, origin);
    if (typeof text !== 'string') {
      if (!(exists && text.kind === 'missing')) problems.push(text);
      return undefined;
    }
    try {
      return parse(text, file);
    } catch (e) {
      const msg = (e as Error).message;
      // parse errors start with file:line; say where the file was given
      problems.push({ option, file, origin, kind: 'invalid', message: `${msg.startsWith(file) ? msg : `${file}: ${msg}`} (${origin}: ${FILE_ROLES[option]})` });
      return undefined;
    }
  };
  files.partitions = each('partitions', parsePartitions);
  files.qos = each('qos-policy', parseQosPolicy);
  files.roots = each('root-guid-file', parseGuidFile);
  files.cnGuids = each('cn-guid-file', parseGuidFile);
  files.ioGuids = each('io-guid-file', parseGuidFile);
  files.routeOrder = each('guid-routing-order-file', parseRouteOrder);
  files.prefixRoutes = each('prefix-routes', parsePrefixRoutes);
  const dropped: string[] = [];
  files.guid2lid = each('guid2lid', (t, f) => parseGuid2Lid(t, f, dropped), 'may-not-exist');
  if (dropped.length) files.guid2lidDropped = dropped;
  if (parseTopologyText) files.topology = each('sim', parseTopologyText);
  if (setting(c, 'topology') !== undefined) {
    // read at the start of ibsm run (parsed where the SM opens), parsed by a check
    const parse = o.topology !== false ? (await import('../model/topology-file.js')).parseExpectedTopology : (): undefined => undefined;
    files.expectedTopology = each('topology', parse);
  }
  for (const k of Object.keys(files) as Array<keyof ConfigFiles>) if (files[k] === undefined) delete files[k];
  return { files, problems };
}

/** The outcome of checking a whole configuration: good (with the files parsed), or every problem. */
export type ConfigCheck =
  | { ok: true; config: EffectiveConfig; files: ConfigFiles }
  | { ok: false; config?: EffectiveConfig; files?: ConfigFiles; problems: ConfigProblem[] };

/** Check a whole configuration without running: the options and the config file (`resolve`: the
 * command line resolved against the config file, as `ibsm run` resolves it, e.g. cli/main.ts's
 * runConfig), then every file it names. `ibsm config --check` prints it; a reload (SIGHUP,
 * `ibsm reload`) applies nothing unless it is ok, and keeps the running configuration otherwise. */
export async function checkConfiguration(resolve: () => EffectiveConfig): Promise<ConfigCheck> {
  let config: EffectiveConfig;
  try {
    config = resolve();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    // an opensm.conf reports all its problems at once, one per line after a heading
    const lines = e.message.split('\n').filter((l) => !/^\d+ problems in /.test(l)).map((l) => l.trim());
    // an option's problem names the option (`--lmc ...`); a config file's, the file and line
    return {
      ok: false,
      problems: lines.map((message) => {
        const opt = /^--([a-z0-9-]+)/.exec(message)?.[1];
        const at = /^(?:config file )?(.+?)(?::\d+)?: /.exec(message);
        return { option: opt ?? 'config', file: opt ? '' : (at?.[1] ?? ''), origin: opt ? `--${opt}` : '--config', kind: 'invalid' as const, message };
      }),
    };
  }
  const { files, problems } = await loadConfigFiles(config);
  return problems.length ? { ok: false, config, files, problems } : { ok: true, config, files };
}

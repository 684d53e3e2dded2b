/** The one option table: every option of every `ibsm` command, with its type, default, help, the
 * key it has in ibsm's config file and the opensm.conf key it maps from. The argv parser
 * (config/parse.ts), `--help`, the config-file check (config/file.ts), `ibsm config` and the
 * README's option tables (checked by test/config.test.ts) are all derived from it. */
import { DEFAULT_FALLBACK, engineNames } from '../routing/registry.js';
import { QOS_VL_DEFAULTS, qosVlSettings } from '../model/qos-policy.js';
import { DEFAULT_SA_LIMITS } from '../sa/limits.js';
import { parseListenAddress } from '../util/listen.js';
import { DEFAULT_SM_KEY } from '../wire/sma.js';
import { formatGuid } from '../util/guid.js';
import { parseTopologyActions } from '../model/topology-classes.js';
import { parseFlapPolicy } from '../sm/health-flap-policy.js';
import { parseUnresponsivePolicy } from '../sm/health-unresponsive-policy.js';
import { parseErrorPolicy } from '../sm/health-errors-policy.js';
import { WHAT_IF_SYNTAX } from '../routing/what-if-cases.js';
import type { SubnetOptions } from '../subnet.js';
import type { SaLimits } from '../sa/limits.js';
import type { SaServerOptions } from '../sa/server.js';
import type { BackendOptions } from '../api/backend.js';
import type { MadRpcOptions } from '../rpc/madrpc-types.js';

export type Command = 'run' | 'discover' | 'route' | 'query' | 'config' | 'status' | 'resweep' | 'reroute' | 'reload' | 'dump' | 'topo' | 'what-if' | 'check' | 'vport' | 'isolate' | 'release';
export const COMMANDS: readonly Command[] = ['discover', 'route', 'run', 'query', 'config', 'status', 'resweep', 'reroute', 'reload', 'dump', 'topo', 'what-if', 'check', 'vport', 'isolate', 'release'];
/** The commands that talk to a running SM through its control socket. */
export const CONTROL_COMMANDS: readonly Command[] = ['status', 'resweep', 'reroute', 'reload', 'dump', 'topo', 'what-if', 'vport', 'isolate', 'release'];

export type OptionType = 'boolean' | 'string' | 'int' | 'key64' | 'list' | 'enum';
export type OptionValue = boolean | string | number | bigint | string[];

export interface OptionSpec {
  /** Long name (`--name`). */
  readonly name: string;
  /** Older long names still accepted (not listed in --help or the docs). */
  readonly aliases?: readonly string[];
  readonly short?: string;
  readonly type: OptionType;
  /** What the value looks like in --help (FILE, N, KEY, ...). */
  readonly arg?: string;
  readonly min?: number;
  readonly max?: number;
  readonly choices?: readonly string[];
  /** The default; a function for defaults that depend on the host and the other options (the
   * guid2lid cache as root on a real HCA); `get` reads another option's value by name, `host` is
   * what the caller read of the host (the table itself reads nothing). */
  readonly default?: OptionValue | ((get: (name: string) => OptionValue | undefined, host: HostFacts) => OptionValue | undefined);
  /** How the default reads in --help and the README when it is not the value itself. */
  readonly defaultText?: string;
  readonly help: string;
  readonly commands: readonly Command[];
  /** The key in ibsm's config file and openSm's option; absent: command line only. A value with a
   * unit says it in the key (`sweepIntervalS`, `pollIntervalMs`, `logMaxSizeMb`). */
  readonly key?: string;
  /** Older config-file keys still read (a deprecation note names the new key); not listed by
   * `ibsm config` nor in the docs. */
  readonly keyAliases?: readonly string[];
  /** The opensm.conf key it maps from (config/opensm-conf.ts converts the value). */
  readonly opensm?: string;
  /** The option may repeat (values collected in order). */
  readonly repeat?: boolean;
  /** Extra check of a parsed value: the problem, or undefined. */
  readonly check?: (v: OptionValue) => string | undefined;
  /** Where openSm (api/sm-config.ts) takes a config key's value; every config key of `ibsm run`
   * has one (test/option-flow.test.ts). See OptionTarget. */
  readonly to?: OptionTarget | readonly OptionTarget[];
  /** A reload applies it to the running SM (api/sm.ts `reload`; RELOADABLE_KEYS); otherwise a
   * change waits for a restart. */
  readonly live?: boolean;
}

/** Where a config key's value goes, so that no hand-written mapping restates the table:
 * - `subnet.F`: the field F of the SM's SubnetOptions (`saLimits.F`, `saServer.F`: the SA's bags);
 * - `backend.F`: the field F of the backend openSm opens (`rpc.F`: of its MadRpc);
 * - `openSm`: openSm reads it itself (a file it reads and checks, the log, the metrics and the web
 *   view, the PerfMgr, the guid2lid cache: api/sm.ts, sm-files.ts);
 * - `run`: only `ibsm run` uses it (the control socket), openSm ignores it.
 * A value given in seconds (a key named …S) to a field in milliseconds (named …Ms) is multiplied by 1,000. */
export type OptionTarget =
  | `subnet.${Exclude<keyof SubnetOptions, 'saLimits' | 'saServer'> & string}`
  | `subnet.saLimits.${keyof SaLimits & string}`
  | `subnet.saServer.${keyof SaServerOptions & string}`
  | `backend.${Exclude<keyof BackendOptions, 'rpc'> & string}`
  | `backend.rpc.${keyof MadRpcOptions & string}`
  | 'openSm'
  | 'run';

/** What the host-dependent defaults depend on, read by the caller at its edge (cli/main.ts:
 * `processHost()` in util/host.ts) and passed in: the table reads neither the environment nor the uid. */
export interface HostFacts {
  /** Running as root (uid 0). */
  root: boolean;
  /** Under ibsim's umad2sim preload (LD_PRELOAD): the "real HCA" is a simulator. */
  umad2sim: boolean;
}

/** A host with no facts to offer: not root, not under ibsim (the API's default: a library does not
 * pick system paths from the uid it runs as). */
export const PLAIN_HOST: HostFacts = Object.freeze({ root: false, umad2sim: false });

/** The configuration file read when `--config` is not given (only if it exists). */
export const DEFAULT_CONFIG_FILE = '/etc/ibsm/ibsm.conf';
/** OpenSM's guid2lid cache: ibsm's default when running as root, so LIDs survive restarts. */
export const ROOT_GUID2LID_FILE = '/var/cache/opensm/guid2lid';
/** The control socket of `ibsm run` on a real HCA, and where the client commands look. */
export const DEFAULT_CONTROL_SOCKET = '/run/ibsm/ibsm.sock';
/** The embedded default fabric: a 2-level fat tree, 8 leaves × 8 hosts, 4 spines. */
export const DEFAULT_SIM_SPEC = 'gen:fattree2:leaves=8,spines=4,hosts=8';

/** OpenSM's cache as root on a real HCA; not on a simulated fabric (--sim, or ibsim's umad2sim
 * preload): a simulator's LIDs are not the host subnet's. */
const guid2lidDefault = (get: (name: string) => OptionValue | undefined, host: HostFacts): string | undefined =>
  host.root && get('umad') === true && !host.umad2sim ? ROOT_GUID2LID_FILE : undefined;

/** The control socket by default on a real HCA only (not on a simulated fabric or under ibsim,
 * where several SMs share a host). */
const controlSocketDefault = (get: (name: string) => OptionValue | undefined, host: HostFacts): string | undefined =>
  get('umad') === true && !host.umad2sim ? DEFAULT_CONTROL_SOCKET : undefined;

/** " (did you mean "X"?)" for the closest name by edit distance, when one is close. */
export function suggest(word: string, names: readonly string[]): string {
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
  return best !== undefined && bd <= Math.max(2, Math.floor(word.length / 4)) ? ` (did you mean "${best}"?)` : '';
}

/** Routing engine names, checked against the registry. */
function checkEngines(v: OptionValue): string | undefined {
  const list = v as string[];
  if (!list.length) return 'names no engine';
  const known = engineNames();
  for (const r of list) if (!known.includes(r)) return `unknown routing engine "${r}"${suggest(r, known)}; known engines: ${known.join(', ')}`;
  return undefined;
}

const BACKEND = ['run', 'discover', 'config', 'check'] as const satisfies readonly Command[];
const RUN = ['run', 'config'] as const satisfies readonly Command[];

/** The table as written: its literal types (`OptionTable`) give the API's SmConfig (api/sm-config.ts),
 * so no interface restates it. */
const TABLE = [
  // ---- backend
  { name: 'sim', type: 'string', arg: '<file|gen:spec>', help: 'run on the in-process simulated fabric: a topology file or a generator spec', defaultText: DEFAULT_SIM_SPEC, commands: [...BACKEND, 'query', 'topo'], key: 'sim', to: 'backend.sim' },
  { name: 'umad', type: 'boolean', help: 'run on a real HCA (or ibsim under the umad2sim preload) through libibumad', commands: [...BACKEND, 'query', 'topo'], key: 'umad', default: false, to: 'backend.umad' },
  { name: 'ca', type: 'string', arg: 'NAME', help: 'the HCA to use with --umad', defaultText: 'the first with an active port', commands: [...BACKEND, 'query', 'topo'], key: 'ca', to: 'backend.ca' },
  { name: 'port', type: 'int', arg: 'N', min: 1, max: 254, help: 'the HCA port to use with --umad', defaultText: 'the first active port', commands: [...BACKEND, 'topo'], key: 'port', to: 'backend.port' },
  { name: 'ca-port', type: 'int', arg: 'N', min: 1, max: 254, help: 'the HCA port to query from with --umad', defaultText: 'the first active port', commands: ['query'] },
  { name: 'guid', type: 'key64', arg: 'GUID', help: 'use the local port with this port GUID (as opensm -g); 0 means the default port', commands: BACKEND, key: 'guid', opensm: 'guid', to: 'backend.guid' },
  { name: 'attach', type: 'string', arg: 'NODE', help: 'where to attach on the simulated fabric: node index, GUID or description', defaultText: 'the first node (query: the first other CA)', commands: [...BACKEND, 'query'], key: 'attach', to: 'backend.attach' },
  { name: 'seed', type: 'int', arg: 'N', min: 0, max: 2 ** 31, help: 'seed for generators, simulated faults and randomised routing tie-breaks', commands: [...BACKEND, 'route', 'query'], key: 'seed', to: ['backend.seed', 'subnet.seed'] },
  { name: 'config', type: 'string', arg: 'FILE', help: "config file: ibsm's JSON (as `ibsm config` prints) or OpenSM's opensm.conf; the command line wins", defaultText: `${DEFAULT_CONFIG_FILE} if it exists`, commands: RUN },
  // ---- route
  { name: 'engine', short: 'e', type: 'list', arg: 'NAME[,NAME...]', help: 'routing engine, or an ordered fallback list', default: [...DEFAULT_FALLBACK], commands: ['route'], check: checkEngines },
  { name: 'roots', type: 'list', arg: 'GUID[,GUID...]', help: 'root switches for updn/ftree (a CA port GUID means its switch)', commands: ['route'], check: checkGuids },
  { name: 'max-vls', type: 'int', arg: 'N', min: 1, max: 15, help: 'virtual layers dfsssp may use', default: 8, commands: ['route'] },
  { name: 'traffic', type: 'list', arg: 'PATTERN[,PATTERN...]', help: 'also judge the tables by the traffic they carry (docs/traffic.md): ebb (random bisections), alltoall (phases of shifts), shift:K, or a flows file ("SRC DST" lines: LIDs, GUIDs or node names); per-flow bandwidth / injection rate, min p1 p50 mean', commands: ['route'] },
  { name: 'traffic-samples', type: 'int', arg: 'N', min: 1, max: 1_000_000, help: 'random bisections of --traffic ebb; most shift phases of alltoall (evenly spaced; all of them when N is at least hosts-1)', default: 100, commands: ['route'] },
  { name: 'traffic-seed', type: 'int', arg: 'N', min: 0, max: 2 ** 31, help: 'seed of the random bisections of --traffic ebb', default: 1, commands: ['route'] },
  { name: 'what-if', type: 'string', arg: 'links|switches|LIST', help: `fail each case in turn and re-route as the running SM would (incrementally where its local sweep does, else the engine chain in full); per case: pairs lost, the verifier's verdict, busiest link, hops, LFT blocks that change; then the worst cases. ${WHAT_IF_SYNTAX}`, commands: ['route'] },
  { name: 'what-if-verify', type: 'enum', arg: 'full|fast', choices: ['full', 'fast'], help: "full: the verifier over each case's tables; fast: an incremental re-route that drops nothing is judged by its own guarantees (reachability, loops, deadlock freedom on one VL, busiest link), without hop figures: for large fabrics", default: 'full', commands: ['route', 'what-if'] },
  // ---- run
  { name: 'routing', type: 'list', arg: 'a,b,c', help: 'routing engines in order of preference', default: [...DEFAULT_FALLBACK], commands: RUN, key: 'routing', opensm: 'routing_engine', check: checkEngines, to: 'subnet.routing', live: true },
  { name: 'lmc', type: 'int', arg: 'N', min: 0, max: 7, help: 'LMC of every CA port', default: 0, commands: [...RUN, 'route'], key: 'lmc', opensm: 'lmc', to: 'subnet.lmc' },
  { name: 'root-guid-file', type: 'string', arg: 'FILE', help: 'root switch GUIDs for updn/ftree, one per line (OpenSM root_guid_file)', commands: [...RUN, 'route'], key: 'rootGuidFile', opensm: 'root_guid_file', to: 'openSm', live: true },
  { name: 'cn-guid-file', type: 'string', arg: 'FILE', help: 'compute-node port GUIDs for ftree, one per line (OpenSM cn_guid_file): their routes are balanced first, the other CAs after them', commands: [...RUN, 'route'], key: 'cnGuidFile', opensm: 'cn_guid_file', to: 'openSm', live: true },
  { name: 'io-guid-file', type: 'string', arg: 'FILE', help: 'I/O-node port GUIDs for ftree (OpenSM io_guid_file): routed after the compute nodes, so they do not disturb their balance', commands: [...RUN, 'route'], key: 'ioGuidFile', opensm: 'io_guid_file', to: 'openSm', live: true },
  { name: 'guid-routing-order-file', type: 'string', arg: 'FILE', help: 'port GUIDs, one per line (OpenSM guid_routing_order_file): minhop, updn and dfsssp route these destinations first, in this order, so they get the least loaded ports; the others after them', commands: [...RUN, 'route'], key: 'guidRoutingOrderFile', opensm: 'guid_routing_order_file', to: 'openSm', live: true },
  { name: 'guid-routing-order-no-scatter', type: 'boolean', help: 'the destinations of --guid-routing-order-file break ties without --seed\'s randomness (OpenSM guid_routing_order_no_scatter)', default: false, commands: [...RUN, 'route'], key: 'guidRoutingOrderNoScatter', opensm: 'guid_routing_order_no_scatter', to: 'openSm', live: true },
  { name: 'guid2lid', type: 'string', arg: 'FILE', help: "persistent GUID→LID map in OpenSM's guid2lid format (none: no file)", default: guid2lidDefault, defaultText: `${ROOT_GUID2LID_FILE} as root with --umad (not under ibsim), else none`, commands: RUN, key: 'guid2lid', to: 'openSm' },
  { name: 'partitions', type: 'string', arg: 'FILE', help: "partitions in OpenSM's partitions.conf syntax; the multicast groups it names exist before the SA answers", defaultText: 'default partition with IPoIB, all full', commands: RUN, key: 'partitions', opensm: 'partition_config_file', to: 'openSm', live: true },
  { name: 'qos-policy', type: 'string', arg: 'FILE', help: "OpenSM's qos-policy.conf: QoS on; PathRecord SLs and MTU/rate/packet-life limits", commands: RUN, key: 'qosPolicy', opensm: 'qos_policy_file', to: 'openSm', live: true },
  { name: 'sweep-interval', type: 'int', arg: 'S', min: 0, max: 86400, help: 'light sweep interval in seconds (0: none); each reads every switch and a share of the CA ports, every CA port at least once per 60 s of intervals', default: 10, commands: RUN, key: 'sweepIntervalS', keyAliases: ['sweepInterval'], opensm: 'sweep_interval', to: 'subnet.sweepIntervalMs' },
  { name: 'once', type: 'boolean', help: 'exit 0 after the first SUBNET UP (like opensm -o)', default: false, commands: ['run'] },
  { name: 'log-format', type: 'enum', arg: 'text|json', choices: ['text', 'json'], help: 'log line format', default: 'text', commands: RUN, key: 'logFormat', to: 'openSm' },
  { name: 'log-file', type: 'string', arg: 'FILE', help: 'append the log to FILE instead of stderr', defaultText: 'stderr', commands: RUN, key: 'logFile', opensm: 'log_file', to: 'openSm' },
  { name: 'log-max-size', type: 'int', arg: 'MB', min: 0, max: 1 << 20, help: 'rotate the log file when it grows past this many MB: FILE becomes FILE.1 (the one kept) and a new FILE begins, so the log takes at most twice this on disk (0: never, as OpenSM by default)', default: 256, commands: RUN, key: 'logMaxSizeMb', keyAliases: ['logMaxSize'], opensm: 'log_max_size', to: 'openSm' },
  { name: 'verbose', short: 'v', type: 'boolean', help: 'debug logging: per-phase detail of every sweep (discovery, LIDs, routing with its verification figures, tables written, ports armed and activated)', default: false, commands: RUN, key: 'verbose', to: 'openSm' },
  { name: 'metrics-port', type: 'int', arg: 'N', min: 1, max: 65535, help: 'serve Prometheus metrics on 127.0.0.1:N (/metrics)', defaultText: 'off', commands: RUN, key: 'metricsPort', to: 'openSm' },
  { name: 'sa-cache', type: 'int', arg: 'N', min: 0, max: 1_000_000, help: 'PathRecord answers the SA keeps for repeated queries; emptied at every heavy sweep (0: off)', default: 32768, commands: RUN, key: 'saCache', to: 'subnet.saServer.answerCacheSize' },
  { name: 'priority', type: 'int', arg: 'N', min: 0, max: 15, help: 'SM priority in SMInfo: the higher wins the election, ties go to the lower port GUID', default: 0, commands: RUN, key: 'priority', opensm: 'sm_priority', to: 'subnet.priority' },
  { name: 'sm-key', type: 'key64', arg: 'KEY', help: "SM_Key (OpenSM's default, 0x1); an SM with another non-zero key never takes the fabric, and ibsm does not program a fabric another key's master holds", default: DEFAULT_SM_KEY, commands: RUN, key: 'smKey', opensm: 'sm_key', to: 'subnet.smKey' },
  { name: 'sa-key', type: 'key64', arg: 'KEY', help: "SA_Key (OpenSM's default, 0x1): an SA request carrying it in its SM_Key field is trusted (sees SM_Keys, may act for other ports); one carrying another non-zero key is dropped, as OpenSM does; 0 is an ordinary request", default: DEFAULT_SM_KEY, commands: RUN, key: 'saKey', opensm: 'sa_key', to: 'subnet.saKey' },
  { name: 'force-master', type: 'boolean', help: 'master the fabric even while an SM with another SM_Key answers as MASTER there (the two then overwrite each other; default: leave that fabric alone and say why)', default: false, commands: RUN, key: 'forceMaster', to: 'subnet.forceMaster' },
  { name: 'poll-interval', type: 'int', arg: 'MS', min: 10, max: 600_000, help: "a standby polls its master's SMInfo this often", default: 500, commands: RUN, key: 'pollIntervalMs', keyAliases: ['pollInterval'], opensm: 'sminfo_polling_timeout', to: 'subnet.pollIntervalMs' },
  { name: 'poll-retries', type: 'int', arg: 'N', min: 0, max: 100, help: 'unanswered polls in a row after which a standby takes over', default: 3, commands: RUN, key: 'pollRetries', opensm: 'polling_retry_number', to: 'subnet.pollRetries' },
  { name: 'mkey', type: 'key64', arg: 'KEY', help: 'M_Key programmed into every port', defaultText: 'none', commands: RUN, key: 'mkey', opensm: 'm_key', to: ['subnet.mkey', 'backend.rpc.mkey'] },
  { name: 'mkey-protect', type: 'int', arg: '0-3', min: 0, max: 3, help: 'M_Key protect bits', default: 0, commands: RUN, key: 'mkeyProtectBits', opensm: 'm_key_protection_level', to: 'subnet.mkeyProtectBits' },
  { name: 'mkey-lease', type: 'int', arg: 'S', min: 0, max: 65535, help: 'M_Key lease period in seconds (0: infinite)', default: 0, commands: RUN, key: 'mkeyLeaseS', keyAliases: ['mkeyLease'], opensm: 'm_key_lease_period', to: 'subnet.mkeyLeasePeriod' },
  // routing between subnets (docs/routers.md)
  { name: 'prefix-routes', type: 'string', arg: 'FILE', help: "OpenSM's prefix-routes.conf: the local router port for off-subnet DGIDs no router reports (prefix and router port GUID per line, * for either, first match wins)", defaultText: 'none: off-subnet DGIDs only through the routers the SM programs', commands: RUN, key: 'prefixRoutes', opensm: 'prefix_routes_file', to: 'openSm', live: true },
  { name: 'subnet-prefix', type: 'key64', arg: 'PREFIX', help: 'subnet prefix (GID prefix) programmed into every port', default: 0xfe80000000000000n, commands: RUN, key: 'subnetPrefix', opensm: 'subnet_prefix', to: 'subnet.gidPrefix' },
  { name: 'subnet-timeout', type: 'int', arg: 'N', min: 0, max: 31, help: 'PortInfo SubnetTimeout: an IBA exponent code, not a duration (4.096 µs × 2^N)', default: 18, commands: RUN, key: 'subnetTimeout', opensm: 'subnet_timeout', to: 'subnet.subnetTimeout' },
  { name: 'max-op-vls', type: 'int', arg: 'N', min: 1, max: 5, help: 'max operational VLs (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7, 5: VL0-14)', default: 5, commands: RUN, key: 'maxOpVls', opensm: 'max_op_vls', to: 'subnet.maxOpVls' },
  // ---- link settings (OpenSM's force_link_*: osm_link_mgr.c; ibsm's default leaves the ports as they are)
  { name: 'force-link-speed', type: 'int', arg: 'N', min: 0, max: 15, help: "PortInfo LinkSpeedEnabled on every linked port (OpenSM force_link_speed): 0 leave, 1 SDR, 3 SDR/DDR, 5 SDR/QDR, 7 SDR/DDR/QDR, 15 set to LinkSpeedSupported (OpenSM's default); a speed the port does not support is dropped", default: 0, commands: RUN, key: 'forceLinkSpeed', opensm: 'force_link_speed', check: checkOneOf('force-link-speed', [0, 1, 3, 5, 7, 15]), to: 'subnet.forceLinkSpeed' },
  { name: 'force-link-speed-ext', type: 'int', arg: 'N', min: 0, max: 31, help: "PortInfo LinkSpeedExtEnabled where both ends of a link have extended speeds (OpenSM force_link_speed_ext): 0 leave, 1-15 FDR 1, EDR 2, HDR 4, NDR 8, 30 extended speeds off, 31 set to LinkSpeedExtSupported (OpenSM's default)", default: 0, commands: RUN, key: 'forceLinkSpeedExt', opensm: 'force_link_speed_ext', check: checkOneOf('force-link-speed-ext', [...Array.from({ length: 16 }, (_, i) => i), 30, 31]), to: 'subnet.forceLinkSpeedExt' },
  { name: 'force-link-speed-ext2', type: 'int', arg: 'N', min: 0, max: 7, help: "PortInfo LinkSpeedExtEnabled2 (byte 56: XDR) where both ends have IsExtendedSpeeds2Supported (NVIDIA OpenSM's force_link_speed_ext2): 0 leave, 1 XDR, 7 set to LinkSpeedExtSupported2", default: 0, commands: RUN, key: 'forceLinkSpeedExt2', opensm: 'force_link_speed_ext2', check: checkOneOf('force-link-speed-ext2', [0, 1, 7]), to: 'subnet.forceLinkSpeedExt2' },
  { name: 'force-link-width', type: 'int', arg: 'N', min: 0, max: 255, help: "PortInfo LinkWidthEnabled on every linked port (OpenSM force_link_width): 0 leave, 1-15 1x 1, 4x 2, 8x 4, 12x 8, 16-31 with 2x (16) where CapabilityMask2 says IsLinkWidth2xSupported, 255 set to LinkWidthSupported (OpenSM's default)", default: 0, commands: RUN, key: 'forceLinkWidth', opensm: 'force_link_width', check: checkOneOf('force-link-width', [...Array.from({ length: 32 }, (_, i) => i), 255]), to: 'subnet.forceLinkWidth' },
  { name: 'packet-life', type: 'int', arg: 'N', min: 0, max: 31, help: 'SwitchInfo LifeTimeValue: how long a packet may live in a switch: an IBA exponent code, not a duration (4.096 µs × 2^N)', default: 0x12, commands: RUN, key: 'packetLife', opensm: 'packet_life_time', to: 'subnet.packetLife' },
  { name: 'hoq-life', type: 'int', arg: 'N', min: 0, max: 31, help: 'PortInfo HOQLife of switch ports toward switches: an IBA exponent code, not a duration (4.096 µs × 2^N)', default: 0x12, commands: RUN, key: 'hoqLife', opensm: 'head_of_queue_lifetime', to: 'subnet.hoqLife' },
  { name: 'leaf-hoq-life', type: 'int', arg: 'N', min: 0, max: 31, help: 'PortInfo HOQLife of switch ports toward CAs and routers: an IBA exponent code, not a duration (4.096 µs × 2^N)', default: 0x10, commands: RUN, key: 'leafHoqLife', opensm: 'leaf_head_of_queue_lifetime', to: 'subnet.leafHoqLife' },
  { name: 'qos', type: 'boolean', help: "QoS on without a policy file: SL2VL, VLArbitration and VLHighLimit programmed from the qos-* settings (as opensm -Q); --qos-policy turns it on too", default: false, commands: RUN, key: 'qos', opensm: 'qos', to: 'openSm', live: true },
  { name: 'qos-max-vls', type: 'int', arg: 'N', min: 1, max: 15, help: 'QoS: VLs the SL2VL and VLArbitration tables use', default: 15, commands: RUN, key: 'qosMaxVls', opensm: 'qos_max_vls', to: 'openSm', live: true },
  { name: 'qos-high-limit', type: 'int', arg: 'N', min: 0, max: 255, help: 'QoS: PortInfo VLHighLimit (high-priority VLArbitration bytes before a low one may go)', default: 0, commands: RUN, key: 'qosHighLimit', opensm: 'qos_high_limit', to: 'openSm', live: true },
  { name: 'qos-vlarb-high', type: 'string', arg: 'VL:W,...', help: 'QoS: the high-priority VLArbitration table', default: QOS_VL_DEFAULTS.vlarbHigh, commands: RUN, key: 'qosVlarbHigh', opensm: 'qos_vlarb_high', check: checkQos('vlarbHigh'), to: 'openSm', live: true },
  { name: 'qos-vlarb-low', type: 'string', arg: 'VL:W,...', help: 'QoS: the low-priority VLArbitration table', default: QOS_VL_DEFAULTS.vlarbLow, commands: RUN, key: 'qosVlarbLow', opensm: 'qos_vlarb_low', check: checkQos('vlarbLow'), to: 'openSm', live: true },
  { name: 'qos-sl2vl', type: 'string', arg: 'VL,...', help: 'QoS: the SL→VL table, 16 VLs', default: QOS_VL_DEFAULTS.sl2vl, commands: RUN, key: 'qosSl2vl', opensm: 'qos_sl2vl', check: checkQos('sl2vl'), to: 'openSm', live: true },
  { name: 'perfmgr', type: 'boolean', help: "PerfMgr on: every linked port's PortCounters read through the PMAs, 64-bit totals, error counters that rise logged with the port, Prometheus series per port", default: false, commands: RUN, key: 'perfmgr', opensm: 'perfmgr', to: 'openSm' },
  { name: 'perfmgr-interval', type: 'int', arg: 'S', min: 1, max: 86400, help: 'PerfMgr sweep interval in seconds', default: 180, commands: RUN, key: 'perfmgrIntervalS', keyAliases: ['perfmgrInterval'], opensm: 'perfmgr_sweep_time_s', to: 'openSm' },
  { name: 'control-socket', type: 'string', arg: 'PATH', help: 'the local control socket (unix, mode 0600) that ibsm status, resweep, reroute, reload, dump, topo and what-if use (none: off)', default: controlSocketDefault, defaultText: `${DEFAULT_CONTROL_SOCKET} with --umad (not under ibsim), else none`, commands: RUN, key: 'controlSocket', to: 'run' },
  // ---- where the metrics are served (issue 14; --metrics-port above is 127.0.0.1:N)
  { name: 'metrics-listen', type: 'string', arg: 'ADDR:PORT', help: 'serve Prometheus metrics on ADDR:PORT (/metrics), e.g. 0.0.0.0:9464 or [::]:9464; excludes --metrics-port', defaultText: 'off', commands: RUN, key: 'metricsListen', check: checkListen, to: 'openSm' },
  // ---- the live web view (src/web)
  { name: 'web', type: 'string', arg: 'ADDR:PORT', help: 'serve the read-only live web view on ADDR:PORT (e.g. 127.0.0.1:8080; [::1]:8080; port 0: any free port): the fabric picture updated on every sweep, port states, per-link load, PerfMgr counters with rates, the SM state and the last events; GET only, nothing on it acts on the SM', defaultText: 'off', commands: RUN, key: 'web', check: checkListen, to: 'openSm' },
  // ---- the SA's bounds on what one client can grow (sa/limits.ts; beyond them ERR_NO_RESOURCES)
  { name: 'sa-services-per-port', type: 'int', arg: 'N', min: 1, max: 1_000_000, help: 'ServiceRecords one port may hold registered', default: DEFAULT_SA_LIMITS.servicesPerRequester, commands: RUN, key: 'saServicesPerPort', to: 'subnet.saLimits.servicesPerRequester' },
  { name: 'sa-subscriptions-per-port', type: 'int', arg: 'N', min: 1, max: 1_000_000, help: 'InformInfo subscriptions of one port (a repeated Set is the same one)', default: DEFAULT_SA_LIMITS.subscriptionsPerRequester, commands: RUN, key: 'saSubscriptionsPerPort', to: 'subnet.saLimits.subscriptionsPerRequester' },
  { name: 'sa-reports-queued', type: 'int', arg: 'N', min: 1, max: 10_000, help: 'Reports waiting per destination behind the one in flight (the oldest is dropped)', default: DEFAULT_SA_LIMITS.reportsQueuedPerSubscriber, commands: RUN, key: 'saReportsQueued', to: 'subnet.saLimits.reportsQueuedPerSubscriber' },
  { name: 'sa-groups-per-port', type: 'int', arg: 'N', min: 1, max: 16_384, help: 'multicast groups one port may have created (that still exist)', default: DEFAULT_SA_LIMITS.groupsPerRequester, commands: RUN, key: 'saGroupsPerPort', to: 'subnet.saLimits.groupsPerRequester' },
  { name: 'sa-max-groups', type: 'int', arg: 'N', min: 1, max: 16_384, help: "multicast groups (MLIDs from 0xC000) in all; the switches' smallest MulticastFDBCap bounds it further", default: DEFAULT_SA_LIMITS.maxGroups, commands: RUN, key: 'saMaxGroups', to: 'subnet.saLimits.maxGroups' },
  { name: 'sa-rmpp-per-port', type: 'int', arg: 'N', min: 1, max: 1024, help: 'RMPP answers (GetTable, GetMulti) running to one LID', default: DEFAULT_SA_LIMITS.rmppPerRequester, commands: RUN, key: 'saRmppPerPort', to: 'subnet.saLimits.rmppPerRequester' },
  { name: 'sa-rmpp-total', type: 'int', arg: 'N', min: 1, max: 65_536, help: 'RMPP answers running in all', default: DEFAULT_SA_LIMITS.rmppTotal, commands: RUN, key: 'saRmppTotal', to: 'subnet.saLimits.rmppTotal' },
  // ---- opensm.conf keys ibsm implements (#28; config/opensm-keys.ts says what it does with every other key)
  { name: 'part-enforce', type: 'enum', arg: 'both|in|out|off', choices: ['both', 'in', 'out', 'off'], help: 'partition enforcement on switch ports facing CAs and routers: inbound, outbound, both, or off (no P_Key table on those switch ports)', default: 'both', commands: RUN, key: 'partEnforce', opensm: 'part_enforce', to: 'subnet.partEnforce' },
  { name: 'lmc-esp0', type: 'boolean', help: 'with --lmc N, a switch whose port 0 is enhanced (SwitchInfo EnhancedPort0) gets 2^N LIDs there too, as CA ports do (OpenSM lmc_esp0)', default: false, commands: RUN, key: 'lmcEsp0', opensm: 'lmc_esp0', to: 'subnet.lmcEsp0' },
  { name: 'reassign-lids', type: 'boolean', help: 'the first sweep as master gives every port a new LID: neither the guid2lid file nor the LIDs the ports have are used', default: false, commands: RUN, key: 'reassignLids', opensm: 'reassign_lids', to: ['subnet.reassignLids', 'openSm'] },
  { name: 'force-heavy-sweep', type: 'boolean', help: 'every periodic sweep is a heavy one (the whole fabric discovered again) instead of a light one', default: false, commands: RUN, key: 'forceHeavySweep', opensm: 'force_heavy_sweep', to: 'subnet.forceHeavySweep' },
  { name: 'honor-guid2lid', type: 'boolean', help: "a standby that takes over prefers the guid2lid file's LIDs to those the old master gave (opensm.conf honor_guid2lid_file; OpenSM's default there is FALSE)", default: true, commands: RUN, key: 'honorGuid2lid', to: 'subnet.honorGuid2lid' },
  { name: 'check', type: 'boolean', help: 'check the configuration and every file it names (partitions, QoS policy, GUID files, guid2lid, prefix routes, topology) without running: each problem with its file:line; exit 0 when all is good, 2 when not', default: false, commands: ['config'] },
  { name: 'log-truncate', type: 'boolean', help: 'empty the log file at start instead of appending to it (opensm.conf accum_log_file FALSE)', default: false, commands: RUN, key: 'logTruncate', to: 'openSm' },
  // ---- issue 29: whom the SA trusts (README "Security"; OpenSM has no key for it: it always accepts)
  { name: 'sa-proxy-joins', type: 'boolean', help: "accept MCMember joins and leaves for another port's PortGID (proxy joins) from any port of the group's partition, as OpenSM does; by default only a trusted requester (the SA_Key, --sa-key, in the SA header) may join or leave for another port", default: false, commands: RUN, key: 'saProxyJoins', to: 'subnet.saProxyJoins' },
  // ---- issue 33: fabric health (README "Fabric health")
  { name: 'topology', type: 'string', arg: 'FILE', help: "the expected topology, in ibnetdiscover's format (what `ibsm discover` writes) or a cabling plan (NODE PORT NODE PORT [WIDTH] [SPEED] a line): every heavy and local sweep compares the fabric with it (missing/extra nodes and links, a cable on the wrong port, a changed GUID, a link below its width or speed) and acts as --topology-action says", defaultText: 'none: no comparison', commands: [...RUN, 'check'], key: 'topology', to: 'openSm', live: true },
  { name: 'topology-action', type: 'string', arg: 'CLASS=ACTION[,...]', help: 'what a mismatch with --topology does, per class (missing-node, extra-node, missing-link, extra-link, wrong-port, guid-changed, width, speed; all): ignore, warn (a log line, a healthChanged event, a metric) or isolate (the link or node held in INIT and left out of routing until it matches again)', defaultText: 'all=warn', commands: RUN, key: 'topologyAction', check: checkTopologyActions, to: 'openSm', live: true },
  { name: 'health-flap', type: 'string', arg: 'N/WINDOW_S:ACTION[:QUIET_S]', help: "the flapping policy: a link whose state changes (goes, comes back) N times within WINDOW_S seconds, as the heavy and local sweeps see it, is warned about or isolated (held in INIT, not routed, source 'flapping') and released after QUIET_S seconds without a change (default WINDOW_S; 0: only by `ibsm release`). An isolated link's further bounces sweep nothing. A reload applies a new policy from the next change on; turned off, the links it isolated stay so until their quiet time or a release. opa-fm quarantines at 25 bounces in 15 minutes: 50/900:isolate", defaultText: 'off', commands: RUN, key: 'healthFlap', check: checkFlapPolicy, to: 'openSm', live: true },
  { name: 'health-unresponsive', type: 'string', arg: 'K:ACTION[:QUIET_S]', help: "the unresponsive-SMA policy: a node (switch or CA) whose SMPs time out, after the retries, in K consecutive heavy sweeps is warned about or isolated (source 'unresponsive': not routed through, and later sweeps do not wait for its timeouts: one NodeInfo probe a sweep, one try, watches it) and released once its probe has answered for QUIET_S seconds (default 300; 0: only by `ibsm release`). UFM's \"unresponsive\" condition is 5 timeouts in 7 sweeps: 5:isolate", defaultText: 'off', commands: RUN, key: 'healthUnresponsive', check: checkUnresponsivePolicy, to: 'openSm' },
  { name: 'health-errors', type: 'string', arg: 'COUNTER=RATE[,...]:ACTION[:QUIET_S]', help: "the error-rate policy (needs --perfmgr): a link whose error counters (SymbolErrorCounter, LinkErrorRecoveryCounter, LinkDownedCounter, PortRcvErrors, PortXmitDiscards or another PortCounters error counter), read by PerfMgr at either end, rise faster than RATE per minute between two readings is warned about or isolated (held in INIT, not routed, source 'errors') and released after QUIET_S seconds with no rise (default 600; 0: only by hand). UFM's high-BER isolation and opa-fm's PM thresholds are off or log only by default: e.g. SymbolErrorCounter=200,LinkDownedCounter=3:isolate", defaultText: 'off', commands: RUN, key: 'healthErrors', check: checkErrorPolicy, to: 'openSm' },
  // ---- the client commands of a running SM
  { name: 'socket', type: 'string', arg: 'PATH', help: "the running SM's control socket", default: DEFAULT_CONTROL_SOCKET, commands: CONTROL_COMMANDS },
  { name: 'heavy', type: 'boolean', help: 'a heavy sweep (rediscover the fabric) instead of a light one', default: false, commands: ['resweep'] },
  { name: 'format', type: 'enum', arg: 'dot|svg|json', choices: ['dot', 'svg', 'json'], help: 'the picture: Graphviz DOT, SVG, or JSON', default: 'svg', commands: ['topo'] },
  // ---- query
  { name: 'send', type: 'boolean', help: 'query path between two subnets on the in-process fabric: inject a test packet each way with P1 and P2 and print the hops', default: false, commands: ['query'] },
  { name: 'sa-lid', type: 'int', arg: 'LID', min: 0, max: 0xbfff, help: "the SA's LID", defaultText: 'the SM LID in the local PortInfo', commands: ['query'] },
  { name: 'sm-key', aliases: ['smkey'], type: 'key64', arg: 'KEY', help: "the key sent in the SA header's SM_Key field: the SA's SA_Key (--sa-key) for trusted requests; another non-zero key is not answered", defaultText: '0', commands: ['query'] },
  // ---- output
  { name: 'json', type: 'boolean', help: 'print JSON', default: false, commands: ['discover', 'route', 'query', 'status', 'resweep', 'reroute', 'reload', 'dump', 'what-if', 'check', 'vport', 'isolate', 'release'] },
] as const satisfies readonly OptionSpec[];

export type OptionTable = typeof TABLE;
export const OPTIONS: readonly OptionSpec[] = TABLE;

/** A qos-* table text, checked by the one parser of them. */
function checkQos(which: 'vlarbHigh' | 'vlarbLow' | 'sl2vl'): (v: OptionValue) => string | undefined {
  return (v) => {
    try {
      qosVlSettings({ [which]: v as string });
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  };
}

/** One of the values OpenSM gives a meaning. */
function checkOneOf(name: string, valid: readonly number[]): (v: OptionValue) => string | undefined {
  return (v) => (valid.includes(v as number) ? undefined : `${name} ${String(v)} is reserved; valid: ${compactRanges(valid)}`);
}
function compactRanges(vs: readonly number[]): string {
  const out: string[] = [];
  for (let i = 0; i < vs.length; i++) {
    let j = i;
    while (j + 1 < vs.length && vs[j + 1] === vs[j]! + 1) j++;
    out.push(j > i + 1 ? `${vs[i]}-${vs[j]}` : j === i + 1 ? `${vs[i]}, ${vs[j]}` : `${vs[i]}`);
    i = j;
  }
  return out.join(', ');
}

/** An ADDR:PORT, checked by the one parser of them. */
function checkListen(v: OptionValue): string | undefined {
  try {
    parseListenAddress(v as string);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkUnresponsivePolicy(v: OptionValue): string | undefined {
  try {
    parseUnresponsivePolicy(v as string);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkErrorPolicy(v: OptionValue): string | undefined {
  try {
    parseErrorPolicy(v as string);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkFlapPolicy(v: OptionValue): string | undefined {
  try {
    parseFlapPolicy(v as string);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkTopologyActions(v: OptionValue): string | undefined {
  try {
    parseTopologyActions(v as string);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

function checkGuids(v: OptionValue): string | undefined {
  for (const g of v as string[]) if (!/^(0x)?[0-9a-fA-F]{1,16}$/.test(g)) return `"${g}" is not a GUID (hex, e.g. 0x0002c90000000001)`;
  return undefined;
}

export function optionsOf(cmd: Command): OptionSpec[] {
  return OPTIONS.filter((o) => o.commands.includes(cmd));
}

export function optionByName(name: string): OptionSpec | undefined {
  return OPTIONS.find((o) => o.name === name);
}

/** The options a config file may set (each once, by its key). */
export const CONFIG_OPTIONS: readonly OptionSpec[] = OPTIONS.filter((o) => o.key !== undefined);

export function defaultOf(o: OptionSpec, get: (name: string) => OptionValue | undefined = () => undefined, host: HostFacts = PLAIN_HOST): OptionValue | undefined {
  return typeof o.default === 'function' ? o.default(get, host) : o.default;
}

/** The targets of an option (OptionTarget), none for one openSm does not take. */
export function targetsOf(o: OptionSpec): readonly OptionTarget[] {
  return o.to === undefined ? [] : typeof o.to === 'string' ? [o.to as OptionTarget] : (o.to as readonly OptionTarget[]);
}

/** The unit a value is in, as its config key says it (`sweepIntervalS`, `pollIntervalMs`,
 * `logMaxSizeMb`); none for counts, codes and names. */
export function unitOf(o: OptionSpec): 's' | 'ms' | 'MB' | undefined {
  const m = o.key === undefined ? null : /[a-z0-9](S|Ms|Mb)$/.exec(o.key);
  return m ? ({ S: 's', Ms: 'ms', Mb: 'MB' } as const)[m[1] as 'S' | 'Ms' | 'Mb'] : undefined;
}

/** The default as --help and the README show it. */
export function defaultText(o: OptionSpec): string {
  if (o.defaultText !== undefined) return o.defaultText;
  const d = typeof o.default === 'function' ? undefined : o.default;
  if (d === undefined) return 'none';
  if (typeof d === 'boolean') return d ? 'on' : 'off';
  return formatValue(o, d);
}

/** A value as the command line writes it. */
export function formatValue(o: OptionSpec, v: OptionValue): string {
  if (typeof v === 'bigint') return o.name === 'subnet-prefix' || o.name === 'guid' || v > 0xffffn ? formatGuid(v) : `0x${v.toString(16)}`;
  if (Array.isArray(v)) return v.join(',');
  return String(v);
}

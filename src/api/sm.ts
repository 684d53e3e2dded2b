/** Open an SM+SA on a backend with the options of `ibsm run` (the config keys of the option table),
 * and stop it. `ibsm run` is this plus signals, --once and the progress line. */
import { dirname } from 'node:path';
import { closeSync, existsSync, mkdirSync, fstatSync, ftruncateSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import type { Server } from 'node:http';
import { Subnet, type SubnetOptions } from '../subnet.js';
import { smpClientOf } from '../sm/smp-client.js';
import { Guid2LidError, parseGuid2Lid, type LidRange } from '../sm/lids.js';
import { Guid2LidFile } from './guid2lid-file.js';
import type { SweepStats } from '../sm/sweep.js';
import { parsePartitions, PartitionConfigError, PartitionPlan } from '../model/partitions.js';
import { parseGuidFile } from '../model/guid-file.js';
import { parseRouteOrder } from '../routing/route-order.js';
import { enginesWithoutRouteOrder } from '../routing/registry.js';
import { ConfigFileError, readNamedFile } from '../config/files.js';
import { parseQosPolicy, qosVlSettings, type QosPolicy, type QosVlSettings } from '../model/qos-policy.js';
import type { Fabric } from '../model/fabric.js';
import type { ReadonlySnapshot, Snapshot } from '../model/snapshot.js';
import type { SimFabric } from '../sim/fabric.js';
import { Logger, type LogSink } from '../util/log.js';
import { CONFIG_OPTIONS, defaultOf } from '../config/options.js';
import type { SubnetEvents, TypedEmitter } from '../events.js';
import { openBackend, type Backend } from './backend.js';
import { addLocalSm } from './local-sms.js';
import { routeBetween, type PortSpec, type Route } from './route.js';
// The metrics and the web view load node:http (and node:crypto, node:perf_hooks) only when served:
// start-up does not pay for them (the first SMP goes out soon after the process starts).
import type { SmMetrics } from './metrics.js';
import { PerfMgr } from '../sm/perfmgr.js';
import type { TimerHandle } from '../util/clock.js';
import { parseListenAddress } from '../util/listen.js';
import type { WebFeed } from '../web/feed.js';
import type { WebServer } from '../web/server.js';
import { parsePrefixRoutes } from '../sa/prefix-routes.js';
import { interSubnetPaths } from '../sa/inter-subnet.js';
import { sameValue } from '../util/same-value.js';

/** What `ibsm run` takes, by config-file key (`ibsm config` lists them). */
export interface SmConfig {
  /** The in-process fabric: a topology file, a generator spec (gen:...) or a Fabric. Default the embedded fat tree. */
  sim?: string | Fabric;
  /** Run on a real HCA (or ibsim) through libibumad instead. */
  umad?: boolean;
  ca?: string;
  port?: number;
  /** The SM port by port GUID (opensm -g). */
  guid?: bigint;
  /** Where the SM attaches on the simulated fabric (node index, GUID or description). */
  attach?: string;
  seed?: number;
  /** Routing engines in order of preference. */
  routing?: string[];
  lmc?: number;
  /** Root switch GUIDs for updn/ftree: a file of GUIDs (OpenSM root_guid_file) ... */
  rootGuidFile?: string;
  /** ... or the GUIDs themselves. */
  roots?: bigint[];
  /** ftree's compute nodes and I/O nodes: files of port GUIDs (OpenSM cn_guid_file, io_guid_file). */
  cnGuidFile?: string;
  ioGuidFile?: string;
  /** Port GUIDs whose destinations minhop, updn and dfsssp route first, in order (OpenSM
   * guid_routing_order_file); with `guidRoutingOrderNoScatter` they take no random tie-break. */
  guidRoutingOrderFile?: string;
  guidRoutingOrderNoScatter?: boolean;
  guid2lid?: string;
  partitions?: string;
  qosPolicy?: string;
  /** Light sweep interval, seconds (0: none). */
  sweepInterval?: number;
  logFormat?: 'text' | 'json';
  logFile?: string;
  logMaxSize?: number;
  verbose?: boolean;
  metricsPort?: number;
  /** Where to serve the metrics, ADDR:PORT (metricsPort N is 127.0.0.1:N). */
  metricsListen?: string;
  saCache?: number;
  priority?: number;
  smKey?: bigint;
  /** The SA_Key: an SA request with it in its SM_Key field is trusted; another non-zero key is dropped. */
  saKey?: bigint;
  /** Program the fabric even while a master with another SM_Key holds it. */
  forceMaster?: boolean;
  /** Standby polling of the master, ms. */
  pollInterval?: number;
  pollRetries?: number;
  mkey?: bigint;
  mkeyProtectBits?: number;
  mkeyLease?: number;
  subnetPrefix?: bigint;
  subnetTimeout?: number;
  maxOpVls?: number;
  /** OpenSM's force_link_speed, force_link_speed_ext, (NVIDIA's) force_link_speed_ext2, force_link_width (0: leave). */
  forceLinkSpeed?: number;
  forceLinkSpeedExt?: number;
  forceLinkSpeedExt2?: number;
  forceLinkWidth?: number;
  packetLife?: number;
  hoqLife?: number;
  leafHoqLife?: number;
  /** QoS on without a policy file (opensm -Q); the qos* values set its VL tables. */
  qos?: boolean;
  qosMaxVls?: number;
  qosHighLimit?: number;
  /** "vl:weight,..." */
  qosVlarbHigh?: string;
  qosVlarbLow?: string;
  /** 16 VLs, comma separated. */
  qosSl2vl?: string;
  /** PerfMgr: sweep every linked port's counters through the PMAs. */
  perfmgr?: boolean;
  /** PerfMgr sweep interval, seconds. */
  perfmgrInterval?: number;
  /** The control socket `ibsm run` serves (cli/control.ts); none when absent. */
  controlSocket?: string;
  /** The read-only live web view on ADDR:PORT (src/web); off when absent. */
  web?: string;
  /** The SA's bounds per requester (sa/limits.ts). */
  saServicesPerPort?: number;
  saSubscriptionsPerPort?: number;
  saReportsQueued?: number;
  saGroupsPerPort?: number;
  saMaxGroups?: number;
  saRmppPerPort?: number;
  saRmppTotal?: number;
  /** Proxy joins (MCMember joins and leaves for another port) from any port of the partition, as
   * OpenSM; default only from a trusted requester (sa/multicast.ts). */
  saProxyJoins?: boolean;
  /** OpenSM's prefix-routes.conf (sa/prefix-routes.ts): off-subnet DGIDs through the named router ports. */
  prefixRoutes?: string;
  /** opensm.conf keys ibsm implements: part_enforce (and no_partition_enforcement), reassign_lids,
   * force_heavy_sweep, honor_guid2lid_file, accum_log_file FALSE. */
  partEnforce?: 'both' | 'in' | 'out' | 'off';
  reassignLids?: boolean;
  lmcEsp0?: boolean;
  forceHeavySweep?: boolean;
  honorGuid2lid?: boolean;
  logTruncate?: boolean;
}

/** The keys of SmConfig that are config-file keys (test/config.test.ts: the same as the option table's). */
export const SM_CONFIG_KEYS = [
  'sim', 'umad', 'ca', 'port', 'guid', 'attach', 'seed', 'routing', 'lmc', 'rootGuidFile', 'cnGuidFile', 'ioGuidFile', 'guidRoutingOrderFile', 'guidRoutingOrderNoScatter', 'guid2lid', 'partitions', 'qosPolicy', 'sweepInterval', 'logFormat', 'logFile', 'logMaxSize', 'verbose',
  'metricsPort', 'metricsListen', 'saCache', 'priority', 'smKey', 'saKey', 'forceMaster', 'pollInterval', 'pollRetries', 'mkey', 'mkeyProtectBits', 'mkeyLease', 'subnetPrefix', 'subnetTimeout', 'maxOpVls', 'forceLinkSpeed', 'forceLinkSpeedExt', 'forceLinkSpeedExt2', 'forceLinkWidth', 'packetLife', 'hoqLife', 'leafHoqLife',
  'qos', 'qosMaxVls', 'qosHighLimit', 'qosVlarbHigh', 'qosVlarbLow', 'qosSl2vl', 'perfmgr', 'perfmgrInterval', 'controlSocket', 'web',
  'saServicesPerPort', 'saSubscriptionsPerPort', 'saReportsQueued', 'saGroupsPerPort', 'saMaxGroups', 'saRmppPerPort', 'saRmppTotal', 'prefixRoutes', 'saProxyJoins',
  'partEnforce', 'lmcEsp0', 'reassignLids', 'forceHeavySweep', 'honorGuid2lid', 'logTruncate',
] as const satisfies ReadonlyArray<keyof SmConfig>;

export interface OpenSmOptions extends SmConfig {
  /** Run on this backend instead of opening one (the SMs of a multi-subnet fabric: api/subnets.ts). */
  backend?: Backend;
  /** The logger (default: from logFormat/logFile/verbose, to stderr). */
  log?: Logger;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
}

export { GuidFileError, parseGuidFile } from '../model/guid-file.js';

/** A log sink appending to a file. When a line would take it past maxMb (OpenSM's log_max_size),
 * the file is rotated: renamed FILE.1 (replacing the previous FILE.1) and a new FILE begun, so the
 * log holds at most 2 × maxMb on disk and the lines just before the rotation are kept (OpenSM
 * truncates them away); where the rename fails the file is truncated, as OpenSM does. maxMb 0:
 * never. `truncate`: empty the file at start (opensm.conf accum_log_file FALSE). `reopen` opens the path again (after logrotate moved the file away). */
export function fileLogSink(file: string, maxMb = 0, truncate = false): LogSink & { close(): void; reopen(): void } {
  let fd = openSync(file, truncate ? 'w' : 'a');
  let size = fstatSync(fd).size;
  const rotate = (): void => {
    try {
      renameSync(file, `${file}.1`);
      const next = openSync(file, 'a');
      closeSync(fd);
      fd = next;
    } catch {
      ftruncateSync(fd, 0);
    }
    size = 0;
  };
  return {
    reopen() {
      try {
        const next = openSync(file, 'a');
        closeSync(fd);
        fd = next;
        size = fstatSync(fd).size;
      } catch {
        /* keep writing where we were */
      }
    },
    write(line: string) {
      const s = line + '\n';
      try {
        if (maxMb > 0 && size + s.length > maxMb * 1024 * 1024) rotate();
        size += writeSync(fd, s);
      } catch {
        /* a full disk must not stop the SM */
      }
    },
    close: () => closeSync(fd),
  };
}

function withDefaults(o: OpenSmOptions): OpenSmOptions {
  const d: Record<string, unknown> = {};
  const get = (name: string): unknown => {
    const k = CONFIG_OPTIONS.find((x) => x.name === name)?.key;
    return k !== undefined ? (o as Record<string, unknown>)[k] : undefined;
  };
  for (const s of CONFIG_OPTIONS) {
    const v = defaultOf(s, get as (name: string) => undefined);
    if (v !== undefined) d[s.key!] = v;
  }
  return { ...d, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) } as OpenSmOptions;
}

/** What openSm and a reload read from the configuration's files, each checked (an error names its
 * file and line): partitions.conf, qos-policy.conf (and the qos_* VL settings), the GUID files of
 * the routing engines and prefix-routes.conf. */
interface SmFiles {
  partitions: PartitionPlan;
  qos?: QosPolicy;
  qosVl?: QosVlSettings;
  routingOptions: SubnetOptions['routingOptions'] & object;
  prefixRoutes?: ReturnType<typeof parsePrefixRoutes>;
}

/** A file named and not readable: an error naming the option, the file's role and why (not a bare ENOENT). */
function namedText(file: string, key: keyof SmConfig): string {
  const t = readNamedFile(file, CONFIG_OPTIONS.find((x) => x.key === key)!.name);
  if (typeof t !== 'string') throw new ConfigFileError([t]);
  return t;
}

/** The files the options name, read and checked. `atStart`: a partitions.conf in error does not
 * stop the SM (OpenSM: "Partition configuration in error; retrying with default config"): said
 * loudly there, and the default partition used; a reload throws instead and keeps the running
 * configuration. */
function readSmFiles(o: OpenSmOptions, atStart?: Logger, atReload?: Logger): SmFiles {
  let partitions = PartitionPlan.defaultPlan();
  if (o.partitions) {
    const t = namedText(o.partitions, 'partitions');
    try {
      partitions = parsePartitions(t, o.partitions);
    } catch (e) {
      if (!atStart || !(e instanceof PartitionConfigError)) throw e;
      atStart.error('partition configuration in error; using the default configuration', { file: o.partitions, error: e.message });
    }
  }
  const qos = o.qosPolicy ? parseQosPolicy(namedText(o.qosPolicy, 'qosPolicy'), o.qosPolicy) : undefined;
  // QoS on (a policy file, or --qos as opensm -Q): SL2VL, VLArbitration and VLHighLimit from the qos-* settings.
  const qosVl = qos || o.qos ? qosVlSettings({ maxVls: o.qosMaxVls, highLimit: o.qosHighLimit, vlarbHigh: o.qosVlarbHigh, vlarbLow: o.qosVlarbLow, sl2vl: o.qosSl2vl }) : undefined;
  const roots = [...(o.roots ?? []), ...(o.rootGuidFile ? parseGuidFile(namedText(o.rootGuidFile, 'rootGuidFile'), o.rootGuidFile) : [])];
  const cnGuids = o.cnGuidFile ? parseGuidFile(namedText(o.cnGuidFile, 'cnGuidFile'), o.cnGuidFile) : undefined;
  const ioGuids = o.ioGuidFile ? parseGuidFile(namedText(o.ioGuidFile, 'ioGuidFile'), o.ioGuidFile) : undefined;
  const routeOrder = o.guidRoutingOrderFile ? readRouteOrder(o.guidRoutingOrderFile, atReload) : undefined;
  const noScatter = routeOrder && o.guidRoutingOrderNoScatter ? { routeOrderNoScatter: true } : {};
  const prefixRoutes = o.prefixRoutes ? parsePrefixRoutes(namedText(o.prefixRoutes, 'prefixRoutes'), o.prefixRoutes) : undefined;
  // The policy against the partitions it names (throws as at start).
  qos?.withPartitions(partitions);
  return { partitions, qos, qosVl, routingOptions: { ...(roots.length ? { roots } : {}), ...(cnGuids ? { cnGuids } : {}), ...(ioGuids ? { ioGuids } : {}), ...(routeOrder ? { routeOrder, ...noScatter } : {}) }, prefixRoutes };
}

/** The guid routing order file. At start one that cannot be read or parsed is refused, as every
 * file the configuration names; at a reload it is logged and the routes go without an order (as
 * OpenSM, which reads it at every routing: ERR 3A0D), the rest of the reload applied. */
function readRouteOrder(file: string, atReload?: Logger): bigint[] | undefined {
  if (!atReload) return parseRouteOrder(namedText(file, 'guidRoutingOrderFile'), file);
  try {
    return parseRouteOrder(namedText(file, 'guidRoutingOrderFile'), file);
  } catch (e) {
    atReload.error('guid routing order file not read; routing without an order', { file, error: (e as Error).message });
    return undefined;
  }
}

/** A WARN for each engine of the chain that routes in its own order when an order is given. */
function warnRouteOrder(log: Logger, routing: readonly string[], files: SmFiles): void {
  if (!files.routingOptions.routeOrder) return;
  for (const engine of enginesWithoutRouteOrder(routing)) log.warn('routing engine routes in its own order: the guid routing order file is not used by it', { engine, routing: routing.join(',') });
}

/** The settings a reload applies to the running SM (issue #28): the files' contents (partitions,
 * QoS policy and VL settings, the routing engines' GUID files, prefix routes) and the routing
 * chain. Any other setting that changed takes effect at the next start (named in the result). */
export const RELOADABLE_KEYS: ReadonlySet<keyof SmConfig> = new Set<keyof SmConfig>([
  'partitions', 'qosPolicy', 'qos', 'qosMaxVls', 'qosHighLimit', 'qosVlarbHigh', 'qosVlarbLow', 'qosSl2vl', 'routing', 'rootGuidFile', 'roots', 'cnGuidFile', 'ioGuidFile', 'guidRoutingOrderFile', 'guidRoutingOrderNoScatter', 'prefixRoutes',
]);

/** What a reload did: the settings that changed and were applied, those that need a restart. */
export interface ReloadResult {
  /** The files read again (by setting), whether or not their contents changed. */
  reread: string[];
  applied: string[];
  restartNeeded: string[];
  groupsCreated: number;
  groupsUpdated: number;
  groupsReleased: number;
}

/** The guid2lid cache is written after sweeps (atomically, through FILE.tmp-PID): its directory is
 * made and the temporary file tried now, before the first SMP, so an unwritable cache is a local
 * problem said at start (naming the option and the path), not a failure after the first sweep. */
function checkGuid2LidWritable(path: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    closeSync(openSync(tmp, 'w'));
    unlinkSync(tmp);
  } catch (e) {
    throw new Guid2LidError(`--guid2lid ${path}: the cache cannot be written: ${(e as Error).message}`, { file: path, cause: e });
  }
}

/** A running SM+SA. */
export class IbsmSm {
  private metrics?: Server;
  private metricsData?: SmMetrics;
  private stopped = false;
  /** The performance manager, when on (`perfmgr`). */
  readonly perf?: PerfMgr;
  private perfTimer?: TimerHandle;
  private web?: { feed: WebFeed; server: WebServer };
  constructor(
    readonly subnet: Subnet,
    readonly backend: Backend,
    readonly log: Logger,
    private readonly closeLog?: () => void,
    private readonly perfIntervalMs?: number,
    /** Reopen the log file (SIGUSR1, after logrotate moved it). */
    readonly reopenLog?: () => void,
  ) {
    if (perfIntervalMs !== undefined) this.perf = new PerfMgr({ rpc: backend.rpc, log });
    // An SA client this process opens on the same port shares this SM's MadRpc (api/sa.ts).
    if (backend.kind === 'umad') this.offLocal = addLocalSm({ rpc: backend.rpc, port: backend.transport.local, saLid: () => this.subnet.sm.current?.smLid });
  }
  private readonly offLocal?: () => void;

  /** Typed events (see docs/api.md for every payload). */
  get events(): TypedEmitter<SubnetEvents> {
    return this.subnet.events;
  }

  /** The simulated fabric the SM runs on (with its fault controls), when the backend is one. */
  get sim(): SimFabric | undefined {
    return this.backend.sim;
  }

  /** The last heavy sweep's snapshot: fabric (nodes, ports, links, LIDs), discovery, routing.
   * Read-only all the way down (a newer heavy sweep makes a new one). */
  get snapshot(): ReadonlySnapshot | undefined {
    return this.subnet.sm.current;
  }

  /** The latest sweeps with their figures, oldest first (the last 1,024 to 2,048; totals in
   * `subnet.sm.sweepsDone`). */
  get sweeps(): readonly SweepStats[] {
    return this.subnet.sm.stats;
  }

  /** The first heavy sweep; resolves at SUBNET UP (or when another SM masters the subnet). The
   * PerfMgr's sweeps start after it. */
  async start(): Promise<SweepStats> {
    const stats = await this.subnet.start();
    if (this.perf) this.schedulePerf(0);
    return stats;
  }

  /** A PerfMgr sweep of the current fabric now (while this SM is master), then the next in an interval. */
  private schedulePerf(ms: number): void {
    if (this.stopped || !this.perf) return;
    this.perfTimer = this.backend.clock.setTimeout(() => {
      const snap = this.subnet.sm.current;
      const run = snap && this.subnet.sm.state === 'master' ? this.perf!.sweep(snap.fabric) : Promise.resolve(undefined);
      void run
        .then((st) => st && (this.log.debug('PerfMgr sweep done', { ...st }), this.web?.feed.perfSwept()))
        .catch((e: unknown) => this.log.warn('PerfMgr sweep failed', { error: (e as Error).message }))
        .finally(() => this.schedulePerf(this.perfIntervalMs!));
    }, ms);
  }

  /** @internal The options it was opened with (defaults applied); a reload compares with them. */
  options: OpenSmOptions = {};
  /** @internal The guid2lid file the sweeps save to (written in the background; `stop` waits for it). */
  guid2lidFile?: Guid2LidFile;

  /** Reload the configuration (SIGHUP, `ibsm reload`): `next` is the whole new configuration (as
   * openSm takes it). Every file is read and checked first; an error (naming its file and line)
   * is thrown with nothing changed, counted and sent as a `configReload` event. Then the settings
   * that can change live are applied (RELOADABLE_KEYS: the SA answers from them at once, a full
   * heavy sweep programs P_Keys, VL tables and routes), and the others that changed are named in
   * the result (they need a restart). The files are read again even when their paths are the same. */
  async reload(next: OpenSmOptions): Promise<ReloadResult> {
    const n = withDefaults(next);
    let files: SmFiles;
    let changed: Array<keyof SmConfig>;
    let r: ReturnType<Subnet['reconfigure']>;
    try {
      files = readSmFiles(n, undefined, this.log);
      changed = SM_CONFIG_KEYS.filter((k) => !sameValue((this.options as Record<string, unknown>)[k], (n as Record<string, unknown>)[k]));
      r = this.subnet.reconfigure({ partitions: files.partitions, qos: files.qos, qosVl: files.qosVl, routing: n.routing!, routingOptions: files.routingOptions });
    } catch (e) {
      this.subnet.noteReload({ ok: false, error: (e as Error).message });
      throw e;
    }
    warnRouteOrder(this.log, n.routing!, files);
    if (files.prefixRoutes) this.subnet.sa?.setInterSubnet(interSubnetPaths({ routers: [], prefixRoutes: files.prefixRoutes }));
    const applied = changed.filter((k) => RELOADABLE_KEYS.has(k));
    const restartNeeded = changed.filter((k) => !RELOADABLE_KEYS.has(k));
    // What runs now: the new values of what was applied, the old ones of what waits for a restart.
    const o = this.options as Record<string, unknown>;
    for (const k of applied) o[k] = (n as Record<string, unknown>)[k];
    this.subnet.noteReload({ ok: true, applied, restartNeeded });
    const reread = (['partitions', 'qosPolicy', 'rootGuidFile', 'cnGuidFile', 'ioGuidFile', 'guidRoutingOrderFile', 'prefixRoutes'] as const).filter((k) => n[k] !== undefined);
    return { reread, applied, restartNeeded, ...r };
  }

  /** Resolves at SUBNET UP (at once if it was). */
  whenUp(): Promise<void> {
    return this.subnet.sm.whenUp();
  }

  /** The route between two ports in the current snapshot, hop by hop through the programmed LFTs. */
  route(from: PortSpec, to: PortSpec): Route {
    const snap = this.subnet.sm.current;
    if (!snap) throw new Error('no route yet: the subnet is not up');
    return routeBetween(snap, from, to);
  }

  /** @internal Serve the metrics; resolves with their URL. */
  async serveMetrics(port: number, host = '127.0.0.1'): Promise<string> {
    const { SmMetrics, serveMetrics, metricsUrl } = await import('./metrics.js');
    const data = (this.metricsData = new SmMetrics(this.subnet, this.backend.rpc, this.perf));
    this.metrics = await serveMetrics(port, () => data.render(), host);
    return metricsUrl(this.metrics);
  }

  /** The live web view's URL (`web`), once served. */
  get webUrl(): string | undefined {
    return this.web?.server.url;
  }

  /** @internal */
  async serveWeb(listen: string): Promise<void> {
    const [{ WebFeed }, { serveWeb }] = await Promise.all([import('../web/feed.js'), import('../web/server.js')]);
    const feed = new WebFeed({ subnet: this.subnet, perf: this.perf, clock: this.backend.clock });
    try {
      this.web = { feed, server: await serveWeb(feed, parseListenAddress(listen), { log: this.log }) };
    } catch (e) {
      feed.close();
      throw e;
    }
  }

  /** Stop: a master hands the subnet to its best standby first (sm/sm.ts handOverOnStop), then
   * the servers, the SM and the port are closed. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.subnet.sm.handOverOnStop().catch(() => undefined);
    this.offLocal?.();
    this.web?.feed.close();
    await this.web?.server.close();
    if (this.perfTimer) this.backend.clock.clearTimeout(this.perfTimer);
    this.subnet.stop();
    this.metrics?.close();
    this.metricsData?.close();
    await this.backend.close();
    await this.guid2lidFile?.flush(); // the last sweep's LIDs on disk before the process ends
    this.log.limiter.flush(); // the suppressed-lines summaries still pending
    this.closeLog?.();
  }
}

/** Open the backend and build the SM+SA on it (files read and checked first); `start()` sweeps. */
export async function openSm(options: OpenSmOptions = {}): Promise<IbsmSm> {
  const o = withDefaults(options);
  let closeLog: (() => void) | undefined;
  let reopenLog: (() => void) | undefined;
  let log = o.log;
  if (!log) {
    const sink = o.logFile ? fileLogSink(o.logFile, o.logMaxSize, o.logTruncate) : undefined;
    closeLog = sink?.close;
    reopenLog = sink?.reopen;
    log = new Logger(sink, o.verbose ? 'debug' : 'info', o.logFormat ?? 'text');
  }
  const g2l = o.guid2lid === 'none' ? undefined : o.guid2lid;
  if (g2l) checkGuid2LidWritable(g2l);
  let guid2lid: Map<bigint, LidRange> | undefined;
  if (g2l && existsSync(g2l) && o.reassignLids) log.info('guid2lid not used: every port gets a new LID (reassign_lids)', { file: g2l });
  else if (g2l && existsSync(g2l)) {
    const dropped: string[] = [];
    guid2lid = parseGuid2Lid(namedText(g2l, 'guid2lid'), g2l, dropped);
    for (const d of dropped) log.warn('guid2lid entry not used', { problem: d });
    log.info('guid2lid loaded', { file: g2l, entries: guid2lid.size });
  }
  // The sweep hands each master sweep's LIDs to the store; the file is written off its path.
  const g2lStore = g2l ? new Guid2LidFile(g2l, log) : undefined;
  const smFiles = readSmFiles(o, log);
  const { partitions, qos, qosVl, routingOptions, prefixRoutes } = smFiles;
  warnRouteOrder(log, o.routing!, smFiles);

  const be = o.backend ?? await openBackend({ sim: o.sim, umad: o.umad, ca: o.ca, port: o.port, guid: o.guid, sm: true, sa: true, seed: o.seed, attach: o.attach, rpc: o.mkey !== undefined ? { mkey: o.mkey } : {} });
  if (be.windowCap) log.info('umad2sim: MADs in flight capped by the socket send buffer', { window: be.windowCap.window, sndbuf: be.windowCap.sndbuf });
  log.info('ibsm starting', { backend: be.kind, port: `${be.transport.local.caName}/${be.transport.local.portNum}`, portGuid: be.transport.local.portGuid, routing: o.routing!.join(','), lmc: o.lmc });
  const subnet = new Subnet({
    rpc: be.rpc,
    portGuid: be.transport.local.portGuid,
    smp: smpClientOf(be.rpc),
    clock: be.clock,
    log,
    routing: o.routing!,
    routingOptions,
    lmc: o.lmc!,
    guid2lid,
    saveGuid2Lid: g2lStore ? (m) => g2lStore.save(m) : undefined,
    partitions,
    qos,
    qosVl,
    partEnforce: o.partEnforce,
    reassignLids: o.reassignLids,
    lmcEsp0: o.lmcEsp0,
    forceHeavySweep: o.forceHeavySweep,
    honorGuid2lid: o.honorGuid2lid,
    sweepIntervalMs: o.sweepInterval! * 1000,
    subnetTimeout: o.subnetTimeout,
    gidPrefix: o.subnetPrefix,
    maxOpVls: o.maxOpVls,
    forceLinkSpeed: o.forceLinkSpeed,
    forceLinkSpeedExt: o.forceLinkSpeedExt,
    forceLinkSpeedExt2: o.forceLinkSpeedExt2,
    forceLinkWidth: o.forceLinkWidth,
    packetLife: o.packetLife,
    hoqLife: o.hoqLife,
    leafHoqLife: o.leafHoqLife,
    mkey: o.mkey,
    mkeyProtectBits: o.mkeyProtectBits,
    mkeyLeasePeriod: o.mkeyLease,
    priority: o.priority,
    smKey: o.smKey,
    saKey: o.saKey,
    forceMaster: o.forceMaster,
    pollIntervalMs: o.pollInterval,
    pollRetries: o.pollRetries,
    seed: o.seed,
    saServer: { answerCacheSize: o.saCache },
    saLimits: {
      servicesPerRequester: o.saServicesPerPort,
      subscriptionsPerRequester: o.saSubscriptionsPerPort,
      reportsQueuedPerSubscriber: o.saReportsQueued,
      groupsPerRequester: o.saGroupsPerPort,
      maxGroups: o.saMaxGroups,
      rmppPerRequester: o.saRmppPerPort,
      rmppTotal: o.saRmppTotal,
    },
    saProxyJoins: o.saProxyJoins,
    onProgress: o.onProgress,
  });
  if (prefixRoutes) subnet.sa?.setInterSubnet(interSubnetPaths({ routers: [], prefixRoutes }));
  const sm = new IbsmSm(subnet, be, log, closeLog, o.perfmgr ? o.perfmgrInterval! * 1000 : undefined, reopenLog);
  sm.options = o;
  sm.guid2lidFile = g2lStore;
  if (o.metricsListen !== undefined || o.metricsPort !== undefined) {
    try {
      const at = o.metricsListen !== undefined ? parseListenAddress(o.metricsListen) : { host: '127.0.0.1', port: o.metricsPort! };
      log.info('metrics served', { url: await sm.serveMetrics(at.port, at.host) });
    } catch (e) {
      await sm.stop();
      // a MetricsListenError naming the address; the option too
      (e as Error).message = `${o.metricsListen !== undefined ? `--metrics-listen ${o.metricsListen}` : `--metrics-port ${o.metricsPort}`}: ${(e as Error).message}`;
      throw e;
    }
  }
  if (o.web !== undefined) {
    try {
      await sm.serveWeb(o.web);
      log.info('web view served', { url: sm.webUrl });
    } catch (e) {
      await sm.stop();
      throw new Error(`--web ${o.web}: cannot serve the web view: ${(e as Error).message}`);
    }
  }
  return sm;
}

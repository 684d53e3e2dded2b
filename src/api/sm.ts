/** Open an SM+SA on a backend with the options of `ibsm run` (the config keys of the option table),
 * and stop it. `ibsm run` is this plus signals, --once and the progress line. The options and their
 * defaults: ./sm-config.ts; the files they name: ./sm-files.ts. */
import type { Server } from 'node:http';
import { Subnet, type SubnetOptions } from '../subnet.js';
import { smpClientOf } from '../sm/smp-client.js';
import type { SweepStats } from '../sm/sweep.js';
import type { ReadonlySnapshot } from '../model/snapshot.js';
import type { SimFabric } from '../sim/fabric.js';
import { Logger } from '../util/log.js';
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
import { warmSaWhenIdle } from '../sa/warmup.js';
import { interSubnetPaths } from '../sa/inter-subnet.js';
import { sameValue } from '../util/same-value.js';
import { fileLogSink } from './log-file.js';
import { optionsFor, RELOADABLE_KEYS, REREAD_KEYS, SM_CONFIG_KEYS, withDefaults, type OpenSmOptions, type ReloadResult, type SmConfig } from './sm-config.js';
import { parseFlapPolicy } from '../sm/health-flap.js';
import { parseUnresponsivePolicy } from '../sm/health-unresponsive-policy.js';
import { errorHeldPorts, parseErrorPolicy } from '../sm/health-errors.js';
import { openGuid2Lid, readSmFiles, readTopology, warnRouteOrder, type SmFiles } from './sm-files.js';
import type { Guid2LidFile } from './guid2lid-file.js';
import { HealthStateFile, healthStatePath } from './health-store-file.js';
import { SubnetNotUpError } from '../util/errors.js';
import { WebListenError } from '../util/listen.js';

export { fileLogSink } from './log-file.js';
export { RELOADABLE_KEYS, SM_CONFIG_KEYS, type OpenSmOptions, type ReloadResult, type SmConfig } from './sm-config.js';
export { GuidFileError, parseGuidFile } from '../model/guid-file.js';

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
      const sm = this.subnet.sm;
      // health hook: errors: the links the error-rate policy holds are read too; the readings go through it (sm/health-errors.ts).
      const run = snap && sm.state === 'master' ? this.perf!.sweep(snap.fabric, errorHeldPorts(sm.health.state.isolated)) : Promise.resolve(undefined);
      void run
        .then((st) => st && (this.log.debug('PerfMgr sweep done', { ...st }), sm.perfSwept(snap!.fabric, this.perf!.monitored()), this.web?.feed.perfSwept()))
        .catch((e: unknown) => this.log.warn('PerfMgr sweep failed', { error: (e as Error).message }))
        .finally(() => this.schedulePerf(this.perfIntervalMs!));
    }, ms);
  }

  /** @internal The options it was opened with (defaults applied); a reload compares with them. */
  options: OpenSmOptions = {};
  /** @internal The guid2lid file the sweeps save to (written in the background; `stop` waits for it). */
  guid2lidFile?: Guid2LidFile;
  /** @internal The health state file (api/health-store-file.ts; `stop` waits for its writes). */
  healthFile?: HealthStateFile;

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
    let flap: ReturnType<typeof parseFlapPolicy> | undefined;
    try {
      files = readSmFiles(n, undefined, this.log);
      files.topology = await readTopology(n);
      flap = n.healthFlap ? parseFlapPolicy(n.healthFlap) : undefined;
      changed = SM_CONFIG_KEYS.filter((k) => !sameValue((this.options as Record<string, unknown>)[k], (n as Record<string, unknown>)[k]));
      r = this.subnet.reconfigure({ partitions: files.partitions, qos: files.qos, qosVl: files.qosVl, routing: n.routing!, routingOptions: files.routingOptions });
    } catch (e) {
      this.subnet.noteReload({ ok: false, error: (e as Error).message });
      throw e;
    }
    warnRouteOrder(this.log, n.routing!, files);
    this.subnet.sm.health.configure(files.topology);
    this.subnet.sm.health.configureFlap(flap);
    if (files.prefixRoutes) this.subnet.sa?.setInterSubnet(interSubnetPaths({ routers: [], prefixRoutes: files.prefixRoutes }));
    const applied = changed.filter((k) => RELOADABLE_KEYS.has(k));
    const restartNeeded = changed.filter((k) => !RELOADABLE_KEYS.has(k));
    // What runs now: the new values of what was applied, the old ones of what waits for a restart.
    const o = this.options as Record<string, unknown>;
    for (const k of applied) o[k] = (n as Record<string, unknown>)[k];
    this.subnet.noteReload({ ok: true, applied, restartNeeded });
    const reread = REREAD_KEYS.filter((k) => n[k] !== undefined);
    return { reread, applied, restartNeeded, ...r };
  }

  /** Resolves at SUBNET UP (at once if it was). */
  whenUp(): Promise<void> {
    return this.subnet.sm.whenUp();
  }

  /** The route between two ports in the current snapshot, hop by hop through the programmed LFTs. */
  route(from: PortSpec, to: PortSpec): Route {
    const snap = this.subnet.sm.current;
    if (!snap) throw new SubnetNotUpError('no route yet: the subnet is not up (await sm.start())');
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
      this.web = { feed, server: await serveWeb(feed, parseListenAddress(listen), { log: this.log, clock: this.backend.clock }) };
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
    await this.healthFile?.flush(); // and the last isolations
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
    const sink = o.logFile ? fileLogSink(o.logFile, o.logMaxSizeMb, o.logTruncate) : undefined;
    closeLog = sink?.close;
    reopenLog = sink?.reopen;
    log = new Logger(sink, o.verbose ? 'debug' : 'info', o.logFormat ?? 'text');
  }
  // The sweep hands each master sweep's LIDs to the store; the file is written off its path.
  const { guid2lid, saveGuid2Lid, file: g2lStore } = openGuid2Lid(o, log);
  const smFiles = readSmFiles(o, log);
  const { partitions, qos, qosVl, routingOptions, prefixRoutes } = smFiles;
  const topology = await readTopology(o);
  // health hook: the flapping policy (sm/health-flap.ts) beside the expected topology.
  const flap = o.healthFlap ? parseFlapPolicy(o.healthFlap) : undefined;
  const unresponsive = o.healthUnresponsive ? parseUnresponsivePolicy(o.healthUnresponsive) : undefined; // and the unresponsive-SMA one
  // health hook: errors: the error-rate policy (sm/health-errors.ts), fed by PerfMgr.
  const errors = o.healthErrors ? parseErrorPolicy(o.healthErrors) : undefined;
  if (errors && !o.perfmgr) log.warn('--health-errors without --perfmgr: no error rates to judge', { healthErrors: o.healthErrors });
  warnRouteOrder(log, o.routing!, smFiles);

  const be = o.backend ?? (await openBackend({ ...optionsFor('backend', o), sm: true, sa: true }));
  if (be.windowCap) log.info('umad2sim: MADs in flight capped by the socket send buffer', { window: be.windowCap.window, sndbuf: be.windowCap.sndbuf, outstanding: be.windowCap.outstanding });
  log.info('ibsm starting', { backend: be.kind, port: `${be.transport.local.caName}/${be.transport.local.portNum}`, portGuid: be.transport.local.portGuid, routing: o.routing!.join(','), lmc: o.lmc });
  // health hook: the isolations kept next to the guid2lid file (api/health-store-file.ts).
  const healthPath = healthStatePath(g2lStore?.path);
  const healthStore = healthPath ? new HealthStateFile(healthPath, log, be.clock) : undefined;
  // Every option the table sends to the SM (`to: 'subnet.…'`), then what openSm made of the rest.
  const subnet = new Subnet({
    ...optionsFor('subnet', o),
    rpc: be.rpc,
    portGuid: be.transport.local.portGuid,
    smp: smpClientOf(be.rpc),
    clock: be.clock,
    log,
    routingOptions,
    guid2lid,
    saveGuid2Lid,
    partitions,
    qos,
    qosVl,
    topology: { ...topology, flap, unresponsive, errors, store: healthStore },
    onProgress: o.onProgress,
  } as SubnetOptions);
  if (prefixRoutes) subnet.sa?.setInterSubnet(interSubnetPaths({ routers: [], prefixRoutes }));
  // On a device the re-registration storms come from real hosts: the SA's code paths run once
  // first (sa/warmup.ts), in idle moments once this SM is up as master or stands by (not during the
  // first sweep, whose time it would lengthen): a takeover's storm meets warm code.
  if (be.kind === 'umad' && subnet.sa) {
    let warmed = false;
    const warm = (): void => {
      if (warmed) return;
      warmed = true;
      offUp();
      offStandby();
      warmSaWhenIdle((fn) => be.clock.defer(fn), (w) => log.debug('SA warmed up', { requests: w.requests, errors: w.errors }));
    };
    const offUp = subnet.events.on('subnetUp', warm);
    const offStandby = subnet.events.on('smStateChanged', (t) => {
      if (t.to === 'standby') warm();
    });
  }
  const sm = new IbsmSm(subnet, be, log, closeLog, o.perfmgr ? o.perfmgrIntervalS! * 1000 : undefined, reopenLog);
  sm.options = o;
  sm.guid2lidFile = g2lStore;
  sm.healthFile = healthStore;
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
      throw new WebListenError(`--web ${o.web}: cannot serve the web view: ${(e as Error).message}`, { cause: e });
    }
  }
  return sm;
}

/** Prometheus text metrics for `ibsm run --metrics-listen ADDR:PORT` (or `--metrics-port N`, on
 * 127.0.0.1): the SM, the RPC layer, the SA, the PerfMgr's port counters, duration histograms
 * (sweeps, SA requests, SMP round trips), route-verification figures, and the process and Node
 * runtime metrics prom-client would give (custom code: no dependency). */
import { MISMATCH_CLASSES } from '../model/topology-classes.js';
import { IbsmError } from '../util/errors.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver, constants as perfConstants, type IntervalHistogram } from 'node:perf_hooks';
import type { Subnet } from '../subnet.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { PerfMgr } from '../sm/perfmgr.js';
import type { Snapshot } from '../model/snapshot.js';
import type { SweepStats } from '../sm/sweep.js';
import { verifyRoutes, type VerifyReport } from '../routing/verify.js';
import { counterMetricName, counterMetricScale } from '../sm/perf-counters.js';
import { PORT_COUNTER_NAMES, PortCounters } from '../wire/pma.js';
import { Method, MgmtClass } from '../wire/mad.js';
import { SaAttr } from '../wire/sa.js';
import { HTTP_LIMITS, hostAllowed } from '../util/listen.js';
import { ConnectionGuard } from '../util/conn-guard.js';
import { formatGuid } from '../util/guid.js';
import { vportRows, vportsPerHca } from '../sm/vport-ops.js';

/** The metrics endpoint cannot listen where it was told (address in use, not local, ...). */
export class MetricsListenError extends IbsmError {
  override readonly name = 'MetricsListenError';
}

/** `ADDR:PORT` of --metrics-listen: an IPv4 address or host name, or `[IPv6]`, and a port (0: any free). */

/** Bucket upper bounds, seconds. */
const SWEEP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const SA_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];
const RTT_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

/** A Prometheus histogram: counts per bucket (not cumulative until rendered), sum, count. An
 * observation allocates nothing. */
export class Histogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    this.sum += v;
    this.count++;
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

const METHOD_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(Method).map(([k, v]) => [v, k]));
const SA_ATTR_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(SaAttr).map(([k, v]) => [v, k]));
/** The method and attribute of the "other" series of a closed label set (no method or attribute ID is negative). */
const OTHER = -1;
const saPairKey = (method: number, attrId: number): number => method * 0x10000 + attrId;
/** The series of the SA duration histogram, a closed set: Get and GetTable of every SA attribute,
 * Set and Delete of what a client registers (MCMemberRecord, ServiceRecord, InformInfo),
 * GetMulti(MultiPathRecord), GetTraceTable(TraceRecord), and one "other" for every other pair
 * (unknown methods, unknown attribute IDs, pairs the SA does not serve). Made at start: /metrics
 * is as long after any flood as before it. */
/** The attribute label of ibsm_sa_requests_total, a closed set (sa/server.ts attrName). */
const SA_REQUEST_LABELS = [...Object.keys(SaAttr), 'other'];
const SA_SERIES: ReadonlyArray<readonly [number, number]> = [
  ...Object.values(SaAttr).flatMap((a) => [[Method.Get, a] as const, [Method.GetTable, a] as const]),
  ...[SaAttr.MCMemberRecord, SaAttr.ServiceRecord, SaAttr.InformInfo].flatMap((a) => [[Method.Set, a] as const, [Method.Delete, a] as const]),
  [Method.GetMulti, SaAttr.MultiPathRecord],
  [Method.GetTraceTable, SaAttr.TraceRecord],
  [OTHER, OTHER],
];

/** Process and Node runtime figures (prom-client's default metric names). */
class RuntimeMetrics {
  private readonly lag: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly gc = new Map<string, Histogram>();
  private readonly gcObserver?: PerformanceObserver;
  readonly startTime = Math.round((Date.now() - process.uptime() * 1000) / 1000);
  constructor() {
    this.lag.enable();
    const kinds: Record<number, string> = {
      [perfConstants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
      [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
      [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
      [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
    };
    for (const k of Object.values(kinds)) this.gc.set(k, new Histogram(GC_BUCKETS));
    try {
      this.gcObserver = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          const kind = kinds[(e as { detail?: { kind?: number } }).detail?.kind ?? -1];
          if (kind) this.gc.get(kind)!.observe(e.duration / 1000);
        }
      });
      this.gcObserver.observe({ entryTypes: ['gc'] });
    } catch {
      /* no gc entries on this runtime: the histogram stays empty */
    }
  }
  render(m: MetricWriter): void {
    const cpu = process.cpuUsage();
    m.metric('process_cpu_user_seconds_total', 'counter', 'User CPU time spent, seconds.', [[{}, cpu.user / 1e6]]);
    m.metric('process_cpu_system_seconds_total', 'counter', 'System CPU time spent, seconds.', [[{}, cpu.system / 1e6]]);
    m.metric('process_cpu_seconds_total', 'counter', 'User and system CPU time spent, seconds.', [[{}, (cpu.user + cpu.system) / 1e6]]);
    m.metric('process_resident_memory_bytes', 'gauge', 'Resident memory size, bytes.', [[{}, process.memoryUsage.rss()]]);
    m.metric('process_start_time_seconds', 'gauge', 'Start time of the process since the Unix epoch, seconds.', [[{}, this.startTime]]);
    let fds: number | undefined;
    try {
      fds = readdirSync('/proc/self/fd').length;
    } catch {
      /* not Linux */
    }
    if (fds !== undefined) m.metric('process_open_fds', 'gauge', 'Open file descriptors.', [[{}, fds]]);
    const mem = process.memoryUsage();
    m.metric('nodejs_heap_size_total_bytes', 'gauge', 'Process heap size from Node.js, bytes.', [[{}, mem.heapTotal]]);
    m.metric('nodejs_heap_size_used_bytes', 'gauge', 'Process heap size used from Node.js, bytes.', [[{}, mem.heapUsed]]);
    m.metric('nodejs_external_memory_bytes', 'gauge', 'Node.js external memory size, bytes.', [[{}, mem.external]]);
    // monitorEventLoopDelay: nanoseconds, since the last scrape (reset after each).
    const l = this.lag;
    const s = (ns: number): number => (Number.isFinite(ns) ? ns / 1e9 : 0);
    m.metric('nodejs_eventloop_lag_seconds', 'gauge', 'Mean event loop delay since the last scrape, seconds.', [[{}, s(l.mean)]]);
    m.metric('nodejs_eventloop_lag_p50_seconds', 'gauge', 'Median event loop delay since the last scrape, seconds.', [[{}, s(l.percentile(50))]]);
    m.metric('nodejs_eventloop_lag_p99_seconds', 'gauge', '99th percentile event loop delay since the last scrape, seconds.', [[{}, s(l.percentile(99))]]);
    m.metric('nodejs_eventloop_lag_max_seconds', 'gauge', 'Highest event loop delay since the last scrape, seconds.', [[{}, s(l.max)]]);
    l.reset();
    m.histogram('nodejs_gc_duration_seconds', 'Garbage collection pauses by kind, seconds.', [...this.gc].map(([kind, h]) => [{ kind }, h]));
    m.metric('nodejs_version_info', 'gauge', 'Node.js version.', [[{ version: process.version }, 1]]);
  }
  close(): void {
    this.lag.disable();
    this.gcObserver?.disconnect();
  }
}

/** Duration histograms fed by the SM, the SA and MadRpc (hooks set at construction, so the first
 * sweep counts), the route verification of the current snapshot, and the runtime figures. */
export class SmMetrics {
  readonly sweepSeconds: Record<SweepStats['kind'], Histogram> = { heavy: new Histogram(SWEEP_BUCKETS), light: new Histogram(SWEEP_BUCKETS) };
  readonly smpRttSeconds = new Histogram(RTT_BUCKETS);
  /** By (method, attribute ID) pair (saPairKey), every series of the closed set made here, so no
   * request can add one (a pair not in SA_SERIES counts under method="other",attribute="other"). */
  readonly saSeconds = new Map<number, Histogram>(SA_SERIES.map(([m, a]) => [saPairKey(m, a), new Histogram(SA_BUCKETS)]));
  private readonly runtime = new RuntimeMetrics();
  private verified?: { snap: Snapshot; report: VerifyReport };
  private readonly unhook: Array<() => void> = [];

  constructor(
    readonly subnet: Subnet,
    readonly rpc: MadRpc,
    readonly perf?: PerfMgr,
  ) {
    this.unhook.push(subnet.events.on('sweep', (st) => this.sweepSeconds[st.kind].observe(st.ms / 1000)));
    rpc.onRoundTrip = (ms, cls) => {
      if (cls === MgmtClass.SubnDirected || cls === MgmtClass.SubnLid) this.smpRttSeconds.observe(ms / 1000);
    };
    this.unhook.push(() => (rpc.onRoundTrip = undefined));
    const sa = subnet.sa;
    if (sa) {
      const other = this.saSeconds.get(saPairKey(OTHER, OTHER))!;
      sa.onTimed = (method, attrId, ms) => (this.saSeconds.get(saPairKey(method, attrId)) ?? other).observe(ms / 1000);
      this.unhook.push(() => (sa.onTimed = undefined));
    }
  }

  /** The verification of the current snapshot's routes (computed once per snapshot). */
  verification(): VerifyReport | undefined {
    const snap = this.subnet.sm.current;
    if (!snap) return undefined;
    if (this.verified?.snap !== snap) this.verified = { snap, report: verifyRoutes(snap.fabric, snap.routing, { stretch: false }) };
    return this.verified.report;
  }

  render(): string {
    return renderMetrics(this.subnet, this.rpc, this.perf, this);
  }

  /** @internal what renderMetrics adds from here. */
  write(m: MetricWriter): void {
    m.histogram('ibsm_sweep_duration_seconds', 'Duration of sweeps, by kind (heavy includes local sweeps), seconds.', (['heavy', 'light'] as const).map((k) => [{ kind: k }, this.sweepSeconds[k]]));
    const sa: Array<[Record<string, string>, Histogram]> = [];
    for (const [m, a] of SA_SERIES) sa.push([{ method: METHOD_NAMES[m] ?? 'other', attribute: SA_ATTR_NAMES[a] ?? 'other' }, this.saSeconds.get(saPairKey(m, a))!]);
    m.histogram('ibsm_sa_request_duration_seconds', 'Time to answer an SA request (from taking it off the queue to its response handed to the transport), by method and attribute, seconds.', sa);
    m.histogram('ibsm_smp_rtt_seconds', 'Round-trip time of SMPs answered at their first try, seconds.', [[{}, this.smpRttSeconds]]);
    const v = this.verification();
    if (v) {
      m.metric('ibsm_routes_per_link_max', 'gauge', 'CA-to-CA routes on the busiest directed switch-to-switch link (current routes).', [[{}, v.linkLoad.max]]);
      m.metric('ibsm_routes_per_link_mean', 'gauge', 'Mean CA-to-CA routes per directed switch-to-switch link (current routes).', [[{}, v.linkLoad.mean]]);
      m.metric('ibsm_cdg_cycles', 'gauge', 'Strongly connected components with a cycle in the channel dependency graph, by VL (0: deadlock-free on that VL).', v.cdg.map((c) => [{ vl: String(c.vl) }, c.cyclicComponents]));
      m.metric('ibsm_routes_deadlock_free', 'gauge', 'Whether the current routes are free of channel-dependency cycles on every VL.', [[{}, v.deadlockFree ? 1 : 0]]);
      m.metric('ibsm_routes_unreachable_pairs', 'gauge', '(CA port, destination LID) pairs the current routes do not deliver.', [[{}, v.unreachablePairs]]);
      m.metric('ibsm_route_loop_entries', 'gauge', '(switch, LID) pairs whose route loops in the current tables.', [[{}, v.loopEntries]]);
      m.metric('ibsm_routing_engine_info', 'gauge', 'The routing engine of the current routes.', [[{ engine: this.subnet.sm.current!.routing.engine }, 1]]);
    }
    this.runtime.render(m);
  }

  close(): void {
    for (const u of this.unhook.splice(0)) u();
    this.runtime.close();
  }
}

/** Writes the Prometheus text exposition format. */
interface MetricWriter {
  metric(name: string, type: 'counter' | 'gauge', help: string, samples: Array<[Record<string, string>, number]>): void;
  histogram(name: string, help: string, series: Array<[Record<string, string>, Histogram]>): void;
}

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

const labelText = (labels: Record<string, string>): string => Object.entries(labels).map(([k, x]) => `${k}="${esc(x)}"`).join(',');

/** The metrics text: counters and gauges of the SM, the RPC layer and the SA; with `extra` (the
 * SmMetrics an SM serves with) the histograms, route verification and runtime metrics too. */
export function renderMetrics(subnet: Subnet, rpc: MadRpc, perf?: PerfMgr, extra?: SmMetrics): string {
  const out: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[Record<string, string>, number]>): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) {
      const l = labelText(labels);
      out.push(`${name}${l ? `{${l}}` : ''} ${v}`);
    }
  };
  const histogram = (name: string, help: string, series: Array<[Record<string, string>, Histogram]>): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
    for (const [labels, h] of series) {
      const l = labelText(labels);
      const sep = l ? `${l},` : '';
      let cum = 0;
      h.bounds.forEach((b, i) => {
        cum += h.counts[i]!;
        out.push(`${name}_bucket{${sep}le="${b}"} ${cum}`);
      });
      out.push(`${name}_bucket{${sep}le="+Inf"} ${h.count}`, `${name}_sum${l ? `{${l}}` : ''} ${h.sum}`, `${name}_count${l ? `{${l}}` : ''} ${h.count}`);
    }
  };
  const last = subnet.sm.lastHeavySweep;
  const snap = subnet.sm.current;
  // Up while this SM masters a swept subnet, or stands by under a live master; 0 before the
  // first SUBNET UP and whenever it lost the fabric (its port down: DISCOVERING again).
  const up = (subnet.sm.state === 'master' && snap !== undefined) || subnet.sm.state === 'standby';
  metric('ibsm_subnet_up', 'gauge', 'Whether the subnet is up as this SM sees it now: master of a swept subnet, or standby under a live master.', [[{}, up ? 1 : 0]]);
  const sm = subnet.sm;
  const states = ['notActive', 'discovering', 'standby', 'master'] as const;
  metric('ibsm_sm_state', 'gauge', 'SMInfo state of this SM (0 NOTACTIVE, 1 DISCOVERING, 2 STANDBY, 3 MASTER).', [[{}, sm.smInfo().smState]]);
  metric('ibsm_sm_state_transitions_total', 'counter', 'SMInfo state changes, by the state entered.', states.map((s) => [{ state: s }, sm.transitions[s]]));
  metric('ibsm_foreign_master', 'gauge', 'A master with another SM_Key held the fabric at the last heavy sweep, so this SM programmed nothing (IBSM-1036): 1, else 0.', [[{}, sm.contestedBy ? 1 : 0]]);
  metric('ibsm_foreign_master_sweeps_total', 'counter', 'Heavy sweeps that found a master with another SM_Key holding the fabric and wrote nothing.', [[{}, sm.contestedSweeps]]);
  metric('ibsm_sweeps_total', 'counter', 'Sweeps completed, by kind.', [
    [{ kind: 'heavy' }, subnet.sm.sweepsDone.heavy],
    [{ kind: 'light' }, subnet.sm.sweepsDone.light],
  ]);
  metric('ibsm_fabric_nodes', 'gauge', 'Nodes found by the last heavy sweep.', [[{}, last?.nodes ?? 0]]);
  metric('ibsm_fabric_switches', 'gauge', 'Switches found by the last heavy sweep.', [[{}, last?.switches ?? 0]]);
  metric('ibsm_fabric_end_ports', 'gauge', 'End ports with a LID after the last heavy sweep.', [[{}, last?.endPorts ?? 0]]);
  metric('ibsm_max_lid', 'gauge', 'Highest unicast LID assigned.', [[{}, last?.maxLid ?? 0]]);
  metric('ibsm_last_heavy_sweep_seconds', 'gauge', 'Duration of the last heavy sweep.', [[{}, (last?.ms ?? 0) / 1000]]);
  metric('ibsm_last_heavy_sweep_smps', 'gauge', 'SMPs sent by the last heavy sweep.', [[{}, last?.smps ?? 0]]);
  const w = subnet.sm.written;
  metric('ibsm_table_blocks_written_total', 'counter', 'Forwarding and partition table blocks written, by table.', [
    [{ table: 'lft' }, w.lftBlocksWritten],
    [{ table: 'mft' }, w.mftBlocksWritten],
    [{ table: 'pkey' }, w.pkeyBlocksWritten],
    [{ table: 'sl2vl_vlarb' }, w.vlTablesWritten],
  ]);
  metric('ibsm_pkey_tables_full', 'gauge', 'Ports whose P_Key table cannot hold all their partitions (the first that fit are written; IBSM-2038 names them), at the last heavy sweep.', [[{}, last?.pkeyTablesFull ?? 0]]);
  metric('ibsm_portinfo_sets_total', 'counter', 'PortInfo Sets sent by heavy sweeps.', [[{}, w.portInfoSets]]);
  metric('ibsm_smp_failures_total', 'counter', 'SMPs the sweeps gave up after every retry (the node or port waits for the next sweep), by reason.', Object.entries(sm.smpFailures).map(([reason, n]) => [{ reason }, n]));
  metric('ibsm_sweep_skipped_nodes', 'gauge', "Nodes (or links to nodes) the last heavy sweep left out: unreadable, or answering with another node's GUID.", [[{}, sm.skippedNodes]]);
  // Fabric health (issue #33): the expected topology's mismatches by class, the isolations held.
  const health = sm.health;
  const byClass = new Map<string, number>(MISMATCH_CLASSES.map((c) => [c, 0]));
  for (const m of health.state.mismatches) byClass.set(m.cls, (byClass.get(m.cls) ?? 0) + 1);
  metric('ibsm_topology_mismatches', 'gauge', 'Mismatches with the expected topology (--topology) at the last comparison, by class (those whose action is ignore not counted).', [...byClass].map(([c, n]) => [{ class: c }, n]));
  metric('ibsm_topology_checks_total', 'counter', 'Comparisons with the expected topology (one per heavy or local sweep that programmed).', [[{}, health.checks]]);
  metric('ibsm_isolated', 'gauge', 'Links and nodes held isolated (in INIT, out of routing), by kind.', (['link', 'node'] as const).map((k) => [{ kind: k }, health.state.isolated.filter((i) => i.kind === k).length]));
  // health hook: errors
  if (health.errors) metric('ibsm_error_rate_links', 'gauge', 'Links whose PerfMgr error counters rose faster than --health-errors allows and have not been quiet since (warned about or isolated).', [[{}, health.errors.erroringLinks]]);
  metric('ibsm_isolated_ports_taken_down_total', 'counter', 'Isolated ports that were ARMED or ACTIVE, set Down (they retrain to INIT, where they are held).', [[{}, health.takenDown]]);
  const r = rpc.stats;
  metric('ibsm_mads_sent_total', 'counter', 'Requests handed to the transport (first tries and retries).', [[{}, r.sent]]);
  metric('ibsm_mad_retries_total', 'counter', 'Request retries.', [[{}, r.retries]]);
  metric('ibsm_mad_timeouts_total', 'counter', 'Request tries that timed out.', [[{}, r.timeouts]]);
  metric('ibsm_mad_failures_total', 'counter', 'Requests given up after every try.', [[{}, r.failed]]);
  metric('ibsm_mads_unsolicited_total', 'counter', 'Unsolicited MADs received (traps, SA requests).', [[{}, r.unsolicited]]);
  if (subnet.sa) {
    const sa = subnet.sa.stats;
    metric('ibsm_sa_requests_total', 'counter', 'SA requests received, by attribute (IDs the SA does not know: "other").', SA_REQUEST_LABELS.map((a) => [{ attribute: a }, sa.byAttribute[a] ?? 0]));
    metric('ibsm_sa_answers_total', 'counter', 'SA answers, by MAD/SA status.', Object.entries(sa.byStatus).map(([st, n]) => [{ status: st }, n]));
    metric('ibsm_sa_busy_total', 'counter', 'SA requests answered BUSY.', [[{}, sa.busy]]);
    metric('ibsm_sa_invalid_total', 'counter', 'SA requests that did not decode.', [[{}, sa.invalid]]);
    metric('ibsm_sa_wrong_key_total', 'counter', 'SA requests dropped unanswered: a non-zero SM_Key field other than the SA_Key (--sa-key).', [[{}, sa.wrongKey]]);
    metric('ibsm_sa_path_cache_total', 'counter', 'PathRecord Gets answered from the per-sweep answer cache (hit) or computed (miss).', [
      [{ result: 'hit' }, sa.cache.hits],
      [{ result: 'miss' }, sa.cache.misses],
    ]);
  }
  metric('ibsm_multicast_groups', 'gauge', 'Multicast groups the SA holds.', [[{}, subnet.multicast.list().length]]);
  metric('ibsm_config_reloads_total', 'counter', 'Configuration reloads (SIGHUP, ibsm reload), by result: ok (applied) or failed (a file in error; the running configuration kept).', [[{ result: 'ok' }, subnet.reloads.ok], [{ result: 'failed' }, subnet.reloads.failed]]);
  if (perf) {
    metric('ibsm_perfmgr_sweeps_total', 'counter', 'PerfMgr sweeps done.', [[{}, perf.totals.sweeps]]);
    metric('ibsm_perfmgr_mads_total', 'counter', 'PMA queries the PerfMgr sent.', [[{}, perf.totals.mads]]);
    metric('ibsm_perfmgr_port_failures_total', 'counter', 'Port readings that failed (the PMA did not answer or refused).', [[{}, perf.totals.failures]]);
    const ports = [...perf.monitored()];
    const labels = (p: (typeof ports)[number]): Record<string, string> => ({ node_guid: `${formatGuid(p.nodeGuid)}`, port_num: String(p.portNum), node_desc: p.nodeDesc });
    for (const name of PORT_COUNTER_NAMES) {
      const scale = counterMetricScale(name);
      const unit = scale === 4 ? ', bytes (the PMA counts 4-octet words: × 4)' : name === 'xmitPkts' || name === 'rcvPkts' ? ', packets' : name === 'xmitWait' ? ', ticks the port had data to send but no credits' : ', events';
      metric(`ibsm_port_${counterMetricName(name)}_total`, 'counter', `${PortCounters.fields[name].label} of each port, 64-bit total since the PerfMgr first read it${unit}.`, ports.map((p) => [labels(p), Number(p.counters.totals[name]) * scale]));
    }
  }
  writeVportMetrics(metric, subnet);
  extra?.write({ metric, histogram });
  return out.join('\n') + '\n';
}

/** The URL a listening metrics server answers on (an unspecified address shown as it is). */
export function metricsUrl(server: Server): string {
  const a = server.address() as AddressInfo;
  return `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/metrics`;
}

/** Connections to the metrics endpoint: a scraper or two, a person with curl (util/conn-guard.ts). */
const METRICS_CONNECTIONS = { max: 64, perPeer: 32, idleMs: HTTP_LIMITS.idleMs };

/** Serve /metrics on host:port (default 127.0.0.1). Resolves once listening; rejects with a
 * MetricsListenError naming the address. Held under abuse as the web view is: header and request
 * timeouts, connections capped in all and per peer, the Host header checked when on loopback. */
export function serveMetrics(port: number, render: () => string, host = '127.0.0.1'): Promise<Server> {
  const server = createServer({ headersTimeout: HTTP_LIMITS.headersTimeoutMs, requestTimeout: HTTP_LIMITS.requestTimeoutMs, keepAliveTimeout: HTTP_LIMITS.keepAliveMs, maxHeaderSize: HTTP_LIMITS.maxHeaderSize, connectionsCheckingInterval: 1_000 }, (req, res) => {
    guard.busy(req.socket, 1);
    res.once('close', () => guard.busy(req.socket, -1));
    // As the web view: bound to loopback, only a loopback name may be asked for (DNS rebinding).
    if (!hostAllowed(host, req.headers.host)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(`the metrics endpoint listens on ${host}: ask for it as localhost, 127.0.0.1 or [::1]\n`);
      return;
    }
    if (req.method !== 'GET' || (req.url !== '/metrics' && req.url !== '/')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    let body: string;
    try {
      body = render();
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(e as Error).message}\n`);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' }).end(body);
  });
  const guard = new ConnectionGuard(server, METRICS_CONNECTIONS);
  server.on('clientError', (_e, socket) => socket.destroy());
  return new Promise((resolve, reject) => {
    const fail = (e: Error): void => reject(new MetricsListenError(`cannot serve metrics on ${host.includes(':') ? `[${host}]` : host}:${port}: ${e.message}`));
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      resolve(server);
    });
  });
}

/** SR-IOV vports (docs/vports.md): totals, and counts per HCA (only HCAs that have vports). */
function writeVportMetrics(metric: (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[Record<string, string>, number]>) => void, subnet: Subnet): void {
  const mgr = subnet.sm.vports;
  if (!mgr.ports.size) return;
  const hcas = vportsPerHca(vportRows(mgr, subnet.sm.current?.fabric));
  const labels = (h: (typeof hcas)[number]): Record<string, string> => ({ node_guid: formatGuid(h.nodeGuid), node_desc: h.nodeDesc });
  metric('ibsm_vport_capable_ports', 'gauge', 'CA ports with SR-IOV virtualization (CapabilityMask2.IsVirtualizationSupported).', [[{}, mgr.ports.size]]);
  metric('ibsm_vports', 'gauge', 'Vports (virtual functions, vport 0 not counted) the SM knows, per HCA.', hcas.map((h) => [labels(h), h.vports]));
  metric('ibsm_vports_active', 'gauge', 'Vports ACTIVE, per HCA.', hcas.map((h) => [labels(h), h.active]));
  metric('ibsm_vports_with_lid', 'gauge', 'LidRequired vports holding their own LID, per HCA.', hcas.map((h) => [labels(h), h.withLid]));
}

/** Prometheus text metrics for `ibsm run --metrics-port N` (served on 127.0.0.1 only). */
import { createServer, type Server } from 'node:http';
import type { Subnet } from '../subnet.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { PerfMgr } from '../sm/perfmgr.js';
import { counterMetricName } from '../sm/perf-counters.js';
import { PORT_COUNTER_NAMES, PortCounters } from '../wire/pma.js';

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** The metrics text: counters and gauges of the SM, the RPC layer and the SA. */
export function renderMetrics(subnet: Subnet, rpc: MadRpc, perf?: PerfMgr): string {
  const out: string[] = [];
  const metric = (name: string, type: 'counter' | 'gauge', help: string, samples: Array<[Record<string, string>, number]>): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) {
      const l = Object.entries(labels).map(([k, x]) => `${k}="${esc(x)}"`).join(',');
      out.push(`${name}${l ? `{${l}}` : ''} ${v}`);
    }
  };
  const stats = subnet.sm.stats;
  const heavy = stats.filter((s) => s.kind === 'heavy');
  const last = heavy.at(-1);
  const snap = subnet.sm.current;
  // Up while this SM masters a swept subnet, or stands by under a live master; 0 before the
  // first SUBNET UP and whenever it lost the fabric (its port down: DISCOVERING again).
  const up = (subnet.sm.state === 'master' && snap !== undefined) || subnet.sm.state === 'standby';
  metric('ibsm_subnet_up', 'gauge', 'Whether the subnet is up as this SM sees it now: master of a swept subnet, or standby under a live master.', [[{}, up ? 1 : 0]]);
  const sm = subnet.sm;
  const states = ['notActive', 'discovering', 'standby', 'master'] as const;
  metric('ibsm_sm_state', 'gauge', 'SMInfo state of this SM (0 NOTACTIVE, 1 DISCOVERING, 2 STANDBY, 3 MASTER).', [[{}, sm.smInfo().smState]]);
  metric('ibsm_sm_state_transitions_total', 'counter', 'SMInfo state changes, by the state entered.', states.map((s) => [{ state: s }, sm.transitions[s]]));
  metric('ibsm_sweeps_total', 'counter', 'Sweeps completed, by kind.', [
    [{ kind: 'heavy' }, heavy.length],
    [{ kind: 'light' }, stats.length - heavy.length],
  ]);
  metric('ibsm_fabric_nodes', 'gauge', 'Nodes found by the last heavy sweep.', [[{}, last?.nodes ?? 0]]);
  metric('ibsm_fabric_switches', 'gauge', 'Switches found by the last heavy sweep.', [[{}, last?.switches ?? 0]]);
  metric('ibsm_fabric_end_ports', 'gauge', 'End ports with a LID after the last heavy sweep.', [[{}, last?.endPorts ?? 0]]);
  metric('ibsm_max_lid', 'gauge', 'Highest unicast LID assigned.', [[{}, last?.maxLid ?? 0]]);
  metric('ibsm_last_heavy_sweep_seconds', 'gauge', 'Duration of the last heavy sweep.', [[{}, (last?.ms ?? 0) / 1000]]);
  metric('ibsm_last_heavy_sweep_smps', 'gauge', 'SMPs sent by the last heavy sweep.', [[{}, last?.smps ?? 0]]);
  const sum = (f: (s: (typeof stats)[number]) => number): number => heavy.reduce((a, s) => a + f(s), 0);
  metric('ibsm_table_blocks_written_total', 'counter', 'Forwarding and partition table blocks written, by table.', [
    [{ table: 'lft' }, sum((s) => s.lftBlocksWritten)],
    [{ table: 'mft' }, sum((s) => s.mftBlocksWritten)],
    [{ table: 'pkey' }, sum((s) => s.pkeyBlocksWritten)],
    [{ table: 'sl2vl_vlarb' }, sum((s) => s.vlTablesWritten)],
  ]);
  metric('ibsm_portinfo_sets_total', 'counter', 'PortInfo Sets sent by heavy sweeps.', [[{}, sum((s) => s.portInfoSets)]]);
  metric('ibsm_smp_failures_total', 'counter', 'SMPs the sweeps gave up after every retry (the node or port waits for the next sweep), by reason.', Object.entries(sm.smpFailures).map(([reason, n]) => [{ reason }, n]));
  metric('ibsm_sweep_skipped_nodes', 'gauge', "Nodes (or links to nodes) the last heavy sweep left out: unreadable, or answering with another node's GUID.", [[{}, sm.skippedNodes]]);
  const r = rpc.stats;
  metric('ibsm_mads_sent_total', 'counter', 'Requests handed to the transport (first tries and retries).', [[{}, r.sent]]);
  metric('ibsm_mad_retries_total', 'counter', 'Request retries.', [[{}, r.retries]]);
  metric('ibsm_mad_timeouts_total', 'counter', 'Request tries that timed out.', [[{}, r.timeouts]]);
  metric('ibsm_mad_failures_total', 'counter', 'Requests given up after every try.', [[{}, r.failed]]);
  metric('ibsm_mads_unsolicited_total', 'counter', 'Unsolicited MADs received (traps, SA requests).', [[{}, r.unsolicited]]);
  if (subnet.sa) {
    const sa = subnet.sa.stats;
    metric('ibsm_sa_requests_total', 'counter', 'SA requests received, by attribute.', Object.entries(sa.byAttribute).map(([a, n]) => [{ attribute: a }, n]));
    metric('ibsm_sa_answers_total', 'counter', 'SA answers, by MAD/SA status.', Object.entries(sa.byStatus).map(([st, n]) => [{ status: st }, n]));
    metric('ibsm_sa_busy_total', 'counter', 'SA requests answered BUSY.', [[{}, sa.busy]]);
    metric('ibsm_sa_invalid_total', 'counter', 'SA requests that did not decode.', [[{}, sa.invalid]]);
    metric('ibsm_sa_path_cache_total', 'counter', 'PathRecord Gets answered from the per-sweep answer cache (hit) or computed (miss).', [
      [{ result: 'hit' }, sa.cache.hits],
      [{ result: 'miss' }, sa.cache.misses],
    ]);
  }
  metric('ibsm_multicast_groups', 'gauge', 'Multicast groups the SA holds.', [[{}, subnet.multicast.list().length]]);
  if (perf) {
    metric('ibsm_perfmgr_sweeps_total', 'counter', 'PerfMgr sweeps done.', [[{}, perf.totals.sweeps]]);
    metric('ibsm_perfmgr_mads_total', 'counter', 'PMA queries the PerfMgr sent.', [[{}, perf.totals.mads]]);
    metric('ibsm_perfmgr_port_failures_total', 'counter', 'Port readings that failed (the PMA did not answer or refused).', [[{}, perf.totals.failures]]);
    const ports = [...perf.monitored()];
    const labels = (p: (typeof ports)[number]): Record<string, string> => ({ node_guid: `0x${p.nodeGuid.toString(16).padStart(16, '0')}`, port_num: String(p.portNum), node_desc: p.nodeDesc });
    for (const name of PORT_COUNTER_NAMES) {
      const unit = name === 'xmitData' || name === 'rcvData' ? ' (in 4-octet words, as the PMA counts)' : '';
      metric(`ibsm_port_${counterMetricName(name)}_total`, 'counter', `${PortCounters.fields[name].label} of each port, 64-bit total since the PerfMgr first read it${unit}.`, ports.map((p) => [labels(p), Number(p.counters.totals[name])]));
    }
  }
  return out.join('\n') + '\n';
}

/** Serve /metrics on 127.0.0.1:port. Resolves once listening. */
export function serveMetrics(port: number, render: () => string): Promise<Server> {
  const server = createServer((req, res) => {
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
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

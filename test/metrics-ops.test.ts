/** Metrics worth scraping (issue 14 item 5): --metrics-listen, histograms of sweeps, SA requests
 * and SMP round trips, process and Node runtime metrics, route-verification gauges. */
import { describe, expect, it } from 'vitest';
import { Logger, MemorySink } from '../src/util/log.js';
import { openSaClient, openSm, type IbsmSm } from '../src/index.js';
import { Histogram } from '../src/api/metrics.js';
import { parseListenAddress as parseListen } from '../src/util/listen.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { NodeType } from '../src/wire/mad.js';
import { STATS_KEPT } from '../src/sm/sm.js';

const SPEC = 'gen:fattree2:leaves=3,spines=2,hosts=2';

/** Samples of one metric family: name (with suffix) → [labels text, value]. */
function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  const out: Array<{ labels: Record<string, string>; value: number }> = [];
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:\\.|[^"\\])*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ labels, value: Number(m[3]) });
  }
  return out;
}

/** Every series of a histogram family, checked for shape: `le` rising, cumulative counts never
 * falling, the +Inf bucket equal to _count. Returns count and sum per series (by its labels). */
function histogram(text: string, name: string): Map<string, { count: number; sum: number; buckets: Array<[number, number]> }> {
  expect(text).toContain(`# TYPE ${name} histogram`);
  const key = (l: Record<string, string>): string => JSON.stringify(Object.entries(l).filter(([k]) => k !== 'le').sort());
  const series = new Map<string, { count: number; sum: number; buckets: Array<[number, number]> }>();
  const get = (k: string) => series.get(k) ?? (series.set(k, { count: NaN, sum: NaN, buckets: [] }), series.get(k)!);
  for (const s of samples(text, `${name}_bucket`)) get(key(s.labels)).buckets.push([s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value]);
  for (const s of samples(text, `${name}_count`)) get(key(s.labels)).count = s.value;
  for (const s of samples(text, `${name}_sum`)) get(key(s.labels)).sum = s.value;
  for (const [k, h] of series) {
    expect(h.buckets.length, k).toBeGreaterThan(1);
    for (let i = 1; i < h.buckets.length; i++) {
      expect(h.buckets[i]![0], `${name} ${k} le rising`).toBeGreaterThan(h.buckets[i - 1]![0]);
      expect(h.buckets[i]![1], `${name} ${k} cumulative`).toBeGreaterThanOrEqual(h.buckets[i - 1]![1]);
    }
    expect(h.buckets.at(-1)![0]).toBe(Infinity);
    expect(h.buckets.at(-1)![1], `${name} ${k} +Inf = count`).toBe(h.count);
    expect(h.sum).toBeGreaterThanOrEqual(0);
  }
  return series;
}

async function openWithMetrics(listen: string): Promise<{ sm: IbsmSm; sink: MemorySink; url: string }> {
  const sink = new MemorySink();
  const sm = await openSm({ sim: SPEC, seed: 1, sweepIntervalS: 0, routing: ['minhop'], metricsListen: listen, log: new Logger(sink, 'info', 'json') });
  const served = sink.lines.map((l) => JSON.parse(l) as { msg: string; code: string; url?: string }).find((l) => l.code === 'IBSM-8020')!;
  expect(served.code).toBe('IBSM-8020');
  return { sm, sink, url: served.url! };
}

describe('metrics endpoint', () => {
  it('--metrics-listen 0.0.0.0:0 answers (on the loopback too); the URL logged names the port bound', async () => {
    const { sm, url } = await openWithMetrics('0.0.0.0:0');
    try {
      const m = /^http:\/\/0\.0\.0\.0:(\d+)\/metrics$/.exec(url);
      expect(m, url).not.toBeNull();
      const port = Number(m![1]);
      expect(port).toBeGreaterThan(0);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/^ibsm_sm_state 0$/m); // not started yet
    } finally {
      await sm.stop();
    }
  });

  it('histograms for sweeps, SA requests and SMP round trips: well formed, and a sweep moves the sweep histogram', async () => {
    const { sm, url } = await openWithMetrics('127.0.0.1:0');
    try {
      await sm.start();
      const scrape = async (): Promise<string> => (await fetch(url)).text();
      let text = await scrape();
      const heavy = sm.sweeps.filter((s) => s.kind === 'heavy');
      let sweeps = histogram(text, 'ibsm_sweep_duration_seconds');
      const h0 = sweeps.get(JSON.stringify([['kind', 'heavy']]))!;
      expect(h0.count).toBe(heavy.length);
      expect(h0.sum).toBeCloseTo(heavy.reduce((a, s) => a + s.ms, 0) / 1000, 6);
      expect(sweeps.get(JSON.stringify([['kind', 'light']]))!.count).toBe(0);

      // SMP round trips: every SMP of the sweep answered at its first try on this fabric.
      const rtt = histogram(text, 'ibsm_smp_rtt_seconds').get('[]')!;
      expect(rtt.count).toBeGreaterThan(0);
      expect(rtt.count).toBeLessThanOrEqual(sm.backend.rpc.stats.responses);
      expect(rtt.count).toBeGreaterThanOrEqual(heavy[0]!.smps - sm.backend.rpc.stats.retries);

      // A heavy sweep more: the count rises by one and the sum by its duration.
      const st = await sm.subnet.sm.sweep('heavy');
      text = await scrape();
      sweeps = histogram(text, 'ibsm_sweep_duration_seconds');
      const h1 = sweeps.get(JSON.stringify([['kind', 'heavy']]))!;
      expect(h1.count).toBe(h0.count + 1);
      expect(h1.sum - h0.sum).toBeCloseTo(st.ms / 1000, 6);
      // and a light one moves the light series
      await sm.subnet.sm.sweep('light');
      expect(histogram(await scrape(), 'ibsm_sweep_duration_seconds').get(JSON.stringify([['kind', 'light']]))!.count).toBe(1);

      // SA requests by method and attribute: three PathRecord Gets from a client.
      const sa = await openSaClient({ sm });
      try {
        const lids = sm.snapshot!.fabric.nodes.filter((n) => n.type !== NodeType.Switch).map((n) => n.ports.find((p) => p?.lid)!.lid!);
        for (let i = 0; i < 3; i++) await sa.pathRecords({ slid: lids[0], dlid: lids[1 + i] });
      } finally {
        await sa.close();
      }
      text = await scrape();
      const sah = histogram(text, 'ibsm_sa_request_duration_seconds');
      // every series of the closed set is there from the start (#29); one method's has counts
      expect([...sah].filter(([k]) => k.includes('"PathRecord"')).length).toBe(2); // Get, GetTable
      const pr = [...sah].filter(([k, h]) => k.includes('"PathRecord"') && h.count > 0);
      expect(pr.length).toBe(1); // one method
      const prCount = samples(text, 'ibsm_sa_request_duration_seconds_count').find((s) => s.labels.attribute === 'PathRecord' && s.value > 0)!;
      expect(['Get', 'GetTable']).toContain(prCount.labels.method);
      expect(pr[0]![1].count).toBe(3);
      // the same requests the SA counted
      expect(prCount.value).toBe(samples(text, 'ibsm_sa_requests_total').find((s) => s.labels.attribute === 'PathRecord')!.value);
    } finally {
      await sm.stop();
    }
  });

  it('the sweep history is bounded while the sweep counters keep counting (a daemon of months)', async () => {
    const { sm, url } = await openWithMetrics('127.0.0.1:0');
    try {
      await sm.start();
      const n = 2 * STATS_KEPT + 10;
      for (let i = 0; i < n; i++) await sm.subnet.sm.sweep('light');
      expect(sm.sweeps.length).toBeLessThanOrEqual(2 * STATS_KEPT);
      expect(sm.sweeps.length).toBeGreaterThanOrEqual(STATS_KEPT);
      expect(sm.subnet.sm.sweepsDone.light).toBe(n);
      const text = await (await fetch(url)).text();
      expect(samples(text, 'ibsm_sweeps_total').find((s) => s.labels.kind === 'light')!.value).toBe(n);
      expect(histogram(text, 'ibsm_sweep_duration_seconds').get(JSON.stringify([['kind', 'light']]))!.count).toBe(n);
      // the LFT blocks written by the first sweep still count although its stats were dropped
      expect(samples(text, 'ibsm_table_blocks_written_total').find((s) => s.labels.table === 'lft')!.value).toBeGreaterThan(0);
    } finally {
      await sm.stop();
    }
  });

  it('process and Node runtime metrics, SM state, route-verification gauges', async () => {
    const { sm, url } = await openWithMetrics('127.0.0.1:0');
    try {
      await sm.start();
      const text = await (await fetch(url)).text();
      const one = (name: string): number => {
        const s = samples(text, name);
        expect(s.length, name).toBe(1);
        return s[0]!.value;
      };
      for (const [name, type] of [
        ['process_cpu_seconds_total', 'counter'],
        ['process_cpu_user_seconds_total', 'counter'],
        ['process_resident_memory_bytes', 'gauge'],
        ['process_start_time_seconds', 'gauge'],
        ['nodejs_heap_size_total_bytes', 'gauge'],
        ['nodejs_heap_size_used_bytes', 'gauge'],
        ['nodejs_eventloop_lag_seconds', 'gauge'],
        ['ibsm_routes_per_link_max', 'gauge'],
        ['ibsm_routes_per_link_mean', 'gauge'],
        ['ibsm_cdg_cycles', 'gauge'],
      ] as const)
        expect(text, name).toContain(`# TYPE ${name} ${type}`);
      const cpu = process.cpuUsage();
      expect(one('process_cpu_seconds_total')).toBeGreaterThan(0);
      expect(one('process_cpu_seconds_total')).toBeLessThanOrEqual((cpu.user + cpu.system) / 1e6);
      expect(one('process_resident_memory_bytes')).toBeGreaterThan(1e6);
      const start = Date.now() / 1000 - process.uptime();
      expect(Math.abs(one('process_start_time_seconds') - start)).toBeLessThan(2);
      expect(one('nodejs_heap_size_used_bytes')).toBeLessThanOrEqual(one('nodejs_heap_size_total_bytes'));
      expect(one('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
      histogram(text, 'nodejs_gc_duration_seconds');
      expect(one('ibsm_sm_state')).toBe(3);
      // Route verification of the current routes, as the verifier reports them.
      const v = verifyRoutes(sm.snapshot!.fabric, sm.snapshot!.routing, { stretch: false });
      expect(one('ibsm_routes_per_link_max')).toBe(v.linkLoad.max);
      expect(one('ibsm_routes_per_link_mean')).toBeCloseTo(v.linkLoad.mean, 9);
      expect(v.linkLoad.max).toBeGreaterThan(0);
      const cycles = samples(text, 'ibsm_cdg_cycles');
      expect(cycles.map((c) => [c.labels.vl, c.value])).toEqual(v.cdg.map((c) => [String(c.vl), c.cyclicComponents]));
      expect(one('ibsm_routes_deadlock_free')).toBe(1); // minhop on a two-level fat tree
      expect(samples(text, 'ibsm_routing_engine_info')[0]!.labels.engine).toBe('minhop');
    } finally {
      await sm.stop();
    }
  });

  it('ADDR:PORT is checked; a histogram counts each observation in its first bucket', () => {
    expect(parseListen('0.0.0.0:9464')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(parseListen('[::]:0')).toEqual({ host: '::', port: 0 });
    expect(parseListen('localhost:1')).toEqual({ host: 'localhost', port: 1 });
    for (const bad of ['9464', '0.0.0.0', ':9464', '1.2.3.4:70000', '::1:9464']) expect(() => parseListen(bad), bad).toThrow(/is not ADDR:PORT|out of range/);
    const h = new Histogram([0.1, 1]);
    for (const v of [0.05, 0.1, 0.5, 2]) h.observe(v);
    expect([...h.counts]).toEqual([2, 1]);
    expect(h.count).toBe(4);
    expect(h.sum).toBeCloseTo(2.65);
  });
});

/** ibsm's metrics and --verbose lines on ibsim (real umad, real round trips), with the real tools
 * as witnesses: --metrics-listen 0.0.0.0:0 answers, the SMP round-trip histogram holds real
 * times, saquery's PathRecord requests move the SA histogram, SIGHUP's heavy sweep moves the
 * sweep histogram, and the discovery phase line counts what ibnetdiscover finds. */
import { describe, expect, it } from 'vitest';
import path from 'node:path';
import { startIbsim, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { tool } from './helpers/witness.js';
import { TIMEOUT, startIbsm, stopSa, waitFor, type RunningSa } from './helpers/sa-compare.js';
import { parseTopologyText } from '../src/model/load.js';
import { isSwitch } from '../src/model/fabric.js';

const FILE = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');

const value = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no ${series} in the metrics`);
  return Number(line.slice(series.length + 1));
};

describe('metrics and --verbose on ibsim', () => {
  it('--metrics-listen 0.0.0.0:0: histograms with real times; saquery and SIGHUP move them; the discovery line counts what ibnetdiscover finds', async () => {
    const ib = await startIbsim(FILE);
    let sa: RunningSa | undefined;
    try {
      sa = await startIbsm(ib, 'none', ['--sweep-interval', '0', '--metrics-listen', '0.0.0.0:0', '--log-format', 'json', '--verbose']);
      const lines = (): Array<Record<string, unknown>> =>
        sa!
          .log()
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      const served = lines().find((l) => l.code === 'IBSM-8020')!;
      expect(served.code).toBe('IBSM-8020');
      const port = Number(/^http:\/\/0\.0\.0\.0:(\d+)\/metrics$/.exec(served.url as string)![1]);
      const scrape = async (): Promise<string> => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();

      // The discovery phase of the first sweep, against ibnetdiscover's view of the fabric.
      const fabric = parseTopologyText(await tool(ib, 'ibnetdiscover', []), 'ibnetdiscover');
      const disc = lines().find((l) => l.code === 'IBSM-1101' && l.sweep === 1)!;
      expect(disc).toMatchObject({ code: 'IBSM-1101', nodes: fabric.nodes.length, switches: fabric.nodes.filter(isSwitch).length });
      const links = fabric.nodes.reduce((a, n) => a + n.ports.filter((p, i) => i > 0 && p?.peer).length, 0) / 2;
      expect(disc.links).toBe(links);

      let text = await scrape();
      expect(value(text, 'ibsm_sweep_duration_seconds_count{kind="heavy"}')).toBe(1);
      const rtt = value(text, 'ibsm_smp_rtt_seconds_count');
      expect(rtt).toBeGreaterThan(0);
      expect(rtt).toBeLessThanOrEqual(value(text, 'ibsm_mads_sent_total'));
      expect(value(text, 'ibsm_smp_rtt_seconds_sum')).toBeGreaterThan(0); // real round trips take time
      expect(value(text, 'ibsm_smp_rtt_seconds_bucket{le="+Inf"}')).toBe(rtt);

      // saquery's PathRecords: answered (the witness), counted in the SA histogram.
      const pr = await tool(ib, 'saquery', ['PR'], 'Hca2');
      expect(pr).toMatch(/PathRecord dump/);
      text = await scrape();
      const count = text.split('\n').filter((l) => l.startsWith('ibsm_sa_request_duration_seconds_count{') && l.includes('attribute="PathRecord"'));
      expect(count.length).toBeGreaterThan(0);
      const total = count.reduce((a, l) => a + Number(l.split(' ').at(-1)), 0);
      expect(total).toBe(value(text, 'ibsm_sa_requests_total{attribute="PathRecord"}'));
      expect(total).toBeGreaterThan(0);

      // SIGHUP: a heavy sweep, one more in the histogram.
      process.kill(sa.proc.pid, 'SIGHUP');
      await waitFor('the SIGHUP sweep in the histogram', async () => value(await scrape(), 'ibsm_sweep_duration_seconds_count{kind="heavy"}') === 2, 20_000);
      expect(lines().filter((l) => l.code === 'IBSM-1109' && l.kind === 'heavy')).toHaveLength(2);
    } finally {
      await stopSa(sa, 'ibsm');
      await ib.stop();
    }
  }, 3 * TIMEOUT);
});

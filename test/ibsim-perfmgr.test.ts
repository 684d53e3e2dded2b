/** PerfMgr on ibsim, witnessed by perfquery: every port's counters as ibsm's PerfMgr totals them
 * equal what perfquery reads (error counters exactly; traffic counters up to the traffic between the
 * two readings), receive errors injected with ibsim's `Error` are logged naming the port, and a
 * clear by someone else (perfquery -R) is noticed without losing the 64-bit total. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, startPreloaded, runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { TIMEOUT, startOpenSm, stopSa, type RunningSa } from './helpers/sa-compare.js';
import { parseTopologyText } from '../src/model/load.js';
import { isSwitch } from '../src/model/fabric.js';
import { PortCounters, PORT_COUNTER_NAMES, type PortCounterName } from '../src/wire/pma.js';
import { ERROR_COUNTERS } from '../src/sm/perf-counters.js';
import { withCode } from './helpers/log-lines.js';

const FIXTURE = path.resolve('test/fixtures/ibsim-perfmgr.mjs');

interface Swept {
  stats: { ports: number; failed: number; errorPorts: number; clearedByOthers: number };
  ports: Array<{ guid: string; desc: string; port: number; lid: number; totals: Record<PortCounterName, string> }>;
}

/** perfquery's "Label:....value" lines, by our counter names (the labels are PortCounters' own). */
function parsePerfquery(text: string): Partial<Record<PortCounterName, number>> {
  const byLabel = new Map(PORT_COUNTER_NAMES.map((n) => [PortCounters.fields[n].label, n]));
  const out: Partial<Record<PortCounterName, number>> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+):\.*(\d+)$/.exec(line.trim());
    const name = m && byLabel.get(m[1]!);
    if (name) out[name] = Number(m[2]);
  }
  return out;
}

describe('PerfMgr on ibsim', () => {
  it(
    'totals equal perfquery, injected receive errors are named, a clear by perfquery -R keeps the total',
    async () => {
      const ib = await startIbsim(path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca'));
      let sa: RunningSa | undefined;
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-pm-'));
      try {
        sa = await startOpenSm(ib);
        const disc = await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 20_000 });
        expect(disc.code, disc.stderr).toBe(0);
        const topo = path.join(dir, 'topo.txt');
        writeFileSync(topo, disc.stdout);
        const fabric = parseTopologyText(disc.stdout, topo);
        const go = path.join(dir, 'go');
        const pm = startPreloaded(process.execPath, [FIXTURE, JSON.stringify({ topo, sweeps: 3, go })], { ibsim: ib, timeoutMs: 2 * TIMEOUT });
        const swept = async (k: number): Promise<Swept> => JSON.parse((await pm.waitForLine((l) => l.startsWith(`SWEPT ${k} `), 30_000)).slice(`SWEPT ${k} `.length)) as Swept;
        const perfquery = async (lid: number, port: number, ...flags: string[]): Promise<Partial<Record<PortCounterName, number>>> => {
          const r = await runPreloaded('perfquery', [...flags, String(lid), String(port)], { ibsim: ib, timeoutMs: 20_000 });
          expect(r.code, r.stderr).toBe(0);
          return parsePerfquery(r.stdout);
        };

        const first = await swept(1);
        const linked = fabric.nodes.reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer).length, 0);
        expect(first.stats).toMatchObject({ ports: linked, failed: 0 });
        for (const p of first.ports) {
          const pq = await perfquery(p.lid, p.port);
          for (const name of PORT_COUNTER_NAMES) {
            const ours = Number(p.totals[name]);
            const theirs = pq[name]!;
            if (ERROR_COUNTERS.has(name)) expect(ours, `${p.desc} port ${p.port} ${name}`).toBe(theirs);
            else expect(ours, `${p.desc} port ${p.port} ${name}`).toBeLessThanOrEqual(theirs);
          }
          if (p.port > 0) expect(Number(p.totals.xmitPkts), `${p.desc} port ${p.port} sent nothing`).toBeGreaterThan(0);
        }

        // receive errors: ibsim drops what enters a switch port under `Error` and counts PortRcvErrors
        const sw = fabric.nodes.find((n) => isSwitch(n) && n.ports.some((p) => p?.peer && !isSwitch(fabric.nodes[p.peer.node]!)))!;
        const swPort = sw.ports.find((p) => p?.peer && !isSwitch(fabric.nodes[p.peer.node]!))!;
        const caPeer = fabric.nodes[swPort.peer!.node]!.ports[swPort.peer!.port]!;
        const swLid = sw.ports[0]!.lid!;
        const swName = /Switch\d/.exec(disc.stdout.split('\n').find((l) => l.includes(`base port 0 lid ${swLid} `))!)![0];
        await ib.console(`Error "${swName}"[${swPort.num}] 100`);
        await runPreloaded('perfquery', ['-t', '100', String(caPeer.lid), String(caPeer.num)], { ibsim: ib, timeoutMs: 20_000 }); // answers die entering the switch
        await ib.console(`Error "${swName}"[${swPort.num}] 0`);
        writeFileSync(`${go}2`, '');
        const second = await swept(2);
        const after = await perfquery(swLid, swPort.num);
        expect(after.rcvErrors).toBeGreaterThan(0);
        const mine = second.ports.find((p) => p.lid === swLid && p.port === swPort.num)!;
        expect(Number(mine.totals.rcvErrors)).toBe(after.rcvErrors);
        expect(second.stats.errorPorts).toBeGreaterThanOrEqual(1);
        const logLine = withCode(pm.stderr(), 'IBSM-7005').find((l) => l.includes(`lid=${swLid} `) && l.includes(`port=${swPort.num} `));
        expect(logLine, pm.stderr()).toContain(`rcvErrors+${after.rcvErrors}`);
        expect(logLine).toContain(`guid=0x${sw.guid.toString(16).padStart(16, '0')}`);

        // someone else clears every counter of that port: the total stays
        await perfquery(swLid, swPort.num, '-R');
        writeFileSync(`${go}3`, '');
        const third = await swept(3);
        expect(third.stats.clearedByOthers).toBeGreaterThan(0);
        const kept = third.ports.find((p) => p.lid === swLid && p.port === swPort.num)!;
        expect(Number(kept.totals.rcvErrors)).toBe(after.rcvErrors);
        expect(Number(kept.totals.xmitPkts)).toBeGreaterThanOrEqual(Number(mine.totals.xmitPkts));
        const r = await pm.done;
        expect(r.code, r.stderr).toBe(0);
      } finally {
        await stopSa(sa, 'opensm');
        await ib.stop();
      }
    },
    3 * TIMEOUT,
  );
});

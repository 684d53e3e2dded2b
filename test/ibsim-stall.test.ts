/** Issue #32: ibsim that stops answering for a while (SIGSTOP by PID, 300 ms twice a second: a
 * simulator descheduled on a loaded machine) must not hang the SM. Before the addon paced its
 * requests (native setPace, api/backend.ts umadWindow), the SM's retries filled umad2sim's socket
 * pair in both directions during a stop and ibsim and the SM hung together for good (this fabric:
 * every run, in the programming after routing). Now `--once` reaches SUBNET UP with every node,
 * and ibnetdiscover, the witness, sees every port with the LID the SM gave it. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireIbsim, runPreloaded, startIbsim, startPreloaded } from './helpers/ibsim.js';
import { formatIbnetdiscover, parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { logRe } from './helpers/log-lines.js';
import { NodeType } from '../src/wire/mad.js';

const CLI = path.resolve('dist/cli/main.js');
/** 612 nodes (432 hosts, 180 switches): within ibsim's default limits. */
const SPEC = 'gen:fattree3:radix=12';

describe('the SM on an ibsim that stalls', () => {
  it('reaches SUBNET UP with every node while ibsim is stopped 300 ms of every 600', async () => {
    requireIbsim();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-stall-'));
    const file = path.join(dir, 'fattree.net');
    const topo = loadFabricSpec(SPEC);
    const text = formatIbnetdiscover(topo, { timestamp: 'x' });
    writeFileSync(file, text);
    const host = /^Ca\s+\d+\s+"([^"]+)"/m.exec(text)![1]!;
    const ib = await startIbsim(file);
    let stopped = false;
    let stops = 0;
    const resume = (): void => {
      if (!stopped) return;
      stopped = false;
      process.kill(ib.pid, 'SIGCONT');
    };
    const timer = setInterval(() => {
      process.kill(ib.pid, 'SIGSTOP');
      stopped = true;
      stops++;
      setTimeout(resume, 300);
    }, 600);
    try {
      const sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--once', '--routing', 'minhop', '--guid2lid', 'none'], { ibsim: ib, simHost: host, timeoutMs: 60_000 });
      const r = await sm.done;
      clearInterval(timer);
      resume();
      expect(r.timedOut, r.stderr.slice(-2000)).toBe(false);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(stops).toBeGreaterThan(0);
      expect(r.stderr).toMatch(logRe('IBSM-1001', `nodes=${topo.nodes.length} `));
      // The witness: ibnetdiscover sees every node, each end port with a LID of its own.
      const seen = parseIbnetdiscover((await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 30_000 })).stdout);
      expect(seen.nodes.length).toBe(topo.nodes.length);
      const lids = seen.nodes.map((n) => (n.type === NodeType.Switch ? n.ports[0]?.lid : n.ports[1]?.lid) ?? 0);
      expect(lids.filter((l) => l === 0)).toEqual([]);
      expect(new Set(lids).size).toBe(topo.nodes.length);
    } finally {
      clearInterval(timer);
      resume();
      await ib.stop();
    }
  }, 120_000);
});

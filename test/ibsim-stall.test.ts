/** Issue #32: ibsim that stops answering for a while (SIGSTOP by PID, 300 ms twice a second: a
 * simulator descheduled on a loaded machine) must not hang the SM. Before the addon paced its
 * requests (native setPace, api/backend.ts umadWindow), the SM's retries filled umad2sim's socket
 * pair in both directions during a stop and ibsim and the SM hung together for good (this fabric:
 * every run, in the programming after routing). Now the SM carries on: a 300 ms stop can outlast
 * one SMP's retries (12 tries, ~300 ms), so a sweep may leave a node out (IBSM-2002), and the next
 * sweep reads it. The witness, ibnetdiscover, then sees every node with a LID of its own. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { requireIbsim, runPreloaded, startIbsim, startPreloaded, type PreloadedProcess } from './helpers/ibsim.js';
import { waitFor } from './helpers/sa-compare.js';
import { formatIbnetdiscover, parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { logRe } from './helpers/log-lines.js';
import { NodeType } from '../src/wire/mad.js';

const CLI = path.resolve('dist/cli/main.js');
/** 612 nodes (432 hosts, 180 switches): within ibsim's default limits. */
const SPEC = 'gen:fattree3:radix=12';
/** ibsim stopped this long of every PERIOD_MS, STOPS times from the SM's start. */
const STOP_MS = 300;
const PERIOD_MS = 600;
const STOPS = 6;

describe('the SM on an ibsim that stalls', () => {
  it('carries on while ibsim is stopped 300 ms of every 600: SUBNET UP, then every node with a LID of its own (ibnetdiscover)', async () => {
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
      if (stops === STOPS) return clearInterval(timer);
      process.kill(ib.pid, 'SIGSTOP');
      stopped = true;
      stops++;
      setTimeout(resume, STOP_MS);
    }, PERIOD_MS);
    let sm: PreloadedProcess | undefined;
    try {
      sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--routing', 'minhop', '--guid2lid', 'none', '--sweep-interval', '1'], { ibsim: ib, simHost: host, timeoutMs: 90_000 });
      const lidsSeen = async (): Promise<number[]> => {
        const seen = parseIbnetdiscover((await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 10_000 })).stdout);
        return seen.nodes.map((n) => (n.type === NodeType.Switch ? n.ports[0]?.lid : n.ports[1]?.lid) ?? 0);
      };
      // The stops go on from the SM's start; afterwards every node is programmed within 30 s.
      await waitFor('the stops done', () => stops === STOPS && !stopped, 30_000);
      await waitFor('every node with a LID of its own', async () => {
        const lids = await lidsSeen();
        return lids.length === topo.nodes.length && !lids.includes(0) && new Set(lids).size === lids.length;
      }, 30_000);
      const r = await sm.stop();
      expect(r.timedOut).toBe(false);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect(r.stderr).toMatch(logRe('IBSM-1001'));
      expect(stops).toBe(STOPS);
    } finally {
      clearInterval(timer);
      resume();
      await sm?.stop('SIGKILL');
      await ib.stop();
    }
  }, 120_000);
});

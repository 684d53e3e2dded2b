/** Operating ibsm on ibsim through its control socket, with the real tools as witnesses: `ibsm dump
 * lfts` prints what `ibroute` reads from each switch (and `ibsm dump traffic` the traffic evaluator's
 * figures on those tables), `ibsm dump topology` what `ibnetdiscover`
 * finds, `ibsm status` the SM's own state; SIGHUP reloads the configuration and sweeps, as under OpenSM. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startIbsim, runPreloaded, IBSIM_EXAMPLES } from './helpers/ibsim.js';
import { TIMEOUT, CLI, startIbsm, stopSa, waitFor, type RunningSa } from './helpers/sa-compare.js';
import { parseTopologyText } from '../src/model/load.js';
import { isSwitch } from '../src/model/fabric.js';
import { DEFAULT_TRAFFIC_SAMPLES, evaluateTraffic, trafficLine } from '../src/routing/traffic.js';
import { logRe } from './helpers/log-lines.js';

const run = promisify(execFile);
const FILE = path.join(IBSIM_EXAMPLES, 'net.2sw2path4hca');
/** The rows of an `ibroute` unicast dump (one per LID), without the header that names the path. */
const rows = (text: string): string[] => text.split('\n').filter((l) => /^0x[0-9a-f]{4} \d{3} : /.test(l));

describe('ibsm operated on ibsim', () => {
  it('dump lfts equals ibroute on every switch, dump topology equals ibnetdiscover, dump traffic equals the evaluator on the tables ibroute reads, status and SIGHUP', async () => {
    const ib = await startIbsim(FILE);
    let sa: RunningSa | undefined;
    const sock = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-ops-')), 'ibsm.sock');
    try {
      sa = await startIbsm(ib, 'none', ['--control-socket', sock, '--sweep-interval', '0']);
      const ibsm = async (...args: string[]): Promise<string> => (await run(process.execPath, [CLI, ...args, '--socket', sock], { timeout: 30_000 })).stdout;
      const status = JSON.parse(await ibsm('status', '--json')) as { role: string; sweeps: { heavy: number }; fabric: { switches: number }; routing: { unreachablePairs: number } };
      expect(status.role).toBe('master');
      expect(status.fabric.switches).toBe(2);
      expect(status.routing.unreachablePairs).toBe(0);

      const disc = await runPreloaded('ibnetdiscover', [], { ibsim: ib, timeoutMs: 20_000 });
      const fabric = parseTopologyText(disc.stdout, 'ibnetdiscover');
      const dump = await ibsm('dump', 'lfts');
      const blocks = dump.split(/\n(?=Unicast lids)/);
      for (const sw of fabric.nodes.filter(isSwitch)) {
        const lid = sw.ports[0]!.lid!;
        const theirs = await runPreloaded('ibroute', [String(lid)], { ibsim: ib, timeoutMs: 20_000 });
        const ours = blocks.find((b) => b.includes(`of switch Lid ${lid} `))!;
        expect(ours, `switch LID ${lid}`).toBeDefined();
        expect(rows(ours)).toEqual(rows(theirs.stdout));
        expect(rows(ours).length).toBeGreaterThan(0);
      }
      // the topology dump is the fabric ibnetdiscover finds: the same nodes and links
      const ours = parseTopologyText(await ibsm('dump', 'topology'), 'ibsm dump topology');
      const links = (f: typeof fabric): string[] =>
        f.nodes.flatMap((n) => n.ports.filter((p) => p?.peer).map((p) => `${n.guid}:${p!.num}-${f.nodes[p!.peer!.node]!.guid}:${p!.peer!.port}`)).sort();
      expect(links(ours)).toEqual(links(fabric));

      // dump traffic: the evaluator over the LFTs ibroute read and the fabric ibnetdiscover found
      const lfts = new Map<number, Uint8Array>();
      for (const [i, sw] of fabric.nodes.entries()) {
        if (!isSwitch(sw)) continue;
        const t = new Uint8Array(64).fill(255);
        const theirs = await runPreloaded('ibroute', [String(sw.ports[0]!.lid!)], { ibsim: ib, timeoutMs: 20_000 });
        for (const r of rows(theirs.stdout)) t[parseInt(r.slice(2, 6), 16)] = Number(r.slice(7, 10));
        lfts.set(i, t);
      }
      const traffic = await ibsm('dump', 'traffic');
      for (const kind of ['ebb', 'alltoall'] as const) {
        const want = evaluateTraffic(fabric, lfts, { kind }, { samples: DEFAULT_TRAFFIC_SAMPLES });
        expect(want.flows).toBeGreaterThan(0);
        expect(traffic).toContain(`${kind.padEnd(9)} ${trafficLine(want)}\n`);
      }

      // SIGHUP: the configuration reloaded and a heavy sweep, as OpenSM re-reads and re-sweeps
      process.kill(sa.proc.pid, 'SIGHUP');
      await waitFor('the reload SIGHUP asks for', () => logRe('IBSM-8040', 'trigger=SIGHUP').test(sa!.log()), 10_000);
      expect(sa.log()).toMatch(logRe('IBSM-1003', 'reason="configuration reloaded"'));
      await waitFor('a second heavy sweep', async () => (JSON.parse(await ibsm('status', '--json')) as typeof status).sweeps.heavy >= 2, 20_000);
      // ibsm reload over the control socket: the same, with what it did as the answer
      const reloaded = JSON.parse(await ibsm('reload', '--json')) as { reloaded: boolean; applied: string[]; restartNeeded: string[] };
      expect(reloaded).toMatchObject({ reloaded: true, applied: [], restartNeeded: [] });
      expect(sa.log()).toMatch(logRe('IBSM-8040', 'trigger="control socket"'));
    } finally {
      await stopSa(sa, 'ibsm');
      await ib.stop();
    }
  }, 3 * TIMEOUT);
});

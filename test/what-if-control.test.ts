/** `ibsm what-if` on a running SM (cli/what-if.ts over the control socket): the SM's own snapshot,
 * engine chain and options; other requests answered while it runs; errors that say what to do. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openSm } from '../src/api/sm.js';
import { controlRequest, serveControl } from '../src/cli/control.js';
import { controlTargetOf } from '../src/cli/ops.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { linkCases } from '../src/routing/what-if.js';
import { isSwitch } from '../src/model/fabric.js';
import { runCli } from './helpers/cli.js';

describe('ibsm what-if on the running SM', () => {
  it('every link of the live fabric, with the SM\'s engine chain; status answered meanwhile', async () => {
    const sm = await openSm({ sim: 'gen:fattree2:leaves=4,spines=3,hosts=4', seed: 1, sweepIntervalS: 0, routing: ['updn', 'minhop'], log: new Logger(new MemorySink(), 'warn') });
    const sock = path.join(mkdtempSync(path.join(os.tmpdir(), 'ibsm-whatif-')), 'sm.sock');
    try {
      await sm.start();
      const server = await serveControl(sock, controlTargetOf(sm), new Logger(new MemorySink()));
      try {
        const snap = sm.snapshot!;
        const order: string[] = [];
        const whatIf = controlRequest(sock, { cmd: 'what-if', spec: 'links' }).then((r) => (order.push('what-if'), r));
        const status = controlRequest(sock, { cmd: 'status' }).then((r) => (order.push('status'), r));
        const [r] = (await Promise.all([whatIf, status])) as [{ sweep: number; baseline: { engine: string }; cases: Array<{ case: string; engine: string; ok: boolean }>; summary: { cases: number } }, unknown];
        // The SM answered status between two cases.
        expect(order).toEqual(['status', 'what-if']);
        expect(r.sweep).toBe(snap.sweep);
        expect(r.baseline.engine).toBe('updn');
        expect(r.cases.map((c) => c.case)).toEqual(linkCases(snap.fabric).map((c) => c.name));
        expect(r.summary.cases).toBe(linkCases(snap.fabric).length);
        for (const c of r.cases) expect(c.engine).toBe('updn');
        // The client prints the same as ibsm route --what-if; exit 0 when no case loses a pair.
        const cli = await runCli(['what-if', 'sw-l2-0', '--socket', sock]);
        expect(cli.err).toBe('');
        expect(cli.out).toMatch(/^on the tables of sweep \d+\nwhat-if: 1 case\(s\) \(sw-l2-0\)/);
        expect(cli.out).toMatch(/switch 0x[0-9a-f]{16} "sw-l2-0"\n {4}full \(a switch that goes/);
        expect(cli.code).toBe(0);
        // A leaf that goes loses its hosts: exit 1.
        const leaf = await runCli(['what-if', 'sw-l1-0', '--socket', sock, '--json']);
        const j = JSON.parse(leaf.out) as { cases: Array<{ lostEndPorts: number }> };
        expect(j.cases[0]!.lostEndPorts).toBe(snap.fabric.nodes.filter((n) => !isSwitch(n) && n.ports.some((p) => p?.peer && snap.fabric.nodes[p.peer.node]!.desc === 'sw-l1-0')).length);
        expect(leaf.code).toBe(1);
        await expect(controlRequest(sock, { cmd: 'what-if', spec: 'no-such-switch' })).rejects.toThrow(/no node "no-such-switch"/);
        // One at a time: a second what-if while one runs is refused, saying why.
        const first = controlRequest(sock, { cmd: 'what-if', spec: 'links' });
        await expect(controlRequest(sock, { cmd: 'what-if', spec: 'switches' })).rejects.toThrow(/already running/);
        await first;
      } finally {
        server.close();
      }
    } finally {
      await sm.stop();
    }
  }, 120_000);
});

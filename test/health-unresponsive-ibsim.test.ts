/** The unresponsive-SMA policy on ibsim, witnessed by the real tools (issue #33 item 2): `ibsm run
 * --umad --health-unresponsive 2:isolate` on a fat tree whose spine then stops answering (ibsim's
 * `Error` at 100 % on every port of it: whatever enters the switch is lost). The heavy sweeps leave
 * its links out, each waiting for its timeouts; after two it is isolated (`ibsm dump health`), the
 * next heavy sweep does not probe it at all, and the real ibroute shows no leaf sending any LID
 * toward it. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadFabricSpec } from '../src/model/load.js';
import { formatIbnetdiscover, parseIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { NodeType } from '../src/wire/mad.js';
import { startIbsim, startPreloaded } from './helpers/ibsim.js';
import { waitFor } from './helpers/sa-compare.js';
import { hasCode } from './helpers/log-lines.js';
import { parseIbroute, tool } from './helpers/witness.js';

const CLI = path.resolve('dist/cli/main.js');

function control(sock: string, args: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...args, '--socket', sock], { encoding: 'utf8', timeout: 60_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('unresponsive SMA on ibsim', () => {
  it('a spine that stops answering: isolated after 2 heavy sweeps, not probed after, no leaf routes toward it (ibroute)', async () => {
    const topo = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-unresp-'));
    const net = path.join(dir, 'fabric.net');
    const text = formatIbnetdiscover(topo, { timestamp: 'x' });
    writeFileSync(net, text);
    const spine = topo.nodes.find((n) => n.desc === 'sw-l2-0')!;
    const spineName = new RegExp(`^Switch\\s+\\d+\\s+"([^"]+)"\\s+#\\s+"sw-l2-0"`, 'm').exec(text)![1]!;
    const ib = await startIbsim(net);
    const sock = path.join(dir, 'ibsm.sock');
    const sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--sweep-interval', '1', '--health-unresponsive', '2:isolate:3600', '--control-socket', sock], { ibsim: ib, timeoutMs: 120_000 });
    const log = (): string => sm.stdout() + sm.stderr();
    try {
      await waitFor('SUBNET UP', () => hasCode(log(), 'IBSM-1001'), 30_000);
      const seen = parseIbnetdiscover(await tool(ib, 'ibnetdiscover', []));
      expect(seen.nodes.some((n) => n.desc === 'sw-l2-0')).toBe(true);
      for (const [pn, p] of spine.ports.entries()) if (pn > 0 && p?.peer) await ib.console(`Error "${spineName}"[${pn}] 100`);
      const sweep = (): { skippedLinks: number; smps: number } => JSON.parse(control(sock, ['resweep', '--heavy', '--json'])) as { skippedLinks: number; smps: number };
      const first = sweep();
      expect(first.skippedLinks).toBeGreaterThanOrEqual(3); // its three leaves' probes timed out
      // the SM sweeps again on its own (the fabric was left out: IBSM-1005); a resweep each time it has not
      const isolated = (): boolean => /isolated: 1\n {2}node "sw-l2-0" .* source=unresponsive/.test(control(sock, ['dump', 'health']));
      for (let k = 0; k < 3 && !isolated(); k++) sweep();
      expect(isolated()).toBe(true);
      await waitFor('IBSM-2075 in the log', () => hasCode(log(), 'IBSM-2075'), 10_000);
      sweep(); // (a sweep under way at the isolation may still have probed it)
      const third = sweep();
      expect(third.skippedLinks, JSON.stringify(third)).toBe(0); // not probed: nothing to wait for
      expect(third.smps).toBeLessThan(first.smps);
      // the real ibroute: no leaf forwards a LID of the fabric (the spine's own aside) out of its port toward the spine
      const lids = new Set<number>();
      for (const n of seen.nodes) if (n.desc !== 'sw-l2-0') for (const [pn, p] of n.ports.entries()) if (p?.lid && (n.type === NodeType.Switch ? pn === 0 : true)) lids.add(p.lid);
      let checked = 0;
      for (const n of seen.nodes) {
        if (n.type !== NodeType.Switch || n.desc === 'sw-l2-0') continue;
        const toSpine = topo.nodes.find((t) => t.desc === n.desc)!.ports.findIndex((p, pn) => pn > 0 && p?.peer && topo.nodes[p.peer.node] === spine);
        if (toSpine < 0) continue;
        const lft = parseIbroute(await tool(ib, 'ibroute', [String(n.ports[0]!.lid)]));
        for (const lid of lids) {
          expect(lft.get(lid), `${n.desc} LID ${lid}`).toBeDefined();
          expect(lft.get(lid), `${n.desc} LID ${lid}`).not.toBe(toSpine);
        }
        checked++;
      }
      expect(checked).toBe(3);
      console.log(`unresponsive spine on ibsim: a heavy sweep ${first.smps} SMPs with 3 links left out, then ${third.smps} SMPs and none left out once isolated`);
    } finally {
      await sm.stop();
      await ib.stop();
    }
  }, 180_000);
});

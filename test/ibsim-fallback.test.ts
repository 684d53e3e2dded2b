/** `--routing ftree` alone on a fat tree that loses one leaf-to-spine cable (ibsim `Unlink`): the
 * tree is irregular, ftree no longer applies, and the SM routes with updn anyway (an ERROR with a
 * stable code names the engines and reasons). The real tools then show routes complete and no
 * switch forwarding into the dead port. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim, startPreloaded, type PreloadedProcess } from './helpers/ibsim.js';
import { tool, witnessUp } from './helpers/witness.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { cloneFabric } from '../src/model/fabric.js';
import { NodeType } from '../src/wire/mad.js';
import { ROUTING_FALLBACK_CODE } from '../src/sm/sweep.js';
import { logRe } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const TIMEOUT = 60_000;
const SPEC = 'gen:fattree2:leaves=6,spines=3,hosts=8';

async function waitFor(pred: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  // a tool that cannot reach a switch yet (its route crossed the link just cut) is "not yet"
  while (!(await pred().catch(() => false))) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('a single routing engine after a cable failure', () => {
  it(
    '--routing ftree, one leaf-to-spine Unlink: ftree routes the degraded tree, no LFT entry into the dead port (ibroute), every port ACTIVE',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-fallback-'));
      const file = path.join(dir, 'fattree.net');
      const topo = loadFabricSpec(SPEC);
      const text = formatIbnetdiscover(topo, { timestamp: 'x' });
      writeFileSync(file, text);
      const host = /^Ca\s+\d+\s+"([^"]+)"/m.exec(text)![1]!;
      const li = topo.nodes.findIndex((n) => n.desc === 'sw-l1-1');
      const leaf = topo.nodes[li]!;
      const up = leaf.ports.findIndex((p, i) => i > 0 && p?.peer && topo.nodes[p.peer.node]!.type === NodeType.Switch);
      const leafId = `S-${leaf.guid.toString(16).padStart(16, '0')}`;
      const ib = await startIbsim(file);
      let sm: PreloadedProcess | undefined;
      try {
        sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--routing', 'ftree', '--sweep-interval', '1'], { ibsim: ib, simHost: host, timeoutMs: TIMEOUT * 3 });
        const leafLid = async (): Promise<number> => Number(new RegExp(`"${leafId}".*? lid (\\d+) `).exec(await tool(ib, 'ibnetdiscover', []))?.[1] ?? 0);
        await waitFor(async () => (await leafLid()) > 0, 30_000);
        await witnessUp(ib, topo, 1);
        const lid = await leafLid();
        const intoDead = new RegExp(`^0x[0-9a-f]{4} 0*${up} :`, 'm');
        expect(await tool(ib, 'ibroute', [String(lid)])).toMatch(intoDead); // the link carried routes
        await ib.console(`Unlink "${leafId}"[${up}]`);
        const without = cloneFabric(topo);
        const peer = without.nodes[li]!.ports[up]!.peer!;
        without.nodes[li]!.ports[up]!.peer = undefined;
        without.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
        await waitFor(async () => !intoDead.test(await tool(ib, 'ibroute', [String(lid)])), 30_000);
        const w = await witnessUp(ib, without, 1);
        expect(w.active).toBe(w.ports);
        // No switch forwards into either end of the dead link.
        const spine = without.nodes[peer.node]!;
        const spineLid = w.seen.nodes.find((n) => n.guid === spine.guid)!.ports[0]!.lid!;
        expect(await tool(ib, 'ibroute', [String(spineLid)])).not.toMatch(new RegExp(`^0x[0-9a-f]{4} 0*${peer.port} :`, 'm'));
      } finally {
        if (sm) {
          const r = await sm.stop('SIGTERM');
          expect(r.code).toBe(0);
          // ftree routes the tree that lost a cable itself (degraded trees are fat trees to it):
          // no fallback needed, and no route into the dead link (checked above)
          expect(r.stderr).not.toContain(ROUTING_FALLBACK_CODE);
          expect(r.stderr).not.toMatch(logRe('IBSM-4001', 'engine=(?!ftree)'));
        }
        await ib.stop();
      }
    },
    TIMEOUT * 4,
  );
});

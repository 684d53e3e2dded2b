/** `ibsm check` on ibsim against the real ibnetdiscover's output (issue #33): the file the real
 * tool wrote of the fabric matches it (exit 0); after a console Unlink of a leaf-spine cable the
 * check exits 1 naming that link, both ends. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadFabricSpec } from '../src/model/load.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { isSwitch } from '../src/model/fabric.js';
import { runNodePreloaded, runPreloaded, startIbsim } from './helpers/ibsim.js';

const CLI = path.resolve('dist/cli/main.js');

describe('ibsm check on ibsim, against the real ibnetdiscover', () => {
  it('exits 0 on the fabric ibnetdiscover wrote, 1 after an Unlink, naming the link', async () => {
    const topo = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-check-ibsim-'));
    const net = path.join(dir, 'fabric.net');
    writeFileSync(net, formatIbnetdiscover(topo, { timestamp: 'x' }));
    const ib = await startIbsim(net);
    try {
      const disc = await runPreloaded('ibnetdiscover', [], { ibsim: ib, cwd: dir, timeoutMs: 15_000 });
      expect(disc.code, disc.stderr).toBe(0);
      const expected = path.join(dir, 'expected.topo');
      writeFileSync(expected, disc.stdout);
      const ok = await runNodePreloaded(CLI, ['check', '--umad', '--topology', expected], { ibsim: ib, cwd: dir, timeoutMs: 30_000 });
      expect(ok.stderr).not.toMatch(/ibsm/); // (umad2sim's own notes only)
      expect(ok.code, ok.stdout).toBe(0);
      expect(ok.stdout).toMatch(/the fabric matches/);
      // one leaf-to-spine cable out
      const leaf = topo.nodes.findIndex((n) => n.desc === 'sw-l1-1');
      const port = topo.nodes[leaf]!.ports.findIndex((p, i) => i > 0 && p?.peer && isSwitch(topo.nodes[p.peer.node]!));
      const peer = topo.nodes[leaf]!.ports[port]!.peer!;
      await ib.console(`Unlink "S-${topo.nodes[leaf]!.guid.toString(16).padStart(16, '0')}"[${port}]`);
      const bad = await runNodePreloaded(CLI, ['check', '--umad', '--topology', expected], { ibsim: ib, cwd: dir, timeoutMs: 30_000 });
      expect(bad.code, bad.stdout + bad.stderr).toBe(1);
      const lines = bad.stdout.trim().split('\n');
      expect(lines).toHaveLength(2); // the mismatch and the summary
      const spine = topo.nodes[peer.node]!;
      const a = `"sw-l1-1" (0x${topo.nodes[leaf]!.guid.toString(16).padStart(16, '0')}) port ${port}`;
      const b = `"${spine.desc}" (0x${spine.guid.toString(16).padStart(16, '0')}) port ${peer.port}`;
      expect(lines[0]).toContain('missing-link: ');
      expect(lines[0]).toContain(a);
      expect(lines[0]).toContain(b);
    } finally {
      await ib.stop();
    }
  }, 90_000);
});

/** Isolation on ibsim, witnessed by the real iblinkinfo (issue #33): `ibsm run --umad` with a
 * cabling plan that wants a host on another leaf port warns; a reload (SIGHUP) that makes
 * wrong-port isolate takes the ACTIVE link Down, and it comes back in INIT and is held there (both
 * ends, as iblinkinfo reads them), while the rest of the fabric stays ACTIVE. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { loadFabricSpec } from '../src/model/load.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { runPreloaded, startIbsim, startPreloaded, type Ibsim } from './helpers/ibsim.js';
import { waitFor } from './helpers/sa-compare.js';
import { hasCode } from './helpers/log-lines.js';

const CLI = path.resolve('dist/cli/main.js');
const hex = (g: bigint): string => '0x' + g.toString(16).padStart(16, '0');

/** iblinkinfo's line for host-2's link, as the host sees it and as the leaf sees it. */
async function host2Link(ib: Ibsim): Promise<{ host: string; leaf: string; active: number }> {
  const r = await runPreloaded('iblinkinfo', [], { ibsim: ib, timeoutMs: 15_000 });
  const out = r.stdout.split('\n');
  const hostAt = out.findIndex((l) => l.startsWith('CA: host-2 HCA-1'));
  const host = out[hostAt + 1] ?? '';
  const leaf = out.find((l) => /"host-2 HCA-1"/.test(l)) ?? '';
  return { host, leaf, active: out.filter((l) => / Active\/ +LinkUp/.test(l)).length };
}

describe('isolation on ibsim', () => {
  it('a reload that isolates a miswired ACTIVE host link: Down, back in INIT, held (iblinkinfo)', async () => {
    const topo = loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=2');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-isolate-'));
    const net = path.join(dir, 'fabric.net');
    writeFileSync(net, formatIbnetdiscover(topo, { timestamp: 'x' }));
    // the plan: every link as cabled, but host-2 on port 9 of its leaf (it is on port 1)
    const leaf = topo.nodes.findIndex((n) => n.desc === 'sw-l1-1');
    const lines: string[] = [];
    topo.nodes.forEach((n, i) =>
      n.ports.forEach((p, pn) => {
        if (!p?.peer || pn === 0 || i > p.peer.node) return;
        lines.push(`${hex(n.guid)} ${i === leaf && pn === 1 ? 9 : pn} ${hex(topo.nodes[p.peer.node]!.guid)} ${p.peer.port}`);
      }),
    );
    expect(topo.nodes[topo.nodes[leaf]!.ports[1]!.peer!.node]!.desc).toBe('host-2 HCA-1');
    const plan = path.join(dir, 'plan');
    writeFileSync(plan, lines.join('\n') + '\n');
    const conf = path.join(dir, 'ibsm.json');
    writeFileSync(conf, JSON.stringify({ topology: plan, topologyAction: 'all=warn' }));
    const ib = await startIbsim(net);
    const sock = path.join(dir, 'ibsm.sock');
    const sm = startPreloaded(process.execPath, [CLI, 'run', '--umad', '--sweep-interval', '1', '--config', conf, '--control-socket', sock], { ibsim: ib, timeoutMs: 90_000 });
    const log = (): string => sm.stdout() + sm.stderr();
    try {
      await waitFor('SUBNET UP', () => hasCode(log(), 'IBSM-1001'), 30_000);
      expect(hasCode(log(), 'IBSM-2045')).toBe(true); // warned, not isolated
      const before = await host2Link(ib);
      expect(before.host).toMatch(/ Active\/ +LinkUp/);
      writeFileSync(conf, JSON.stringify({ topology: plan, topologyAction: 'wrong-port=isolate' }));
      process.kill(sm.pid, 'SIGHUP');
      await waitFor('the link held in INIT', async () => / Initialize\/ +LinkUp/.test((await host2Link(ib)).host), 30_000);
      expect(hasCode(log(), 'IBSM-2047')).toBe(true);
      expect(hasCode(log(), 'IBSM-2049')).toBe(true);
      // held: two more heavy sweeps (asked over the control socket) leave it in INIT; every other link stays ACTIVE
      for (let i = 0; i < 2; i++) {
        const r = spawnSync(process.execPath, [CLI, 'resweep', '--heavy', '--socket', sock, '--json'], { encoding: 'utf8', timeout: 30_000 });
        expect(r.status, r.stderr).toBe(0);
        expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'heavy' });
      }
      const after = await host2Link(ib);
      expect(after.host).toMatch(/ Initialize\/ +LinkUp/);
      expect(after.leaf).toMatch(/ Initialize\/ +LinkUp/);
      expect(after.active).toBe(before.active - 2); // the link's two ends, nothing else
    } finally {
      await sm.stop();
      await ib.stop();
    }
  }, 150_000);
});

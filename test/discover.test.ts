/** `ibsm discover --sim`: the directed-route sweep reproduces the graph exactly. */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { main } from '../src/cli/main.js';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec, parseTopologyText } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, NodeType } from '../src/wire/mad.js';
import { discover } from '../src/sm/discovery.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { diffFabrics, parseFabricJson } from '../src/model/json.js';
import { drive } from './helpers/drive.js';
import { graphOf } from './helpers/graph.js';
import type { Fabric } from '../src/model/fabric.js';

const TOPO = new URL('./fixtures/topo/', import.meta.url).pathname;
const EXAMPLES = ['net', 'net.1', 'net.2sw2path', 'net.2sw2path4hca', 'net.2sw2path4hca2port'];

async function runCli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  return { code, out, err };
}


const dropTimestamp = (s: string): string => s.replace(/^# Topology file: generated on .*$/m, '# Topology file');

describe('ibsm discover --sim', () => {
  for (const name of EXAMPLES) {
    it(`prints exactly what the real ibnetdiscover printed on ibsim for ${name}`, async () => {
      const r = await runCli(['discover', '--sim', TOPO + name]);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      const want = readFileSync(TOPO + name + '.ibnetdiscover', 'utf8');
      expect(dropTimestamp(r.out)).toBe(dropTimestamp(want));
      // and it loads back into our simulator as the same graph
      expect(diffFabrics(graphOf(parseTopologyText(r.out)), graphOf(loadFabricSpec(TOPO + name)))).toEqual([]);
    });
  }

  it('prints the same graph as JSON with --json', async () => {
    const r = await runCli(['discover', '--sim', TOPO + 'net.2sw2path4hca', '--json']);
    expect(r.code).toBe(0);
    expect(diffFabrics(graphOf(parseFabricJson(r.out)), graphOf(loadFabricSpec(TOPO + 'net.2sw2path4hca')))).toEqual([]);
  });

  it('fails with a clear message for a missing topology file', async () => {
    const r = await runCli(['discover', '--sim', '/nonexistent/file.net']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/\/nonexistent\/file\.net/);
  });

  it('rejects unknown options with usage', async () => {
    const r = await runCli(['discover', '--bogus']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bogus/);
  });

  it('discovers a 3-level fat tree with more than 10,000 end ports exactly, one NodeInfo probe per link', async () => {
    const spec = 'gen:fattree3:radix=36';
    const want = loadFabricSpec(spec);
    const hosts = want.nodes.filter((n) => n.type !== NodeType.Switch).length;
    expect(hosts).toBeGreaterThanOrEqual(10_000);
    const clock = new VirtualClock();
    const sim = new SimFabric(loadFabricSpec(spec), { clock });
    const ep = sim.attach(0);
    ep.register(MgmtClass.SubnDirected, 1);
    const rpc = new MadRpc(ep, clock, { window: 512, perDestinationWindow: 64, timeoutMs: 1000 });
    const res = await drive(clock, discover(smpClientOf(rpc)), 600_000);
    expect(diffFabrics(graphOf(res.fabric), graphOf(want))).toEqual([]);
    // The minimum a directed-route sweep needs: per switch NodeDescription + SwitchInfo + PortInfo
    // of ports 0..N; per CA port its NodeInfo + PortInfo; one NodeDescription per CA; one NodeInfo
    // per switch-to-switch link (a fat tree is bipartite, so no link is probed twice) and one for the SM's node.
    let expected = 1;
    for (const n of want.nodes) {
      if (n.type === NodeType.Switch) expected += 2 + n.numPorts + 1;
      else expected += 1 + 2 * n.ports.filter((p) => p?.peer).length;
    }
    const swLinks = want.nodes.reduce((a, n) => a + (n.type === NodeType.Switch ? n.ports.filter((p, i) => i > 0 && p?.peer && want.nodes[p.peer.node]!.type === NodeType.Switch).length : 0), 0) / 2;
    expected += swLinks;
    expect(res.smps).toBe(expected);
    expect(rpc.stats.retries).toBe(0);
  }, 120_000);
});

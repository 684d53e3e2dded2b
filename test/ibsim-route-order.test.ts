/** guid_routing_order_file on ibsim, OpenSM as the witness (#28): the same fat tree, the same
 * order file (the hosts shuffled), OpenSM at its defaults but for that key (minhop), then ibsm
 * with --routing minhop and the same file; each leaf switch's LFT read with the real `ibroute`.
 * OpenSM routes the listed destinations first, so on each leaf the listed remote hosts take the
 * uplinks in turn from the lowest port; ibsm does the same, and both leave the same port for every
 * host on every leaf. Without the file OpenSM's tables differ (the file is what made them so).
 * Every process is stopped by PID. */
import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startIbsim } from './helpers/ibsim.js';
import { tool, parseIbroute } from './helpers/witness.js';
import { TIMEOUT, planOf, startIbsm, startOpenSm, stopSa, type Plan, type RunningSa } from './helpers/sa-compare.js';
import { formatIbnetdiscover } from '../src/model/ibnetdiscover.js';
import { loadFabricSpec } from '../src/model/load.js';
import { NodeType } from '../src/wire/mad.js';

const SPEC = 'gen:fattree2:leaves=4,spines=4,hosts=3';

/** Per leaf (by node GUID): its uplinks in port order, and the port its LFT gives each host (by port GUID). */
interface Leaves {
  up: Map<bigint, number[]>;
  port: Map<bigint, Map<bigint, number>>;
}

async function observe(kind: 'opensm' | 'ibsm', file: string, order: string | undefined, dir: string, guid2lid?: string): Promise<{ plan: Plan; leaves: Leaves; log: string; guid2lid: string }> {
  const ib = await startIbsim(file);
  let sa: RunningSa | undefined;
  try {
    if (kind === 'opensm') {
      const conf = path.join(dir, 'opensm.conf');
      writeFileSync(conf, order ? `guid_routing_order_file ${order}\n` : '');
      sa = await startOpenSm(ib, ['-F', conf]);
    } else {
      // OpenSM's LIDs (the comparison is by GUID; the same LIDs make the logs comparable too)
      const g2l = path.join(dir, 'guid2lid');
      writeFileSync(g2l, guid2lid!);
      sa = await startIbsm(ib, g2l, ['--routing', 'minhop', '--guid-routing-order-file', order!]);
    }
    const g2lText = readFileSync(sa.guid2lid, 'utf8');
    const plan = planOf(file, g2lText);
    const hosts = plan.ends.filter((e) => !e.switch);
    const leaves: Leaves = { up: new Map(), port: new Map() };
    for (const sw of plan.ends.filter((e) => e.switch)) {
      const n = plan.fabric.nodes[sw.node]!;
      const up = n.ports.flatMap((p, i) => (i > 0 && p?.peer && plan.fabric.nodes[p.peer.node]!.type === NodeType.Switch ? [i] : []));
      if (up.length === n.ports.filter((p, i) => i > 0 && p?.peer).length) continue; // a spine
      const lft = parseIbroute(await tool(ib, 'ibroute', [String(sw.lid)], plan.caHosts[0]));
      leaves.up.set(n.guid, up);
      leaves.port.set(n.guid, new Map(hosts.map((h) => [h.guid, lft.get(h.lid) ?? -1])));
    }
    return { plan, leaves, log: sa.log(), guid2lid: g2lText };
  } finally {
    await stopSa(sa, kind);
    await ib.stop();
  }
}

describe('guid_routing_order_file on ibsim, OpenSM as the witness', () => {
  it(
    'minhop, the hosts shuffled: on every leaf the listed remote hosts take the uplinks in turn from the lowest, for OpenSM and for ibsm; the same port for every host',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-order-'));
      const file = path.join(dir, 'fattree.net');
      writeFileSync(file, formatIbnetdiscover(loadFabricSpec(SPEC), { timestamp: 'x' }));
      const order = path.join(dir, 'order');
      // the hosts' port GUIDs from the topology, shuffled (host k*5 mod 12 at k), each with a name after it (OpenSM's syntax)
      const topo = loadFabricSpec(file);
      const hostGuids = topo.nodes.filter((n) => n.type !== NodeType.Switch).flatMap((n) => n.ports.flatMap((p) => (p?.peer ? [p.guid] : [])));
      expect(hostGuids.length).toBe(12);
      const listed = hostGuids.map((_, k) => hostGuids[(k * 5) % 12]!);
      writeFileSync(order, `# hosts shuffled\n${listed.map((g, i) => `0x${g.toString(16).padStart(16, '0')} host-${i}`).join('\n')}\n`);

      const osm = await observe('opensm', file, order, dir);
      expect(osm.log, 'OpenSM read the file').not.toMatch(/ERR 3A0D/);
      const ours = await observe('ibsm', file, order, dir, osm.guid2lid);
      const plain = await observe('opensm', file, undefined, dir);

      const leafOf = (plan: Plan, g: bigint): bigint => {
        const n = plan.fabric.nodes.find((x) => x.ports.some((p) => p?.guid === g))!;
        const peer = n.ports.find((p) => p?.guid === g)!.peer!;
        return plan.fabric.nodes[peer.node]!.guid;
      };
      for (const [name, r] of [['OpenSM', osm], ['ibsm', ours]] as const) {
        expect(r.leaves.up.size, name).toBe(4);
        for (const [leaf, up] of r.leaves.up) {
          const remote = listed.filter((g) => leafOf(r.plan, g) !== leaf);
          const got = remote.map((g) => r.leaves.port.get(leaf)!.get(g));
          expect(got, `${name}: leaf 0x${leaf.toString(16)}, the remote hosts in the file's order`).toEqual(remote.map((_, i) => up[i % up.length]));
        }
      }
      // without the file OpenSM gives other ports
      expect([...plain.leaves.port].some(([leaf, ports]) => [...ports].some(([g, p]) => osm.leaves.port.get(leaf)!.get(g) !== p)), 'OpenSM without the file').toBe(true);
      // the same port for every host on every leaf
      for (const [leaf, ports] of osm.leaves.port) expect(Object.fromEntries(ours.leaves.port.get(leaf)!), `leaf 0x${leaf.toString(16)}`).toEqual(Object.fromEntries(ports));
    },
    10 * TIMEOUT,
  );
});

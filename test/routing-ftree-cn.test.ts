/** ftree with compute nodes named (OpenSM's cn_guid_file / io_guid_file): the compute nodes' routes
 * are balanced among themselves to the optimum whatever the I/O nodes between them, and every node
 * is still routed. */
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { getEngine, verifyRoutes } from '../src/routing/index.js';
import type { RoutingOptions } from '../src/routing/types.js';

/** The busiest directed switch-to-switch link counting only routes between the given CA ports. */
function busiest(f: Fabric, lfts: Map<number, Uint8Array>, among: ReadonlySet<bigint>): number {
  const load = new Map<string, number>();
  const cas = f.nodes.flatMap((n, ni) => (isSwitch(n) ? [] : n.ports.filter((p) => p?.peer && among.has(p.guid)).map((p) => ({ ni, p: p! }))));
  for (const s of cas) {
    for (const d of cas) {
      if (s === d) continue;
      let sw = s.p.peer!.node;
      for (let hops = 0; hops < 16; hops++) {
        const out = lfts.get(sw)![d.p.lid!]!;
        const peer = f.nodes[sw]!.ports[out]!.peer!;
        if (!isSwitch(f.nodes[peer.node]!)) break;
        const k = `${sw}:${out}`;
        load.set(k, (load.get(k) ?? 0) + 1);
        sw = peer.node;
      }
    }
  }
  return Math.max(0, ...load.values());
}

function route(f: Fabric, o: Partial<RoutingOptions> = {}) {
  return getEngine('ftree').route(f, { lmc: 0, ...o });
}

describe('ftree with compute nodes and I/O nodes', () => {
  it('the compute nodes are balanced as if the I/O nodes were absent; everything is routed', () => {
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=4,hosts=5');
    assignLids(f, { lmc: 0 });
    const hosts = f.nodes.filter((n) => !isSwitch(n));
    // the I/O nodes: the second host of every leaf (in the middle of each leaf's ports)
    const io = new Set(f.nodes.filter(isSwitch).flatMap((sw) => sw.ports.filter((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!)).slice(1, 2).map((p) => f.nodes[p!.peer!.node]!.ports[p!.peer!.port]!.guid)));
    const cn = new Set(hosts.map((h) => h.ports[1]!.guid).filter((g) => !io.has(g)));
    expect(io.size).toBe(4);
    // the optimum for the compute nodes: each leaf's 4 send to the 12 others over its 4 up links
    const best = (4 * 12) / 4;
    for (const opts of [{ cnGuids: [...cn] }, { ioGuids: [...io] }, { cnGuids: [...cn], ioGuids: [...io] }]) {
      const r = route(f, opts);
      expect(busiest(f, r.lfts, cn), JSON.stringify(Object.keys(opts))).toBe(best);
      const v = verifyRoutes(f, r, { stretch: false });
      expect(v.unreachablePairs).toBe(0);
      expect(v.loopEntries).toBe(0);
      expect(r.notes.some((n) => n.startsWith('compute nodes balanced first: 16 CN ports, 4 other'))).toBe(true);
    }
    // without naming them the I/O nodes take rotation slots between the compute nodes
    expect(busiest(f, route(f).lfts, cn)).toBeGreaterThan(best);
  });
});

import { describe, expect, it } from 'vitest';
import { SimFabric } from '../src/sim/fabric.js';
import { generateFabric } from '../src/model/generators.js';
import { VirtualClock } from '../src/util/clock.js';
import { MgmtClass, Method, NodeType, PERMISSIVE_LID, SmpAttr, SmpDr } from '../src/wire/mad.js';
import { NodeInfo } from '../src/wire/sma.js';
import type { ReceivedMad } from '../src/transport/types.js';

describe('scale', () => {
  it('discovers a 3-level fat tree with more than 10,000 end ports by DR NodeInfo BFS', async () => {
    const t0 = performance.now();
    const fabric = generateFabric('gen:fattree3:radix=36');
    const hosts = fabric.nodes.filter((n) => n.type === NodeType.CA).length;
    expect(hosts).toBeGreaterThan(10_000);
    const clock = new VirtualClock();
    const fab = new SimFabric(fabric, { clock });
    const t1 = performance.now();
    const hostIdx = fabric.nodes.findIndex((n) => n.type === NodeType.CA);
    const ep = fab.attach(hostIdx);
    ep.register(MgmtClass.SubnDirected, 1);
    const got: ReceivedMad[] = [];
    ep.onReceive((m) => got.push(m));

    const seen = new Set<bigint>();
    const pathOf = new Map<number, number[]>();
    let tid = 0;
    const send = (path: number[]) => {
      const initialPath = new Array<number>(64).fill(0);
      path.forEach((p, i) => (initialPath[i] = p));
      const id = ++tid;
      pathOf.set(id, path);
      ep.send(
        SmpDr.encode({
          baseVersion: 1,
          mgmtClass: MgmtClass.SubnDirected,
          classVersion: 1,
          method: Method.Get,
          hopCount: path.length - 1,
          tid: BigInt(id),
          attrId: SmpAttr.NodeInfo,
          drSlid: PERMISSIVE_LID,
          drDlid: PERMISSIVE_LID,
          initialPath,
        }),
        { lid: PERMISSIVE_LID, qpn: 0 },
      );
    };
    send([0]);
    let sent = 1;
    let levels = 0;
    while (true) {
      await clock.advanceAsync(1);
      const batch = got.splice(0);
      if (!batch.length) break;
      levels++;
      for (const m of batch) {
        const ni = NodeInfo.decode(m.data, 64);
        const path = pathOf.get(Number(m.data[12]! * 2 ** 24 + m.data[13]! * 65536 + m.data[14]! * 256 + m.data[15]!))!;
        if (seen.has(ni.nodeGuid)) continue;
        seen.add(ni.nodeGuid);
        if (ni.nodeType !== NodeType.Switch) {
          if (path.length === 1) send([0, 1]); // our own CA: step out of its port
          sent += path.length === 1 ? 1 : 0;
          continue;
        }
        for (let p = 1; p <= ni.numPorts; p++) {
          if (p === ni.localPortNum) continue;
          send([...path, p]);
          sent++;
        }
      }
    }
    const t2 = performance.now();
    expect(seen.size).toBe(fabric.nodes.length);
    expect(fab.pendingEvents).toBe(0);
    // eslint-disable-next-line no-console
    console.log(
      `fattree3 radix 36: ${fabric.nodes.length} nodes (${hosts} CAs); build ${(t1 - t0).toFixed(0)} ms; ` +
        `${sent} DR SMPs in ${levels} waves, ${(t2 - t1).toFixed(0)} ms (${Math.round((sent / (t2 - t1)) * 1000)}/s), ${fab.stats.hops} link crossings`,
    );
  }, 60_000);
});

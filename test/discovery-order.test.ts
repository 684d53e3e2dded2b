/** Discovery is canonical: node numbering, DR paths, and so LIDs and LFTs, do not depend on the
 * order SMP answers arrive in, nor on which port the SM runs at. Two SMs on one fabric (master and
 * standby) must compute the same tables, or a takeover rewrites the whole fabric.
 *
 * Answers are shuffled with the fault injector on the SM's transport (receive direction: every
 * answer is held a seeded random 0..4 ms, some are reordered), so concurrent SMPs of one BFS level
 * come back in a different order per seed. The witness is the simulated fabric itself: every end
 * port's LID and every switch's LFT, read back from it. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { withFaults } from '../src/transport/fault.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { SubnetManager } from '../src/sm/sm.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import type { LidRange } from '../src/sm/lids.js';
import type { DiscoveryResult } from '../src/sm/discovery.js';
import { drive } from './helpers/drive.js';

const EX = '/usr/share/doc/ibsim-utils/net-examples';

interface RunOptions {
  /** Fault-injector seed; undefined: answers as the in-process fabric delivers them. */
  seed?: number;
  /** Node (index in the spec, or NodeDescription) the SM attaches at. */
  attach?: number | string;
  guid2lid?: ReadonlyMap<bigint, LidRange>;
  routing?: string[];
}

interface Outcome {
  /** Every end port's LID as the fabric holds it, "guid/port=lid". */
  lids: string[];
  /** Every switch's LFT as the fabric holds it, "guid=hex" (up to the SM's max LID). */
  lfts: string[];
  /** The discovery result, serialized (numbering, links, paths, depths). */
  numbering: string;
  guid2lid: Map<bigint, LidRange>;
  smLid: number;
  discovery: DiscoveryResult;
  reordered: number;
}

async function run(spec: string, o: RunOptions = {}): Promise<Outcome> {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec(spec), { clock, seed: 7 });
  const ep = sim.attach(o.attach ?? 0);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnDirected, 1);
  const t = o.seed === undefined ? undefined : withFaults(ep, { seed: o.seed, receive: { delay: [0, 4], reorder: 0.2, reorderHoldMs: 2 } }, clock);
  const rpc = new MadRpc(t ?? ep, clock, { timeoutMs: 50, retries: 3, window: 64, perDestinationWindow: 8 });
  let saved = new Map<bigint, LidRange>();
  const sm = new SubnetManager({
    smp: smpClientOf(rpc),
    clock,
    log: new Logger(new MemorySink(), 'error'),
    routing: o.routing ?? ['ftree', 'updn', 'minhop'],
    lmc: 0,
    guid2lid: o.guid2lid,
    saveGuid2Lid: (m) => (saved = new Map(m)),
    sweepIntervalMs: 0,
  });
  await drive(clock, sm.start());
  const snap = sm.current!;
  const ref = loadFabricSpec(spec);
  const lids: string[] = [];
  const lfts: string[] = [];
  for (const n of ref.nodes) {
    n.ports.forEach((p, pn) => {
      if (!p || (n.type === NodeType.Switch ? pn !== 0 : !p.peer)) return;
      lids.push(`${n.guid.toString(16)}/${pn}=${sim.portInfo(n.guid, pn).lid}`);
    });
    if (n.type === NodeType.Switch) lfts.push(`${n.guid.toString(16)}=${Buffer.from(sim.lft(n.guid).subarray(0, snap.maxLid + 1)).toString('hex')}`);
  }
  const d = snap.discovery;
  const numbering = JSON.stringify(
    {
      smNode: d.smNode,
      smPort: d.smPort,
      maxDepth: d.maxDepth,
      nodes: d.fabric.nodes.map((n, i) => ({
        guid: n.guid,
        ports: n.ports.map((p) => p && { guid: p.guid, peer: p.peer, width: p.width, speed: p.speed }),
        path: d.nodes[i]!.path,
        portPaths: d.nodes[i]!.portPaths,
        depth: d.nodes[i]!.depth,
        localPortNum: d.nodes[i]!.nodeInfo.localPortNum,
        nodeInfoPortGuid: d.nodes[i]!.nodeInfo.portGuid,
      })),
    },
    (_k, v: unknown) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v),
  );
  return { lids, lfts, numbering, guid2lid: saved, smLid: snap.smLid, discovery: d, reordered: t?.stats.receive.reordered ?? 0 };
}

/** The fabric as discovered, without what depends on the SM's position (its node and the paths). */
function graphOf(d: DiscoveryResult): string {
  return JSON.stringify(
    d.fabric.nodes.map((n) => ({ guid: n.guid, ports: n.ports.map((p) => p && { guid: p.guid, peer: p.peer }) })),
    (_k, v: unknown) => (typeof v === 'bigint' ? `0x${v.toString(16)}` : v),
  );
}

const SPECS: { spec: string; routing?: string[] }[] = [
  { spec: 'gen:fattree2:leaves=4,spines=3,hosts=3' }, // ftree
  { spec: 'gen:torus:3x3,hosts=2', routing: ['updn'] }, // same-depth switch links, many equal-length paths
  { spec: 'gen:torus:3x4,hosts=1', routing: ['minhop'] },
  { spec: `${EX}/net.2sw2path4hca2port` }, // parallel switch links, 2-port HCAs on both switches
];

describe('discovery does not depend on the order answers arrive in', () => {
  for (const { spec, routing } of SPECS) {
    it(`${spec.replace(EX + '/', '')}: the same numbering, LIDs and LFTs with answers shuffled by 4 seeds`, async () => {
      const base = await run(spec, { routing });
      let reordered = 0;
      for (const seed of [1, 2, 3, 4]) {
        const r = await run(spec, { routing, seed });
        reordered += r.reordered;
        expect(r.numbering, `seed ${seed}: discovery numbering`).toBe(base.numbering);
        expect(r.lids, `seed ${seed}: LIDs`).toEqual(base.lids);
        expect(r.lfts, `seed ${seed}: LFTs`).toEqual(base.lfts);
      }
      expect(reordered, 'the injector did shuffle answers').toBeGreaterThan(0);
      // The canonical numbering: by node GUID.
      const guids = base.discovery.fabric.nodes.map((n) => n.guid);
      expect(guids).toEqual([...guids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    });
  }
});

describe('discovery does not depend on where the SM sits', () => {
  // Cold LID assignment is position-dependent by design: each SM gives its own port LID 1 (as
  // OpenSM does) and numbers the rest after it, so two cold runs from different ports disagree on
  // LIDs, and so on LFT contents (indexed by LID), whatever the numbering. A standby taking over
  // starts from the master's guid2lid (or the LIDs already on the wire), so compare the two SMs
  // given a common guid2lid: the one the first SM computed cold. Both then see the same fabric
  // numbered the same way and must compute the same LIDs and the same routes.
  for (const { spec, routing } of SPECS) {
    it(`${spec.replace(EX + '/', '')}: SMs at two different CA ports, given the same guid2lid, program identical LIDs and LFTs`, async () => {
      const f = loadFabricSpec(spec);
      const cas = f.nodes.flatMap((n, i) => (n.type !== NodeType.Switch && n.ports.some((p) => p?.peer) ? [i] : []));
      const a = cas[0]!;
      const b = cas[cas.length - 1]!;
      const first = await run(spec, { routing, attach: a });
      const second = await run(spec, { routing, attach: b, guid2lid: first.guid2lid });
      expect(second.lids).toEqual(first.lids);
      expect(second.lfts).toEqual(first.lfts);
      expect(graphOf(second.discovery)).toBe(graphOf(first.discovery));
      // Each SM's own node is where its GUID sorts, not index 0.
      expect(first.discovery.fabric.nodes[first.discovery.smNode]!.guid).toBe(f.nodes[a]!.guid);
      expect(second.discovery.fabric.nodes[second.discovery.smNode]!.guid).toBe(f.nodes[b]!.guid);
      // And cold, the second SM takes LID 1 for itself: the reason for the common guid2lid above.
      const cold = await run(spec, { routing, attach: b });
      expect(cold.smLid).toBe(1);
      expect(first.smLid).toBe(1);
      expect(second.smLid).not.toBe(1);
    });
  }
});

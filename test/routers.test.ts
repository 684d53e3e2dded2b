/**
 * Routing between subnets through IB routers on the in-process fabric (docs/routers.md): the
 * routers' forwarding, the SMs' router tables, the SA's inter-subnet PathRecords and the client's
 * a-g sequence. The witness for every resolved path is a test packet walked through the fabric's
 * actual tables (sim/probe.ts), both ways: it must arrive where the paths say, by the routers
 * they name.
 */
import { describe, expect, it } from 'vitest';
import { openSubnets, type IbsmSubnets } from '../src/api/subnets.js';
import { sendProbe } from '../src/sim/probe.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { NodeType } from '../src/wire/mad.js';
import { resolveInterSubnetPath, type InterSubnetPath } from '../src/sa/inter-subnet-client.js';
import { Rng } from '../src/util/rng.js';
import { logRe } from './helpers/log-lines.js';

const quiet = (): Logger => new Logger(new MemorySink(), 'info');

async function up(spec: string, extra: Partial<Parameters<typeof openSubnets>[0]> = {}): Promise<IbsmSubnets> {
  const net = await openSubnets({ sim: spec, sweepIntervalS: 0, log: quiet(), ...extra });
  await net.start();
  return net;
}

interface Host {
  node: number;
  desc: string;
  gid: bigint;
  lid: number;
  subnet: number;
}

function hosts(net: IbsmSubnets): Host[] {
  const out: Host[] = [];
  net.subnets.forEach((s, i) => {
    for (const n of s.part.nodes) {
      const node = net.sim.nodes[n]!;
      if (node.type !== NodeType.CA || n === s.part.smNode) continue;
      out.push({ node: n, desc: node.desc, gid: (s.part.prefix << 64n) | node.ports[1]!.guid, lid: node.ports[1]!.info.lid, subnet: i });
    }
  });
  return out;
}

/** The LID owner of `lid` among the router ports of subnet `s` (the router a path names). */
function routerAt(net: IbsmSubnets, s: number, lid: number): string | undefined {
  return net.subnets[s]!.routers.find((r) => r.lid === lid)?.desc;
}

/** Resolve a pair with a-g and check both test packets against the paths. */
async function checkPair(net: IbsmSubnets, a: Host, b: Host): Promise<InterSubnetPath> {
  const c = net.client(a.node);
  try {
    const r = await resolveInterSubnetPath(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid, sgid: a.gid, dgid: b.gid });
    expect(r.valid, `${a.desc} -> ${b.desc}`).toBe(true);
    const { p1, p2 } = r;
    expect(p1.sgid).toBe(a.gid);
    expect(p1.dgid).toBe(b.gid);
    expect(p1.slid).toBe(a.lid);
    expect(p2!.sgid).toBe(b.gid);
    expect(p2!.dgid).toBe(a.gid);
    expect(p2!.slid).toBe(b.lid);
    // P1 and P2 name router ports of the source's and the destination's subnet
    expect(routerAt(net, a.subnet, p1.dlid)).toBeDefined();
    expect(routerAt(net, b.subnet, p2!.dlid)).toBeDefined();
    // forward: injected with P1, it arrives at b from the router port P2 names
    const fwd = await sendProbe(net.sim, a.node, 1, { slid: p1.slid, dlid: p1.dlid, sl: p1.sl, sgid: p1.sgid, dgid: p1.dgid, hopLimit: p1.hopLimit });
    expect(fwd.arrived ? fwd.desc : fwd.reason).toBe(b.desc);
    if (!fwd.arrived) return r;
    expect(fwd.dlid).toBe(b.lid);
    expect(fwd.slid).toBe(p2!.dlid);
    // back: injected with P2, it arrives at a from P1's router port
    const back = await sendProbe(net.sim, b.node, 1, { slid: p2!.slid, dlid: p2!.dlid, sl: p2!.sl, sgid: p2!.sgid, dgid: p2!.dgid, hopLimit: p2!.hopLimit });
    expect(back.arrived ? back.desc : back.reason).toBe(a.desc);
    if (!back.arrived) return r;
    expect(back.dlid).toBe(a.lid);
    expect(back.slid).toBe(p1.dlid);
    // the routers crossed: as many as the subnets' distance, the first P1's, the last P2's
    const fr = fwd.hops.filter((h) => net.sim.nodes[h.node]!.type === NodeType.Router);
    expect(fr[0]!.desc).toBe(routerAt(net, a.subnet, p1.dlid));
    expect(fr[fr.length - 1]!.desc).toBe(routerAt(net, b.subnet, p2!.dlid));
    expect(fwd.hopLimit).toBe(255 - fr.length);
    return r;
  } finally {
    await c.close();
  }
}

/** Every cross-subnet pair, or a seeded sample of `max`. */
function pairs(net: IbsmSubnets, max: number, seed = 7): Array<[Host, Host]> {
  const hs = hosts(net);
  const all: Array<[Host, Host]> = [];
  for (const a of hs) for (const b of hs) if (a.subnet !== b.subnet) all.push([a, b]);
  if (all.length <= max) return all;
  const rng = new Rng(seed);
  const out: Array<[Host, Host]> = [];
  const left = [...all];
  while (out.length < max) out.push(left.splice(rng.int(left.length), 1)[0]!);
  return out;
}

describe('gen:subnets and the split into subnets', () => {
  it('builds N fat trees and R routers per neighbouring pair for line, ring and star; subnetsOf finds them', async () => {
    const { generateFabric } = await import('../src/model/generators.js');
    const { subnetsOf, isMultiSubnet, subnetPairs } = await import('../src/model/subnets.js');
    expect(subnetPairs(4, 'line')).toEqual([[0, 1], [1, 2], [2, 3]]);
    expect(subnetPairs(4, 'ring')).toEqual([[0, 1], [1, 2], [2, 3], [3, 0]]);
    expect(subnetPairs(2, 'ring')).toEqual([[0, 1]]);
    expect(subnetPairs(4, 'star')).toEqual([[0, 1], [0, 2], [0, 3]]);
    for (const [shape, count, routers, want] of [['line', 3, 2, 4], ['ring', 4, 1, 4], ['star', 4, 2, 6]] as const) {
      const f = generateFabric(`gen:subnets:count=${count},shape=${shape},routers=${routers},leaves=3,spines=2,hosts=2`);
      const rs = f.nodes.filter((n) => n.type === NodeType.Router);
      expect(rs).toHaveLength(want);
      const parts = subnetsOf(f);
      expect(parts).toHaveLength(count);
      for (const p of parts) {
        // 2 spines + 3 leaves + 6 hosts, no router inside
        expect(p.nodes).toHaveLength(11);
        expect(f.nodes[p.smNode]!.desc).toBe(`s${p.index}-host-0 HCA-1`);
      }
      // every router port sits in exactly one subnet, the two ports of a router in two different ones
      for (const r of rs) {
        const sides = parts.filter((p) => p.routerPorts.some((x) => f.nodes[x.node] === r)).map((p) => p.index);
        expect(sides).toHaveLength(2);
      }
      expect(isMultiSubnet(f)).toBe(true);
    }
    expect(isMultiSubnet(generateFabric('gen:fattree2:radix=4'))).toBe(false);
    expect(() => generateFabric('gen:subnets:shape=mesh')).toThrow(/shape=mesh: one of line, ring, star/);
  });
});

describe('the simulated router', () => {
  it('drops what it cannot forward, each drop counted by its reason; its own GID is delivered to it', async () => {
    const net = await up('gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2');
    try {
      const [a] = hosts(net);
      const b = hosts(net).find((h) => h.subnet === 1)!;
      const r = net.subnets[0]!.routers[0]!;
      const p1 = net.subnets[1]!.part.prefix;
      const before = { ...net.sim.stats.dropReasons };
      const lost = async (h: Parameters<typeof sendProbe>[3]): Promise<string> => {
        const x = await sendProbe(net.sim, a!.node, 1, h);
        return x.arrived ? `arrived at ${x.desc}` : x.reason;
      };
      expect(await lost({ dlid: r.lid, dgid: b.gid, hopLimit: 1 })).toBe('router: HopLimit exhausted');
      expect(await lost({ dlid: r.lid, dgid: (0xfec0_0000_0000_0042n << 64n) | 1n })).toBe('router: no route to the DGID prefix');
      expect(await lost({ dlid: r.lid, dgid: (p1 << 64n) | 0xabcdefn })).toBe('router: DGID not in its GID table');
      for (const k of ['router: HopLimit exhausted', 'router: no route to the DGID prefix', 'router: DGID not in its GID table']) expect((net.sim.stats.dropReasons[k] ?? 0) - (before[k] ?? 0)).toBe(1);
      // the router's own port GID in the other subnet: for the router itself
      expect(await lost({ dlid: r.lid, dgid: (p1 << 64n) | r.ports[1]!.portGuid })).toBe('arrived at router-0-1-0');
      // no GRH: a packet for the router's LID stops there
      expect(await lost({ dlid: r.lid })).toBe('arrived at router-0-1-0');
      // HopLimit 2 is enough for one router: it arrives with 1
      const ok = await sendProbe(net.sim, a!.node, 1, { dlid: r.lid, dgid: b.gid, hopLimit: 2 });
      expect(ok.arrived && ok.hopLimit).toBe(1);
    } finally {
      await net.stop();
    }
  });

  it('its vendor attributes: RouterLidTable as written (the last-block bit ends the table), RouterPortInfo per port, directed routes not through it', async () => {
    const { RouterAttr, RouterLidTable, RouterPortInfo, RouterPrefixTable, ROUTER_LAST_BLOCK, SA_WELL_KNOWN_GUID } = await import('../src/wire/router.js');
    const { RouterTables } = await import('../src/sm/router-tables.js');
    const { smpClientOf } = await import('../src/sm/smp-client.js');
    const net = await up('gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2');
    try {
      const s = net.subnets[0]!;
      const smp = smpClientOf(s.sm.backend.rpc);
      const r = s.routers[0]!;
      const snap = s.sm.snapshot!;
      const blocks = RouterTables.blocksOf(snap);
      // what the SM wrote reads back block by block, the SA's GUID mapped to the SM's LID
      const read = [];
      for (let b = 0; b < blocks.length; b++) read.push(...RouterLidTable.decode(await smp.getLid(r.lid, RouterAttr.RouterLidTable, b)).entries);
      expect(read.filter((e) => e.valid)).toEqual(blocks.flat().filter((e) => e.valid));
      expect(read.find((e) => e.guid === SA_WELL_KNOWN_GUID)?.lid).toBe(snap.smLid);
      const pi = RouterPortInfo.decode(await smp.getLid(r.lid, RouterAttr.RouterPortInfo, 0));
      expect(pi.portNum).toBe(r.portNum);
      expect(pi.gidPrefix).toBe(s.part.prefix);
      expect(pi.lidTableEntries).toBe(blocks.flat().filter((e) => e.valid).length);
      const pt = RouterPrefixTable.decode(await smp.getLid(r.lid, RouterAttr.RouterPrefixTable, 0));
      expect(pt.entries.filter((e) => e.valid).map((e) => e.prefix)).toEqual([net.subnets[1]!.part.prefix]);
      // one block written with the last-block bit: the table is that block
      const one = { entries: [{ guid: 0x1234n, lid: 77, sl: 3, valid: 1 }, ...[0, 0, 0].map(() => ({ guid: 0n, lid: 0, sl: 0, valid: 0 }))] };
      await smp.setLid(r.lid, RouterAttr.RouterLidTable, ROUTER_LAST_BLOCK >>> 0, RouterLidTable.encode(one as never));
      expect(RouterPortInfo.decode(await smp.getLid(r.lid, RouterAttr.RouterPortInfo, 0)).lidTableEntries).toBe(1);
      // the router forwards by it: DLID and SL from the entry (LID 77 does not exist here: lost past the router)
      const via = await sendProbe(net.sim, net.subnets[1]!.part.smNode, 1, { dlid: net.subnets[1]!.routers[0]!.lid, dgid: (s.part.prefix << 64n) | 0x1234n });
      expect(via.arrived).toBe(false);
      const out = via.hops.find((h) => h.desc === 'router-0-1-0');
      expect(out && [out.port, out.slid, out.dlid, out.sl]).toEqual([r.portNum, r.lid, 77, 3]);
      // the router now drops what it no longer knows: the next sweep's programming restores it
      const b = hosts(net).find((h) => h.subnet === 0 && h.node !== s.part.smNode)!;
      const back = await sendProbe(net.sim, net.subnets[1]!.part.smNode, 1, { dlid: net.subnets[1]!.routers[0]!.lid, dgid: b.gid });
      expect(back.arrived ? 'arrived' : back.reason).toBe('router: DGID not in its GID table');
      // directed route: a path through the router is refused by the fabric (the SMP is lost)
      const rn = net.sim.node('router-0-1-0');
      const { MadTimeoutError } = await import('../src/rpc/errors.js');
      const path = snap.discovery.nodes[snap.fabric.nodes.findIndex((n) => n.guid === rn.guid)]?.path;
      expect(path).toBeDefined();
      // the path to the router answers (NodeInfo: a router, the port in this subnet) ...
      const { NodeInfo } = await import('../src/wire/sma.js');
      const ni = NodeInfo.decode(await s.sm.backend.rpc.smpGetDr(path!, 0x0011, 0));
      expect([ni.nodeType, ni.nodeGuid, ni.portGuid]).toEqual([NodeType.Router, rn.guid, r.portGuid]);
      // ... one hop further, through the router, nothing does
      const through = await s.sm.backend.rpc.smpGetDr([...path!, 2], 0x0011, 0, undefined, { timeoutMs: 50, retries: 0 }).catch((e: unknown) => e);
      expect(through).toBeInstanceOf(MadTimeoutError);
    } finally {
      await net.stop();
    }
  });
});

describe('routers: every cross-subnet pair resolves through a-g, validates, and delivers both ways', () => {
  for (const spec of [
    'gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2',
    'gen:subnets:count=2,shape=line,routers=2,leaves=2,spines=1,hosts=2',
    'gen:subnets:count=3,shape=line,routers=1,leaves=2,spines=1,hosts=2',
    'gen:subnets:count=3,shape=line,routers=2,leaves=2,spines=2,hosts=2',
    'gen:subnets:count=3,shape=ring,routers=1,leaves=2,spines=1,hosts=2',
    'gen:subnets:count=3,shape=ring,routers=2,leaves=2,spines=1,hosts=3',
  ]) {
    it(spec, async () => {
      const net = await up(spec);
      try {
        const ps = pairs(net, 40);
        expect(ps.length).toBeGreaterThan(10);
        const used = new Set<string>();
        let retried = 0;
        for (const [a, b] of ps) {
          const r = await checkPair(net, a, b);
          used.add(`${a.subnet}:${routerAt(net, a.subnet, r.p1.dlid)}`);
          if (r.attempts.length > 1) retried++;
        }
        // two routers between neighbours: the SAs spread the pairs over both (every router is some pair's P1 router)
        const all = net.sim.nodes.filter((n) => n.type === NodeType.Router).map((n) => n.desc);
        expect(new Set([...used].map((u) => u.split(':')[1]))).toEqual(new Set(all));
        // P1's router is the one the destination's packets come back by: no P1 needs a retry here
        expect(retried).toBe(0);
      } finally {
        await net.stop();
      }
    });
  }
});

describe('routers: topology files', () => {
  it('a topology file with Router records is run as its subnets (JSON written from the generator, read back)', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { generateFabric } = await import('../src/model/generators.js');
    const { fabricToJson } = await import('../src/model/json.js');
    const file = join(mkdtempSync(join(tmpdir(), 'ibsm-routers-topo-')), 'fabric.json');
    writeFileSync(file, fabricToJson(generateFabric('gen:subnets:count=2,shape=line,routers=2,leaves=2,spines=1,hosts=2')));
    const net = await up(file);
    try {
      expect(net.subnets.map((s) => s.routers.length)).toEqual([2, 2]);
      for (const [a, b] of pairs(net, 6)) await checkPair(net, a, b);
    } finally {
      await net.stop();
    }
  });
});

describe('routers: an ibsim .net file with an Rt record', () => {
  it('two one-switch subnets joined by a router: every pair resolves and delivers', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'ibsm-routers-net-')), 'two.net');
    writeFileSync(file, NET);
    const net = await up(file);
    try {
      expect(net.subnets.map((s) => s.routers.map((r) => r.desc))).toEqual([['R-1'], ['R-1']]);
      expect(net.subnets[0]!.routers[0]!.nodeGuid).toBe(0x0002c90000000100n);
      const ps = pairs(net, 10);
      expect(ps).toHaveLength(2);
      for (const [a, b] of ps) await checkPair(net, a, b);
    } finally {
      await net.stop();
    }
  });
});

const NET = `Switch 3 "sw-a"
[1] "H-a1"[1]
[2] "H-a2"[1]
[3] "R-1"[1]

Switch 3 "sw-b"
[1] "H-b1"[1]
[2] "H-b2"[1]
[3] "R-1"[2]

Hca 1 "H-a1"
[1] "sw-a"[1]

Hca 1 "H-a2"
[1] "sw-a"[2]

Hca 1 "H-b1"
[1] "sw-b"[1]

Hca 1 "H-b2"
[1] "sw-b"[2]

rtguid=0x0002c90000000100
Rt 2 "R-1"
[1] "sw-a"[3]
[2] "sw-b"[3]
`;

describe('routers: MultiPathRecord across subnets', () => {
  it('GetMulti with remote DGIDs: one path per router per pair, round robin, NumbPath honoured', async () => {
    const { SaClient } = await import('../src/sa/client.js');
    const { MultiPathRecord, PathRecord, SaAttr } = await import('../src/wire/sa.js');
    const { Method } = await import('../src/wire/mad.js');
    const net = await up('gen:subnets:count=2,shape=line,routers=2,leaves=2,spines=1,hosts=2');
    try {
      const hs = hosts(net);
      const a = hs.find((x) => x.subnet === 0)!;
      const ds = hs.filter((x) => x.subnet === 1).slice(0, 2);
      const c = net.client(a.node);
      const sa = new SaClient(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid });
      const mask = (names: string[]): bigint => names.reduce((m, n) => m | MultiPathRecord.mask(n), 0n);
      const ask = async (numb?: number) =>
        (await sa.request(Method.GetMulti, SaAttr.MultiPathRecord, PathRecord, { sgidCount: 1, dgidCount: 2, gids: [a.gid, ...ds.map((d) => d.gid)], ...(numb ? { numbPath: numb } : {}) } as never, mask(['sgidCount', 'dgidCount', ...(numb ? ['numbPath'] : [])]), MultiPathRecord as never)).records;
      const all = await ask();
      // 2 destinations x 2 routers, round robin across the pairs
      expect(all.map((r) => [r.dgid, routerAt(net, 0, r.dlid)])).toEqual([
        [ds[0]!.gid, expect.stringMatching(/^router-0-1-/)],
        [ds[1]!.gid, expect.stringMatching(/^router-0-1-/)],
        [ds[0]!.gid, expect.stringMatching(/^router-0-1-/)],
        [ds[1]!.gid, expect.stringMatching(/^router-0-1-/)],
      ]);
      expect(new Set(all.filter((r) => r.dgid === ds[0]!.gid).map((r) => r.dlid)).size).toBe(2);
      for (const r of all) {
        expect(r.sgid).toBe(a.gid);
        expect(r.slid).toBe(a.lid);
        expect(r.hopLimit).toBe(255);
      }
      expect(await ask(3)).toHaveLength(3);
      await c.close();
    } finally {
      await net.stop();
    }
  });
});

describe('routers: failures and refusals', () => {
  it('a router taken down mid-run is not offered after the next sweep; paths through the other router still deliver', async () => {
    const net = await up('gen:subnets:count=2,shape=line,routers=2,leaves=2,spines=1,hosts=3');
    try {
      const hs = hosts(net);
      const ps = pairs(net, 100);
      // the router the first pair's P1 goes through
      const first = await checkPair(net, ps[0]![0], ps[0]![1]);
      const victim = routerAt(net, ps[0]![0].subnet, first.p1.dlid)!;
      // only its side in the destination's subnet fails: the source's SM sees nothing of it
      const vn = net.sim.node(victim);
      const farPort = vn.ports.findIndex((p, i) => i > 0 && net.subnetOf(vn.idx, i) === net.subnets[ps[0]![1].subnet]);
      net.sim.linkDown(victim, farPort);
      await net.resweep();
      for (const s of net.subnets) {
        const seen = s.routers.filter((r) => r.desc === victim);
        // the destination's SM no longer has the port; the source's still has it but it reaches nothing
        for (const r of seen) expect(r.reach).toEqual([]);
      }
      for (const [a, b] of ps) {
        const r = await checkPair(net, a, b);
        expect(routerAt(net, a.subnet, r.p1.dlid)).not.toBe(victim);
        expect(r.attempts.every((t) => routerAt(net, a.subnet, t.p1.dlid) !== victim)).toBe(true);
      }
      // the router comes back: offered again after the next sweep
      net.sim.linkUp(victim, farPort);
      await net.resweep();
      const used = new Set<string>();
      for (const [a, b] of ps) used.add(routerAt(net, a.subnet, (await checkPair(net, a, b)).p1.dlid)!);
      expect(used.has(victim)).toBe(true);
      expect(hs.length).toBe(10);
    } finally {
      await net.stop();
    }
  });

  it('a router whose cables are pulled is dropped by the SMs on their own (traps, heavy sweeps, router tables): the SAs stop offering it', async () => {
    const net = await up('gen:subnets:count=2,shape=line,routers=2,leaves=2,spines=1,hosts=3');
    try {
      const victim = 'router-0-1-0';
      net.sim.linkDown(victim, 1);
      net.sim.linkDown(victim, 2);
      const gone = (): boolean => net.subnets.every((s) => !s.routers.some((r) => r.desc === victim));
      for (let i = 0; i < 500 && !gone(); i++) {
        await new Promise((r) => setTimeout(r, 10));
        await net.settled();
      }
      expect(gone()).toBe(true);
      for (const [a, b] of pairs(net, 20)) {
        const r = await checkPair(net, a, b);
        expect(routerAt(net, a.subnet, r.p1.dlid)).toBe('router-0-1-1');
      }
    } finally {
      await net.stop();
    }
  });

  it('validation fails when the remote SA names another router than P1 arrives by: the client goes back to step c and the next P1 validates', async () => {
    const { interSubnetPaths } = await import('../src/sa/inter-subnet.js');
    const { PathRecord } = await import('../src/wire/sa.js');
    const net = await up('gen:subnets:count=2,shape=line,routers=2,leaves=2,spines=1,hosts=2');
    try {
      const hs = hosts(net);
      const a = hs.find((x) => x.subnet === 0)!;
      const b = hs.find((x) => x.subnet === 1)!;
      // subnet 1's SA answers its first P2 as if P1 had gone by the other router (a remote SA with another policy)
      const s1 = net.subnets[1]!;
      const honest = interSubnetPaths({ routers: s1.routers });
      let lied = 0;
      s1.sm.subnet.sa!.setInterSubnet({
        answer(ctx, q) {
          const rec = PathRecord.decode(q.data);
          if (lied === 0 && rec.sgid >> 64n === net.subnets[0]!.part.prefix && q.componentMask & PathRecord.mask('dlid')) {
            const other = s1.routers.find((r) => !r.ports.some((p) => p.lid === rec.dlid && p.prefix === net.subnets[0]!.part.prefix))!;
            lied++;
            const data = q.data.slice();
            PathRecord.encode({ ...rec, dlid: other.ports.find((p) => p.prefix === net.subnets[0]!.part.prefix)!.lid }, data, 0);
            return honest.answer(ctx, { ...q, data });
          }
          return honest.answer(ctx, q);
        },
      });
      const c = net.client(a.node);
      const r = await resolveInterSubnetPath(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid, sgid: a.gid, dgid: b.gid });
      await c.close();
      expect(lied).toBe(1);
      expect(r.valid).toBe(true);
      expect(r.attempts.map((t) => t.valid)).toEqual([false, true]);
      expect(r.attempts[0]!.reason).toMatch(/packets sent with P2 arrive by LID \d+, not P1's router LID \d+/);
      expect(r.attempts[0]!.p1.dlid).not.toBe(r.p1.dlid);
      // Get P1, Get P2, Get validation, then GetTable P1s, Get P2, Get validation
      expect(r.saRequests).toBe(6);
      // the kept pair delivers both ways (the other P2 would not have come back by P1's router)
      const fwd = await sendProbe(net.sim, a.node, 1, { slid: r.p1.slid, dlid: r.p1.dlid, sgid: r.p1.sgid, dgid: r.p1.dgid });
      expect(fwd.arrived && fwd.slid).toBe(r.p2!.dlid);
      const back = await sendProbe(net.sim, b.node, 1, { slid: r.p2!.slid, dlid: r.p2!.dlid, sgid: r.p2!.sgid, dgid: r.p2!.dgid });
      expect(back.arrived && back.slid).toBe(r.p1.dlid);
    } finally {
      await net.stop();
    }
  });

  it('a DGID prefix no router reaches gets ERR_INVALID_GID from the SA (never silence)', async () => {
    const { SaClient, SaStatusError } = await import('../src/sa/client.js');
    const { PathRecord, SaAttr, SaStatus } = await import('../src/wire/sa.js');
    const net = await up('gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2');
    try {
      const [a] = hosts(net);
      const c = net.client(a!.node);
      const sa = new SaClient(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid });
      const dgid = (0xfec0_0000_0000_0009n << 64n) | 0x1234n;
      const err = await sa.getTable(SaAttr.PathRecord, PathRecord, { sgid: a!.gid, dgid }, PathRecord.mask('sgid') | PathRecord.mask('dgid')).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SaStatusError);
      expect((err as InstanceType<typeof SaStatusError>).status & 0xff00).toBe(SaStatus.ReqInvalidGid);
      const err2 = await resolveInterSubnetPath(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid, sgid: a!.gid, dgid }).catch((e: unknown) => e);
      expect((err2 as InstanceType<typeof SaStatusError>).status & 0xff00).toBe(SaStatus.ReqInvalidGid);
      // a known prefix but no such port there: the remote SA says invalid GID; no P1 validates
      const err3 = await resolveInterSubnetPath(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid, sgid: a!.gid, dgid: (net.subnets[1]!.part.prefix << 64n) | 0x77n }).catch((e: unknown) => e);
      expect(String((err3 as Error).message)).toMatch(/invalid GID|ERR_INVALID_GID|0x0500/i);
      await c.close();
    } finally {
      await net.stop();
    }
  });

  it('P_Keys across subnets: a requester outside the partition gets no path, members do', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { generateFabric } = await import('../src/model/generators.js');
    const spec = 'gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2';
    const f = generateFabric(spec);
    const guid = (d: string): string => '0x' + f.nodes.find((n) => n.desc === d)!.ports[1]!.guid.toString(16).padStart(16, '0');
    const dir = mkdtempSync(join(tmpdir(), 'ibsm-routers-'));
    const file = join(dir, 'partitions.conf');
    writeFileSync(file, `Default=0x7fff, ipoib : ALL=limited, SELF=full, ALL_SWITCHES=full ;\nBlue=0x0001 : ${guid('s0-host-1 HCA-1')}=full, ${guid('s1-host-1 HCA-1')}=full, ALL_ROUTERS=full ;\n`);
    const net = await up(spec, { partitions: file });
    try {
      const hs = hosts(net);
      const h = (d: string): Host => hs.find((x) => x.desc === d)!;
      // members of Blue on both sides: resolved, validated, delivered; the paths carry Blue's key
      const r = await checkPair(net, h('s0-host-1 HCA-1'), h('s1-host-1 HCA-1'));
      expect(r.p1.pKey & 0x7fff).toBe(0x0001);
      expect(r.p2!.pKey & 0x7fff).toBe(0x0001);
      // a requester outside Blue: no path from the local SA
      const out = net.client('s0-host-2 HCA-1');
      const e1 = await resolveInterSubnetPath(out.rpc, { saLid: out.subnet.sm.snapshot!.smLid, sgid: out.gid, dgid: h('s1-host-1 HCA-1').gid }).catch((e: unknown) => e);
      expect((e1 as Error).name).toBe('InterSubnetPathError');
      await out.close();
      // a member towards a destination outside Blue: P1 exists (its SA cannot know), the remote SA has no P2
      const m = net.client('s0-host-1 HCA-1');
      const e2 = await resolveInterSubnetPath(m.rpc, { saLid: m.subnet.sm.snapshot!.smLid, sgid: m.gid, dgid: h('s1-host-2 HCA-1').gid }).catch((e: unknown) => e);
      expect((e2 as Error).name).toBe('InterSubnetPathError');
      expect(String((e2 as Error).message)).toMatch(/remote SA/);
      await m.close();
    } finally {
      await net.stop();
    }
  });

  it('the remote SA unreachable: P1 alone, flagged (the stop-gap case)', async () => {
    const net = await up('gen:subnets:count=2,shape=line,routers=1,leaves=2,spines=1,hosts=2');
    try {
      const hs = hosts(net);
      const a = hs.find((x) => x.subnet === 0)!;
      const b = hs.find((x) => x.subnet === 1)!;
      net.subnets[1]!.sm.subnet.sa!.setActive(false);
      const c = net.client(a.node);
      const r = await resolveInterSubnetPath(c.rpc, { saLid: c.subnet.sm.snapshot!.smLid, sgid: a.gid, dgid: b.gid, request: { timeoutMs: 50, retries: 0 } });
      expect(r.remoteSa).toBe('unreachable');
      expect(r.p2).toBeUndefined();
      expect(r.valid).toBe(false);
      expect(r.p1.dgid).toBe(b.gid);
      expect(routerAt(net, 0, r.p1.dlid)).toBe('router-0-1-0');
      // P1 alone still gets a packet there (the routers know the way)
      const fwd = await sendProbe(net.sim, a.node, 1, { slid: r.p1.slid, dlid: r.p1.dlid, sgid: r.p1.sgid, dgid: r.p1.dgid });
      expect(fwd.arrived && fwd.desc).toBe(b.desc);
      await c.close();
    } finally {
      await net.stop();
    }
  });
});

describe('--prefix-routes: OpenSM prefix-routes.conf, its documented behaviour', () => {
  async function withRoutes(lines: string): Promise<{ ask(dgid: bigint, sgid?: bigint): Promise<Array<{ dlid: number; hopLimit: number; dgid: bigint }> | number>; lidOf(d: string): number; guidOf(d: string): bigint; close(): Promise<void> }> {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { openSm } = await import('../src/api/sm.js');
    const { attachSim } = await import('../src/api/backend.js');
    const { SaClient, SaStatusError } = await import('../src/sa/client.js');
    const { PathRecord, SaAttr } = await import('../src/wire/sa.js');
    const file = join(mkdtempSync(join(tmpdir(), 'ibsm-prefix-routes-')), 'prefix-routes.conf');
    writeFileSync(file, lines);
    // one subnet managed (the routers' other sides have no SM: no router reports a prefix)
    const sm = await openSm({ sim: 'gen:subnets:count=3,shape=star,routers=2,leaves=2,spines=1,hosts=1', attach: 's0-host-0 HCA-1', sweepIntervalS: 0, guid2lid: 'none', log: quiet(), prefixRoutes: file });
    await sm.start();
    const sim = sm.sim!;
    const c = attachSim(sim, sm.backend.simFabric!, 's0-host-1 HCA-1', undefined, { sa: true }, false);
    const sa = new SaClient(c.rpc, { saLid: sm.snapshot!.smLid });
    const me = (0xfe80_0000_0000_0000n << 64n) | c.transport.local.portGuid;
    return {
      async ask(dgid, sgid = me) {
        try {
          return await sa.getTable(SaAttr.PathRecord, PathRecord, { sgid, dgid }, PathRecord.mask('sgid') | PathRecord.mask('dgid'));
        } catch (e) {
          if (e instanceof SaStatusError) return e.status;
          throw e;
        }
      },
      lidOf: (d) => sim.portInfo(d, 1).lid,
      guidOf: (d) => sim.node(d).ports[1]!.guid,
      async close() {
        await c.close();
        await sm.stop();
      },
    };
  }
  const P1 = 0xfec0_0000_0000_0001n;
  const P2 = 0xfec0_0000_0000_0002n;
  const g = (p: bigint, guid: bigint): bigint => (p << 64n) | guid;

  it('"* *": any off-subnet DGID gets a path to the first available router, HopLimit 255, the DGID as asked', async () => {
    const t = await withRoutes('# every prefix to any router\n*\t*\n');
    try {
      for (const p of [P1, P2, 0x1234n]) {
        const r = await t.ask(g(p, 0x42n));
        expect(Array.isArray(r)).toBe(true);
        const recs = r as Exclude<typeof r, number>;
        expect(recs.length).toBe(1);
        expect(recs[0]!.dlid).toBe(t.lidOf('router-0-1-0'));
        expect(recs[0]!.hopLimit).toBe(255);
        expect(recs[0]!.dgid).toBe(g(p, 0x42n));
      }
    } finally {
      await t.close();
    }
  });

  it('first match wins; a repeated prefix falls to its first available router; no match fails the query with ERR_INVALID_GID', async () => {
    // guids: router-0-2-1 port 1 for P2; P1 names a GUID no router has, then router-0-1-1
    const { generateFabric } = await import('../src/model/generators.js');
    const f = generateFabric('gen:subnets:count=3,shape=star,routers=2,leaves=2,spines=1,hosts=1');
    const rg = (d: string): string => f.nodes.find((n) => n.desc === d)!.ports[1]!.guid.toString(16);
    const t = await withRoutes(`0x${P2.toString(16)} 0x${rg('router-0-2-1')}\n${P1.toString(16)} 0xdeadbeef  # not a router here\n${P1.toString(16)} ${rg('router-0-1-1')}\n${P2.toString(16)} *\n`);
    try {
      const at = async (p: bigint): Promise<number> => {
        const r = await t.ask(g(p, 7n));
        return typeof r === 'number' ? -r : r[0]!.dlid;
      };
      expect(await at(P2)).toBe(t.lidOf('router-0-2-1'));
      expect(await at(P1)).toBe(t.lidOf('router-0-1-1'));
      expect(await at(0xfec0_0000_0000_0003n)).toBe(-0x0500);
      // a foreign SGID is refused as OpenSM does (the stop-gap knows no way back)
      expect(await t.ask(g(0xfe80_0000_0000_0000n, t.guidOf('s0-host-0 HCA-1')), g(P1, 9n))).toBe(0x0500);
    } finally {
      await t.close();
    }
  });

  it('a prefix-routes line that does not parse stops the SM before the first SMP, naming the file and line', async () => {
    const { parsePrefixRoutes } = await import('../src/sa/prefix-routes.js');
    expect(() => parsePrefixRoutes('fec0::1 0x1\n', 'p.conf')).toThrow(/p\.conf:1: prefix "fec0::1" is not a 64-bit hex number or \*/);
    expect(() => parsePrefixRoutes('\n* \n', 'p.conf')).toThrow(/p\.conf:2: expected "<prefix> <router port GUID>"/);
    expect(parsePrefixRoutes('# c\n0xfec0000000000001 *  # x\n* 0x10\n', 'p.conf')).toEqual([{ prefix: 0xfec0000000000001n, line: 2 }, { guid: 0x10n, line: 3 }]);
  });
});

describe('the CLI across subnets', () => {
  async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
    const { main } = await import('../src/cli/main.js');
    let out = '';
    let err = '';
    const code = await main(args, { stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
    return { code, out, err };
  }
  const SPEC = 'gen:subnets:count=3,shape=line,routers=2,leaves=2,spines=1,hosts=2';

  it('ibsm run --sim gen:subnets: one SUBNET UP line per subnet, each with its prefix', async () => {
    const { mkdtempSync, readFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const file = join(mkdtempSync(join(tmpdir(), 'ibsm-run-subnets-')), 'ibsm.log');
    const r = await cli(['run', '--sim', SPEC, '--once', '--log-file', file, '--control-socket', 'none']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const up = readFileSync(file, 'utf8').split('\n').filter((l) => logRe('IBSM-1001').test(l));
    expect(up).toHaveLength(3);
    for (const [i, l] of up.sort().entries()) expect(l).toMatch(new RegExp(`info  IBSM-1001 SUBNET UP prefix=fec0:0000:0000:000${i} nodes=\\d+ switches=3 endPorts=\\d+ smps=\\d+ ms=\\d+ engine=\\w+$`));
  });

  it('ibsm query path --sgid <local> --dgid <remote> --send: P1, P2, the validation, the hops both ways', async () => {
    const { generateFabric } = await import('../src/model/generators.js');
    const f = generateFabric(SPEC);
    const guidOf = (d: string): bigint => f.nodes.find((n) => n.desc === d)!.ports[1]!.guid;
    const gid = (s: number, d: string): string => `0x${(((0xfec0_0000_0000_0000n + BigInt(s)) << 64n) | guidOf(d)).toString(16)}`;
    const r = await cli(['query', 'path', '--sim', SPEC, '--sgid', gid(0, 's0-host-1 HCA-1'), '--dgid', gid(2, 's2-host-3 HCA-1'), '--send']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^P1 \(local SA, LID \d+\):\nPathRecord dump:/);
    expect(r.out).toMatch(/\nP2 \(remote SA fec0:0000:0000:0002:0200:0000:0000:0002 through the router at LID \d+\):\nPathRecord dump:/);
    expect(r.out).toMatch(/\nvalidation: ok: /);
    expect(r.out).toMatch(/\nsend P1: arrived at s2-host-3 HCA-1 port 1 \(SLID \d+ DLID \d+ HopLimit 253\), \d+ link\(s\)\n/);
    expect(r.out).toMatch(/\nsend P2: arrived at s0-host-1 HCA-1 port 1 \(SLID \d+ DLID \d+ HopLimit 253\), \d+ link\(s\)\n/);
    // the hops cross a router 0-1 and a router 1-2 each way
    const [, fwd, back] = r.out.split(/\nsend P\d: /);
    for (const part of [fwd!, back!]) {
      expect(part).toMatch(/\n {2}router-0-1-\d port \d/);
      expect(part).toMatch(/\n {2}router-1-2-\d port \d/);
    }
    const j = await cli(['query', 'path', '--sim', SPEC, '--sgid', gid(0, 's0-host-1 HCA-1'), '--dgid', gid(2, 's2-host-3 HCA-1'), '--json']);
    expect(j.code).toBe(0);
    const o = JSON.parse(j.out) as { valid: boolean; p1: { sgid: string; dgid: string }; p2: { sgid: string }; saRequests: number };
    expect(o.valid).toBe(true);
    expect(BigInt(o.p1.dgid)).toBe(BigInt(gid(2, 's2-host-3 HCA-1')));
    expect(BigInt(o.p2.sgid)).toBe(BigInt(gid(2, 's2-host-3 HCA-1')));
    expect(o.saRequests).toBeGreaterThanOrEqual(3);
    // --send without two subnets is a usage error
    expect((await cli(['query', 'path', '--sim', SPEC, '--send'])).code).toBe(2);
  });
});

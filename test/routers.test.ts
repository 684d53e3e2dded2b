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

const quiet = (): Logger => new Logger(new MemorySink(), 'info');

async function up(spec: string, extra: Partial<Parameters<typeof openSubnets>[0]> = {}): Promise<IbsmSubnets> {
  const net = await openSubnets({ sim: spec, sweepInterval: 0, log: quiet(), ...extra });
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
        // where the first router's choice and the routers' own next hops differ, validation fails and the next P1 is taken (step c)
        if (spec.includes('count=3,shape=line,routers=2')) expect(retried).toBeGreaterThan(0);
      } finally {
        await net.stop();
      }
    });
  }
});

import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { getEngine, verifyRoutes, type RoutingResult } from '../src/routing/index.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';

function fabric(spec: string, lmc = 0): Fabric {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc });
  return f;
}
const byDesc = (f: Fabric, d: string): number => f.nodes.findIndex((n) => n.desc === d);
const hostLid = (f: Fabric, host: number): number => f.nodes.filter((n) => !isSwitch(n))[host]!.ports[1]!.lid!;
/** Port of switch `a` that leads to node `b`. */
const portTo = (f: Fabric, a: number, b: number): number => f.nodes[a]!.ports.findIndex((p) => p?.peer?.node === b);
const leafOf = (f: Fabric, host: number): number => f.nodes.filter((n) => !isSwitch(n))[host]!.ports[1]!.peer!.node;

function routed(spec: string): { f: Fabric; r: RoutingResult } {
  const f = fabric(spec);
  return { f, r: getEngine('ftree').route(f, { lmc: 0 }) };
}

describe('verifier detects planted faults', () => {
  it('clean tables pass', () => {
    const { f, r } = routed('gen:fattree2:radix=4');
    const v = verifyRoutes(f, r);
    expect(v.ok).toBe(true);
    expect(v.failures).toEqual([]);
  });

  it('a black hole (no LFT entry) on one leaf', () => {
    const { f, r } = routed('gen:fattree2:radix=4');
    const dlid = hostLid(f, 0);
    const other = f.nodes.findIndex((n, i) => isSwitch(n) && n.desc.startsWith('sw-l1-') && i !== leafOf(f, 0));
    r.lfts.get(other)![dlid] = 255;
    const v = verifyRoutes(f, r);
    expect(v.ok).toBe(false);
    // Only that leaf's own hosts (2 in radix 4) lose the destination; switches routing through it are none.
    expect(v.unreachablePairs).toBe(2);
    expect(v.unreachableFromSwitches).toBe(1);
    expect(v.failures).toHaveLength(1);
    expect(v.failures[0]).toMatchObject({ kind: 'no-route', dlid, sources: 2, switches: 1 });
    expect(v.failures[0]!.detail).toContain(`LID ${dlid}`);
  });

  it('a loop between a leaf and a spine', () => {
    const { f, r } = routed('gen:fattree2:radix=4');
    const dlid = hostLid(f, 0);
    const leaf = f.nodes.findIndex((n, i) => isSwitch(n) && n.desc.startsWith('sw-l1-') && i !== leafOf(f, 0));
    const spine = byDesc(f, 'sw-l2-0');
    r.lfts.get(leaf)![dlid] = portTo(f, leaf, spine);
    r.lfts.get(spine)![dlid] = portTo(f, spine, leaf);
    const v = verifyRoutes(f, r);
    expect(v.ok).toBe(false);
    expect(v.loopLids).toBe(1);
    expect(v.loopEntries).toBeGreaterThanOrEqual(2);
    expect(v.failures.some((x) => x.kind === 'loop' && x.dlid === dlid)).toBe(true);
  });

  it('a route to a port without a link, to a port beyond the switch, to the wrong host, no table', () => {
    const f = fabric('gen:fattree2:leaves=2,spines=2,hosts=1,radix=8');
    const r = getEngine('minhop').route(f, { lmc: 0 });
    const leaf0 = leafOf(f, 0);
    const leaf1 = leafOf(f, 1);
    const unused = f.nodes[leaf1]!.ports.findIndex((p, i) => i > 0 && !p?.peer);
    expect(unused).toBeGreaterThan(0);
    r.lfts.get(leaf1)![hostLid(f, 0)] = unused;
    r.lfts.get(leaf0)![hostLid(f, 1)] = 200;
    const v = verifyRoutes(f, r);
    const kinds = new Set(v.failures.map((x) => x.kind));
    expect(kinds.has('port-down')).toBe(true);
    expect(kinds.has('bad-port')).toBe(true);
    expect(v.ok).toBe(false);
    const r2 = getEngine('minhop').route(f, { lmc: 0 });
    // Host 0's LID delivered to its leaf's own port 0 (wrong destination); a spine without a table.
    r2.lfts.get(leaf0)![hostLid(f, 0)] = 0;
    r2.lfts.delete(byDesc(f, 'sw-l2-1'));
    const v2 = verifyRoutes(f, r2);
    const k2 = new Set(v2.failures.map((x) => x.kind));
    expect(k2.has('wrong-destination')).toBe(true);
    expect(k2.has('no-lft')).toBe(true);
  });

  it('a planted credit loop: every switch of a ring forwards clockwise', () => {
    const f = fabric('gen:torus:6,hosts=1');
    const r = getEngine('updn').route(f, { lmc: 0 });
    expect(verifyRoutes(f, r).deadlockFree).toBe(true);
    const sw = Array.from({ length: 6 }, (_, i) => byDesc(f, `sw-${i}`));
    for (let i = 0; i < 6; i++) {
      const lft = r.lfts.get(sw[i]!)!;
      const cw = portTo(f, sw[i]!, sw[(i + 1) % 6]!);
      for (let lid = 1; lid < lft.length; lid++) if (lft[lid] !== 0 && f.nodes[f.nodes[sw[i]!]!.ports[lft[lid]!]!.peer!.node]!.type === 2) lft[lid] = cw;
    }
    const v = verifyRoutes(f, r, { requireDeadlockFree: true });
    expect(v.unreachablePairs).toBe(0);
    expect(v.loopEntries).toBe(0);
    expect(v.deadlockFree).toBe(false);
    expect(v.ok).toBe(false);
    expect(v.cdg[0]!.cyclicComponents).toBe(1);
    expect(v.cdg[0]!.channelsInCycles).toBe(6);
    expect(v.cdg[0]!.exampleCycle).toHaveLength(6);
    // The result claims deadlock freedom, so the cycle fails it by default; the bare tables
    // (no claim) are "reachable, not deadlock-free".
    expect(verifyRoutes(f, r).ok).toBe(false);
    expect(verifyRoutes(f, r.lfts).ok).toBe(true);
  });

  it('counts routes per link exactly on a tiny tree', () => {
    const { f, r } = routed('gen:fattree2:radix=4');
    // 4 leaves x 2 hosts, 2 spines: each leaf uplink carries 2 sources x 6 remote hosts / 2 uplinks.
    const v = verifyRoutes(f, r);
    expect(v.linkLoad.links).toBe(16);
    expect(v.linkLoad.max).toBe(6);
    expect(v.linkLoad.min).toBe(6);
    expect(v.hops.max).toBe(4);
  });
});

describe('routes longer than the shortest paths', () => {
  // The verifier resolves a LID in one pass when its routes follow the switches by distance to
  // the destination (shortest paths); a detour breaks that order, and the figures must still be
  // those of the routes, hop by hop (the witness follows every source's route through the LFTs).
  it('a detour through another leaf: hops, stretch and routes per link as the witness', () => {
    const { f, r } = routed('gen:fattree2:radix=4');
    const dlid = hostLid(f, 0);
    const T = leafOf(f, 0);
    const leaves = f.nodes.map((n, i) => (isSwitch(n) && n.desc.startsWith('sw-l1-') && i !== T ? i : -1)).filter((i) => i >= 0);
    const [s0, s1] = [byDesc(f, 'sw-l2-0'), byDesc(f, 'sw-l2-1')];
    const Y = leaves[0]!;
    // Every leaf but Y and T up to s0; s0 down to Y; Y up to s1; s1 down to T.
    for (const x of leaves.slice(1)) r.lfts.get(x)![dlid] = portTo(f, x, s0);
    r.lfts.get(s0)![dlid] = portTo(f, s0, Y);
    r.lfts.get(Y)![dlid] = portTo(f, Y, s1);
    r.lfts.get(s1)![dlid] = portTo(f, s1, T);
    const v = verifyRoutes(f, r);
    expect(v.ok).toBe(true);
    // Witness: every CA source's route to every CA LID, followed hop by hop.
    const hosts = f.nodes.map((n, i) => (isSwitch(n) ? -1 : i)).filter((i) => i >= 0);
    let max = 0;
    let sum = 0;
    let pairs = 0;
    let above = 0;
    const perLink = new Map<string, number>();
    for (const h of hosts) {
      const d = f.nodes[h]!.ports[1]!.lid!;
      for (const s of hosts) {
        if (s === h) continue;
        let x = f.nodes[s]!.ports[1]!.peer!.node;
        let hops = 1;
        while (x !== f.nodes[h]!.ports[1]!.peer!.node) {
          const p = r.lfts.get(x)![d]!;
          const key = `${x}:${p}`;
          perLink.set(key, (perLink.get(key) ?? 0) + 1);
          x = f.nodes[x]!.ports[p]!.peer!.node;
          hops++;
        }
        hops++;
        max = Math.max(max, hops);
        sum += hops;
        pairs++;
        const shortest = f.nodes[s]!.ports[1]!.peer!.node === f.nodes[h]!.ports[1]!.peer!.node ? 2 : 4;
        if (hops > shortest) above++;
      }
    }
    expect(max).toBe(6);
    expect(v.hops.max).toBe(max);
    expect(v.hops.mean).toBeCloseTo(sum / pairs, 9);
    expect(v.stretch!.pairsAboveShortest).toBe(above);
    expect(above).toBeGreaterThan(0);
    expect(v.linkLoad.max).toBe(Math.max(...perLink.values()));
    expect(v.linkLoad.mean).toBeCloseTo([...perLink.values()].reduce((a, b) => a + b, 0) / v.linkLoad.links, 9);
  });
});

describe('verifier scale', () => {
  it('verifies a 3-level fat tree with more than 10,000 end ports', () => {
    const f = fabric('gen:fattree3:radix=36');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const v = verifyRoutes(f, r);
    expect(v.endPorts).toBe(11664);
    expect(v.ok).toBe(true);
    expect(v.deadlockFree).toBe(true);
    expect(v.hops.max).toBe(6);
    expect(v.linkLoad.max).toBeLessThanOrEqual(Math.ceil(v.linkLoad.mean * 1.05));
  }, 60_000);
});

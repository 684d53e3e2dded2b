/** OpenSM's guid_routing_order_file in minhop, updn and dfsssp (routing/route-order.ts): the
 * listed destinations are routed first, in the file's order, so they get the least loaded ports;
 * the others after them. minhop is checked against a reference written from the rule alone (per
 * destination end port in that order: every switch gives its LIDs the least used minimum-hop
 * port, ties to the lowest port); on a fat tree, the listed remote hosts take a leaf's uplinks in
 * turn, the first one the lowest for every engine; no-scatter keeps the listed destinations off
 * the seed's random tie-breaks; and the file's syntax is OpenSM's (a GUID, then anything). */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { routeMinhop } from '../src/routing/minhop.js';
import { getEngine, engineNames, verifyRoutes, type RoutingOptions, type RoutingResult } from '../src/routing/index.js';
import { indexFabric, type FabricIndex } from '../src/routing/graph.js';
import { parseRouteOrder } from '../src/routing/route-order.js';
import { GuidFileError } from '../src/model/guid-file.js';
import type { Fabric } from '../src/model/fabric.js';

function fabricOf(spec: string, lmc = 0): Fabric {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc });
  return f;
}

/** minhop's rule, destination end port by destination end port: the listed ones in `order`,
 *  then the others by delivering switch (switch port 0 first, then the CAs in end order). */
function reference(f: Fabric, order: readonly bigint[]): Map<number, Uint8Array> {
  const ix = indexFabric(f);
  const lft = Array.from({ length: ix.nSw }, () => new Uint8Array(ix.maxLid + 1).fill(255));
  for (const ep of ix.ends) if (ep.isSwitch && ep.sw >= 0) lft[ep.sw]![ep.lid] = 0;
  const count = Array.from({ length: ix.nSw }, () => new Array<number>(ix.maxPorts + 1).fill(0));
  const seq: number[] = [];
  for (const g of order) {
    const i = ix.ends.findIndex((e) => e.guid === g && e.sw >= 0);
    if (i >= 0 && !seq.includes(i)) seq.push(i);
  }
  for (let T = 0; T < ix.nSw; T++) {
    for (const i of ix.ends.map((_, i) => i).filter((i) => ix.ends[i]!.sw === T && ix.ends[i]!.isSwitch)) if (!seq.includes(i)) seq.push(i);
    for (const i of ix.ends.map((_, i) => i).filter((i) => ix.ends[i]!.sw === T && !ix.ends[i]!.isSwitch)) if (!seq.includes(i)) seq.push(i);
  }
  for (const i of seq) {
    const ep = ix.ends[i]!;
    const T = ep.sw;
    const dist = bfs(ix, T);
    for (let l = ep.lid; l < ep.lid + (1 << ep.lmc); l++) {
      lft[T]![l] = ep.swPort;
      for (let s = 0; s < ix.nSw; s++) {
        if (s === T || dist[s]! <= 0) continue;
        const ports: number[] = [];
        for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) if (dist[ix.adjSw[e]!] === dist[s]! - 1) ports.push(ix.adjPort[e]!);
        let best = ports[0]!;
        for (const p of ports) if (count[s]![p]! < count[s]![best]!) best = p;
        lft[s]![l] = best;
        if (!ep.isSwitch) count[s]![best]!++;
      }
    }
  }
  return new Map(lft.map((t, s) => [ix.swNode[s]!, t]));
}

function bfs(ix: FabricIndex, T: number): number[] {
  const dist = new Array<number>(ix.nSw).fill(-1);
  dist[T] = 0;
  const q = [T];
  for (let k = 0; k < q.length; k++) {
    const s = q[k]!;
    for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) {
      if (dist[ix.adjSw[e]!]! < 0) {
        dist[ix.adjSw[e]!] = dist[s]! + 1;
        q.push(ix.adjSw[e]!);
      }
    }
  }
  return dist;
}

/** Hosts (CA end ports) of a fabric with their leaf (switch index) and GUID. */
function hosts(f: Fabric): Array<{ guid: bigint; lid: number; leaf: number }> {
  const ix = indexFabric(f);
  return ix.ends.filter((e) => !e.isSwitch).map((e) => ({ guid: e.guid, lid: e.lid, leaf: e.sw }));
}

/** A leaf's uplinks (ports to switches), in port order. */
function uplinks(f: Fabric, leaf: number): number[] {
  const ix = indexFabric(f);
  const out: number[] = [];
  for (let e = ix.adjStart[leaf]!; e < ix.adjStart[leaf + 1]!; e++) out.push(ix.adjPort[e]!);
  return out.sort((a, b) => a - b);
}

function tableOf(f: Fabric, r: RoutingResult, leaf: number): Uint8Array {
  return r.lfts.get(indexFabric(f).swNode[leaf]!)!;
}

const FT = 'gen:fattree2:leaves=4,spines=4,hosts=4';

describe('guid routing order: the file', () => {
  it("reads a GUID first on each line, anything after it ignored, '#' comments and blank lines", () => {
    const text = '# order\n0x0002c90000000010 node-a\n\n  2c90000000002  # node-b\n0x0002c90000000010\n';
    expect(parseRouteOrder(text, 'order.txt')).toEqual([0x0002c90000000010n, 0x2c90000000002n, 0x0002c90000000010n]);
  });
  it('names the file and line of a line that does not start with a GUID', () => {
    expect(() => parseRouteOrder('0x10\nnode-b 0x11\n', '/etc/opensm/order')).toThrow(GuidFileError);
    expect(() => parseRouteOrder('0x10\nnode-b 0x11\n', '/etc/opensm/order')).toThrow(/\/etc\/opensm\/order:2: "node-b" is not a GUID/);
  });
});

describe('guid routing order: minhop against the rule', () => {
  const cases: Array<[string, string, number]> = [
    ['fat tree', FT, 0],
    ['oversubscribed tree, LMC 1', 'gen:fattree2:leaves=6,spines=3,hosts=9', 1],
    ['random graph', 'gen:random:switches=30,degree=4,hosts=3,seed=5', 0],
    ['torus', 'gen:torus:4x4x2,hosts=2', 0],
  ];
  for (const [name, spec, lmc] of cases) {
    it(`${name}: the listed ports first (reversed, a switch's own port among them, an unknown GUID and a repeat skipped), then the others`, () => {
      const f = fabricOf(spec, lmc);
      const ix = indexFabric(f);
      const hs = hosts(f);
      const order = [...hs.map((h) => h.guid).reverse().filter((_, i) => i % 3 !== 1), 0xdeadn, hs.at(-1)!.guid, ix.ends.find((e) => e.isSwitch)!.guid];
      const got = routeMinhop(f, { lmc, routeOrder: order });
      const want = reference(f, order);
      for (const [node, t] of want) expect(Buffer.from(got.lfts.get(node)!).equals(Buffer.from(t)), `switch ${f.nodes[node]!.desc}`).toBe(true);
      expect(got.notes.join('\n')).toMatch(/guid routing order: \d+ destination port\(s\) routed first.*2 GUID\(s\) skipped/);
      // and the order matters here: the default order gives other tables
      const dflt = routeMinhop(f, { lmc });
      expect([...dflt.lfts].some(([node, t]) => !Buffer.from(t).equals(Buffer.from(got.lfts.get(node)!)))).toBe(true);
    });
  }
});

describe('guid routing order: the listed destinations get the least loaded ports', () => {
  for (const engine of ['minhop', 'updn', 'dfsssp']) {
    it(`${engine}: on a fat tree's leaf, the listed remote hosts take the uplinks in turn, the first the lowest; reversing the file reverses the turn`, () => {
      const f = fabricOf(FT);
      const hs = hosts(f);
      const leaf = hs[0]!.leaf;
      const up = uplinks(f, leaf);
      const remote = hs.filter((h) => h.leaf !== leaf);
      for (const listed of [remote, [...remote].reverse()]) {
        const r = getEngine(engine).route(f, { lmc: 0, routeOrder: listed.map((h) => h.guid) });
        expect(verifyRoutes(f, r).ok, `${engine} routes verify`).toBe(true);
        const t = tableOf(f, r, leaf);
        const ports = listed.map((h) => t[h.lid]!);
        expect(ports[0], 'the first listed destination: the lowest uplink').toBe(up[0]);
        // minhop and updn balance by counts per port: strictly in turn. dfsssp by link weights
        // along whole paths: each uplink once per turn.
        if (engine !== 'dfsssp') expect(ports).toEqual(listed.map((_, i) => up[i % up.length]!));
        for (let k = 0; k + up.length <= ports.length; k += up.length) expect(new Set(ports.slice(k, k + up.length)).size).toBe(up.length);
      }
    });
  }

  it('no-scatter: with a seed, the listed destinations are routed as without one; scattered, they are not', () => {
    const f = fabricOf('gen:fattree2:leaves=6,spines=4,hosts=6');
    const hs = hosts(f);
    const listed = hs.filter((_, i) => i % 2 === 0).map((h) => h.guid);
    const lids = hs.filter((_, i) => i % 2 === 0).map((h) => h.lid);
    const entries = (r: RoutingResult): string => [...r.lfts.values()].map((t) => lids.map((l) => t[l]).join(',')).join(';');
    for (const engine of ['minhop', 'updn', 'dfsssp']) {
      const route = (o: Partial<RoutingOptions>): RoutingResult => getEngine(engine).route(f, { lmc: 0, routeOrder: listed, ...o });
      const plain = entries(route({}));
      expect(entries(route({ seed: 11, routeOrderNoScatter: true })), engine).toBe(plain);
      expect([1, 2, 3].some((seed) => entries(route({ seed })) !== plain), `${engine}: the seed moves the listed ones when they scatter`).toBe(true);
    }
  });
});

describe('guid routing order: which engines take it', () => {
  it('minhop, updn and dfsssp; ftree, torus and nue route in their own order', () => {
    expect(engineNames().filter((n) => getEngine(n).takesRouteOrder)).toEqual(['minhop', 'updn', 'dfsssp']);
    // An engine that does not take it routes as without it.
    const f = fabricOf(FT);
    const order = hosts(f).map((h) => h.guid).reverse();
    for (const engine of ['ftree', 'nue']) {
      const a = getEngine(engine).route(f, { lmc: 0 });
      const b = getEngine(engine).route(f, { lmc: 0, routeOrder: order });
      for (const [node, t] of a.lfts) expect(Buffer.from(b.lfts.get(node)!).equals(Buffer.from(t)), engine).toBe(true);
    }
  });
});

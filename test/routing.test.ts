import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { getEngine, routeWithFallback, RoutingError, RoutingNotApplicable, verifyRoutes, type RoutingResult } from '../src/routing/index.js';
import { indexFabric } from '../src/routing/graph.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';

function fabric(spec: string, lmc = 0): Fabric {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc });
  return f;
}

const FAT = ['gen:fattree2:radix=8', 'gen:fattree2:leaves=4,spines=2,hosts=3,links=2', 'gen:fattree3:radix=8', 'gen:fattree3:pods=3,leaves=3,spines=2,cores=6,hosts=5'];
const OTHER = ['gen:torus:4x4x3,hosts=1', 'gen:mesh:4x4,hosts=2', 'gen:random:switches=24,degree=4,hosts=2,seed=3', 'gen:dragonfly:a=4,p=2,h=2'];

/** Next-hop switch node for `lid` from switch node `sw`, or -1 for a CA/none. */
function nextHop(f: Fabric, r: RoutingResult, sw: number, lid: number): number {
  const port = r.lfts.get(sw)![lid]!;
  const peer = f.nodes[sw]!.ports[port]?.peer;
  return peer && isSwitch(f.nodes[peer.node]!) ? peer.node : -1;
}

describe('every engine routes every LID without loops', () => {
  for (const engine of ['minhop', 'updn', 'ftree', 'dfsssp']) {
    for (const spec of [...FAT, ...(engine === 'ftree' ? [] : OTHER)]) {
      for (const lmc of [0, 1]) {
        it(`${engine} on ${spec} lmc ${lmc}`, () => {
          const f = fabric(spec, lmc);
          const r = getEngine(engine).route(f, { lmc });
          const v = verifyRoutes(f, r);
          expect(v.failures).toEqual([]);
          expect(v.unreachablePairs).toBe(0);
          expect(v.unreachableFromSwitches).toBe(0);
          expect(v.loopEntries).toBe(0);
          expect(v.ok).toBe(true);
          // Every CA LID of every LMC range is a destination.
          const caLids = f.nodes.filter((n) => !isSwitch(n)).reduce((a, n) => a + n.ports.filter((p) => p?.peer).length * (1 << lmc), 0);
          expect(v.lids).toBe(caLids + f.nodes.filter(isSwitch).length);
          // minhop, ftree and dfsssp route shortest paths.
          if (engine !== 'updn') expect(v.stretch!.max).toBe(1);
          if (engine !== 'minhop') expect(v.deadlockFree).toBe(true);
        });
      }
    }
  }
});

describe('deadlock freedom', () => {
  it('minhop leaves credit loops on a torus that updn and dfsssp avoid', () => {
    // Odd rings: shortest paths of length 2 go one way round, so one VL cannot be loop-free.
    const f = fabric('gen:torus:5x5,hosts=1');
    expect(verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 })).deadlockFree).toBe(false);
    expect(verifyRoutes(f, getEngine('updn').route(f, { lmc: 0 })).deadlockFree).toBe(true);
    const d = getEngine('dfsssp').route(f, { lmc: 0 });
    const v = verifyRoutes(f, d);
    expect(v.deadlockFree).toBe(true);
    expect(d.vlsUsed).toBeGreaterThan(1);
    expect(v.vlsUsed).toBe(d.vlsUsed);
    // The same tables with every route on SL 0 do have cycles: the layers are what breaks them.
    expect(verifyRoutes(f, d.lfts, { sl: () => 0 }).deadlockFree).toBe(false);
    expect(d.sl2vl!.slice(0, d.vlsUsed!)).toEqual(Array.from({ length: d.vlsUsed! }, (_, i) => i));
  });

  it('dfsssp fails clearly when it needs more VLs than allowed', () => {
    const f = fabric('gen:torus:5x5,hosts=1');
    expect(() => getEngine('dfsssp').route(f, { lmc: 0, maxVls: 1 })).toThrow(/more than 1 virtual layers/);
    try {
      getEngine('dfsssp').route(f, { lmc: 0, maxVls: 1 });
    } catch (e) {
      expect(e).toBeInstanceOf(RoutingNotApplicable);
    }
  });
});

describe('balance', () => {
  it('minhop spreads a 2-level fat tree evenly (every link carries the same number of routes)', () => {
    const f = fabric('gen:fattree2:radix=8');
    const v = verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 }));
    // 8 leaves x 4 hosts, 4 spines: each leaf uplink carries 4 sources x 28 remote hosts / 4 uplinks.
    expect(v.linkLoad.max).toBe(28);
    expect(v.linkLoad.min).toBe(28);
  });

  it('minhop balances the LIDs over each leaf switch up ports of a 3-level fat tree', () => {
    const f = fabric('gen:fattree3:radix=8');
    const r = getEngine('minhop').route(f, { lmc: 0 });
    const ix = indexFabric(f);
    for (let s = 0; s < ix.nSw; s++) {
      if (ix.caCount[s] === 0) continue;
      const lft = r.lfts.get(ix.swNode[s]!)!;
      const counts = new Map<number, number>();
      for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) counts.set(ix.adjPort[e]!, 0);
      const own = new Set(f.nodes[ix.swNode[s]!]!.ports.map((p) => p?.peer?.node));
      f.nodes.forEach((n, ni) => {
        if (isSwitch(n) || own.has(ni)) return;
        const p = lft[n.ports[1]!.lid!]!;
        counts.set(p, counts.get(p)! + 1);
      });
      const vals = [...counts.values()];
      expect(Math.max(...vals) - Math.min(...vals)).toBeLessThanOrEqual(1);
    }
  });

  /** The leaves of a 2-level tree with their hosts' LIDs, and the spine count. */
  const leavesOf = (f: Fabric): { leaves: Array<{ i: number; hostLids: number[] }>; spines: number } => {
    const leaves = f.nodes
      .map((n, i) => ({ n, i }))
      .filter(({ n }) => isSwitch(n) && n.ports.some((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!)))
      .map(({ n, i }) => ({ i, hostLids: n.ports.filter((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!)).map((p) => f.nodes[p!.peer!.node]!.ports[p!.peer!.port]!.lid!) }));
    return { leaves, spines: f.nodes.filter((n) => isSwitch(n)).length - leaves.length };
  };

  it('ftree, destination-mod-k on a tree whose leaves have as many hosts as up-links: the routes to one host come down one spine, the hosts of a leaf each by another (#35)', () => {
    const f = fabric('gen:fattree2:radix=8');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const { leaves, spines } = leavesOf(f);
    for (const { i: li, hostLids } of leaves) {
      const down = new Set<number>();
      for (const lid of hostLids) {
        const via = new Set(leaves.filter(({ i }) => i !== li).map(({ i }) => nextHop(f, r, i, lid)));
        expect(via.size).toBe(1);
        down.add([...via][0]!);
      }
      expect(down.size).toBe(spines);
    }
    const v = verifyRoutes(f, r);
    expect(v.linkLoad.max).toBe(v.linkLoad.min);
  });

  it('ftree, elsewhere (3 up-links, 4 hosts a leaf): the routes to one host arrive over every spine', () => {
    const f = fabric('gen:fattree2:leaves=7,spines=3,hosts=4');
    const r = getEngine('ftree').route(f, { lmc: 0 });
    const { leaves, spines } = leavesOf(f);
    for (const { i: li, hostLids } of leaves) {
      for (const lid of hostLids) {
        const via = new Set(leaves.filter(({ i }) => i !== li).map(({ i }) => nextHop(f, r, i, lid)));
        expect(via.size).toBe(spines);
      }
    }
  });

  it('ftree is near optimal on a 3-level fat tree, and beats minhop', () => {
    const f = fabric('gen:fattree3:radix=8');
    const ft = verifyRoutes(f, getEngine('ftree').route(f, { lmc: 0 }));
    const mh = verifyRoutes(f, getEngine('minhop').route(f, { lmc: 0 }));
    expect(ft.linkLoad.max).toBeLessThanOrEqual(Math.ceil(ft.linkLoad.mean * 1.1));
    expect(ft.linkLoad.max).toBeLessThan(mh.linkLoad.max);
  });

  it('LMC: the LIDs of one port leave a leaf through different spines (minhop and ftree)', () => {
    for (const engine of ['minhop', 'ftree']) {
      const f = fabric('gen:fattree2:radix=8', 2);
      const r = getEngine(engine).route(f, { lmc: 2 });
      const ix = indexFabric(f);
      const leaf = ix.swNode[ix.caCount.findIndex((c) => c > 0)]!;
      const own = new Set(f.nodes[leaf]!.ports.map((p) => p?.peer?.node));
      f.nodes.forEach((n, ni) => {
        if (isSwitch(n) || own.has(ni)) return;
        const base = n.ports[1]!.lid!;
        const hops = new Set([0, 1, 2, 3].map((k) => nextHop(f, r, leaf, base + k)));
        expect(hops.size, `${engine}: LIDs ${base}..${base + 3}`).toBe(4);
      });
    }
  });
});

describe('updn roots', () => {
  it('detects the top switches of a fat tree as roots', () => {
    const f = fabric('gen:fattree3:radix=8');
    const r = getEngine('updn').route(f, { lmc: 0 });
    const cores = f.nodes.filter((n) => isSwitch(n) && n.desc.startsWith('sw-l3-')).map((n) => n.guid);
    expect(cores.length).toBe(16);
    expect(new Set(r.roots)).toEqual(new Set(cores));
  });

  it('accepts a CA port GUID as a root (its switch), rejects unknown GUIDs', () => {
    const f = fabric('gen:torus:3x3,hosts=1');
    const ca = f.nodes.find((n) => !isSwitch(n))!;
    const sw = f.nodes[ca.ports[1]!.peer!.node]!;
    const r = getEngine('updn').route(f, { lmc: 0, roots: [ca.ports[1]!.guid] });
    expect(r.roots).toEqual([sw.guid]);
    expect(verifyRoutes(f, r).ok).toBe(true);
    expect(() => getEngine('updn').route(f, { lmc: 0, roots: [0xdeadn] })).toThrow(/root GUID 0x000000000000dead/);
  });
});

describe('ftree applicability', () => {
  it('refuses non-trees with a reason; routes a tree with a link missing (and says it is irregular)', () => {
    expect(() => getEngine('ftree').route(fabric('gen:torus:4x4,hosts=1'), { lmc: 0 })).toThrow(RoutingNotApplicable);
    const f = fabric('gen:fattree2:radix=8');
    // Cut one leaf-spine link: that leaf now has fewer up-going port groups than the others.
    const leaf = f.nodes.find((n) => isSwitch(n) && n.ports.some((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!)))!;
    const up = leaf.ports.find((p) => p?.peer && isSwitch(f.nodes[p.peer.node]!))!;
    delete f.nodes[up.peer!.node]!.ports[up.peer!.port]!.peer;
    delete up.peer;
    const r = getEngine('ftree').route(f, { lmc: 0 });
    expect(r.notes.join('\n')).toMatch(/irregular/);
    expect(verifyRoutes(f, r, { requireDeadlockFree: true }).ok).toBe(true);
  });
});

describe('registry', () => {
  it('falls back in order and says why', () => {
    const f = fabric('gen:torus:4x4,hosts=1');
    const r = routeWithFallback(f, ['ftree', 'updn', 'minhop'], { lmc: 0 });
    expect(r.engine).toBe('updn');
    expect(r.skipped.map((s) => s.engine)).toEqual(['ftree']);
    expect(r.skipped[0]!.reason).toMatch(/level/);
    expect(r.result.notes[0]).toMatch(/^ftree skipped/);
  });
  it('unknown engine and no applicable engine are errors', () => {
    const f = fabric('gen:torus:4x4,hosts=1');
    expect(() => routeWithFallback(f, ['nope'], { lmc: 0 })).toThrow(RoutingError);
    expect(() => routeWithFallback(f, ['ftree'], { lmc: 0 })).toThrow(RoutingNotApplicable);
  });
});

describe('determinism', () => {
  const same = (a: RoutingResult, b: RoutingResult): boolean => [...a.lfts].every(([k, t]) => Buffer.from(t).equals(Buffer.from(b.lfts.get(k)!)));
  for (const engine of ['minhop', 'updn', 'ftree', 'dfsssp']) {
    it(`${engine}: same input and seed, same tables`, () => {
      const spec = engine === 'ftree' ? 'gen:fattree3:radix=8' : 'gen:random:switches=20,degree=4,hosts=2,seed=5';
      const a = getEngine(engine).route(fabric(spec), { lmc: 0, seed: 7 });
      const b = getEngine(engine).route(fabric(spec), { lmc: 0, seed: 7 });
      expect(same(a, b)).toBe(true);
    });
  }
  it('a different seed changes tie-breaks, still verified', () => {
    const spec = 'gen:random:switches=20,degree=4,hosts=2,seed=5';
    const a = getEngine('minhop').route(fabric(spec), { lmc: 0, seed: 1 });
    const f = fabric(spec);
    const b = getEngine('minhop').route(f, { lmc: 0, seed: 2 });
    expect(same(a, b)).toBe(false);
    expect(verifyRoutes(f, b).ok).toBe(true);
  });
});

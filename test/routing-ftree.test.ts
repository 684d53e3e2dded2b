// ftree balance against an independent lower bound (test/helpers/fat-tree-bound.ts), LMC paths on
// disjoint up links, and degraded fat trees (links and switches missing).
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { getEngine, routeWithFallback, DEFAULT_FALLBACK, verifyRoutes } from '../src/routing/index.js';
import { fatTreeLinkBound } from './helpers/fat-tree-bound.js';

function fabric(spec: string, lmc = 0, edit?: (f: Fabric) => void): Fabric {
  const f = loadFabricSpec(spec);
  edit?.(f);
  assignLids(f, { lmc });
  return f;
}

const FT3_LARGE = 'gen:fattree3:pods=8,leaves=16,spines=8,cores=32,hosts=12';
const FAT_TREES = [
  'gen:fattree2:radix=8',
  'gen:fattree2:leaves=4,spines=2,hosts=3,links=2',
  'gen:fattree2:leaves=6,spines=3,hosts=9', // 3:1 oversubscribed
  'gen:fattree3:radix=8',
  'gen:fattree3:radix=12',
  'gen:fattree3:pods=3,leaves=3,spines=2,cores=6,hosts=5',
  'gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=6', // oversubscribed at the spines
  FT3_LARGE,
];

function unlink(f: Fabric, desc: string, nth = 0): void {
  const i = f.nodes.findIndex((n) => n.desc === desc);
  const ports = f.nodes[i]!.ports.filter((p) => p?.peer && isSwitch(f.nodes[p.peer.node]!));
  const p = ports[nth]!;
  delete f.nodes[p.peer!.node]!.ports[p.peer!.port]!.peer;
  delete p.peer;
}

/** Take a switch out of the fabric (its links with it), as a sweep that no longer finds it would. */
function removeSwitch(f: Fabric, desc: string): void {
  const i = f.nodes.findIndex((n) => n.desc === desc);
  for (const p of f.nodes[i]!.ports) if (p?.peer) delete f.nodes[p.peer.node]!.ports[p.peer.port]!.peer;
  f.nodes.splice(i, 1);
  for (const n of f.nodes) for (const p of n.ports) if (p?.peer && p.peer.node > i) p.peer.node--;
}

describe('ftree: busiest link within 1.1x of the lower bound', () => {
  for (const spec of FAT_TREES) {
    for (const lmc of spec === FT3_LARGE ? [0] : [0, 1]) {
      it(`${spec} lmc ${lmc}`, () => {
        const f = fabric(spec, lmc);
        const r = getEngine('ftree').route(f, { lmc });
        const v = verifyRoutes(f, r, { requireDeadlockFree: true });
        expect(v.ok).toBe(true);
        expect(v.stretch!.max).toBe(1);
        const bound = fatTreeLinkBound(f, lmc);
        expect(v.linkLoad.max).toBeLessThanOrEqual(1.1 * bound);
      });
    }
  }
  it('ft3-large: at most 2,515 routes on a leaf link (optimum 2,286) and the spine-core bound exactly', () => {
    const f = fabric(FT3_LARGE);
    const r = getEngine('ftree').route(f, { lmc: 0 });
    // Per-link loads by level, walked here from the tables (not by the verifier).
    const level = (n: number): number => Number(/sw-l(\d)/.exec(f.nodes[n]!.desc)![1]);
    const hostsAt = new Map<number, number>();
    const dests: Array<{ lid: number; sw: number }> = [];
    f.nodes.forEach((n) => {
      if (isSwitch(n)) return;
      const p = n.ports[1]!;
      hostsAt.set(p.peer!.node, (hostsAt.get(p.peer!.node) ?? 0) + 1);
      dests.push({ lid: p.lid!, sw: p.peer!.node });
    });
    const load = new Map<string, number>();
    for (const d of dests) {
      for (const [s, h] of hostsAt) {
        if (s === d.sw) continue;
        for (let cur = s; cur !== d.sw; ) {
          const port = r.lfts.get(cur)![d.lid]!;
          const key = `${level(cur)}>${cur}:${port}`;
          load.set(key, (load.get(key) ?? 0) + h);
          cur = f.nodes[cur]!.ports[port]!.peer!.node;
        }
      }
    }
    const maxAt = (prefix: string[]): number => Math.max(...[...load].filter(([k]) => prefix.some((p) => k.startsWith(p))).map(([, v]) => v));
    expect(maxAt(['1>'])).toBeLessThanOrEqual(2515);
    // Down into a leaf: from level 2 switches to level 1 ones.
    const down = [...load].filter(([k]) => k.startsWith('2>') && level(f.nodes[Number(k.split('>')[1]!.split(':')[0])]!.ports[Number(k.split(':')[1])]!.peer!.node) === 1);
    expect(Math.max(...down.map(([, v]) => v))).toBeLessThanOrEqual(2515);
    // Every pod sends 192 x 1,344 routes over 32 spine-core links: 8,064 each at best.
    expect(maxAt(['3>'])).toBe(8064);
  });
  it('LMC 2: the LIDs of one port leave every leaf over four different up links (3-level tree)', () => {
    const f = fabric('gen:fattree3:radix=8', 2);
    const r = getEngine('ftree').route(f, { lmc: 2 });
    const leaves = f.nodes.map((n, i) => i).filter((i) => f.nodes[i]!.desc.startsWith('sw-l1-'));
    for (const leaf of leaves) {
      const own = new Set(f.nodes[leaf]!.ports.map((p) => p?.peer?.node));
      f.nodes.forEach((n, ni) => {
        if (isSwitch(n) || own.has(ni)) return;
        const base = n.ports[1]!.lid!;
        const ports = new Set([0, 1, 2, 3].map((k) => r.lfts.get(leaf)![base + k]));
        // radix 8: 4 up links per leaf, so all four.
        expect(ports.size).toBe(4);
      });
    }
  });
});

describe('ftree on degraded fat trees (OpenSM: "not a fat tree")', () => {
  const cases: Array<[string, string, (f: Fabric) => void]> = [
    ['a leaf-spine link missing', 'gen:fattree3:radix=8', (f) => unlink(f, 'sw-l1-0')],
    ['a spine-core link missing', 'gen:fattree3:radix=8', (f) => unlink(f, 'sw-l2-3', 2)],
    ['a spine missing', 'gen:fattree3:radix=8', (f) => removeSwitch(f, 'sw-l2-1')],
    ['a core missing', FT3_LARGE, (f) => removeSwitch(f, 'sw-l3-5')],
    ['two leaf links and a spine missing', 'gen:fattree2:radix=8', (f) => (unlink(f, 'sw-l1-0'), unlink(f, 'sw-l1-3', 1), removeSwitch(f, 'sw-l2-2'))],
  ];
  for (const [what, spec, edit] of cases) {
    it(`${what} (${spec}): ftree applies, complete, deadlock-free, within 1.15x of the bound`, () => {
      const f = fabric(spec, 0, edit);
      const chain = routeWithFallback(f, DEFAULT_FALLBACK, { lmc: 0 });
      expect(chain.engine).toBe('ftree');
      const v = verifyRoutes(f, chain.result, { requireDeadlockFree: true });
      expect(v.failures).toEqual([]);
      expect(v.ok).toBe(true);
      expect(v.deadlockFree).toBe(true);
      // 1.15: where two leaves share a single spine their routes to each other are forced over
      // it, which the rotation does not compensate on the other up link (1.14x in the last case).
      expect(v.linkLoad.max).toBeLessThanOrEqual(1.15 * fatTreeLinkBound(f));
    });
  }
});

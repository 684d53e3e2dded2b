import { describe, expect, test } from 'vitest';
import { checkFabric, links, type Fabric } from '../src/model/fabric.js';
import { NodeType } from '../src/wire/mad.js';
import { generateFabric, parseGeneratorSpec, GENERATORS } from '../src/model/generators.js';
import { loadFabricSpec, TopologyError } from '../src/model/load.js';
import { formatIbnetdiscover, parseIbnetdiscoverFull } from '../src/model/ibnetdiscover.js';
import { diffFabrics, fabricToJson, parseFabricJson } from '../src/model/json.js';

interface Counts {
  switches: number;
  cas: number;
  links: number;
}

function counts(f: Fabric): Counts {
  return {
    switches: f.nodes.filter((n) => n.type === NodeType.Switch).length,
    cas: f.nodes.filter((n) => n.type === NodeType.CA).length,
    links: links(f).length,
  };
}

function connected(f: Fabric): boolean {
  const seen = new Uint8Array(f.nodes.length);
  const stack = [0];
  seen[0] = 1;
  let n = 1;
  while (stack.length) {
    for (const p of f.nodes[stack.pop()!]!.ports) {
      if (p?.peer && !seen[p.peer.node]) {
        seen[p.peer.node] = 1;
        n++;
        stack.push(p.peer.node);
      }
    }
  }
  return n === f.nodes.length;
}

/** Switch-to-switch link count of each switch. */
function swDegrees(f: Fabric): number[] {
  return f.nodes.filter((n) => n.type === NodeType.Switch).map((n) => n.ports.filter((p) => p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch).length);
}

const CASES: Array<[string, Counts]> = [
  ['gen:fattree2:radix=8', { switches: 12, cas: 32, links: 32 + 8 * 4 }],
  ['gen:fattree2:leaves=3,spines=2,hosts=5,links=2', { switches: 5, cas: 15, links: 15 + 3 * 2 * 2 }],
  ['gen:fattree3:radix=4', { switches: 20, cas: 16, links: 16 + 4 * 2 * 2 + 4 * 2 * 2 }],
  ['gen:fattree3:pods=3,leaves=2,spines=2,cores=6,hosts=3', { switches: 3 * 4 + 6, cas: 18, links: 18 + 3 * 4 + 3 * 2 * 3 }],
  ['gen:torus:4x4x4,hosts=1', { switches: 64, cas: 64, links: 64 + 64 * 3 }],
  ['gen:torus:2x3', { switches: 6, cas: 6, links: 6 + 6 + 6 }],
  ['gen:mesh:3x4,hosts=2', { switches: 12, cas: 24, links: 24 + 2 * 4 + 3 * 3 }],
  ['gen:random:switches=20,degree=4,hosts=2,seed=5', { switches: 20, cas: 40, links: 40 + 40 }],
  ['gen:random:switches=12,degree=3,hosts=1', { switches: 12, cas: 12, links: 12 + 18 }],
  ['gen:random:switches=9,degree=2,hosts=1,seed=3', { switches: 9, cas: 9, links: 9 + 9 }],
  ['gen:dragonfly:a=4,p=2,h=2', { switches: 36, cas: 72, links: 72 + 9 * 6 + 36 }],
  ['gen:dragonfly:a=3,p=1,h=2,g=4', { switches: 12, cas: 12, links: 12 + 4 * 3 + 12 }],
];

describe('generators', () => {
  for (const [spec, want] of CASES) {
    test(`${spec}: sound, connected, expected counts, deterministic`, () => {
      const f = loadFabricSpec(spec);
      expect(checkFabric(f)).toEqual([]);
      expect(counts(f)).toEqual(want);
      expect(connected(f)).toBe(true);
      expect(loadFabricSpec(spec)).toEqual(f);
      // GUIDs as ibsim assigns them for the nodes in this order.
      const sws = f.nodes.filter((n) => n.type === NodeType.Switch);
      const cas = f.nodes.filter((n) => n.type === NodeType.CA);
      expect(sws.map((n) => n.guid)).toEqual(sws.map((_, i) => 0x200000n + BigInt(i)));
      expect(cas.map((n) => n.guid)).toEqual(cas.map((_, i) => 0x100000n + 2n * BigInt(i)));
      expect(cas.every((n) => n.ports[1]!.guid === n.guid + 1n && n.numPorts === 1)).toBe(true);
      expect(cas.map((n) => n.desc)).toEqual(cas.map((_, i) => `host-${i} HCA-1`));
      expect(new Set(f.nodes.map((n) => n.desc)).size).toBe(f.nodes.length);
      // Every host hangs off a switch.
      expect(cas.every((n) => f.nodes[n.ports[1]!.peer!.node]!.type === NodeType.Switch)).toBe(true);
      expect(links(f).every(([a]) => f.nodes[a.node]!.ports[a.port]!.width === '4x')).toBe(true);
    });
  }

  test('fat tree structure: every leaf reaches every spine; 3-level k-ary has k^3/4 hosts', () => {
    const f2 = generateFabric('gen:fattree2:leaves=4,spines=3,hosts=2');
    expect(f2.nodes.slice(0, 4).map((n) => n.desc)).toEqual(['sw-l1-0', 'sw-l1-1', 'sw-l1-2', 'sw-l1-3']);
    expect(swDegrees(f2)).toEqual([3, 3, 3, 3, 4, 4, 4]);
    const f3 = generateFabric('gen:fattree3:radix=8');
    expect(counts(f3).cas).toBe(128);
    // k-ary fat tree: leaves use k/2 up, spines k/2 down + k/2 up, cores k down.
    expect(swDegrees(f3)).toEqual([...Array(32).fill(4), ...Array(32).fill(8), ...Array(16).fill(8)]);
    expect(f3.nodes.every((n) => n.type !== NodeType.Switch || n.numPorts === 8)).toBe(true);
  });

  test('3-level fat tree with more than 10,000 end ports', () => {
    const f = generateFabric('gen:fattree3:radix=36');
    const c = counts(f);
    expect(c.cas).toBe(11664);
    expect(c.switches).toBe(36 * 36 + 18 * 18);
    expect(checkFabric(f)).toEqual([]);
  });

  test('torus wraps around, mesh does not', () => {
    expect(swDegrees(generateFabric('gen:torus:3x3,hosts=0'))).toEqual(Array(9).fill(4));
    expect(swDegrees(generateFabric('gen:mesh:3x3,hosts=0')).sort()).toEqual([2, 2, 2, 2, 3, 3, 3, 3, 4]);
    expect(generateFabric('gen:torus:3x3').nodes[5]!.desc).toBe('sw-2-1');
  });

  test('random: regular, simple, seed-dependent; loader seed applies when the spec has none', () => {
    const a = generateFabric('gen:random:switches=30,degree=5,hosts=0,seed=1');
    const b = generateFabric('gen:random:switches=30,degree=5,hosts=0,seed=2');
    expect(swDegrees(a)).toEqual(Array(30).fill(5));
    const pairs = links(a).map(([x, y]) => `${x.node}-${y.node}`);
    expect(new Set(pairs).size).toBe(pairs.length); // no parallel links
    expect(links(a).every(([x, y]) => x.node !== y.node)).toBe(true);
    expect(fabricToJson(a)).not.toBe(fabricToJson(b));
    expect(loadFabricSpec('gen:random:switches=30,degree=5,hosts=0', { seed: 2 })).toEqual(b);
  });

  test('dragonfly: one global link between every pair of groups when g = a*h+1', () => {
    const f = generateFabric('gen:dragonfly:a=2,p=1,h=2');
    const group = (i: number): number => Number(/sw-g(\d+)-/.exec(f.nodes[i]!.desc)![1]);
    const global = links(f).filter(([x, y]) => f.nodes[x.node]!.type === NodeType.Switch && f.nodes[y.node]!.type === NodeType.Switch && group(x.node) !== group(y.node));
    const pairs = global.map(([x, y]) => [group(x.node), group(y.node)].sort().join('-'));
    expect(pairs.length).toBe((5 * 4) / 2);
    expect(new Set(pairs).size).toBe(pairs.length);
  });

  test('writer round trip: generated fabric -> ibnetdiscover text -> same fabric', () => {
    for (const [spec] of CASES) {
      const f = generateFabric(spec);
      const text = formatIbnetdiscover(f, { timestamp: 'T' });
      const back = parseIbnetdiscoverFull(text);
      expect(diffFabrics(f, back.fabric)).toEqual([]);
      expect(back.warnings).toEqual([]);
      expect(parseFabricJson(fabricToJson(f))).toEqual(f);
    }
  });

  test('spec errors list the valid kinds and parameters', () => {
    const err = (spec: string): TopologyError => {
      try {
        loadFabricSpec(spec);
      } catch (e) {
        expect(e).toBeInstanceOf(TopologyError);
        return e as TopologyError;
      }
      throw new Error(`no error for ${spec}`);
    };
    const unknown = err('gen:hypercube:d=3');
    for (const g of GENERATORS) expect(unknown.message).toContain(g.kind);
    expect(err('gen:fattree2:radix=8,spine=2').message).toMatch(/unknown parameter "spine".*valid: radix, leaves, spines, hosts, links/s);
    expect(err('gen:random:switches=10').message).toMatch(/missing parameter "degree"/);
    expect(err('gen:random:switches=5,degree=3').message).toMatch(/must be even/);
    expect(err('gen:fattree2:radix=7').message).toMatch(/even/);
    expect(err('gen:fattree2:radix=4,hosts=5').message).toMatch(/radix=4 is too small/);
    expect(err('gen:torus:4xx4').message).toMatch(/dimensions/);
    expect(err('gen:fattree3:radix=4,cores=3').message).toMatch(/multiple of spines/);
    expect(err('gen:dragonfly:a=2,p=1,h=1,g=9').message).toMatch(/at most a\*h\+1 = 3/);
    expect(err('gen:mesh:2x2,hosts=x').message).toMatch(/hosts=x: expected a non-negative integer/);
    expect(parseGeneratorSpec('gen:torus:2x2x2,hosts=3').args.positional).toBe('2x2x2');
  });
});

/** OpenSM's lmc_esp0 (issue #28): with an LMC, a switch whose port 0 is enhanced gets 2^LMC
 * aligned LIDs there, and every engine routes every one of them (the route verifier, over the
 * tables, is the witness); without it, or without the LMC, switches keep one LID. */
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { getEngine, verifyRoutes } from '../src/routing/index.js';
import { assignLids, lmcSwitches } from '../src/sm/lids.js';
import type { DiscoveryResult } from '../src/model/snapshot.js';

/** A discovery whose switches say EnhancedPort0 where `enhanced` does. */
function disc(f: Fabric, enhanced: (node: number) => boolean): DiscoveryResult {
  return { fabric: f, nodes: f.nodes.map((n, i) => ({ path: [], nodeInfo: {} as never, portInfo: [], portPaths: [], depth: 0, ...(isSwitch(n) ? { switchInfo: { enhancedPort0: enhanced(i) ? 1 : 0 } as never } : {}) })), smNode: 0, smPort: 1, smps: 0, maxDepth: 0 };
}

const switchLmcs = (f: Fabric): number[] => f.nodes.filter(isSwitch).map((n) => n.ports[0]!.lmc ?? 0);

describe('lmc_esp0', () => {
  it('gives an enhanced switch port 0 the LMC, aligned, and only with lmc_esp0 and an LMC', () => {
    for (const [lmcEsp0, lmc, want] of [[true, 2, 2], [false, 2, 0], [true, 0, 0]] as const) {
      const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=4');
      assignLids(f, { lmc, lmcSwitch: lmcSwitches(disc(f, () => true), { lmc, lmcEsp0 }) });
      expect(switchLmcs(f), `lmc_esp0 ${lmcEsp0}, lmc ${lmc}`).toEqual(Array(6).fill(want));
      for (const n of f.nodes.filter(isSwitch)) expect(n.ports[0]!.lid! % (1 << want)).toBe(0);
    }
    // a switch without enhanced port 0 keeps one LID
    const f = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=4');
    const first = f.nodes.findIndex(isSwitch);
    assignLids(f, { lmc: 1, lmcSwitch: lmcSwitches(disc(f, (i) => i !== first), { lmc: 1, lmcEsp0: true }) });
    expect(f.nodes[first]!.ports[0]!.lmc).toBe(0);
    expect(switchLmcs(f).filter((l) => l === 1)).toHaveLength(5);
  });

  for (const [engine, spec] of [
    ['ftree', 'gen:fattree2:leaves=4,spines=2,hosts=4'],
    ['minhop', 'gen:fattree2:leaves=4,spines=2,hosts=4'],
    ['updn', 'gen:fattree2:leaves=4,spines=2,hosts=4'],
    ['dfsssp', 'gen:fattree2:leaves=4,spines=2,hosts=4'],
    ['nue', 'gen:fattree2:leaves=4,spines=2,hosts=4'],
    ['torus', 'gen:torus:4x4x1,hosts=1'],
  ] as const) {
    it(`${engine} routes every LID of every switch's range`, () => {
      const f = loadFabricSpec(spec);
      assignLids(f, { lmc: 1, lmcSwitch: () => true });
      const r = getEngine(engine).route(f, { lmc: 1 });
      const v = verifyRoutes(f, r);
      expect(v.ok, v.summary.join('; ')).toBe(true);
      const switchLids = f.nodes.filter(isSwitch).flatMap((n) => [n.ports[0]!.lid!, n.ports[0]!.lid! + 1]);
      for (const n of f.nodes.filter(isSwitch)) expect(n.ports[0]!.lmc).toBe(1);
      // every switch delivers both of its LIDs to port 0 and forwards every other switch's
      f.nodes.forEach((n, i) => {
        if (!isSwitch(n)) return;
        const t = r.lfts.get(i)!;
        for (const l of switchLids) expect(t[l], `${engine}: switch ${n.desc} LID ${l}`).not.toBe(255);
        expect(t[n.ports[0]!.lid!]).toBe(0);
        expect(t[n.ports[0]!.lid! + 1]).toBe(0);
      });
    });
  }
});

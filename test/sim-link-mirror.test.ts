/** The walkers test a port's link with `SimPort.linkUp`, a mirror of PortInfo:PortPhysicalState
 * (issue #16: one field per hop, not a read through the PortInfo view): from the cold fabric on,
 * whatever cables are pulled and put back, the mirror agrees with the field for every port. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { PhysPortState } from '../src/wire/mad.js';
import { Rng } from '../src/util/rng.js';

describe('SimPort.linkUp', () => {
  it('mirrors PortPhysicalState through cable pulls and reconnections', () => {
    const sim = new SimFabric(loadFabricSpec('gen:fattree2:leaves=3,spines=2,hosts=6'), { clock: new VirtualClock(), seed: 5 });
    const cabled = sim.nodes.flatMap((n) => n.ports.filter((p) => p?.peer).map((p) => [n.idx, p!.num] as const));
    const rng = new Rng(9);
    const check = (): void => {
      for (const n of sim.nodes) for (const p of n.ports) if (p) expect(p.linkUp, `${n.desc} port ${p.num}`).toBe(p.info.portPhysicalState === PhysPortState.LinkUp);
    };
    check();
    let downs = 0;
    for (let i = 0; i < 200; i++) {
      const [ni, pn] = cabled[rng.int(cabled.length)]!;
      const p = sim.nodes[ni]!.ports[pn]!;
      if (rng.next() < 0.5) {
        sim.linkDown(ni, pn);
        downs++;
        expect(p.linkUp).toBe(false);
      } else {
        sim.linkUp(ni, pn);
        expect(p.linkUp).toBe(p.peer!.cableUp && !p.disabled && !p.peer!.disabled);
      }
      check();
    }
    expect(downs).toBeGreaterThan(50);
  });
});

/** The engines that can run for seconds (dfsssp, nue) call RoutingOptions.tick between their
 * units of work, so an SM whose event loop they hold can still look at the time (the TurboFan
 * hold, cli/tiering.ts, is let go from there: test/tiering.test.ts). The tables are the same with
 * and without a tick, and a tick that throws ends the routing (it runs inside the engine). */
import { describe, expect, it } from 'vitest';
import { getEngine } from '../src/routing/index.js';
import { fabricWithLids } from './helpers/routing-checks.js';

describe('RoutingOptions.tick', () => {
  for (const [name, spec, maxVls] of [
    ['dfsssp', 'gen:torus:4x4x3,hosts=2', 8],
    ['dfsssp', 'gen:torus:6x6x6,hosts=1', 2],
    ['nue', 'gen:torus:4x4x3,hosts=2', 2],
  ] as const) {
    it(`${name} on ${spec} (maxVls ${maxVls}) ticks at least once per destination switch, its outcome unchanged`, () => {
      const fabric = fabricWithLids(spec, 0);
      const switches = fabric.nodes.filter((n) => n.type === 2).length;
      const eng = getEngine(name);
      const outcome = (tick?: () => void): string => {
        try {
          const r = eng.route(fabric, { lmc: 0, maxVls, ...(tick ? { tick } : {}) });
          return JSON.stringify([...r.lfts].map(([g, t]) => [String(g), Array.from(t)]));
        } catch (e) {
          return `refused: ${(e as Error).message}`;
        }
      };
      let ticks = 0;
      const withTick = outcome(() => ticks++);
      expect(ticks).toBeGreaterThanOrEqual(switches);
      expect(withTick).toBe(outcome());
    });
  }
  it('a tick that throws ends the routing with its error', () => {
    const fabric = fabricWithLids('gen:torus:4x4x3,hosts=2', 0);
    expect(() => getEngine('dfsssp').route(fabric, { lmc: 0, tick: () => { throw new Error('stop'); } })).toThrow('stop');
  });
});

/** The engines that can run for seconds (dfsssp, nue) route as named phases (RoutingEngine.steps):
 * they yield between their units of work, so an SM whose event loop they hold can look at the time
 * between two steps (the TurboFan hold, cli/tiering.ts, is let go from there: test/tiering.test.ts),
 * and routeWithFallback calls its caller's `tick` at each step. The tables are the same stepped and
 * run through (`route`), and a tick that throws ends the routing. */
import { describe, expect, it } from 'vitest';
import { getEngine, registerEngine, routeWithFallback, runSteps, type RoutingPhase } from '../src/routing/index.js';
import { fabricWithLids } from './helpers/routing-checks.js';

describe('RoutingEngine.steps', () => {
  for (const [name, spec, maxVls, phases] of [
    ['dfsssp', 'gen:torus:4x4x3,hosts=2', 8, ['paths', 'layers']],
    ['dfsssp', 'gen:torus:6x6x6,hosts=1', 2, ['paths', 'layers']],
    ['nue', 'gen:torus:4x4x3,hosts=2', 2, ['units']],
  ] as const) {
    it(`${name} on ${spec} (maxVls ${maxVls}) steps at least once per destination switch, its outcome unchanged`, () => {
      const fabric = fabricWithLids(spec, 0);
      const switches = fabric.nodes.filter((n) => n.type === 2).length;
      const eng = getEngine(name);
      const outcome = (between?: (phase: RoutingPhase) => void): string => {
        try {
          const r = between ? runSteps(eng.steps!(fabric, { lmc: 0, maxVls }), between) : eng.route(fabric, { lmc: 0, maxVls });
          return JSON.stringify([...r.lfts].map(([g, t]) => [String(g), Array.from(t)]));
        } catch (e) {
          return `refused: ${(e as Error).message}`;
        }
      };
      const seen = new Map<RoutingPhase, number>();
      const stepped = outcome((p) => seen.set(p, (seen.get(p) ?? 0) + 1));
      expect([...seen.values()].reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(switches);
      expect(seen.get(phases[0])).toBeGreaterThanOrEqual(switches);
      for (const p of seen.keys()) expect(phases).toContain(p);
      expect(stepped).toBe(outcome());
      // routeWithFallback steps the engine when its caller gives a tick, with the same tables
      let ticks = 0;
      let viaFallback: string;
      try {
        const r = routeWithFallback(fabric, [name], { lmc: 0, maxVls, tick: () => ticks++ });
        viaFallback = JSON.stringify([...r.result.lfts].map(([g, t]) => [String(g), Array.from(t)]));
      } catch {
        viaFallback = 'refused';
      }
      expect(ticks).toBe([...seen.values()].reduce((a, b) => a + b, 0));
      expect(viaFallback).toBe(stepped.startsWith('refused') ? 'refused' : stepped);
    });
  }
  it('a tick that throws ends the routing with its error', () => {
    const fabric = fabricWithLids('gen:torus:4x4x3,hosts=2', 0);
    expect(() => routeWithFallback(fabric, ['dfsssp'], { lmc: 0, tick: () => { throw new Error('stop'); } })).toThrow('stop');
  });
  it("an engine is handed the routing options without the caller's tick, and the tick runs at each of its steps", () => {
    const fabric = fabricWithLids('gen:torus:4x4x3,hosts=2', 0);
    const handed: object[] = [];
    const minhop = getEngine('minhop');
    registerEngine({
      name: 'test-stepped',
      description: 'minhop in two steps',
      route: (f, o) => minhop.route(f, o),
      *steps(f, o) {
        handed.push(o);
        yield 'paths';
        yield 'layers';
        return minhop.route(f, o);
      },
    });
    const phases: string[] = [];
    const r = routeWithFallback(fabric, ['test-stepped'], { lmc: 0, seed: 3, tick: (p) => phases.push(p) });
    expect(phases).toEqual(['paths', 'layers']);
    expect(handed).toEqual([{ lmc: 0, seed: 3 }]);
    expect(r.result.lfts).toEqual(minhop.route(fabric, { lmc: 0, seed: 3 }).lfts);
  });
});

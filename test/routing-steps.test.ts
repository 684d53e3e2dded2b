/** Every routing engine routes as named phases (RoutingEngine.steps, issue #31): it yields between
 * its units of work, so an SM whose event loop it holds can look at the time between two steps
 * (the TurboFan hold, cli/tiering.ts, is let go from there: test/tiering.test.ts), and
 * routeWithFallback calls its caller's `tick` at each step. `route` is the steps run through
 * (steppedEngine), so the tables are the same stepped and run through, and a tick that throws ends
 * the routing. A site engine is registered with its steps alone. */
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { engineNames, getEngine, registerEngine, routeWithFallback, RoutingError, runSteps, type EngineSteps, type RoutingOptions, type RoutingPhase, type RoutingResult } from '../src/routing/index.js';
import { fabricWithLids } from './helpers/routing-checks.js';

/** The built-in engines (before this file registers its own). */
const BUILT_IN = engineNames();

/** What a result says, to compare two: tables, SLs of every (source, destination) LID pair,
 * per-port SL2VL tables, VLs, roots, claims and notes. */
function outcomeOf(r: RoutingResult): string {
  const sls: number[] = [];
  if (r.sl) for (let s = 0; s <= r.maxLid; s++) for (let d = 0; d <= r.maxLid; d++) sls.push(r.sl(s, d));
  const byPorts = [...(r.sl2vlByPorts ?? [])].map(([n, t]) => [n, t.stride, Array.from(t.vl)]);
  return JSON.stringify({
    lfts: [...r.lfts].map(([g, t]) => [String(g), Array.from(t)]),
    sls,
    byPorts,
    sl2vl: r.sl2vl,
    vls: r.vlsUsed,
    df: r.deadlockFree,
    roots: r.roots?.map(String),
    notes: r.notes,
  });
}

describe('RoutingEngine.steps', () => {
  for (const [name, spec, maxVls, phases] of [
    ['dfsssp', 'gen:torus:4x4x3,hosts=2', 8, ['paths', 'layers']],
    ['dfsssp', 'gen:torus:6x6x6,hosts=1', 2, ['paths', 'layers']],
    ['nue', 'gen:torus:4x4x3,hosts=2', 2, ['units']],
    ['minhop', 'gen:torus:4x4x3,hosts=2', 8, ['paths']],
    ['updn', 'gen:torus:4x4x3,hosts=2', 8, ['paths', 'distances', 'ranks', 'roots']],
    ['torus', 'gen:torus:6x6x6,hosts=1', 2, ['paths', 'coordinates', 'vls']],
  ] as const) {
    it(`${name} on ${spec} (maxVls ${maxVls}) steps at least once per destination switch, its outcome unchanged`, () => {
      const fabric = fabricWithLids(spec, 0);
      const switches = fabric.nodes.filter((n) => n.type === 2).length;
      const eng = getEngine(name);
      const outcome = (between?: (phase: RoutingPhase) => void): string => {
        try {
          const r = between ? runSteps(eng.steps(fabric, { lmc: 0, maxVls }), between) : eng.route(fabric, { lmc: 0, maxVls });
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
  it("an engine is handed the routing options without the caller's tick, and the tick runs at each of its steps; a site engine brings its steps alone", () => {
    const fabric = fabricWithLids('gen:torus:4x4x3,hosts=2', 0);
    const handed: object[] = [];
    const minhop = getEngine('minhop');
    registerEngine({
      name: 'test-stepped',
      description: 'minhop in two steps',
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
    // its route is derived: the steps run through, without a tick
    expect(getEngine('test-stepped').route(fabric, { lmc: 0, seed: 3 }).lfts).toEqual(r.result.lfts);
    expect(handed).toEqual([{ lmc: 0, seed: 3 }, { lmc: 0, seed: 3 }]);
  });

  it('an engine without steps (a route alone) is refused with a RoutingError that says what to give', () => {
    const minhop = getEngine('minhop');
    const routeOnly = { name: 'test-route-only', description: 'a route alone', route: (f: Fabric, o: RoutingOptions) => minhop.route(f, o) };
    expect(() => registerEngine(routeOnly as unknown as EngineSteps)).toThrow(RoutingError);
    expect(() => registerEngine(routeOnly as unknown as EngineSteps)).toThrow(/has no steps: give it steps\(fabric, opts\)/);
    expect(engineNames()).not.toContain('test-route-only');
  });
});

describe('every built-in engine routes in named phases (#31)', () => {
  /** A fabric each engine applies to, with LMC 1 (several LIDs per port), and the phases it names. */
  const CASES: Record<string, { spec: string; opts: Omit<RoutingOptions, 'lmc'>; phases: RoutingPhase[] }> = {
    minhop: { spec: 'gen:random:switches=40,degree=5,hosts=3,seed=7', opts: { seed: 5 }, phases: ['paths'] },
    updn: { spec: 'gen:random:switches=40,degree=5,hosts=3,seed=7', opts: {}, phases: ['roots', 'ranks', 'distances', 'paths'] },
    ftree: { spec: 'gen:fattree3:radix=8', opts: {}, phases: ['levels', 'lids', 'switch-lids'] },
    torus: { spec: 'gen:torus:6x4,hosts=2', opts: { maxVls: 2 }, phases: ['coordinates', 'paths', 'vls'] },
    dfsssp: { spec: 'gen:torus:4x4x3,hosts=2', opts: { maxVls: 8 }, phases: ['paths', 'layers'] },
    nue: { spec: 'gen:random:switches=40,degree=5,hosts=3,seed=7', opts: { maxVls: 2 }, phases: ['units'] },
  };

  it('the built-in engines are the six of the table, each with steps and route', () => {
    expect([...BUILT_IN].sort()).toEqual(Object.keys(CASES).sort());
    for (const name of BUILT_IN) {
      expect(typeof getEngine(name).steps).toBe('function');
      expect(typeof getEngine(name).route).toBe('function');
    }
  });

  for (const [name, { spec, opts, phases }] of Object.entries(CASES)) {
    it(`${name} on ${spec} (LMC 1): its steps name its phases, in order, and give what route gives`, () => {
      const o: RoutingOptions = { lmc: 1, ...opts };
      const eng = getEngine(name);
      const seen: RoutingPhase[] = [];
      const stepped = runSteps(eng.steps(fabricWithLids(spec, 1), o), (p) => seen.push(p));
      const routed = eng.route(fabricWithLids(spec, 1), o);
      expect(stepped.engine).toBe(name);
      expect(outcomeOf(stepped)).toBe(outcomeOf(routed));
      // every phase of the engine named (dfsssp's 'layers': this torus has credit loops), none
      // other, first seen in the engine's order
      expect(seen.length).toBeGreaterThan(0);
      expect([...new Set(seen)]).toEqual(phases);
    });
  }

  it('the engines that route destination by destination step at least once per destination switch', () => {
    for (const name of ['minhop', 'updn', 'torus', 'dfsssp', 'nue']) {
      const { spec, opts } = CASES[name]!;
      const fabric = fabricWithLids(spec, 1);
      const switches = fabric.nodes.filter((n) => n.type === 2).length;
      let steps = 0;
      runSteps(getEngine(name).steps(fabric, { lmc: 1, ...opts }), () => steps++);
      expect(steps, name).toBeGreaterThanOrEqual(switches);
    }
  });
});

/** Routing engines by name, and an ordered fallback: the first engine that applies wins. */
import type { Fabric } from '../model/fabric.js';
import { dfsssp } from './dfsssp.js';
import { ftree } from './ftree.js';
import { minhop } from './minhop.js';
import { nue } from './nue.js';
import { torus } from './torus.js';
import { RoutingError, RoutingNotApplicable, runSteps, steppedEngine, type EngineSteps, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';
import { updn } from './updn.js';

const engines = new Map<string, RoutingEngine>([minhop, updn, ftree, dfsssp, torus, nue].map((e) => [e.name, e]));

/** The deadlock-free engine that applies to every fabric (any connected topology, any VL count
 *  1..15): the last resort when a configured chain fails, so no chain ends in routes that can
 *  deadlock. */
export const DEADLOCK_FREE_FALLBACK = 'nue';

/** Default order: the most specific engines first (fat trees, then tori and meshes), then the
 *  deadlock-free engine that always applies. Every engine in it is deadlock-free. */
export const DEFAULT_FALLBACK: readonly string[] = ['ftree', 'torus', DEADLOCK_FREE_FALLBACK];

export function engineNames(): string[] {
  return [...engines.keys()];
}

export function getEngine(name: string): RoutingEngine {
  const e = engines.get(name);
  if (!e) throw new RoutingError(`unknown routing engine "${name}"; known engines: ${engineNames().join(', ')}`);
  return e;
}

/** Add an engine (e.g. a site-specific one): its name, description and `steps` (a generator of
 *  named phases returning the tables; one that routes in one go is `*steps(f, o) { return
 *  myRoute(f, o); }`). Its `route` is derived from the steps (steppedEngine); a `route` it brings
 *  is not used. Replacing a built-in needs `replace: true`. */
export function registerEngine(engine: EngineSteps, replace = false): void {
  if (typeof engine.steps !== 'function') {
    throw new RoutingError(`routing engine "${engine.name}" has no steps: give it steps(fabric, opts), a generator that yields phase names between units of work and returns the tables (a route function f becomes *steps(fabric, opts) { return f(fabric, opts); })`);
  }
  if (engines.has(engine.name) && !replace) throw new RoutingError(`routing engine "${engine.name}" is already registered`);
  engines.set(engine.name, steppedEngine(engine));
}

/** The engines of `chain` that route in their own order (no `takesRouteOrder`): a configured
 *  guid routing order does not apply to them. */
export function enginesWithoutRouteOrder(chain: readonly string[]): string[] {
  return chain.filter((n) => !getEngine(n).takesRouteOrder);
}

export interface FallbackResult {
  result: RoutingResult;
  /** The engine that produced the tables. */
  engine: string;
  /** Engines tried before it, with the reason each did not apply. */
  skipped: Array<{ engine: string; reason: string }>;
}

/** What the caller of routeWithFallback does between an engine's steps (RoutingEngine.steps):
 *  the engines never see it. */
export interface BetweenSteps {
  /** Called at each step of the engine (between units of work: a destination switch or group, a
   *  credit loop broken), with the phase it is in; it must not touch the fabric, and what it
   *  throws ends the routing. The SM reports progress there (and the CLI lets V8's optimizing
   *  compiler go: cli/tiering.ts). */
  tick?: (phase: RoutingPhase) => void;
}

/** Try the engines in order; RoutingNotApplicable moves on to the next, any other error propagates.
 *  When none applies, throws RoutingNotApplicable listing every reason. */
export function routeWithFallback(fabric: Fabric, order: readonly string[], opts: RoutingOptions & BetweenSteps): FallbackResult {
  if (order.length === 0) throw new RoutingError('no routing engine given');
  const { tick, ...engineOpts } = opts;
  const skipped: FallbackResult['skipped'] = [];
  for (const name of order) {
    const eng = getEngine(name);
    try {
      const result = runSteps(eng.steps(fabric, engineOpts), tick);
      if (skipped.length > 0) result.notes.unshift(...skipped.map((s) => `${s.engine} skipped: ${s.reason}`));
      return { result, engine: name, skipped };
    } catch (err) {
      if (!(err instanceof RoutingNotApplicable)) throw err;
      skipped.push({ engine: name, reason: err.reason });
    }
  }
  throw new RoutingNotApplicable(order.join(','), `no engine applies: ${skipped.map((s) => `${s.engine}: ${s.reason}`).join('; ')}`);
}

/** Shared checks of routing results: a generated fabric with LIDs, and "complete, loop-free and
 * deadlock-free within the VLs given" asserted through the verifier. */
import { expect } from 'vitest';
import type { Fabric } from '../../src/model/fabric.js';
import { isSwitch } from '../../src/model/fabric.js';
import { loadFabricSpec } from '../../src/model/load.js';
import { assignLids } from '../../src/sm/lids.js';
import { verifyRoutes, type RoutingResult, type VerifyReport } from '../../src/routing/index.js';

/** A generated (or loaded) fabric with LIDs assigned as the SM would. */
export function fabricWithLids(spec: string, lmc = 0): Fabric {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc });
  return f;
}

/** Every CA LID (all LMC ranges) and every switch LID is a destination the verifier walked;
 * no failure, loop or CDG cycle; within `maxVls`. Returns the verifier's report. */
export function expectComplete(f: Fabric, r: RoutingResult, lmc: number, maxVls: number): VerifyReport {
  const v = verifyRoutes(f, r, { requireDeadlockFree: true });
  expect(v.failures).toEqual([]);
  expect(v.unreachablePairs).toBe(0);
  expect(v.unreachableFromSwitches).toBe(0);
  expect(v.loopEntries).toBe(0);
  expect(v.cdg.filter((c) => c.cyclicComponents > 0)).toEqual([]);
  expect(v.deadlockFree).toBe(true);
  expect(v.ok).toBe(true);
  const caLids = f.nodes.filter((n) => !isSwitch(n)).reduce((a, n) => a + n.ports.filter((p) => p?.peer).length * (1 << lmc), 0);
  expect(v.lids).toBe(caLids + f.nodes.filter(isSwitch).length);
  expect(r.deadlockFree).toBe(true);
  expect(r.vlsUsed ?? 1).toBeLessThanOrEqual(maxVls);
  expect(v.vlsUsed).toBeLessThanOrEqual(maxVls);
  for (const vl of r.sl2vl ?? []) expect(vl).toBeLessThan(maxVls);
  return v;
}

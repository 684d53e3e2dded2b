import { loadFabricSpec } from '../model/load.js';
import { AsapClock } from '../util/asap-clock.js';
import type { Fabric } from '../model/fabric.js';
import { SimFabric, type SimFabricOptions } from './fabric.js';

/** A simulated fabric from a topology file, a generator spec (gen:...) or a Fabric, on a clock
 * that runs as fast as possible (its default); attach endpoints to it with `sim.attach(node)`. */
export function createSimFabric(topology: string | Fabric, opts: Partial<SimFabricOptions> & { seed?: number } = {}): SimFabric {
  const fabric = typeof topology === 'string' ? loadFabricSpec(topology, { seed: opts.seed }) : topology;
  return new SimFabric(fabric, { clock: new AsapClock(), ...opts });
}

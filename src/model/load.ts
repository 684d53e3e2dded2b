/**
 * One entry point for "give me a fabric": `gen:<kind>:<params>` runs a generator; anything else is
 * a file: a JSON fabric (from `ibsm discover --json`, first non-blank character "{"), or an ibsim
 * .net file / ibnetdiscover output (one parser reads both, as ibsim does).
 */
import { readFileSync } from 'node:fs';
import type { Fabric } from './fabric.js';
import { parseFabricJson } from './json.js';
import { generateFabric } from './generators.js';
import { parseNetText } from './netfile.js';
import { TopologyError } from './errors.js';

export { TopologyError } from './errors.js';
export { parseGeneratorSpec, describeGenerators, GENERATORS } from './generators.js';

export interface LoadOptions {
  /** Seed for randomised generators when the spec has no seed= of its own. */
  seed?: number;
}

/** Load a fabric from a generator spec or a topology file. Throws only TopologyError. */
export function loadFabricSpec(spec: string, opts: LoadOptions = {}): Fabric {
  if (spec.startsWith('gen:')) return generateFabric(spec, opts);
  let text: string;
  try {
    text = readFileSync(spec, 'utf8');
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    throw new TopologyError(spec, 0, `cannot read the topology file (${why}); for a generated fabric use gen:<kind>:<params>, e.g. gen:fattree2:radix=8`);
  }
  return parseTopologyText(text, spec);
}

/** Parse topology text of any supported format (JSON, .net, ibnetdiscover). Throws only TopologyError. */
export function parseTopologyText(text: string, fileName = '<text>'): Fabric {
  if (text.trimStart().startsWith('{')) return parseFabricJson(text, fileName);
  return parseNetText(text, { fileName }).fabric;
}

/**
 * Deterministic topology generators. Every generator returns a Fabric whose GUIDs are the ones
 * ibsim would assign if the fabric were written as a .net file in node order (switches from
 * 0x200000, one GUID each; CAs from 0x100000, node GUID then one per port), with links at ibsim's
 * default rate (4x SDR) and LIDs 0. Node order: all switches, then all hosts. Indices in names are
 * 0-based; every host is a one-port CA named "host-<n> HCA-1".
 *
 * Specs (see GENERATORS for the parameters): `fattree2:radix=8`, `fattree2:leaves=4,spines=2,hosts=3`,
 * `fattree3:radix=36`, `fattree3:pods=4,leaves=2,spines=2,cores=4,hosts=2`, `torus:4x4x4,hosts=1`,
 * `mesh:3x3,hosts=2`, `random:switches=16,degree=4,hosts=2,seed=7`, `dragonfly:a=4,p=2,h=2,g=9`.
 *
 * This file: the registry and the spec parser; one file per family in model/generators/, the
 * builder they share in generators/builder.ts, the hardware keys in generators/hardware.ts.
 */
import type { Fabric } from './fabric.js';
import { TopologyError } from './errors.js';
import { subnetsFabric } from './subnets.js';
import { GeneratorArgs, type GeneratorDef, type GeneratorParam } from './generators/builder.js';
import { fatTree2, fatTree3 } from './generators/fattree.js';
import { grid } from './generators/grid.js';
import { randomRegular } from './generators/random.js';
import { dragonfly } from './generators/dragonfly.js';
import { HARDWARE_PARAMS, applyHardware } from './generators/hardware.js';

export { FabricBuilder, GeneratorArgs, type GeneratorDef, type GeneratorParam } from './generators/builder.js';
export { HARDWARE_GENERATIONS, HARDWARE_PARAMS, hardwareModelsMarkdown, type HardwareModel } from './generators/hardware.js';

const RADIX: GeneratorParam = { name: 'radix', description: 'ports per switch (default: as many as needed)' };
const HOSTS_PER_SWITCH: GeneratorParam = { name: 'hosts', description: 'hosts (one-port CAs) per switch (default 1)' };

export const GENERATORS: readonly GeneratorDef[] = [
  {
    kind: 'fattree2',
    summary: 'two-level fat tree: every leaf linked to every spine',
    params: [
      { name: 'radix', description: 'switch ports; alone it means leaves=radix, spines=radix/2, hosts=radix/2' },
      { name: 'leaves', description: 'leaf switches' },
      { name: 'spines', description: 'spine switches' },
      { name: 'hosts', description: 'hosts per leaf' },
      { name: 'links', description: 'parallel links between each leaf and spine (default 1)' },
    ],
    examples: ['gen:fattree2:radix=8', 'gen:fattree2:leaves=4,spines=2,hosts=3'],
    build: fatTree2,
  },
  {
    kind: 'fattree3',
    summary: 'three-level fat tree (k-ary when given radix=k: k pods, k^3/4 hosts)',
    params: [
      { name: 'radix', description: 'switch ports k; alone: pods=k, leaves=spines=hosts=k/2, cores=(k/2)^2' },
      { name: 'pods', description: 'pods' },
      { name: 'leaves', description: 'leaf switches per pod' },
      { name: 'spines', description: 'aggregation switches per pod (each linked to every leaf of its pod)' },
      { name: 'cores', description: 'core switches (a multiple of spines; spine j of each pod links to core group j)' },
      { name: 'hosts', description: 'hosts per leaf' },
    ],
    examples: ['gen:fattree3:radix=36', 'gen:fattree3:pods=4,leaves=2,spines=2,cores=4,hosts=2'],
    build: fatTree3,
  },
  {
    kind: 'torus',
    summary: 'k-ary n-dimensional torus of switches (wrap-around links)',
    positional: { name: 'AxBxC', description: 'dimension sizes' },
    params: [HOSTS_PER_SWITCH, RADIX],
    examples: ['gen:torus:4x4x4,hosts=1'],
    build: (a) => grid(a, true),
  },
  {
    kind: 'mesh',
    summary: 'n-dimensional mesh of switches (no wrap-around)',
    positional: { name: 'AxBxC', description: 'dimension sizes' },
    params: [HOSTS_PER_SWITCH, RADIX],
    examples: ['gen:mesh:4x4,hosts=2'],
    build: (a) => grid(a, false),
  },
  {
    kind: 'random',
    summary: 'connected random regular graph of switches',
    params: [
      { name: 'switches', description: 'number of switches' },
      { name: 'degree', description: 'switch-to-switch links per switch' },
      HOSTS_PER_SWITCH,
      { name: 'seed', description: 'RNG seed (default: the loader seed, else 1)' },
      RADIX,
    ],
    examples: ['gen:random:switches=16,degree=4,hosts=2,seed=7'],
    build: randomRegular,
  },
  {
    kind: 'dragonfly',
    summary: 'dragonfly: groups of all-to-all switches joined by global links',
    params: [
      { name: 'a', description: 'switches per group' },
      { name: 'p', description: 'hosts per switch' },
      { name: 'h', description: 'global links per switch' },
      { name: 'g', description: 'groups (default a*h+1, one global link between every pair of groups)' },
      RADIX,
    ],
    examples: ['gen:dragonfly:a=4,p=2,h=2', 'gen:dragonfly:a=4,p=2,h=2,g=5'],
    build: dragonfly,
  },
  {
    kind: 'subnets',
    summary: 'several two-level fat trees (subnets) joined by two-port IB routers (model/subnets.ts)',
    params: [
      { name: 'count', description: 'subnets (default 2)' },
      { name: 'shape', description: 'line, ring or star: which subnets are neighbours (default line)' },
      { name: 'routers', description: 'routers between each pair of neighbours (default 1)' },
      { name: 'leaves', description: 'leaf switches per subnet (default 2)' },
      { name: 'spines', description: 'spine switches per subnet (default 1)' },
      { name: 'hosts', description: 'hosts per leaf (default 2)' },
    ],
    examples: ['gen:subnets:count=3,shape=ring,routers=2,leaves=2,spines=1,hosts=2'],
    build: (a) => subnetsFabric(a),
  },
];

export function describeGenerator(g: GeneratorDef): string {
  const names = [...(g.positional ? [g.positional.name] : []), ...g.params.map((p) => p.name)];
  const lines = [`gen:${g.kind}:${names.map((n) => (n === g.positional?.name ? n : `${n}=`)).join(',')}  ${g.summary}`];
  if (g.positional) lines.push(`    ${g.positional.name}: ${g.positional.description}`);
  for (const p of g.params) lines.push(`    ${p.name}: ${p.description}`);
  lines.push(`    e.g. ${g.examples.join('  ')}`);
  return lines.join('\n');
}

export function describeGenerators(): string {
  const hw = ['every generator also takes the hardware of its ports:', ...HARDWARE_PARAMS.map((p) => `    ${p.name}: ${p.description}`), '    e.g. gen:fattree2:leaves=4,spines=2,hosts=4,speed=NDR,leafspeed=HDR'];
  return [...GENERATORS.map(describeGenerator), ...hw].join('\n');
}

/** Parse `gen:<kind>:<params>` (the `gen:` prefix is optional). Throws TopologyError listing what is valid. */
export function parseGeneratorSpec(spec: string, opts: { seed?: number } = {}): { def: GeneratorDef; args: GeneratorArgs } {
  const body = spec.startsWith('gen:') ? spec.slice(4) : spec;
  const colon = body.indexOf(':');
  const kind = colon < 0 ? body : body.slice(0, colon);
  const def = GENERATORS.find((g) => g.kind === kind);
  if (!def) {
    throw new TopologyError(spec, 0, `unknown generator "${kind}"; valid kinds are ${GENERATORS.map((g) => g.kind).join(', ')}:\n${describeGenerators()}`);
  }
  const values = new Map<string, string>();
  let positional: string | undefined;
  const fail = (detail: string): never => {
    throw new TopologyError(spec, 0, `${detail}\n${describeGenerator(def)}`);
  };
  const text = colon < 0 ? '' : body.slice(colon + 1);
  for (const item of text.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = item.indexOf('=');
    if (eq < 0) {
      if (!def.positional) fail(`"${item}" is not of the form name=value`);
      if (positional !== undefined) fail(`two positional arguments ("${positional}" and "${item}")`);
      positional = item;
      continue;
    }
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    const known = def.params.some((p) => p.name === name) || HARDWARE_PARAMS.some((p) => p.name === name) || (def.positional && name === 'dims');
    if (!known) fail(`unknown parameter "${name}" for ${kind}; valid: ${[...def.params, ...HARDWARE_PARAMS].map((p) => p.name).join(', ')}`);
    if (values.has(name)) fail(`parameter "${name}" given twice`);
    values.set(name, value);
  }
  return { def, args: new GeneratorArgs(spec, kind, values, positional, opts.seed, describeGenerator(def)) };
}

/** Build the fabric a generator spec describes. Throws TopologyError for a bad spec. */
export function generateFabric(spec: string, opts: { seed?: number } = {}): Fabric {
  const { def, args } = parseGeneratorSpec(spec, opts);
  return applyHardware(def.build(args), args);
}

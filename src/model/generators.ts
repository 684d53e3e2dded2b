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
 */
import { NodeType } from '../wire/mad.js';
import type { Fabric, FabricNode, NodeKind } from './fabric.js';
import { Rng } from '../util/rng.js';
import { TopologyError } from './errors.js';
import { guidAfter, initialGuids, portGuid, U64 } from './ibsim-guids.js';
import { subnetsFabric } from './subnets.js';
import { SPEED_NAMES, WIDTH_NAMES } from './rates.js';

/** Builds a Fabric node by node, assigning GUIDs the way ibsim does for a .net file. */
export class FabricBuilder {
  private readonly guids = initialGuids();
  private readonly nodes: FabricNode[] = [];

  /** Set the next GUID for a node type (like a `switchguid=` / `caguid=` line). */
  setNextGuid(type: NodeKind, guid: bigint): void {
    this.guids[type] = guid & U64;
  }

  addNode(type: NodeKind, desc: string, numPorts: number, ids: { vendorId?: number; deviceId?: number } = {}): number {
    if (!Number.isInteger(numPorts) || numPorts < 1 || numPorts > 255) throw new RangeError(`node "${desc}": numPorts must be 1..255, not ${numPorts}`);
    const guid = this.guids[type];
    const sw = type === NodeType.Switch;
    this.guids[type] = guidAfter(type, guid, numPorts);
    const node: FabricNode = {
      type,
      guid,
      systemImageGuid: guid,
      desc,
      numPorts,
      vendorId: ids.vendorId ?? 0,
      deviceId: ids.deviceId ?? 0,
      ports: [],
    };
    for (let p = sw ? 0 : 1; p <= numPorts; p++) {
      node.ports[p] = sw ? { num: p, guid, ...(p === 0 ? { lid: 0, lmc: 0 } : {}) } : { num: p, guid: portGuid(type, guid, p), lid: 0, lmc: 0 };
    }
    this.nodes.push(node);
    return this.nodes.length - 1;
  }

  addSwitch(desc: string, numPorts: number): number {
    return this.addNode(NodeType.Switch, desc, numPorts);
  }

  addCa(desc: string, numPorts = 1): number {
    return this.addNode(NodeType.CA, desc, numPorts);
  }

  /** Cable port `pa` of node `a` to port `pb` of node `b`. `width`/`speed` name what each end's
   * hardware can do (the simulated fabric trains the link to the best both ends know); `far`, when
   * given, is the other end's, for a link whose ends differ (an HDR host on an NDR switch). */
  link(a: number, pa: number, b: number, pb: number, width = '4x', speed = 'SDR', far?: { width?: string; speed?: string }): void {
    const x = this.nodes[a]?.ports[pa];
    const y = this.nodes[b]?.ports[pb];
    if (!x || !y || pa === 0 || pb === 0) throw new RangeError(`cannot link ${a}/${pa} to ${b}/${pb}: no such port`);
    if (x.peer || y.peer) throw new RangeError(`cannot link ${a}/${pa} to ${b}/${pb}: port already linked`);
    if (a === b && pa === pb) throw new RangeError(`cannot link port ${a}/${pa} to itself`);
    x.peer = { node: b, port: pb };
    y.peer = { node: a, port: pa };
    x.width = width;
    x.speed = speed;
    y.width = far?.width ?? width;
    y.speed = far?.speed ?? speed;
  }

  build(): Fabric {
    return { nodes: this.nodes };
  }
}

// ---- parameters ------------------------------------------------------------------------------

export interface GeneratorParam {
  name: string;
  description: string;
}

export interface GeneratorDef {
  kind: string;
  summary: string;
  /** Name of the positional argument (torus/mesh dimensions), if any. */
  positional?: GeneratorParam;
  params: GeneratorParam[];
  examples: string[];
  build(args: GeneratorArgs): Fabric;
}

/** Parsed parameters of one spec, with typed accessors that report errors against the spec. */
export class GeneratorArgs {
  constructor(
    readonly spec: string,
    readonly kind: string,
    readonly values: ReadonlyMap<string, string>,
    readonly positional: string | undefined,
    readonly seed: number | undefined,
  ) {}

  fail(detail: string): never {
    const def = GENERATORS.find((g) => g.kind === this.kind);
    throw new TopologyError(this.spec, 0, def ? `${detail}\n${describeGenerator(def)}` : detail);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  int(name: string, fallback?: number, min = 0): number {
    const raw = this.values.get(name);
    if (raw === undefined) {
      if (fallback === undefined) this.fail(`missing parameter "${name}"`);
      return fallback;
    }
    if (!/^\d+$/.test(raw)) this.fail(`parameter ${name}=${raw}: expected a non-negative integer`);
    const v = parseInt(raw, 10);
    if (v < min) this.fail(`parameter ${name}=${v}: must be at least ${min}`);
    return v;
  }
}

function ports(...needs: number[]): number {
  return Math.max(1, ...needs);
}

function checkRadix(a: GeneratorArgs, what: string, need: number): void {
  if (need > 255) a.fail(`${what} would need ${need} ports; a node has at most 255`);
  if (a.has('radix') && a.int('radix') < need) a.fail(`radix=${a.int('radix')} is too small: ${what} needs ${need} ports`);
}

function hostName(n: number): string {
  return `host-${n} HCA-1`;
}

// ---- fat trees -------------------------------------------------------------------------------

function fatTree2(a: GeneratorArgs): Fabric {
  const radix = a.has('radix') ? a.int('radix', undefined, 2) : undefined;
  if (radix !== undefined && radix % 2) a.fail(`radix=${radix} must be even`);
  const half = radix !== undefined ? radix / 2 : undefined;
  const leaves = a.int('leaves', radix, 1);
  const spines = a.int('spines', half, 1);
  const hosts = a.int('hosts', half, 0);
  const links = a.int('links', 1, 1);
  const leafPorts = hosts + spines * links;
  const spinePorts = leaves * links;
  checkRadix(a, 'a leaf', leafPorts);
  checkRadix(a, 'a spine', spinePorts);
  const np = radix ?? ports(leafPorts, spinePorts);
  const b = new FabricBuilder();
  const leaf = Array.from({ length: leaves }, (_, i) => b.addSwitch(`sw-l1-${i}`, np));
  const spine = Array.from({ length: spines }, (_, i) => b.addSwitch(`sw-l2-${i}`, np));
  for (let i = 0; i < leaves; i++) {
    for (let j = 0; j < spines; j++) {
      for (let k = 0; k < links; k++) b.link(leaf[i]!, hosts + j * links + k + 1, spine[j]!, i * links + k + 1);
    }
  }
  let n = 0;
  for (let i = 0; i < leaves; i++) for (let h = 0; h < hosts; h++) b.link(b.addCa(hostName(n++)), 1, leaf[i]!, h + 1);
  return b.build();
}

function fatTree3(a: GeneratorArgs): Fabric {
  const radix = a.has('radix') ? a.int('radix', undefined, 2) : undefined;
  if (radix !== undefined && radix % 2) a.fail(`radix=${radix} must be even`);
  const half = radix !== undefined ? radix / 2 : undefined;
  const pods = a.int('pods', radix, 1);
  const leaves = a.int('leaves', half, 1);
  const spines = a.int('spines', half, 1);
  const cores = a.int('cores', half !== undefined ? half * half : undefined, 1);
  const hosts = a.int('hosts', half, 0);
  if (cores % spines) a.fail(`cores=${cores} must be a multiple of spines=${spines} (each spine of a pod reaches its own group of cores)`);
  const group = cores / spines;
  const leafPorts = hosts + spines;
  const spinePorts = leaves + group;
  const corePorts = pods;
  checkRadix(a, 'a leaf', leafPorts);
  checkRadix(a, 'a spine', spinePorts);
  checkRadix(a, 'a core switch', corePorts);
  const np = radix ?? ports(leafPorts, spinePorts, corePorts);
  const b = new FabricBuilder();
  const leaf: number[] = [];
  const spine: number[] = [];
  for (let p = 0; p < pods; p++) for (let i = 0; i < leaves; i++) leaf.push(b.addSwitch(`sw-l1-${p * leaves + i}`, np));
  for (let p = 0; p < pods; p++) for (let j = 0; j < spines; j++) spine.push(b.addSwitch(`sw-l2-${p * spines + j}`, np));
  const core = Array.from({ length: cores }, (_, c) => b.addSwitch(`sw-l3-${c}`, np));
  for (let p = 0; p < pods; p++) {
    for (let i = 0; i < leaves; i++) {
      for (let j = 0; j < spines; j++) b.link(leaf[p * leaves + i]!, hosts + j + 1, spine[p * spines + j]!, i + 1);
    }
    for (let j = 0; j < spines; j++) {
      for (let k = 0; k < group; k++) b.link(spine[p * spines + j]!, leaves + k + 1, core[j * group + k]!, p + 1);
    }
  }
  let n = 0;
  for (const l of leaf) for (let h = 0; h < hosts; h++) b.link(b.addCa(hostName(n++)), 1, l, h + 1);
  return b.build();
}

// ---- torus and mesh --------------------------------------------------------------------------

function grid(a: GeneratorArgs, wrap: boolean): Fabric {
  const dimsText = a.positional ?? a.values.get('dims');
  if (!dimsText) a.fail('missing the dimensions, e.g. 4x4x4');
  if (!/^\d+(x\d+)*$/.test(dimsText)) a.fail(`dimensions "${dimsText}": expected sizes joined by "x", e.g. 4x4 or 4x4x4`);
  const dims = dimsText.split('x').map((d) => parseInt(d, 10));
  if (dims.some((d) => d < 1)) a.fail(`dimensions "${dimsText}": every size must be at least 1`);
  const hosts = a.int('hosts', 1, 0);
  const count = dims.reduce((x, y) => x * y, 1);
  if (count > 1_000_000) a.fail(`${count} switches is too many`);
  const np = hosts + 2 * dims.length;
  checkRadix(a, 'a switch', np);
  const b = new FabricBuilder();
  const coord = (i: number): number[] => {
    const c: number[] = [];
    for (const d of dims) {
      c.push(i % d);
      i = Math.floor(i / d);
    }
    return c;
  };
  const sw = Array.from({ length: count }, (_, i) => b.addSwitch(`sw-${coord(i).join('-')}`, a.has('radix') ? a.int('radix') : np));
  let stride = 1;
  dims.forEach((d, k) => {
    for (let i = 0; i < count; i++) {
      const c = Math.floor(i / stride) % d;
      if (c + 1 < d || (wrap && d > 1)) {
        const j = c + 1 < d ? i + stride : i - c * stride;
        b.link(sw[i]!, hosts + 2 * k + 1, sw[j]!, hosts + 2 * k + 2);
      }
    }
    stride *= d;
  });
  let n = 0;
  for (const s of sw) for (let h = 0; h < hosts; h++) b.link(b.addCa(hostName(n++)), 1, s, h + 1);
  return b.build();
}

// ---- random regular graph --------------------------------------------------------------------

function randomRegular(a: GeneratorArgs): Fabric {
  const n = a.int('switches', undefined, 2);
  const degree = a.int('degree', undefined, 1);
  const hosts = a.int('hosts', 1, 0);
  const seed = a.has('seed') ? a.int('seed') : (a.seed ?? 1);
  if (degree >= n) a.fail(`degree=${degree} must be less than switches=${n}`);
  if ((n * degree) % 2) a.fail(`switches × degree (${n}×${degree}) must be even`);
  if (degree === 1 && n > 2) a.fail('degree=1 cannot connect more than 2 switches');
  const np = hosts + degree;
  checkRadix(a, 'a switch', np);
  const rng = new Rng(seed);
  const rnd = (): number => rng.next();
  const pick = (k: number): number => rng.int(k);
  let edges: Array<[number, number]> = [];
  const key = (x: number, y: number): number => (x < y ? x * n + y : y * n + x);
  if (degree === 2) {
    // A connected 2-regular graph is one cycle: a random cyclic order.
    const order = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = pick(i + 1);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let i = 0; i < n; i++) edges.push([order[i]!, order[(i + 1) % n]!]);
  } else {
    // Start from a connected circulant graph, then randomise it with degree-preserving edge swaps.
    for (let i = 0; i < n; i++) for (let o = 1; o <= Math.floor(degree / 2); o++) edges.push([i, (i + o) % n]);
    if (degree % 2) for (let i = 0; i < n / 2; i++) edges.push([i, i + n / 2]);
    const present = new Set(edges.map(([x, y]) => key(x, y)));
    const swaps = (count: number): void => {
      for (let t = 0; t < count; t++) {
        const i = pick(edges.length);
        const j = pick(edges.length);
        if (i === j) continue;
        const [p, q] = edges[i]!;
        let [r, s] = edges[j]!;
        if (rnd() < 0.5) [r, s] = [s, r];
        if (p === s || r === q || present.has(key(p, s)) || present.has(key(r, q))) continue;
        present.delete(key(p, q));
        present.delete(key(r, s));
        present.add(key(p, s));
        present.add(key(r, q));
        edges[i] = [p, s];
        edges[j] = [r, q];
      }
    };
    const connected = (): boolean => {
      const adj: number[][] = Array.from({ length: n }, () => []);
      for (const [x, y] of edges) {
        adj[x]!.push(y);
        adj[y]!.push(x);
      }
      const seen = new Uint8Array(n);
      const stack = [0];
      seen[0] = 1;
      let count = 1;
      while (stack.length) {
        for (const y of adj[stack.pop()!]!) {
          if (!seen[y]) {
            seen[y] = 1;
            count++;
            stack.push(y);
          }
        }
      }
      return count === n;
    };
    swaps(10 * edges.length);
    for (let round = 0; !connected(); round++) {
      if (round === 50) a.fail(`could not make a connected random ${degree}-regular graph of ${n} switches`);
      swaps(edges.length);
    }
    edges = edges.map(([x, y]): [number, number] => (x < y ? [x, y] : [y, x])).sort((e, f) => e[0] - f[0] || e[1] - f[1]);
  }
  const b = new FabricBuilder();
  const sw = Array.from({ length: n }, (_, i) => b.addSwitch(`sw-${i}`, a.has('radix') ? a.int('radix') : np));
  const next = new Array<number>(n).fill(hosts + 1);
  for (const [x, y] of edges) b.link(sw[x]!, next[x]!++, sw[y]!, next[y]!++);
  let h = 0;
  for (const s of sw) for (let k = 0; k < hosts; k++) b.link(b.addCa(hostName(h++)), 1, s, k + 1);
  return b.build();
}

// ---- dragonfly -------------------------------------------------------------------------------

function dragonfly(a: GeneratorArgs): Fabric {
  const sw = a.int('a', undefined, 1);
  const p = a.int('p', undefined, 0);
  const h = a.int('h', undefined, 1);
  const g = a.int('g', sw * h + 1, 2);
  if (g > sw * h + 1) a.fail(`g=${g} groups cannot all be joined: at most a*h+1 = ${sw * h + 1}`);
  const np = p + (sw - 1) + h;
  checkRadix(a, 'a switch', np);
  const b = new FabricBuilder();
  const node = (grp: number, i: number): number => grp * sw + i;
  for (let grp = 0; grp < g; grp++) for (let i = 0; i < sw; i++) b.addSwitch(`sw-g${grp}-${i}`, a.has('radix') ? a.int('radix') : np);
  // Local: all-to-all inside a group. Port of x towards y: p + 1 + (index of y among the others).
  for (let grp = 0; grp < g; grp++) {
    for (let x = 0; x < sw; x++) {
      for (let y = x + 1; y < sw; y++) b.link(node(grp, x), p + 1 + (y - 1), node(grp, y), p + 1 + x);
    }
  }
  // Global: slot k of a group is switch floor(k/h), global port k%h. Pairs of groups are joined
  // round-robin until the slots run out (exactly one link per pair when g = a*h+1).
  const slots = sw * h;
  const used = new Array<number>(g).fill(0);
  const globalPort = (k: number): number => p + (sw - 1) + (k % h) + 1;
  for (let added = true; added; ) {
    added = false;
    for (let x = 0; x < g; x++) {
      for (let y = x + 1; y < g; y++) {
        if (used[x]! < slots && used[y]! < slots) {
          const kx = used[x]!++;
          const ky = used[y]!++;
          b.link(node(x, Math.floor(kx / h)), globalPort(kx), node(y, Math.floor(ky / h)), globalPort(ky));
          added = true;
        }
      }
    }
  }
  let n = 0;
  for (let s = 0; s < g * sw; s++) for (let k = 0; k < p; k++) b.link(b.addCa(hostName(n++)), 1, s, k + 1);
  return b.build();
}

// ---- registry --------------------------------------------------------------------------------

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
  return { def, args: new GeneratorArgs(spec, kind, values, positional, opts.seed) };
}

/** Build the fabric a generator spec describes. Throws TopologyError for a bad spec. */
export function generateFabric(spec: string, opts: { seed?: number } = {}): Fabric {
  const { def, args } = parseGeneratorSpec(spec, opts);
  return applyHardware(def.build(args), args);
}

/** A named switch or HCA: a generation's bundle of the hardware keys (its ports' speed and width)
 * and the VendorID/DeviceID its NodeInfo reports. */
export interface HardwareModel {
  name: string;
  kind: 'switch' | 'hca';
  /** The speed name of the generation (what `speed=` would say). */
  speed: string;
  width: string;
  vendorId: number;
  deviceId: number;
}

/** NVIDIA (Mellanox, VendorID 0x02c9) switches and HCAs by generation: what `model=` names. The
 * NDR and XDR generations (Quantum-2 / ConnectX-7, Quantum-X800 / ConnectX-8) hide their extended
 * speeds from a PortInfo without AttributeModifier bit 31 (OpenSM issue #38); XDR ports have PortInfo
 * byte 56 and CapabilityMask2 IsExtendedSpeeds2Supported/IsLinkSpeedXDRSupported; HDR and later
 * ports of 4x also do 2x (sim/node.ts). */
export const HARDWARE_GENERATIONS: readonly { generation: string; switch: HardwareModel; hca: HardwareModel }[] = (
  [
    ['QDR', 'InfiniScale-IV', 0xbd36, 'ConnectX-2', 0x673c],
    ['FDR', 'SwitchX-2', 0xc738, 'ConnectX-3', 0x1003],
    ['EDR', 'Switch-IB-2', 0xcf08, 'ConnectX-5', 0x1017],
    ['HDR', 'Quantum', 0xd2f0, 'ConnectX-6', 0x101b],
    ['NDR', 'Quantum-2', 0xd2f2, 'ConnectX-7', 0x1021],
    ['XDR', 'Quantum-X800', 0xd2f4, 'ConnectX-8', 0x1023],
  ] as const
).map(([generation, sw, swId, hca, hcaId]) => ({
  generation,
  switch: { name: sw, kind: 'switch', speed: generation, width: '4x', vendorId: 0x02c9, deviceId: swId },
  hca: { name: hca, kind: 'hca', speed: generation, width: '4x', vendorId: 0x02c9, deviceId: hcaId },
}));

const MODEL_NAMES = HARDWARE_GENERATIONS.flatMap((g) => [g.generation, g.switch.name, g.hca.name]);

/** The README's table of the models (`npm run docs`). */
export function hardwareModelsMarkdown(): string {
  const id = (m: HardwareModel): string => `${m.name} (DeviceID 0x${m.deviceId.toString(16)})`;
  return ['| `model=` | switch | HCA | ports |', '|---|---|---|---|', ...HARDWARE_GENERATIONS.map((g) => `| \`${g.generation.toLowerCase()}\` | ${id(g.switch)} | ${id(g.hca)} | ${g.switch.width} ${g.generation} |`)].join('\n');
}

/**
 * The hardware keys every generator takes: what the ports of each kind of node can do, as
 * ibnetdiscover names widths and speeds. `speed`/`width`: every switch port (default 4x SDR, as
 * ibsim); `leafspeed`/`leafwidth`: the ports of switches with hosts on them; `hostspeed`/
 * `hostwidth`: the hosts' ports. A link trains to the best width and speed both of its ends know,
 * so `speed=NDR,leafspeed=HDR` is HDR leaves under NDR spines. `model`/`leafmodel`/`hostmodel` name
 * the hardware instead (HARDWARE_GENERATIONS): a generation's speed and width, and the NodeInfo IDs
 * of its switch or HCA; a speed or width key given with it wins.
 */
export const HARDWARE_PARAMS: readonly GeneratorParam[] = [
  { name: 'speed', description: `what switch ports can do: ${SPEED_NAMES.join(', ')} (default SDR)` },
  { name: 'width', description: `switch port width: ${WIDTH_NAMES.join(', ')} (default 4x)` },
  { name: 'leafspeed', description: 'speed of the ports of switches with hosts (default: speed)' },
  { name: 'leafwidth', description: 'width of the ports of switches with hosts (default: width)' },
  { name: 'hostspeed', description: 'speed of the hosts\' ports (default: leafspeed)' },
  { name: 'hostwidth', description: 'width of the hosts\' ports (default: leafwidth)' },
  {
    name: 'model',
    description: `the switches' hardware, and the hosts' generation: ${HARDWARE_GENERATIONS.map((g) => `${g.generation} (${g.switch.name} / ${g.hca.name})`).join(', ')}; a generation or a switch name`,
  },
  { name: 'leafmodel', description: 'the hardware of switches with hosts (default: model)' },
  { name: 'hostmodel', description: "the hosts' hardware: a generation or an HCA name (default: leafmodel's generation)" },
];

/** The generation a `model=` value names, or a failure that lists what is valid. */
function modelOf(a: GeneratorArgs, key: string, kind: 'switch' | 'hca'): (typeof HARDWARE_GENERATIONS)[number] | undefined {
  const v = a.values.get(key);
  if (v === undefined) return undefined;
  const lc = v.toLowerCase();
  const g = HARDWARE_GENERATIONS.find((x) => [x.generation, x.switch.name, x.hca.name].some((n) => n.toLowerCase() === lc));
  if (!g) return a.fail(`parameter ${key}=${v}: expected one of ${MODEL_NAMES.join(', ')}`);
  const other = kind === 'switch' ? g.hca : g.switch;
  if (other.name.toLowerCase() === lc) a.fail(`parameter ${key}=${v}: ${other.name} is ${kind === 'switch' ? 'an HCA (hostmodel= names the hosts\')' : 'a switch (model= and leafmodel= name the switches\')'}; ${key}= takes a generation or ${kind === 'switch' ? 'a switch' : 'an HCA'}`);
  return g;
}

function applyHardware(f: Fabric, a: GeneratorArgs): Fabric {
  if (!HARDWARE_PARAMS.some((p) => a.has(p.name))) return f;
  const pick = (name: string, valid: readonly string[], fallback: string): string => {
    const v = a.values.get(name);
    if (v === undefined) return fallback;
    const hit = valid.find((x) => x.toLowerCase() === v.toLowerCase());
    if (!hit) a.fail(`parameter ${name}=${v}: expected one of ${valid.join(', ')}`);
    return hit;
  };
  // each tier: its model (else the one above's), its speed and width (else its model's, else the
  // tier above's)
  const spineModel = modelOf(a, 'model', 'switch');
  const leafModel = modelOf(a, 'leafmodel', 'switch') ?? spineModel;
  const hostModel = modelOf(a, 'hostmodel', 'hca') ?? leafModel;
  const speed = pick('speed', SPEED_NAMES, spineModel?.switch.speed ?? 'SDR');
  const width = pick('width', WIDTH_NAMES, spineModel?.switch.width ?? '4x');
  const leafSpeed = pick('leafspeed', SPEED_NAMES, a.has('leafmodel') ? leafModel!.switch.speed : speed);
  const leafWidth = pick('leafwidth', WIDTH_NAMES, a.has('leafmodel') ? leafModel!.switch.width : width);
  const hostSpeed = pick('hostspeed', SPEED_NAMES, a.has('hostmodel') ? hostModel!.hca.speed : leafSpeed);
  const hostWidth = pick('hostwidth', WIDTH_NAMES, a.has('hostmodel') ? hostModel!.hca.width : leafWidth);
  const isSw = (n: FabricNode): boolean => n.type === NodeType.Switch;
  const leaf = f.nodes.map((n) => isSw(n) && n.ports.some((p, pn) => pn > 0 && p?.peer && !isSw(f.nodes[p.peer.node]!)));
  f.nodes.forEach((n, i) => {
    const model = n.type === NodeType.CA ? hostModel?.hca : !isSw(n) ? undefined : leaf[i] ? leafModel?.switch : spineModel?.switch;
    if (model) {
      n.vendorId = model.vendorId;
      n.deviceId = model.deviceId;
    }
    n.ports.forEach((p, pn) => {
      if (!p || (isSw(n) && pn === 0)) return;
      p.speed = !isSw(n) ? hostSpeed : leaf[i] ? leafSpeed : speed;
      p.width = !isSw(n) ? hostWidth : leaf[i] ? leafWidth : width;
    });
  });
  return f;
}

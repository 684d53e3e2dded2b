/** What every topology generator builds with (model/generators.ts): the FabricBuilder that assigns
 * GUIDs as ibsim does, the parsed parameters of a spec, and the small helpers the families share. */
import { NodeType } from '../../wire/mad.js';
import type { Fabric, FabricNode, NodeKind } from '../fabric.js';
import { TopologyError } from '../errors.js';
import { guidAfter, initialGuids, portGuid } from '../ibsim-guids.js';
import { GUID_MASK } from '../../util/guid.js';

/** Builds a Fabric node by node, assigning GUIDs the way ibsim does for a .net file. */
export class FabricBuilder {
  private readonly guids = initialGuids();
  private readonly nodes: FabricNode[] = [];

  /** Set the next GUID for a node type (like a `switchguid=` / `caguid=` line). */
  setNextGuid(type: NodeKind, guid: bigint): void {
    this.guids[type] = guid & GUID_MASK;
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
    /** The generator's description (describeGenerator), shown after every failure. */
    readonly usage?: string,
  ) {}

  fail(detail: string): never {
    throw new TopologyError(this.spec, 0, this.usage ? `${detail}\n${this.usage}` : detail);
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

export function ports(...needs: number[]): number {
  return Math.max(1, ...needs);
}

export function checkRadix(a: GeneratorArgs, what: string, need: number): void {
  if (need > 255) a.fail(`${what} would need ${need} ports; a node has at most 255`);
  if (a.has('radix') && a.int('radix') < need) a.fail(`radix=${a.int('radix')} is too small: ${what} needs ${need} ports`);
}

export function hostName(n: number): string {
  return `host-${n} HCA-1`;
}

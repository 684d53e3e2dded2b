/**
 * Fabrics of several subnets joined by IB routers: the `gen:subnets` generator, the split of a
 * fabric into its subnets (connected parts that no router joins), the subnet prefix each gets, and
 * the one router-selection hash the simulated routers and the SAs share (docs/routers.md).
 */
import { NodeType } from '../wire/mad.js';
import type { Fabric } from './fabric.js';
import { FabricBuilder, type GeneratorArgs } from './generators/builder.js';

/** The prefix of subnet `i` of a multi-subnet fabric: fec0:0000:0000:<i> (site-local, distinct). */
export function subnetPrefixOf(i: number): bigint {
  return 0xfec0_0000_0000_0000n + BigInt(i);
}

export const SUBNET_SHAPES = ['line', 'ring', 'star'] as const;
export type SubnetShape = (typeof SUBNET_SHAPES)[number];

/** Pairs of neighbouring subnets of a shape. */
export function subnetPairs(count: number, shape: SubnetShape): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  if (shape === 'star') for (let i = 1; i < count; i++) out.push([0, i]);
  else for (let i = 0; i + 1 < count; i++) out.push([i, i + 1]);
  if (shape === 'ring' && count > 2) out.push([count - 1, 0]);
  return out;
}

/**
 * `gen:subnets:count=N,shape=line|ring|star,routers=R,leaves=L,spines=S,hosts=H`: N two-level fat
 * trees (every leaf linked to every spine, H hosts per leaf) and R two-port routers between each
 * pair of neighbouring subnets (port 1 in the lower-numbered subnet, port 2 in the other), each on a
 * leaf of its own (round robin over the leaves). Names: `s<i>-spine-<j>`, `s<i>-leaf-<j>`,
 * `s<i>-host-<n> HCA-1`, `router-<a>-<b>-<k>`. Routers' GUIDs start at 0x300000 (ibsim's router
 * counter starts at 0, which is no valid GUID).
 */
export function subnetsFabric(a: GeneratorArgs): Fabric {
  const count = a.int('count', 2, 1);
  const shapeName = a.values.get('shape') ?? 'line';
  if (!(SUBNET_SHAPES as readonly string[]).includes(shapeName)) a.fail(`shape=${shapeName}: one of ${SUBNET_SHAPES.join(', ')}`);
  const shape = shapeName as SubnetShape;
  const routers = a.int('routers', 1, 1);
  const leaves = a.int('leaves', 2, 1);
  const spines = a.int('spines', 1, 1);
  const hosts = a.int('hosts', 2, 0);
  const pairs = subnetPairs(count, shape);
  // routers attached to each subnet, and the leaf each one goes on
  const perSubnet = new Array<number>(count).fill(0);
  for (const [x, y] of pairs) {
    perSubnet[x]! += routers;
    perSubnet[y]! += routers;
  }
  const extra = Math.max(0, ...perSubnet.map((n) => Math.ceil(n / leaves)));
  const leafPorts = spines + hosts + extra;
  if (leafPorts > 255 || leaves > 255) a.fail(`a leaf would need ${leafPorts} ports and a spine ${leaves}; a node has at most 255`);
  const b = new FabricBuilder();
  b.setNextGuid(NodeType.Router, 0x300000n);
  const spineIdx: number[][] = [];
  const leafIdx: number[][] = [];
  for (let s = 0; s < count; s++) {
    spineIdx.push(Array.from({ length: spines }, (_, j) => b.addSwitch(`s${s}-spine-${j}`, leaves)));
    leafIdx.push(Array.from({ length: leaves }, (_, j) => b.addSwitch(`s${s}-leaf-${j}`, leafPorts)));
    for (let l = 0; l < leaves; l++) for (let j = 0; j < spines; j++) b.link(leafIdx[s]![l]!, j + 1, spineIdx[s]![j]!, l + 1);
  }
  for (let s = 0; s < count; s++) {
    let n = 0;
    for (let l = 0; l < leaves; l++) for (let h = 0; h < hosts; h++) b.link(b.addCa(`s${s}-host-${n++} HCA-1`), 1, leafIdx[s]![l]!, spines + h + 1);
  }
  const used = new Array<number>(count).fill(0);
  const attach = (s: number): [number, number] => {
    const k = used[s]!++;
    return [leafIdx[s]![k % leaves]!, spines + hosts + 1 + Math.floor(k / leaves)];
  };
  for (const [x, y] of pairs) {
    for (let k = 0; k < routers; k++) {
      const r = b.addNode(NodeType.Router, `router-${x}-${y}-${k}`, 2);
      const [lx, px] = attach(x);
      const [ly, py] = attach(y);
      b.link(r, 1, lx, px);
      b.link(r, 2, ly, py);
    }
  }
  return b.build();
}

/** One subnet of a fabric: its nodes (switches and CAs; routers belong to none), its prefix and
 * the router ports in it. */
export interface SubnetPart {
  index: number;
  prefix: bigint;
  nodes: number[];
  /** The first CA of the subnet (by node index): where its SM attaches by default. */
  smNode: number;
  /** Router ports cabled into this subnet: node index and port number. */
  routerPorts: Array<{ node: number; port: number }>;
}

/** Split a fabric into subnets: the connected parts when routers are not crossed. A fabric without
 * routers is one subnet. Subnets without a CA (nowhere for an SM) are left out. */
export function subnetsOf(fabric: Fabric): SubnetPart[] {
  const comp = new Array<number>(fabric.nodes.length).fill(-1);
  const parts: SubnetPart[] = [];
  fabric.nodes.forEach((n, start) => {
    if (n.type === NodeType.Router || comp[start]! >= 0) return;
    const idx = parts.length;
    const part: SubnetPart = { index: idx, prefix: subnetPrefixOf(idx), nodes: [], smNode: -1, routerPorts: [] };
    const queue = [start];
    comp[start] = idx;
    while (queue.length) {
      const u = queue.shift()!;
      part.nodes.push(u);
      for (const p of fabric.nodes[u]!.ports) {
        if (!p?.peer) continue;
        const v = p.peer.node;
        if (fabric.nodes[v]!.type === NodeType.Router) {
          part.routerPorts.push({ node: v, port: p.peer.port });
          continue;
        }
        if (comp[v]! < 0) {
          comp[v] = idx;
          queue.push(v);
        }
      }
    }
    part.nodes.sort((x, y) => x - y);
    part.smNode = part.nodes.find((i) => fabric.nodes[i]!.type === NodeType.CA) ?? -1;
    parts.push(part);
  });
  return parts.filter((p) => p.smNode >= 0).map((p, i) => ({ ...p, index: i, prefix: subnetPrefixOf(i) }));
}

/** Does the fabric hold routers that join two or more subnets? */
export function isMultiSubnet(fabric: Fabric): boolean {
  return subnetsOf(fabric).length > 1 && fabric.nodes.some((n) => n.type === NodeType.Router);
}

/**
 * The router-selection hash: FNV-1a over the 16 bytes of the SGID and the 8 bytes of the DGID's
 * prefix, then murmur3's finaliser. A router with several equal next hops to a prefix, and an SA with several routers to a
 * prefix, pick choice `routerHash(sgid, prefix) % n` of them in node-GUID order, so every packet
 * of one source towards one subnet takes the same routers (its SA requests included).
 */
export function routerHash(sgid: bigint, dgidPrefix: bigint): number {
  let h = 0x811c9dc5;
  const eat = (v: bigint, bytes: number): void => {
    for (let i = bytes - 1; i >= 0; i--) {
      h ^= Number((v >> BigInt(i * 8)) & 0xffn);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  };
  eat(sgid, 16);
  eat(dgidPrefix, 8);
  // murmur3's finaliser: FNV's low bits follow the parity of the input bytes (GUIDs two apart)
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** What a subnet's SM learnt of one router port in its subnet (sm/router-tables.ts reads it with
 * the router's vendor attributes; the SA answers inter-subnet paths from it: sa/inter-subnet.ts). */
export interface RouterPortView {
  nodeGuid: bigint;
  desc: string;
  /** The router port in this subnet: GUID, number, LID. */
  portGuid: bigint;
  portNum: number;
  lid: number;
  /** Every port of the router: its GUID, subnet prefix, LID (in that subnet) and PortState. */
  ports: Array<{ portNum: number; portGuid: bigint; prefix: bigint; lid: number; state: number }>;
  /** The prefixes the router reaches from this port, with the routers crossed (1: its own port's subnet). */
  reach: Array<{ prefix: bigint; hops: number }>;
}

/**
 * A stable JSON form of a Fabric (for `ibsm discover --json`) and its parser, plus helpers to
 * compare fabrics independently of node order.
 *
 * Shape (keys always in this order; GUIDs as "0x%016x"; only ports that exist are listed):
 * {"format":"ibsm-fabric","version":1,"nodes":[{"type":"Switch"|"CA"|"Router","guid":"0x...",
 *  "systemImageGuid":"0x...","desc":"...","numPorts":n,"vendorId":n,"deviceId":n,
 *  "ports":[{"num":p,"guid":"0x...","lid"?:n,"lmc"?:n,"width"?:"4x","speed"?:"SDR",
 *            "peer"?:{"node":<index into nodes>,"port":p}}]}]}
 */
import { NodeType } from '../wire/mad.js';
import { checkFabric, type Fabric, type FabricNode, type FabricPort, type NodeKind } from './fabric.js';
import { TopologyError } from './errors.js';
import { formatGuid } from '../util/guid.js';

export const FABRIC_JSON_FORMAT = 'ibsm-fabric';
export const FABRIC_JSON_VERSION = 1;

const TYPE_NAME: Record<NodeKind, string> = { [NodeType.CA]: 'CA', [NodeType.Switch]: 'Switch', [NodeType.Router]: 'Router' };
const TYPE_OF: Record<string, NodeKind> = { CA: NodeType.CA, Switch: NodeType.Switch, Router: NodeType.Router };

interface JsonPort {
  num: number;
  guid: string;
  lid?: number;
  lmc?: number;
  width?: string;
  speed?: string;
  peer?: { node: number; port: number };
}

interface JsonNode {
  type: string;
  guid: string;
  systemImageGuid: string;
  desc: string;
  numPorts: number;
  vendorId: number;
  deviceId: number;
  ports: JsonPort[];
}

/** Plain-object form (what fabricToJson stringifies). */
export function fabricToJsonValue(f: Fabric): { format: string; version: number; nodes: JsonNode[] } {
  return {
    format: FABRIC_JSON_FORMAT,
    version: FABRIC_JSON_VERSION,
    nodes: f.nodes.map((n) => ({
      type: TYPE_NAME[n.type] ?? String(n.type),
      guid: formatGuid(n.guid),
      systemImageGuid: formatGuid(n.systemImageGuid),
      desc: n.desc,
      numPorts: n.numPorts,
      vendorId: n.vendorId,
      deviceId: n.deviceId,
      ports: n.ports.flatMap((p): JsonPort[] => {
        if (!p) return [];
        const o: JsonPort = { num: p.num, guid: formatGuid(p.guid) };
        if (p.lid !== undefined) o.lid = p.lid;
        if (p.lmc !== undefined) o.lmc = p.lmc;
        if (p.width !== undefined) o.width = p.width;
        if (p.speed !== undefined) o.speed = p.speed;
        if (p.peer) o.peer = { node: p.peer.node, port: p.peer.port };
        return [o];
      }),
    })),
  };
}

/** Serialize; `indent` as for JSON.stringify (default 2). */
export function fabricToJson(f: Fabric, indent: number | undefined = 2): string {
  return JSON.stringify(fabricToJsonValue(f), null, indent) + '\n';
}

/** Parse the JSON form back. Throws only TopologyError (line 0; the detail names the JSON path). */
export function parseFabricJson(text: string, fileName = '<json>'): Fabric {
  const fail = (path: string, what: string): never => {
    throw new TopologyError(fileName, 0, `${path}: ${what}`);
  };
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    return fail('(document)', `not valid JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const obj = (v: unknown, path: string): Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : fail(path, 'expected an object');
  const int = (v: unknown, path: string, lo: number, hi: number): number =>
    typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi ? v : fail(path, `expected an integer ${lo}..${hi}, got ${JSON.stringify(v)}`);
  const str = (v: unknown, path: string): string => (typeof v === 'string' ? v : fail(path, `expected a string, got ${JSON.stringify(v)}`));
  const guid = (v: unknown, path: string): bigint => {
    const s = str(v, path);
    return /^0x[0-9a-fA-F]{1,16}$/.test(s) ? BigInt(s) : fail(path, `expected a GUID "0x<up to 16 hex digits>", got ${JSON.stringify(s)}`);
  };
  const root = obj(doc, '(document)');
  if (root.format !== FABRIC_JSON_FORMAT) fail('format', `expected "${FABRIC_JSON_FORMAT}", got ${JSON.stringify(root.format)}`);
  if (root.version !== FABRIC_JSON_VERSION) fail('version', `this reader understands version ${FABRIC_JSON_VERSION}, got ${JSON.stringify(root.version)}`);
  if (!Array.isArray(root.nodes)) fail('nodes', 'expected an array');
  const jnodes = root.nodes as unknown[];
  const nodes: FabricNode[] = jnodes.map((jv, i) => {
    const at = `nodes[${i}]`;
    const j = obj(jv, at);
    const typeName = str(j.type, `${at}.type`);
    const type = TYPE_OF[typeName];
    if (type === undefined) fail(`${at}.type`, `expected "Switch", "CA" or "Router", got ${JSON.stringify(typeName)}`);
    const numPorts = int(j.numPorts, `${at}.numPorts`, 1, 255);
    if (!Array.isArray(j.ports)) fail(`${at}.ports`, 'expected an array');
    const ports: (FabricPort | undefined)[] = [];
    (j.ports as unknown[]).forEach((pv, k) => {
      const pat = `${at}.ports[${k}]`;
      const jp = obj(pv, pat);
      const num = int(jp.num, `${pat}.num`, type === NodeType.Switch ? 0 : 1, numPorts);
      if (ports[num]) fail(`${pat}.num`, `port ${num} is listed twice`);
      const p: FabricPort = { num, guid: guid(jp.guid, `${pat}.guid`) };
      if (jp.lid !== undefined) p.lid = int(jp.lid, `${pat}.lid`, 0, 0xffff);
      if (jp.lmc !== undefined) p.lmc = int(jp.lmc, `${pat}.lmc`, 0, 7);
      if (jp.width !== undefined) p.width = str(jp.width, `${pat}.width`);
      if (jp.speed !== undefined) p.speed = str(jp.speed, `${pat}.speed`);
      if (jp.peer !== undefined) {
        const pe = obj(jp.peer, `${pat}.peer`);
        p.peer = { node: int(pe.node, `${pat}.peer.node`, 0, jnodes.length - 1), port: int(pe.port, `${pat}.peer.port`, 0, 255) };
      }
      ports[num] = p;
    });
    return {
      type,
      guid: guid(j.guid, `${at}.guid`),
      systemImageGuid: guid(j.systemImageGuid, `${at}.systemImageGuid`),
      desc: str(j.desc, `${at}.desc`),
      numPorts,
      vendorId: int(j.vendorId, `${at}.vendorId`, 0, 0xffffff),
      deviceId: int(j.deviceId, `${at}.deviceId`, 0, 0xffff),
      ports,
    };
  });
  const fabric = { nodes };
  const problems = checkFabric(fabric);
  if (problems.length) fail('nodes', `inconsistent links: ${problems.slice(0, 5).join('; ')}${problems.length > 5 ? ` (and ${problems.length - 5} more)` : ''}`);
  return fabric;
}

/** The same fabric with nodes sorted by (type, GUID) and peers renumbered: equal fabrics compare
 * equal under deep equality whatever order they were built or discovered in. */
export function canonicalFabric(f: Fabric): Fabric {
  const order = f.nodes.map((_, i) => i).sort((a, b) => {
    const x = f.nodes[a]!;
    const y = f.nodes[b]!;
    return x.type - y.type || (x.guid < y.guid ? -1 : x.guid > y.guid ? 1 : a - b);
  });
  const newIndex = new Array<number>(f.nodes.length);
  order.forEach((old, i) => (newIndex[old] = i));
  return {
    nodes: order.map((old) => {
      const n = f.nodes[old]!;
      return {
        ...n,
        ports: n.ports.map((p) => (p ? { ...p, ...(p.peer ? { peer: { node: newIndex[p.peer.node]!, port: p.peer.port } } : {}) } : undefined)),
      };
    }),
  };
}

/** Human-readable differences between two fabrics, ignoring node order (empty when equal). */
export function diffFabrics(a: Fabric, b: Fabric, limit = 20): string[] {
  const ja = fabricToJsonValue(canonicalFabric(a)).nodes;
  const jb = fabricToJsonValue(canonicalFabric(b)).nodes;
  const out: string[] = [];
  const byGuid = (ns: JsonNode[]): Map<string, JsonNode> => new Map(ns.map((n) => [`${n.type} ${n.guid}`, n]));
  const ma = byGuid(ja);
  const mb = byGuid(jb);
  const name = (ns: JsonNode[], ref?: { node: number; port: number }): string => (ref ? `${ns[ref.node]?.guid}[${ref.port}]` : 'none');
  for (const [k, na] of ma) {
    const nb = mb.get(k);
    if (!nb) {
      out.push(`only in first: ${k} "${na.desc}"`);
      continue;
    }
    for (const f of ['systemImageGuid', 'desc', 'numPorts', 'vendorId', 'deviceId'] as const) {
      if (na[f] !== nb[f]) out.push(`${k}: ${f} ${JSON.stringify(na[f])} vs ${JSON.stringify(nb[f])}`);
    }
    const pa = new Map(na.ports.map((p) => [p.num, p]));
    const pb = new Map(nb.ports.map((p) => [p.num, p]));
    for (const num of new Set([...pa.keys(), ...pb.keys()])) {
      const x = pa.get(num);
      const y = pb.get(num);
      if (!x || !y) {
        out.push(`${k} port ${num}: ${x ? 'only in first' : 'only in second'}`);
        continue;
      }
      const sx = JSON.stringify({ ...x, peer: name(ja, x.peer) });
      const sy = JSON.stringify({ ...y, peer: name(jb, y.peer) });
      if (sx !== sy) out.push(`${k} port ${num}: ${sx} vs ${sy}`);
    }
  }
  for (const [k, nb] of mb) if (!ma.has(k)) out.push(`only in second: ${k} "${nb.desc}"`);
  return out.slice(0, limit);
}

/**
 * ibnetdiscover's topology text format: a writer that prints exactly what ibnetdiscover (rdma-core
 * infiniband-diags, default options, no node-name map) prints for a fabric, and a reader (the
 * ibsim .net parser, which reads this format too).
 *
 * Node order follows libibnetdisc: nodes are discovered by a FIFO of SMP queries starting at the
 * source port (NodeInfo → for a new switch PortInfo 0 → PortInfo 1..N → NodeInfo through every
 * linked switch port; CAs and routers are not crossed), and each type list is printed newest first.
 * Only discovered nodes and links are printed.
 */
import { NodeType } from '../wire/mad.js';
import type { Fabric, FabricNode } from './fabric.js';
import { parseNetText, type ParsedTopology } from './netfile.js';
import { TopologyError } from './errors.js';
import { guidHex } from '../util/guid.js';

export { TopologyError } from './errors.js';

export interface IbnetdiscoverOptions {
  /** Node the discovery starts from: an index into fabric.nodes, or a node GUID. Default: node 0
   * (ibsim attaches clients to the first node of its topology file by default). */
  sourceNode?: number | bigint;
  /** Port of the source node (default: 0 for a switch, else its lowest-numbered port). */
  sourcePort?: number;
  /** Time for the "generated on" line: a Date (printed like C ctime() in local time) or the
   * exact text to print. Default: now. */
  timestamp?: Date | string;
  /** Switches (node indices) whose SwitchInfo says "enhanced port 0" (Fabric has no field for it;
   * parseNetText reports them in `enhancedPort0`). Default: none ("base port 0"). */
  enhancedPort0?: Iterable<number>;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** C ctime() without the trailing newline, e.g. "Sun Nov  9 21:29:09 2026". */
export function ctime(d: Date): string {
  const p2 = (n: number): string => String(n).padStart(2, '0');
  return `${DAYS[d.getDay()]} ${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${p2(d.getHours())}:${p2(d.getMinutes())}:${p2(d.getSeconds())} ${d.getFullYear()}`;
}

/** ibnetdiscover's clean_nodedesc(): at most 63 bytes, non-printable bytes shown as blanks. */
export function cleanNodeDesc(desc: string): string {
  const bytes = Buffer.from(desc, 'utf8').subarray(0, 63);
  let out = '';
  for (const b of bytes) {
    if (b === 0) break;
    out += b >= 0x20 && b <= 0x7e ? String.fromCharCode(b) : ' ';
  }
  return out;
}

const hex = (g: bigint | number): string => g.toString(16);

export interface Discovery {
  /** Node indices in the order libibnetdisc creates them. */
  order: number[];
  /** "node:port" keys of the ports linked during discovery (both ends of every found link). */
  linked: Set<string>;
  sourceNode: number;
  sourcePort: number;
}

const key = (node: number, port: number): string => `${node}:${port}`;

/** Which nodes and links ibnetdiscover finds from a source port, in libibnetdisc's order. */
export function simulateDiscovery(f: Fabric, opts: Pick<IbnetdiscoverOptions, 'sourceNode' | 'sourcePort'> = {}): Discovery {
  let src: number;
  if (typeof opts.sourceNode === 'bigint') {
    src = f.nodes.findIndex((n) => n.guid === opts.sourceNode);
    if (src < 0) throw new RangeError(`no node has GUID 0x${hex(opts.sourceNode)}`);
  } else src = opts.sourceNode ?? 0;
  const sn = f.nodes[src];
  if (!sn) throw new RangeError(`source node ${src} does not exist (the fabric has ${f.nodes.length} nodes)`);
  const srcPort = opts.sourcePort ?? (sn.type === NodeType.Switch ? 0 : sn.ports.findIndex((p, i) => i > 0 && p !== undefined));
  if (!sn.ports[srcPort] || (sn.type !== NodeType.Switch && srcPort === 0)) throw new RangeError(`source node ${src} has no port ${srcPort}`);

  type Ev = { k: 0; node: number; port: number; from?: { node: number; port: number } } | { k: 1; node: number } | { k: 2; node: number; port: number };
  const q: Ev[] = [{ k: 0, node: src, port: srcPort }];
  const known = new Uint8Array(f.nodes.length);
  const order: number[] = [];
  const linked = new Set<string>();
  for (let h = 0; h < q.length; h++) {
    const e = q[h]!;
    const n = f.nodes[e.node]!;
    const sw = n.type === NodeType.Switch;
    if (e.k === 0) {
      if (!known[e.node]) {
        known[e.node] = 1;
        order.push(e.node);
        if (sw) q.push({ k: 1, node: e.node });
      }
      if (e.from) {
        linked.add(key(e.node, e.port));
        linked.add(key(e.from.node, e.from.port));
      }
      if (!sw) q.push({ k: 2, node: e.node, port: e.port });
    } else if (e.k === 1) {
      for (let p = 1; p <= n.numPorts; p++) q.push({ k: 2, node: e.node, port: p });
    } else {
      const peer = n.ports[e.port]?.peer;
      if (e.port === 0 || !peer) continue;
      // Switch ports are crossed; a CA or router only through the port discovery started from.
      if (sw || (e.node === src && e.port === srcPort)) q.push({ k: 0, node: peer.node, port: peer.port, from: { node: e.node, port: e.port } });
    }
  }
  return { order, linked, sourceNode: src, sourcePort: srcPort };
}

function nodeName(n: FabricNode): string {
  const c = n.type === NodeType.Switch ? 'S' : n.type === NodeType.CA ? 'H' : n.type === NodeType.Router ? 'R' : '?';
  return `"${c}-${guidHex(n.guid)}"`;
}

/** Print a fabric exactly as ibnetdiscover prints it (default options). */
export function formatIbnetdiscover(f: Fabric, opts: IbnetdiscoverOptions = {}): string {
  const d = simulateDiscovery(f, opts);
  const src = f.nodes[d.sourceNode]!;
  const ts = typeof opts.timestamp === 'string' ? opts.timestamp : ctime(opts.timestamp ?? new Date());
  const out: string[] = [];
  out.push(`#\n# Topology file: generated on ${ts}\n#\n`);
  out.push(`# Initiated from node ${guidHex(src.guid)} port ${guidHex(src.ports[d.sourcePort]!.guid)}\n`);

  const lidOf = (ni: number, p: number): number => {
    const n = f.nodes[ni]!;
    return (n.type === NodeType.Switch ? n.ports[0]?.lid : n.ports[p]?.lid) ?? 0;
  };
  const rate = (ni: number, p: number): string => {
    const port = f.nodes[ni]!.ports[p]!;
    return `${port.width ?? '??'}${port.speed ?? '???'}`;
  };
  const ids = (n: FabricNode): void => {
    out.push(`\nvendid=0x${hex(n.vendorId)}\ndevid=0x${hex(n.deviceId)}\n`);
    if (n.systemImageGuid) out.push(`sysimgguid=0x${hex(n.systemImageGuid)}\n`);
  };
  const enhanced = new Set(opts.enhancedPort0 ?? []);
  const byType = (t: number): number[] => d.order.filter((i) => f.nodes[i]!.type === t).reverse();

  for (const ni of byType(NodeType.Switch)) {
    const n = f.nodes[ni]!;
    ids(n);
    out.push(`switchguid=0x${hex(n.guid)}(${hex(n.ports[0]?.guid ?? n.guid)})\n`);
    out.push(`Switch\t${n.numPorts} ${nodeName(n)}\t\t# "${cleanNodeDesc(n.desc)}" ${enhanced.has(ni) ? 'enhanced' : 'base'} port 0 lid ${n.ports[0]?.lid ?? 0} lmc ${n.ports[0]?.lmc ?? 0}\n`);
    for (let p = 1; p <= n.numPorts; p++) {
      const peer = n.ports[p]?.peer;
      if (!peer || !d.linked.has(key(ni, p))) continue;
      const r = f.nodes[peer.node]!;
      const rguid = r.type !== NodeType.Switch ? `(${hex(r.ports[peer.port]!.guid)}) ` : '';
      out.push(`[${p}]\t${nodeName(r)}[${peer.port}]${rguid}\t\t# "${cleanNodeDesc(r.desc)}" lid ${lidOf(peer.node, peer.port)} ${rate(ni, p)}\n`);
    }
  }
  for (const t of [NodeType.CA, NodeType.Router]) {
    for (const ni of byType(t)) {
      const n = f.nodes[ni]!;
      ids(n);
      out.push(`${t === NodeType.CA ? 'ca' : 'rt'}guid=0x${hex(n.guid)}\n`);
      out.push(`${t === NodeType.CA ? 'Ca' : 'Rt'}\t${n.numPorts} ${nodeName(n)}\t\t# "${cleanNodeDesc(n.desc)}"\n`);
      for (let p = 1; p <= n.numPorts; p++) {
        const port = n.ports[p];
        const peer = port?.peer;
        if (!port || !peer || !d.linked.has(key(ni, p))) continue;
        const r = f.nodes[peer.node]!;
        const rguid = r.type !== NodeType.Switch ? ` (${hex(r.ports[peer.port]!.guid)}) ` : '';
        out.push(
          `[${p}](${hex(port.guid)}) \t${nodeName(r)}[${peer.port}]${rguid}\t\t# lid ${port.lid ?? 0} lmc ${port.lmc ?? 0} "${cleanNodeDesc(r.desc)}" lid ${lidOf(peer.node, peer.port)} ${rate(ni, p)}\n`,
        );
      }
    }
  }
  return out.join('');
}

/** Read ibnetdiscover output (the same parser as ibsim's .net files). Throws only TopologyError. */
export function parseIbnetdiscover(text: string, fileName = '<ibnetdiscover>'): Fabric {
  return parseIbnetdiscoverFull(text, fileName).fabric;
}

/** As parseIbnetdiscover, with the parser's side results (node ids, warnings) and the GUIDs of
 * the "Initiated from node ... port ..." line when present. */
export function parseIbnetdiscoverFull(text: string, fileName = '<ibnetdiscover>'): ParsedTopology & { source?: { node: bigint; port: bigint } } {
  const parsed = parseNetText(text, {
    fileName,
    readInclude: (name) => {
      throw new TopologyError(fileName, 0, `ibnetdiscover text cannot include files (include "${name}")`);
    },
  });
  const m = /^# Initiated from node ([0-9a-fA-F]+) port ([0-9a-fA-F]+)/m.exec(text);
  return m ? { ...parsed, source: { node: BigInt('0x' + m[1]!), port: BigInt('0x' + m[2]!) } } : parsed;
}

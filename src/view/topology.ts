/**
 * A picture of the fabric, without I/O: the nodes by tier (hosts at the bottom, then the switches
 * they hang off, then each switch tier above), hosts grouped under their switch, every link with
 * the routes it carries (routes per link as everywhere: routing/incremental-intact.ts
 * `routesPerLink`, given by the caller; a link shows its busier direction), and links that went down since a reference fabric marked. Rendered as JSON,
 * as Graphviz DOT, and as SVG with its own layered layout (no external binaries).
 */
import { isSwitch, type Fabric } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';

export interface ViewNode {
  /** The node GUID as 16 hex digits (ids in DOT and SVG). */
  id: string;
  kind: 'switch' | 'ca' | 'router';
  desc: string;
  guid: bigint;
  /** 0 for CAs and routers, 1 for switches with an end node attached, then one more per switch hop. */
  tier: number;
  /** A switch's LID, a CA's first port LID. */
  lid?: number;
  /** The switch a CA hangs off (its id), for grouping. */
  attachedTo?: string;
}

export interface ViewLink {
  a: { node: string; port: number };
  b: { node: string; port: number };
  width?: string;
  speed?: string;
  /** CA destinations routed over the link, a → b plus b → a (from the switches' tables). */
  routes: number;
  /** The link is in the reference fabric but not in the current one. */
  down?: boolean;
}

export interface TopologyView {
  nodes: ViewNode[];
  links: ViewLink[];
  /** The most routes on any link (0 without tables). */
  maxRoutes: number;
  /** The mean routes per directed switch-to-switch link (0 without tables): `ibsm status`'s and
   * the metrics' mean. */
  meanRoutes: number;
}

export interface ViewOptions {
  /** Routes per link (routing/incremental-intact.ts `routesPerLink`): CA-to-CA routes over each
   * directed switch-to-switch link, by `<switch GUID>:<port>` it leaves by. Host links carry none
   * in this count (0). */
  routes?: ReadonlyMap<string, number>;
  /** An earlier fabric: its links missing from this one are shown as down. */
  reference?: Fabric;
}

const hex = (g: bigint): string => g.toString(16).padStart(16, '0');
const kindOf = (t: number): ViewNode['kind'] => (t === NodeType.Switch ? 'switch' : t === NodeType.Router ? 'router' : 'ca');
const linkKey = (ga: bigint, pa: number, gb: bigint, pb: number): string => (ga < gb || (ga === gb && pa <= pb) ? `${ga}:${pa}-${gb}:${pb}` : `${gb}:${pb}-${ga}:${pa}`);

export function topologyView(f: Fabric, o: ViewOptions = {}): TopologyView {
  const tier = new Array<number>(f.nodes.length).fill(0);
  // switches: 1 next to an end node, then BFS upward
  const queue: number[] = [];
  f.nodes.forEach((n, i) => {
    if (!isSwitch(n)) return;
    tier[i] = 0;
    if (n.ports.some((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!))) {
      tier[i] = 1;
      queue.push(i);
    }
  });
  for (let h = 0; h < queue.length; h++) {
    const i = queue[h]!;
    for (const p of f.nodes[i]!.ports) {
      const j = p?.peer?.node;
      if (j === undefined || !isSwitch(f.nodes[j]!) || tier[j]! > 0) continue;
      tier[j] = tier[i]! + 1;
      queue.push(j);
    }
  }
  f.nodes.forEach((n, i) => {
    if (isSwitch(n) && tier[i] === 0) tier[i] = 1; // a switch no end node reaches
  });
  const nodes: ViewNode[] = f.nodes.map((n, i) => {
    const sw = isSwitch(n);
    const attach = sw ? undefined : n.ports.find((p) => p?.peer)?.peer;
    const lid = sw ? n.ports[0]?.lid : n.ports.find((p) => p?.lid)?.lid;
    return {
      id: hex(n.guid),
      kind: kindOf(n.type),
      desc: n.desc,
      guid: n.guid,
      tier: tier[i]!,
      ...(lid ? { lid } : {}),
      ...(attach ? { attachedTo: hex(f.nodes[attach.node]!.guid) } : {}),
    };
  });
  // a link's routes: its busier direction
  const routesOf = (a: bigint, pa: number, b: bigint, pb: number): number => Math.max(o.routes?.get(`${a}:${pa}`) ?? 0, o.routes?.get(`${b}:${pb}`) ?? 0);
  const links: ViewLink[] = [];
  const seen = new Set<string>();
  f.nodes.forEach((n) => {
    for (const p of n.ports) {
      if (!p?.peer || p.num === 0) continue;
      const m = f.nodes[p.peer.node]!;
      const k = linkKey(n.guid, p.num, m.guid, p.peer.port);
      if (seen.has(k)) continue;
      seen.add(k);
      links.push({ a: { node: hex(n.guid), port: p.num }, b: { node: hex(m.guid), port: p.peer.port }, ...(p.width ? { width: p.width } : {}), ...(p.speed ? { speed: p.speed } : {}), routes: routesOf(n.guid, p.num, m.guid, p.peer.port) });
    }
  });
  const present = new Set(f.nodes.map((n) => n.guid));
  if (o.reference) {
    const r = o.reference;
    r.nodes.forEach((n) => {
      for (const p of n.ports) {
        if (!p?.peer || p.num === 0) continue;
        const m = r.nodes[p.peer.node]!;
        const k = linkKey(n.guid, p.num, m.guid, p.peer.port);
        if (seen.has(k) || !present.has(n.guid) || !present.has(m.guid)) continue;
        seen.add(k);
        links.push({ a: { node: hex(n.guid), port: p.num }, b: { node: hex(m.guid), port: p.peer.port }, routes: 0, down: true });
      }
    });
  }
  const all = [...(o.routes?.values() ?? [])];
  const meanRoutes = all.length ? all.reduce((a, b) => a + b, 0) / all.length : 0;
  return { nodes, links, maxRoutes: links.reduce((a, l) => Math.max(a, l.routes), 0), meanRoutes };
}

/** The view as JSON-safe data (GUIDs as hex strings). */
export function topologyJson(v: TopologyView): unknown {
  return { nodes: v.nodes.map((n) => ({ ...n, guid: `0x${n.id}` })), links: v.links, maxRoutes: v.maxRoutes };
}

/** A link's colour: grey without routes, then from green to red with its share of the busiest. */
function colour(l: ViewLink, max: number): string {
  if (l.down) return '#d00000';
  if (max === 0 || l.routes === 0) return '#9e9e9e';
  const t = l.routes / max;
  const r = Math.round(40 + 200 * t);
  const g = Math.round(170 - 130 * t);
  return `#${r.toString(16).padStart(2, '0')}${g.toString(16).padStart(2, '0')}30`;
}

const dotEscape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Graphviz DOT: one rank per tier, hosts in a cluster under their switch, links coloured by load. */
export function topologyDot(v: TopologyView): string {
  const out = ['graph fabric {', '  rankdir=BT;', '  node [fontsize=10];'];
  const byTier = new Map<number, ViewNode[]>();
  for (const n of v.nodes) byTier.set(n.tier, [...(byTier.get(n.tier) ?? []), n]);
  const hostsOf = new Map<string, ViewNode[]>();
  for (const n of v.nodes) if (n.attachedTo) hostsOf.set(n.attachedTo, [...(hostsOf.get(n.attachedTo) ?? []), n]);
  const label = (n: ViewNode): string => `${dotEscape(n.desc)}${n.lid ? `\\nLID ${n.lid}` : ''}`;
  for (const [t, ns] of [...byTier].sort((a, b) => a[0] - b[0])) {
    const sw = ns.filter((n) => n.kind === 'switch');
    if (sw.length) out.push(`  { rank=same; ${sw.map((n) => `"${n.id}" [shape=box, style=filled, fillcolor="#dde7f5", label="${label(n)}"];`).join(' ')} }`);
    if (t === 0) for (const n of ns.filter((n) => !n.attachedTo)) out.push(`  "${n.id}" [shape=ellipse, label="${label(n)}"];`);
  }
  let c = 0;
  for (const [sw, hosts] of hostsOf) {
    out.push(`  subgraph cluster_${c++} { label="${hosts.length} under ${dotEscape(v.nodes.find((n) => n.id === sw)?.desc ?? sw)}"; style=dashed;`);
    for (const n of hosts) out.push(`    "${n.id}" [shape=ellipse, label="${label(n)}"];`);
    out.push('  }');
  }
  for (const l of v.links) {
    const attrs = [`color="${colour(l, v.maxRoutes)}"`, `tooltip="${l.a.port}-${l.b.port}: ${l.routes} routes"`];
    if (l.down) attrs.push('style=dashed', 'label="down"');
    out.push(`  "${l.a.node}" -- "${l.b.node}" [${attrs.join(', ')}];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}

/** SVG with a layered layout: the top tier at the top, hosts as small squares in a row under
 * their switch; every node is a shape with a <title> naming it and its GUID in data-guid; links
 * coloured by load. */
export function topologySvg(v: TopologyView): string {
  const SW_W = 90;
  const SW_H = 26;
  const HOST = 8;
  const ROW = 110;
  const maxTier = v.nodes.reduce((a, n) => Math.max(a, n.tier), 1);
  const hostsOf = new Map<string, ViewNode[]>();
  for (const n of v.nodes) if (n.attachedTo) hostsOf.set(n.attachedTo, [...(hostsOf.get(n.attachedTo) ?? []), n]);
  const pos = new Map<string, { x: number; y: number; w: number; h: number }>();
  // the bottom switch tier decides the width: each leaf gets room for its hosts
  const leaves = v.nodes.filter((n) => n.kind === 'switch' && n.tier === 1);
  let x = 20;
  for (const leaf of leaves) {
    const hosts = hostsOf.get(leaf.id) ?? [];
    const perRow = Math.max(1, Math.min(hosts.length, 10));
    const slot = Math.max(SW_W, perRow * (HOST + 3)) + 20;
    pos.set(leaf.id, { x: x + (slot - SW_W) / 2, y: 20 + (maxTier - 1) * ROW, w: SW_W, h: SW_H });
    hosts.forEach((h, i) => pos.set(h.id, { x: x + (slot - perRow * (HOST + 3)) / 2 + (i % perRow) * (HOST + 3), y: 20 + maxTier * ROW - 40 + Math.floor(i / perRow) * (HOST + 3), w: HOST, h: HOST }));
    x += slot;
  }
  const loose = v.nodes.filter((n) => n.kind !== 'switch' && !n.attachedTo);
  for (const n of loose) {
    pos.set(n.id, { x, y: 20 + maxTier * ROW - 40, w: HOST, h: HOST });
    x += HOST + 6;
  }
  const width = Math.max(x + 20, 200);
  // upper tiers: ordered by the mean position of their neighbours below, spread over the width
  const neighbours = new Map<string, string[]>();
  for (const l of v.links) {
    neighbours.set(l.a.node, [...(neighbours.get(l.a.node) ?? []), l.b.node]);
    neighbours.set(l.b.node, [...(neighbours.get(l.b.node) ?? []), l.a.node]);
  }
  for (let t = 2; t <= maxTier; t++) {
    const row = v.nodes.filter((n) => n.kind === 'switch' && n.tier === t);
    const centre = (n: ViewNode): number => {
      const xs = (neighbours.get(n.id) ?? []).map((id) => pos.get(id)).filter((p) => p !== undefined).map((p) => p.x + p.w / 2);
      return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0;
    };
    row.sort((a, b) => centre(a) - centre(b));
    const step = width / (row.length + 1);
    row.forEach((n, i) => pos.set(n.id, { x: step * (i + 1) - SW_W / 2, y: 20 + (maxTier - t) * ROW, w: SW_W, h: SW_H }));
  }
  const height = 20 + maxTier * ROW + Math.max(0, ...[...hostsOf.values()].map((h) => Math.ceil(h.length / 10) * (HOST + 3)));
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(width)}" height="${Math.ceil(height)}" viewBox="0 0 ${Math.ceil(width)} ${Math.ceil(height)}" font-family="sans-serif" font-size="9">`];
  for (const l of v.links) {
    const a = pos.get(l.a.node);
    const b = pos.get(l.b.node);
    if (!a || !b) continue;
    out.push(
      `<line class="link${l.down ? ' down' : ''}" x1="${(a.x + a.w / 2).toFixed(1)}" y1="${(a.y + a.h / 2).toFixed(1)}" x2="${(b.x + b.w / 2).toFixed(1)}" y2="${(b.y + b.h / 2).toFixed(1)}" stroke="${colour(l, v.maxRoutes)}" stroke-width="${l.routes ? 1 + (2 * l.routes) / Math.max(1, v.maxRoutes) : 1}"${l.down ? ' stroke-dasharray="4 3"' : ''}><title>${l.a.port}-${l.b.port}: ${l.routes} routes${l.down ? ' (down)' : ''}</title></line>`,
    );
  }
  for (const n of v.nodes) {
    const p = pos.get(n.id)!;
    const title = `<title>${xmlEscape(n.desc)} 0x${n.id}${n.lid ? ` LID ${n.lid}` : ''}</title>`;
    if (n.kind === 'switch') {
      out.push(`<g class="node switch" id="n${n.id}" data-guid="0x${n.id}"><rect x="${p.x.toFixed(1)}" y="${p.y.toFixed(1)}" width="${p.w}" height="${p.h}" rx="3" fill="#dde7f5" stroke="#34495e"/>${title}<text x="${(p.x + p.w / 2).toFixed(1)}" y="${(p.y + p.h / 2 + 3).toFixed(1)}" text-anchor="middle">${xmlEscape(n.desc.slice(0, 16))}</text></g>`);
    } else {
      out.push(`<g class="node ${n.kind}" id="n${n.id}" data-guid="0x${n.id}"><rect x="${p.x.toFixed(1)}" y="${p.y.toFixed(1)}" width="${p.w}" height="${p.h}" fill="#7fb77e" stroke="#2e5e2d"/>${title}</g>`);
    }
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

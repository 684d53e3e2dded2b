/**
 * A picture of the fabric, without I/O: the nodes by tier (hosts at the bottom, then the switches
 * they hang off, then each switch tier above), hosts grouped under their switch, every link with
 * the routes it carries (routes per link as everywhere: routing/incremental-intact.ts
 * `routesPerLink`, given by the caller; a link shows its busier direction), and, against what
 * earlier views showed (ViewMemory), links that went down and nodes that went away marked.
 * Rendered as JSON, as Graphviz DOT, and as SVG with its own layered layout (no external
 * binaries). The colours (VIEW_COLOURS) are told apart by colour-blind eyes too: the load runs
 * from light to dark blue, a link down is vermillion (Okabe and Ito's palette).
 */
import { isSwitch, type Fabric, type FabricPort } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { guidHex } from '../util/guid.js';
import { markHealth, type HealthMarks, type LinkHealth } from './topology-health.js';

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
  /** A CA's or router's ports with a GUID: what a search by port GUID or LID finds. */
  ends?: Array<{ port: number; guid: bigint; lid?: number }>;
  /** The switch a CA hangs off (its id), for grouping, and the switch's port (hosts in port order). */
  attachedTo?: string;
  attachedPort?: number;
  /** Shown by an earlier view (ViewMemory) but not in this fabric: unplugged, powered off. */
  gone?: boolean;
  /** Isolated (view/topology-health.ts): why; or a mismatch of the node with the expected topology. */
  isolated?: string;
  health?: string;
}

export interface ViewLink {
  a: { node: string; port: number };
  b: { node: string; port: number };
  width?: string;
  speed?: string;
  /** CA destinations routed over the link, a → b plus b → a (from the switches' tables). */
  routes: number;
  /** The link was in an earlier view (ViewMemory) but is not in this fabric. */
  down?: boolean;
  /** Against the expected topology and the isolations (view/topology-health.ts), and why. */
  health?: LinkHealth;
  healthText?: string;
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

/** Every node and link the views made with it have shown, as last seen (by node id and link
 * key): what a later view draws as gone (a node) or down (a link) when its fabric lacks them. It
 * grows with what appears, never shrinks: a host unplugged stays shown as gone. */
export interface ViewMemory {
  nodes: Map<string, ViewNode>;
  links: Map<string, ViewLink>;
}

export function viewMemory(): ViewMemory {
  return { nodes: new Map(), links: new Map() };
}

export interface ViewOptions {
  /** Routes per link (routing/incremental-intact.ts `routesPerLink`): CA-to-CA routes over each
   * directed switch-to-switch link, by `<switch GUID>:<port>` it leaves by. Host links carry none
   * in this count (0). */
  routes?: ReadonlyMap<string, number>;
  /** What earlier views showed: its nodes and links missing from this fabric are drawn gone and
   * down; this fabric's are remembered in it. */
  memory?: ViewMemory;
  /** The SM's health state: mismatches and isolations marked (view/topology-health.ts). */
  health?: HealthMarks;
}

const kindOf = (t: number): ViewNode['kind'] => (t === NodeType.Switch ? 'switch' : t === NodeType.Router ? 'router' : 'ca');
const linkKey = (a: ViewLink['a'], b: ViewLink['b']): string => (a.node < b.node || (a.node === b.node && a.port <= b.port) ? `${a.node}:${a.port}-${b.node}:${b.port}` : `${b.node}:${b.port}-${a.node}:${a.port}`);

export function topologyView(f: Fabric, o: ViewOptions = {}): TopologyView {
  const mem = o.memory;
  const tier = new Array<number>(f.nodes.length).fill(0);
  // switches: 1 next to an end node (or one an end node hung off before it went), then BFS upward
  const hadEndNode = new Set<string>();
  for (const n of mem?.nodes.values() ?? []) if (n.attachedTo) hadEndNode.add(n.attachedTo);
  const queue: number[] = [];
  f.nodes.forEach((n, i) => {
    if (!isSwitch(n)) return;
    tier[i] = 0;
    if (hadEndNode.has(guidHex(n.guid)) || n.ports.some((p) => p?.peer && !isSwitch(f.nodes[p.peer.node]!))) {
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
    const ends = sw ? [] : n.ports.filter((p): p is FabricPort => p !== undefined && p.num > 0).map((p) => ({ port: p.num, guid: p.guid, ...(p.lid ? { lid: p.lid } : {}) }));
    return {
      id: guidHex(n.guid),
      kind: kindOf(n.type),
      desc: n.desc,
      guid: n.guid,
      tier: tier[i]!,
      ...(lid ? { lid } : {}),
      ...(ends.length ? { ends } : {}),
      ...(attach ? { attachedTo: guidHex(f.nodes[attach.node]!.guid), attachedPort: attach.port } : {}),
    };
  });
  // a link's routes: its busier direction
  const routesOf = (a: bigint, pa: number, b: bigint, pb: number): number => Math.max(o.routes?.get(`${a}:${pa}`) ?? 0, o.routes?.get(`${b}:${pb}`) ?? 0);
  const links: ViewLink[] = [];
  const seen = new Set<string>();
  f.nodes.forEach((n) => {
    for (const p of n.ports) {
      if (!p?.peer || p.num === 0) continue;
      const a = { node: guidHex(n.guid), port: p.num };
      const b = { node: guidHex(f.nodes[p.peer.node]!.guid), port: p.peer.port };
      const k = linkKey(a, b);
      if (seen.has(k)) continue;
      seen.add(k);
      links.push({ a, b, ...(p.width ? { width: p.width } : {}), ...(p.speed ? { speed: p.speed } : {}), routes: routesOf(n.guid, p.num, f.nodes[p.peer.node]!.guid, p.peer.port) });
    }
  });
  const present = new Set(nodes.map((n) => n.id));
  // what an earlier view showed and this fabric lacks: nodes gone, links down (to a gone node too)
  if (mem) for (const [id, n] of mem.nodes) if (!present.has(id)) nodes.push({ ...n, gone: true });
  if (o.health) for (const k of markHealth({ nodes, links, maxRoutes: 0, meanRoutes: 0 }, o.health)) seen.add(k);
  if (mem) {
    for (const [k, l] of mem.links) if (!seen.has(k)) links.push({ a: l.a, b: l.b, ...(l.width ? { width: l.width } : {}), ...(l.speed ? { speed: l.speed } : {}), routes: 0, down: true });
    for (const n of nodes) if (!n.gone) mem.nodes.set(n.id, { ...n, isolated: undefined, health: undefined });
    for (const l of links) if (!l.down && l.health !== 'missing' && l.health !== 'isolated') mem.links.set(linkKey(l.a, l.b), l);
  }
  const all = [...(o.routes?.values() ?? [])];
  const meanRoutes = all.length ? all.reduce((a, b) => a + b, 0) / all.length : 0;
  return { nodes, links, maxRoutes: links.reduce((a, l) => Math.max(a, l.routes), 0), meanRoutes };
}

/** The view as JSON-safe data (GUIDs as hex strings). */
export function topologyJson(v: TopologyView): unknown {
  return { nodes: v.nodes.map((n) => ({ ...n, guid: `0x${n.id}`, ...(n.ends ? { ends: n.ends.map((e) => ({ ...e, guid: `0x${guidHex(e.guid)}` })) } : {}) })), links: v.links, maxRoutes: v.maxRoutes };
}

/** The picture's colours. Links: grey without routes, then from `few` (light blue) to `most`
 * (dark blue) with the share of the busiest; `down` (vermillion, and dashed) stays apart from every
 * load colour for deuteranopes, protanopes and tritanopes too (test/view-topology.test.ts measures
 * it). A gone node is greyed (`gone`) with a dashed outline in the down colour; a node with a port
 * not Active or with errors (the web view marks it) has a thick `sick` (reddish purple) outline. */
export const VIEW_COLOURS = { none: '#a3a3a3', few: '#8ec3e6', most: '#08306b', down: '#d55e00', gone: '#e4e4e4', sick: '#cc79a7' } as const;

const rgbOf = (c: string): number[] => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
const FEW = rgbOf(VIEW_COLOURS.few);
const MOST = rgbOf(VIEW_COLOURS.most);

/** A link's colour (VIEW_COLOURS). */
export function linkColour(l: Pick<ViewLink, 'routes' | 'down' | 'health'>, max: number): string {
  if (l.down || l.health === 'missing') return VIEW_COLOURS.down;
  if (l.health) return VIEW_COLOURS.sick;
  if (max === 0 || l.routes === 0) return VIEW_COLOURS.none;
  const t = l.routes / max;
  return `#${FEW.map((a, i) => Math.round(a + (MOST[i]! - a) * t).toString(16).padStart(2, '0')).join('')}`;
}

const dotEscape = (s: string): string => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
/** Text or a double-quoted attribute value as XML/HTML (a node description is never markup). */
export const xmlEscape = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Graphviz DOT: one rank per tier, hosts in a cluster under their switch, links coloured by load. */
export function topologyDot(v: TopologyView): string {
  const out = ['graph fabric {', '  rankdir=BT;', '  node [fontsize=10];'];
  const byTier = new Map<number, ViewNode[]>();
  for (const n of v.nodes) byTier.set(n.tier, [...(byTier.get(n.tier) ?? []), n]);
  const hostsOf = new Map<string, ViewNode[]>();
  for (const n of v.nodes) if (n.attachedTo) hostsOf.set(n.attachedTo, [...(hostsOf.get(n.attachedTo) ?? []), n]);
  const label = (n: ViewNode): string => `${dotEscape(n.desc)}${n.lid ? `\\nLID ${n.lid}` : ''}${n.gone ? '\\n(gone)' : n.isolated ? '\\n(isolated)' : ''}`;
  const gone = (n: ViewNode): string => (n.gone ? `, style="dashed,filled", fillcolor="${VIEW_COLOURS.gone}", color="${VIEW_COLOURS.down}"` : n.isolated || n.health ? `, penwidth=3, color="${VIEW_COLOURS.sick}", tooltip="${dotEscape(n.isolated ?? n.health!)}"` : '');
  for (const [t, ns] of [...byTier].sort((a, b) => a[0] - b[0])) {
    const sw = ns.filter((n) => n.kind === 'switch');
    if (sw.length) out.push(`  { rank=same; ${sw.map((n) => `"${n.id}" [shape=box, style=filled, fillcolor="#dde7f5", label="${label(n)}"${gone(n)}];`).join(' ')} }`);
    if (t === 0) for (const n of ns.filter((n) => !n.attachedTo)) out.push(`  "${n.id}" [shape=ellipse, label="${label(n)}"${gone(n)}];`);
  }
  let c = 0;
  for (const [sw, hosts] of hostsOf) {
    out.push(`  subgraph cluster_${c++} { label="${hosts.length} under ${dotEscape(v.nodes.find((n) => n.id === sw)?.desc ?? sw)}"; style=dashed;`);
    for (const n of hosts) out.push(`    "${n.id}" [shape=ellipse, label="${label(n)}"${gone(n)}];`);
    out.push('  }');
  }
  for (const l of v.links) {
    const attrs = [`color="${linkColour(l, v.maxRoutes)}"`, `tooltip="${l.a.port}-${l.b.port}: ${l.routes} routes"`];
    if (l.down) attrs.push('style=dashed', 'label="down"');
    else if (l.health) attrs.push(`style=${l.health === 'degraded' || l.health === 'extra' ? 'bold' : 'dashed'}`, `label="${l.health}"`, `tooltip="${dotEscape(l.healthText ?? l.health)}"`);
    out.push(`  "${l.a.node}" -- "${l.b.node}" [${attrs.join(', ')}];`);
  }
  out.push('}');
  return out.join('\n') + '\n';
}

/** SVG with a layered layout: the top tier at the top, hosts as small squares in rows under their
 * switch, each with its name written under it; every node is a group with a <title> naming it and
 * data-guid, data-desc, data-lid (its LIDs) and data-ports (its port GUIDs) a page searches;
 * links coloured by load, parallel links (two cables between the same two nodes) drawn as curves
 * apart so a down one never hides its working twin; gone nodes greyed, links down dashed. */
export function topologySvg(v: TopologyView): string {
  const SW_W = 90;
  const SW_H = 26;
  const HOST = 9;
  const PITCH = HOST + 4;
  const PER_ROW = 16;
  /** A host's name, written downward under it (room for ~12 characters). */
  const LABEL = 58;
  const HOST_ROW = HOST + LABEL;
  const ROW = 110;
  /** Between two parallel links, at their middle. */
  const SPREAD = 7;
  const maxTier = v.nodes.reduce((a, n) => Math.max(a, n.tier), 1);
  const hostsOf = new Map<string, ViewNode[]>();
  for (const n of v.nodes) if (n.attachedTo) hostsOf.set(n.attachedTo, [...(hostsOf.get(n.attachedTo) ?? []), n]);
  // in the order of the switch's ports: a host keeps its place when it goes (drawn gone there)
  for (const hosts of hostsOf.values()) hosts.sort((a, b) => (a.attachedPort ?? 0) - (b.attachedPort ?? 0));
  const pos = new Map<string, { x: number; y: number; w: number; h: number }>();
  const hostY = 20 + maxTier * ROW - 40;
  // the bottom switch tier decides the width: each leaf gets room for its hosts
  const leaves = v.nodes.filter((n) => n.kind === 'switch' && n.tier === 1);
  let x = 20;
  let hostRows = 1;
  for (const leaf of leaves) {
    const hosts = hostsOf.get(leaf.id) ?? [];
    const perRow = Math.max(1, Math.min(hosts.length, PER_ROW));
    const slot = Math.max(SW_W, perRow * PITCH) + 20;
    pos.set(leaf.id, { x: x + (slot - SW_W) / 2, y: 20 + (maxTier - 1) * ROW, w: SW_W, h: SW_H });
    hosts.forEach((h, i) => pos.set(h.id, { x: x + (slot - perRow * PITCH) / 2 + (i % perRow) * PITCH + 2, y: hostY + Math.floor(i / perRow) * HOST_ROW, w: HOST, h: HOST }));
    hostRows = Math.max(hostRows, Math.ceil(hosts.length / perRow));
    x += slot;
  }
  const loose = v.nodes.filter((n) => n.kind !== 'switch' && !n.attachedTo);
  for (const n of loose) {
    pos.set(n.id, { x, y: hostY, w: HOST, h: HOST });
    x += PITCH;
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
  const height = hostY + hostRows * HOST_ROW + 10;
  const byId = new Map(v.nodes.map((n) => [n.id, n]));
  const f1 = (n: number): string => n.toFixed(1);
  const out = [`<svg xmlns="http://www.w3.org/2000/svg" width="${Math.ceil(width)}" height="${Math.ceil(height)}" viewBox="0 0 ${Math.ceil(width)} ${Math.ceil(height)}" font-family="sans-serif" font-size="9">`];
  // links between the same two nodes, each bent its own way: offsets -k/2..k/2 times SPREAD
  const bundles = new Map<string, ViewLink[]>();
  for (const l of v.links) {
    const k = l.a.node < l.b.node ? `${l.a.node}-${l.b.node}` : `${l.b.node}-${l.a.node}`;
    bundles.set(k, [...(bundles.get(k) ?? []), l]);
  }
  const offset = new Map<ViewLink, number>();
  for (const ls of bundles.values()) {
    const sorted = [...ls].sort((p, q) => Math.min(p.a.port, p.b.port) - Math.min(q.a.port, q.b.port) || Math.max(p.a.port, p.b.port) - Math.max(q.a.port, q.b.port));
    sorted.forEach((l, i) => offset.set(l, (i - (sorted.length - 1) / 2) * SPREAD));
  }
  const end = (e: ViewLink['a']): string => `${xmlEscape(byId.get(e.node)?.desc ?? e.node)} port ${e.port}`;
  // links up first, then down ones over them
  for (const l of [...v.links.filter((l) => !l.down), ...v.links.filter((l) => l.down)]) {
    const a = pos.get(l.a.node);
    const b = pos.get(l.b.node);
    if (!a || !b) continue;
    const [x1, y1, x2, y2] = [a.x + a.w / 2, a.y + a.h / 2, b.x + b.w / 2, b.y + b.h / 2];
    const off = offset.get(l) ?? 0;
    let d = `M${f1(x1)} ${f1(y1)} L${f1(x2)} ${f1(y2)}`;
    if (off !== 0) {
      // a quadratic curve's middle lies half way to its control point: the control 2 × off away
      const len = Math.hypot(x2 - x1, y2 - y1) || 1;
      const cx = (x1 + x2) / 2 + (-(y2 - y1) / len) * 2 * off;
      const cy = (y1 + y2) / 2 + ((x2 - x1) / len) * 2 * off;
      d = `M${f1(x1)} ${f1(y1)} Q${f1(cx)} ${f1(cy)} ${f1(x2)} ${f1(y2)}`;
    }
    const widthPx = l.routes ? 1 + (2 * l.routes) / Math.max(1, v.maxRoutes) : l.down ? 2 : 1;
    out.push(
      `<path class="link${l.down ? ' down' : ''}${l.health ? ` ${l.health}` : ''}" data-a="0x${l.a.node}:${l.a.port}" data-b="0x${l.b.node}:${l.b.port}" d="${d}" fill="none" stroke="${linkColour(l, v.maxRoutes)}" stroke-width="${f1(l.health ? Math.max(widthPx, 2) : widthPx)}"${l.down || l.health === 'missing' ? ' stroke-dasharray="5 3"' : l.health === 'isolated' ? ' stroke-dasharray="1 3"' : ''}><title>${end(l.a)} ↔ ${end(l.b)}: ${l.down ? 'down' : l.health ? xmlEscape(l.healthText ?? l.health) : `${l.routes} routes`}</title></path>`,
    );
  }
  for (const n of v.nodes) {
    const p = pos.get(n.id)!;
    const lids = [...new Set([n.lid, ...(n.ends ?? []).map((e) => e.lid)].filter((l) => l !== undefined))];
    const sick = n.isolated ?? n.health;
    const title = `<title>${xmlEscape(n.desc)} 0x${n.id}${lids.length ? ` LID ${lids.join(', ')}` : ''}${n.gone ? ' (gone: not found by the last sweep)' : sick ? ` (${xmlEscape(sick)})` : ''}</title>`;
    const attrs = `class="node ${n.kind}${n.gone ? ' gone' : n.isolated ? ' isolated' : n.health ? ' mismatch' : ''}" id="n${n.id}" data-guid="0x${n.id}" data-desc="${xmlEscape(n.desc)}" data-lid="${lids.join(' ')}"${n.ends ? ` data-ports="${n.ends.map((e) => `0x${guidHex(e.guid)}`).join(' ')}"` : ''}`;
    const goneStyle = n.gone ? ` stroke-dasharray="2 2" opacity="0.8"` : sick ? ` stroke-width="3" stroke-dasharray="${n.isolated ? '1 2' : 'none'}"` : '';
    if (n.kind === 'switch') {
      out.push(`<g ${attrs}><rect x="${f1(p.x)}" y="${f1(p.y)}" width="${p.w}" height="${p.h}" rx="3" fill="${n.gone ? VIEW_COLOURS.gone : '#dde7f5'}" stroke="${n.gone ? VIEW_COLOURS.down : sick ? VIEW_COLOURS.sick : '#34495e'}"${goneStyle}/>${title}<text x="${f1(p.x + p.w / 2)}" y="${f1(p.y + p.h / 2 + 3)}" text-anchor="middle"${n.gone ? ' fill="#777"' : ''}>${xmlEscape(n.desc.slice(0, 16))}</text></g>`);
    } else {
      const label = n.desc.length > 12 ? `${n.desc.slice(0, 11)}…` : n.desc;
      out.push(
        `<g ${attrs}><rect x="${f1(p.x)}" y="${f1(p.y)}" width="${p.w}" height="${p.h}" fill="${n.gone ? VIEW_COLOURS.gone : '#7fb77e'}" stroke="${n.gone ? VIEW_COLOURS.down : sick ? VIEW_COLOURS.sick : '#2e5e2d'}"${goneStyle}/>${title}<text class="label" transform="translate(${f1(p.x + p.w / 2 - 3)} ${f1(p.y + p.h + 3)}) rotate(90)" font-size="8"${n.gone ? ' fill="#888" text-decoration="line-through"' : ' fill="#333"'}>${xmlEscape(label)}</text></g>`,
      );
    }
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}

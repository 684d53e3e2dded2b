/** The picture of the fabric (src/view/topology.ts): tiers, hosts grouped under their switch, routes
 * per link from the tables, a link down and a node gone against what an earlier view showed (its
 * ViewMemory); DOT that Graphviz's `dot` parses and lays out with every node, and an SVG of our own
 * layout with every node, each host named, parallel cables drawn apart, and link colours that a
 * deuteranope, a protanope and a tritanope tell apart (Machado et al. 2009 simulation, CIELAB ΔE). */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cloneFabric, isSwitch, type Fabric } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { getEngine, verifyRoutes } from '../src/routing/index.js';
import { routesPerLink } from '../src/routing/incremental.js';
import { topologyDot, topologyJson, topologySvg, topologyView, viewMemory } from '../src/view/topology.js';
import { NodeType } from '../src/wire/mad.js';
import { CVD, deltaE } from './helpers/colour.js';

function routed(spec: string) {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc: 0 });
  const r = getEngine('ftree').route(f, { lmc: 0 });
  return { f, r, lfts: routesPerLink(f, r) };
}

/** The fabric without node `gone` (a host unplugged: the next sweep does not find it). */
function withoutNode(f: Fabric, gone: number): Fabric {
  const c = cloneFabric(f);
  const idx = (i: number): number => (i > gone ? i - 1 : i);
  for (const n of c.nodes) for (const p of n.ports) if (p?.peer) p.peer = p.peer.node === gone ? undefined : { node: idx(p.peer.node), port: p.peer.port };
  c.nodes.splice(gone, 1);
  return c;
}

/** The SVG's links: classes, ends (data-a, data-b), stroke and the point half way along (a line's
 * middle; a quadratic curve's point at t = 1/2). */
function svgLinks(svg: string): Array<{ cls: string; a: string; b: string; stroke: string; mid: [number, number] }> {
  const out = [];
  for (const m of svg.matchAll(/<(line|path) class="(link[^"]*)"([^>]*)>/g)) {
    const attr = (k: string): string => new RegExp(`\\b${k}="([^"]*)"`).exec(m[3]!)?.[1] ?? '';
    let mid: [number, number];
    if (m[1] === 'line') mid = [(Number(attr('x1')) + Number(attr('x2'))) / 2, (Number(attr('y1')) + Number(attr('y2'))) / 2];
    else {
      const n = attr('d').match(/-?[\d.]+/g)!.map(Number);
      mid = n.length === 6 ? [0.25 * n[0]! + 0.5 * n[2]! + 0.25 * n[4]!, 0.25 * n[1]! + 0.5 * n[3]! + 0.25 * n[5]!] : [(n[0]! + n[2]!) / 2, (n[1]! + n[3]!) / 2];
    }
    out.push({ cls: m[2]!, a: attr('data-a'), b: attr('data-b'), stroke: attr('stroke'), mid });
  }
  return out;
}

describe('topology view', () => {
  it('tiers, host groups and routes per link on a 3-level fat tree', () => {
    const { f, r, lfts } = routed('gen:fattree3:pods=2,leaves=2,spines=2,cores=2,hosts=3');
    const v = topologyView(f, { routes: lfts });
    expect(v.nodes).toHaveLength(f.nodes.length);
    const tiers = new Map<string, number>(v.nodes.map((n) => [n.id, n.tier]));
    const hosts = v.nodes.filter((n) => n.kind === 'ca');
    expect(hosts.every((h) => h.tier === 0 && h.attachedTo !== undefined && tiers.get(h.attachedTo) === 1)).toBe(true);
    expect(new Set(v.nodes.filter((n) => n.kind === 'switch').map((n) => n.tier))).toEqual(new Set([1, 2, 3]));
    // routes per link as everywhere (switch-to-switch links): host links count none; every cable is one link
    const cables = f.nodes.reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer).length, 0) / 2;
    expect(v.links).toHaveLength(cables);
    const hostIds = new Set(hosts.map((h) => h.id));
    for (const l of v.links) if (hostIds.has(l.a.node) || hostIds.has(l.b.node)) expect(l.routes).toBe(0);
    // the switch-to-switch links carry all host-to-host traffic between them: up and down each way
    const upDown = v.links.filter((l) => !hostIds.has(l.a.node) && !hostIds.has(l.b.node));
    expect(upDown.every((l) => l.routes > 0)).toBe(true);
    expect(v.maxRoutes).toBe(Math.max(...v.links.map((l) => l.routes)));
    // the same figures as the verifier's (ibsm status, the metrics, the sweep's log line)
    const rep = verifyRoutes(f, r, { stretch: false, cdg: false });
    expect(v.maxRoutes).toBe(rep.linkLoad.max);
    expect(v.meanRoutes).toBeCloseTo(rep.linkLoad.mean, 9);
    const json = JSON.parse(JSON.stringify(topologyJson(v))) as { nodes: Array<{ guid: string }> };
    expect(json.nodes[0]!.guid).toMatch(/^0x[0-9a-f]{16}$/);
  });

  it('a link missing from the current fabric is drawn as down, in DOT and in SVG', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=3,spines=2,hosts=2');
    const now = cloneFabric(f);
    const leaf = now.nodes.findIndex((n) => isSwitch(n) && n.ports.some((p) => p?.peer && !isSwitch(now.nodes[p.peer.node]!)));
    const up = now.nodes[leaf]!.ports.find((p) => p?.peer && isSwitch(now.nodes[p.peer.node]!))!;
    now.nodes[up.peer!.node]!.ports[up.peer!.port]!.peer = undefined;
    up.peer = undefined;
    const memory = viewMemory();
    expect(topologyView(f, { routes: lfts, memory }).links.filter((l) => l.down)).toEqual([]);
    const v = topologyView(now, { routes: lfts, memory });
    const down = v.links.filter((l) => l.down);
    expect(down).toHaveLength(1);
    expect(down[0]!.a.port === up.num || down[0]!.b.port === up.num).toBe(true);
    expect(topologyDot(v)).toContain('style=dashed');
    expect(topologySvg(v)).toContain('class="link down"');
    // remembered: still down in the views after, until it is back
    expect(topologyView(now, { routes: lfts, memory }).links.filter((l) => l.down)).toHaveLength(1);
    expect(topologyView(f, { routes: lfts, memory }).links.filter((l) => l.down)).toHaveLength(0);
  });

  it('a host unplugged (missing from the fabric) is drawn gone, in its place, with its link down; not a vanishing square', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=3,spines=2,hosts=3');
    const memory = viewMemory();
    const before = topologySvg(topologyView(f, { routes: lfts, memory }));
    const hi = f.nodes.findIndex((n) => n.type === NodeType.CA);
    const host = f.nodes[hi]!;
    const cable = host.ports.find((p) => p?.peer)!;
    const sw = f.nodes[cable.peer!.node]!;
    const id = host.guid.toString(16).padStart(16, '0');
    const swId = sw.guid.toString(16).padStart(16, '0');
    const v = topologyView(withoutNode(f, hi), { memory });
    expect(v.nodes).toHaveLength(f.nodes.length);
    expect(v.nodes.filter((n) => n.gone).map((n) => n.id)).toEqual([id]);
    const down = v.links.filter((l) => l.down);
    expect(down).toHaveLength(1);
    expect(new Set([`${down[0]!.a.node}:${down[0]!.a.port}`, `${down[0]!.b.node}:${down[0]!.b.port}`])).toEqual(new Set([`${id}:${cable.num}`, `${swId}:${cable.peer!.port}`]));
    const svg = topologySvg(v);
    const g = new RegExp(`<g class="node ca gone" id="n${id}"[^>]*><rect x="([\\d.]+)" y="([\\d.]+)"`).exec(svg);
    expect(g, 'the gone host is drawn, greyed').not.toBeNull();
    const was = new RegExp(`<g class="node ca" id="n${id}"[^>]*><rect x="([\\d.]+)" y="([\\d.]+)"`).exec(before)!;
    expect([g![1], g![2]]).toEqual([was[1], was[2]]);
    expect(svgLinks(svg).filter((l) => l.cls === 'link down').map((l) => [l.a, l.b].sort())).toEqual([[`0x${id}:${cable.num}`, `0x${swId}:${cable.peer!.port}`].sort()]);
    expect(topologyDot(v)).toMatch(new RegExp(`"${id}" \\[[^\\]]*\\(gone\\)[^\\]]*style="dashed,filled"`));
    // the same host back: no longer gone
    expect(topologyView(f, { routes: lfts, memory }).nodes.some((n) => n.gone)).toBe(false);
  });

  it('parallel cables are drawn apart: the two links between a leaf and a spine meet their middles at least 5 px apart', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=3,spines=2,hosts=2,links=2');
    const links = svgLinks(topologySvg(topologyView(f, { routes: lfts })));
    const byPair = new Map<string, typeof links>();
    for (const l of links) {
      const k = [l.a.split(':')[0], l.b.split(':')[0]].sort().join('-');
      byPair.set(k, [...(byPair.get(k) ?? []), l]);
    }
    // the witness: the fabric's own cables between two switches, two per leaf-spine pair
    const switchCables = f.nodes.filter(isSwitch).reduce((a, n) => a + n.ports.filter((p) => p && p.num > 0 && p.peer && isSwitch(f.nodes[p.peer.node]!)).length, 0) / 2;
    const parallel = [...byPair.values()].filter((ls) => ls.length > 1);
    expect(parallel).toHaveLength(3 * 2);
    expect(parallel.reduce((a, ls) => a + ls.length, 0)).toBe(switchCables);
    for (const [p, q] of parallel) expect(Math.hypot(p!.mid[0] - q!.mid[0], p!.mid[1] - q!.mid[1])).toBeGreaterThanOrEqual(5);
  });

  it('a link down and the busiest link differ for colour-blind eyes: CIELAB ΔE ≥ 40 in simulated deuteranopia, protanopia and tritanopia, against every load colour', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=4,spines=2,hosts=3');
    const memory = viewMemory();
    topologyView(f, { routes: lfts, memory });
    const now = cloneFabric(f);
    const leaf = now.nodes.find((n) => isSwitch(n) && n.ports.some((p) => p?.peer && !isSwitch(now.nodes[p.peer.node]!)))!;
    const up = leaf.ports.find((p) => p?.peer && isSwitch(now.nodes[p.peer.node]!))!;
    now.nodes[up.peer!.node]!.ports[up.peer!.port]!.peer = undefined;
    up.peer = undefined;
    const v = topologyView(now, { routes: lfts, memory });
    const links = svgLinks(topologySvg(v));
    const down = links.filter((l) => l.cls.includes('down'));
    expect(down).toHaveLength(1);
    const busiest = v.links.find((l) => !l.down && l.routes === v.maxRoutes)!;
    const key = (e: { node: string; port: number }): string => `0x${e.node}:${e.port}`;
    const busy = links.find((l) => l.a === key(busiest.a) && l.b === key(busiest.b))!.stroke;
    const loads = new Set(links.filter((l) => !l.cls.includes('down')).map((l) => l.stroke));
    expect(loads.has(busy)).toBe(true);
    for (const [vision, m] of Object.entries(CVD)) {
      expect(deltaE(down[0]!.stroke, busy, m), `${vision}: down ${down[0]!.stroke} vs busiest ${busy}`).toBeGreaterThanOrEqual(40);
      for (const c of loads) expect(deltaE(down[0]!.stroke, c, m), `${vision}: down vs ${c}`).toBeGreaterThanOrEqual(40);
    }
    expect(deltaE(down[0]!.stroke, busy)).toBeGreaterThanOrEqual(40);
  });

  it('every host is named: its description written under it, and its GUIDs and LIDs in data- attributes a search reads', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=2,spines=2,hosts=3');
    const svg = topologySvg(topologyView(f, { routes: lfts }));
    for (const n of f.nodes.filter((n) => n.type === NodeType.CA)) {
      const id = n.guid.toString(16).padStart(16, '0');
      const g = new RegExp(`<g class="node ca" id="n${id}"([^>]*)>([\\s\\S]*?)</g>`).exec(svg)!;
      expect(g, n.desc).not.toBeNull();
      const ports = n.ports.filter((p) => p && p.num > 0);
      expect(g[1]).toContain(`data-desc="${n.desc}"`);
      expect(g[1]).toContain(`data-lid="${ports.map((p) => p!.lid).join(' ')}"`);
      expect(g[1]).toContain(`data-ports="${ports.map((p) => `0x${p!.guid.toString(16).padStart(16, '0')}`).join(' ')}"`);
      const label = /<text class="label"[^>]*>([^<]*)<\/text>/.exec(g[2]!)![1]!;
      expect(n.desc.startsWith(label.replace(/…$/, ''))).toBe(true);
      expect(label.length).toBeGreaterThanOrEqual(Math.min(n.desc.length, 12));
    }
  });

  it('Graphviz parses the DOT and lays out every node; the SVG has every node and is well formed', () => {
    const { f, lfts } = routed('gen:fattree2:leaves=4,spines=2,hosts=4');
    const v = topologyView(f, { routes: lfts });
    const dot = spawnSync('dot', ['-Tsvg'], { input: topologyDot(v), encoding: 'utf8' });
    expect(dot.status, dot.stderr).toBe(0);
    for (const n of v.nodes) expect(dot.stdout).toContain(`<title>${n.id}</title>`);
    const svg = topologySvg(v);
    for (const n of v.nodes) expect(svg).toContain(`id="n${n.id}"`);
    // tags balance (every element closed or self-closing)
    const opened: string[] = [];
    for (const m of svg.matchAll(/<(\/?)([a-z]+)[^>]*?(\/?)>/g)) {
      if (m[1]) expect(opened.pop()).toBe(m[2]);
      else if (!m[3]) opened.push(m[2]!);
    }
    expect(opened).toEqual([]);
  });
});

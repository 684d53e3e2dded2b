/** The picture of the fabric (src/view/topology.ts): tiers, hosts grouped under their switch, routes
 * per link from the tables, a link down against a reference fabric; DOT that Graphviz's `dot`
 * parses and lays out with every node, and an SVG of our own layout with every node. */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { cloneFabric, isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { assignLids } from '../src/sm/lids.js';
import { getEngine, verifyRoutes } from '../src/routing/index.js';
import { routesPerLink } from '../src/routing/incremental.js';
import { topologyDot, topologyJson, topologySvg, topologyView } from '../src/view/topology.js';

function routed(spec: string) {
  const f = loadFabricSpec(spec);
  assignLids(f, { lmc: 0 });
  const r = getEngine('ftree').route(f, { lmc: 0 });
  return { f, r, lfts: routesPerLink(f, r) };
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
    const v = topologyView(now, { routes: lfts, reference: f });
    const down = v.links.filter((l) => l.down);
    expect(down).toHaveLength(1);
    expect(down[0]!.a.port === up.num || down[0]!.b.port === up.num).toBe(true);
    expect(topologyDot(v)).toContain('style=dashed');
    expect(topologySvg(v)).toContain('class="link down"');
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

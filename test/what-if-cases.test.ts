/** What a failure case drops (routing/what-if-cases.ts failCase) against the test's own search of
 * what stays reachable from the largest part (through switches; a host does not forward): every
 * single link and every pair of links at a switch of a fat tree and a torus (nothing dropped: the
 * search failCase skips when a cut link's ends stay joined), a leaf's uplinks all cut (the leaf
 * and its hosts dropped), a host's link cut (the host dropped). */
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { failCase, linkCases, type WhatIfCase } from '../src/routing/what-if.js';
import { NodeType } from '../src/wire/mad.js';

/** GUIDs of the nodes outside the part with the most nodes, links of `c` cut. */
function droppedBySearch(f: Fabric, c: WhatIfCase): Set<bigint> {
  const cut = new Set<string>();
  for (const l of c.links) {
    const i = f.nodes.findIndex((n) => n.guid === l.guid);
    const q = f.nodes[i]!.ports[l.port]!.peer!;
    cut.add(`${i}:${l.port}`).add(`${q.node}:${q.port}`);
  }
  const comp = new Array<number>(f.nodes.length).fill(-1);
  const sizes: number[] = [];
  for (let s = 0; s < f.nodes.length; s++) {
    if (comp[s]! >= 0 || f.nodes[s]!.type !== NodeType.Switch) continue;
    const id = sizes.length;
    const queue = [s];
    comp[s] = id;
    for (let h = 0; h < queue.length; h++) {
      const u = queue[h]!;
      if (f.nodes[u]!.type !== NodeType.Switch) continue;
      f.nodes[u]!.ports.forEach((p, pn) => {
        if (p?.peer && comp[p.peer.node]! < 0 && !cut.has(`${u}:${pn}`)) {
          comp[p.peer.node] = id;
          queue.push(p.peer.node);
        }
      });
    }
    sizes.push(queue.length);
  }
  const best = sizes.indexOf(Math.max(...sizes));
  return new Set(f.nodes.filter((_, i) => comp[i] !== best).map((n) => n.guid));
}

describe('what-if: what a case drops', () => {
  for (const spec of ['gen:fattree2:leaves=6,spines=3,hosts=9', 'gen:torus:4x4x3,hosts=2']) {
    it(`${spec}: the same as a search of the fabric`, () => {
      const f = loadFabricSpec(spec);
      const links = linkCases(f);
      const cases: WhatIfCase[] = [...links];
      for (let i = 0; i < links.length && cases.length < links.length + 40; i++) {
        const j = links.findIndex((c, k) => k > i && c.links[0]!.guid === links[i]!.links[0]!.guid);
        if (j > 0) cases.push({ name: 'pair', links: [...links[i]!.links, ...links[j]!.links], nodes: [] });
      }
      // A leaf's uplinks all cut, and a host's link.
      const leafIdx = f.nodes.findIndex((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && f.nodes[p.peer.node]!.type !== NodeType.Switch));
      const leaf = f.nodes[leafIdx]!;
      const up = leaf.ports.flatMap((p, pn) => (p?.peer && f.nodes[p.peer.node]!.type === NodeType.Switch ? [{ guid: leaf.guid, port: pn }] : []));
      cases.push({ name: 'leaf cut off', links: up, nodes: [] });
      const hp = leaf.ports.findIndex((p) => p?.peer && f.nodes[p.peer.node]!.type !== NodeType.Switch);
      cases.push({ name: 'host link', links: [{ guid: leaf.guid, port: hp }], nodes: [] });
      let dropping = 0;
      for (const c of cases) {
        const want = droppedBySearch(f, c);
        const got = new Set(failCase(f, c).dropped.map((n) => n.guid));
        expect(got, c.name).toEqual(want);
        if (want.size) dropping++;
      }
      expect(dropping).toBeGreaterThanOrEqual(spec.includes('torus') ? 1 : 2);
    });
  }
});

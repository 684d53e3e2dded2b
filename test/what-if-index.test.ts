/** A what-if case's fabric index derived from the previous fabric's (routing/incremental-index.ts
 * indexLinksDown) against indexFabric over the case's fabric: for every switch-to-switch link and
 * every pair of links at one switch of three fabrics, every field equal; a host link (not a
 * switch-to-switch link) is not derived. */
import { describe, expect, it } from 'vitest';
import { loadFabricSpec } from '../src/model/load.js';
import { indexFabric } from '../src/routing/graph.js';
import { indexLinksDown } from '../src/routing/incremental-index.js';
import { failCase, linkCases, type WhatIfCase } from '../src/routing/what-if.js';
import { assignLids } from '../src/sm/lids.js';
import { NodeType } from '../src/wire/mad.js';

const SPECS = ['gen:fattree3:radix=8', 'gen:fattree2:leaves=6,spines=3,hosts=9', 'gen:torus:4x4x3,hosts=2'];

describe('what-if index from the previous one', () => {
  for (const spec of SPECS) {
    it(`${spec}: equal to the fabric indexed in full`, () => {
      const f = loadFabricSpec(spec);
      assignLids(f, { lmc: 0 });
      const base = indexFabric(f);
      const links = linkCases(f);
      const pairs: WhatIfCase[] = [];
      for (let i = 0; i < links.length && pairs.length < 30; i++) {
        const j = links.findIndex((c, k) => k > i && c.links[0]!.guid === links[i]!.links[0]!.guid);
        if (j > 0) pairs.push({ name: `${links[i]!.name} + ${links[j]!.name}`, links: [...links[i]!.links, ...links[j]!.links], nodes: [] });
      }
      let derived = 0;
      for (const c of [...links, ...pairs]) {
        const nf = failCase(f, c).fabric;
        const ix = indexLinksDown(base, nf);
        if (nf.nodes.length !== f.nodes.length) {
          expect(ix, c.name).toBeUndefined();
          continue;
        }
        expect(ix, c.name).toBeDefined();
        derived++;
        const full = indexFabric(nf);
        expect(ix!.fabric).toBe(nf);
        expect({ ...ix!, fabric: undefined }, c.name).toEqual({ ...full, fabric: undefined });
        expect(ix!.adjStart[ix!.nSw]).toBe(base.adjStart[base.nSw]! - 2 * c.links.length);
      }
      expect(derived).toBeGreaterThan(0);
      // A host's link down (the host kept, as a fabric with it would be) is not derived.
      const host = f.nodes.findIndex((n) => n.type !== NodeType.Switch && n.ports.some((p) => p?.peer));
      const hp = f.nodes[host]!.ports.findIndex((p) => p?.peer);
      const peer = f.nodes[host]!.ports[hp]!.peer!;
      const cut = (i: number, p: number) => ({ ...f.nodes[i]!, ports: f.nodes[i]!.ports.map((q, k) => (q && k === p ? { ...q, peer: undefined } : q)) });
      const nodes = f.nodes.map((n, i) => (i === host ? cut(i, hp) : i === peer.node ? cut(i, peer.port) : n));
      expect(indexLinksDown(base, { nodes })).toBeUndefined();
    });
  }
});

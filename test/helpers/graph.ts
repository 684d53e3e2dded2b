import { NodeType } from '../../src/wire/mad.js';
import { canonicalFabric } from '../../src/model/json.js';
import type { Fabric } from '../../src/model/fabric.js';

/** The graph a directed-route sweep can see, for comparing a discovered fabric with its topology:
 * no LIDs (cold fabric: all 0, a file: none), no uncabled CA ports (no sweep reaches them).
 * `ignoreUnlinkedRates`: also drop width/speed on ports without a link (a topology edited by hand
 * to remove a link keeps them; a sweep reports none). */
export function graphOf(f: Fabric, opts: { ignoreUnlinkedRates?: boolean } = {}): Fabric {
  return canonicalFabric({
    nodes: f.nodes.map((n) => ({
      ...n,
      ports: n.ports.map((p) => {
        if (!p || (n.type !== NodeType.Switch && !p.peer)) return undefined;
        const q = { ...p, lid: undefined, lmc: undefined };
        return opts.ignoreUnlinkedRates && !p.peer ? { ...q, width: undefined, speed: undefined } : q;
      }),
    })),
  });
}

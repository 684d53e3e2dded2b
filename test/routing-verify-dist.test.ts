// The verifier's switch distances, 32 BFS at once (routing/verify-dist.ts), against graph.ts's
// one-source BFS: every switch as a source, on fabrics with more than 32 switches (several
// passes, sources starting mid-pass) and with switches cut off (unreachable: −1).
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { bfsSwitches, indexFabric } from '../src/routing/graph.js';
import { SwitchDistances } from '../src/routing/verify-dist.js';
import { fabricWithLids } from './helpers/routing-checks.js';

function expectSame(f: Fabric, sources: number[]): void {
  const ix = indexFabric(f);
  const d = new SwitchDistances(ix);
  const src = Int32Array.from(sources);
  const want = new Int32Array(ix.nSw);
  const queue = new Int32Array(ix.nSw);
  for (const T of sources) {
    bfsSwitches(ix, T, want, queue);
    expect(Array.from(d.from(T, src))).toEqual(Array.from(want));
  }
}

describe('verifier switch distances (32 sources at a time) as one BFS each', () => {
  for (const spec of ['gen:torus:6x6,hosts=1', 'gen:dragonfly:a=4,p=2,h=2', 'gen:fattree3:pods=4,leaves=4,spines=2,cores=2,hosts=2', 'gen:mesh:5x7,hosts=0']) {
    it(`${spec}: every switch a source`, () => {
      const f = fabricWithLids(spec);
      const ix = indexFabric(f);
      expectSame(f, Array.from({ length: ix.nSw }, (_, i) => i));
    });
  }

  it('every other switch a source, two switches cut off', () => {
    const f = fabricWithLids('gen:torus:7x7,hosts=1');
    const cut = f.nodes.map((n, i) => (isSwitch(n) ? i : -1)).filter((i) => i >= 0).slice(10, 12);
    for (const s of cut) {
      for (const p of f.nodes[s]!.ports) {
        if (!p?.peer || !isSwitch(f.nodes[p.peer.node]!) || cut.includes(p.peer.node)) continue;
        f.nodes[p.peer.node]!.ports[p.peer.port]!.peer = undefined;
        p.peer = undefined;
      }
    }
    const ix = indexFabric(f);
    expectSame(f, Array.from({ length: ix.nSw }, (_, i) => i).filter((i) => i % 2 === 0));
    const d = new SwitchDistances(ix).from(0, Int32Array.from([0]));
    expect(d.filter((x) => x < 0)).toHaveLength(2);
  });
});

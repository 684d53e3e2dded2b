/** MultiPathRecord IndependenceSelector: two sources on one leaf, one destination on the other,
 * LMC 1 on a fat tree with two spines. The round-robin order gives one path per source to the
 * destination's base LID (both through the same spine); the selector picks the second path to the
 * other LID, through the other spine. */
import { beforeAll, describe, expect, it } from 'vitest';
import { Method, NodeType } from '../src/wire/mad.js';
import { MultiPathRecord, PathRecord, SaAttr } from '../src/wire/sa.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import { walkPath } from '../src/sa/path.js';
import { snapshotPorts } from '../src/model/snapshot.js';
import { loadFabricSpec } from '../src/model/load.js';
import type { SaContext } from '../src/sa/types.js';
import { buildContext, query, requester } from './sa-fixture.js';

let ctx: SaContext;
let engine: SaEngine;
beforeAll(async () => {
  ctx = (await buildContext(loadFabricSpec('gen:fattree2:leaves=2,spines=2,hosts=2'), { lmc: 1, routing: ['updn', 'minhop'] })).ctx;
  engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
});

describe('MultiPathRecord IndependenceSelector', () => {
  it('picks the paths sharing the fewest switches (2) or links (1); without it, the round-robin order', () => {
    const f = ctx.snapshot.fabric;
    const idx = snapshotPorts(ctx.snapshot);
    const cas = idx.endPorts.filter((e) => f.nodes[e.node]!.type !== NodeType.Switch);
    const leafOf = (e: (typeof cas)[number]): number => f.nodes[e.node]!.ports[e.port]!.peer!.node;
    const a1 = cas[0]!;
    const a2 = cas.find((e) => e !== a1 && leafOf(e) === leafOf(a1))!;
    const b = cas.find((e) => leafOf(e) !== leafOf(a1))!;
    const gid = (e: typeof a1): bigint => (0xfe80000000000000n << 64n) | e.guid;
    const ask = (numbPath: number, indep?: number): PathRecord[] => {
      const data = MultiPathRecord.encode({ sgidCount: 2, dgidCount: 1, numbPath, independenceSelector: indep ?? 0, gids: [gid(a1), gid(a2), gid(b)] });
      const mask = MultiPathRecord.mask('sgidCount', 'dgidCount', 'numbPath', 'gids', ...(indep !== undefined ? ['independenceSelector'] : []));
      const r = engine.answer(query(Method.GetMulti, SaAttr.MultiPathRecord, data, mask, requester(ctx, a1.node)), ctx);
      if (r.kind !== 'records') throw new Error(`status 0x${r.status.toString(16)}`);
      return r.records.map((x) => PathRecord.decode(x));
    };
    const srcOf = (p: PathRecord) => (p.slid >= a1.lid && p.slid < a1.lid + 2 ? a1 : a2);
    const switchesOf = (p: PathRecord): Set<number> => {
      const w = walkPath(ctx, srcOf(p), p.dlid, b);
      if (!w.ok) throw new Error(w.reason);
      return new Set(w.hops.filter((h) => f.nodes[h.node]!.type === NodeType.Switch).map((h) => h.node));
    };
    const shared = (ps: PathRecord[]): number => {
      const [x, y] = ps.map(switchesOf);
      return [...x!].filter((n) => y!.has(n)).length;
    };
    const all = ask(16);
    expect(all.length).toBe(8); // 2 sources x (2 x 2 LID pairs)
    // The fewest switches any two paths can share: the two leaves.
    let best = Infinity;
    for (let i = 0; i < all.length; i++) for (let j = i + 1; j < all.length; j++) best = Math.min(best, shared([all[i]!, all[j]!]));
    expect(best).toBe(2);
    const plain = ask(2);
    expect(shared(plain)).toBe(3); // both to the base LID: the same spine (the witness)
    expect(shared(ask(2, 2))).toBe(best);
    expect(shared(ask(2, 1))).toBe(best);
    expect(shared(ask(2, 3))).toBe(best);
    // The selector only reorders: the same paths come back when all are asked for.
    expect(ask(16, 2).map((p) => `${p.slid}>${p.dlid}`).sort()).toEqual(all.map((p) => `${p.slid}>${p.dlid}`).sort());
  });
});

/** Taking over another SM's forwarding tables (sm/adopt-lfts.ts, issue #27): the tables read back
 * are adopted only when they verify and balance as well as the configured engine's, and kept only
 * while the fabric is the one they were adopted on. The witness is the route verifier over the
 * tables as a switch would hold them (the Programmed shadows that LFT reads fill). */
import { describe, expect, it } from 'vitest';
import type { Fabric } from '../src/model/fabric.js';
import { isSwitch } from '../src/model/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { getEngine, type RoutingResult } from '../src/routing/index.js';
import { assignLids } from '../src/sm/lids.js';
import { ADOPT_BALANCE_FACTOR, ForeignTables, adoptReadLfts } from '../src/sm/adopt-lfts.js';
import { Programmed } from '../src/sm/programmed.js';
import { LinearForwardingTable, LFT_BLOCK_SIZE } from '../src/wire/sma.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=4';

function fabric(): Fabric {
  const f = loadFabricSpec(SPEC);
  assignLids(f, { lmc: 0 });
  return f;
}
const maxLidOf = (f: Fabric): number => Math.max(...f.nodes.flatMap((n) => n.ports.map((p) => p?.lid ?? 0)));
const switches = (f: Fabric): number[] => f.nodes.flatMap((n, i) => (isSwitch(n) ? [i] : []));

/** What a heavy sweep's LFT reads leave: every block of every switch of `tables`, as the switch's
 * LinearForwardingTable answers carry them. Returns the GUIDs read. */
function readBack(f: Fabric, tables: ReadonlyMap<number, Uint8Array>, maxLid: number, p = new Programmed()): { p: Programmed; reads: Array<{ guid: bigint }> } {
  const blocks = Math.floor(maxLid / LFT_BLOCK_SIZE) + 1;
  const reads: Array<{ guid: bigint }> = [];
  for (const i of switches(f)) {
    const t = tables.get(i)!;
    for (let b = 0; b < blocks; b++) {
      const ports = Array.from({ length: LFT_BLOCK_SIZE }, (_, k) => t[b * LFT_BLOCK_SIZE + k] ?? 255);
      p.learnLft(f.nodes[i]!.guid, b, blocks, LinearForwardingTable.encode({ ports }));
    }
    reads.push({ guid: f.nodes[i]!.guid });
  }
  return { p, reads };
}

function route(f: Fabric, engine: string, seed?: number): RoutingResult {
  return getEngine(engine).route(f, { lmc: 0, ...(seed !== undefined ? { seed } : {}) });
}
const guids = (reads: Array<{ guid: bigint }>): Set<bigint> => new Set(reads.map((r) => r.guid));

describe('adopting the forwarding tables another SM left', () => {
  it("adopts another engine's complete, loop-free, balanced tables as they are", () => {
    const f = fabric();
    const maxLid = maxLidOf(f);
    const ours = route(f, 'ftree');
    const theirs = route(f, 'minhop', 7);
    // The witness that this is a real choice: the two routings differ somewhere.
    expect(switches(f).some((i) => Buffer.compare(theirs.lfts.get(i)!.subarray(0, maxLid + 1), ours.lfts.get(i)!.subarray(0, maxLid + 1)) !== 0)).toBe(true);
    const { p, reads } = readBack(f, theirs.lfts, maxLid);
    const a = adoptReadLfts(f, ours, maxLid, p, guids(reads));
    expect(a.adopted, a.adopted ? '' : a.reason).toBe(true);
    if (!a.adopted) return;
    for (const i of switches(f)) expect(Buffer.from(a.routing.lfts.get(i)!)).toEqual(Buffer.from(theirs.lfts.get(i)!.subarray(0, maxLid + 1)));
    expect(a.routing.engine).toBe('ftree');
    expect(a.routing.notes).toContain('forwarding tables adopted from the previous master');
    expect(a.deadlockFree).toBe(true);
    expect(a.busiest).toBeLessThanOrEqual(ADOPT_BALANCE_FACTOR * a.ours);
  });

  it('refuses tables with a loop, a missing route, or a block not read', () => {
    const f = fabric();
    const maxLid = maxLidOf(f);
    const ours = route(f, 'ftree');
    const [s0, s1] = switches(f);
    const dlid = f.nodes.find((n) => !isSwitch(n))!.ports[1]!.lid!;
    // a loop: two switches send one LID to each other
    const loop = new Map([...ours.lfts].map(([i, t]) => [i, t.slice()]));
    const link01 = f.nodes[s0!]!.ports.findIndex((q) => q?.peer?.node === s1);
    const spine = link01 > 0 ? s1! : f.nodes[s0!]!.ports.find((q) => q?.peer && isSwitch(f.nodes[q.peer.node]!))!.peer!.node;
    const up = f.nodes[s0!]!.ports.findIndex((q) => q?.peer?.node === spine);
    const down = f.nodes[spine]!.ports.findIndex((q) => q?.peer?.node === s0);
    loop.get(s0!)![dlid] = up;
    loop.get(spine)![dlid] = down;
    const l = readBack(f, loop, maxLid);
    const la = adoptReadLfts(f, ours, maxLid, l.p, guids(l.reads));
    expect(la.adopted).toBe(false);
    expect(la.adopted ? '' : la.reason).toMatch(/do not verify: .*loops: 1 LIDs loop/);
    // a black hole
    const hole = new Map([...ours.lfts].map(([i, t]) => [i, t.slice()]));
    hole.get(spine)![dlid] = 255;
    const h = readBack(f, hole, maxLid);
    const ha = adoptReadLfts(f, ours, maxLid, h.p, guids(h.reads));
    expect(ha.adopted ? '' : ha.reason).toMatch(/do not verify: reachability: \d+ of \d+ CA pairs/);
    // one switch not read (this SM programmed it, or it did not answer)
    const r = readBack(f, ours.lfts, maxLid);
    const partial = guids(r.reads);
    partial.delete(f.nodes[s0!]!.guid);
    const pa = adoptReadLfts(f, ours, maxLid, r.p, partial);
    expect(pa.adopted ? '' : pa.reason).toMatch(/was not read back/);
  });

  it('refuses tables whose busiest link carries more than 1.2x the routes of ours', () => {
    const f = fabric();
    const maxLid = maxLidOf(f);
    const ours = route(f, 'ftree');
    // Every leaf sends every remote destination up its first uplink: complete and loop-free, but
    // one uplink of each leaf carries all the leaf's routes.
    const skewed = new Map([...ours.lfts].map(([i, t]) => [i, t.slice()]));
    const caLids = f.nodes.flatMap((n) => (isSwitch(n) ? [] : [n.ports[1]!.lid!]));
    for (const i of switches(f)) {
      const n = f.nodes[i]!;
      if (!n.ports.some((q) => q?.peer && !isSwitch(f.nodes[q.peer.node]!))) continue; // leaves only
      const firstUp = n.ports.findIndex((q) => q?.peer && isSwitch(f.nodes[q.peer.node]!));
      const t = skewed.get(i)!;
      const own = new Set(n.ports.flatMap((q) => (q?.peer && !isSwitch(f.nodes[q.peer.node]!) ? [f.nodes[q.peer.node]!.ports[q.peer.port]!.lid!] : [])));
      for (const lid of caLids) if (!own.has(lid)) t[lid] = firstUp;
    }
    const s = readBack(f, skewed, maxLid);
    const a = adoptReadLfts(f, ours, maxLid, s.p, guids(s.reads));
    expect(a.adopted).toBe(false);
    expect(a.adopted ? '' : a.reason).toMatch(/their busiest link carries \d+ routes, more than 1.2 × \d+ of ftree's/);
  });

  it("never adopts over an engine whose routes use several VLs", () => {
    const f = fabric();
    const maxLid = maxLidOf(f);
    const ours: RoutingResult = { ...route(f, 'ftree'), vlsUsed: 2 };
    const r = readBack(f, ours.lfts, maxLid);
    const a = adoptReadLfts(f, ours, maxLid, r.p, guids(r.reads));
    expect(a.adopted ? '' : a.reason).toMatch(/use 2 VLs/);
  });

  it('keeps adopted tables while the fabric is the same, drops them on a change or when told', () => {
    const f = fabric();
    const maxLid = maxLidOf(f);
    const ours = route(f, 'ftree');
    const theirs = route(f, 'minhop', 7);
    const { p, reads } = readBack(f, theirs.lfts, maxLid);
    const kept = new ForeignTables();
    const first = kept.choose(f, ours, maxLid, p, reads);
    expect(first.adoption?.adopted).toBe(true);
    // the next heavy sweep, nothing read (this SM's shadows now), the same fabric: the same tables
    const again = kept.choose(fabric(), ours, maxLid, p, []);
    expect(again.routing).toBe(first.routing);
    expect(again.adoption).toBeUndefined();
    kept.forget();
    expect(kept.choose(f, ours, maxLid, p, []).routing).toBe(ours);
    // adopted again, then a link gone: ours from there on
    kept.choose(f, ours, maxLid, p, reads);
    const changed = fabric();
    const sw = switches(changed)[0]!;
    const pn = changed.nodes[sw]!.ports.findIndex((q) => q?.peer && isSwitch(changed.nodes[q.peer.node]!));
    const peer = changed.nodes[sw]!.ports[pn]!.peer!;
    changed.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
    changed.nodes[sw]!.ports[pn]!.peer = undefined;
    expect(kept.choose(changed, ours, maxLid, p, []).routing).toBe(ours);
    expect(kept.choose(f, ours, maxLid, p, []).routing, 'not kept once dropped').toBe(ours);
  });
});

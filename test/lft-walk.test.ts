/** model/lft-walk: the one walk through the LFTs behind PathRecords (sa/path.ts) and `route`
 * (api/route.ts), on hand-made fabrics and tables: arrival at the port that owns the LID, and each
 * way a walk fails. */
import { describe, expect, it } from 'vitest';
import { walkLfts } from '../src/model/lft-walk.js';
import { NO_ROUTE } from '../src/model/routes.js';
import { NodeType } from '../src/wire/mad.js';
import type { Fabric, FabricNode } from '../src/model/fabric.js';

/** Switches 0 and 1 (3 ports each) linked by their port 3; a two-port CA (node 2) with port 1 on
 * switch 0 port 1 and port 2 on switch 1 port 1. CA port 1 has LID 1, port 2 LID 2, the switches
 * LIDs 3 and 4. */
function fabric(): Fabric {
  const node = (type: FabricNode['type'], numPorts: number, guid: bigint): FabricNode =>
    ({ type, guid, systemImageGuid: guid, desc: `n${guid}`, numPorts, vendorId: 0, deviceId: 0, ports: Array.from({ length: numPorts + 1 }, () => ({ guid })) }) as unknown as FabricNode;
  const f: Fabric = { nodes: [node(NodeType.Switch, 3, 1n), node(NodeType.Switch, 3, 2n), node(NodeType.CA, 2, 3n)] };
  const link = (a: number, pa: number, b: number, pb: number): void => {
    f.nodes[a]!.ports[pa]!.peer = { node: b, port: pb };
    f.nodes[b]!.ports[pb]!.peer = { node: a, port: pa };
  };
  link(0, 3, 1, 3);
  link(2, 1, 0, 1);
  link(2, 2, 1, 1);
  return f;
}
const lft = (entries: Record<number, number>): Uint8Array => {
  const t = new Uint8Array(8).fill(NO_ROUTE);
  for (const [lid, port] of Object.entries(entries)) t[Number(lid)] = port;
  return t;
};

describe('walkLfts', () => {
  it('walks out of the source port, through each LFT, into the port that owns the LID; every link crossed is seen', () => {
    const f = fabric();
    const lfts = new Map([[0, lft({ 2: 3 })], [1, lft({ 2: 1 })]]);
    const seen: string[] = [];
    const w = walkLfts(f, lfts, { node: 2, port: 1 }, 2, { node: 2, port: 2 }, (n, p, peer) => seen.push(`${n}:${p}->${peer.node}:${peer.port}`));
    expect(w).toEqual({ ok: true, hops: [{ node: 2, inPort: 0, outPort: 1 }, { node: 0, inPort: 1, outPort: 3 }, { node: 1, inPort: 3, outPort: 1 }, { node: 2, inPort: 2, outPort: 0 }] });
    expect(seen).toEqual(['2:1->0:1', '0:3->1:3', '1:1->2:2']);
  });

  it('a switch destination is reached at the switch whatever port the route enters by; a port to itself is one hop', () => {
    const f = fabric();
    const lfts = new Map([[0, lft({ 4: 3 })], [1, lft({ 4: 0 })]]);
    expect(walkLfts(f, lfts, { node: 2, port: 1 }, 4, { node: 1, port: 0 })).toMatchObject({ ok: true, hops: [{ node: 2 }, { node: 0 }, { node: 1, inPort: 3, outPort: 0 }] });
    expect(walkLfts(f, lfts, { node: 2, port: 1 }, 1, { node: 2, port: 1 })).toEqual({ ok: true, hops: [{ node: 2, inPort: 0, outPort: 0 }] });
  });

  it('fails with the reason and the node: no LFT entry, an entry past the last port, a port with no link, a CA entered by the wrong port, a loop', () => {
    const f = fabric();
    const src = { node: 2, port: 1 };
    expect(walkLfts(f, new Map([[0, lft({})]]), src, 2, { node: 2, port: 2 })).toMatchObject({ ok: false, reason: 'noRoute', node: 0, port: NO_ROUTE });
    expect(walkLfts(f, new Map([[0, lft({ 2: 9 })]]), src, 2, { node: 2, port: 2 })).toMatchObject({ ok: false, reason: 'noRoute', node: 0, port: 9 });
    expect(walkLfts(f, new Map([[0, lft({ 2: 2 })]]), src, 2, { node: 2, port: 2 })).toMatchObject({ ok: false, reason: 'noLink', node: 0, port: 2 });
    // LID 2 is CA port 2's, but switch 0 sends it back into CA port 1.
    expect(walkLfts(f, new Map([[0, lft({ 2: 1 })]]), { node: 1, port: 0 }, 2, { node: 2, port: 2 })).toMatchObject({ ok: false, reason: 'noRoute', node: 1 });
    expect(walkLfts(f, new Map([[1, lft({ 2: 3 })], [0, lft({ 2: 1 })]]), { node: 1, port: 0 }, 2, { node: 2, port: 2 })).toMatchObject({ ok: false, reason: 'notOwner', node: 2, port: 1 });
    expect(walkLfts(f, new Map([[0, lft({ 2: 3 })], [1, lft({ 2: 3 })]]), src, 2, { node: 2, port: 2 })).toMatchObject({ ok: false, reason: 'loop' });
  });
});

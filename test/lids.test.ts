import { describe, expect, it } from 'vitest';
import { assignLids, formatGuid2Lid, parseGuid2Lid, Guid2LidError, endPorts } from '../src/sm/lids.js';
import type { Fabric, FabricNode } from '../src/model/fabric.js';
import { NodeType } from '../src/wire/mad.js';

/** A switch with `hosts` single-port CAs on ports 1..hosts. */
function star(hosts: number): Fabric {
  const sw: FabricNode = { type: NodeType.Switch, guid: 0x200000n, systemImageGuid: 0x200000n, desc: 'sw', numPorts: hosts, vendorId: 0, deviceId: 0, ports: [{ num: 0, guid: 0x200000n }] };
  const nodes: FabricNode[] = [sw];
  for (let h = 1; h <= hosts; h++) {
    sw.ports[h] = { num: h, guid: 0x200000n, peer: { node: h, port: 1 } };
    nodes.push({ type: NodeType.CA, guid: BigInt(0x100000 + 2 * h), systemImageGuid: 0n, desc: `h${h}`, numPorts: 1, vendorId: 0, deviceId: 0, ports: [undefined, { num: 1, guid: BigInt(0x100001 + 2 * h), peer: { node: 0, port: h } }] });
  }
  return { nodes };
}

describe('assignLids', () => {
  it('gives the SM port LID 1 and unique aligned ranges with LMC', () => {
    const f = star(5);
    const r = assignLids(f, { lmc: 2, smNode: 3, smPort: 1 });
    // The SM port comes first: the lowest range of 4 aligned LIDs is 4..7 (LID 0 is reserved).
    expect(f.nodes[3]!.ports[1]!.lid).toBe(4);
    const ranges = endPorts(f, 2).map((p) => f.nodes[p.node]!.ports[p.port]!);
    const used = new Set<number>();
    for (const p of ranges) {
      const n = 1 << (p.lmc ?? 0);
      expect(p.lid! % n).toBe(0);
      for (let l = p.lid!; l < p.lid! + n; l++) {
        expect(used.has(l)).toBe(false);
        used.add(l);
      }
    }
    expect(f.nodes[0]!.ports[0]!.lmc).toBe(0);
    expect(r.byGuid.size).toBe(6);
    expect(r.maxLid).toBe(Math.max(...used));
  });
  it('places the SM first on a cold fabric (LMC 0)', () => {
    const f = star(4);
    assignLids(f, { lmc: 0, smNode: 2, smPort: 1 });
    expect(f.nodes[2]!.ports[1]!.lid).toBe(1);
  });
  it('keeps persisted LIDs, then current LIDs, and fills the rest', () => {
    const f = star(3);
    f.nodes[1]!.ports[1]!.lid = 7; // current on the wire
    const existing = new Map([[f.nodes[2]!.ports[1]!.guid, { base: 20, lmc: 0 }]]);
    const r = assignLids(f, { lmc: 0, existing });
    expect(f.nodes[2]!.ports[1]!.lid).toBe(20);
    expect(f.nodes[1]!.ports[1]!.lid).toBe(7);
    expect(r.changed).toBe(3); // switch, host 2, host 3 changed from 0
  });
  it('resolves a persisted/current conflict in favour of the persisted map', () => {
    const f = star(2);
    f.nodes[1]!.ports[1]!.lid = 5;
    const existing = new Map([[f.nodes[2]!.ports[1]!.guid, { base: 5, lmc: 0 }]]);
    assignLids(f, { lmc: 0, existing });
    expect(f.nodes[2]!.ports[1]!.lid).toBe(5);
    expect(f.nodes[1]!.ports[1]!.lid).not.toBe(5);
  });
  it('rejects a bad LMC', () => {
    expect(() => assignLids(star(1), { lmc: 8 })).toThrow(RangeError);
  });
});

describe('guid2lid file', () => {
  it('round-trips OpenSM format', () => {
    const text = '0x0000000000100001 0x0001 0x0001\n0x0000000000200000 0x0004 0x0007\n';
    const m = parseGuid2Lid(text);
    expect(m.get(0x100001n)).toEqual({ base: 1, lmc: 0 });
    expect(m.get(0x200000n)).toEqual({ base: 4, lmc: 2 });
    expect(formatGuid2Lid(m)).toBe(text);
  });
  it('reports the line of a malformed entry', () => {
    expect(() => parseGuid2Lid('0x1 0x1 0x1\nbogus\n', 'g2l')).toThrow(/g2l:2/);
    expect(() => parseGuid2Lid('0x1 0x0003 0x0004\n')).toThrow(Guid2LidError);
  });
});

/** SA state sync (src/sa/sync.ts): numbered changes, increments or the whole state per pull,
 * which standby is current, and the byte framing of an update. */
import { describe, expect, it } from 'vitest';
import { decodeSyncUpdate, encodeSyncUpdate, SyncMirror, SyncSource, type SyncEntries } from '../src/sa/sync.js';
import { DecodeError } from '../src/wire/errors.js';

const entries = (o: Record<string, number[]>): SyncEntries => new Map(Object.entries(o).map(([k, v]) => [k, Uint8Array.from(v)]));

describe('SyncSource / SyncMirror', () => {
  it('a new standby gets everything, then only what changed, and is current after each pull', () => {
    const src = new SyncSource();
    const mirror = new SyncMirror();
    src.update(entries({ a: [1], b: [2] }));
    expect(src.knows(7n)).toBe(false);
    const first = src.pull(7n, mirror.seq, 0);
    expect(first.full).toBe(true);
    mirror.apply(first);
    expect(src.isCurrent(7n)).toBe(true);
    expect([...mirror.entries.keys()].sort()).toEqual(['a', 'b']);
    // b changes, a goes, c comes: three changes under one sequence number.
    src.update(entries({ b: [3], c: [4] }));
    expect(src.isCurrent(7n), 'behind after a change it has not pulled').toBe(false);
    const delta = src.pull(7n, mirror.seq, 1);
    expect(delta.full).toBe(false);
    expect(delta.changes.map((c) => [c.key, c.data ? [...c.data] : null]).sort()).toEqual([
      ['a', null],
      ['b', [3]],
      ['c', [4]],
    ]);
    mirror.apply(delta);
    expect(new Map([...mirror.entries].map(([k, v]) => [k, [...v]]))).toEqual(new Map([['b', [3]], ['c', [4]]]));
    // Nothing changed: an empty answer, still current.
    src.update(entries({ b: [3], c: [4] }));
    expect(src.pull(7n, mirror.seq, 2)).toEqual({ seq: mirror.seq, full: false, changes: [] });
    expect(src.isCurrent(7n)).toBe(true);
  });

  it('a standby further behind than the journal reaches gets the whole state', () => {
    const src = new SyncSource(2);
    const mirror = new SyncMirror();
    src.update(entries({ a: [1] }));
    mirror.apply(src.pull(1n, 0n, 0));
    for (let i = 0; i < 5; i++) src.update(entries({ a: [1], [`k${i}`]: [i] }));
    const u = src.pull(1n, mirror.seq, 1);
    expect(u.full).toBe(true);
    mirror.apply(u);
    expect([...mirror.entries.keys()].sort()).toEqual(['a', 'k4']);
  });

  it('frames an update as bytes and back; refuses bytes that do not frame', () => {
    const u = { seq: 0x1234_5678_9abcn, full: true, changes: [{ key: 'm/ff12/1', data: Uint8Array.from([1, 2, 3]) }, { key: 'gone' }] };
    const b = encodeSyncUpdate(u);
    expect(decodeSyncUpdate(b)).toEqual(u);
    // A trailing pad (a single-MAD answer carries zeros after the payload) is ignored.
    expect(decodeSyncUpdate(Uint8Array.from([...b, 0, 0, 0]))).toEqual(u);
    for (const cut of [5, 14, b.length - 1]) expect(() => decodeSyncUpdate(b.subarray(0, cut))).toThrow(DecodeError);
  });
});

describe("the master's view sent with the SA state (#27)", () => {
  it('the fingerprint is equal for equal views and moves with a LID, a link or a node', async () => {
    const { loadFabricSpec } = await import('../src/model/load.js');
    const { cloneFabric } = await import('../src/model/fabric.js');
    const { fabricFingerprint } = await import('../src/model/snapshot.js');
    const f = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2');
    f.nodes.forEach((n, i) => n.ports.forEach((p) => p && (p.lid = i + 1)));
    const fp = fabricFingerprint(f);
    expect(fabricFingerprint(cloneFabric(f))).toBe(fp);
    const lid = cloneFabric(f);
    const ca = lid.nodes.findIndex((n) => n.type !== 2);
    lid.nodes[ca]!.ports[1]!.lid = 99;
    expect(fabricFingerprint(lid)).not.toBe(fp);
    const link = cloneFabric(f);
    const peer = link.nodes[ca]!.ports[1]!.peer!;
    link.nodes[ca]!.ports[1]!.peer = undefined;
    link.nodes[peer.node]!.ports[peer.port]!.peer = undefined;
    expect(fabricFingerprint(link)).not.toBe(fp);
    const node = cloneFabric(f);
    node.nodes[ca]!.guid ^= 1n;
    expect(fabricFingerprint(node)).not.toBe(fp);
  });
});

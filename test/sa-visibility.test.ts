import { beforeAll, describe, expect, it } from 'vitest';
import { Method, NodeType } from '../src/wire/mad.js';
import { NodeRecord, PathRecord, PKeyTableRecord, PortInfoRecord, SaAttr, SaStatus } from '../src/wire/sa.js';
import { parsePartitions } from '../src/model/partitions.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers } from '../src/sa/server.js';
import { pkeySet, share, shareThis } from '../src/sa/visibility.js';
import type { SaAnswer, SaContext } from '../src/sa/types.js';
import { buildContext, mixedFabric, nodeByDesc, query, requester, type Built } from './sa-fixture.js';

const PREFIX = 0xfe80000000000000n;
let b: Built;
let ctx: SaContext;
let engine: SaEngine;

function records(a: SaAnswer): Uint8Array[] {
  if (a.kind !== 'records') throw new Error(`expected records, got status 0x${a.status.toString(16)}`);
  return a.records;
}

// GUIDs the FabricBuilder gives mixedFabric(): switches 0x200000.., CAs from 0x100000 (node GUID, then one per port).
const H0 = 0x100001n;
const H1 = 0x100003n;
const H2 = 0x100005n;
const H3a = 0x100007n;
const H3b = 0x100008n;

beforeAll(async () => {
  const plan = parsePartitions(`
    Default=0x7fff : ALL=limited, ALL_SWITCHES=full, SELF=full ;
    A=0x000a : 0x${H0.toString(16)}=full, 0x${H1.toString(16)}=full ;
    B=0x000b : 0x${H2.toString(16)}=full, 0x${H3a.toString(16)}=full, 0x${H3b.toString(16)}=full ;
  `);
  const f = mixedFabric();
  b = await buildContext(f, { partitions: plan, smNode: 0 }); // the SM runs on switch S0
  ctx = b.ctx;
  engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
});

function visibleNodes(fromDesc: string): string[] {
  const who = requester(ctx, nodeByDesc(ctx, fromDesc));
  return [...new Set(records(engine.answer(query(Method.GetTable, SaAttr.NodeRecord, new Uint8Array(108), 0n, who), ctx)).map((r) => NodeRecord.decode(r).nodeDescription.description))].sort();
}

describe('P_Key sharing', () => {
  it('a full member shares with anyone holding the key; two limited members do not', () => {
    expect(share(pkeySet([0x7fff]), pkeySet([0xffff]))).toBe(true);
    expect(share(pkeySet([0x7fff]), pkeySet([0x7fff]))).toBe(false);
    expect(share(pkeySet([0x800a]), pkeySet([0x800b]))).toBe(false);
    expect(share(pkeySet([0x0000, 0x8000]), pkeySet([0x8000]))).toBe(false); // invalid keys never match
    expect(shareThis(pkeySet([0x800a, 0x7fff]), pkeySet([0x000a]), 0x800a)).toBe(true);
    expect(shareThis(pkeySet([0x7fff]), pkeySet([0x7fff]), 0xffff)).toBe(false);
  });

  it('the SM programmed the tables the test relies on', () => {
    expect(b.sim.pkeys('H0 HCA-1', 1).filter(Boolean).sort()).toEqual([0x7fff, 0x800a]);
    expect(b.sim.pkeys('H2 HCA-1', 1).filter(Boolean).sort()).toEqual([0x7fff, 0x800b]);
  });
});

describe('records hidden by P_Keys', () => {
  it('a requester sees only devices it shares a P_Key with', () => {
    expect(visibleNodes('H0 HCA-1')).toEqual(['H0 HCA-1', 'H1 HCA-1', 'S0', 'S1', 'S2']);
    expect(visibleNodes('H2 HCA-1')).toEqual(['H2 HCA-1', 'H3 HCA-1', 'S0', 'S1', 'S2']);
  });

  it('PortInfoRecord and P_KeyTableRecord of a hidden port: NoRecords', () => {
    const h2 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'H2 HCA-1')]!;
    const lid = h2.ports[1]!.lid!;
    const h0 = requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'));
    const h3 = requester(ctx, nodeByDesc(ctx, 'H3 HCA-1'));
    const pir = (who: typeof h0): SaAnswer => engine.answer(query(Method.Get, SaAttr.PortInfoRecord, PortInfoRecord.encode({ endportLid: lid }), PortInfoRecord.mask('endportLid'), who), ctx);
    expect(pir(h0)).toEqual({ kind: 'status', status: SaStatus.NoRecords });
    expect(records(pir(h3)).length).toBe(1);
    const pk = engine.answer(query(Method.Get, SaAttr.PKeyTableRecord, PKeyTableRecord.encode({ lid, blockNum: 0 }), PKeyTableRecord.mask('lid', 'blockNum'), h0), ctx);
    expect(pk).toEqual({ kind: 'status', status: SaStatus.NoRecords });
  });

  it('an unknown requester (LID not in the subnet) sees nothing', () => {
    const who = { lid: 0xbff0, smKey: 0n, trusted: false, qpn: 1 };
    expect(records(engine.answer(query(Method.GetTable, SaAttr.NodeRecord, new Uint8Array(108), 0n, who), ctx))).toEqual([]);
  });
});

describe('paths hidden by P_Keys', () => {
  const gid = (guid: bigint): bigint => (PREFIX << 64n) | guid;
  const pathsAs = (who: string, src: bigint, dst: bigint): number => {
    const a = engine.answer(query(Method.GetTable, SaAttr.PathRecord, PathRecord.encode({ sgid: gid(src), dgid: gid(dst) }), PathRecord.mask('sgid', 'dgid'), requester(ctx, nodeByDesc(ctx, who))), ctx);
    return records(a).length;
  };

  it('source and destination must share a key', () => {
    expect(pathsAs('H0 HCA-1', H0, H1)).toBe(1);
    expect(pathsAs('H0 HCA-1', H0, H2)).toBe(0); // only limited default in common
  });

  it('the requester must share with both ends', () => {
    expect(pathsAs('H2 HCA-1', H0, H1)).toBe(0);
    expect(pathsAs('H3 HCA-1', H2, H3a)).toBe(1);
    expect(pathsAs('H1 HCA-1', H2, H3a)).toBe(0);
  });

  it('the path P_Key is the shared partition, not the limited default', () => {
    const a = engine.answer(query(Method.Get, SaAttr.PathRecord, PathRecord.encode({ sgid: gid(H0), dgid: gid(H1) }), PathRecord.mask('sgid', 'dgid'), requester(ctx, nodeByDesc(ctx, 'H0 HCA-1'))), ctx);
    expect(PathRecord.decode(records(a)[0]!).pKey).toBe(0x800a);
  });

  it('a switch (full default member) reaches every CA', () => {
    const s1 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'S1')]!;
    expect(s1.type).toBe(NodeType.Switch);
    const a = engine.answer(query(Method.GetTable, SaAttr.PathRecord, PathRecord.encode({ sgid: gid(s1.guid) }), PathRecord.mask('sgid'), requester(ctx, nodeByDesc(ctx, 'S1'))), ctx);
    const dests = records(a).map((r) => PathRecord.decode(r).dgid & ((1n << 64n) - 1n));
    for (const g of [H0, H1, H2, H3a, H3b]) expect(dests).toContain(g);
  });
});

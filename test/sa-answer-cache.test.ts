// The SA's PathRecord answer cache: a repeated Get is answered with the bytes a fresh computation
// would give, per requester (P_Key visibility) and per SA context (a new sweep forgets everything).
import { beforeAll, describe, expect, it } from 'vitest';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { PathRecord, SA_QKEY, SaAttr, SaStatus, Selector, decodeSaMad, encodeSaMad } from '../src/wire/sa.js';
import type { MadRpc } from '../src/rpc/madrpc.js';
import type { ReceivedMad } from '../src/transport/types.js';
import { parsePartitions } from '../src/model/partitions.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers, SaServer } from '../src/sa/server.js';
import type { SaContext } from '../src/sa/types.js';
import { buildContext, mixedFabric, nodeByDesc, SM_KEY } from './sa-fixture.js';

// GUIDs the FabricBuilder gives mixedFabric() (see sa-visibility.test.ts).
const H0 = 0x100001n;
const H1 = 0x100003n;
const H2 = 0x100005n;
const H3a = 0x100007n;
const H3b = 0x100008n;
const PREFIX = 0xfe80000000000000n;

let ctx: SaContext;

beforeAll(async () => {
  const plan = parsePartitions(`
    Default=0x7fff : ALL=limited, ALL_SWITCHES=full, SELF=full ;
    A=0x000a : 0x${H0.toString(16)}=full, 0x${H1.toString(16)}=full ;
    B=0x000b : 0x${H2.toString(16)}=full, 0x${H3a.toString(16)}=full, 0x${H3b.toString(16)}=full ;
  `);
  ctx = (await buildContext(mixedFabric(), { partitions: plan, smNode: 0, lmc: 1 })).ctx;
});

/** A server whose responses land in `sent` (no transport needed: process() is called directly).
 * With `copiesOnSend` the stub copies each response as umad does, and the server may reuse its buffer. */
function server(answerCacheSize?: number, copiesOnSend = false): { s: SaServer; sent: Uint8Array[] } {
  const sent: Uint8Array[] = [];
  const rpc = {
    copiesOnSend,
    transport: { copiesOnSend },
    respond(req: ReceivedMad, mad: Uint8Array) {
      mad.set(req.data.subarray(8, 16), 8);
      sent.push(copiesOnSend ? mad.slice() : mad);
    },
  } as unknown as MadRpc;
  const engine = new SaEngine();
  for (const h of coreSaHandlers()) engine.register(h);
  const s = new SaServer(rpc, engine, { answerCacheSize, registerAgent: false });
  s.setContext(ctx);
  return { s, sent };
}

const lidOf = (desc: string, port = 1): number => ctx.snapshot.fabric.nodes[nodeByDesc(ctx, desc)]!.ports[port]!.lid!;

function pathGet(fromLid: number, rec: Parameters<typeof PathRecord.encode>[0], mask: bigint, tid: bigint, smKey = 0n): ReceivedMad {
  const data = encodeSaMad({ header: { mgmtClass: MgmtClass.SubnAdm, method: Method.Get, attrId: SaAttr.PathRecord, tid }, sa: { componentMask: mask, smKey } }, PathRecord.encode(rec));
  return { data, addr: { lid: fromLid, qpn: 1, qkey: SA_QKEY }, status: 0 };
}

/** Queries from several requesters, with selectors, across partitions, some without an answer. */
function queries(): ReceivedMad[] {
  const h0 = lidOf('H0 HCA-1');
  const h1 = lidOf('H1 HCA-1');
  const h2 = lidOf('H2 HCA-1');
  const h3 = lidOf('H3 HCA-1', 2);
  const out: ReceivedMad[] = [];
  let tid = 0x100n;
  const lids = (m: typeof PathRecord) => m.mask('slid', 'dlid');
  for (const from of [h0, h1, h2, h3])
    for (const [s, d] of [
      [h0, h1],
      [h0, h2],
      [h2, h3],
      [h3, h0],
      [h1, h1 + 1],
    ] as const)
      out.push(pathGet(from, { slid: s, dlid: d }, lids(PathRecord), tid++));
  out.push(pathGet(h0, { sgid: (PREFIX << 64n) | H0, dgid: (PREFIX << 64n) | H1 }, PathRecord.mask('sgid', 'dgid'), tid++));
  out.push(pathGet(h0, { slid: h0, dlid: h1, mtuSelector: Selector.GreaterThan, mtu: 5 }, PathRecord.mask('slid', 'dlid', 'mtuSelector', 'mtu'), tid++));
  out.push(pathGet(h0, { slid: h0, dlid: h1, rateSelector: Selector.LessThan, rate: 7 }, PathRecord.mask('slid', 'dlid', 'rateSelector', 'rate'), tid++));
  out.push(pathGet(h0, { slid: h0, dlid: h1, pKey: 0x800a }, PathRecord.mask('slid', 'dlid', 'pKey'), tid++));
  out.push(pathGet(h0, { slid: h0, dlid: h1, pKey: 0x800a }, PathRecord.mask('slid', 'dlid', 'pKey'), tid++, SM_KEY));
  out.push(pathGet(h0, { slid: h0, dlid: 0xbff0 }, PathRecord.mask('slid', 'dlid'), tid++));
  return out;
}

describe('SA PathRecord answer cache', () => {
  it.each([false, true])('answers repeats with exactly the bytes a fresh computation gives, per requester (transport copies on send: %s)', (copies) => {
    const cached = server(undefined, copies);
    const fresh = server(0);
    const qs = queries();
    for (const round of [0, 1, 2]) {
      for (const q of qs) {
        // A new TID each round: the cached answer must carry the new one.
        const again: ReceivedMad = { ...q, data: q.data.slice() };
        again.data[15] = round;
        cached.s.process(again);
        fresh.s.process(again);
      }
    }
    expect(cached.sent.length).toBe(qs.length * 3);
    expect(cached.sent.map((m) => Buffer.from(m).toString('hex'))).toEqual(fresh.sent.map((m) => Buffer.from(m).toString('hex')));
    // Answers with a record are kept; error answers (they echo request bytes outside the key) are recomputed.
    const withRecord = fresh.sent.slice(0, qs.length).filter((m) => decodeSaMad(m).header.status === 0).length;
    expect(withRecord).toBeGreaterThan(0);
    expect(withRecord).toBeLessThan(qs.length);
    expect(cached.s.stats.cache).toEqual({ hits: withRecord * 2, misses: qs.length * 3 - withRecord * 2, evictions: 0 });
    expect(fresh.s.stats.cache.hits).toBe(0);
    // Counters are the same whether an answer was computed or copied.
    expect(cached.s.metrics().byStatus).toEqual(fresh.s.metrics().byStatus);
    expect(cached.s.metrics().byAttribute).toEqual(fresh.s.metrics().byAttribute);

    // The queries cover answers and refusals: partitions hide H2 from H0.
    const statuses = new Set(fresh.sent.map((m) => decodeSaMad(m).header.status));
    expect(statuses).toEqual(new Set([0, SaStatus.NoRecords]));
    const h0 = lidOf('H0 HCA-1');
    const h2 = lidOf('H2 HCA-1');
    const idx = (from: number, s: number, d: number) =>
      qs.findIndex((q) => q.addr.lid === from && PathRecord.decode(decodeSaMad(q.data).data).slid === s && PathRecord.decode(decodeSaMad(q.data).data).dlid === d);
    expect(decodeSaMad(cached.sent[qs.length * 2 + idx(h0, h0, h2)]!).header.status).toBe(SaStatus.NoRecords);
    expect(decodeSaMad(cached.sent[qs.length * 2 + idx(h2, h0, h2)]!).header.status).toBe(SaStatus.NoRecords); // H0 shares nothing but Default (limited) with H2
    expect(decodeSaMad(cached.sent[qs.length * 2 + idx(lidOf('H3 HCA-1', 2), lidOf('H2 HCA-1'), lidOf('H3 HCA-1', 2))]!).header.status).toBe(0);
  });

  it('a requester never gets an answer cached for another one', () => {
    const { s, sent } = server();
    const h0 = lidOf('H0 HCA-1');
    const h1 = lidOf('H1 HCA-1');
    const h2 = lidOf('H2 HCA-1');
    const h3 = lidOf('H3 HCA-1', 2);
    // H3 may see a path between H2 and itself; H0 (not in partition B) may not.
    s.process(pathGet(h3, { slid: h2, dlid: h3 }, PathRecord.mask('slid', 'dlid'), 1n));
    s.process(pathGet(h0, { slid: h2, dlid: h3 }, PathRecord.mask('slid', 'dlid'), 2n));
    s.process(pathGet(h1, { slid: h2, dlid: h3 }, PathRecord.mask('slid', 'dlid'), 3n));
    expect(sent.map((m) => decodeSaMad(m).header.status)).toEqual([0, SaStatus.NoRecords, SaStatus.NoRecords]);
    expect(s.stats.cache.hits).toBe(0);
  });

  it('a new SA context (a new sweep) forgets every answer', () => {
    const { s, sent } = server();
    const h0 = lidOf('H0 HCA-1');
    const h1 = lidOf('H1 HCA-1');
    const ask = (tid: bigint) => s.process(pathGet(h0, { slid: h0, dlid: h1 }, PathRecord.mask('slid', 'dlid'), tid));
    ask(1n);
    ask(2n);
    expect(s.stats.cache.hits).toBe(1);
    // Same snapshot, another configured PacketLifeTime: a stale answer would still say 0x12.
    s.setContext({ ...ctx, packetLifeTime: 0x0c });
    ask(3n);
    expect(s.stats.cache.hits).toBe(1);
    expect(PathRecord.decode(decodeSaMad(sent[1]!).data).packetLifeTime).toBe(0x12);
    expect(PathRecord.decode(decodeSaMad(sent[2]!).data).packetLifeTime).toBe(0x0c);
    ask(4n);
    expect(s.stats.cache.hits).toBe(2);
  });

  it('ignores bytes past the record (ibsim delivers bytes 224-255 as garbage)', () => {
    const { s, sent } = server();
    const h0 = lidOf('H0 HCA-1');
    const h1 = lidOf('H1 HCA-1');
    for (let i = 0; i < 3; i++) {
      const q = pathGet(h0, { slid: h0, dlid: h1 }, PathRecord.mask('slid', 'dlid'), BigInt(i));
      q.data.fill(0x55 + i, 224);
      s.process(q);
    }
    expect(s.stats.cache).toEqual({ hits: 2, misses: 1, evictions: 0 });
    expect(new Set(sent.map((m) => Buffer.from(m.subarray(16)).toString('hex'))).size).toBe(1);
  });

  it('stays within its bound', () => {
    const { s } = server(4);
    const h0 = lidOf('H0 HCA-1');
    const h1 = lidOf('H1 HCA-1');
    for (let i = 0; i < 10; i++) s.process(pathGet(h0, { slid: h0, dlid: h1, flowLabel: i }, PathRecord.mask('slid', 'dlid', 'flowLabel'), BigInt(i)));
    expect(s.stats.cache.evictions).toBe(2);
    expect(s.stats.cache.misses).toBe(10);
  });
});

import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MadHeader, MadStatus, MgmtClass, Method } from '../src/wire/mad.js';
import { NodeRecord, PortInfoRecord, SA_QKEY, SaMadHeader, SaAttr, SaStatus, decodeSaMad, decodeSaRecords, encodeSaMad, recordStride, SA_RECORDS } from '../src/wire/sa.js';
import { ClassPortInfo } from '../src/wire/classportinfo.js';
import { RmppFlag } from '../src/wire/rmpp.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import type { MadAddress, ReceivedMad } from '../src/transport/types.js';
import { SaEngine } from '../src/sa/engine.js';
import { coreSaHandlers, QUEUE_MIN, QUEUE_PER_END_PORT, QUEUE_PER_REQUESTER, SaServer } from '../src/sa/server.js';
import { snapshotPorts } from '../src/model/snapshot.js';
import { generateFabric } from '../src/model/generators.js';
import { SA_DATA_OFFSET, SA_HEADER_OFFSET } from '../src/wire/sa-constants.js';
import { buildContext, mixedFabric, nodeByDesc, type Built } from './sa-fixture.js';

let b: Built;

beforeAll(async () => {
  b = await buildContext(mixedFabric(), { lmc: 1 });
});

function newEngine(): SaEngine {
  const e = new SaEngine();
  for (const h of coreSaHandlers()) e.register(h);
  return e;
}

function saRequest(method: number, attrId: number, data: Uint8Array | undefined, mask: bigint, tid = 0x1234n): Uint8Array {
  return encodeSaMad({ header: { method, attrId, tid }, sa: { componentMask: mask } }, data ?? new Uint8Array(0));
}

describe('SaServer over the simulated fabric', () => {
  it('answers GetTable with RMPP-segmented records, Get with one record, to the requester', async () => {
    const { sim, clock, rpc, ctx } = b;
    const server = new SaServer(rpc, newEngine());
    server.start();
    const ep = sim.attach('H1 HCA-1');
    ep.register(MgmtClass.SubnAdm, 2);
    const client = new MadRpc(ep, clock, { timeoutMs: 200, retries: 2 });
    const sa: MadAddress = { lid: ctx.snapshot.smLid, qpn: 1, qkey: SA_QKEY };
    const ask = (mad: Uint8Array): Promise<ReceivedMad> => clock.runUntil(client.request(mad, sa), 5000);

    // Before the SM publishes a context: BUSY.
    const busy = decodeSaMad((await ask(saRequest(Method.Get, SaAttr.ClassPortInfo, undefined, 0n))).data);
    expect(busy.header.status).toBe(MadStatus.Busy);
    server.setContext(ctx);

    const cpi = decodeSaMad((await ask(saRequest(Method.Get, SaAttr.ClassPortInfo, undefined, 0n))).data);
    expect(cpi.header.method).toBe(Method.GetResp);
    expect(ClassPortInfo.decode(cpi.data).respTimeValue).toBe(18);

    const table = await ask(saRequest(Method.GetTable, SaAttr.NodeRecord, undefined, 0n));
    const msg = decodeSaMad(table.data);
    expect(msg.header.method).toBe(Method.GetTableResp);
    expect(msg.header.status).toBe(0);
    expect(msg.sa.attributeOffset).toBe(recordStride(NodeRecord) / 8);
    const recs = decodeSaRecords(msg, NodeRecord, msg.data.length / recordStride(NodeRecord));
    expect(recs.length).toBe(8);
    expect(recs.length * recordStride(NodeRecord)).toBeGreaterThan(200); // needed several segments

    const h3 = ctx.snapshot.fabric.nodes[nodeByDesc(ctx, 'H3 HCA-1')]!;
    const one = decodeSaMad((await ask(saRequest(Method.Get, SaAttr.PortInfoRecord, PortInfoRecord.encode({ endportLid: h3.ports[2]!.lid! }), PortInfoRecord.mask('endportLid')))).data);
    expect(one.header.method).toBe(Method.GetResp);
    expect(PortInfoRecord.decode(one.data).portInfo.lid).toBe(h3.ports[2]!.lid);

    const none = decodeSaMad((await ask(saRequest(Method.Get, SaAttr.PortInfoRecord, PortInfoRecord.encode({ endportLid: 0xbff0 }), PortInfoRecord.mask('endportLid')))).data);
    expect(none.header.status).toBe(SaStatus.NoRecords);

    const m = server.metrics();
    expect(m.byAttribute['NodeRecord']).toBe(1);
    expect(m.busy).toBe(1);
    expect(m.byStatus['0x0300']).toBe(1);
    server.stop();
    client.close();
  });
});

// ---------- unit tests with a recording stand-in for MadRpc ----------

interface Sent {
  mad: Uint8Array;
  payload?: Uint8Array;
  to: MadAddress;
}

function stubServer(opts: { maxQueue?: number; manual?: boolean; ctx?: Built['ctx'] } = {}): { server: SaServer; sent: Sent[]; run: () => void } {
  const sent: Sent[] = [];
  const pending: (() => void)[] = [];
  const rpc = {
    register: () => undefined,
    onUnsolicited: () => () => undefined,
    respond(req: ReceivedMad, mad: Uint8Array) {
      mad.set(req.data.subarray(8, 16), 8);
      sent.push({ mad, to: req.addr });
    },
    respondRmpp(req: ReceivedMad, hdr: Uint8Array, payload: Uint8Array) {
      const h = hdr.slice();
      h.set(req.data.subarray(8, 16), 8);
      sent.push({ mad: h, payload, to: req.addr });
      return Promise.resolve();
    },
  } as unknown as MadRpc;
  const server = new SaServer(rpc, newEngine(), { maxQueue: opts.maxQueue, schedule: (fn) => pending.push(fn) });
  server.setContext(opts.ctx ?? b.ctx);
  return { server, sent, run: () => { while (pending.length) pending.shift()!(); } };
}

const FROM: MadAddress = { lid: 1, qpn: 7 };

describe('SaServer requests and errors', () => {
  it('a queue per requester, drained in turn: a flood from one LID delays another LID by one turn, and never makes it BUSY (#29)', () => {
    const { server, sent, run } = stubServer({ maxQueue: 64 });
    const flood: MadAddress = { lid: 5, qpn: 1 };
    for (let i = 0; i < 200; i++) server.receive({ data: saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n, BigInt(i + 1)), addr: flood, status: 0 });
    expect(sent.length).toBe(200 - 64); // the flood's own overflow: BUSY at once
    expect(sent.every((s) => MadHeader.decode(s.mad).status === MadStatus.Busy)).toBe(true);
    server.receive({ data: saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n, 0x1234n), addr: FROM, status: 0 });
    // room made: the flood's newest answered BUSY, the other requester queued
    expect(sent.length).toBe(200 - 64 + 1);
    expect(sent.at(-1)!.to).toEqual(flood);
    run();
    const mine = sent.findIndex((s) => s.to.lid === FROM.lid);
    expect(MadHeader.decode(sent[mine]!.mad).status).not.toBe(MadStatus.Busy);
    expect(mine - (200 - 64 + 1)).toBeLessThanOrEqual(1); // answered in the first turn
    expect(sent.length).toBe(200 + 1);
  });

  it('default bounds (#32): every end port sending a re-registration burst at once is queued, none BUSY; one requester is held to QUEUE_PER_REQUESTER', async () => {
    const big = await buildContext(generateFabric('gen:fattree2:leaves=4,spines=2,hosts=8'));
    const { server, sent, run } = stubServer({ ctx: big.ctx });
    const lids = snapshotPorts(big.ctx.snapshot).endPorts.map((e) => e.lid);
    const burst = QUEUE_PER_END_PORT;
    expect(lids.length * burst).toBeGreaterThan(QUEUE_MIN); // the storm is beyond the old fixed bound
    let tid = 1n;
    for (const lid of lids) for (let i = 0; i < burst; i++) server.receive({ data: saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n, tid++), addr: { lid, qpn: 1 }, status: 0 });
    expect(sent.length).toBe(0);
    run();
    expect(sent.length).toBe(lids.length * burst);
    expect(sent.some((x) => MadHeader.decode(x.mad).status === MadStatus.Busy)).toBe(false);
    sent.length = 0;
    const flood: MadAddress = { lid: lids[0]!, qpn: 1 };
    for (let i = 0; i < QUEUE_PER_REQUESTER + 50; i++) server.receive({ data: saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n, tid++), addr: flood, status: 0 });
    expect(sent.length).toBe(50);
    expect(sent.every((x) => MadHeader.decode(x.mad).status === MadStatus.Busy)).toBe(true);
    run();
    expect(sent.length).toBe(QUEUE_PER_REQUESTER + 50);
  });

  it('echoes the full TID; empty GetTable → GetTableResp with no records; bounded queue → BUSY', () => {
    const { server, sent, run } = stubServer({ maxQueue: 2 });
    const tid = 0xabcdef0112345678n;
    server.receive({ data: saRequest(Method.GetTable, SaAttr.NodeRecord, NodeRecord.encode({ lid: 0xbff0 }), NodeRecord.mask('lid'), tid), addr: FROM, status: 0 });
    server.receive({ data: saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n), addr: FROM, status: 0 });
    server.receive({ data: saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n), addr: FROM, status: 0 });
    expect(sent.length).toBe(1); // the third overflowed
    expect(MadHeader.decode(sent[0]!.mad).status).toBe(MadStatus.Busy);
    run();
    const [, empty, tooMany] = sent;
    const eh = MadHeader.decode(empty!.mad);
    expect(eh.tid).toBe(tid);
    expect(eh.method).toBe(Method.GetTableResp);
    expect(eh.status).toBe(0);
    expect(empty!.payload!.length).toBe(0);
    expect(MadHeader.decode(tooMany!.mad).status).toBe(SaStatus.TooManyRecords);
    expect(tooMany!.to).toEqual(FROM);
  });

  it('bad bytes: short SA MAD → ReqInvalid, bad class version → BadVersion, too short for a header → dropped', () => {
    const { server, sent } = stubServer();
    const short = saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n).subarray(0, 40);
    server.process({ data: short, addr: FROM, status: 0 });
    expect(MadHeader.decode(sent[0]!.mad).status).toBe(SaStatus.ReqInvalid);
    const v1 = saRequest(Method.Get, SaAttr.NodeRecord, undefined, 0n);
    v1[2] = 1;
    server.process({ data: v1, addr: FROM, status: 0 });
    expect(MadHeader.decode(sent[1]!.mad).status).toBe(MadStatus.BadVersion);
    server.process({ data: new Uint8Array(10), addr: FROM, status: 0 });
    expect(sent.length).toBe(2);
    expect(server.stats.malformed).toBe(1);
  });

  it('an error to a table method carries a single empty RMPP segment', () => {
    const { server, sent } = stubServer();
    server.process({ data: saRequest(Method.GetTable, SaAttr.NodeRecord, undefined, 1n << 40n), addr: FROM, status: 0 });
    const mad = sent[0]!.mad;
    expect(MadHeader.decode(mad).status).toBe(SaStatus.ReqInvalid);
    const h = SaMadHeader.decode(mad);
    expect(h.rmpp.flags & (RmppFlag.Active | RmppFlag.First | RmppFlag.Last)).toBe(RmppFlag.Active | RmppFlag.First | RmppFlag.Last);
    expect(h.rmpp.data2).toBe(20); // PayloadLength: the SA header only
    expect(h.sa.smKey).toBe(0n);
  });
});

describe('fuzz: the server never throws and answers every request with a spec status', () => {
  const ALLOWED = new Set<number>([0, MadStatus.Busy, MadStatus.BadVersion, MadStatus.UnsupportedMethod, MadStatus.UnsupportedMethodAttr, ...Object.values(SaStatus)]);
  const attrs = Object.values(SaAttr);
  const methods = [Method.Get, Method.Set, Method.GetTable, Method.GetTraceTable, Method.GetMulti, Method.Delete, 0x33, 0x7f];

  function check(server: SaServer, sent: Sent[], data: Uint8Array): void {
    const before = sent.length;
    const dropped = server.stats.wrongKey;
    expect(() => server.process({ data, addr: FROM, status: 0 })).not.toThrow();
    // a non-zero SM_Key field other than the SA_Key: dropped unanswered (as OpenSM), counted
    const key = data.length >= SA_DATA_OFFSET ? new DataView(data.buffer, data.byteOffset).getBigUint64(SA_HEADER_OFFSET) : 0n;
    const wrongKey = key !== 0n && key !== (b.ctx.saKey ?? b.ctx.smKey);
    expect(server.stats.wrongKey).toBe(dropped + (wrongKey ? 1 : 0));
    if (data.length < 24 || wrongKey || data[3]! & 0x80) {
      expect(sent.length).toBe(before);
      return;
    }
    expect(sent.length).toBe(before + 1);
    const s = sent[before]!;
    const h = MadHeader.decode(s.mad);
    expect(h.method & 0x80).toBe(0x80);
    expect(ALLOWED.has(h.status)).toBe(true);
    expect(h.tid).toBe(MadHeader.decode(data.length >= 24 ? data : new Uint8Array(24)).tid);
    if (s.payload) {
      const layout = h.attrId === SaAttr.MultiPathRecord ? SA_RECORDS[SaAttr.PathRecord]! : SA_RECORDS[h.attrId]!;
      expect(s.payload.length % recordStride(layout)).toBe(0);
    }
  }

  it('random bytes', () => {
    const { server, sent } = stubServer();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (bytes) => {
        check(server, sent, bytes);
      }),
      { numRuns: 400, seed: 7 },
    );
  });

  it('well-framed requests with random attribute, method, component mask and record bytes', () => {
    const { server, sent } = stubServer();
    fc.assert(
      fc.property(
        fc.constantFrom(...attrs, 0x00ff),
        fc.constantFrom(...methods),
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        fc.uint8Array({ minLength: 200, maxLength: 200 }),
        fc.oneof(fc.constant(0n), fc.constant(b.ctx.saKey ?? b.ctx.smKey), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n })),
        fc.boolean(),
        (attr, method, mask, data, smKey, narrow) => {
          // Half the cases keep the mask to the first 8 components so that real matching runs.
          const mad = encodeSaMad({ header: { method, attrId: attr, tid: 99n }, sa: { componentMask: narrow ? mask & 0xffn : mask, smKey } }, data);
          check(server, sent, mad);
        },
      ),
      { numRuns: 600, seed: 11 },
    );
  });
});

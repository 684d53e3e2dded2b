import { describe, expect, it } from 'vitest';
import { LoopbackHub } from '../src/transport/loopback.js';
import { withFaults } from '../src/transport/fault.js';
import { VirtualClock, flushMicrotasks } from '../src/util/clock.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { decodeSaMad, MCMemberRecord, NodeRecord, recordStride, SaAttr, SaMadHeader, SaStatus, SA_CLASS_VERSION, SA_DATA_OFFSET } from '../src/wire/sa.js';
import { SaClient, SaNotFoundError, SaStatusError } from '../src/sa/client.js';
import { queryMain, parseGid } from '../src/cli/query.js';
import type { ReceivedMad, Transport } from '../src/transport/types.js';
import { MulticastManager, MC_CREATE_MASK } from '../src/sa/multicast.js';
import { generateFabric } from '../src/model/generators.js';
import { assignLids } from '../src/sm/lids.js';
import { routeWithFallback } from '../src/routing/registry.js';
import { PartitionPlan } from '../src/model/partitions.js';
import type { SaContext } from '../src/sa/types.js';
import { isSwitch } from '../src/model/fabric.js';
import { componentsMatch } from '../src/wire/layout.js';
import type { FaultyTransport } from '../src/transport/fault.js';

const RMPP = { ackTimeoutMs: 40, retries: 12, receiveTimeoutMs: 4000, totalTimeoutMs: 120_000, lingerMs: 500, windowSize: 8 };

async function runUntil<T>(clock: VirtualClock, p: Promise<T>, maxMs = 300_000): Promise<T> {
  let done = false;
  const q = p.finally(() => (done = true));
  q.catch(() => undefined);
  await clock.runUntil(() => done, maxMs).catch(() => undefined);
  await flushMicrotasks();
  if (!done) throw new Error(`not settled after ${maxMs} virtual ms`);
  return q;
}

function nodeRecords(n: number): NodeRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const r = NodeRecord.zero();
    r.lid = i + 1;
    r.nodeInfo.nodeType = 1;
    r.nodeInfo.numPorts = 1;
    r.nodeInfo.nodeGuid = 0x0002c90000001000n + BigInt(i);
    r.nodeInfo.portGuid = 0x0002c90000002000n + BigInt(i);
    r.nodeDescription.description = `host-${i}`;
    return r;
  });
}

/** A fake SA: NodeRecords from a table (GetTable by component mask), MCMemberRecord through MulticastManager, anything else ERR_REQ_INVALID. */
function env(opts: { nodes?: number; drop?: number; seed?: number; clientSmLid?: number } = {}) {
  const hub = new LoopbackHub();
  const clock = new VirtualClock();
  const c = hub.endpoint({ lid: 7, smLid: opts.clientSmLid ?? 0, tidHighBits: 0x00030001 });
  const s = hub.endpoint({ lid: 1 });
  c.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
  c.register(MgmtClass.SubnDirected, 1);
  s.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, { methods: [Method.Get, Method.GetTable, Method.Set] });
  const ct: Transport = opts.drop ? withFaults(c, { seed: opts.seed ?? 1, receive: { drop: opts.drop } }, clock) : c;
  const client = new MadRpc(ct, clock, { timeoutMs: 100, retries: 6, rmpp: RMPP });
  const server = new MadRpc(s, clock, { rmpp: RMPP });
  const table = nodeRecords(opts.nodes ?? 40);
  const fabric = generateFabric('gen:fattree2:leaves=2,spines=1,hosts=2', { seed: 1 });
  const lids = assignLids(fabric, { lmc: 0 });
  const ctx: SaContext = {
    snapshot: { fabric, discovery: { fabric, nodes: [], smNode: 0, smPort: 0, smps: 0, maxDepth: 0 }, routing: routeWithFallback(fabric, ['minhop'], { lmc: 0 }).result, maxLid: lids.maxLid, smLid: 1, sweep: 1 },
    partitions: PartitionPlan.defaultPlan(),
    smPortGuid: 1n,
    smKey: 0n,
    now: 0,
  };
  const mm = new MulticastManager();
  const host = fabric.nodes.find((n) => !isSwitch(n))!.ports[1]!;
  server.onUnsolicited(MgmtClass.SubnAdm, (m: ReceivedMad) => {
    const req = decodeSaMad(m.data);
    const hdr = m.data.slice(0, SA_DATA_OFFSET);
    const answer = (method: number, status: number, layout: typeof NodeRecord | typeof MCMemberRecord, recs: Uint8Array[]) => {
      const stride = recordStride(layout);
      const payload = new Uint8Array(stride * recs.length);
      recs.forEach((r, i) => payload.set(r, i * stride));
      const h = SaMadHeader.decode(hdr);
      h.header.method = method;
      h.header.status = status;
      h.sa.attributeOffset = stride / 8;
      void server.respondRmpp(m, SaMadHeader.encode(h), payload).catch(() => undefined);
    };
    const rspMethod = req.header.method === Method.GetTable ? Method.GetTableResp : Method.GetResp;
    if (req.header.attrId === SaAttr.NodeRecord) {
      const q = req.data;
      const matched = table.map((r) => NodeRecord.encode(r)).filter((b) => componentsMatch(NodeRecord, req.sa.componentMask, q, 0, b, 0));
      answer(rspMethod, 0, NodeRecord, matched);
    } else if (req.header.attrId === SaAttr.MCMemberRecord) {
      const a = mm.handle({ method: req.header.method, attrId: req.header.attrId, attrMod: 0, componentMask: req.sa.componentMask, data: req.data, requester: { lid: host.lid!, portGuid: host.guid, smKey: 0n, trusted: false, qpn: 1 } }, ctx);
      if (a.kind === 'records') answer(rspMethod, 0, MCMemberRecord, a.records);
      else answer(rspMethod, a.status, MCMemberRecord, []);
    } else answer(rspMethod, SaStatus.ReqInvalid, NodeRecord, []);
  });
  return { hub, clock, client, server, table, host, mm, ctx, ct };
}


function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } }, out, err };
}

describe('SaClient', () => {
  it('reassembles a multi-segment GetTable through RMPP under injected loss', async () => {
    for (const seed of [1, 2, 3]) {
      const e = env({ nodes: 60, drop: 0.15, seed });
      const sa = new SaClient(e.client, { saLid: 1 });
      const got = await runUntil(e.clock, sa.getTable(SaAttr.NodeRecord, NodeRecord, {}, 0n));
      expect(got).toEqual(e.table);
      expect(e.client.rmppStats.transfersReceived).toBe(1);
      expect(e.server.rmppStats.segmentsSent).toBeGreaterThan(30);
      expect((e.ct as FaultyTransport).stats.receive.dropped).toBeGreaterThan(0);
    }
  });

  it('matches by component mask, joins a group, and names the SA status on errors', async () => {
    const e = env();
    const sa = new SaClient(e.client, { saLid: 1 });
    const one = await runUntil(e.clock, sa.get(SaAttr.NodeRecord, NodeRecord, { lid: 5 }, NodeRecord.mask('lid')));
    expect(one.nodeDescription.description).toBe('host-4');
    const joined = await runUntil(e.clock, sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { portGid: (0xfe80000000000000n << 64n) | e.host.guid, joinState: 1, qKey: 5, pKey: 0xffff }, MC_CREATE_MASK));
    expect(joined.mlid).toBe(0xc000);
    expect(e.mm.list()).toHaveLength(1);
    const err = await runUntil(e.clock, sa.getTable(SaAttr.SMInfoRecord, NodeRecord, {}, 0n)).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(SaStatusError);
    expect((err as SaStatusError).statusName).toBe('ERR_REQ_INVALID');
    expect((err as Error).message).toMatch(/ERR_REQ_INVALID/);
  });

  it('locate() reports no SM when the local port has SMLID 0', async () => {
    const e = env();
    const err = await runUntil(e.clock, SaClient.locate(e.client)).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(SaNotFoundError);
    expect((err as Error).message).toMatch(/No SM\/SA found/);
    const e2 = env({ clientSmLid: 1 });
    expect((await runUntil(e2.clock, SaClient.locate(e2.client))).saLid).toBe(1);
  });
});

describe('ibsm query', () => {
  const run = async (argv: string[], e = env()) => {
    const o = io();
    const code = await runUntil(e.clock, queryMain(argv, o.io, { openRpc: async () => ({ rpc: e.client, saLid: 1, close: () => undefined }) }));
    return { code, out: o.out.join(''), err: o.err.join('') };
  };

  it('prints saquery-style dumps, filtered', async () => {
    const r = await run(['nodes', '--lid', '3']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^NodeRecord dump:\n/);
    expect(r.out).toMatch(/\t\tLID:\.+3\n/);
    expect(r.out).toContain('host-2');
    expect(r.out.match(/NodeRecord dump:/g)).toHaveLength(1);
  });

  it('prints JSON with GUIDs as hex strings', async () => {
    const r = await run(['NodeRecord', '--guid', '0x0002c90000001004', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Array<{ lid: number; nodeInfo: { nodeGuid: string; portGuid: string } }>;
    expect(j).toEqual([expect.objectContaining({ lid: 5, nodeInfo: expect.objectContaining({ nodeGuid: '0x0002c90000001004', portGuid: '0x0002c90000002004' }) })]);
  });

  it('exits 1 naming the SA status, 2 on bad usage', async () => {
    const r = await run(['sminfo']);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/ERR_REQ_INVALID/);
    expect((await run(['nodes', '--mgid', 'ff12::1'])).code).toBe(2);
    expect((await run(['bogus'])).code).toBe(2);
    expect((await run(['nodes', '--lid', 'x'])).err).toMatch(/--lid needs a number/);
  });

  it('parses GIDs in IPv6 and hex form', () => {
    expect(parseGid('--gid', 'fe80::2:c903:0:1')).toBe((0xfe80000000000000n << 64n) | 0x0002c90300000001n);
    expect(parseGid('--gid', '0xff12401bffff0000')).toBe(0xff12401bffff0000n);
    expect(() => parseGid('--gid', 'fe80:::1')).toThrow(/needs a GID/);
  });
});

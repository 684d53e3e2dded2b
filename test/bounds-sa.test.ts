/** Issue #11 item 5: the SA's state per requester is bounded, on the in-process fabric with the
 * real SM + SA (src/subnet.ts): a multicast create flood from one host, 50,000 subscriptions with
 * a link flap, a GetTable flood that never ACKs, ServiceRecords per requester. */
import { describe, expect, it, vi } from 'vitest';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { InformInfo, INFORM_ALL_PRODUCERS, INFORM_ALL_TYPES, JoinState, MCMemberRecord, NodeRecord, SaAttr, SaStatus, ServiceRecord, SA_QKEY, decodeSaMad } from '../src/wire/sa.js';
import { saRequest } from '../src/wire/builders.js';
import { encodeRmpp, rmppData } from '../src/wire/rmpp.js';
import { MC_CREATE_MASK } from '../src/sa/multicast.js';
import { SaStatusError } from '../src/sa/client.js';
import { DEFAULT_SA_LIMITS } from '../src/sa/limits.js';
import { MCAST_LID_BASE } from '../src/routing/mcast-tree.js';
import { bringUp, client, heapAfterGc, pool, type Client, type Rig } from './helpers/subnet-rig.js';
import { drive } from './helpers/drive.js';
import { withCode } from './helpers/log-lines.js';

const MB = 1 << 20;
const statusOf = (r: PromiseSettledResult<unknown>): number => (r.status === 'fulfilled' ? 0 : r.reason instanceof SaStatusError ? r.reason.status : -1);
const tally = (rs: PromiseSettledResult<unknown>[]): Record<string, number> => {
  const t: Record<string, number> = {};
  for (const r of rs) t['0x' + statusOf(r).toString(16)] = (t['0x' + statusOf(r).toString(16)] ?? 0) + 1;
  return t;
};

function createJobs(c: Client, n: number, qKey = 0x1234): (() => Promise<unknown>)[] {
  return Array.from({ length: n }, () => () =>
    c.sa.set(SaAttr.MCMemberRecord, MCMemberRecord, { mgid: 0n, portGid: c.gid, qKey, pKey: 0xffff, joinState: JoinState.FullMember, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK),
  );
}

describe('multicast create flood from one host', () => {
  it('1,000 creates with 16 outstanding: the creator bound answers ERR_NO_RESOURCES, MFT updates are batched, little memory', async () => {
    const r = await bringUp('gen:fattree2:leaves=4,spines=2,hosts=4');
    const h = await client(r, r.cas[3]!);
    // Count the SM's MFT updates and how many run at once.
    const orig = r.subnet.sm.programMulticast.bind(r.subnet.sm);
    let running = 0;
    let maxRunning = 0;
    const updates = vi.spyOn(r.subnet.sm, 'programMulticast').mockImplementation(() => {
      maxRunning = Math.max(maxRunning, ++running);
      return orig().finally(() => running--);
    });
    const heap0 = heapAfterGc();
    const res = await drive(r.clock, pool(16, createJobs(h, 1000)), 600_000);
    await r.clock.advanceAsync(1000); // the last MFT update
    const heap1 = heapAfterGc();
    const t = tally(res);
    expect(t).toEqual({ '0x0': DEFAULT_SA_LIMITS.groupsPerRequester, ['0x' + SaStatus.NoResources.toString(16)]: 1000 - DEFAULT_SA_LIMITS.groupsPerRequester });
    expect(r.subnet.multicast.list().filter((g) => !g.wellKnown)).toHaveLength(DEFAULT_SA_LIMITS.groupsPerRequester);
    expect(r.subnet.multicast.stats.refusedPerRequester).toBe(1000 - DEFAULT_SA_LIMITS.groupsPerRequester);
    // One MFT update at a time for a batch of changes, not one per group (256 groups, 16 at a time).
    expect(maxRunning).toBe(1);
    expect(updates.mock.calls.length).toBeGreaterThan(0);
    expect(updates.mock.calls.length).toBeLessThan(DEFAULT_SA_LIMITS.groupsPerRequester / 2); // batched
    // The switches forward every group: the last group's MLID is in the MFTs the SM wrote.
    const last = Math.max(...r.subnet.multicast.list().map((g) => g.mlid));
    const sw = r.sim.nodes.find((n) => n.type === NodeType.Switch)!;
    const blocks = [...r.subnet.sm.mftEntries(sw.guid)].map((e) => e.block);
    expect(blocks).toContain(Math.floor((last - MCAST_LID_BASE) / 32));
    expect(heap1 - heap0, `heap growth ${((heap1 - heap0) / MB).toFixed(1)} MB`).toBeLessThan(40 * MB);
    r.subnet.stop();
  });

  it('with the creator bound raised, 1,000 groups from one host (16 outstanding) cost little memory: one MFT update at a time', async () => {
    const r = await bringUp('gen:fattree2:leaves=4,spines=2,hosts=4', { subnet: { saLimits: { groupsPerRequester: 5000 } } });
    const h = await client(r, r.cas[3]!);
    const orig = r.subnet.sm.programMulticast.bind(r.subnet.sm);
    let running = 0;
    let maxRunning = 0;
    let calls = 0;
    r.subnet.sm.programMulticast = () => {
      calls++;
      maxRunning = Math.max(maxRunning, ++running);
      return orig().finally(() => running--);
    };
    const heap0 = heapAfterGc();
    const res = await drive(r.clock, pool(16, createJobs(h, 1000)), 600_000);
    await r.clock.advanceAsync(1000);
    const heap1 = heapAfterGc();
    expect(tally(res)).toEqual({ '0x0': 1000 });
    expect(r.subnet.multicast.mlidsInUse).toBe(1001);
    expect(maxRunning).toBe(1);
    expect(calls).toBeLessThan(1000 / 2); // batched: several group changes per update
    // Every group is in the MFTs: the highest MLID's block was written to the switches.
    const sw = r.sim.nodes.find((n) => n.type === NodeType.Switch)!;
    expect([...r.subnet.sm.mftEntries(sw.guid)].map((e) => e.block)).toContain(Math.floor((MCAST_LID_BASE + 1000 - MCAST_LID_BASE) / 32));
    if (process.env.BOUNDS_PRINT) console.log(`1,000 groups: heap +${((heap1 - heap0) / MB).toFixed(1)} MB, ${calls} MFT updates`);
    expect(heap1 - heap0, `heap growth ${((heap1 - heap0) / MB).toFixed(1)} MB`).toBeLessThan(40 * MB);
    r.subnet.stop();
  });

  it('the MLID space stops at the smallest MulticastFDBCap of the switches, and at 1,024 (OpenSM) by default', async () => {
    const small = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { sim: { multicastFdbCap: 64 }, subnet: { saLimits: { groupsPerRequester: 5000 } } });
    const a = await client(small, small.cas[1]!);
    const res = await drive(small.clock, pool(16, createJobs(a, 80)), 600_000);
    // 64 MLIDs, one of them the IPoIB broadcast group's: 63 creates succeed.
    expect(tally(res)).toEqual({ '0x0': 63, '0x100': 17 });
    expect(small.subnet.multicast.mlidsInUse).toBe(64);
    expect(Math.max(...small.subnet.multicast.list().map((g) => g.mlid))).toBe(MCAST_LID_BASE + 63);
    expect(small.subnet.multicast.stats.refusedNoMlid).toBe(17);
    small.subnet.stop();

    const big = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { sim: { multicastFdbCap: 4096 }, subnet: { saLimits: { groupsPerRequester: 5000 } } });
    const b = await client(big, big.cas[1]!);
    const res2 = await drive(big.clock, pool(16, createJobs(b, 1100)), 600_000);
    expect(tally(res2)).toEqual({ '0x0': 1023, '0x100': 77 });
    expect(big.subnet.multicast.mlidsInUse).toBe(DEFAULT_SA_LIMITS.maxGroups);
    big.subnet.stop();
  });
});

describe('50,000 subscriptions from a few hosts, then a link flap', () => {
  it('duplicates are one subscription, the per-port bound holds, Reports go once per destination, failures log once', async () => {
    const r = await bringUp('gen:fattree2:leaves=4,spines=2,hosts=4', { subnet: { sweepIntervalMs: 1000 } });
    const reports = new Map<number, number>();
    const hosts: Client[] = [];
    for (const i of r.cas.slice(1, 6)) {
      const c = await client(r, i, { answerReports: () => reports.set(c.lid, (reports.get(c.lid) ?? 0) + 1) });
      hosts.push(c);
    }
    // One host that never answers its Reports.
    const silent = await client(r, r.cas[8]!);
    const all = [...hosts, silent];
    // Every trap from LIDs 1..0xBFFF-k: 100 distinct subscriptions per host, all matching every trap here.
    const info = (k: number) => ({ gid: 0n, lidRangeBegin: 1, lidRangeEnd: 0xbfff - k, isGeneric: 1, subscribe: 1, type: INFORM_ALL_TYPES, trapNumber: 0xffff, qpn: 1, respTimeValue: 18, producerType: INFORM_ALL_PRODUCERS });
    // 50,016 Sets: per host, the 100 over and over.
    const jobs = Array.from({ length: 50_016 }, (_, i) => () => all[i % all.length]!.sa.set(SaAttr.InformInfo, InformInfo, info(Math.floor(i / all.length) % 100), 0n));
    const res = await drive(r.clock, pool(16, jobs), 3_600_000);
    const t = tally(res);
    const bound = DEFAULT_SA_LIMITS.subscriptionsPerRequester;
    expect(r.subnet.inform.size).toBe(all.length * bound);
    expect(t['0x0']).toBeGreaterThan(all.length * bound); // the repeats of stored ones succeed
    expect(t['0x100']).toBe(r.subnet.inform.stats.subscriptionsRefused);
    expect(t['0x100']).toBeGreaterThan(0);

    // A link flap: trap 128, a heavy sweep; traps 64/65 for the host behind the link.
    const snap = r.subnet.sm.current!;
    const leaf = snap.fabric.nodes.find((n) => n.type === NodeType.Switch && n.ports.some((p) => p?.peer && snap.fabric.nodes[p.peer.node]!.ports[p.peer.port]!.guid === hosts[4]!.guid))!;
    const hostPort = leaf.ports.findIndex((p) => p?.peer && snap.fabric.nodes[p.peer.node]!.ports[p.peer.port]!.guid === hosts[4]!.guid);
    const sentBefore = r.subnet.inform.stats.reportsSent;
    const sweeps0 = r.subnet.sm.stats.length;
    r.sim.linkDown(leaf.guid, hostPort);
    await r.clock.runUntil(() => r.subnet.sm.stats.length > sweeps0 && r.subnet.sm.current!.sweep > snap.sweep, 10_000);
    r.sim.linkUp(leaf.guid, hostPort);
    await drive(r.clock, r.subnet.sm.sweep('light'));
    await r.clock.advanceAsync(5_000); // Reports and their retries
    // Sweeps kept pace: the fabric is complete again.
    expect(r.subnet.sm.current!.fabric.nodes.find((n) => n.guid === leaf.guid)!.ports[hostPort]!.peer).toBeDefined();
    const sent = r.subnet.inform.stats.reportsSent - sentBefore;
    if (process.env.BOUNDS_PRINT) console.log(`50,016 subscription Sets: ${r.subnet.inform.size} stored, ${t['0x100']} refused; flap: ${sent} Reports sent, ${r.subnet.inform.stats.reportsCoalesced} coalesced, ${withCode(r.sink.lines, 'IBSM-5005').length} warning lines`);
    // Traps 128 (x2 at most per switch end), 65, 64: each reaches each destination once, not once per subscription.
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(all.length * 6);
    expect(r.subnet.inform.stats.reportsCoalesced).toBeGreaterThan(sent);
    for (const c of hosts.slice(0, 4)) expect(reports.get(c.lid) ?? 0).toBeLessThanOrEqual(6);
    // The silent host's failed Reports: counted, one warning line.
    expect(r.subnet.inform.stats.reportsFailed).toBeGreaterThan(0);
    expect(withCode(r.sink.lines, 'IBSM-5005').length).toBe(1);
    expect(r.subnet.inform.pendingDestinations).toBe(0);
    r.subnet.stop();
  });
});

describe('a GetTable flood that never ACKs', () => {
  async function flood(r: Rig, eps: ReturnType<Rig['sim']['attach']>[], rounds: number, perRound: number, tid0: number, maxActive: { v: number }): Promise<void> {
    let tid = tid0;
    for (let k = 0; k < rounds; k++) {
      for (let i = 0; i < perRound; i++) {
        for (const ep of eps) ep.send(saRequest({ method: Method.GetTable, attrId: SaAttr.NodeRecord, tid: BigInt(++tid) }), { lid: r.subnet.sm.current!.smLid, qpn: 1, qkey: SA_QKEY });
      }
      await r.clock.advanceAsync(5);
      maxActive.v = Math.max(maxActive.v, r.subnet.sa!.stats.rmppActive);
    }
  }

  it('holds at most the bound of RMPP senders per requester and in all, answers the rest ERR_NO_RESOURCES, memory flat', async () => {
    const limits = { rmppPerRequester: 3, rmppTotal: 8 };
    const r = await bringUp('gen:fattree2:leaves=4,spines=2,hosts=6', { subnet: { saLimits: limits } });
    // Raw ports: they read what the SA sends and never ACK a segment.
    const eps = r.cas.slice(1, 5).map((i) => {
      const ep = r.sim.attach(i);
      ep.register(MgmtClass.SubnAdm, 2);
      return ep;
    });
    const statuses = new Map<number, number>();
    for (const ep of eps)
      ep.onReceive((m: { data: Uint8Array }) => {
        const s = decodeSaMad(m.data).header.status;
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
      });
    const maxActive = { v: 0 };
    await flood(r, eps, 20, 10, 0, maxActive); // warm up: 800 requests
    await r.clock.advanceAsync(3_000);
    const heap0 = heapAfterGc();
    await flood(r, eps, 200, 10, 1_000_000, maxActive); // 8,000 more
    await r.clock.advanceAsync(3_000); // every unACKed transfer given up
    const heap1 = heapAfterGc();
    const st = r.subnet.sa!.stats;
    expect(maxActive.v).toBeGreaterThan(0);
    expect(maxActive.v).toBeLessThanOrEqual(limits.rmppTotal);
    expect(st.rmppActive).toBe(0);
    expect(st.rmppRefused).toBeGreaterThan(8000);
    expect(statuses.get(SaStatus.NoResources)).toBe(st.rmppRefused);
    expect(st.rmppFailures).toBeGreaterThan(0);
    // One line per requester and kind in the interval, not one per request.
    const lines = withCode(r.sink.lines, ['IBSM-5002', 'IBSM-5004']);
    expect(lines.length).toBeLessThanOrEqual(2 * eps.length);
    if (process.env.BOUNDS_PRINT) console.log(`GetTable flood: heap +${((heap1 - heap0) / MB).toFixed(2)} MB over 8,000 requests, max ${maxActive.v} RMPP senders, ${st.rmppRefused} refused, ${lines.length} log lines`);
    expect(heap1 - heap0, `heap growth ${((heap1 - heap0) / MB).toFixed(1)} MB`).toBeLessThan(8 * MB);
    r.subnet.stop();
  });
});

describe('multi-segment requests that never finish', () => {
  it('a peer reassembles at most 16 requests at once; the rest are dropped and counted; the SA answers it again afterwards', async () => {
    const r = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2');
    const ep = r.sim.attach(r.cas[1]!);
    ep.register(MgmtClass.SubnAdm, 2);
    const smLid = r.subnet.sm.current!.smLid;
    // The first of three segments of a GetMulti, 5,000 times with new TIDs; the rest never comes.
    for (let i = 0; i < 5000; i++) {
      const mad = saRequest({ method: Method.GetMulti, attrId: SaAttr.MultiPathRecord, tid: BigInt(0x100000 + i), record: new Uint8Array(200) });
      encodeRmpp(rmppData(1, true, false, 3 * 220), mad);
      ep.send(mad, { lid: smLid, qpn: 1, qkey: SA_QKEY });
      if (i % 100 === 99) await r.clock.advanceAsync(1);
    }
    expect(r.rpc.peerRmppRefused).toBeGreaterThan(4900);
    expect(r.rpc.peerRmppRefused).toBeLessThanOrEqual(5000 - 16);
    // The reassemblies time out; then the same port is served again.
    await r.clock.advanceAsync(15_000);
    const before = r.rpc.peerRmppRefused;
    const c = await client(r, r.cas[1]!);
    const nodes = await drive(r.clock, c.sa.getTable(SaAttr.NodeRecord, NodeRecord, {}, 0n));
    expect(nodes).toHaveLength(r.sim.nodes.length);
    const mad = saRequest({ method: Method.GetMulti, attrId: SaAttr.MultiPathRecord, tid: 0x999999n, record: new Uint8Array(200) });
    encodeRmpp(rmppData(1, true, false, 3 * 220), mad);
    ep.send(mad, { lid: smLid, qpn: 1, qkey: SA_QKEY });
    await r.clock.advanceAsync(1);
    expect(r.rpc.peerRmppRefused).toBe(before);
    r.subnet.stop();
  });
});

describe('ServiceRecords per requester', () => {
  it('a requester holds at most servicesPerRequester records; a replacement is not a new one; leases expire without a scan', async () => {
    const r = await bringUp('gen:fattree2:leaves=2,spines=1,hosts=2', { subnet: { saLimits: { servicesPerRequester: 10 } } });
    const a = await client(r, r.cas[1]!);
    const b = await client(r, r.cas[2]!);
    const mask = ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey', 'serviceLease');
    const reg = (c: Client, id: number, lease = 0xffffffff) => () => c.sa.set(SaAttr.ServiceRecord, ServiceRecord, { serviceId: BigInt(id), serviceGid: c.gid, servicePKey: 0xffff, serviceLease: lease }, mask);
    const res = await drive(r.clock, pool(4, Array.from({ length: 15 }, (_, i) => reg(a, i + 1, 30))));
    expect(tally(res)).toEqual({ '0x0': 10, '0x100': 5 });
    // Replacing one of its own is not a new record; another requester has its own bound.
    await drive(r.clock, reg(a, 3, 30)());
    expect(tally(await drive(r.clock, pool(4, Array.from({ length: 10 }, (_, i) => reg(b, i + 1)))))).toEqual({ '0x0': 10 });
    expect(r.subnet.services.size).toBe(20 + 1); // + the hidden sync marker
    // Leases run out: a's records go, and it may register again.
    await r.clock.advanceAsync(31_000);
    expect(r.subnet.services.expire(r.clock.now())).toBe(10);
    expect(r.subnet.services.stats.expired).toBe(10);
    expect(tally(await drive(r.clock, pool(4, Array.from({ length: 10 }, (_, i) => reg(a, 100 + i)))))).toEqual({ '0x0': 10 });
    r.subnet.stop();
  });
});

/** Random forwarding tables: the SM programs RFTs on switches that have one and no linear table;
 * on a fabric mixing both kinds every route works, checked by the verifier on the tables read back
 * from the switches; the SA answers RandomForwardingTableRecords with what the switches hold. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { isSwitch } from '../src/model/fabric.js';
import { NO_ROUTE, rftBlocksOf, tableOfRft } from '../src/model/routes.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { LinearForwardingTableRecord, RandomForwardingTableRecord, SaAttr, SA_CLASS_VERSION } from '../src/wire/sa.js';
import { SaClient } from '../src/sa/client.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { verifyRoutes } from '../src/routing/verify.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';

describe('RFT blocks of a table', () => {
  it('express exactly the routed LIDs (round trip), 16 entries a block', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 2, maxLength: 300 }), (raw) => {
        const table = raw.map((v) => (v % 3 === 0 ? NO_ROUTE : v % 37));
        const maxLid = table.length - 1;
        const { blocks, unplaced } = rftBlocksOf(table, maxLid, 4096);
        expect(unplaced).toBe(0);
        expect(blocks.every((b) => b.length === 16)).toBe(true);
        const back = tableOfRft(blocks, maxLid);
        for (let lid = 1; lid <= maxLid; lid++) expect(back[lid]).toBe(table[lid]);
      }),
    );
  });

  it('leave out what RandomFDBCap cannot hold, and count it', () => {
    const table = new Uint8Array(41).fill(1);
    const { blocks, unplaced } = rftBlocksOf(table, 40, 32);
    expect(blocks).toHaveLength(2);
    expect(unplaced).toBe(8);
  });
});

describe('RFT switches on the in-process fabric', () => {
  it('a fabric mixing LFT and RFT switches routes completely, the SA answers the RFT records, a re-sweep writes nothing', async () => {
    const fabric = loadFabricSpec('gen:fattree2:leaves=4,spines=2,hosts=3');
    const leaves = fabric.nodes.filter((n) => isSwitch(n) && n.ports.some((p) => p?.peer && !isSwitch(fabric.nodes[p.peer.node]!)));
    const rftGuids = new Set([leaves[0]!.guid, leaves[2]!.guid, fabric.nodes.find((n) => isSwitch(n) && !leaves.includes(n))!.guid]);
    const clock = new VirtualClock();
    const sim = new SimFabric(fabric, { clock, seed: 2, rftSwitches: rftGuids });
    const ep = sim.attach(fabric.nodes.findIndex((n) => n.type !== NodeType.Switch));
    ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
    const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink(), 'debug'), routing: ['ftree', 'minhop'], lmc: 0, sweepIntervalMs: 0, saServer: { schedule: (fn) => queueMicrotask(fn) } });
    await drive(clock, subnet.start());
    const snap = subnet.sm.current!;

    // read every switch's table back from the switch itself: the LFT, or the RFT's entries
    const readBack = new Map<number, Uint8Array>();
    snap.fabric.nodes.forEach((n, ni) => {
      if (!isSwitch(n)) return;
      const fwd = sim.node(n.guid).sw!.fwd;
      if (rftGuids.has(n.guid)) {
        expect(fwd.caps.linearFdbCap).toBe(0);
        const blocks = Array.from({ length: fwd.rftBlockCount }, (_, b) => fwd.getRftBlock(b)!);
        readBack.set(ni, tableOfRft(blocks, snap.maxLid));
      } else readBack.set(ni, sim.lft(n.guid).slice(0, snap.maxLid + 1));
    });
    const report = verifyRoutes(snap.fabric, readBack);
    expect(report.unreachablePairs, report.summary.join('\n')).toBe(0);
    expect(report.loopEntries).toBe(0);
    expect(report.ok).toBe(true);
    for (const [ni, t] of readBack) if (rftGuids.has(snap.fabric.nodes[ni]!.guid)) expect([...t.subarray(1)].filter((p) => p !== NO_ROUTE).length).toBeGreaterThan(0);

    // the SA: RFT records for the RFT switches (equal to what they hold), LFT records for the others only
    const cep = sim.attach(fabric.nodes.findLastIndex((n) => n.type !== NodeType.Switch));
    cep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    const crpc = new MadRpc(cep, clock, { timeoutMs: 50 });
    const sa = await drive(clock, SaClient.locate(crpc));
    const rfts = await drive(clock, sa.getTable(SaAttr.RandomForwardingTableRecord, RandomForwardingTableRecord, {}, 0n));
    const lftLids = new Set((await drive(clock, sa.getTable(SaAttr.LinearForwardingTableRecord, LinearForwardingTableRecord, {}, 0n))).map((r) => r.lid));
    const rftLids = new Set(rfts.map((r) => r.lid));
    for (const n of snap.fabric.nodes.filter(isSwitch)) {
      const lid = n.ports[0]!.lid!;
      expect(rftLids.has(lid), `${n.desc} RFT records`).toBe(rftGuids.has(n.guid));
      expect(lftLids.has(lid), `${n.desc} LFT records`).toBe(!rftGuids.has(n.guid));
    }
    for (const r of rfts) {
      const sw = snap.fabric.nodes.find((n) => n.ports[0]?.lid === r.lid)!;
      expect(r.rft.entries).toEqual(sim.node(sw.guid).sw!.fwd.getRftBlock(r.blockNum));
    }

    // nothing changed: a heavy sweep writes no forwarding block
    const again = await drive(clock, subnet.sm.sweep('heavy'));
    expect(again.lftBlocksWritten).toBe(0);
    subnet.stop();
  });
});

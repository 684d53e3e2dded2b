// The simulator's compact state (issue #16): LFT store grown by blocks, PortInfo in wire form in
// the fabric's PortStore, SL2VL/VLArbitration tables allocated on first write, PMA counters from
// per-port packet columns. Every check goes through SMPs / PMA MADs as an SM sends them, so the
// behaviour is what the SMA answers, not the layout of the store.
import { describe, expect, it } from 'vitest';
import { SimFabric } from '../src/sim/fabric.js';
import { processPma } from '../src/sim/pma.js';
import { loadFabricSpec } from '../src/model/load.js';
import { VirtualClock } from '../src/util/clock.js';
import { MgmtClass, Method, SmpAttr, SmpDrView } from '../src/wire/mad.js';
import { smpGetDr, smpSetDr, setTidLow } from '../src/wire/builders.js';
import { LinearForwardingTable, PortInfo, SLtoVLMappingTable, SwitchInfo, VLArbitrationTable } from '../src/wire/sma.js';
import { lftBlockMod, sl2vlMod, vlArbMod } from '../src/wire/modifiers.js';
import { PmaAttr, PortCounters, pmaData, pmaRequest } from '../src/wire/pma.js';
import type { ReceivedMad } from '../src/transport/types.js';

const SPEC = 'gen:fattree2:leaves=4,spines=2,hosts=2';

function rig(opts: { linearFdbCap?: number } = {}) {
  const clock = new VirtualClock();
  const fabric = loadFabricSpec(SPEC);
  const sim = new SimFabric(fabric, { clock, ...opts });
  const sw = fabric.nodes.findIndex((n) => n.type === 2);
  const ep = sim.attach(sw, 0);
  ep.register(MgmtClass.SubnDirected, 1);
  const got: ReceivedMad[] = [];
  ep.onReceive((m) => got.push(m));
  let tid = 1;
  /** Send, run the clock, return the whole answer (status checked 0). */
  const rpcFull = async (mad: Uint8Array): Promise<Uint8Array> => {
    setTidLow(mad, tid++);
    const before = got.length;
    ep.send(mad, { lid: 0xffff, qpn: 0 });
    await clock.advanceAsync(1);
    const r = got[before];
    if (!r) throw new Error('no answer');
    expect(SmpDrView.over(r.data).status).toBe(0);
    return r.data.slice();
  };
  const rpc = async (mad: Uint8Array): Promise<Uint8Array> => (await rpcFull(mad)).slice(64, 128);
  return { sim, fabric, sw, rpc, rpcFull };
}

describe('simulated LFT: one store per switch grown by blocks', () => {
  it('holds blocks up to the highest one written; unwritten blocks read 0xff; an all-0xff block beyond grows nothing', async () => {
    const { sim, sw, rpc } = rig();
    const fwd = sim.node(sw).sw!.fwd;
    expect(fwd.lftBlocksHeld).toBe(0);
    const ports = Array.from({ length: 64 }, (_, i) => 1 + (i % 4));
    await rpc(smpSetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(5), LinearForwardingTable.encode({ ports })));
    expect(fwd.lftBlocksHeld).toBe(6);
    expect(LinearForwardingTable.decode(await rpc(smpGetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(5)))).ports).toEqual(ports);
    for (const b of [0, 4, 6, 700]) expect(LinearForwardingTable.decode(await rpc(smpGetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(b)))).ports).toEqual(new Array(64).fill(0xff));
    await rpc(smpSetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(100), LinearForwardingTable.encode({ ports: new Array(64).fill(0xff) })));
    expect(fwd.lftBlocksHeld).toBe(6);
    // a later block doubles the store (not one copy per block)
    await rpc(smpSetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(6), LinearForwardingTable.encode({ ports })));
    expect(fwd.lftBlocksHeld).toBe(12);
    expect(fwd.lftSnapshot().subarray(5 * 64, 7 * 64)).toEqual(Uint8Array.from([...ports, ...ports]));
    // forwarding follows the written entries once LinearFDBTop covers them
    expect(fwd.unicastPort(5 * 64 + 2)).toBeUndefined();
    const si = SwitchInfo.decode(await rpc(smpGetDr([], SmpAttr.SwitchInfo)));
    await rpc(smpSetDr([], SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, linearFdbTop: 7 * 64 - 1 })));
    expect(fwd.unicastPort(5 * 64 + 2)).toBe(ports[2]);
    expect(fwd.unicastPort(6 * 64 + 3)).toBe(ports[3]);
  });

  it('LinearFDBTop announces the blocks the SM will write: the store is sized once', async () => {
    const { sim, sw, rpc } = rig();
    const fwd = sim.node(sw).sw!.fwd;
    const si = SwitchInfo.decode(await rpc(smpGetDr([], SmpAttr.SwitchInfo)));
    await rpc(smpSetDr([], SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, linearFdbTop: 20 * 64 + 5 })));
    expect(fwd.lftBlocksHeld).toBe(21);
    for (let b = 0; b <= 20; b++) await rpc(smpSetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(b), LinearForwardingTable.encode({ ports: new Array(64).fill(1) })));
    expect(fwd.lftBlocksHeld).toBe(21);
  });

  it('entries beyond LinearFDBCap stay 0xff when a block spans the cap', async () => {
    const { sim, sw, rpc } = rig({ linearFdbCap: 100 });
    await rpc(smpSetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(1), LinearForwardingTable.encode({ ports: new Array(64).fill(2) })));
    const got = LinearForwardingTable.decode(await rpc(smpGetDr([], SmpAttr.LinearForwardingTable, lftBlockMod(1)))).ports;
    expect(got.slice(0, 36)).toEqual(new Array(36).fill(2));
    expect(got.slice(36)).toEqual(new Array(28).fill(0xff));
    expect(sim.lft(sw).length).toBe(100);
  });
});

describe('simulated PortInfo held in wire form', () => {
  it('a Set lands in the port state, a Get answers it with LocalPortNum the arrival port and no CapabilityMask on switch external ports', async () => {
    const { sim, sw, rpc, fabric } = rig();
    // a Set changes nothing the SM leaves 0 (PortState, PortPhysicalState: no change)
    const mine = { ...PortInfo.decode(await rpc(smpGetDr([], SmpAttr.PortInfo, 0))), portState: 0, portPhysicalState: 0 };
    await rpc(smpSetDr([], SmpAttr.PortInfo, 0, PortInfo.encode({ ...mine, lid: 7, masterSmLid: 7, mkey: 0x1122334455667788n, mkeyLeasePeriod: 9, subnetTimeout: 18 })));
    const p0 = sim.port(sw, 0);
    expect([p0.info.lid, p0.info.masterSmLid, p0.info.mkey, p0.info.mkeyLeasePeriod, p0.info.subnetTimeout]).toEqual([7, 7, 0x1122334455667788n, 9, 18]);
    const back = PortInfo.decode(await rpc(smpGetDr([], SmpAttr.PortInfo, 0, { mkey: 0x1122334455667788n })));
    expect([back.lid, back.mkey, back.localPortNum, back.capabilityMask]).toEqual([7, 0x1122334455667788n, 0, p0.info.capabilityMask]);
    // an external port: its own state, port 0's capability mask not repeated
    const ext = fabric.nodes[sw]!.ports.findIndex((p, i) => i > 0 && p?.peer);
    const pe = PortInfo.decode(await rpc(smpGetDr([], SmpAttr.PortInfo, ext)));
    expect(pe.capabilityMask).toBe(0);
    expect(pe.localPortNum).toBe(0);
    expect(pe.portState).toBe(sim.port(sw, ext).info.portState);
    expect(pe.lid).toBe(0);
    // the port state object reads the same bytes a Get answers (beside the two per-Get fields)
    expect({ ...pe, localPortNum: ext, capabilityMask: 0 }).toEqual({ ...sim.portInfo(sw, ext), capabilityMask: 0 });
  });
});

describe('simulated SL2VL and VLArbitration tables', () => {
  it('a Set to every port pair is held once; a later pair Set changes that pair only; an all-pairs Set wins again', async () => {
    const { sim, sw, rpc } = rig();
    const a = Array.from({ length: 16 }, (_, i) => i % 8);
    const b = Array.from({ length: 16 }, (_, i) => 7 - (i % 8));
    const c = new Array(16).fill(3);
    const all = sl2vlMod(0, 0, { allInputPorts: true, allOutputPorts: true });
    const get = async (inP: number, outP: number) => SLtoVLMappingTable.decode(await rpc(smpGetDr([], SmpAttr.SLtoVLMappingTable, sl2vlMod(inP, outP)))).vls;
    expect(await get(1, 2)).toEqual(new Array(16).fill(0));
    await rpc(smpSetDr([], SmpAttr.SLtoVLMappingTable, all, SLtoVLMappingTable.encode({ vls: a })));
    expect(await get(1, 2)).toEqual(a);
    expect(await get(3, 0)).toEqual(a);
    await rpc(smpSetDr([], SmpAttr.SLtoVLMappingTable, sl2vlMod(1, 2), SLtoVLMappingTable.encode({ vls: b })));
    expect(await get(1, 2)).toEqual(b);
    expect(await get(2, 1)).toEqual(a);
    expect(await get(0, 2)).toEqual(a);
    expect(sim.port(sw, 2).sl2vl.get(1)).toEqual(b);
    // all input ports of one output port
    await rpc(smpSetDr([], SmpAttr.SLtoVLMappingTable, sl2vlMod(0, 3, { allInputPorts: true }), SLtoVLMappingTable.encode({ vls: c })));
    expect(await get(2, 3)).toEqual(c);
    expect(await get(2, 1)).toEqual(a);
    await rpc(smpSetDr([], SmpAttr.SLtoVLMappingTable, all, SLtoVLMappingTable.encode({ vls: c })));
    expect(await get(1, 2)).toEqual(c);
    expect(await get(3, 1)).toEqual(c);
  });

  it('VLArbitration blocks are kept as encoded (reserved bits not kept), per port and block; unwritten blocks read zero', async () => {
    const { rpc } = rig();
    const entries = Array.from({ length: 32 }, (_, i) => ({ vl: i % 8, weight: (i * 7) & 0xff }));
    const data = VLArbitrationTable.encode({ entries });
    for (let i = 0; i < 64; i += 2) data[i]! |= 0xf0; // the 4 reserved bits of each entry
    await rpc(smpSetDr([], SmpAttr.VLArbitrationTable, vlArbMod(2, 1), data));
    const back = await rpc(smpGetDr([], SmpAttr.VLArbitrationTable, vlArbMod(2, 1)));
    expect(VLArbitrationTable.decode(back).entries).toEqual(entries);
    expect(Array.from(back.subarray(0, 64)).filter((_, i) => i % 2 === 0).every((x) => (x & 0xf0) === 0)).toBe(true);
    expect(Array.from(await rpc(smpGetDr([], SmpAttr.VLArbitrationTable, vlArbMod(3, 1))))).toEqual(new Array(64).fill(0));
    expect(Array.from(await rpc(smpGetDr([], SmpAttr.VLArbitrationTable, vlArbMod(2, 3))))).toEqual(new Array(64).fill(0));
  });
});

describe('simulated PMA counters from the per-port packet columns', () => {
  const read = (sim: SimFabric, node: number, port: number) => {
    const r = processPma(sim.node(node), port, pmaRequest(Method.Get, PmaAttr.PortCounters, PortCounters.encode({ ...PortCounters.zero(), portSelect: port })))!;
    return PortCounters.decode(pmaData(r), 0);
  };
  it('every link crossing counts a packet and 72 words each way; injected counts add; a clear starts from zero', async () => {
    const { sim, sw, rpc, fabric } = rig();
    const ext = fabric.nodes[sw]!.ports.findIndex((p, i) => i > 0 && p?.peer);
    const peer = fabric.nodes[sw]!.ports[ext]!.peer!;
    expect(read(sim, sw, ext).xmitPkts).toBe(0);
    for (let i = 0; i < 3; i++) await rpc(smpGetDr([ext], SmpAttr.NodeInfo));
    const c = read(sim, sw, ext);
    expect([c.xmitPkts, c.rcvPkts, c.xmitData, c.rcvData]).toEqual([3, 3, 3 * 72, 3 * 72]);
    const q = read(sim, peer.node, peer.port);
    expect([q.xmitPkts, q.rcvPkts]).toEqual([3, 3]);
    sim.addPortCounts(sw, ext, { symbolErrors: 5, xmitData: 10 });
    const d = read(sim, sw, ext);
    expect([d.symbolErrors, d.xmitData, d.rcvData]).toEqual([5, 3 * 72 + 10, 3 * 72]);
    // clear everything, then one more round trip
    processPma(sim.node(sw), ext, pmaRequest(Method.Set, PmaAttr.PortCounters, PortCounters.encode({ ...PortCounters.zero(), portSelect: ext, counterSelect: 0xffff })));
    expect(read(sim, sw, ext)).toMatchObject({ symbolErrors: 0, xmitPkts: 0, xmitData: 0 });
    await rpc(smpGetDr([ext], SmpAttr.NodeInfo));
    expect(read(sim, sw, ext)).toMatchObject({ symbolErrors: 0, xmitPkts: 1, rcvPkts: 1, xmitData: 72 });
    // a cable pull counts LinkDowned on both ends
    sim.linkDown(sw, ext);
    expect(read(sim, sw, ext).linkDowned).toBe(1);
    expect(read(sim, peer.node, peer.port).linkDowned).toBe(1);
  });
});

describe('simulated fabric request buffers', () => {
  it('a request buffer handed back by the SMA is reused with nothing of the last request left in it', async () => {
    const { rpcFull, fabric, sw } = rig();
    const ext = fabric.nodes[sw]!.ports.findIndex((p, i) => i > 0 && p?.peer);
    // a request through a neighbour (its paths fill bytes 128..255), answered: its buffer is spare
    const far = await rpcFull(smpGetDr([ext], SmpAttr.NodeInfo));
    expect(far.subarray(128).some((x) => x !== 0)).toBe(true);
    // then a short MAD (header, M_Key, DR words, attribute; no paths): the hop-0 answer has zero paths
    const near = await rpcFull(smpGetDr([], SmpAttr.NodeInfo).slice(0, 128));
    expect(near.length).toBe(256);
    expect(Array.from(near.subarray(128))).toEqual(new Array(128).fill(0));
  });
});

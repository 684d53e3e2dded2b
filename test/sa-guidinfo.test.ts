/** Alias GUIDs through GUIDInfoRecord Set/Delete (OpenSM's SR-IOV support): SA-assigned and
 * requested GUIDs land in the port's GUIDInfo (read back from the simulated SMA), GetTable shows
 * them, a PathRecord to an alias GID reaches the port and names that GID; the port GUID is
 * read-only, another port may not change them nor take one, a deleted alias no longer resolves and
 * an index asked again gets back the GUID the SA assigned it before. */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../src/util/clock.js';
import { SimFabric } from '../src/sim/fabric.js';
import { loadFabricSpec } from '../src/model/load.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType } from '../src/wire/mad.js';
import { GUIDInfoRecord, PathRecord, SaAttr, SaStatus, SA_CLASS_VERSION } from '../src/wire/sa.js';
import { SaClient, SaStatusError } from '../src/sa/client.js';
import { Subnet } from '../src/subnet.js';
import { smpClientOf } from '../src/sm/smp-client.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { drive } from './helpers/drive.js';

const gid = (guid: bigint): bigint => (0xfe80000000000000n << 64n) | guid;
const MOD = GUIDInfoRecord.mask('lid', 'blockNum');
const idx = (...i: number[]): bigint => GUIDInfoRecord.mask(...i.map((n) => `guidInfo.guids#${n}`));
const guids = (g: Record<number, bigint>): bigint[] => Array.from({ length: 8 }, (_, i) => g[i] ?? 0n);

async function bringUp() {
  const clock = new VirtualClock();
  const fabric = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2');
  const sim = new SimFabric(fabric, { clock, seed: 4 });
  const hosts = fabric.nodes.filter((n) => n.type !== NodeType.Switch);
  const ep = sim.attach(hosts[0]!.guid);
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, window: 64 });
  const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink(), 'debug'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 0, saServer: { schedule: (fn) => queueMicrotask(fn) } });
  await drive(clock, subnet.start());
  const client = async (nodeGuid: bigint) => {
    const cep = sim.attach(nodeGuid);
    cep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    const sa = await drive(clock, SaClient.locate(new MadRpc(cep, clock, { timeoutMs: 50 })));
    return { sa, portGuid: cep.local.portGuid, lid: subnet.sm.current!.fabric.nodes.find((n) => n.guid === nodeGuid)!.ports[1]!.lid! };
  };
  return { clock, sim, subnet, a: await client(hosts[1]!.guid), b: await client(hosts[2]!.guid) };
}

const statusOf = async (p: Promise<unknown>): Promise<number> => {
  try {
    await p;
    return 0;
  } catch (e) {
    if (e instanceof SaStatusError) return e.status;
    throw e;
  }
};

describe('GUIDInfoRecord Set/Delete (alias GUIDs)', () => {
  it('assigns, programs, answers and resolves alias GUIDs, and refuses what it must', async () => {
    const { clock, sim, subnet, a, b } = await bringUp();
    const mine = 0x0002c9030000beefn;
    const set = await drive(clock, a.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid, blockNum: 0, guidInfo: { guids: guids({ 2: mine }) } }, MOD | idx(1, 2)));
    const assigned = set.guidInfo.guids[1]!;
    expect(assigned >> 40n).toBe(0x001405n); // the OpenIB OUI
    expect(set.guidInfo.guids.slice(0, 3)).toEqual([a.portGuid, assigned, mine]);
    await clock.advanceAsync(10);
    const port = sim.port(a.portGuid, 1);
    expect(port.guids.slice(0, 3)).toEqual([a.portGuid, assigned, mine]); // the SM wrote the port's GUIDInfo

    const table = await drive(clock, b.sa.getTable(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid }, GUIDInfoRecord.mask('lid')));
    expect(table[0]!.guidInfo.guids.slice(0, 3)).toEqual([a.portGuid, assigned, mine]);

    // a PathRecord to the alias GID reaches a's port and names that GID
    const prMask = PathRecord.mask('sgid', 'dgid', 'numbPath');
    const [pr] = await drive(clock, b.sa.getTable(SaAttr.PathRecord, PathRecord, { sgid: gid(b.portGuid), dgid: gid(mine), numbPath: 1 }, prMask));
    expect(pr!.dlid).toBe(a.lid);
    expect(pr!.dgid).toBe(gid(mine));
    const cached = await drive(clock, b.sa.get(SaAttr.PathRecord, PathRecord, { sgid: gid(b.portGuid), dgid: gid(mine) }, PathRecord.mask('sgid', 'dgid')));
    expect(cached.dlid).toBe(a.lid); // a Get: its answer is kept for repeats

    // the port GUID is read-only; another port may not change a's table, nor take a's alias
    expect(await statusOf(drive(clock, a.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid, blockNum: 0 }, MOD | idx(0))))).toBe(SaStatus.ReqInvalid);
    expect(await statusOf(drive(clock, b.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid, blockNum: 0, guidInfo: { guids: guids({ 3: 7n }) } }, MOD | idx(3))))).toBe(SaStatus.ReqDenied);
    const taken = await drive(clock, b.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: b.lid, blockNum: 0, guidInfo: { guids: guids({ 1: mine }) } }, MOD | idx(1)));
    expect(taken.guidInfo.guids[1]).toBe(0n);
    expect(subnet.aliases.baseOf(mine)).toBe(a.portGuid);

    // delete: gone from the port and no longer a GID the SA knows; asked again, the same assigned GUID
    const del = await drive(clock, a.sa.delete(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid, blockNum: 0 }, MOD | idx(1, 2)));
    expect(del.guidInfo.guids.slice(0, 3)).toEqual([a.portGuid, 0n, 0n]);
    await clock.advanceAsync(10);
    expect(port.guids.slice(0, 3)).toEqual([a.portGuid, 0n, 0n]);
    expect(await statusOf(drive(clock, b.sa.getTable(SaAttr.PathRecord, PathRecord, { sgid: gid(b.portGuid), dgid: gid(mine), numbPath: 1 }, prMask)))).toBe(SaStatus.ReqInvalidGid);
    expect(await statusOf(drive(clock, b.sa.get(SaAttr.PathRecord, PathRecord, { sgid: gid(b.portGuid), dgid: gid(mine) }, PathRecord.mask('sgid', 'dgid'))))).toBe(SaStatus.ReqInvalidGid);
    const again = await drive(clock, a.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid, blockNum: 0 }, MOD | idx(1)));
    expect(again.guidInfo.guids[1]).toBe(assigned);

    // a reset port loses its GUIDInfo; the next heavy sweep writes the aliases again
    port.guids.fill(0n, 1);
    await drive(clock, subnet.sm.sweep('heavy'));
    await clock.advanceAsync(10);
    expect(port.guids[1]).toBe(assigned);
    // a block past GUIDCap has no records; a Set without LID and BlockNum is refused
    expect(await statusOf(drive(clock, a.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid, blockNum: 1 }, MOD | idx(1))))).toBe(SaStatus.NoRecords);
    expect(await statusOf(drive(clock, a.sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid: a.lid }, GUIDInfoRecord.mask('lid') | idx(1))))).toBe(SaStatus.ReqInsufficientComponents);
    subnet.stop();
  });
});

describe('alias GUIDs across failover', () => {
  it('the standby mirrors them and, as master, still resolves them, answers them and keeps the assigned GUID of each index', async () => {
    const clock = new VirtualClock();
    const fabric = loadFabricSpec('gen:fattree2:leaves=2,spines=1,hosts=2');
    const sim = new SimFabric(fabric, { clock, seed: 4 });
    const hosts = fabric.nodes.filter((n) => n.type !== NodeType.Switch);
    const startSm = (guid: bigint, priority: number) => {
      const ep = sim.attach(guid);
      ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
      ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
      const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 2, window: 64 });
      const subnet = new Subnet({ rpc, portGuid: ep.local.portGuid, smp: smpClientOf(rpc), clock, log: new Logger(new MemorySink(), 'debug'), routing: ['minhop'], lmc: 0, sweepIntervalMs: 1000, priority, pollIntervalMs: 200, pollRetries: 2, saServer: { schedule: (fn) => queueMicrotask(fn) } });
      void subnet.start().catch(() => undefined);
      return { subnet, kill: async () => (subnet.stop(), rpc.close(), await ep.close()) };
    };
    const a = startSm(hosts[0]!.guid, 10);
    const b = startSm(hosts[3]!.guid, 2);
    await clock.advanceAsync(2000);
    expect([a.subnet.sm.state, b.subnet.sm.state]).toEqual(['master', 'standby']);
    const cep = sim.attach(hosts[1]!.guid);
    cep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    const crpc = new MadRpc(cep, clock, { timeoutMs: 50 });
    const lid = a.subnet.sm.current!.fabric.nodes.find((n) => n.guid === hosts[1]!.guid)!.ports[1]!.lid!;
    const sa = await drive(clock, SaClient.locate(crpc));
    const set = await drive(clock, sa.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid, blockNum: 0, guidInfo: { guids: guids({ 3: 0x77n }) } }, MOD | idx(1, 3)));
    const assigned = set.guidInfo.guids[1]!;
    await clock.advanceAsync(1000); // the standby's polls pull the change
    expect([...b.subnet.syncMirror.entries.keys()]).toContain(`a/${cep.local.portGuid.toString(16)}`);

    await a.kill();
    for (let i = 0; i < 300 && b.subnet.sm.state !== 'master'; i++) await clock.advanceAsync(10);
    expect(b.subnet.sm.state).toBe('master');
    await clock.advanceAsync(200);
    const sa2 = await drive(clock, SaClient.locate(crpc));
    const [rec] = await drive(clock, sa2.getTable(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid }, GUIDInfoRecord.mask('lid')));
    expect(rec!.guidInfo.guids.slice(0, 4)).toEqual([cep.local.portGuid, assigned, 0n, 0x77n]);
    expect(sim.port(cep.local.portGuid, 1).guids.slice(0, 4)).toEqual([cep.local.portGuid, assigned, 0n, 0x77n]);
    await drive(clock, sa2.delete(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid, blockNum: 0 }, MOD | idx(1)));
    const again = await drive(clock, sa2.set(SaAttr.GUIDInfoRecord, GUIDInfoRecord, { lid, blockNum: 0 }, MOD | idx(1, 2)));
    expect(again.guidInfo.guids[1]).toBe(assigned);
    expect(again.guidInfo.guids[2]).not.toBe(assigned); // a new index gets a GUID no port has
    expect(again.guidInfo.guids[2]! >> 40n).toBe(0x001405n);
    await b.kill();
  });
});

import { describe, expect, it } from 'vitest';
import { SimFabric, type SimEndpoint } from '../src/sim/fabric.js';
import type { Fabric, FabricNode, FabricPort } from '../src/model/fabric.js';
import { VirtualClock } from '../src/util/clock.js';
import { MadStatus, MgmtClass, Method, NodeType, PERMISSIVE_LID, PhysPortState, PortState, SmpAttr, SmpDr, SmpLid, MAD_SIZE } from '../src/wire/mad.js';
import { LEDInfo, SMInfo, PortCap, SLtoVLMappingTable, VLArbitrationTable, RandomForwardingTable, LinearForwardingTable, NodeDescription, NodeInfo, PortInfo, SwitchInfo, PKeyTable, MulticastForwardingTable, GUIDInfo, type PortInfo as PortInfoValue } from '../src/wire/sma.js';
import { decodeNotice } from '../src/wire/notice.js';
import { lftBlockMod, mftMod, pkeyBlockMod, sl2vlMod, vlArbMod } from '../src/wire/modifiers.js';
import type { ReceivedMad } from '../src/transport/types.js';
import { TransportError } from '../src/transport/types.js';

// ---------- a small hand-built fabric ----------
//
//   H1[1] - [1]S1[2] - [1]S2[2] - [1]S3[2] - [1]H2
//             S1[3] - [1]H3          S2[3] (unconnected)
//
function ca(desc: string, guid: bigint, nports = 1): FabricNode {
  const ports: (FabricPort | undefined)[] = [undefined];
  for (let i = 1; i <= nports; i++) ports.push({ num: i, guid: guid + BigInt(i) });
  return { type: NodeType.CA, guid, systemImageGuid: guid, desc, numPorts: nports, vendorId: 0x2c9, deviceId: 0x1003, ports };
}
function sw(desc: string, guid: bigint, nports = 4): FabricNode {
  const ports: (FabricPort | undefined)[] = [];
  for (let i = 0; i <= nports; i++) ports.push({ num: i, guid });
  return { type: NodeType.Switch, guid, systemImageGuid: guid, desc, numPorts: nports, vendorId: 0x2c9, deviceId: 0xc738, ports };
}
function link(f: Fabric, a: number, ap: number, b: number, bp: number): void {
  f.nodes[a]!.ports[ap]!.peer = { node: b, port: bp };
  f.nodes[b]!.ports[bp]!.peer = { node: a, port: ap };
}
const H1 = 0,
  S1 = 1,
  S2 = 2,
  S3 = 3,
  H2 = 4,
  H3 = 5;
function chain(): Fabric {
  const f: Fabric = {
    nodes: [ca('H1', 0x100n), sw('S1', 0x200n), sw('S2', 0x300n), sw('S3', 0x400n), ca('H2', 0x500n, 2), ca('H3', 0x600n)],
  };
  link(f, H1, 1, S1, 1);
  link(f, S1, 2, S2, 1);
  link(f, S2, 2, S3, 1);
  link(f, S3, 2, H2, 1);
  link(f, S1, 3, H3, 1);
  return f;
}

// ---------- a tiny client ----------
class Client {
  readonly got: ReceivedMad[] = [];
  private tid = 1;
  constructor(
    readonly ep: SimEndpoint,
    readonly clock: VirtualClock,
  ) {
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnLid, 1);
    ep.onReceive((m) => this.got.push(m));
  }
  dr(path: number[], attrId: number, attrMod = 0, opts: { method?: number; data?: Uint8Array; mkey?: bigint } = {}): Uint8Array {
    const initialPath = new Array<number>(64).fill(0);
    path.forEach((p, i) => (initialPath[i] = p));
    const mad = SmpDr.encode({
      baseVersion: 1,
      mgmtClass: MgmtClass.SubnDirected,
      classVersion: 1,
      method: opts.method ?? Method.Get,
      hopCount: path.length - 1,
      tid: BigInt(this.tid++),
      attrId,
      attrMod,
      mkey: opts.mkey ?? 0n,
      drSlid: PERMISSIVE_LID,
      drDlid: PERMISSIVE_LID,
      initialPath,
    });
    if (opts.data) mad.set(opts.data, 64);
    return mad;
  }
  lid(attrId: number, attrMod = 0, opts: { method?: number; data?: Uint8Array; mkey?: bigint } = {}): Uint8Array {
    const mad = SmpLid.encode({
      baseVersion: 1,
      mgmtClass: MgmtClass.SubnLid,
      classVersion: 1,
      method: opts.method ?? Method.Get,
      tid: BigInt(this.tid++),
      attrId,
      attrMod,
      mkey: opts.mkey ?? 0n,
    });
    if (opts.data) mad.set(opts.data, 64);
    return mad;
  }
  /** Send and run the virtual clock; the response (or undefined). */
  async rpc(mad: Uint8Array, lid = PERMISSIVE_LID): Promise<ReceivedMad | undefined> {
    const tidLow = Number(mad[12]! * 2 ** 24 + mad[13]! * 65536 + mad[14]! * 256 + mad[15]!);
    const before = this.got.length;
    this.ep.send(mad, { lid, qpn: 0 });
    await this.clock.advanceAsync(1);
    return this.got.slice(before).find((m) => m.data[12]! * 2 ** 24 + m.data[13]! * 65536 + m.data[14]! * 256 + m.data[15]! === tidLow);
  }
  async drGet(path: number[], attrId: number, attrMod = 0) {
    return this.rpc(this.dr(path, attrId, attrMod));
  }
  async drSet(path: number[], attrId: number, attrMod: number, data: Uint8Array, mkey?: bigint) {
    return this.rpc(this.dr(path, attrId, attrMod, { method: Method.Set, data, ...(mkey !== undefined ? { mkey } : {}) }));
  }
}

function setup(opts: Partial<ConstructorParameters<typeof SimFabric>[1]> = {}) {
  const clock = new VirtualClock();
  const fab = new SimFabric(chain(), { clock, ...opts });
  const sm = new Client(fab.attach('H1'), clock);
  return { clock, fab, sm };
}

const status = (m: ReceivedMad) => SmpDr.decode(m.data).status;
const piData = (v: Partial<PortInfoValue>) => PortInfo.encode(v);

describe('directed route', () => {
  it('walks 3 hops out and back with the return path, answering NodeInfo/NodeDescription/SwitchInfo/PortInfo', async () => {
    const { sm } = setup();
    const r = await sm.drGet([0, 1, 2, 2], SmpAttr.NodeInfo);
    expect(r).toBeDefined();
    const smp = SmpDr.decode(r!.data);
    expect(smp.method).toBe(Method.GetResp);
    expect(smp.direction).toBe(1);
    expect(smp.status).toBe(0);
    expect(smp.hopPointer).toBe(0);
    expect(smp.hopCount).toBe(3);
    expect(smp.returnPath.slice(1, 4)).toEqual([1, 1, 1]);
    const ni = NodeInfo.decode(r!.data, 64);
    expect(ni.nodeType).toBe(NodeType.Switch);
    expect(ni.nodeGuid).toBe(0x400n);
    expect(ni.localPortNum).toBe(1);
    expect(ni.numPorts).toBe(4);
    expect(r!.addr.lid).toBe(PERMISSIVE_LID);

    const nd = await sm.drGet([0, 1, 2, 2], SmpAttr.NodeDescription);
    expect(NodeDescription.decode(nd!.data, 64).description).toBe('S3');
    const si = SwitchInfo.decode((await sm.drGet([0, 1, 2, 2], SmpAttr.SwitchInfo))!.data, 64);
    expect(si.linearFdbCap).toBe(49152);
    expect(si.linearFdbTop).toBe(0);
    // the CA at the end of the chain: NodeInfo carries its port GUID and the arrival port
    const h2 = NodeInfo.decode((await sm.drGet([0, 1, 2, 2, 2], SmpAttr.NodeInfo))!.data, 64);
    expect(h2.nodeType).toBe(NodeType.CA);
    expect(h2.portGuid).toBe(0x501n);
    expect(h2.localPortNum).toBe(1);
    const pi = PortInfo.decode((await sm.drGet([0, 1, 2, 2], SmpAttr.PortInfo, 2))!.data, 64);
    expect(pi.portState).toBe(PortState.Init);
    expect(pi.portPhysicalState).toBe(PhysPortState.LinkUp);
    expect(pi.localPortNum).toBe(1);
    const unconnected = PortInfo.decode((await sm.drGet([0, 1, 2], SmpAttr.PortInfo, 3))!.data, 64);
    expect(unconnected.portState).toBe(PortState.Down);
    expect(unconnected.portPhysicalState).toBe(PhysPortState.Polling);
  });

  it('records the arrival port of every hop in the return path', async () => {
    const clock = new VirtualClock();
    const fab = new SimFabric(chain(), { clock });
    const c = new Client(fab.attach('H2'), clock);
    const r = await c.drGet([0, 1, 1, 1, 3], SmpAttr.NodeInfo);
    const smp = SmpDr.decode(r!.data);
    expect(smp.returnPath.slice(1, 5)).toEqual([2, 2, 2, 1]);
    expect(NodeInfo.decode(r!.data, 64).nodeGuid).toBe(0x600n);
    expect(fab.node('S2').stats.smpsHandled).toBe(0); // forwarded, not handled
    expect(fab.node('H3').stats.smpsHandled).toBe(1);
  });

  it('answers hop 0 from the local CA, PortInfo modifier 0 meaning the local port', async () => {
    const { sm } = setup();
    const r = await sm.drGet([0], SmpAttr.PortInfo, 0);
    const pi = PortInfo.decode(r!.data, 64);
    expect(pi.localPortNum).toBe(1);
    expect(pi.capabilityMask & 0x8).toBe(0x8); // IsTrapSupported
    expect(pi.lid).toBe(0);
    expect(pi.portState).toBe(PortState.Init);
  });

  it('drops an SMP sent through a nonexistent or unconnected port (badPath drop), or returns it with status 110', async () => {
    const { sm, fab } = setup();
    expect(await sm.drGet([0, 1, 3, 1], SmpAttr.NodeInfo)).toBeUndefined(); // S2 port 3 is unconnected
    expect(await sm.drGet([0, 1, 9], SmpAttr.NodeInfo)).toBeUndefined(); // S1 has no port 9
    expect(await sm.drGet([0, 2], SmpAttr.NodeInfo)).toBeUndefined(); // H1 has no port 2
    expect(fab.stats.dropReasons['path']).toBe(3);

    const s = setup({ badPath: 'status' });
    const req = s.sm.dr([0, 1, 3, 1], SmpAttr.NodeInfo);
    const back = await s.sm.rpc(req);
    expect(back?.status).toBe(110);
    expect(back?.data[3]).toBe(Method.Get);
  });

  it('rejects unsupported attributes and bad modifiers with a status', async () => {
    const { sm } = setup();
    expect(status((await sm.drGet([0, 1], SmpAttr.SMInfo))!)).toBe(MadStatus.UnsupportedMethodAttr);
    expect(status((await sm.drGet([0], SmpAttr.SwitchInfo))!)).toBe(MadStatus.UnsupportedMethodAttr);
    expect(status((await sm.drGet([0, 1], 0x00ff))!)).toBe(MadStatus.UnsupportedMethodAttr);
    expect(status((await sm.drGet([0, 1], SmpAttr.PortInfo, 9))!)).toBe(MadStatus.InvalidField);
    expect(status((await sm.drGet([0, 1], SmpAttr.LinearForwardingTable, 768))!)).toBe(MadStatus.InvalidField);
    expect(status((await sm.rpc(sm.dr([0, 1], SmpAttr.NodeInfo, 0, { method: Method.Set })))!)).toBe(MadStatus.UnsupportedMethodAttr);
  });

  it('refuses to send unregistered classes and oversize MADs', () => {
    const { fab } = setup();
    const ep = fab.attach('H3');
    expect(() => ep.send(new Uint8Array(256), { lid: 1, qpn: 1 })).toThrow(TransportError);
    ep.register(0, 1);
    expect(() => ep.send(new Uint8Array(MAD_SIZE + 8), { lid: 1, qpn: 1 })).toThrow(/RMPP/);
  });
});

// ---------- a configured subnet: LIDs, LFTs, SM LID ----------
const PATHS: Record<string, number[]> = { H1: [0], S1: [0, 1], S2: [0, 1, 2], S3: [0, 1, 2, 2], H2: [0, 1, 2, 2, 2], H3: [0, 1, 3] };
const LIDS: Record<string, number> = { H1: 1, S1: 2, S2: 3, S3: 4, H2: 5, H3: 6 };
const LFTS: Record<string, number[]> = {
  // index = LID (0..6)
  S1: [255, 1, 0, 2, 2, 2, 3],
  S2: [255, 1, 1, 0, 2, 2, 1],
  S3: [255, 1, 1, 1, 0, 2, 1],
};

async function getPi(sm: Client, path: number[], port: number): Promise<PortInfoValue> {
  const r = await sm.drGet(path, SmpAttr.PortInfo, port);
  if (!r) throw new Error(`no PortInfo answer from ${path.join(',')} port ${port}`);
  return PortInfo.decode(r.data, 64);
}
async function setPi(sm: Client, path: number[], port: number, change: Partial<PortInfoValue>, mkey?: bigint) {
  const cur = await getPi(sm, path, port);
  return sm.drSet(path, SmpAttr.PortInfo, port, piData({ ...cur, portState: 0, portPhysicalState: 0, ...change }), mkey);
}

async function configure(sm: Client, opts: { lfts?: boolean } = {}) {
  for (const [name, path] of Object.entries(PATHS)) {
    const r = await setPi(sm, path, 0, { lid: LIDS[name]!, masterSmLid: 1, subnetTimeout: 10 });
    expect(status(r!)).toBe(0);
  }
  if (opts.lfts === false) return;
  for (const [name, lft] of Object.entries(LFTS)) {
    const ports = new Array<number>(64).fill(255);
    lft.forEach((p, i) => (ports[i] = p));
    const r = await sm.drSet(PATHS[name]!, SmpAttr.LinearForwardingTable, lftBlockMod(0), LinearForwardingTable.encode({ ports }));
    expect(status(r!)).toBe(0);
    const si = SwitchInfo.decode((await sm.drGet(PATHS[name]!, SmpAttr.SwitchInfo))!.data, 64);
    const r2 = await sm.drSet(PATHS[name]!, SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, linearFdbTop: 6 }));
    expect(SwitchInfo.decode(r2!.data, 64).linearFdbTop).toBe(6);
  }
}

/** Ports of every link, for bring-up: [path of node, port]. */
const LINK_PORTS: Array<[string, number]> = [
  ['H1', 1], ['S1', 1], ['S1', 2], ['S2', 1], ['S2', 2], ['S3', 1], ['S3', 2], ['H2', 1], ['S1', 3], ['H3', 1], ['S1', 0], ['S2', 0], ['S3', 0],
];
async function activate(sm: Client) {
  for (const state of [PortState.Armed, PortState.Active]) {
    for (const [name, port] of LINK_PORTS) {
      const r = await setPi(sm, PATHS[name]!, port, { portState: state });
      expect(status(r!), `${name} port ${port} -> ${state}`).toBe(0);
    }
  }
}

describe('LID routing', () => {
  it('routes LID-addressed SMPs through LFTs programmed by Sets, honouring LinearFDBTop', async () => {
    const { sm, fab } = setup();
    await configure(sm);
    expect(Array.from(fab.lft('S2').subarray(0, 8))).toEqual([255, 1, 1, 0, 2, 2, 1, 255]);
    const r = await sm.rpc(sm.lid(SmpAttr.NodeInfo), 5);
    expect(r).toBeDefined();
    expect(r!.addr.lid).toBe(5);
    expect(NodeInfo.decode(r!.data, 64).nodeGuid).toBe(0x500n);
    // a switch by its port-0 LID
    const s3 = await sm.rpc(sm.lid(SmpAttr.NodeDescription), 4);
    expect(NodeDescription.decode(s3!.data, 64).description).toBe('S3');
    // above LinearFDBTop: dropped at S1
    const si = SwitchInfo.decode((await sm.drGet(PATHS['S1']!, SmpAttr.SwitchInfo))!.data, 64);
    await sm.drSet(PATHS['S1']!, SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, linearFdbTop: 4 }));
    expect(await sm.rpc(sm.lid(SmpAttr.NodeInfo), 5)).toBeUndefined();
    expect(await sm.rpc(sm.lid(SmpAttr.NodeInfo), 4)).toBeDefined();
    // an unprogrammed LID
    expect(await sm.rpc(sm.lid(SmpAttr.NodeInfo), 40)).toBeUndefined();
  });

  it('delivers GSI MADs between endpoints through the switches only when every port on the path is ACTIVE', async () => {
    const { sm, fab, clock } = setup();
    await configure(sm);
    const server = fab.attach('H2');
    server.register(MgmtClass.SubnAdm, 2, { methods: [Method.Get] });
    const seen: ReceivedMad[] = [];
    server.onReceive((m) => {
      seen.push(m);
      const resp = m.data.slice();
      resp[3] = Method.GetResp;
      server.send(resp, m.addr);
    });
    const client = fab.attach('H3');
    client.register(MgmtClass.SubnAdm, 2);
    const answers: ReceivedMad[] = [];
    client.onReceive((m) => answers.push(m));
    const req = new Uint8Array(256);
    req.set([1, MgmtClass.SubnAdm, 2, Method.Get]);
    req[15] = 0x42; // TID low byte
    client.send(req, { lid: 5, qpn: 1 });
    await clock.advanceAsync(1);
    expect(seen).toHaveLength(0); // ports are only INIT: data VLs do not flow
    await activate(sm);
    client.send(req, { lid: 5, qpn: 1 });
    await clock.advanceAsync(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.addr.lid).toBe(6);
    expect(seen[0]!.addr.qpn).toBe(1);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.data[3]).toBe(Method.GetResp);
    expect(answers[0]!.data[15]).toBe(0x42);
    // the TID carries the client's agent id in its high 32 bits
    expect(answers[0]!.data.subarray(8, 12)).toEqual(new Uint8Array([0, 0, 0, client.id]));
  });

  it('forwards multicast LIDs by the MFT', async () => {
    const { sm, fab, clock } = setup();
    await configure(sm);
    await activate(sm);
    // MLID 0xC001: S1 -> ports 2 and 3, S2 -> port 2, S3 -> port 2
    const mft = async (name: string, ports: number[]) => {
      const masks = new Array<number>(32).fill(0);
      masks[1] = ports.reduce((m, p) => m | (1 << p), 0);
      const r = await sm.drSet(PATHS[name]!, SmpAttr.MulticastForwardingTable, mftMod(0, 0), MulticastForwardingTable.encode({ portMasks: masks }));
      expect(status(r!)).toBe(0);
    };
    await mft('S1', [1, 2, 3]);
    await mft('S2', [1, 2]);
    await mft('S3', [1, 2]);
    const got: string[] = [];
    for (const name of ['H2', 'H3']) {
      const ep = fab.attach(name);
      ep.register(0x30, 1, { methods: [Method.Send] });
      ep.onReceive(() => got.push(name));
    }
    const tx = fab.attach('H1');
    tx.register(0x30, 1);
    const mad = new Uint8Array(256);
    mad.set([1, 0x30, 1, Method.Send]);
    tx.send(mad, { lid: 0xc001, qpn: 1 });
    await clock.advanceAsync(1);
    expect(got.sort()).toEqual(['H2', 'H3']);
  });
});

describe('port state machine', () => {
  it('allows Init->Armed->Active only in order and with the neighbour far enough', async () => {
    const { sm, fab } = setup();
    const s1 = PATHS['S1']!;
    // Active straight from Init: refused, nothing changes
    expect(status((await setPi(sm, s1, 1, { portState: PortState.Active }))!)).toBe(MadStatus.InvalidField);
    expect(fab.portInfo('S1', 1).portState).toBe(PortState.Init);
    // Armed on a port whose link is down: refused
    expect(status((await setPi(sm, PATHS['S2']!, 3, { portState: PortState.Armed }))!)).toBe(MadStatus.InvalidField);
    // Init is accepted only as a no-op; 5+ are not port states
    expect(status((await setPi(sm, s1, 2, { portState: PortState.Init }))!)).toBe(0);
    expect(status((await setPi(sm, s1, 2, { portState: 5 }))!)).toBe(MadStatus.InvalidField);
    // Armed from Init: fine
    const r = await setPi(sm, s1, 1, { portState: PortState.Armed });
    expect(PortInfo.decode(r!.data, 64).portState).toBe(PortState.Armed);
    // Active while the neighbour (H1) is still Init: refused
    expect(status((await setPi(sm, s1, 1, { portState: PortState.Active }))!)).toBe(MadStatus.InvalidField);
    expect(status((await setPi(sm, [0], 1, { portState: PortState.Armed }))!)).toBe(0);
    expect(status((await setPi(sm, s1, 1, { portState: PortState.Active }))!)).toBe(0);
    expect(fab.portInfo('S1', 1).portState).toBe(PortState.Active);
    // Active -> Armed is not a transition
    expect(status((await setPi(sm, s1, 1, { portState: PortState.Armed }))!)).toBe(MadStatus.InvalidField);
    // Down: the link retrains and both ends come back in Init
    expect(status((await setPi(sm, s1, 1, { portState: PortState.Down }))!)).toBe(0);
    expect(fab.portInfo('S1', 1).portState).toBe(PortState.Init);
    expect(fab.portInfo('H1', 1).portState).toBe(PortState.Init);
  });

  it('disables and re-enables a port through PortPhysicalState', async () => {
    const { sm, fab } = setup();
    expect(status((await setPi(sm, PATHS['S1']!, 3, { portPhysicalState: PhysPortState.Disabled }))!)).toBe(0);
    expect(fab.portInfo('S1', 3).portPhysicalState).toBe(PhysPortState.Disabled);
    expect(fab.portInfo('S1', 3).portState).toBe(PortState.Down);
    expect(fab.portInfo('H3', 1).portState).toBe(PortState.Down);
    expect(fab.portInfo('H3', 1).portPhysicalState).toBe(PhysPortState.Polling);
    expect(await sm.drGet(PATHS['H3']!, SmpAttr.NodeInfo)).toBeUndefined();
    expect(fab.switchInfo('S1').portStateChange).toBe(0); // its own Set raises no PortStateChange
    await setPi(sm, PATHS['S1']!, 3, { portPhysicalState: PhysPortState.Polling });
    expect(fab.portInfo('H3', 1).portState).toBe(PortState.Init);
    expect(await sm.drGet(PATHS['H3']!, SmpAttr.NodeInfo)).toBeDefined();
  });

  it('takes link events from the fabric and sets PortStateChange (cleared by writing 1)', async () => {
    const { sm, fab } = setup();
    fab.linkDown('S2', 2);
    expect(fab.portInfo('S3', 1).portState).toBe(PortState.Down);
    expect(await sm.drGet(PATHS['S3']!, SmpAttr.NodeInfo)).toBeUndefined();
    const si = SwitchInfo.decode((await sm.drGet(PATHS['S2']!, SmpAttr.SwitchInfo))!.data, 64);
    expect(si.portStateChange).toBe(1);
    const r = await sm.drSet(PATHS['S2']!, SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, portStateChange: 1 }));
    expect(SwitchInfo.decode(r!.data, 64).portStateChange).toBe(0);
    fab.linkUp('S2', 2);
    expect(fab.portInfo('S3', 1).portState).toBe(PortState.Init);
    expect(await sm.drGet(PATHS['S3']!, SmpAttr.NodeInfo)).toBeDefined();
  });
});

describe('M_Key', () => {
  const KEY = 0x1234_5678_9abc_def0n;
  async function protect(sm: Client, bits: number, lease: number) {
    const r = await setPi(sm, PATHS['H3']!, 0, { mkey: KEY, mkeyProtectBits: bits, mkeyLeasePeriod: lease });
    expect(status(r!)).toBe(0);
  }
  const getWith = (sm: Client, mkey: bigint) => sm.rpc(sm.dr(PATHS['H3']!, SmpAttr.PortInfo, 0, { mkey }));

  it('level 1: Gets succeed, hiding the key from a wrong M_Key; Sets with a wrong key fail silently', async () => {
    const { sm, fab } = setup();
    await protect(sm, 1, 0);
    const wrong = await getWith(sm, 0n);
    expect(PortInfo.decode(wrong!.data, 64).mkey).toBe(0n);
    const right = await getWith(sm, KEY);
    expect(PortInfo.decode(right!.data, 64).mkey).toBe(KEY);
    expect(await setPi(sm, PATHS['H3']!, 0, { lid: 77 }, 1n)).toBeUndefined();
    expect(fab.portInfo('H3', 1).lid).toBe(0);
    expect(fab.portInfo('H3', 1).mkeyViolations).toBe(1);
    const ok = await setPi(sm, PATHS['H3']!, 0, { lid: 77 }, KEY);
    expect(PortInfo.decode(ok!.data, 64).lid).toBe(77);
  });

  it('level 0: a wrong key still reads the M_Key but cannot Set', async () => {
    const { sm, fab } = setup();
    await protect(sm, 0, 0);
    expect(PortInfo.decode((await getWith(sm, 5n))!.data, 64).mkey).toBe(KEY);
    expect(await setPi(sm, PATHS['H3']!, 0, { lid: 9 }, 5n)).toBeUndefined();
    expect(fab.portInfo('H3', 1).lid).toBe(0);
  });

  it('level 2: Gets with a wrong key get no answer; the lease expiry on the virtual clock clears the protection', async () => {
    const { sm, fab, clock } = setup();
    await protect(sm, 2, 3); // 3 s lease
    expect(await getWith(sm, 0n)).toBeUndefined();
    expect(fab.portInfo('H3', 1).mkeyViolations).toBe(1);
    expect(fab.node('H3').stats.mkeyViolations).toBe(1);
    await clock.advanceAsync(2000); // lease still running
    expect(await getWith(sm, 0n)).toBeUndefined();
    await clock.advanceAsync(1200); // > 3 s since the first violation
    const r = await getWith(sm, 0n);
    expect(r).toBeDefined();
    const pi = PortInfo.decode(r!.data, 64);
    expect(pi.mkeyProtectBits).toBe(0);
    expect(pi.mkey).toBe(KEY);
  });

  it('a correct key stops the lease timer', async () => {
    const { sm, clock } = setup();
    await protect(sm, 3, 2);
    expect(await getWith(sm, 0n)).toBeUndefined(); // starts the lease
    await clock.advanceAsync(1000);
    expect(await getWith(sm, KEY)).toBeDefined(); // stops it
    await clock.advanceAsync(5000);
    expect(await getWith(sm, 0n)).toBeUndefined(); // still protected
  });

  it('sends trap 256 to the SM LID on a violation', async () => {
    const { sm, fab, clock } = setup();
    sm.ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    await configure(sm);
    await protect(sm, 1, 0);
    const before = sm.got.length;
    await setPi(sm, PATHS['H3']!, 0, { lid: 99 }, 7n);
    await clock.advanceAsync(1);
    const traps = sm.got.slice(before).filter((m) => m.data[3] === Method.Trap);
    expect(traps.length).toBeGreaterThanOrEqual(1);
    const n = decodeNotice(traps[0]!.data, 64);
    expect(n.notice.trapNumber).toBe(256);
    expect(n.details?.trap).toBe(256);
    if (n.details?.trap === 256) {
      expect(n.details.value.lid).toBe(6);
      expect(n.details.value.mkey).toBe(7n);
      expect(n.details.value.attrId).toBe(SmpAttr.PortInfo);
      expect(n.details.value.drNotice).toBe(1);
      expect(n.details.value.drHopCount).toBe(2);
    }
    expect(traps[0]!.addr.lid).toBe(6);
    expect(fab.stats.trapsSent).toBeGreaterThanOrEqual(1);
  });
});

describe('traps', () => {
  it('delivers trap 128 from the switch that can still reach the SM after linkDown, repeating until TrapRepress', async () => {
    const { sm, fab, clock } = setup({ trapRepeatMs: 100, trapMaxSends: 5 });
    sm.ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    await configure(sm);
    const before = sm.got.length;
    fab.linkDown('S2', 2);
    await clock.advanceAsync(1);
    const traps = () => sm.got.slice(before).filter((m) => m.data[3] === Method.Trap);
    // S2 (LID 3) reaches H1; S3 (LID 4) routes to the SM over the dead link
    expect(traps()).toHaveLength(1);
    const t = decodeNotice(traps()[0]!.data, 64);
    expect(t.notice.trapNumber).toBe(128);
    expect(t.notice.producerType).toBe(2);
    expect(t.notice.issuerLid).toBe(3);
    expect(t.details).toEqual({ trap: 128, value: { lid: 3 } });
    expect(traps()[0]!.addr.lid).toBe(3);
    expect(fab.switchInfo('S2').portStateChange).toBe(1);
    expect(fab.switchInfo('S3').portStateChange).toBe(1);
    // not repressed: it repeats
    await clock.advanceAsync(100);
    expect(traps()).toHaveLength(2);
    expect(traps()[1]!.data.subarray(8, 16)).toEqual(traps()[0]!.data.subarray(8, 16)); // same TID
    // TrapRepress to the issuer stops it
    const repress = traps()[0]!.data.slice();
    repress[3] = Method.TrapRepress;
    sm.ep.send(repress, { lid: 3, qpn: 0 });
    await clock.advanceAsync(1);
    expect(fab.pendingTraps('S2')).toBe(0);
    await clock.advanceAsync(1000);
    expect(traps()).toHaveLength(2);
    // S3 gives up after trapMaxSends
    expect(fab.pendingTraps('S3')).toBe(0);
  });

  it('sends no trap when MasterSMLID is 0', async () => {
    const { fab, clock } = setup();
    fab.linkDown('S1', 3);
    await clock.advanceAsync(10_000);
    expect(fab.stats.trapsSent).toBe(0);
    expect(fab.switchInfo('S1').portStateChange).toBe(1);
  });
});

describe('fault injection', () => {
  async function run(seed: number) {
    const { sm, fab } = setup({ seed, faults: { dropRate: 0.3 } });
    const answered: number[] = [];
    for (let i = 0; i < 40; i++) if (await sm.drGet(PATHS['S3']!, SmpAttr.NodeInfo)) answered.push(i);
    return { answered, stats: fab.stats };
  }
  it('is deterministic for a seed', async () => {
    const a = await run(7);
    const b = await run(7);
    const c = await run(8);
    expect(a.answered).toEqual(b.answered);
    expect(a.answered.length).toBeGreaterThan(5);
    expect(a.answered.length).toBeLessThan(35);
    expect(c.answered).not.toEqual(a.answered);
    expect(a.stats.dropReasons['fault']).toBe(b.stats.dropReasons['fault']);
  });

  it('duplicates and delays per link', async () => {
    const { sm, fab, clock } = setup();
    fab.setLinkFaults('S1', 2, { duplicateRate: 1, delayMs: 5 });
    const before = sm.got.length;
    sm.ep.send(sm.dr(PATHS['S2']!, SmpAttr.NodeInfo), { lid: PERMISSIVE_LID, qpn: 0 });
    await clock.advanceAsync(4);
    expect(sm.got.length).toBe(before); // delayed twice (out and back) by 5 ms
    await clock.advanceAsync(20);
    // the request is duplicated on the way out and each response again on the way back
    expect(sm.got.length - before).toBe(4);
    expect(fab.stats.duplicated).toBe(3);
    fab.setLinkFaults('S1', 2, undefined);
    expect(await sm.drGet(PATHS['S2']!, SmpAttr.NodeInfo)).toBeDefined();
  });

  it('drops everything on a link with dropRate 1', async () => {
    const { sm, fab } = setup();
    fab.setLinkFaults('S2', 1, { dropRate: 1 });
    expect(await sm.drGet(PATHS['S2']!, SmpAttr.NodeInfo)).toBeUndefined();
    expect(await sm.drGet(PATHS['S1']!, SmpAttr.NodeInfo)).toBeDefined();
  });
});

describe('tables', () => {
  it('keeps P_Key blocks with the default full-member key, and GUIDInfo with the port GUID', async () => {
    const { sm, fab } = setup();
    const pk = PKeyTable.decode((await sm.drGet(PATHS['H2']!, SmpAttr.PKeyTable, pkeyBlockMod(0)))!.data, 64);
    expect(pk.pkeys[0]).toBe(0xffff);
    expect(pk.pkeys[1]).toBe(0);
    const keys = new Array<number>(32).fill(0);
    keys[0] = 0xffff;
    keys[1] = 0x8001;
    await sm.drSet(PATHS['S2']!, SmpAttr.PKeyTable, pkeyBlockMod(0, 2), PKeyTable.encode({ pkeys: keys }));
    expect(fab.pkeys('S2', 2).slice(0, 3)).toEqual([0xffff, 0x8001, 0]);
    expect(status((await sm.drGet(PATHS['S2']!, SmpAttr.PKeyTable, pkeyBlockMod(1, 2)))!)).toBe(MadStatus.InvalidField);
    const gi = GUIDInfo.decode((await sm.drGet(PATHS['H2']!, SmpAttr.GUIDInfo, 0))!.data, 64);
    expect(gi.guids[0]).toBe(0x501n);
  });
});

describe('SM endpoints', () => {
  it('passes SMInfo to an SM attached at the target port and routes its DR answer back', async () => {
    const { sm, fab, clock } = setup();
    const other = fab.attach('H2');
    other.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    other.onReceive((m) => {
      const r = m.data.slice();
      r[3] = Method.GetResp;
      r[4] = r[4]! | 0x80; // D bit
      SMInfo.encode({ guid: 0x501n, smKey: 0n, actCount: 9, priority: 3, smState: 2 }, r, 64);
      other.send(r, m.addr);
    });
    expect(fab.portInfo('H2', 1).capabilityMask & PortCap.IsSM).toBe(PortCap.IsSM);
    expect(fab.portInfo('H3', 1).capabilityMask & PortCap.IsSM).toBe(0);
    const r = await sm.drGet(PATHS['H2']!, SmpAttr.SMInfo);
    expect(r).toBeDefined();
    expect(status(r!)).toBe(0);
    expect(SMInfo.decode(r!.data, 64)).toEqual({ guid: 0x501n, smKey: 0n, actCount: 9, priority: 3, smState: 2 });
    await other.close();
    expect(fab.portInfo('H2', 1).capabilityMask & PortCap.IsSM).toBe(0);
    expect(status((await sm.drGet(PATHS['H2']!, SmpAttr.SMInfo))!)).toBe(MadStatus.UnsupportedMethodAttr);
    void clock;
  });

  it('reports live local port info and raises trap 144 when IsSM changes', async () => {
    const { sm, fab, clock } = setup();
    sm.ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    await configure(sm);
    const ep = fab.attach('H2', undefined, { caName: 'mlx5_0' });
    expect(ep.local).toMatchObject({ caName: 'mlx5_0', portNum: 1, nodeGuid: 0x500n, portGuid: 0x501n, lid: 5, smLid: 1, state: PortState.Init });
    await activate(sm);
    expect(ep.local.state).toBe(PortState.Active);
    const before = sm.got.length;
    ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
    await clock.advanceAsync(1);
    const t = sm.got.slice(before).filter((m) => m.data[3] === Method.Trap).map((m) => decodeNotice(m.data, 64));
    expect(t.map((n) => n.notice.trapNumber)).toEqual([144]);
    if (t[0]!.details?.trap === 144) expect(t[0]!.details.value.capabilityMask & PortCap.IsSM).toBe(PortCap.IsSM);
  });

  it('rejects DR SMPs with a non-permissive DrSLID/DrDLID', async () => {
    const { sm } = setup();
    const mad = sm.dr(PATHS['S1']!, SmpAttr.NodeInfo);
    SmpDr.encode({ ...SmpDr.decode(mad), drSlid: 1 }, mad);
    expect(await sm.rpc(mad)).toBeUndefined();
  });
});

describe('more attributes', () => {
  it('keeps SL-to-VL tables per input/output port and VLArbitration blocks', async () => {
    const { sm } = setup();
    const vls = Array.from({ length: 16 }, (_, i) => i % 8);
    let r = await sm.drSet(PATHS['S2']!, SmpAttr.SLtoVLMappingTable, sl2vlMod(1, 2), SLtoVLMappingTable.encode({ vls }));
    expect(status(r!)).toBe(0);
    expect(SLtoVLMappingTable.decode((await sm.drGet(PATHS['S2']!, SmpAttr.SLtoVLMappingTable, sl2vlMod(1, 2)))!.data, 64).vls).toEqual(vls);
    expect(SLtoVLMappingTable.decode((await sm.drGet(PATHS['S2']!, SmpAttr.SLtoVLMappingTable, sl2vlMod(2, 1)))!.data, 64).vls).toEqual(new Array(16).fill(0));
    expect(status((await sm.drGet(PATHS['S2']!, SmpAttr.SLtoVLMappingTable, sl2vlMod(1, 9)))!)).toBe(MadStatus.InvalidField);
    const entries = Array.from({ length: 32 }, (_, i) => ({ vl: i % 4, weight: i < 4 ? 64 : 0 }));
    r = await sm.drSet(PATHS['S2']!, SmpAttr.VLArbitrationTable, vlArbMod(2, 1), VLArbitrationTable.encode({ entries }));
    expect(status(r!)).toBe(0);
    expect(VLArbitrationTable.decode((await sm.drGet(PATHS['S2']!, SmpAttr.VLArbitrationTable, vlArbMod(2, 1)))!.data, 64).entries).toEqual(entries);
    // with a cap of 8 entries, the second low-priority block does not exist
    expect(status((await sm.drGet(PATHS['S2']!, SmpAttr.VLArbitrationTable, vlArbMod(2, 2)))!)).toBe(MadStatus.InvalidField);
    expect(status((await sm.drGet(PATHS['S2']!, SmpAttr.VLArbitrationTable, vlArbMod(2, 1) + (4 << 16)))!)).toBe(MadStatus.InvalidField);
  });

  it('switches with a Random Forwarding Table route by it (and DefaultPort)', async () => {
    const { sm } = setup({ linearFdbCap: 0, randomFdbCap: 64 });
    await configure(sm, { lfts: false });
    const si = SwitchInfo.decode((await sm.drGet(PATHS['S1']!, SmpAttr.SwitchInfo))!.data, 64);
    expect(si.linearFdbCap).toBe(0);
    expect(si.randomFdbCap).toBe(64);
    expect(status((await sm.drGet(PATHS['S1']!, SmpAttr.LinearForwardingTable, 0))!)).toBe(MadStatus.UnsupportedMethodAttr);
    // S1: LID 6 (H3) on port 3, LID 1 on port 1; everything else to DefaultPort 2 (toward S2, which answers for LID 3)
    const entries = [
      { lid: 6, valid: 1, lmc: 0, port: 3 },
      { lid: 1, valid: 1, lmc: 0, port: 1 },
    ];
    expect(status((await sm.drSet(PATHS['S1']!, SmpAttr.RandomForwardingTable, 0, RandomForwardingTable.encode({ entries })))!)).toBe(0);
    const h3 = await sm.rpc(sm.lid(SmpAttr.NodeInfo), 6);
    expect(NodeInfo.decode(h3!.data, 64).nodeGuid).toBe(0x600n);
    expect(await sm.rpc(sm.lid(SmpAttr.NodeInfo), 3)).toBeUndefined(); // no entry, DefaultPort 0
    await sm.drSet(PATHS['S1']!, SmpAttr.SwitchInfo, 0, SwitchInfo.encode({ ...si, defaultPort: 2 }));
    expect(await sm.rpc(sm.lid(SmpAttr.NodeInfo), 3)).toBeUndefined(); // reaches S2, which has no route back
    await sm.drSet(PATHS['S2']!, SmpAttr.RandomForwardingTable, 0, RandomForwardingTable.encode({ entries: [{ lid: 0, valid: 1, lmc: 1, port: 1 }] }));
    const s2 = await sm.rpc(sm.lid(SmpAttr.NodeInfo), 3);
    expect(NodeInfo.decode(s2!.data, 64).nodeGuid).toBe(0x300n);
  });
});

describe('robustness', () => {
  it('keeps running when an endpoint handler throws, and stops everything on close()', async () => {
    const { sm, fab, clock } = setup();
    const bad = fab.attach('H3');
    bad.register(MgmtClass.SubnDirected, 1);
    bad.onReceive(() => {
      throw new Error('handler bug');
    });
    const initialPath = [0, 1];
    const mad = SmpDr.encode({ baseVersion: 1, mgmtClass: MgmtClass.SubnDirected, classVersion: 1, method: Method.Get, hopCount: 1, tid: 5n, attrId: SmpAttr.NodeInfo, drSlid: PERMISSIVE_LID, drDlid: PERMISSIVE_LID, initialPath });
    bad.send(mad, { lid: PERMISSIVE_LID, qpn: 0 });
    sm.ep.send(sm.dr(PATHS['S2']!, SmpAttr.NodeInfo), { lid: PERMISSIVE_LID, qpn: 0 });
    await expect(clock.advanceAsync(1)).rejects.toThrow('handler bug');
    const before = sm.got.length;
    await clock.advanceAsync(1);
    expect(sm.got.length).toBe(before + 1); // the other answer still arrived
    const led = await sm.drSet(PATHS['S1']!, SmpAttr.LEDInfo, 0, LEDInfo.encode({ ledMask: 1 }));
    expect(LEDInfo.decode(led!.data, 64).ledMask).toBe(1);
    expect(fab.node('S1').ledOn).toBe(true);
    fab.close();
    expect(() => sm.ep.send(sm.dr([0], SmpAttr.NodeInfo), { lid: PERMISSIVE_LID, qpn: 0 })).toThrow(TransportError);
    expect(fab.pendingEvents).toBe(0);
    expect(clock.pending).toBe(0);
  });
});

describe('links', () => {
  it('negotiates active width and speed from both ends', () => {
    const f = chain();
    Object.assign(f.nodes[S1]!.ports[3]!, { width: '1x', speed: 'EDR' });
    Object.assign(f.nodes[H3]!.ports[1]!, { width: '4x', speed: 'HDR' });
    Object.assign(f.nodes[S1]!.ports[2]!, { width: '4x', speed: 'QDR' });
    Object.assign(f.nodes[S2]!.ports[1]!, { width: '12x', speed: 'DDR' });
    const fab = new SimFabric(f, { clock: new VirtualClock() });
    const a = fab.portInfo('H3', 1);
    expect([a.linkWidthSupported, a.linkWidthActive, a.linkSpeedExtSupported, a.linkSpeedExtActive]).toEqual([3 | 16, 1, 7, 2]); // 1x EDR (an HDR 4x port does 2x too)
    const b = fab.portInfo('S2', 1);
    expect([b.linkWidthActive, b.linkSpeedActive, b.linkSpeedExtActive]).toEqual([2, 2, 0]); // 4x DDR
  });

  it('raises port traps 129-131 on request', async () => {
    const { sm, fab, clock } = setup({ trapMaxSends: 1 });
    sm.ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
    await configure(sm);
    fab.raiseTrap('S1', 3, 129);
    await clock.advanceAsync(1);
    const t = sm.got.filter((m) => m.data[3] === Method.Trap).map((m) => decodeNotice(m.data, 64));
    expect(t.map((n) => [n.notice.trapNumber, n.details])).toEqual([[129, { trap: 129, value: { lid: 2, portNum: 3 } }]]);
  });
});

/**
 * UmadTransport's own logic over a fake addon (no ibsim, no libibumad calls): class checks on
 * Ethernet ports, agent selection, Q_Key and kernel-timeout defaults, decoding of received
 * batches, issm timing, fatal receive errors and the simulator guard. The real addon is only
 * loaded (never called into) to check the record layout it exports.
 */
import { describe, expect, it } from 'vitest';
import { loadNative, type NativeBatchCallback, type NativeGrh, type NativeRecordLayout, type NativeSendRecordLayout, type NativeUmad, type NativeUmadError, type NativeUmadPort } from '../src/transport/native.js';
import { STAGE_MADS } from '../src/transport/umad-stage.js';
import { assertSimulatorListening, portOfGuid, resolvePort, UmadTransport, type UmadCaListing, type UmadPortListing } from '../src/transport/umad.js';
import { TransportError, type ReceivedMad } from '../src/transport/types.js';
import { GSI_QKEY } from '../src/wire/mad.js';

interface SentCall {
  agentId: number;
  data: Uint8Array;
  lid: number;
  qpn: number;
  qkey: number;
  sl: number;
  pkeyIndex: number;
  timeoutMs: number;
  retries: number;
  grh: NativeGrh | null | undefined;
}

// A deliberately different word order from the addon's, so decoding must follow RECORD.
const FAKE_RECORD: NativeRecordLayout = {
  stride: 20,
  gid: 0,
  flowLabel: 4,
  trafficClass: 5,
  hopLimit: 6,
  gidIndex: 7,
  grh: 8,
  pkeyIndex: 9,
  pathBits: 10,
  sl: 11,
  qkey: 12,
  qpn: 13,
  lid: 14,
  agent: 15,
  status: 16,
  length: 17,
  offset: 18,
};

class FakePort implements NativeUmadPort {
  sent: SentCall[] = [];
  registered: { mgmtClass: number; classVersion: number; rmppVersion: number; methods?: number[]; oui?: number }[] = [];
  issmOpen = false;
  closed = false;
  constructor(readonly onBatch: NativeBatchCallback) {}
  get isOpen(): boolean {
    return !this.closed;
  }
  register(mgmtClass: number, classVersion: number, rmppVersion: number, methods?: number[], oui?: number): number {
    this.registered.push({ mgmtClass, classVersion, rmppVersion, methods, oui });
    return this.registered.length - 1;
  }
  unregister(): void {}
  send(agentId: number, data: Uint8Array, lid: number, qpn: number, qkey: number, sl: number, pkeyIndex: number, timeoutMs: number, retries: number, grh?: NativeGrh | null): void {
    this.sent.push({ agentId, data, lid, qpn, qkey, sl, pkeyIndex, timeoutMs, retries, grh });
  }
  openIssm(): void {
    this.issmOpen = true;
  }
  closeIssm(): void {
    this.issmOpen = false;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
  closeSync(): void {
    this.closed = true;
  }
}

// sendMany's records, also in an order of their own.
const FAKE_SEND_RECORD: NativeSendRecordLayout = { stride: 10, timeoutMs: 0, pkeyIndex: 1, sl: 2, qkey: 3, qpn: 4, lid: 5, length: 6, offset: 7, agent: 9, maxLength: 256 };

/** A fake port with sendMany: each call's MADs decoded into `sent` (copied: the stage is reused),
 * the call's size in `calls`; `refuse` makes the next call throw. */
class FakeManyPort extends FakePort {
  calls: number[] = [];
  refuse = false;
  sendMany(data: Uint8Array, meta: Uint32Array, count: number): number {
    if (this.refuse) {
      this.refuse = false;
      throw new RangeError('MAD 0 is out of range');
    }
    const r = FAKE_SEND_RECORD;
    this.calls.push(count);
    for (let i = 0, b = 0; i < count; i++, b += r.stride) {
      const d = data.slice(meta[b + r.offset]!, meta[b + r.offset]! + meta[b + r.length]!);
      this.sent.push({ agentId: meta[b + r.agent]!, data: d, lid: meta[b + r.lid]!, qpn: meta[b + r.qpn]!, qkey: meta[b + r.qkey]!, sl: meta[b + r.sl]!, pkeyIndex: meta[b + r.pkeyIndex]!, timeoutMs: meta[b + r.timeoutMs]!, retries: 0, grh: null });
    }
    return 0;
  }
}

/** A fake addon whose ports `make` builds; `extra` adds to (or replaces) its exports. */
function fakeWith<P extends FakePort>(make: (onBatch: NativeBatchCallback) => P, extra: Partial<NativeUmad> = {}): { native: NativeUmad; ports: P[] } {
  const ports: P[] = [];
  const native: NativeUmad = {
    UmadPort: class {
      constructor(_ca: string | null, _port: number, onBatch: NativeBatchCallback) {
        const p = make(onBatch);
        ports.push(p);
        return p;
      }
    } as unknown as NativeUmad['UmadPort'],
    listCas: () => [],
    smiGsiPair: () => null,
    RECORD: FAKE_RECORD,
    features: { openSmiPort: false, smiGsiPairs: false },
    ...extra,
  };
  return { native, ports };
}

/** Ports with send() only (an addon from before sendMany). */
function fake(): { native: NativeUmad; ports: FakePort[] } {
  return fakeWith((cb) => new FakePort(cb));
}

function fakeMany(): { native: NativeUmad; ports: FakeManyPort[] } {
  return fakeWith((cb) => new FakeManyPort(cb), { SEND_RECORD: FAKE_SEND_RECORD });
}

function portListing(linkLayer: 'InfiniBand' | 'Ethernet'): UmadPortListing {
  return { caName: 'mlx5_0', portNum: 1, nodeGuid: 0x1n, portGuid: 0x2n, lid: 5, smLid: 1, state: 4, linkLayer, physState: 5, lmc: 0, rate: 100, capMask: 0 };
}

function mad(mgmtClass: number, method: number): Uint8Array {
  const m = new Uint8Array(256);
  m[0] = 1;
  m[1] = mgmtClass;
  m[2] = 1;
  m[3] = method;
  return m;
}

describe('UmadTransport (fake addon)', () => {
  it('refuses QP0 classes on an Ethernet (RoCE) port and requires GRH addressing there', () => {
    const { native, ports } = fake();
    const t = new UmadTransport(native, portListing('Ethernet'), {});
    for (const cls of [0x01, 0x81]) {
      expect(() => t.register(cls, 1)).toThrow(TransportError);
      expect(() => t.register(cls, 1)).toThrow(/Ethernet \(RoCE\).*no QP0/);
    }
    t.register(0x03, 2);
    expect(() => t.send(mad(0x03, 0x01), { lid: 1, qpn: 1 })).toThrow(/needs GRH addressing/);
    t.send(mad(0x03, 0x01), { lid: 1, qpn: 1, grh: { dgid: 0xfe80000000000000_0002c90300000001n, sgidIndex: 3, hopLimit: 64 } });
    const g = ports[0]!.sent[0]!.grh!;
    expect(Buffer.from(g.dgid).toString('hex')).toBe('fe800000000000000002c90300000001');
    expect(g).toMatchObject({ sgidIndex: 3, hopLimit: 64, trafficClass: 0, flowLabel: 0 });
    t.closeSync();
  });

  it('sends through the class agent with Q_Key and kernel-timeout defaults', () => {
    const { native, ports } = fake();
    const t = new UmadTransport(native, portListing('InfiniBand'), { requestTimeoutMs: 777 });
    expect(() => t.send(mad(0x81, 0x01), { lid: 0xffff, qpn: 0 })).toThrow(/no agent for class 0x81.*register\(\) first/);
    t.register(0x81, 1);
    t.register(0x03, 2, { methods: [0x01, 0x12], rmppVersion: 1 });
    expect(() => t.register(0x03, 2)).toThrow(/already registered/);
    expect(() => t.register(0x30, 1)).toThrow(/needs an OUI/);
    t.register(0x30, 1, { oui: 0x001405 });
    const p = ports[0]!;
    expect(p.registered[1]).toMatchObject({ mgmtClass: 0x03, classVersion: 2, rmppVersion: 1, methods: [0x01, 0x12] });
    expect(p.registered[2]).toMatchObject({ mgmtClass: 0x30, oui: 0x001405 });

    t.send(mad(0x81, 0x01), { lid: 0xffff, qpn: 0 }); // SMP request
    t.send(mad(0x03, 0x81), { lid: 7, qpn: 1, sl: 2, pkeyIndex: 1 }); // SA response
    t.send(mad(0x03, 0x01), { lid: 7, qpn: 1, qkey: 0x1234 }); // explicit Q_Key
    t.send(mad(0x03, 0x07), { lid: 7, qpn: 1 }); // TrapRepress is a response
    expect(p.sent.map((s) => [s.agentId, s.qkey, s.timeoutMs, s.retries])).toEqual([
      [0, 0, 777, 0],
      [1, GSI_QKEY, 0, 0],
      [1, 0x1234, 777, 0],
      [1, GSI_QKEY, 0, 0],
    ]);
    expect(p.sent[1]).toMatchObject({ lid: 7, qpn: 1, sl: 2, pkeyIndex: 1, grh: null });
    t.closeSync();
  });

  it('stages MADs and hands each burst to sendMany at the end of its turn, a full stage at once, what is staged before a GRH or long MAD and before a close', async () => {
    const { native, ports } = fakeMany();
    const t = new UmadTransport(native, portListing('InfiniBand'), { requestTimeoutMs: 777 });
    t.register(0x81, 1);
    t.register(0x03, 2);
    const p = ports[0]!;
    const smp = (i: number): Uint8Array => {
      const m = mad(0x81, 0x01);
      m[15] = i;
      return m;
    };
    const idOf = (c: SentCall): number => c.data[15]!;
    t.send(smp(1), { lid: 0xffff, qpn: 0 });
    t.send(mad(0x03, 0x81), { lid: 7, qpn: 1, sl: 2, pkeyIndex: 1 }); // SA response
    expect(p.calls).toEqual([]); // staged: the turn goes on
    await Promise.resolve();
    expect(p.calls).toEqual([2]);
    expect(p.sent.map((c) => [c.agentId, c.lid, c.qpn, c.qkey, c.sl, c.pkeyIndex, c.timeoutMs, c.data.length])).toEqual([
      [0, 0xffff, 0, 0, 0, 0, 777, 256],
      [1, 7, 1, GSI_QKEY, 2, 1, 0, 256],
    ]);
    // A long burst: a full stage is handed over at once, the rest at the end of the turn.
    p.sent = [];
    p.calls = [];
    for (let i = 0; i < STAGE_MADS + 3; i++) t.send(smp(i), { lid: 0xffff, qpn: 0 });
    expect(p.calls).toEqual([STAGE_MADS]);
    // The caller may reuse its buffer at once: the stage holds a copy.
    const reused = smp(200);
    t.send(reused, { lid: 0xffff, qpn: 0 });
    reused[15] = 201;
    await Promise.resolve();
    expect(p.calls).toEqual([STAGE_MADS, 4]);
    expect(p.sent.map(idOf)).toEqual([...Array.from({ length: STAGE_MADS + 3 }, (_, i) => i), 200]);
    // A GRH MAD and a MAD longer than a stage takes go through send(), after what is staged.
    p.sent = [];
    t.send(smp(1), { lid: 0xffff, qpn: 0 });
    t.send(mad(0x03, 0x01), { lid: 1, qpn: 1, grh: { dgid: 1n } });
    t.send(smp(2), { lid: 0xffff, qpn: 0 });
    const long = new Uint8Array(300);
    long.set(smp(3));
    t.send(long, { lid: 0xffff, qpn: 0 });
    expect(p.sent.map((c) => [idOf(c), c.grh ? 'grh' : c.data.length])).toEqual([
      [1, 256],
      [0, 'grh'],
      [2, 256],
      [3, 300],
    ]);
    // A refused hand-over loses its MADs as a full queue would: counted, never thrown.
    p.refuse = true;
    t.send(smp(4), { lid: 0xffff, qpn: 0 });
    await Promise.resolve();
    expect(t.sendStats().dropped).toBe(1);
    expect(t.stageError?.message).toMatch(/handing 1 staged MADs to mlx5_0 port 1.*out of range/);
    // handOverStaged (the exit hook's first step, before the addon's threads stop) hands over at once.
    p.calls = [];
    t.send(smp(5), { lid: 0xffff, qpn: 0 });
    t.handOverStaged();
    expect(p.calls).toEqual([1]);
    // A response staged just before a close still reaches the addon before the port closes.
    p.sent = [];
    t.send(mad(0x03, 0x81), { lid: 7, qpn: 1 });
    await t.close();
    expect(p.sent.map((c) => c.timeoutMs)).toEqual([0]);
    expect(p.closed).toBe(true);
  });

  it('opens issm only once both SMP classes have agents', () => {
    const { native, ports } = fake();
    const t = new UmadTransport(native, portListing('InfiniBand'), { issm: true });
    t.register(0x81, 1);
    expect(ports[0]!.issmOpen).toBe(false);
    t.register(0x01, 1);
    expect(ports[0]!.issmOpen).toBe(true);
    t.setIsSm(false);
    expect(ports[0]!.issmOpen).toBe(false);
    t.closeSync();
  });

  it('decodes a received batch by the record layout the addon exports', () => {
    const { native, ports } = fake();
    const t = new UmadTransport(native, portListing('InfiniBand'), {});
    const got: ReceivedMad[] = [];
    t.onReceive((m) => got.push(m));
    const a = mad(0x81, 0x81);
    const b = mad(0x03, 0x01);
    b[100] = 0xab;
    const data = Buffer.concat([Buffer.from(a), Buffer.from(b.subarray(0, 120))]);
    const meta = new Uint32Array(2 * FAKE_RECORD.stride);
    const put = (i: number, f: keyof NativeRecordLayout, v: number): void => {
      meta[i * FAKE_RECORD.stride + FAKE_RECORD[f]] = v;
    };
    put(0, 'offset', 0);
    put(0, 'length', 256);
    put(0, 'lid', 0xffff);
    put(0, 'status', 110);
    put(1, 'offset', 256);
    put(1, 'length', 120);
    put(1, 'lid', 9);
    put(1, 'qpn', 1);
    put(1, 'qkey', GSI_QKEY);
    put(1, 'sl', 3);
    put(1, 'pkeyIndex', 2);
    put(1, 'grh', 1);
    put(1, 'gidIndex', 1);
    put(1, 'hopLimit', 63);
    put(1, 'trafficClass', 4);
    put(1, 'flowLabel', 0x12345);
    [0xfe800000, 0, 0x0002c903, 0x00000001].forEach((w, k) => (meta[FAKE_RECORD.stride + FAKE_RECORD.gid + k] = w));
    ports[0]!.onBatch(data, meta, 2);
    expect(got).toHaveLength(2);
    expect(got[0]!.status).toBe(110);
    expect(got[0]!.addr).toEqual({ lid: 0xffff, qpn: 0, qkey: 0, sl: 0, pkeyIndex: 0 });
    expect(Buffer.from(got[0]!.data).equals(Buffer.from(a))).toBe(true);
    expect(got[1]!.data.length).toBe(120);
    expect(got[1]!.data[100]).toBe(0xab);
    expect(got[1]!.addr).toEqual({
      lid: 9,
      qpn: 1,
      qkey: GSI_QKEY,
      sl: 3,
      pkeyIndex: 2,
      grh: { dgid: 0xfe800000000000000002c90300000001n, sgidIndex: 1, hopLimit: 63, trafficClass: 4, flowLabel: 0x12345 },
    });
    t.closeSync();
  });

  it('reports a fatal receive error with the failing call and errno, and refuses use after close', async () => {
    const { native, ports } = fake();
    const t = new UmadTransport(native, portListing('InfiniBand'), {});
    t.register(0x81, 1);
    const errors: TransportError[] = [];
    t.onError((e) => errors.push(e));
    const err = Object.assign(new Error('umad_recv(mlx5_0 port 1) failed: No such device (errno 19)'), { errno: 19, call: 'umad_recv' }) as NativeUmadError;
    ports[0]!.onBatch(null, null, 0, err);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TransportError);
    expect(errors[0]).toMatchObject({ call: 'umad_recv', errno: 19 });
    await t.close();
    expect(ports[0]!.closed).toBe(true);
    expect(() => t.send(mad(0x81, 0x01), { lid: 0xffff, qpn: 0 })).toThrow(/closed/);
  });

  it('picks the named port, else the first linked-up one, with actionable errors', () => {
    const mk = (portNum: number, physState: number, state: number): UmadPortListing => ({ ...portListing('InfiniBand'), portNum, physState, state });
    const cas: UmadCaListing[] = [
      { name: 'mlx5_0', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [mk(1, 3, 1), mk(2, 5, 2)] },
      { name: 'mlx5_1', nodeType: 1, nodeGuid: 2n, systemGuid: 2n, fwVer: '', ports: [mk(1, 5, 4)] },
    ];
    // rdma-core's order: the first ACTIVE port (mlx5_1 port 1) over the first LinkUp one
    expect(resolvePort(cas)).toBe(cas[1]!.ports[0]);
    expect(resolvePort(cas.slice(0, 1)).portNum).toBe(2);
    // a switch's SMA device: port 0 (rdma-core's "switch sma port 0")
    expect(resolvePort([{ name: 'sw0', nodeType: 2, nodeGuid: 3n, systemGuid: 3n, fwVer: '', ports: [mk(0, 5, 4)] }]).portNum).toBe(0);
    expect(resolvePort(cas, 'mlx5_0', 1).portNum).toBe(1);
    expect(() => resolvePort(cas, 'mlx9')).toThrow(/no InfiniBand device named "mlx9" \(found: mlx5_0, mlx5_1\)/);
    expect(() => resolvePort(cas, 'mlx5_0', 3)).toThrow(/has no port 3/);
    expect(() => resolvePort([])).toThrow(/no InfiniBand device found/);
  });

  it('skips an Ethernet (irdma/RoCE) device listed first, as rdma-core (OpenSM issue #40)', () => {
    const port = (caName: string, linkLayer: 'InfiniBand' | 'Ethernet', o: Partial<UmadPortListing> = {}): UmadPortListing => ({ ...portListing(linkLayer), caName, ...o });
    const cas: UmadCaListing[] = [
      { name: 'irdma0', nodeType: 1, nodeGuid: 9n, systemGuid: 9n, fwVer: '', ports: [port('irdma0', 'Ethernet')] },
      { name: 'mlx5_0', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [port('mlx5_0', 'InfiniBand', { state: 2 })] },
    ];
    expect(resolvePort(cas)).toMatchObject({ caName: 'mlx5_0', portNum: 1 });
    expect(() => resolvePort(cas, 'irdma0', 1)).toThrow(/irdma0 port 1 cannot carry the SM's MADs: link layer Ethernet, not InfiniBand/);
    expect(() => resolvePort(cas.slice(0, 1))).toThrow(/no port for the SM on irdma0 \(irdma0 port 1: link layer Ethernet, not InfiniBand\)/);
  });

  it('skips the GSI device of a planarized HCA (IsSMDisabled, same port GUID) for the SMI', () => {
    const IS_SM_DISABLED = 1 << 10;
    const cas: UmadCaListing[] = [
      { name: 'mlx5_0', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [{ ...portListing('InfiniBand'), caName: 'mlx5_0', portGuid: 0x77n, capMask: IS_SM_DISABLED }] },
      { name: 'mlx5_1', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [{ ...portListing('InfiniBand'), caName: 'mlx5_1', portGuid: 0x77n, capMask: 0 }] },
    ];
    expect(resolvePort(cas)).toMatchObject({ caName: 'mlx5_1', portNum: 1 });
    expect(() => resolvePort(cas, 'mlx5_0', 1)).toThrow(/IsSMDisabled/);
    expect(() => resolvePort(cas.slice(0, 1))).toThrow(/mlx5_0 port 1: IsSMDisabled/);
  });

  it('by port GUID on a planarized HCA (--guid): the SM gets the SMI device, not the GSI one listed first with the same GUID', () => {
    const IS_SM_DISABLED = 1 << 10;
    const cas: UmadCaListing[] = [
      { name: 'mlx5_0', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [{ ...portListing('InfiniBand'), caName: 'mlx5_0', portGuid: 0x77n, capMask: IS_SM_DISABLED }] },
      { name: 'mlx5_1', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [{ ...portListing('InfiniBand'), caName: 'mlx5_1', portGuid: 0x77n, capMask: 0 }] },
    ];
    expect(portOfGuid(cas, 0x77n, true)).toMatchObject({ caName: 'mlx5_1', portNum: 1 });
    // an SA client (GSI) takes the first device with the GUID
    expect(portOfGuid(cas, 0x77n)).toMatchObject({ caName: 'mlx5_0' });
    expect(portOfGuid(cas, 0x78n, true)).toBeUndefined();
    // only the GSI device has it: the SM's port is that one, and resolvePort says why it cannot be
    const gsi = portOfGuid(cas.slice(0, 1), 0x77n, true)!;
    expect(() => resolvePort(cas.slice(0, 1), gsi.caName, gsi.portNum)).toThrow(/mlx5_0 port 1 cannot carry the SM's MADs: IsSMDisabled/);
  });

  it('takes the first port not Disabled when none is ACTIVE or LinkUp', () => {
    const mk = (portNum: number, physState: number, state: number): UmadPortListing => ({ ...portListing('InfiniBand'), portNum, physState, state });
    const cas: UmadCaListing[] = [{ name: 'mlx5_0', nodeType: 1, nodeGuid: 1n, systemGuid: 1n, fwVer: '', ports: [mk(1, 3, 1), mk(2, 2, 1)] }];
    expect(resolvePort(cas).portNum).toBe(2);
    expect(() => resolvePort([{ ...cas[0]!, ports: [mk(1, 3, 1)] }])).toThrow(/mlx5_0 port 1: Disabled/);
  });

  it('refuses to touch libibumad under umad2sim when no ibsim listens', () => {
    const env = { LD_PRELOAD: '/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so', IBSIM_SOCKNAME: `nobody_${process.pid}_${Date.now()}` };
    expect(() => assertSimulatorListening(env)).toThrow(/no ibsim is listening on socket "nobody_/);
    expect(() => assertSimulatorListening({})).not.toThrow();
  });

  it('loads the built addon with a complete, collision-free record layout', () => {
    const n = loadNative();
    const idx = Object.entries(n.RECORD).filter(([k]) => k !== 'stride');
    const words = idx.flatMap(([k, v]) => (k === 'gid' ? [v, v + 1, v + 2, v + 3] : [v]));
    expect(new Set(words).size).toBe(words.length);
    expect(Math.max(...words)).toBeLessThan(n.RECORD.stride);
    expect(Object.keys(n.RECORD).sort()).toEqual(Object.keys(FAKE_RECORD).sort());
    expect(typeof n.features.openSmiPort).toBe('boolean');
    const send = Object.entries(n.SEND_RECORD!).filter(([k]) => k !== 'stride' && k !== 'maxLength');
    expect(new Set(send.map(([, v]) => v)).size).toBe(send.length);
    expect(Math.max(...send.map(([, v]) => v))).toBe(n.SEND_RECORD!.stride - 1);
    expect(Object.keys(n.SEND_RECORD!).sort()).toEqual(Object.keys(FAKE_SEND_RECORD).sort());
    expect(n.SEND_RECORD!.maxLength).toBe(256);
  });
});

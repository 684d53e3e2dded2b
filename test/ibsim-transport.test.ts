/**
 * The umad transport against ibsim: the native addon, real libibumad and the umad2sim preload.
 * The SM side runs in preloaded child processes (test/fixtures/ibsim-*.mjs, importing dist/);
 * this file builds the MADs with src/wire and checks the answers against the topology below.
 * Never skipped: without ibsim it fails, naming the packages to install.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MadHeader, Method, MgmtClass, NodeType, PERMISSIVE_LID, PortState, SmpAttr, SmpDr, SmpLid } from '../src/wire/mad.js';
import { LinearForwardingTable, NodeInfo, PortInfo, SwitchInfo } from '../src/wire/sma.js';
import { SA_CLASS_VERSION, SA_DATA_OFFSET, SaAttr } from '../src/wire/sa.js';
import { requireIbsim, runNodePreloaded, startIbsim, startPreloaded, type Ibsim } from './helpers/ibsim.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLIENT = path.join(here, 'fixtures/ibsim-madclient.mjs');
const SA_SERVER = path.join(here, 'fixtures/ibsim-sa-server.mjs');

// Two switches, three CAs:  H1 -[1]S1[3]-[3]S2[1]- H3,  H2 -[2]S1.  The tests attach at H1.
const TOPOLOGY = `
Switch 8 "S1"
[1] "H1"[1]
[2] "H2"[1]
[3] "S2"[3]

Switch 8 "S2"
[1] "H3"[1]
[3] "S1"[3]

Hca 2 "H1"
[1] "S1"[1]

Hca 2 "H2"
[1] "S1"[2]

Hca 2 "H3"
[1] "S2"[1]
`;

interface StepResult {
  status?: number;
  addr?: { lid: number; qpn: number };
  data?: string;
  timeout?: true;
}
interface ClientOut {
  local: { caName: string; portNum: number; nodeGuid: string; portGuid: string };
  cas?: { name: string; nodeType: number; nodeGuid: string; ports: { portNum: number; portGuid: string; linkLayer: string }[] }[];
  results: StepResult[];
}
interface Step {
  mad: Uint8Array;
  addr: { lid: number; qpn: number; qkey?: number };
  timeoutMs?: number;
}

let ibsim: Ibsim;
let dir: string;
const childPids: number[] = [];
let tid = 0x5eed0000;
const SMP_CLASSES: [number, number][] = [
  [MgmtClass.SubnLid, 1],
  [MgmtClass.SubnDirected, 1],
];

function dr(attrId: number, pathPorts: number[], opts: { attrMod?: number; method?: number; data?: Uint8Array } = {}): Step {
  const initialPath = new Array<number>(64).fill(0);
  pathPorts.forEach((p, i) => (initialPath[i + 1] = p));
  const mad = SmpDr.encode({
    baseVersion: 1,
    mgmtClass: MgmtClass.SubnDirected,
    classVersion: 1,
    method: opts.method ?? Method.Get,
    hopCount: pathPorts.length,
    hopPointer: 0,
    tid: BigInt(++tid),
    attrId,
    attrMod: opts.attrMod ?? 0,
    drSlid: PERMISSIVE_LID,
    drDlid: PERMISSIVE_LID,
    initialPath,
    data: opts.data ?? new Uint8Array(64),
  });
  return { mad, addr: { lid: PERMISSIVE_LID, qpn: 0 } };
}

function lidRouted(lid: number, attrId: number, attrMod = 0): Step {
  const mad = SmpLid.encode({ baseVersion: 1, mgmtClass: MgmtClass.SubnLid, classVersion: 1, method: Method.Get, tid: BigInt(++tid), attrId, attrMod, data: new Uint8Array(64) });
  return { mad, addr: { lid, qpn: 0 } };
}

async function client(
  steps: Step[],
  opts: { simHost?: string; classes?: [number, number][]; list?: boolean; env?: Record<string, string>; exitWithoutClose?: boolean } = {},
): Promise<ClientOut> {
  const cfg = {
    exitWithoutClose: opts.exitWithoutClose ?? false,
    list: opts.list ?? false,
    classes: opts.classes ?? SMP_CLASSES,
    steps: steps.map((s) => ({ mad: Buffer.from(s.mad).toString('hex'), addr: s.addr, timeoutMs: s.timeoutMs })),
  };
  const p = startPreloaded(process.execPath, [CLIENT, JSON.stringify(cfg)], { ibsim, simHost: opts.simHost ?? 'H1', env: opts.env, timeoutMs: 20_000 });
  childPids.push(p.pid);
  const r = await p.done;
  if (r.code !== 0) throw new Error(`MAD client failed (code ${r.code}, signal ${r.signal}, timed out ${r.timedOut}):\n${r.stdout}\n${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ClientOut;
}

function bytesOf(r: StepResult): Uint8Array {
  expect(r.timeout, 'no answer within the step timeout').toBeUndefined();
  return Uint8Array.from(Buffer.from(r.data!, 'hex'));
}

/** The answer to a DR SMP: checks status and TID, returns the SMP. */
function drAnswer(r: StepResult, sent: Step): SmpDr {
  expect(r.status).toBe(0);
  const smp = SmpDr.decode(bytesOf(r));
  const req = SmpDr.decode(sent.mad);
  expect(smp.method).toBe(Method.GetResp);
  expect(smp.tid & 0xffffffffn).toBe(req.tid & 0xffffffffn);
  expect(smp.status).toBe(0);
  return smp;
}

/** GUIDs ibsim assigned, from its console `Dump "<node>"`: "<Type> <n> "<id>" nodeguid <hex> ...". */
async function dumpGuid(node: string): Promise<bigint> {
  const out = await ibsim.console(`Dump "${node}"`);
  const m = new RegExp(`"${node}"\\s+nodeguid\\s+([0-9a-fA-F]+)`).exec(out);
  if (!m) throw new Error(`no nodeguid for ${node} in ibsim's Dump output:\n${out}`);
  return BigInt('0x' + m[1]);
}

async function getPortInfo(pathPorts: number[], port: number): Promise<PortInfo> {
  const step = dr(SmpAttr.PortInfo, pathPorts, { attrMod: port });
  const out = await client([step]);
  return PortInfo.decode(drAnswer(out.results[0]!, step).data);
}

/** A PortInfo Set that changes only the given fields (state fields default to NoChange). */
function setPortInfo(pathPorts: number[], port: number, current: PortInfo, change: Partial<PortInfo>): Step {
  const value: PortInfo = { ...current, portState: PortState.NoChange, portPhysicalState: 0, linkSpeedEnabled: 0, linkWidthEnabled: 0, ...change };
  return dr(SmpAttr.PortInfo, pathPorts, { attrMod: port, method: Method.Set, data: PortInfo.encode(value, new Uint8Array(64)) });
}

const SM_LID = 1;
const S1_LID = 2;
const H2_LID = 3;

/** What an SM would do for H1-S1-H2: LIDs and SMLIDs, S1's LinearFDBTop and LFT, then every port
 * on the path INIT -> ARMED -> ACTIVE (only the transitions still needed, so it can run twice). */
async function bringUpH1S1H2(): Promise<void> {
  const ports: [number[], number, Partial<PortInfo>][] = [
    [[], 1, { lid: SM_LID, masterSmLid: SM_LID }],
    [[1], 0, { lid: S1_LID, masterSmLid: SM_LID }],
    [[1], 1, {}],
    [[1], 2, {}],
    [[1, 2], 1, { lid: H2_LID, masterSmLid: SM_LID }],
  ];
  const reads = [...ports.map(([p, n]) => dr(SmpAttr.PortInfo, p, { attrMod: n })), dr(SmpAttr.SwitchInfo, [1])];
  const got = await client(reads);
  const current = ports.map((_, i) => PortInfo.decode(drAnswer(got.results[i]!, reads[i]!).data));
  const si = SwitchInfo.decode(drAnswer(got.results[ports.length]!, reads[ports.length]!).data);
  const lft = new Array<number>(64).fill(0xff);
  lft[SM_LID] = 1;
  lft[S1_LID] = 0;
  lft[H2_LID] = 2;
  const setup = [
    ...ports.map(([p, n, ch], i) => {
      const step = setPortInfo(p, n, current[i]!, ch);
      current[i] = { ...current[i]!, ...ch };
      return step;
    }),
    dr(SmpAttr.SwitchInfo, [1], { method: Method.Set, data: SwitchInfo.encode({ ...si, linearFdbTop: H2_LID }, new Uint8Array(64)) }),
    dr(SmpAttr.LinearForwardingTable, [1], { method: Method.Set, attrMod: 0, data: LinearForwardingTable.encode({ ports: lft }) }),
  ];
  for (const next of [PortState.Armed, PortState.Active]) {
    ports.forEach(([p, n], i) => {
      if (current[i]!.portState === next - 1) {
        setup.push(setPortInfo(p, n, current[i]!, { portState: next }));
        current[i] = { ...current[i]!, portState: next };
      }
    });
  }
  const out = await client(setup);
  setup.forEach((s, i) => drAnswer(out.results[i]!, s));
  const check = ports.map(([p, n]) => dr(SmpAttr.PortInfo, p, { attrMod: n }));
  const after = await client(check);
  check.forEach((s, i) => expect(PortInfo.decode(drAnswer(after.results[i]!, s).data).portState).toBe(PortState.Active));
}

beforeAll(async () => {
  requireIbsim();
  dir = mkdtempSync(path.join(os.tmpdir(), 'ibsm-ibsim-test-'));
  const net = path.join(dir, 'two-switches.net');
  writeFileSync(net, TOPOLOGY);
  ibsim = await startIbsim(net);
});

afterAll(async () => {
  await ibsim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('umad transport over ibsim', () => {
  it('lists the simulated CA and opens its port', async () => {
    const out = await client([], { list: true });
    const h1 = await dumpGuid('H1');
    expect(out.cas).toHaveLength(1);
    const ca = out.cas![0]!;
    expect(ca.nodeType).toBe(NodeType.CA);
    expect(BigInt(ca.nodeGuid)).toBe(h1);
    expect(ca.ports.map((p) => p.portNum)).toContain(1);
    expect(ca.ports.every((p) => p.linkLayer === 'InfiniBand')).toBe(true);
    expect(out.local.caName).toBe(ca.name);
    expect(out.local.portNum).toBe(1); // the linked-up port
  });

  it('gets NodeInfo by directed route at hop 0, 1 and 2', async () => {
    const steps = [dr(SmpAttr.NodeInfo, []), dr(SmpAttr.NodeInfo, [1]), dr(SmpAttr.NodeInfo, [1, 3])];
    const out = await client(steps);
    const [h1, s1, s2] = steps.map((s, i) => NodeInfo.decode(drAnswer(out.results[i]!, s).data));
    expect(h1).toMatchObject({ nodeType: NodeType.CA, numPorts: 2, localPortNum: 1, nodeGuid: await dumpGuid('H1') });
    expect(s1).toMatchObject({ nodeType: NodeType.Switch, numPorts: 8, localPortNum: 1, nodeGuid: await dumpGuid('S1') });
    expect(s2).toMatchObject({ nodeType: NodeType.Switch, numPorts: 8, localPortNum: 3, nodeGuid: await dumpGuid('S2') });
    // The answers were returned along the reverse path, with the hop pointer back at the start.
    const back = SmpDr.decode(bytesOf(out.results[2]!));
    expect(back.direction).toBe(1);
    expect(back.hopCount).toBe(2);
  });

  it('sets a port LID and SM LID with PortInfo Set and reads them back', async () => {
    const before = await getPortInfo([], 1);
    expect(before.lid).not.toBe(0x21);
    const set = setPortInfo([], 1, before, { lid: 0x21, masterSmLid: 0x21 });
    const get = dr(SmpAttr.PortInfo, [], { attrMod: 1 });
    const out = await client([set, get]);
    const setResp = PortInfo.decode(drAnswer(out.results[0]!, set).data);
    const after = PortInfo.decode(drAnswer(out.results[1]!, get).data);
    expect(setResp.lid).toBe(0x21);
    expect(after.lid).toBe(0x21);
    expect(after.masterSmLid).toBe(0x21);
  });

  it('reaches a switch by LID once LIDs, LinearFDBTop, the LFT and ACTIVE ports are set', async () => {
    await bringUpH1S1H2();
    const routed = lidRouted(S1_LID, SmpAttr.NodeInfo);
    const own = lidRouted(SM_LID, SmpAttr.NodeInfo);
    const out = await client([routed, own]);
    const answer = out.results[0]!;
    expect(answer.status).toBe(0);
    const smp = SmpLid.decode(bytesOf(answer));
    expect(smp.method).toBe(Method.GetResp);
    expect(smp.tid & 0xffffffffn).toBe(SmpLid.decode(routed.mad).tid & 0xffffffffn);
    expect(NodeInfo.decode(smp.data)).toMatchObject({ nodeType: NodeType.Switch, nodeGuid: await dumpGuid('S1') });
    expect(answer.addr!.lid).toBe(S1_LID);
    const ownAnswer = SmpLid.decode(bytesOf(out.results[1]!));
    expect(NodeInfo.decode(ownAnswer.data)).toMatchObject({ nodeType: NodeType.CA, nodeGuid: await dumpGuid('H1') });
  });

  it('hands a dropped MAD back with status 110 (ETIMEDOUT) and the original request', async () => {
    await ibsim.console('Error "S1"[1] 100');
    const dropped = dr(SmpAttr.NodeInfo, [1]);
    let out: ClientOut;
    try {
      out = await client([dropped]);
    } finally {
      await ibsim.console('Error "S1"[1] 0');
    }
    const r = out.results[0]!;
    expect(r.status).toBe(110);
    const back = bytesOf(r);
    expect(MadHeader.decode(back).method).toBe(Method.Get);
    // The request as sent: libibumad put its agent id into TID bits 32-47, and the return path
    // (bytes 192-255, unused by a request) comes back with whatever ibsim left there.
    const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
    expect(hex(back.subarray(0, 8))).toBe(hex(dropped.mad.subarray(0, 8)));
    expect(hex(back.subarray(12, 192))).toBe(hex(dropped.mad.subarray(12, 192)));
    // With the error rate cleared the same request is answered again.
    const again = dr(SmpAttr.NodeInfo, [1]);
    drAnswer((await client([again])).results[0]!, again);
  });

  it('returns a bad directed route at once with status 110', async () => {
    const bad = dr(SmpAttr.NodeInfo, [1, 7]); // S1 port 7 is not connected
    const out = await client([bad]);
    expect(out.results[0]!.status).toBe(110);
  });

  it('refuses to start when no ibsim listens on the socket, instead of hanging', async () => {
    const p = startPreloaded(process.execPath, [CLIENT, JSON.stringify({ classes: [], steps: [] })], {
      ibsim,
      env: { IBSIM_SOCKNAME: `${ibsim.sockname}_nobody` },
      timeoutMs: 15_000,
    });
    const r = await p.done;
    expect(r.timedOut).toBe(false);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/no ibsim is listening on socket "[^"]+_nobody"/);
  });

  it('serves an SA Get from one process to another, the client finding the SA through its SMLID', async () => {
    await bringUpH1S1H2();

    const marker = `ibsm-${process.pid}-${Date.now()}`;
    const server = startPreloaded(process.execPath, [SA_SERVER, JSON.stringify({ issm: true, marker })], { ibsim, simHost: 'H1', timeoutMs: 30_000 });
    childPids.push(server.pid);
    try {
      await server.waitForLine((l) => l.includes('"ready"'), 10_000);
      // The client reads its own port's SMLID (hop 0), as the diagnostic tools do ...
      const own = dr(SmpAttr.PortInfo, [], { attrMod: 1 });
      const found = await client([own], { simHost: 'H2' });
      const smLid = PortInfo.decode(drAnswer(found.results[0]!, own).data).masterSmLid;
      expect(smLid).toBe(SM_LID);
      // ... and sends an SA Get there.
      const saGet = MadHeader.encode({ baseVersion: 1, mgmtClass: MgmtClass.SubnAdm, classVersion: SA_CLASS_VERSION, method: Method.Get, tid: BigInt(++tid), attrId: SaAttr.NodeRecord }, new Uint8Array(256));
      const sa = await client([{ mad: saGet, addr: { lid: smLid, qpn: 1 } }], { simHost: 'H2', classes: [...SMP_CLASSES, [MgmtClass.SubnAdm, SA_CLASS_VERSION]] });
      const r = sa.results[0]!;
      expect(r.status).toBe(0);
      const resp = bytesOf(r);
      const hdr = MadHeader.decode(resp);
      expect(hdr.method).toBe(Method.GetResp);
      expect(hdr.tid & 0xffffffffn).toBe(MadHeader.decode(saGet).tid & 0xffffffffn);
      expect(r.addr!.lid).toBe(SM_LID);
      expect(Buffer.from(resp.subarray(SA_DATA_OFFSET, SA_DATA_OFFSET + marker.length)).toString()).toBe(marker);
      const served = await server.waitForLine((l) => l.includes('"served"'), 5_000);
      expect(JSON.parse(served).served.from.lid).toBe(H2_LID);
    } finally {
      const end = await server.stop('SIGTERM');
      expect(end.stdout).toContain('"closed":true');
      expect(end.code).toBe(0);
    }
  });

  it('exits cleanly, leaving no stale client, when a process calls process.exit() with the port open', async () => {
    const before = childPids.length;
    const out = await client([], { exitWithoutClose: true });
    expect(out.local.portNum).toBe(1);
    const attached = await ibsim.console('Attached');
    expect(attached).not.toMatch(new RegExp(`pid ${childPids[before]}\\b`));
  });

  it('leaves no stale client behind after the processes closed their ports', async () => {
    expect(childPids.length).toBeGreaterThan(0);
    const attached = await ibsim.console('Attached');
    for (const pid of childPids) expect(attached).not.toMatch(new RegExp(`pid ${pid}\\b`));
  });
});

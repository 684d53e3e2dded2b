/**
 * The simulated Subnet Management Agent: per-node and per-port SMA state, the port state machine
 * (IBA 7.2 as far as an SM can observe it), M_Key checking (14.2.4) and the Get/Set handlers of
 * every SMA attribute (14.2.5). Pure: no I/O and no timers; everything that leaves the node (traps,
 * link changes seen by the neighbour, SMInfo handed to an SM) is reported to an `SmaHost`.
 *
 * Wire access goes through the layouts of src/wire (field offsets are never restated here).
 */
import { readBig, readBits, writeBig, writeBits, type FieldSpec, type AnyLayout } from '../wire/layout.js';
import { MadStatus, Method, PhysPortState, PortState, SMP_DATA_OFFSET, SMP_DATA_SIZE, SmpAttr, SmpDr, SmpLid, MgmtClass } from '../wire/mad.js';
import {
  GUIDInfo,
  GUID_BLOCK_SIZE,
  LEDInfo,
  LFT_BLOCK_SIZE,
  LinearForwardingTable,
  MulticastForwardingTable,
  NodeDescription,
  NodeInfo,
  PKEY_BLOCK_SIZE,
  PKeyTable,
  PortCap,
  PortInfo,
  RandomForwardingTable,
  SLtoVLMappingTable,
  SwitchInfo,
  VLArbitrationTable,
  VendorDiag,
  type VLArbitrationEntry,
} from '../wire/sma.js';
import { decodeGuidInfoMod, decodeMftMod, decodePkeyBlockMod, decodeSl2vlMod, decodeVlArbMod } from '../wire/modifiers.js';
import type { NodeKind } from '../model/fabric.js';
import { SwitchForwarding } from './forwarding.js';

// ---------- SMP field access derived from the framing layouts ----------

function field(layout: AnyLayout, name: string): FieldSpec {
  const f = layout.fields[name];
  if (!f) throw new Error(`layout ${layout.name} has no field ${name}`);
  return f;
}
/** Accessors for the SMP header fields the fabric and the SMA touch on every MAD. */
export const Smp = {
  mgmtClass: field(SmpDr, 'mgmtClass'),
  classVersion: field(SmpDr, 'classVersion'),
  method: field(SmpDr, 'method'),
  direction: field(SmpDr, 'direction'),
  drStatus: field(SmpDr, 'status'),
  lidStatus: field(SmpLid, 'status'),
  hopPointer: field(SmpDr, 'hopPointer'),
  hopCount: field(SmpDr, 'hopCount'),
  tid: field(SmpDr, 'tid'),
  attrId: field(SmpDr, 'attrId'),
  attrMod: field(SmpDr, 'attrMod'),
  mkey: field(SmpDr, 'mkey'),
  drSlid: field(SmpDr, 'drSlid'),
  drDlid: field(SmpDr, 'drDlid'),
  initialPath: field(SmpDr, 'initialPath'),
  returnPath: field(SmpDr, 'returnPath'),
} as const;

export function getF(buf: Uint8Array, f: FieldSpec): number {
  return readBits(buf, f.bit, f.width);
}
export function setF(buf: Uint8Array, f: FieldSpec, v: number): void {
  writeBits(buf, f.bit, f.width, v);
}
export function getTid(buf: Uint8Array): bigint {
  return readBig(buf, Smp.tid.bit, 64);
}
export function setTid(buf: Uint8Array, tid: bigint): void {
  writeBig(buf, Smp.tid.bit, 64, tid);
}
function pathField(f: FieldSpec): { bit: number; stride: number } {
  if (f.kind !== 'array') throw new Error('path field is not an array');
  return { bit: f.elem.bit, stride: f.stride };
}
const IP = pathField(Smp.initialPath);
const RP = pathField(Smp.returnPath);
export function initialPathAt(buf: Uint8Array, i: number): number {
  return readBits(buf, IP.bit + i * IP.stride, 8);
}
export function returnPathAt(buf: Uint8Array, i: number): number {
  return readBits(buf, RP.bit + i * RP.stride, 8);
}
export function setReturnPathAt(buf: Uint8Array, i: number, port: number): void {
  writeBits(buf, RP.bit + i * RP.stride, 8, port);
}

// ---------- state ----------

export interface PortStats {
  /** Times the link of this port went down. */
  linkDowned: number;
  clientReregisters: number;
}

export interface SimPort {
  readonly node: SimNode;
  readonly num: number;
  readonly guid: bigint;
  /** The cabled neighbour (from the Fabric); the link may still be down. */
  peer: SimPort | undefined;
  /** False after `linkDown` on the fabric (cable pulled). */
  cableUp: boolean;
  /** PortPhysicalState was set to Disabled. */
  disabled: boolean;
  /** The PortInfo state. For switch external ports the port-0-only components (LID, M_Key...) stay 0. */
  info: PortInfo;
  pkeys: Uint16Array;
  /** SLtoVL tables keyed by input port (switches) or 0 (CAs); 16 VLs each. */
  sl2vl: Map<number, number[]>;
  /** VLArbitration blocks 1..4 (index 0..3), allocated on first Set. */
  vlarb: (VLArbitrationEntry[] | undefined)[];
  /** GUIDInfo entries (index 0 = port GUID). */
  guids: bigint[];
  /** Virtual time at which the M_Key lease expires (0 = not counting). */
  mkeyLeaseEnd: number;
  stats: PortStats;
}

export interface NodeStats {
  smpsHandled: number;
  smpGets: number;
  smpSets: number;
  /** SMPs that failed the M_Key check. */
  mkeyViolations: number;
}

export interface SimNode {
  readonly idx: number;
  readonly type: NodeKind;
  readonly isSwitch: boolean;
  readonly guid: bigint;
  readonly systemImageGuid: bigint;
  readonly numPorts: number;
  readonly vendorId: number;
  readonly deviceId: number;
  readonly revision: number;
  readonly partitionCap: number;
  desc: string;
  /** Indexed by port number; a switch has port 0. */
  readonly ports: (SimPort | undefined)[];
  /** Switch state (SwitchInfo + forwarding tables); undefined for CAs and routers. */
  readonly sw: SimSwitch | undefined;
  ledOn: boolean;
  stats: NodeStats;
}

export interface SimSwitch {
  fwd: SwitchForwarding;
  lifeTimeValue: number;
  portStateChange: number;
  enhancedPort0: boolean;
  partitionEnforcementCap: number;
  lidsPerPort: number;
}

/** The port whose PortInfo carries LID, M_Key and SM fields for an SMP arriving on `inPort`. */
export function managementPort(node: SimNode, inPort: number): SimPort | undefined {
  return node.ports[node.isSwitch ? 0 : inPort];
}

/** Base LID range of a port (switch: port 0). */
export function portOwnsLid(p: SimPort, lid: number): boolean {
  const base = p.info.lid;
  if (base === 0) return false;
  return lid >= base && lid < base + (1 << p.info.lmc);
}

// ---------- port state machine ----------

export interface PortChange {
  port: SimPort;
  /** Logical PortState before and after. */
  from: number;
  to: number;
}

export function linkIsUp(p: SimPort): boolean {
  return p.info.portPhysicalState === PhysPortState.LinkUp;
}

function linkShouldBeUp(p: SimPort): boolean {
  const q = p.peer;
  return q !== undefined && p.cableUp && q.cableUp && !p.disabled && !q.disabled;
}

const WIDTH_ORDER = [8, 4, 2, 16, 1]; // 12x, 8x, 4x, 2x, 1x
function highestWidth(mask: number): number {
  for (const w of WIDTH_ORDER) if (mask & w) return w;
  return 1;
}
function highestBit(mask: number): number {
  for (let b = 3; b >= 0; b--) if (mask & (1 << b)) return 1 << b;
  return 0;
}

function setLogical(p: SimPort, state: number, changes: PortChange[]): void {
  if (p.info.portState === state) return;
  changes.push({ port: p, from: p.info.portState, to: state });
  p.info.portState = state;
}

function bringUp(p: SimPort, q: SimPort, changes: PortChange[]): void {
  for (const [a, b] of [
    [p, q],
    [q, p],
  ] as const) {
    a.info.portPhysicalState = PhysPortState.LinkUp;
    a.info.linkWidthActive = highestWidth(a.info.linkWidthEnabled & b.info.linkWidthEnabled);
    a.info.linkSpeedActive = highestBit(a.info.linkSpeedEnabled & b.info.linkSpeedEnabled) || 1;
    a.info.linkSpeedExtActive = highestBit(a.info.linkSpeedExtEnabled & b.info.linkSpeedExtEnabled & 0xf);
    setLogical(a, PortState.Init, changes);
  }
}

function bringDown(p: SimPort, changes: PortChange[]): void {
  p.info.portPhysicalState = p.disabled ? PhysPortState.Disabled : PhysPortState.Polling;
  if (p.info.portState !== PortState.Down) p.stats.linkDowned++;
  setLogical(p, PortState.Down, changes);
}

/** Make a port and its neighbour consistent with cable/disable state (link training). */
export function refreshLink(p: SimPort, changes: PortChange[]): void {
  if (p.num === 0 && p.node.isSwitch) return;
  const up = linkShouldBeUp(p);
  const q = p.peer;
  if (up && q) {
    if (!linkIsUp(p) || !linkIsUp(q)) bringUp(p, q, changes);
  } else {
    if (linkIsUp(p) || p.info.portState !== PortState.Down) bringDown(p, changes);
    else p.info.portPhysicalState = p.disabled ? PhysPortState.Disabled : PhysPortState.Polling;
    if (q && (linkIsUp(q) || q.info.portState !== PortState.Down)) bringDown(q, changes);
  }
}

/** SM set PortState=Down on an up link: the link retrains and both ends come back in Init. */
function retrain(p: SimPort, changes: PortChange[]): void {
  const q = p.peer;
  if (!q || !linkIsUp(p)) return;
  // the ends pass through Down; both are observed in Init afterwards
  for (const a of [p, q]) {
    if (a.info.portState !== PortState.Init) {
      changes.push({ port: a, from: a.info.portState, to: PortState.Init });
      a.info.portState = PortState.Init;
    } else {
      changes.push({ port: a, from: PortState.Init, to: PortState.Init });
    }
  }
}

// ---------- construction ----------

export interface PortDefaults {
  widthSupported: number;
  widthActive: number;
  speedSupported: number;
  speedExtSupported: number;
}

const WIDTH_BY_NAME: Readonly<Record<string, [supported: number, active: number]>> = {
  '1x': [1, 1],
  '2x': [1 | 16, 16],
  '4x': [1 | 2, 2],
  '8x': [1 | 2 | 4, 4],
  '12x': [1 | 2 | 8, 8],
};
const SPEED_BY_NAME: Readonly<Record<string, [supported: number, ext: number]>> = {
  sdr: [1, 0],
  ddr: [3, 0],
  qdr: [7, 0],
  fdr10: [7, 0],
  fdr: [7, 1],
  edr: [7, 3],
  hdr: [7, 7],
  ndr: [7, 15],
};

/** Link capabilities of a port from the Fabric's width/speed strings (defaults 4x SDR, as ibsim). */
export function portDefaults(width: string | undefined, speed: string | undefined): PortDefaults {
  const w = WIDTH_BY_NAME[(width ?? '4x').toLowerCase()] ?? WIDTH_BY_NAME['4x']!;
  const s = SPEED_BY_NAME[(speed ?? 'sdr').toLowerCase().replace(/[^a-z0-9]/g, '')] ?? SPEED_BY_NAME['sdr']!;
  return { widthSupported: w[0], widthActive: w[1], speedSupported: s[0], speedExtSupported: s[1] };
}

export const CA_CAPABILITY_MASK =
  PortCap.IsTrapSupported |
  PortCap.IsAutomaticMigrationSupported |
  PortCap.IsSLMappingSupported |
  PortCap.IsLedInfoSupported |
  PortCap.IsSystemImageGUIDSupported |
  PortCap.IsCommunicationManagementSupported |
  PortCap.IsVendorClassSupported |
  PortCap.IsCapabilityMaskNoticeSupported |
  PortCap.IsClientReregistrationSupported;
export const SWITCH_PORT0_CAPABILITY_MASK =
  PortCap.IsTrapSupported | PortCap.IsSLMappingSupported | PortCap.IsLedInfoSupported | PortCap.IsSystemImageGUIDSupported;

export interface NewPortOptions {
  node: SimNode;
  num: number;
  guid: bigint;
  link: PortDefaults;
  /** Carries LID/M_Key/SM components (CA port, switch port 0). */
  management: boolean;
  /** Has a physical layer (every port except base switch port 0). */
  physical: boolean;
  /** The port's P_Key table (zeroed; entry 0 is set to the default full-member key here). */
  pkeys: Uint16Array;
  guidCap: number;
  capabilityMask: number;
}

/**
 * A zero PortInfo as an object literal. `PortInfo.zero()` builds its result field by field, which
 * V8 keeps in dictionary mode (about 3 KB per object); a literal has a fixed shape (a few hundred
 * bytes), which matters with 70,000 ports. The `PortInfo` type makes the compiler reject a
 * missing or unknown field, so this cannot drift from the layout.
 */
export function newPortInfo(): PortInfo {
  return {
    mkey: 0n, gidPrefix: 0n, lid: 0, masterSmLid: 0, capabilityMask: 0, diagCode: 0, mkeyLeasePeriod: 0, localPortNum: 0,
    linkWidthEnabled: 0, linkWidthSupported: 0, linkWidthActive: 0, linkSpeedSupported: 0, portState: 0, portPhysicalState: 0,
    linkDownDefaultState: 0, mkeyProtectBits: 0, lmc: 0, linkSpeedActive: 0, linkSpeedEnabled: 0, neighborMtu: 0, masterSmSl: 0,
    vlCap: 0, initType: 0, vlHighLimit: 0, vlArbitrationHighCap: 0, vlArbitrationLowCap: 0, initTypeReply: 0, mtuCap: 0,
    vlStallCount: 0, hoqLife: 0, operationalVls: 0, partitionEnforcementInbound: 0, partitionEnforcementOutbound: 0,
    filterRawInbound: 0, filterRawOutbound: 0, mkeyViolations: 0, pkeyViolations: 0, qkeyViolations: 0, guidCap: 0,
    clientReregister: 0, multicastPkeyTrapSuppressionEnabled: 0, subnetTimeout: 0, respTimeValue: 0, localPhyErrors: 0,
    overrunErrors: 0, maxCreditHint: 0, linkRoundTripLatency: 0, capabilityMask2: 0, linkSpeedExtActive: 0,
    linkSpeedExtSupported: 0, linkSpeedExtEnabled: 0,
  };
}

export function newPort(o: NewPortOptions): SimPort {
  const info = newPortInfo();
  info.gidPrefix = o.management ? 0xfe80000000000000n : 0n;
  info.capabilityMask = o.capabilityMask >>> 0;
  info.localPortNum = o.num;
  info.linkWidthSupported = o.link.widthSupported;
  info.linkWidthEnabled = o.link.widthSupported;
  info.linkWidthActive = o.link.widthActive;
  info.linkSpeedSupported = o.link.speedSupported;
  info.linkSpeedEnabled = o.link.speedSupported;
  info.linkSpeedActive = highestBit(o.link.speedSupported) || 1;
  info.linkSpeedExtSupported = o.link.speedExtSupported;
  info.linkSpeedExtEnabled = o.link.speedExtSupported;
  info.portState = o.physical ? PortState.Down : PortState.Init;
  info.portPhysicalState = o.physical ? PhysPortState.Polling : PhysPortState.LinkUp;
  info.linkDownDefaultState = 2; // Polling
  info.neighborMtu = 4; // 2048
  info.mtuCap = 5; // 4096
  info.vlCap = 4; // VL0-7
  info.operationalVls = 1;
  info.vlArbitrationHighCap = 8;
  info.vlArbitrationLowCap = 8;
  info.vlHighLimit = 0;
  info.hoqLife = 31;
  info.vlStallCount = 7;
  info.guidCap = o.guidCap;
  info.respTimeValue = 8;
  info.localPhyErrors = 8;
  info.overrunErrors = 8;
  if (o.link.speedExtSupported) info.capabilityMask = (info.capabilityMask | PortCap.IsExtendedSpeedsSupported) >>> 0;
  const pkeys = o.pkeys;
  if (pkeys.length > 0) pkeys[0] = 0xffff;
  const guids = new Array<bigint>(o.guidCap).fill(0n);
  if (o.guidCap > 0) guids[0] = o.guid;
  return {
    node: o.node,
    num: o.num,
    guid: o.guid,
    peer: undefined,
    cableUp: true,
    disabled: false,
    info,
    pkeys,
    sl2vl: new Map(),
    vlarb: [undefined, undefined, undefined, undefined],
    guids,
    mkeyLeaseEnd: 0,
    stats: { linkDowned: 0, clientReregisters: 0 },
  };
}

// ---------- the SMA ----------

export interface SmaHost {
  now(): number;
  /** An SM endpoint attached at (node, management port) takes SMInfo. */
  hasSm(node: SimNode, port: number): boolean;
  /** Port states changed; `setBy` is the node whose SMA applied a Set (it raises no trap of its own). */
  portsChanged(changes: PortChange[], setBy: SimNode | undefined): void;
  /** An SMP failed the M_Key check at `port` (the management port): raise trap 256. */
  mkeyViolation(node: SimNode, port: SimPort, req: Uint8Array, arrivalPort: number): void;
  /** TrapRepress for a trap this node sent. */
  trapRepress(node: SimNode, tid: bigint): void;
  /** ClientReregister was set on a CA port. */
  clientReregister?(port: SimPort): void;
}

export type SmaResult =
  | { kind: 'respond'; mad: Uint8Array }
  /** Hand the request to the SM attached at the management port (SMInfo). */
  | { kind: 'sm'; port: number }
  | { kind: 'none'; reason: string };

class AttrError {
  constructor(readonly status: number) {}
}
const unsupported = (): never => {
  throw new AttrError(MadStatus.UnsupportedMethodAttr);
};
const invalid = (): never => {
  throw new AttrError(MadStatus.InvalidField);
};

/** Build a GetResp from a request: method, D bit (DR), status. The data area is left as is. */
export function makeResponse(req: Uint8Array, status: number): Uint8Array {
  const r = req.slice(0, Math.max(req.length, 256));
  setF(r, Smp.method, Method.GetResp);
  if (getF(r, Smp.mgmtClass) === MgmtClass.SubnDirected) {
    setF(r, Smp.direction, 1);
    setF(r, Smp.drStatus, status & 0x7fff);
  } else {
    setF(r, Smp.lidStatus, status);
  }
  return r;
}

function writeData(resp: Uint8Array, layout: AnyLayout, value: object): void {
  resp.fill(0, SMP_DATA_OFFSET, SMP_DATA_OFFSET + SMP_DATA_SIZE);
  layout.encode(value, resp, SMP_DATA_OFFSET);
}

/** M_Key check (14.2.4). Returns true when the SMP may proceed; `visible` says if PortInfo:M_Key may be shown. */
function checkMkey(host: SmaHost, node: SimNode, mp: SimPort, req: Uint8Array, method: number): { ok: boolean; keyMatches: boolean } {
  const pi = mp.info;
  const now = host.now();
  if (mp.mkeyLeaseEnd && now >= mp.mkeyLeaseEnd) {
    mp.mkeyLeaseEnd = 0;
    pi.mkeyProtectBits = 0;
  }
  const key = readBig(req, Smp.mkey.bit, 64);
  const keyMatches = pi.mkey === 0n || key === pi.mkey;
  if (keyMatches) {
    if (method === Method.Get || method === Method.Set || method === Method.TrapRepress) mp.mkeyLeaseEnd = 0;
    return { ok: true, keyMatches };
  }
  const violation = method === Method.Set || method === Method.TrapRepress || (method === Method.Get && pi.mkeyProtectBits >= 2);
  if (!violation) return { ok: true, keyMatches };
  if (pi.mkeyViolations < 0xffff) pi.mkeyViolations++;
  if (!mp.mkeyLeaseEnd && pi.mkeyLeasePeriod) mp.mkeyLeaseEnd = now + pi.mkeyLeasePeriod * 1000;
  node.stats.mkeyViolations++;
  return { ok: false, keyMatches };
}

/**
 * Process an SMP (class 0x01 or 0x81) that reached this node's SMA on `inPort` (for a switch the
 * physical port it came in on, 0 when sent by an agent on port 0). For DR SMPs the hop pointer
 * and return path are already updated by the fabric. The request buffer is not modified.
 */
export function processSmp(host: SmaHost, node: SimNode, inPort: number, req: Uint8Array): SmaResult {
  const method = getF(req, Smp.method);
  if (method & 0x80) return { kind: 'none', reason: 'response method' };
  if (method === Method.Trap) return { kind: 'none', reason: 'trap at SMA' };
  const mp = managementPort(node, inPort);
  if (!mp) return { kind: 'none', reason: 'no management port' };
  node.stats.smpsHandled++;
  if (getF(req, Smp.classVersion) !== 1) return { kind: 'respond', mad: makeResponse(req, MadStatus.BadVersion) };
  const mk = checkMkey(host, node, mp, req, method);
  if (!mk.ok) {
    host.mkeyViolation(node, mp, req, inPort);
    return { kind: 'none', reason: 'M_Key violation' };
  }
  if (method === Method.TrapRepress) {
    host.trapRepress(node, getTid(req));
    return { kind: 'none', reason: 'trap repress' };
  }
  if (method !== Method.Get && method !== Method.Set) return { kind: 'respond', mad: makeResponse(req, MadStatus.UnsupportedMethod) };
  const attr = getF(req, Smp.attrId);
  if (attr === SmpAttr.SMInfo) {
    if (host.hasSm(node, mp.num)) return { kind: 'sm', port: mp.num };
    return { kind: 'respond', mad: makeResponse(req, MadStatus.UnsupportedMethodAttr) };
  }
  const resp = makeResponse(req, 0);
  const mod = getF(req, Smp.attrMod);
  const set = method === Method.Set;
  if (set) node.stats.smpSets++;
  else node.stats.smpGets++;
  try {
    const ctx: AttrCtx = { host, node, inPort, mp, mod, set, req, resp, keyMatches: mk.keyMatches };
    const h = HANDLERS[attr];
    if (!h) unsupported();
    else h(ctx);
    return { kind: 'respond', mad: resp };
  } catch (e) {
    if (e instanceof AttrError) return { kind: 'respond', mad: makeResponse(req, e.status) };
    throw e;
  }
}

interface AttrCtx {
  host: SmaHost;
  node: SimNode;
  inPort: number;
  mp: SimPort;
  mod: number;
  set: boolean;
  req: Uint8Array;
  resp: Uint8Array;
  keyMatches: boolean;
}

function reqData<V>(c: AttrCtx, layout: { decode(b: Uint8Array, o?: number): V }): V {
  return layout.decode(c.req, SMP_DATA_OFFSET);
}

/** A port by number for attributes whose modifier selects a port (CA: 0 = the arrival port). */
function portByMod(c: AttrCtx, portNum: number, caUsesArrival: boolean): SimPort {
  const n = c.node;
  if (!n.isSwitch && caUsesArrival) return n.ports[c.inPort] ?? invalid();
  if (!n.isSwitch && portNum === 0) portNum = c.inPort;
  if (portNum > n.numPorts) invalid();
  return n.ports[portNum] ?? invalid();
}

const HANDLERS: Readonly<Record<number, (c: AttrCtx) => void>> = {
  [SmpAttr.NodeDescription]: (c) => {
    if (c.set) unsupported();
    writeData(c.resp, NodeDescription, { description: truncateUtf8(c.node.desc, 64) });
  },
  [SmpAttr.NodeInfo]: (c) => {
    if (c.set) unsupported();
    const n = c.node;
    const portGuid = n.isSwitch ? (n.ports[0]?.guid ?? n.guid) : (n.ports[c.inPort]?.guid ?? 0n);
    writeData(c.resp, NodeInfo, {
      baseVersion: 1,
      classVersion: 1,
      nodeType: n.type,
      numPorts: n.numPorts,
      systemImageGuid: n.systemImageGuid,
      nodeGuid: n.guid,
      portGuid,
      partitionCap: n.partitionCap,
      deviceId: n.deviceId,
      revision: n.revision,
      localPortNum: c.inPort,
      vendorId: n.vendorId,
    });
  },
  [SmpAttr.SwitchInfo]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (c.set) {
      const v = reqData(c, SwitchInfo);
      if (v.linearFdbTop >= sw.fwd.caps.linearFdbCap && sw.fwd.caps.linearFdbCap > 0) invalid();
      sw.fwd.linearFdbTop = v.linearFdbTop;
      sw.fwd.defaultPort = v.defaultPort;
      sw.fwd.defaultMulticastPrimaryPort = v.defaultMulticastPrimaryPort;
      sw.fwd.defaultMulticastNotPrimaryPort = v.defaultMulticastNotPrimaryPort;
      sw.lifeTimeValue = v.lifeTimeValue;
      if (v.portStateChange) sw.portStateChange = 0; // write 1 to clear
      sw.fwd.multicastFdbTop = v.multicastFdbTop;
    }
    writeData(c.resp, SwitchInfo, switchInfoValue(c.node));
  },
  [SmpAttr.GUIDInfo]: (c) => {
    const p = c.mp;
    const { block } = decodeGuidInfoMod(c.mod);
    if (c.mod > 0xff || block * GUID_BLOCK_SIZE >= p.guids.length) invalid();
    if (c.set) {
      const v = reqData(c, GUIDInfo);
      for (let i = 0; i < GUID_BLOCK_SIZE; i++) {
        const idx = block * GUID_BLOCK_SIZE + i;
        if (idx === 0 || idx >= p.guids.length) continue; // GUID 0 is the read-only port GUID
        p.guids[idx] = v.guids[i]!;
      }
    }
    const guids = Array.from({ length: GUID_BLOCK_SIZE }, (_, i) => p.guids[block * GUID_BLOCK_SIZE + i] ?? 0n);
    writeData(c.resp, GUIDInfo, { guids });
  },
  [SmpAttr.PortInfo]: (c) => {
    if (c.mod > 0xff) invalid();
    const p = portByMod(c, c.mod, false);
    if (c.set) setPortInfo(c, p);
    writeData(c.resp, PortInfo, portInfoValue(p, c.inPort, c.keyMatches || c.mp.info.mkeyProtectBits !== 1));
  },
  [SmpAttr.PKeyTable]: (c) => {
    const { block, port } = decodePkeyBlockMod(c.mod);
    const p = c.node.isSwitch ? portByMod(c, port, false) : (c.node.ports[c.inPort] ?? invalid());
    if (block * PKEY_BLOCK_SIZE >= p.pkeys.length) invalid();
    if (c.set) {
      const v = reqData(c, PKeyTable);
      for (let i = 0; i < PKEY_BLOCK_SIZE && block * PKEY_BLOCK_SIZE + i < p.pkeys.length; i++) p.pkeys[block * PKEY_BLOCK_SIZE + i] = v.pkeys[i]!;
    }
    const pkeys = Array.from({ length: PKEY_BLOCK_SIZE }, (_, i) => p.pkeys[block * PKEY_BLOCK_SIZE + i] ?? 0);
    writeData(c.resp, PKeyTable, { pkeys });
  },
  [SmpAttr.SLtoVLMappingTable]: (c) => {
    const m = decodeSl2vlMod(c.mod);
    let out: SimPort;
    let inPorts: number[];
    if (c.node.isSwitch) {
      if (m.outPort > c.node.numPorts || m.inPort > c.node.numPorts) invalid();
      out = c.node.ports[m.outPort] ?? invalid();
      inPorts = [m.inPort];
      if (c.set && m.allInputPorts) inPorts = range(c.node.numPorts + 1);
    } else {
      out = c.node.ports[c.inPort] ?? invalid();
      inPorts = [0];
    }
    if (c.set) {
      const v = reqData(c, SLtoVLMappingTable);
      const outs = c.node.isSwitch && m.allOutputPorts ? range(c.node.numPorts + 1).map((i) => c.node.ports[i]).filter(isPort) : [out];
      for (const o of outs) for (const ip of inPorts) o.sl2vl.set(ip, v.vls.slice());
    }
    writeData(c.resp, SLtoVLMappingTable, { vls: out.sl2vl.get(inPorts[0]!) ?? new Array<number>(16).fill(0) });
  },
  [SmpAttr.VLArbitrationTable]: (c) => {
    const { port, block } = decodeVlArbMod(c.mod);
    const p = c.node.isSwitch ? portByMod(c, port, false) : (c.node.ports[c.inPort] ?? invalid());
    if (block < 1 || block > 4) invalid();
    const cap = block <= 2 ? p.info.vlArbitrationLowCap : p.info.vlArbitrationHighCap;
    if ((block - 1) % 2 === 1 ? cap <= 32 : cap === 0) invalid();
    if (c.set) p.vlarb[block - 1] = reqData(c, VLArbitrationTable).entries;
    writeData(c.resp, VLArbitrationTable, { entries: p.vlarb[block - 1] ?? [] });
  },
  [SmpAttr.LinearForwardingTable]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (sw.fwd.caps.linearFdbCap === 0) unsupported();
    if (c.mod > 0xffff || c.mod * LFT_BLOCK_SIZE >= sw.fwd.caps.linearFdbCap) invalid();
    if (c.set) sw.fwd.setLftBlock(c.mod, reqData(c, LinearForwardingTable).ports);
    writeData(c.resp, LinearForwardingTable, { ports: sw.fwd.getLftBlock(c.mod) ?? invalid() });
  },
  [SmpAttr.RandomForwardingTable]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (sw.fwd.caps.randomFdbCap === 0) unsupported();
    if (c.mod >= sw.fwd.rftBlockCount) invalid();
    if (c.set) sw.fwd.setRftBlock(c.mod, reqData(c, RandomForwardingTable).entries);
    writeData(c.resp, RandomForwardingTable, { entries: sw.fwd.getRftBlock(c.mod) ?? invalid() });
  },
  [SmpAttr.MulticastForwardingTable]: (c) => {
    const sw = c.node.sw ?? unsupported();
    if (sw.fwd.caps.multicastFdbCap === 0) unsupported();
    const { block, position } = decodeMftMod(c.mod);
    if ((c.mod & 0x0ffffe00) !== 0 || block >= sw.fwd.mftBlockCount || position >= sw.fwd.mftPositionCount) invalid();
    if (c.set) sw.fwd.setMftBlock(block, position, reqData(c, MulticastForwardingTable).portMasks);
    writeData(c.resp, MulticastForwardingTable, { portMasks: sw.fwd.getMftBlock(block, position) ?? invalid() });
  },
  [SmpAttr.LEDInfo]: (c) => {
    if (c.set) c.node.ledOn = reqData(c, LEDInfo).ledMask === 1;
    writeData(c.resp, LEDInfo, { ledMask: c.node.ledOn ? 1 : 0 });
  },
  [SmpAttr.VendorDiag]: (c) => {
    if (c.set) unsupported();
    writeData(c.resp, VendorDiag, { nextIndex: 0 });
  },
};

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
function isPort(p: SimPort | undefined): p is SimPort {
  return p !== undefined;
}
function truncateUtf8(s: string, max: number): string {
  const enc = new TextEncoder().encode(s);
  if (enc.length <= max) return s;
  let cut = max;
  while (cut > 0 && (enc[cut]! & 0xc0) === 0x80) cut--;
  return new TextDecoder().decode(enc.subarray(0, cut));
}

export function switchInfoValue(n: SimNode): SwitchInfo {
  const sw = n.sw!;
  return {
    linearFdbCap: sw.fwd.caps.linearFdbCap,
    randomFdbCap: sw.fwd.caps.randomFdbCap,
    multicastFdbCap: sw.fwd.caps.multicastFdbCap,
    linearFdbTop: sw.fwd.linearFdbTop,
    defaultPort: sw.fwd.defaultPort,
    defaultMulticastPrimaryPort: sw.fwd.defaultMulticastPrimaryPort,
    defaultMulticastNotPrimaryPort: sw.fwd.defaultMulticastNotPrimaryPort,
    lifeTimeValue: sw.lifeTimeValue,
    portStateChange: sw.portStateChange,
    optimizedSlToVlMappingProgramming: 0,
    lidsPerPort: sw.lidsPerPort,
    partitionEnforcementCap: sw.partitionEnforcementCap,
    inboundEnforcementCap: 1,
    outboundEnforcementCap: 1,
    filterRawInboundCap: 0,
    filterRawOutboundCap: 0,
    enhancedPort0: sw.enhancedPort0 ? 1 : 0,
    multicastFdbTop: sw.fwd.multicastFdbTop,
  };
}

/** The PortInfo a Get returns: LocalPortNum is the arrival port; M_Key hidden when protection says so. */
export function portInfoValue(p: SimPort, inPort: number, mkeyVisible: boolean): PortInfo {
  const mp = managementPort(p.node, p.num);
  const v = { ...p.info, localPortNum: inPort };
  if (p.node.isSwitch && p.num !== 0 && mp) {
    // switch external ports report no LID/M_Key of their own; the CapabilityMask is port 0's
    v.capabilityMask = 0;
  }
  if (!mkeyVisible) v.mkey = 0n;
  return v;
}

function setPortInfo(c: AttrCtx, p: SimPort): void {
  const v = reqData(c, PortInfo);
  const cur = p.info;
  const mgmt = !p.node.isSwitch || p.num === 0;
  const physical = !(p.node.isSwitch && p.num === 0 && !p.node.sw?.enhancedPort0);
  // ---- validate everything first: an invalid Set changes nothing ----
  if (mgmt && v.lid >= 0xc000) invalid();
  if (![0, 1, 2, 3, 4].includes(v.portState)) invalid();
  if (v.portState === PortState.Init && cur.portState !== PortState.Init) invalid();
  if (v.portState === PortState.Armed && cur.portState !== PortState.Armed) {
    if (cur.portState !== PortState.Init || !linkIsUp(p)) invalid();
  }
  if (v.portState === PortState.Active && cur.portState !== PortState.Active) {
    if (cur.portState !== PortState.Armed) invalid();
    const q = p.peer;
    if (physical && q && q.info.portState < PortState.Armed) invalid();
  }
  if (![0, 2, 3].includes(v.portPhysicalState)) invalid();
  if (v.linkDownDefaultState > 2) invalid();
  const widthSet = v.linkWidthEnabled === 0xff ? cur.linkWidthSupported : v.linkWidthEnabled;
  if (widthSet & ~cur.linkWidthSupported) invalid();
  const speedSet = v.linkSpeedEnabled === 0xf ? cur.linkSpeedSupported : v.linkSpeedEnabled;
  if (speedSet & ~cur.linkSpeedSupported) invalid();
  if (v.neighborMtu > cur.mtuCap) invalid();
  if (v.operationalVls > cur.vlCap) invalid();
  // ---- apply ----
  if (mgmt) {
    cur.mkey = v.mkey;
    cur.gidPrefix = v.gidPrefix;
    cur.lid = v.lid;
    cur.masterSmLid = v.masterSmLid;
    cur.mkeyLeasePeriod = v.mkeyLeasePeriod;
    cur.mkeyProtectBits = v.mkeyProtectBits;
    cur.lmc = v.lmc;
    cur.masterSmSl = v.masterSmSl;
    cur.subnetTimeout = v.subnetTimeout;
    cur.mkeyViolations = v.mkeyViolations;
    if (v.clientReregister && !p.node.isSwitch) {
      p.stats.clientReregisters++;
      c.host.clientReregister?.(p);
    }
  }
  if (widthSet) cur.linkWidthEnabled = widthSet;
  if (speedSet) cur.linkSpeedEnabled = speedSet;
  if (v.linkSpeedExtEnabled) cur.linkSpeedExtEnabled = v.linkSpeedExtEnabled === 0x1f ? cur.linkSpeedExtSupported : v.linkSpeedExtEnabled;
  if (v.linkDownDefaultState) cur.linkDownDefaultState = v.linkDownDefaultState;
  if (v.neighborMtu) cur.neighborMtu = v.neighborMtu;
  if (v.operationalVls) cur.operationalVls = v.operationalVls;
  cur.vlHighLimit = v.vlHighLimit;
  cur.hoqLife = v.hoqLife;
  cur.vlStallCount = v.vlStallCount;
  cur.initType = v.initType;
  cur.partitionEnforcementInbound = v.partitionEnforcementInbound;
  cur.partitionEnforcementOutbound = v.partitionEnforcementOutbound;
  cur.filterRawInbound = v.filterRawInbound;
  cur.filterRawOutbound = v.filterRawOutbound;
  cur.pkeyViolations = v.pkeyViolations;
  cur.qkeyViolations = v.qkeyViolations;
  cur.localPhyErrors = v.localPhyErrors;
  cur.overrunErrors = v.overrunErrors;
  cur.multicastPkeyTrapSuppressionEnabled = v.multicastPkeyTrapSuppressionEnabled;

  const changes: PortChange[] = [];
  if (physical && v.portPhysicalState === PhysPortState.Disabled && !p.disabled) {
    p.disabled = true;
    refreshLink(p, changes);
  } else if (physical && v.portPhysicalState === PhysPortState.Polling && p.disabled) {
    p.disabled = false;
    refreshLink(p, changes);
  }
  if (v.portState === PortState.Down) {
    if (physical) retrain(p, changes);
    else setLogical(p, PortState.Init, changes);
  } else if (v.portState === PortState.Armed || v.portState === PortState.Active) {
    setLogical(p, v.portState, changes);
  }
  if (changes.length) c.host.portsChanged(changes, c.node);
}

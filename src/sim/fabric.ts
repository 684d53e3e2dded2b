/**
 * The in-process simulated fabric. Every node runs an SMA (src/sim/sma.ts); SMPs travel by
 * directed route (IBA 14.2.2: hop pointer, initial and return paths, D bit) or by LID through the
 * switches' forwarding tables, GSI MADs by LID hop by hop (every port on the path ACTIVE).
 * Endpoints (`attach`) are the SM, SA and client processes; they see a `Transport`.
 *
 * Time: each MAD is walked synchronously to its destination (O(1) per hop) and its arrival is
 * scheduled on the injected clock after `hops x hopLatencyMs` (plus injected delays), so the
 * event loop is never starved and virtual-clock tests control everything. The fabric keeps one
 * clock timer for its own event heap (./scheduler.ts).
 */
import type { Clock } from '../util/clock.js';
import { readBig } from '../wire/layout.js';
import { isSwitch as fabricIsSwitch, type Fabric, type FabricNode } from '../model/fabric.js';
import { MgmtClass, Method, NodeType, PERMISSIVE_LID, PortState, SMP_DATA_OFFSET, SmpAttr, SmpLid, isResponse } from '../wire/mad.js';
import { PortCap, type PortInfo, type SwitchInfo } from '../wire/sma.js';
import { encodeNotice, NoticeType, type TrapDetails } from '../wire/notice.js';
import { TransportError, type LocalPortInfo, type MadAddress } from '../transport/types.js';
import { SwitchForwarding, isMulticastLid, MAX_LINEAR_FDB_CAP } from './forwarding.js';
import {
  CA_CAPABILITY_MASK,
  SWITCH_PORT0_CAPABILITY_MASK,
  Smp,
  getF,
  getTid,
  setTid,
  initialPathAt,
  linkIsUp,
  managementPort,
  newPort,
  portDefaults,
  portInfoValue,
  portOwnsLid,
  processSmp,
  refreshLink,
  returnPathAt,
  setF,
  setReturnPathAt,
  switchInfoValue,
  type PortChange,
  type SimNode,
  type SimPort,
  type SmaHost,
} from './sma.js';
import { SimEndpoint, type AttachOptions, type EndpointHost } from './endpoint.js';
import { SimFaults, type FaultConfig } from './faults.js';
import { Scheduler, type SimEvent } from './scheduler.js';
import { DropError, newTransit, portKey, type Packet, type Target, type Transit } from './packet.js';

export { SimEndpoint, type AttachOptions } from './endpoint.js';
export type { SimNode, SimPort } from './sma.js';
export type { FaultConfig } from './faults.js';

export interface SimFabricOptions {
  clock: Clock;
  /** Seed of the fault-injection RNG (default 1). */
  seed?: number;
  /** Virtual latency per link crossing (ms); default 0.001 (1 µs). 0 delivers on the next
   * deferred turn (`clock.defer`: setImmediate on a RealClock) instead of a timer: the fast choice with a RealClock. */
  hopLatencyMs?: number;
  /** What happens to a MAD whose path is bad: silently dropped (a real fabric), or returned to
   * the sending endpoint with status 110 (ETIMEDOUT) as ibsim does. Default 'drop'. */
  badPath?: 'drop' | 'status';
  /** SwitchInfo.LinearFDBCap (default 49152); 0 with randomFdbCap > 0 makes RFT switches. */
  linearFdbCap?: number;
  randomFdbCap?: number;
  /** SwitchInfo.MulticastFDBCap (default 1024). */
  multicastFdbCap?: number;
  /** SwitchInfo.EnhancedPort0 (default false). */
  enhancedPort0?: boolean;
  /** NodeInfo.PartitionCap and switch PartitionEnforcementCap (default 32). */
  partitionCap?: number;
  /** Trap resend interval (ms); default 4.096 µs x 2^SubnetTimeout, at least 1 ms. */
  trapRepeatMs?: number;
  /** Sends of one trap without a TrapRepress (default 4). */
  trapMaxSends?: number;
  faults?: FaultConfig;
}

/** A node by index, node/port GUID, or NodeDescription. */
export type NodeRef = number | bigint | string;

export interface FabricStats {
  injected: number;
  delivered: number;
  dropped: number;
  /** Link crossings of all MADs. */
  hops: number;
  smpsHandled: number;
  trapsSent: number;
  duplicated: number;
  dropReasons: Record<string, number>;
}

export class SimFabricError extends Error {
  override readonly name = 'SimFabricError';
}

interface PendingTrap {
  tid: bigint;
  sends: number;
  timer: SimEvent | undefined;
  mad: Uint8Array;
  from: SimPort;
}

const ETIMEDOUT = 110;
const MAX_LID_HOPS = 64;

export class SimFabric implements SmaHost, EndpointHost {
  readonly nodes: SimNode[];
  readonly stats: FabricStats = { injected: 0, delivered: 0, dropped: 0, hops: 0, smpsHandled: 0, trapsSent: 0, duplicated: 0, dropReasons: {} };
  private readonly clock: Clock;
  private readonly opts: Required<Omit<SimFabricOptions, 'clock' | 'faults' | 'trapRepeatMs'>> & { trapRepeatMs?: number };
  private readonly faults: SimFaults;
  private readonly byGuid = new Map<bigint, SimNode>();
  private readonly byPortGuid = new Map<bigint, SimPort>();
  private readonly byDesc = new Map<string, SimNode>();
  private readonly endpoints = new Map<number, SimEndpoint[]>();
  private readonly caNames = new Map<number, string>();
  private readonly forcedSm = new Set<number>();
  private nextEndpointId = 1;
  private readonly scheduler: Scheduler;
  private readonly traps = new Map<number, Map<bigint, PendingTrap>>();
  private nextTrapTid = 1n;
  private closed = false;

  constructor(fabric: Fabric, opts: SimFabricOptions) {
    this.clock = opts.clock;
    this.opts = {
      seed: opts.seed ?? 1,
      hopLatencyMs: opts.hopLatencyMs ?? 0.001,
      badPath: opts.badPath ?? 'drop',
      linearFdbCap: Math.min(opts.linearFdbCap ?? 49152, MAX_LINEAR_FDB_CAP),
      randomFdbCap: opts.randomFdbCap ?? 0,
      multicastFdbCap: opts.multicastFdbCap ?? 1024,
      enhancedPort0: opts.enhancedPort0 ?? false,
      partitionCap: opts.partitionCap ?? 32,
      trapMaxSends: opts.trapMaxSends ?? 4,
      ...(opts.trapRepeatMs !== undefined ? { trapRepeatMs: opts.trapRepeatMs } : {}),
    };
    this.faults = new SimFaults(this.opts.seed, opts.faults);
    this.scheduler = new Scheduler(this.clock, this.opts.hopLatencyMs === 0);
    this.nodes = fabric.nodes.map((fn, idx) => this.buildNode(fn, idx));
    // cable the links, then train them (a cold fabric: every cabled port comes up in INIT)
    fabric.nodes.forEach((fn, i) => {
      fn.ports.forEach((fp, pn) => {
        if (!fp?.peer) return;
        const a = this.nodes[i]!.ports[pn];
        const b = this.nodes[fp.peer.node]?.ports[fp.peer.port];
        if (!a || !b) throw new SimFabricError(`node ${i} (${fn.desc}) port ${pn}: peer ${fp.peer.node}/${fp.peer.port} does not exist`);
        a.peer = b;
      });
    });
    const ignored: PortChange[] = [];
    for (const n of this.nodes) for (const p of n.ports) if (p?.peer) refreshLink(p, ignored);
  }

  private buildNode(fn: FabricNode, idx: number): SimNode {
    const sw = fabricIsSwitch(fn);
    const o = this.opts;
    const node: SimNode = {
      idx,
      type: fn.type,
      isSwitch: sw,
      guid: fn.guid,
      systemImageGuid: fn.systemImageGuid,
      numPorts: fn.numPorts,
      vendorId: fn.vendorId,
      deviceId: fn.deviceId,
      revision: 1,
      partitionCap: o.partitionCap,
      desc: fn.desc,
      ports: [],
      sw: sw
        ? {
            fwd: new SwitchForwarding({ linearFdbCap: o.linearFdbCap, randomFdbCap: o.randomFdbCap, multicastFdbCap: o.multicastFdbCap, numPorts: fn.numPorts }),
            lifeTimeValue: 18,
            portStateChange: 0,
            enhancedPort0: o.enhancedPort0,
            partitionEnforcementCap: o.partitionCap,
            lidsPerPort: 0,
          }
        : undefined,
      ledOn: false,
      stats: { smpsHandled: 0, smpGets: 0, smpSets: 0, mkeyViolations: 0 },
    };
    const ports = node.ports as (SimPort | undefined)[];
    const first = sw ? 0 : 1;
    // one buffer for all P_Key tables of the node (views per port): fewer allocations at scale
    const pkeyStore = new Uint16Array(o.partitionCap * (fn.numPorts + 1));
    for (let pn = first; pn <= fn.numPorts; pn++) {
      const fp = fn.ports[pn];
      if (!fp && !sw) continue;
      const mgmt = !sw || pn === 0;
      const guid = fp?.guid ?? fn.guid;
      const p = newPort({
        node,
        num: pn,
        guid,
        link: portDefaults(fp?.width, fp?.speed),
        management: mgmt,
        physical: !(sw && pn === 0),
        pkeys: pkeyStore.subarray(pn * o.partitionCap, (pn + 1) * o.partitionCap),
        guidCap: mgmt ? (sw ? 1 : 8) : 0,
        capabilityMask: mgmt ? (sw ? SWITCH_PORT0_CAPABILITY_MASK : CA_CAPABILITY_MASK) : 0,
      });
      ports[pn] = p;
      if (mgmt && !this.byPortGuid.has(guid)) this.byPortGuid.set(guid, p);
    }
    if (!this.byGuid.has(fn.guid)) this.byGuid.set(fn.guid, node);
    if (!this.byDesc.has(fn.desc)) this.byDesc.set(fn.desc, node);
    return node;
  }

  // =====================================================================================
  // inspection
  // =====================================================================================

  /** Find a node by index, node GUID, port GUID or NodeDescription (a "0x..." string is a GUID). */
  findNode(ref: NodeRef): SimNode | undefined {
    if (typeof ref === 'number') return this.nodes[ref];
    if (typeof ref === 'bigint') return this.byGuid.get(ref) ?? this.byPortGuid.get(ref)?.node;
    const d = this.byDesc.get(ref);
    if (d) return d;
    if (/^0x[0-9a-f]+$/i.test(ref)) return this.findNode(BigInt(ref));
    return undefined;
  }

  /** The node's live SMA state (throws when not found). */
  node(ref: NodeRef): SimNode {
    const n = this.findNode(ref);
    if (!n) throw new SimFabricError(`no node ${typeof ref === 'bigint' ? '0x' + ref.toString(16) : String(ref)} in the simulated fabric`);
    return n;
  }

  port(ref: NodeRef, port: number): SimPort {
    const n = this.node(ref);
    const p = n.ports[port];
    if (!p) throw new SimFabricError(`node ${n.idx} (${n.desc}) has no port ${port}`);
    return p;
  }

  /** PortInfo of a port as a Get would return it (LocalPortNum = the port itself). */
  portInfo(ref: NodeRef, port: number): PortInfo {
    const p = this.port(ref, port);
    this.expireLease(p);
    return portInfoValue(p, port, true);
  }

  switchInfo(ref: NodeRef): SwitchInfo {
    const n = this.node(ref);
    if (!n.sw) throw new SimFabricError(`node ${n.idx} (${n.desc}) is not a switch`);
    return switchInfoValue(n);
  }

  /** A copy of a switch's LFT (LinearFDBCap entries, 0xff = unprogrammed). */
  lft(ref: NodeRef): Uint8Array {
    const n = this.node(ref);
    if (!n.sw) throw new SimFabricError(`node ${n.idx} (${n.desc}) is not a switch`);
    return n.sw.fwd.lftSnapshot();
  }

  pkeys(ref: NodeRef, port: number): number[] {
    return Array.from(this.port(ref, port).pkeys);
  }

  /** The port a LID belongs to (linear scan: for tests, not for the MAD path). */
  portByLid(lid: number): SimPort | undefined {
    for (const n of this.nodes) {
      for (const p of n.ports) if (p && managementPort(n, p.num) === p && portOwnsLid(p, lid)) return p;
    }
    return undefined;
  }

  private expireLease(p: SimPort): void {
    if (p.mkeyLeaseEnd && this.clock.now() >= p.mkeyLeaseEnd) {
      p.mkeyLeaseEnd = 0;
      p.info.mkeyProtectBits = 0;
    }
  }

  // =====================================================================================
  // topology events and faults
  // =====================================================================================

  /** Pull the cable of (node, port): both ends go DOWN; switches on the link raise trap 128. */
  linkDown(ref: NodeRef, port: number): void {
    this.setCable(ref, port, false);
  }

  /** Reconnect the cable: both ends train to INIT; switches raise trap 128. */
  linkUp(ref: NodeRef, port: number): void {
    this.setCable(ref, port, true);
  }

  private setCable(ref: NodeRef, port: number, up: boolean): void {
    const p = this.port(ref, port);
    if (!p.peer) throw new SimFabricError(`node ${p.node.idx} (${p.node.desc}) port ${port} has no cable`);
    p.cableUp = up;
    p.peer.cableUp = up;
    const changes: PortChange[] = [];
    refreshLink(p, changes);
    if (changes.length) this.portsChanged(changes, undefined);
  }

  /** Replace the global fault configuration. */
  setFaults(cfg: FaultConfig): void {
    this.faults.setGlobal(cfg);
  }

  /** Faults on one link (both directions); undefined clears them. */
  setLinkFaults(ref: NodeRef, port: number, cfg: FaultConfig | undefined): void {
    const p = this.port(ref, port);
    for (const q of p.peer ? [p, p.peer] : [p]) {
      this.faults.setLink(portKey(q.node.idx, q.num), cfg);
    }
  }

  /** Raise a port trap (129 link integrity, 130 buffer overrun, 131 flow control watchdog) from a switch or CA port. */
  raiseTrap(ref: NodeRef, port: number, trap: 129 | 130 | 131): void {
    const p = this.port(ref, port);
    const mp = managementPort(p.node, p.num);
    if (!mp) throw new SimFabricError(`node ${p.node.idx} has no management port for port ${port}`);
    this.sendTrap(p.node, mp, NoticeType.Urgent, { trap, value: { lid: mp.info.lid, portNum: port } });
  }

  /** Stop all timers and detach every endpoint. */
  close(): void {
    this.closed = true;
    this.scheduler.close();
    const all = [...this.endpoints.values()].flat();
    for (const ep of all) void ep.close();
  }

  /** Number of scheduled fabric events (MADs in flight, trap repeats). */
  get pendingEvents(): number {
    return this.scheduler.pending;
  }

  // =====================================================================================
  // endpoints
  // =====================================================================================

  /** Attach a process at a CA port (default: its first cabled port) or a switch's port 0. */
  attach(ref: NodeRef, port?: number, opts: AttachOptions = {}): SimEndpoint {
    if (this.closed) throw new SimFabricError('the simulated fabric is closed');
    const n = this.node(ref);
    let pn = port;
    if (pn === undefined) {
      if (n.isSwitch) pn = 0;
      else pn = n.ports.findIndex((p) => p?.peer !== undefined);
      if (pn < 0) pn = n.ports.findIndex((p) => p !== undefined);
    }
    if (n.isSwitch && pn !== 0) throw new SimFabricError(`attach to switch ${n.desc}: only port 0 has a transport layer (got port ${pn})`);
    const p = n.ports[pn];
    if (!p) throw new SimFabricError(`attach: node ${n.idx} (${n.desc}) has no port ${pn}`);
    const ep = new SimEndpoint(this, this.nextEndpointId++, n.idx, pn);
    this.caNames.set(ep.id, opts.caName ?? `sim${n.idx}`);
    const k = portKey(n.idx, pn);
    const list = this.endpoints.get(k) ?? [];
    list.push(ep);
    this.endpoints.set(k, list);
    if (opts.isSm) this.forcedSm.add(ep.id);
    this.updateIsSm(n.idx, pn);
    return ep;
  }
  /** @internal EndpointHost */
  endpointLocal(ep: SimEndpoint): LocalPortInfo {
    const n = this.nodes[ep.nodeIdx]!;
    const p = n.ports[ep.portNum]!;
    return {
      caName: this.caNames.get(ep.id) ?? `sim${n.idx}`,
      portNum: ep.portNum,
      nodeGuid: n.guid,
      portGuid: p.guid,
      lid: p.info.lid,
      smLid: p.info.masterSmLid,
      state: p.info.portState,
      linkLayer: 'InfiniBand',
    };
  }

  /** @internal EndpointHost */
  endpointRegistered(ep: SimEndpoint, _mgmtClass: number): void {
    this.updateIsSm(ep.nodeIdx, ep.portNum);
  }

  /** @internal EndpointHost */
  endpointClosed(ep: SimEndpoint): void {
    const k = portKey(ep.nodeIdx, ep.portNum);
    const list = this.endpoints.get(k);
    if (list) {
      const i = list.indexOf(ep);
      if (i >= 0) list.splice(i, 1);
      if (!list.length) this.endpoints.delete(k);
    }
    this.caNames.delete(ep.id);
    this.forcedSm.delete(ep.id);
    if (!this.closed) this.updateIsSm(ep.nodeIdx, ep.portNum);
  }

  private isSmEndpoint(ep: SimEndpoint): boolean {
    if (this.forcedSm.has(ep.id)) return true;
    for (const cls of [MgmtClass.SubnDirected, MgmtClass.SubnLid]) {
      const a = ep.agent(cls);
      if (a && (a.methods.has(Method.Get) || a.methods.has(Method.Set) || a.methods.has(Method.Trap))) return true;
    }
    return false;
  }

  private updateIsSm(nodeIdx: number, portNum: number): void {
    const p = this.nodes[nodeIdx]?.ports[portNum];
    if (!p) return;
    const sm = (this.endpoints.get(portKey(nodeIdx, portNum)) ?? []).some((e) => this.isSmEndpoint(e));
    const before = p.info.capabilityMask;
    p.info.capabilityMask = (sm ? before | PortCap.IsSM : before & ~PortCap.IsSM) >>> 0;
    if (before !== p.info.capabilityMask && p.info.masterSmLid && !p.node.isSwitch) {
      this.sendTrap(p.node, p, NoticeType.Info, {
        trap: 144,
        value: { lid: p.info.lid, otherLocalChanges: 0, capabilityMask: p.info.capabilityMask, changeFlags: 0, capabilityMask2: p.info.capabilityMask2 },
      });
    }
  }

  /** @internal EndpointHost: a MAD from an endpoint enters the fabric at its port. */
  endpointSend(ep: SimEndpoint, mad: Uint8Array, addr: MadAddress): void {
    const n = this.nodes[ep.nodeIdx]!;
    const p = n.ports[ep.portNum]!;
    const buf = new Uint8Array(256);
    buf.set(mad);
    const method = getF(buf, Smp.method);
    if (!isResponse(method)) {
      // the agent id goes into the high 32 bits of a request's TID, as the kernel does
      const tid = getTid(buf);
      setTidHigh(buf, tid, ep.id);
    }
    const cls = getF(buf, Smp.mgmtClass);
    const vl15 = cls === MgmtClass.SubnDirected || cls === MgmtClass.SubnLid;
    if (!Number.isInteger(addr.lid) || addr.lid < 0 || addr.lid > 0xffff) {
      throw new TransportError(`destination LID ${String(addr.lid)} is out of range 0..0xffff`, 'send');
    }
    const pkt: Packet = {
      buf,
      slid: p.info.lid,
      dlid: addr.lid,
      sqpn: vl15 ? 0 : 1,
      dqpn: addr.qpn,
      vl15,
      from: ep,
      ...(this.opts.badPath === 'status' ? { original: buf.slice() } : {}),
    };
    this.stats.injected++;
    const t = newTransit();
    try {
      this.faults.onInject(t);
      if (cls === MgmtClass.SubnDirected) this.walkDr(n, ep.portNum, pkt, t);
      else this.walkLid(n, ep.portNum, pkt, t);
    } catch (e) {
      if (e instanceof DropError) this.dropped(pkt, e, t);
      else throw e;
    }
  }

  // =====================================================================================
  // SmaHost
  // =====================================================================================

  /** @internal */
  now(): number {
    return this.clock.now();
  }

  /** @internal */
  hasSm(node: SimNode, port: number): boolean {
    return (this.endpoints.get(portKey(node.idx, port)) ?? []).some((e) =>
      [MgmtClass.SubnDirected, MgmtClass.SubnLid].some((c) => e.serves(c, 1, Method.Get) || e.serves(c, 1, Method.Set)),
    );
  }

  /** @internal Port state changes: switches raise PortStateChange and trap 128 (not for their own Sets). */
  portsChanged(changes: PortChange[], setBy: SimNode | undefined): void {
    const switches = new Set<SimNode>();
    for (const c of changes) {
      const linkEvent = c.to === PortState.Down || c.from === PortState.Down || (c.from === PortState.Init && c.to === PortState.Init);
      if (!linkEvent || !c.port.node.sw || c.port.node === setBy) continue;
      switches.add(c.port.node);
    }
    for (const sw of switches) {
      sw.sw!.portStateChange = 1;
      const mp = sw.ports[0]!;
      this.sendTrap(sw, mp, NoticeType.Urgent, { trap: 128, value: { lid: mp.info.lid } });
    }
  }

  /** @internal trap 256 to the SM. */
  mkeyViolation(node: SimNode, port: SimPort, req: Uint8Array, _arrivalPort: number): void {
    const dr = getF(req, Smp.mgmtClass) === MgmtClass.SubnDirected;
    const hc = dr ? getF(req, Smp.hopCount) : 0;
    const path: number[] = [];
    if (dr) for (let i = 1; i <= Math.min(hc, 30); i++) path.push(returnPathAt(req, i));
    this.sendTrap(node, port, NoticeType.Security, {
      trap: 256,
      value: {
        lid: port.info.lid,
        drSlid: dr ? getF(req, Smp.drSlid) : 0,
        method: getF(req, Smp.method),
        attrId: getF(req, Smp.attrId),
        attrMod: getF(req, Smp.attrMod),
        mkey: readMkey(req),
        drNotice: dr ? 1 : 0,
        drPathTruncated: hc > 30 ? 1 : 0,
        drHopCount: Math.min(hc, 63),
        drReturnPath: path,
      },
    });
  }

  /** @internal */
  trapRepress(node: SimNode, tid: bigint): void {
    const m = this.traps.get(node.idx);
    const t = m?.get(tid);
    if (!t || !m) return;
    if (t.timer) this.scheduler.cancel(t.timer);
    m.delete(tid);
  }

  // =====================================================================================
  // traps
  // =====================================================================================

  private sendTrap(node: SimNode, from: SimPort, type: number, details: TrapDetails): void {
    const mad = new Uint8Array(256);
    const tid = this.nextTrapTid++;
    SmpLid.encode(
      { baseVersion: 1, mgmtClass: MgmtClass.SubnLid, classVersion: 1, method: Method.Trap, tid, attrId: SmpAttr.Notice, attrMod: 0 },
      mad,
      0,
    );
    encodeNotice(
      {
        isGeneric: 1,
        type,
        producerType: node.type === NodeType.Switch ? 2 : node.type === NodeType.Router ? 3 : 1,
        issuerLid: from.info.lid,
        noticeToggle: 0,
        noticeCount: 0,
      },
      details,
      mad,
      SMP_DATA_OFFSET,
    );
    const pending: PendingTrap = { tid, sends: 0, timer: undefined, mad, from };
    let m = this.traps.get(node.idx);
    if (!m) this.traps.set(node.idx, (m = new Map()));
    m.set(tid, pending);
    this.transmitTrap(node, pending);
  }

  private transmitTrap(node: SimNode, t: PendingTrap): void {
    t.sends++;
    const smLid = t.from.info.masterSmLid;
    if (smLid) {
      this.stats.trapsSent++;
      this.stats.injected++;
      const pkt: Packet = { buf: t.mad.slice(), slid: t.from.info.lid, dlid: smLid, sqpn: 0, dqpn: 0, vl15: true };
      const tr = newTransit();
      try {
        this.faults.onInject(tr);
        this.walkLid(node, t.from.num, pkt, tr);
      } catch (e) {
        if (e instanceof DropError) this.dropped(pkt, e, tr);
        else throw e;
      }
    }
    const m = this.traps.get(node.idx);
    if (t.sends >= this.opts.trapMaxSends) {
      m?.delete(t.tid);
      return;
    }
    const interval = this.opts.trapRepeatMs ?? Math.max(1, 4.096e-3 * 2 ** t.from.info.subnetTimeout);
    t.timer = this.schedule(interval, () => {
      t.timer = undefined;
      if (m?.get(t.tid) === t) this.transmitTrap(node, t);
    });
  }

  /** Traps a node is still repeating (not yet repressed). */
  pendingTraps(ref: NodeRef): number {
    return this.traps.get(this.node(ref).idx)?.size ?? 0;
  }

  // =====================================================================================
  // forwarding
  // =====================================================================================

  /** Cross the link out of `p`; returns the receiving port. */
  private cross(p: SimPort | undefined, pkt: Packet, t: Transit): SimPort {
    if (!p || !p.peer || !linkIsUp(p)) throw new DropError('link down or no such port', true);
    if (!pkt.vl15 && (p.info.portState !== PortState.Active || p.peer.info.portState !== PortState.Active)) {
      throw new DropError('port not ACTIVE for data VLs', true);
    }
    this.faults.onCross(portKey(p.node.idx, p.num), t);
    t.hops++;
    this.stats.hops++;
    return p.peer;
  }

  /** Directed-route forwarding (IBA 14.2.2.2/14.2.2.3 as the Linux SMI implements them). */
  private walkDr(start: SimNode, startPort: number, pkt: Packet, t: Transit): void {
    const b = pkt.buf;
    if (getF(b, Smp.drSlid) !== PERMISSIVE_LID || getF(b, Smp.drDlid) !== PERMISSIVE_LID) {
      throw new DropError('non-permissive DrSLID/DrDLID (LID-routed part of a DR SMP is not supported)', true);
    }
    let cur = start;
    let inPort = -1;
    const hc = getF(b, Smp.hopCount);
    if (hc > 63) throw new DropError('hop count above 63', true);
    for (;;) {
      const d = getF(b, Smp.direction);
      const hp = getF(b, Smp.hopPointer);
      let exit: number;
      if (d === 0) {
        if (inPort < 0) {
          if (hp !== 0) throw new DropError('outgoing DR SMP sent with a non-zero hop pointer', true);
          setF(b, Smp.hopPointer, 1);
          if (hc === 0) return this.arrive(cur, startPort, 'sma', pkt, t);
          exit = initialPathAt(b, 1);
          if (!cur.isSwitch && exit !== startPort) throw new DropError(`InitialPath[1]=${exit} is not the sending port ${startPort}`, true);
        } else if (hp >= 1 && hp < hc) {
          if (!cur.isSwitch) throw new DropError('DR SMP must be forwarded by a non-switch', true);
          setReturnPathAt(b, hp, inPort);
          setF(b, Smp.hopPointer, hp + 1);
          exit = initialPathAt(b, hp + 1);
        } else if (hp === hc) {
          setReturnPathAt(b, hp, inPort);
          setF(b, Smp.hopPointer, hc + 1);
          return this.arrive(cur, inPort, 'sma', pkt, t);
        } else {
          throw new DropError(`bad hop pointer ${hp} (hop count ${hc})`, true);
        }
      } else if (inPort < 0) {
        if (hc > 0 && hp === hc + 1) {
          setF(b, Smp.hopPointer, hc);
          exit = returnPathAt(b, hc);
        } else if (hc === 0 && hp === 1) {
          setF(b, Smp.hopPointer, 0);
          return this.arrive(cur, startPort, 'agent', pkt, t);
        } else {
          throw new DropError(`bad hop pointer ${hp} in a returning DR SMP (hop count ${hc})`, true);
        }
      } else if (hp >= 2 && hp <= hc) {
        if (!cur.isSwitch) throw new DropError('returning DR SMP must be forwarded by a non-switch', true);
        setF(b, Smp.hopPointer, hp - 1);
        exit = returnPathAt(b, hp - 1);
      } else if (hp === 1) {
        setF(b, Smp.hopPointer, 0);
        return this.arrive(cur, inPort, 'agent', pkt, t);
      } else {
        throw new DropError(`bad hop pointer ${hp} in a returning DR SMP (hop count ${hc})`, true);
      }
      if (exit === 0 || exit > cur.numPorts) throw new DropError(`no port ${exit} on ${cur.desc}`, true);
      const rx = this.cross(cur.ports[exit], pkt, t);
      cur = rx.node;
      inPort = rx.num;
    }
  }

  /** Where a LID-routed MAD arriving at a port goes: the SMA or an agent. */
  private lidTarget(pkt: Packet): Target {
    if (!pkt.vl15) return 'agent';
    const m = getF(pkt.buf, Smp.method);
    return m === Method.Trap || (isResponse(m) && m !== Method.TrapRepress) ? 'agent' : 'sma';
  }

  /** LID routing from (node, port): a CA port or a switch's port 0. */
  private walkLid(start: SimNode, startPort: number, pkt: Packet, t: Transit): void {
    const dlid = pkt.dlid;
    if (isMulticastLid(dlid)) return this.walkMulticast(start, startPort, pkt, t);
    let cur = start;
    let inPort = startPort;
    let originating = true;
    for (;;) {
      if (cur.isSwitch) {
        const p0 = cur.ports[0]!;
        if (!originating && !pkt.vl15 && cur.ports[inPort]!.info.portState !== PortState.Active) {
          throw new DropError('inbound port not ACTIVE for data VLs', true);
        }
        if (portOwnsLid(p0, dlid) || (dlid === PERMISSIVE_LID && pkt.vl15 && !originating)) {
          return this.arrive(cur, 0, this.lidTarget(pkt), pkt, t, inPort);
        }
        const exit = cur.sw!.fwd.unicastPort(dlid);
        if (exit === undefined || exit === 0) throw new DropError(`no route to LID ${dlid} at ${cur.desc}`, true);
        const rx = this.cross(cur.ports[exit], pkt, t);
        if (t.hops > MAX_LID_HOPS) throw new DropError(`LID ${dlid}: forwarding loop (more than ${MAX_LID_HOPS} hops)`, true);
        cur = rx.node;
        inPort = rx.num;
      } else {
        const p = cur.ports[inPort];
        if (!p) throw new DropError(`no port ${inPort}`, true);
        if (!originating) {
          if (portOwnsLid(p, dlid) || (dlid === PERMISSIVE_LID && pkt.vl15)) return this.arrive(cur, inPort, this.lidTarget(pkt), pkt, t);
          throw new DropError(`LID ${dlid} arrived at ${cur.desc} port ${inPort} (LID ${p.info.lid})`, true);
        }
        if (portOwnsLid(p, dlid)) return this.arrive(cur, inPort, this.lidTarget(pkt), pkt, t);
        const rx = this.cross(p, pkt, t);
        cur = rx.node;
        inPort = rx.num;
      }
      originating = false;
    }
  }

  /** Multicast: flood along the MFTs (each switch visited once), deliver at every CA port reached. */
  private walkMulticast(start: SimNode, startPort: number, pkt: Packet, t: Transit): void {
    const seen = new Set<number>();
    const queue: Array<{ node: SimNode; inPort: number; tr: Transit }> = [];
    const sendOut = (p: SimPort | undefined, tr: Transit): void => {
      try {
        const tt = { ...tr };
        const rx = this.cross(p, pkt, tt);
        queue.push({ node: rx.node, inPort: rx.num, tr: tt });
      } catch (e) {
        if (e instanceof DropError) this.count(e.reason);
        else throw e;
      }
    };
    if (start.isSwitch) queue.push({ node: start, inPort: startPort, tr: t });
    else sendOut(start.ports[startPort], t);
    let delivered = 0;
    while (queue.length) {
      const { node, inPort, tr } = queue.shift()!;
      if (!node.isSwitch) {
        if (node === start && inPort === startPort) continue;
        this.arrive(node, inPort, 'agent', { ...pkt, buf: pkt.buf.slice() }, { ...tr });
        delivered++;
        continue;
      }
      if (seen.has(node.idx)) continue;
      seen.add(node.idx);
      for (const out of node.sw!.fwd.multicastPorts(pkt.dlid, inPort)) {
        if (out === 0) {
          this.arrive(node, 0, 'agent', { ...pkt, buf: pkt.buf.slice() }, { ...tr }, inPort);
          delivered++;
        } else sendOut(node.ports[out], tr);
      }
    }
    if (!delivered) throw new DropError(`multicast LID 0x${pkt.dlid.toString(16)} reached no port`, true);
  }

  private count(reason: string): void {
    this.stats.dropped++;
    this.stats.dropReasons[reason] = (this.stats.dropReasons[reason] ?? 0) + 1;
  }

  private dropped(pkt: Packet, e: DropError, t: Transit): void {
    this.count(e.pathProblem ? 'path' : e.reason);
    if (e.pathProblem && this.opts.badPath === 'status' && pkt.from && pkt.original && !isResponse(getF(pkt.original, Smp.method))) {
      const ep = pkt.from;
      const data = pkt.original;
      this.schedule(this.latency(t), () => ep.deliver({ data, addr: { lid: pkt.dlid, qpn: pkt.dqpn }, status: ETIMEDOUT }));
    }
  }

  private latency(t: Transit): number {
    return Math.max(1, t.hops) * this.opts.hopLatencyMs + t.delay;
  }

  /** Schedule the arrival of a packet at (node, port). `arrivalPort` is the physical port for switch port 0 deliveries. */
  private arrive(node: SimNode, port: number, target: Target, pkt: Packet, t: Transit, arrivalPort = port): void {
    const run = (p: Packet): void => {
      if (target === 'sma') this.atSma(node, arrivalPort, p);
      else this.atAgent(node, node.isSwitch ? 0 : port, p);
    };
    this.schedule(this.latency(t), () => run(pkt));
    if (t.dup) {
      this.stats.duplicated++;
      const copy = { ...pkt, buf: pkt.buf.slice() };
      this.schedule(this.latency(t) + this.opts.hopLatencyMs, () => run(copy));
    }
  }

  private atSma(node: SimNode, inPort: number, pkt: Packet): void {
    if (this.closed) return;
    this.stats.smpsHandled++;
    const r = processSmp(this, node, inPort, pkt.buf);
    if (r.kind === 'none') return;
    const mp = managementPort(node, inPort)!;
    if (r.kind === 'sm') {
      this.atAgent(node, r.port, pkt);
      return;
    }
    this.stats.injected++;
    const isDr = getF(r.mad, Smp.mgmtClass) === MgmtClass.SubnDirected;
    const resp: Packet = { buf: r.mad, slid: mp.info.lid, dlid: pkt.slid, sqpn: 0, dqpn: pkt.sqpn, vl15: true };
    const t = newTransit();
    try {
      this.faults.onInject(t);
      if (isDr) this.walkDr(node, inPort, resp, t);
      else this.walkLid(node, mp.num, resp, t);
    } catch (e) {
      if (e instanceof DropError) this.dropped(resp, e, t);
      else throw e;
    }
  }

  private atAgent(node: SimNode, port: number, pkt: Packet): void {
    if (this.closed) return;
    const eps = this.endpoints.get(portKey(node.idx, port));
    const b = pkt.buf;
    const cls = getF(b, Smp.mgmtClass);
    const method = getF(b, Smp.method);
    let ep: SimEndpoint | undefined;
    if (eps) {
      if (isResponse(method)) {
        const id = Number(getTid(b) >> 32n);
        ep = eps.find((e) => e.id === id && e.agent(cls) !== undefined);
      } else {
        const ver = getF(b, Smp.classVersion);
        ep = eps.find((e) => e.serves(cls, ver, method));
      }
    }
    if (!ep) {
      this.count('no agent');
      return;
    }
    this.stats.delivered++;
    const addr: MadAddress =
      cls === MgmtClass.SubnDirected ? { lid: PERMISSIVE_LID, qpn: 0 } : { lid: pkt.slid, qpn: pkt.sqpn, qkey: 0, sl: 0, pkeyIndex: 0 };
    ep.deliver({ data: b, addr, status: 0 });
  }

  private schedule(delayMs: number, fn: () => void): SimEvent {
    return this.scheduler.schedule(delayMs, fn);
  }
}

function setTidHigh(buf: Uint8Array, tid: bigint, high: number): void {
  setTid(buf, (BigInt(high >>> 0) << 32n) | (tid & 0xffffffffn));
}

function readMkey(buf: Uint8Array): bigint {
  return readBig(buf, Smp.mkey.bit, Smp.mkey.width);
}

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
 *
 * This class composes the parts: node state (./node.ts, ./link.ts) and the SMA (./sma.ts), the
 * packet walkers (./walk.ts), fault injection (./faults.ts), trap origination (./traps.ts), the
 * scheduler, and the endpoints attached at ports (./endpoint.ts); its options ./fabric-types.ts,
 * building its nodes ./fabric-build.ts.
 */
import type { Clock } from '../util/clock.js';
import { allocBytes } from '../util/slab.js';
import { addCounts, processPma } from './pma.js';
import type { PortCounterName } from '../wire/pma.js';
import type { Fabric } from '../model/fabric.js';
import { MAD_SIZE, MadHeaderView, MgmtClass, NodeType, PERMISSIVE_LID, PortState, isResponse } from '../wire/mad.js';
import { METHOD, MGMT_CLASS } from './header.js';
import { setTidHigh } from '../wire/builders.js';
import { PortCap, type PortInfo, type SwitchInfo } from '../wire/sma.js';
import { NoticeType } from '../wire/notice.js';
import { TransportError, type LocalPortInfo, type MadAddress } from '../transport/types.js';
import { refreshLink, type PortChange } from './link.js';
import { managementPort, portOwnsLid, type SimNode, type SimPort } from './node.js';
import { buildSimNodes } from './fabric-build.js';
import { SimFabricError, resolveSimFabricOptions, type FabricStats, type ResolvedSimFabricOptions, type SimFabricOptions, type SimNodeRef } from './fabric-types.js';
import { processSmp, type SmaHost } from './sma.js';
import { portInfoValue } from './sma-port.js';
import { switchInfoValue } from './sma-switch.js';
import { EndpointTable, type AttachOptions, type EndpointHost, type SimEndpoint } from './endpoint.js';
import { SimFaults, type FaultConfig } from './faults.js';
import { Scheduler, type SimEvent } from './scheduler.js';
import { DropError, newPacket, newTransit, portKey, resetTransit, reusePacket, type Packet, type Target, type Transit } from './packet.js';
import { TrapSender } from './traps.js';
import { Walker } from './walk.js';
import { RouterPlane } from './router.js';
import { SimVirtPlane } from './vport.js';

export { SimEndpoint, type AttachOptions } from './endpoint.js';
export type { SimNode, SimPort } from './node.js';
export type { FaultConfig } from './faults.js';
export { SimFabricError, type FabricStats, type SimFabricOptions, type SimNodeRef } from './fabric-types.js';

const ETIMEDOUT = 110;
/** Spare request buffers kept (more than the MADs an SM keeps in flight is never needed). */
const MAX_SPARE_BUFFERS = 1024;
/** Spare packet objects kept (as many as MADs in flight). */
const MAX_SPARE_PACKETS = 1024;
const NO_BYTES = new Uint8Array(0);
/** Where a directed-route MAD comes from, as an endpoint sees it (shared: never changed). */
const DR_ADDRESS: MadAddress = Object.freeze({ lid: PERMISSIVE_LID, qpn: 0 });

export class SimFabric implements SmaHost, EndpointHost {
  readonly nodes: SimNode[];
  readonly stats: FabricStats = { injected: 0, delivered: 0, dropped: 0, hops: 0, smpsHandled: 0, trapsSent: 0, duplicated: 0, dropReasons: {} };
  /** The time base the fabric runs on (a backend attached to it runs on the same: api/backend.ts). */
  readonly clock: Clock;
  private readonly opts: ResolvedSimFabricOptions;
  private readonly faults: SimFaults;
  private readonly byGuid = new Map<bigint, SimNode>();
  private readonly byPortGuid = new Map<bigint, SimPort>();
  private readonly byDesc = new Map<string, SimNode>();
  private readonly endpoints = new EndpointTable();
  private readonly scheduler: Scheduler;
  private readonly traps: TrapSender;
  private readonly walk: Walker;
  private closed = false;
  /** Request buffers handed back by the SMAs that answered them, for the next sends. */
  private readonly spare: Uint8Array[] = [];
  /** Packets delivered to an endpoint (its request's packet carried the answer back), for the next sends. */
  private readonly sparePackets: Packet[] = [];
  /** The Transit of the injection under way (see inject). */
  private readonly transit: Transit = newTransit();
  private injecting = false;
  /** The routers and their tables (sim/router.ts). */
  readonly routers: RouterPlane;
  /** SR-IOV vports of the CAs, created and destroyed as a hypervisor would (sim/vport.ts). */
  readonly vports: SimVirtPlane;
  constructor(fabric: Fabric, opts: SimFabricOptions) {
    this.clock = opts.clock;
    this.opts = resolveSimFabricOptions(opts);
    this.faults = new SimFaults(this.opts.seed, opts.faults);
    const scheduler = (this.scheduler = new Scheduler(this.clock, this.opts.hopLatencyMs === 0, (ev) => this.arrived(ev)));
    this.walk = new Walker({
      stats: this.stats,
      faults: this.faults,
      arrive: (node, port, target, pkt, t, arrivalPort) => this.arrive(node, port, target, pkt, t, arrivalPort),
      count: (reason) => this.count(reason),
    });
    this.traps = new TrapSender(
      {
        stats: this.stats,
        schedule: (ms, fn) => scheduler.schedule(ms, fn),
        cancel: (ev) => scheduler.cancel(ev),
        injectLid: (node, port, pkt) => this.inject(node, port, pkt, false),
      },
      this.opts,
    );
    this.nodes = buildSimNodes(fabric, this.opts, opts.rftSwitches, { byGuid: this.byGuid, byDesc: this.byDesc, byPortGuid: this.byPortGuid });
    this.routers = new RouterPlane(this.nodes);
    this.vports = new SimVirtPlane((ref, port) => this.port(ref, port), this.nodes, opts.virtualization);
    const ignored: PortChange[] = [];
    for (const n of this.nodes) for (const p of n.ports) if (p?.peer) refreshLink(p, ignored);
  }

  // ---- inspection --------------------------------------------------------------------------------

  /** Find a node by index, node GUID, port GUID or NodeDescription (a "0x..." string is a GUID). */
  findNode(ref: SimNodeRef): SimNode | undefined {
    if (typeof ref === 'number') return this.nodes[ref];
    if (typeof ref === 'bigint') return this.byGuid.get(ref) ?? this.byPortGuid.get(ref)?.node;
    const d = this.byDesc.get(ref);
    if (d) return d;
    if (/^0x[0-9a-f]+$/i.test(ref)) return this.findNode(BigInt(ref));
    return undefined;
  }

  /** The node's live SMA state (throws when not found). */
  node(ref: SimNodeRef): SimNode {
    const n = this.findNode(ref);
    if (!n) throw new SimFabricError(`no node ${typeof ref === 'bigint' ? '0x' + ref.toString(16) : String(ref)} in the simulated fabric`);
    return n;
  }

  port(ref: SimNodeRef, port: number): SimPort {
    const n = this.node(ref);
    const p = n.ports[port];
    if (!p) throw new SimFabricError(`node ${n.idx} (${n.desc}) has no port ${port}`);
    return p;
  }

  /** PortInfo of a port as a Get would return it (LocalPortNum = the port itself). */
  portInfo(ref: SimNodeRef, port: number): PortInfo {
    const p = this.port(ref, port);
    this.expireLease(p);
    return portInfoValue(p, port, true);
  }

  switchInfo(ref: SimNodeRef): SwitchInfo {
    const n = this.node(ref);
    if (!n.sw) throw new SimFabricError(`node ${n.idx} (${n.desc}) is not a switch`);
    return switchInfoValue(n);
  }

  /** A copy of a switch's LFT (LinearFDBCap entries, 0xff = unprogrammed). */
  lft(ref: SimNodeRef): Uint8Array {
    const n = this.node(ref);
    if (!n.sw) throw new SimFabricError(`node ${n.idx} (${n.desc}) is not a switch`);
    return n.sw.fwd.lftSnapshot();
  }

  pkeys(ref: SimNodeRef, port: number): number[] {
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

  // ---- topology events and faults ----------------------------------------------------------------

  /** Pull the cable of (node, port): both ends go DOWN; switches on the link raise trap 128. */
  linkDown(ref: SimNodeRef, port: number): void {
    this.setCable(ref, port, false);
  }

  /** Reconnect the cable: both ends train to INIT; switches raise trap 128. */
  linkUp(ref: SimNodeRef, port: number): void {
    this.setCable(ref, port, true);
  }

  private setCable(ref: SimNodeRef, port: number, up: boolean): void {
    const p = this.port(ref, port);
    if (!p.peer) throw new SimFabricError(`node ${p.node.idx} (${p.node.desc}) port ${port} has no cable`);
    p.cableUp = up;
    p.peer.cableUp = up;
    const changes: PortChange[] = [];
    refreshLink(p, changes);
    if (changes.length) this.portsChanged(changes, undefined);
  }

  /** A port that accepts PortInfo Sets but stays in INIT (true), or behaves again (false). */
  setStuckInit(ref: SimNodeRef, port: number, stuck: boolean): void {
    this.port(ref, port).stuckInit = stuck;
  }

  /** Replace the global fault configuration. */
  setFaults(cfg: FaultConfig): void {
    this.faults.setGlobal(cfg);
  }

  /** Faults on one link (both directions); undefined clears them. */
  setLinkFaults(ref: SimNodeRef, port: number, cfg: FaultConfig | undefined): void {
    const p = this.port(ref, port);
    for (const q of p.peer ? [p, p.peer] : [p]) {
      this.faults.setLink(portKey(q.node.idx, q.num), cfg);
    }
  }

  /** Raise a port trap (129 link integrity, 130 buffer overrun, 131 flow control watchdog) from a switch or CA port. */
  raiseTrap(ref: SimNodeRef, port: number, trap: 129 | 130 | 131): void {
    const p = this.port(ref, port);
    const mp = managementPort(p.node, p.num);
    if (!mp) throw new SimFabricError(`node ${p.node.idx} has no management port for port ${port}`);
    this.traps.send(p.node, mp, NoticeType.Urgent, { trap, value: { lid: mp.info.lid, portNum: port } });
  }

  /** Stop all timers and detach every endpoint. */
  close(): void {
    this.closed = true;
    this.scheduler.close();
    const all = this.endpoints.all();
    for (const ep of all) void ep.close();
  }

  /** Number of scheduled fabric events (MADs in flight, trap repeats). */
  get pendingEvents(): number {
    return this.scheduler.pending;
  }

  // ---- endpoints ---------------------------------------------------------------------------------

  /** Attach a process at a CA port (default: its first cabled port) or a switch's port 0. */
  attach(ref: SimNodeRef, port?: number, opts: AttachOptions = {}): SimEndpoint {
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
    const ep = this.endpoints.add(this, n.idx, pn, opts);
    this.updateIsSm(n.idx, pn);
    return ep;
  }
  /** @internal EndpointHost */
  endpointLocal(ep: SimEndpoint): LocalPortInfo {
    const n = this.nodes[ep.nodeIdx]!;
    const p = n.ports[ep.portNum]!;
    return {
      caName: this.endpoints.caName(ep) ?? `sim${n.idx}`,
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
    this.endpoints.remove(ep);
    if (!this.closed) this.updateIsSm(ep.nodeIdx, ep.portNum);
  }

  private updateIsSm(nodeIdx: number, portNum: number): void {
    const p = this.nodes[nodeIdx]?.ports[portNum];
    if (!p) return;
    const sm = this.endpoints.advertisesSm(nodeIdx, portNum);
    const before = p.info.capabilityMask;
    p.info.capabilityMask = (sm ? before | PortCap.IsSM : before & ~PortCap.IsSM) >>> 0;
    if (before !== p.info.capabilityMask && p.info.masterSmLid && !p.node.isSwitch) {
      this.traps.send(p.node, p, NoticeType.Info, {
        trap: 144,
        value: { lid: p.info.lid, otherLocalChanges: 0, capabilityMask: p.info.capabilityMask, changeFlags: 0, capabilityMask2: p.info.capabilityMask2 },
      });
    }
  }

  /** @internal EndpointHost: a MAD from an endpoint enters the fabric at its port. */
  endpointSend(ep: SimEndpoint, mad: Uint8Array, addr: MadAddress): void {
    const n = this.nodes[ep.nodeIdx]!;
    const p = n.ports[ep.portNum]!;
    if (!Number.isInteger(addr.lid) || addr.lid < 0 || addr.lid > 0xffff) {
      throw new TransportError(`destination LID ${String(addr.lid)} is out of range 0..0xffff`, 'send');
    }
    const spare = this.spare.pop();
    const buf = spare ?? allocBytes(MAD_SIZE);
    buf.set(mad);
    if (spare && mad.length < MAD_SIZE) buf.fill(0, mad.length);
    // the agent id goes into the high 32 bits of a request's TID, as the kernel does
    if (!isResponse(buf[METHOD]!)) setTidHigh(buf, ep.id);
    const cls = buf[MGMT_CLASS]!;
    const vl15 = cls === MgmtClass.SubnDirected || cls === MgmtClass.SubnLid;
    const reuse = this.sparePackets.pop();
    const pkt = reuse ? reusePacket(reuse, buf, p.info.lid, addr.lid, vl15 ? 0 : 1, addr.qpn, vl15) : newPacket(buf, p.info.lid, addr.lid, vl15 ? 0 : 1, addr.qpn, vl15);
    pkt.from = ep;
    pkt.pooled = true;
    if (this.opts.badPath === 'status') pkt.original = buf.slice();
    if (addr.grh) pkt.grh = { sgid: (p.info.gidPrefix << 64n) | p.guid, dgid: addr.grh.dgid, hopLimit: addr.grh.hopLimit ?? 0xff, trafficClass: addr.grh.trafficClass ?? 0, flowLabel: addr.grh.flowLabel ?? 0 };
    this.inject(n, ep.portNum, pkt, cls === MgmtClass.SubnDirected);
  }

  /** A MAD enters the fabric at (node, port): global faults, then the walk; a loss is counted (and
   * bounced with badPath 'status'). */
  private inject(node: SimNode, port: number, pkt: Packet, dr: boolean): void {
    this.stats.injected++;
    // A walk is synchronous and does not keep its Transit: one object serves every injection
    // (a fresh one should an injection ever start inside another).
    const own = !this.injecting;
    const t = own ? resetTransit(this.transit) : newTransit();
    this.injecting = true;
    try {
      this.faults.onInject(t);
      if (dr) this.walk.dr(node, port, pkt, t);
      else this.walk.lid(node, port, pkt, t);
    } catch (e) {
      if (e instanceof DropError) this.dropped(pkt, e, t);
      else throw e;
    } finally {
      if (own) this.injecting = false;
    }
  }

  // ---- SmaHost -----------------------------------------------------------------------------------

  /** @internal */
  now(): number {
    return this.clock.now();
  }

  /** @internal */
  hasSm(node: SimNode, port: number): boolean {
    return this.endpoints.hasSm(node.idx, port);
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
      this.traps.send(sw, mp, NoticeType.Urgent, { trap: 128, value: { lid: mp.info.lid } });
    }
  }

  /** @internal trap 256 to the SM. */
  mkeyViolation(node: SimNode, port: SimPort, req: Uint8Array, _arrivalPort: number): void {
    this.traps.mkeyViolation(node, port, req);
  }

  /** @internal */
  trapRepress(node: SimNode, tid: bigint): void {
    this.traps.repress(node, tid);
  }

  /** Add to the PMA counters of (node, port), e.g. `{ symbolErrors: 5 }` (error injection). */
  addPortCounts(ref: SimNodeRef, port: number, counts: Partial<Record<PortCounterName, number>>): void {
    addCounts(this.port(ref, port), counts);
  }

  /** Traps a node is still repeating (not yet repressed). */
  pendingTraps(ref: SimNodeRef): number {
    return this.traps.pending(this.node(ref));
  }

  // ---- delivery ----------------------------------------------------------------------------------

  private count(reason: string): void {
    this.stats.dropped++;
    this.stats.dropReasons[reason] = (this.stats.dropReasons[reason] ?? 0) + 1;
  }

  /** A packet (a test packet: sim/probe.ts) enters the fabric at (node, port), LID-routed. */
  injectPacket(ref: SimNodeRef, port: number, pkt: Packet): void {
    this.inject(this.node(ref), port, pkt, false);
  }

  private dropped(pkt: Packet, e: DropError, t: Transit): void {
    pkt.probe?.lost(e.reason);
    this.count(e.pathProblem ? 'path' : e.reason);
    if (e.pathProblem && this.opts.badPath === 'status' && pkt.from && pkt.original && !isResponse(MadHeaderView.over(pkt.original).method)) {
      const ep = pkt.from;
      const data = pkt.original;
      this.scheduler.schedule(this.latency(t), () => ep.deliver({ data, addr: { lid: pkt.dlid, qpn: pkt.dqpn }, status: ETIMEDOUT }));
    }
  }

  private latency(t: Transit): number {
    return Math.max(1, t.hops) * this.opts.hopLatencyMs + t.delay;
  }

  /** Schedule the arrival of a packet at (node, port). `arrivalPort` is the physical port for switch port 0 deliveries. */
  private arrive(node: SimNode, port: number, target: Target, pkt: Packet, t: Transit, arrivalPort = port): void {
    const sma = target === 'sma';
    this.scheduler.scheduleArrival(this.latency(t), pkt, node, port, sma, arrivalPort);
    if (t.dup) {
      this.stats.duplicated++;
      this.scheduler.scheduleArrival(this.latency(t) + this.opts.hopLatencyMs, { ...pkt, buf: pkt.buf.slice(), pooled: false }, node, port, sma, arrivalPort);
    }
  }

  /** A scheduled arrival is due: the node's SMA or the agent at the port takes the packet. */
  private arrived(ev: SimEvent): void {
    const node = ev.node!;
    if (ev.sma) this.atSma(node, ev.arrivalPort, ev.pkt!);
    else this.atAgent(node, node.isSwitch ? 0 : ev.port, ev.pkt!);
  }

  private atSma(node: SimNode, inPort: number, pkt: Packet): void {
    if (this.closed) return;
    this.stats.smpsHandled++;
    const r = processSmp(this, node, inPort, pkt.buf);
    // (r may be the SMA's shared answer: read before anything else runs)
    const kind = r.kind;
    // the request is done with (an answer is a copy), unless it goes on to the SM attached here
    if (kind !== 'sm' && pkt.pooled && this.spare.length < MAX_SPARE_BUFFERS) {
      pkt.pooled = false;
      this.spare.push(pkt.buf);
    }
    if (kind === 'none') return;
    if (kind === 'sm') {
      this.atAgent(node, r.port, pkt);
      return;
    }
    const mad = r.mad;
    const mp = managementPort(node, inPort)!;
    const isDr = mad[MGMT_CLASS] === MgmtClass.SubnDirected;
    // The request's packet is done with (its arrival event has run; a duplicate is a copy of its
    // own): it carries the answer back, unless it is a test packet or carries a GRH.
    const back = pkt.probe || pkt.grh ? newPacket(mad, mp.info.lid, pkt.slid, 0, pkt.sqpn, true) : reusePacket(pkt, mad, mp.info.lid, pkt.slid, 0, pkt.sqpn, true);
    this.inject(node, isDr ? inPort : mp.num, back, isDr);
  }

  private atAgent(node: SimNode, port: number, pkt: Packet): void {
    if (this.closed) return;
    if (pkt.grh && node.type === NodeType.Router) {
      const f = this.routers.forward(node, pkt);
      if (f.kind === 'drop') {
        pkt.probe?.lost(f.reason);
        return this.count(f.reason);
      }
      if (f.kind === 'forward') {
        const grh = { ...pkt.grh, hopLimit: pkt.grh.hopLimit - 1 };
        return this.inject(node, f.egress.num, { ...pkt, slid: f.slid, dlid: f.dlid, sl: f.sl, grh }, false);
      }
    }
    if (pkt.probe) return pkt.probe.arrived(node.idx, port, pkt);
    const b = pkt.buf;
    const ep = this.endpoints.receiver(node.idx, port, b);
    if (!ep) {
      if (b[MGMT_CLASS] === MgmtClass.Perf) return this.atPma(node, port, pkt);
      this.count('no agent');
      return;
    }
    this.stats.delivered++;
    const addr: MadAddress =
      b[MGMT_CLASS] === MgmtClass.SubnDirected
        ? DR_ADDRESS
        : { lid: pkt.slid, qpn: pkt.sqpn, qkey: 0, sl: 0, pkeyIndex: 0, ...(pkt.grh ? { grh: { dgid: pkt.grh.sgid, hopLimit: 0xff, trafficClass: pkt.grh.trafficClass, flowLabel: pkt.grh.flowLabel } } : {}) };
    const plain = !pkt.grh;
    ep.deliver({ data: b, addr, status: 0 });
    // Delivered: nothing holds the packet any more (the endpoint got its bytes and address); it
    // carries a later send.
    if (plain && this.sparePackets.length < MAX_SPARE_PACKETS) {
      reusePacket(pkt, NO_BYTES, 0, 0, 0, 0, false);
      this.sparePackets.push(pkt);
    }
  }

  /** The node's PMA answers a PerfMgt request no client agent took. */
  private atPma(node: SimNode, port: number, pkt: Packet): void {
    const resp = processPma(node, port, pkt.buf);
    if (!resp) return this.count('no agent');
    const from = node.isSwitch ? node.ports[0]! : node.ports[port]!;
    this.inject(node, from.num, newPacket(resp, from.info.lid, pkt.slid, 1, pkt.sqpn, false), false);
  }
}

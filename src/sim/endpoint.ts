/**
 * A process attached to the simulated fabric at one port (a CA port or a switch's port 0): an
 * SM, an SA, or a client. It implements the same `Transport` interface as the umad backend, so
 * nothing above the transport layer knows it runs in-process.
 *
 * As the kernel MAD layer does, a request sent by an endpoint gets the endpoint's agent id in the
 * high 32 bits of its TransactionID; responses coming back are matched to the endpoint by those
 * bits (match on the low 32 bits in the RPC layer). Unsolicited requests go to an endpoint that
 * registered the class and version with that method in `methods` (a server agent).
 *
 * `EndpointTable` is the fabric's side: the endpoints attached at each port, and which of them a
 * MAD arriving at the port goes to.
 */
import { TransportError, type AgentOptions, type LocalPortInfo, type MadAddress, type ReceiveHandler, type ReceivedMad, type Transport } from '../transport/types.js';
import { MAD_SIZE, MgmtClass, Method, isResponse } from '../wire/mad.js';
import { tidHigh } from '../wire/builders.js';
import { portKey } from './packet.js';
import { CLASS_VERSION, METHOD, MGMT_CLASS } from './header.js';

export interface AttachOptions {
  /** The CA name reported in `local` (default "sim<node index>"). */
  caName?: string;
  /** Advertise PortInfo:CapabilityMask.IsSM at this port even before an SMP server agent registers. */
  isSm?: boolean;
}

/** What an endpoint needs from the fabric (implemented by SimFabric). */
export interface EndpointHost {
  endpointSend(ep: SimEndpoint, mad: Uint8Array, addr: MadAddress): void;
  endpointLocal(ep: SimEndpoint): LocalPortInfo;
  endpointRegistered(ep: SimEndpoint, mgmtClass: number): void;
  endpointClosed(ep: SimEndpoint): void;
}

export interface Agent {
  mgmtClass: number;
  classVersion: number;
  methods: ReadonlySet<number>;
}

export class SimEndpoint implements Transport {
  readonly kind = 'sim';
  /** The fabric copies a MAD into its own buffer as it is sent (SimFabric.endpointSend). */
  readonly copiesOnSend = true;
  /** Agent id: the high 32 bits of the TIDs of requests this endpoint sends. */
  readonly id: number;
  readonly nodeIdx: number;
  readonly portNum: number;
  private readonly host: EndpointHost;
  private readonly agents = new Map<number, Agent>();
  private handler: ReceiveHandler | undefined;
  private closed = false;
  /** MADs received while no handler was set (dropped) and MADs handed to the handler. */
  readonly counters = { sent: 0, received: 0, droppedNoHandler: 0 };

  constructor(host: EndpointHost, id: number, nodeIdx: number, portNum: number) {
    this.host = host;
    this.id = id;
    this.nodeIdx = nodeIdx;
    this.portNum = portNum;
  }

  get local(): LocalPortInfo {
    return this.host.endpointLocal(this);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  register(mgmtClass: number, classVersion: number, opts: AgentOptions = {}): void {
    if (this.closed) throw new TransportError('register on a closed simulated endpoint', 'register');
    if (!Number.isInteger(mgmtClass) || mgmtClass < 0 || mgmtClass > 0xff) {
      throw new TransportError(`management class ${String(mgmtClass)} is out of range 0..255`, 'register');
    }
    this.agents.set(mgmtClass, { mgmtClass, classVersion, methods: new Set(opts.methods ?? []) });
    this.host.endpointRegistered(this, mgmtClass);
  }

  agent(mgmtClass: number): Agent | undefined {
    return this.agents.get(mgmtClass);
  }

  /** True when this endpoint serves `method` of the class/version (receives unsolicited MADs). */
  serves(mgmtClass: number, classVersion: number, method: number): boolean {
    const a = this.agents.get(mgmtClass);
    return a !== undefined && a.classVersion === classVersion && a.methods.has(method);
  }

  send(mad: Uint8Array, addr: MadAddress): void {
    if (this.closed) throw new TransportError('send on a closed simulated endpoint', 'send');
    if (!(mad instanceof Uint8Array) || mad.length < 24) {
      throw new TransportError(`a MAD needs at least 24 bytes, got ${mad instanceof Uint8Array ? mad.length : typeof mad}`, 'send');
    }
    if (mad.length > MAD_SIZE) {
      throw new TransportError(`MAD of ${mad.length} bytes exceeds ${MAD_SIZE}: the simulated fabric does no RMPP, segment it first`, 'send');
    }
    const cls = mad[MGMT_CLASS]!;
    if (!this.agents.has(cls)) {
      throw new TransportError(`management class 0x${cls.toString(16).padStart(2, '0')} is not registered on this endpoint; call register() first`, 'send');
    }
    this.counters.sent++;
    this.host.endpointSend(this, mad, addr);
  }

  onReceive(handler: ReceiveHandler): void {
    this.handler = handler;
  }

  /** Called by the fabric. */
  deliver(mad: ReceivedMad): void {
    if (this.closed) return;
    if (!this.handler) {
      this.counters.droppedNoHandler++;
      return;
    }
    this.counters.received++;
    this.handler(mad);
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.handler = undefined;
      this.host.endpointClosed(this);
    }
    return Promise.resolve();
  }
}

/** The endpoints attached to the fabric, by port. */
export class EndpointTable {
  private readonly byPort = new Map<number, SimEndpoint[]>();
  private readonly caNames = new Map<number, string>();
  private readonly forcedSm = new Set<number>();
  private nextId = 1;

  /** A new endpoint at (node, port). */
  add(host: EndpointHost, nodeIdx: number, portNum: number, opts: AttachOptions): SimEndpoint {
    const ep = new SimEndpoint(host, this.nextId++, nodeIdx, portNum);
    this.caNames.set(ep.id, opts.caName ?? `sim${nodeIdx}`);
    const k = portKey(nodeIdx, portNum);
    const list = this.byPort.get(k) ?? [];
    list.push(ep);
    this.byPort.set(k, list);
    if (opts.isSm) this.forcedSm.add(ep.id);
    return ep;
  }

  remove(ep: SimEndpoint): void {
    const k = portKey(ep.nodeIdx, ep.portNum);
    const list = this.byPort.get(k);
    if (list) {
      const i = list.indexOf(ep);
      if (i >= 0) list.splice(i, 1);
      if (!list.length) this.byPort.delete(k);
    }
    this.caNames.delete(ep.id);
    this.forcedSm.delete(ep.id);
  }

  caName(ep: SimEndpoint): string | undefined {
    return this.caNames.get(ep.id);
  }

  all(): SimEndpoint[] {
    return [...this.byPort.values()].flat();
  }

  /** The port advertises IsSM: an endpoint there was attached with isSm, or registered an SMP
   * class as a server of Get, Set or Trap. */
  advertisesSm(nodeIdx: number, portNum: number): boolean {
    return (this.byPort.get(portKey(nodeIdx, portNum)) ?? []).some((e) => this.isSmEndpoint(e));
  }

  /** An SM at the port takes SMInfo: an endpoint serving Get or Set of an SMP class. */
  hasSm(nodeIdx: number, portNum: number): boolean {
    return (this.byPort.get(portKey(nodeIdx, portNum)) ?? []).some((e) =>
      [MgmtClass.SubnDirected, MgmtClass.SubnLid].some((c) => e.serves(c, 1, Method.Get) || e.serves(c, 1, Method.Set)),
    );
  }

  /** The endpoint a MAD arriving at (node, port) goes to: a response to the endpoint whose agent id
   * is in the TID's high 32 bits, a request to an endpoint serving its class, version and method. */
  receiver(nodeIdx: number, portNum: number, b: Uint8Array): SimEndpoint | undefined {
    const eps = this.byPort.get(portKey(nodeIdx, portNum));
    if (!eps) return undefined;
    const cls = b[MGMT_CLASS]!;
    const method = b[METHOD]!;
    if (isResponse(method)) {
      const id = tidHigh(b);
      for (const e of eps) if (e.id === id && e.agent(cls) !== undefined) return e;
      return undefined;
    }
    const ver = b[CLASS_VERSION]!;
    for (const e of eps) if (e.serves(cls, ver, method)) return e;
    return undefined;
  }

  private isSmEndpoint(ep: SimEndpoint): boolean {
    if (this.forcedSm.has(ep.id)) return true;
    for (const cls of [MgmtClass.SubnDirected, MgmtClass.SubnLid]) {
      const a = ep.agent(cls);
      if (a && (a.methods.has(Method.Get) || a.methods.has(Method.Set) || a.methods.has(Method.Trap))) return true;
    }
    return false;
  }
}

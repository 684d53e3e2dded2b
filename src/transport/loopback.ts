/** An in-memory hub of Transport endpoints for tests: MADs sent by one endpoint are delivered,
 * asynchronously and as copies, to the endpoint whose LID matches the destination (or to whatever
 * a custom `route` function picks, e.g. for directed-route SMPs to LID 0xffff). */
import { MadHeaderView, MgmtClass, isResponse } from '../wire/mad.js';
import { setTidHigh } from '../wire/builders.js';
import { RealClock, type Clock } from '../util/clock.js';
import type { LocalPortInfo, MadAddress, ReceiveHandler, ReceivedMad, Transport, AgentOptions } from './types.js';
import { TransportError } from './types.js';

export interface LoopbackHubOptions {
  /** Pick the destination endpoint for a MAD; default: the endpoint whose LID is `addr.lid`. */
  route?: (mad: Uint8Array, addr: MadAddress, from: LoopbackEndpoint) => LoopbackEndpoint | undefined;
  /** Hand undeliverable MADs back to the sender with status 110 (as ibsim does). Default true. */
  bounceUndeliverable?: boolean;
  /** 'microtask' (default, fastest) or 'immediate' (a deferral: lets I/O and timers interleave). */
  delivery?: 'microtask' | 'immediate';
  /** The clock whose `defer` schedules 'immediate' delivery (so virtual time orders it too).
   * Without one, the real clock's (a setImmediate turn). */
  clock?: Clock;
}

export interface LoopbackEndpointOptions {
  lid: number;
  nodeGuid?: bigint;
  portGuid?: bigint;
  caName?: string;
  portNum?: number;
  smLid?: number;
  /** Written into bits 32..63 of the TID of every request this endpoint sends, as libibumad and
   * ibsim do (agent id / client id). Responses are left alone (they echo the requester's TID). */
  tidHighBits?: number;
}

export interface LoopbackStats {
  delivered: number;
  bounced: number;
  /** Dropped because the destination had no agent registered for the class. */
  unregistered: number;
  /** Dropped silently (no route and bouncing off). */
  dropped: number;
}

const ETIMEDOUT = 110;

export class LoopbackEndpoint implements Transport {
  readonly kind = 'loopback';
  readonly local: LocalPortInfo;
  private handler: ReceiveHandler | undefined;
  private readonly classes = new Set<number>();
  private closed = false;
  constructor(
    private readonly hub: LoopbackHub,
    readonly opts: LoopbackEndpointOptions,
  ) {
    this.local = {
      caName: opts.caName ?? 'loop0',
      portNum: opts.portNum ?? 1,
      nodeGuid: opts.nodeGuid ?? BigInt(opts.lid),
      portGuid: opts.portGuid ?? BigInt(opts.lid),
      lid: opts.lid,
      smLid: opts.smLid ?? 0,
      state: 4,
      linkLayer: 'InfiniBand',
    };
  }
  get isClosed(): boolean {
    return this.closed;
  }
  register(mgmtClass: number, _classVersion: number, _opts?: AgentOptions): void {
    this.classes.add(mgmtClass);
  }
  hasClass(mgmtClass: number): boolean {
    return this.classes.has(mgmtClass);
  }
  send(mad: Uint8Array, addr: MadAddress): void {
    if (this.closed) throw new TransportError('loopback endpoint is closed', 'send');
    if (mad.length < 24) throw new TransportError(`MAD of ${mad.length} bytes is shorter than the 24-byte header`, 'send');
    const h = MadHeaderView.over(mad);
    if (!this.classes.has(h.mgmtClass)) {
      throw new TransportError(`no agent registered for management class 0x${h.mgmtClass.toString(16)}; call register() first`, 'send');
    }
    const copy = mad.slice();
    const hi = this.opts.tidHighBits;
    if (hi !== undefined && !isResponse(h.method)) setTidHigh(copy, hi);
    this.hub.enqueue(this, copy, addr);
  }
  onReceive(handler: ReceiveHandler): void {
    this.handler = handler;
  }
  /** @internal */
  deliver(m: ReceivedMad): void {
    if (!this.closed && this.handler) this.handler(m);
  }
  async close(): Promise<void> {
    this.closed = true;
    this.hub.remove(this);
  }
}

interface Queued {
  to: LoopbackEndpoint;
  mad: ReceivedMad;
}

export class LoopbackHub {
  private readonly byLid = new Map<number, LoopbackEndpoint>();
  private queue: Queued[] = [];
  private scheduled = false;
  readonly stats: LoopbackStats = { delivered: 0, bounced: 0, unregistered: 0, dropped: 0 };
  constructor(private readonly opts: LoopbackHubOptions = {}) {}

  endpoint(opts: LoopbackEndpointOptions): LoopbackEndpoint {
    if (this.byLid.has(opts.lid)) throw new TransportError(`loopback LID ${opts.lid} is already in use`, 'endpoint');
    const ep = new LoopbackEndpoint(this, opts);
    this.byLid.set(opts.lid, ep);
    return ep;
  }
  get(lid: number): LoopbackEndpoint | undefined {
    return this.byLid.get(lid);
  }
  /** @internal */
  remove(ep: LoopbackEndpoint): void {
    if (this.byLid.get(ep.local.lid) === ep) this.byLid.delete(ep.local.lid);
  }
  /** @internal */
  enqueue(from: LoopbackEndpoint, mad: Uint8Array, addr: MadAddress): void {
    const to = this.opts.route ? this.opts.route(mad, addr, from) : this.byLid.get(addr.lid);
    const cls = MadHeaderView.over(mad).mgmtClass;
    if (!to || to.isClosed) {
      if (this.opts.bounceUndeliverable ?? true) {
        this.stats.bounced++;
        this.push(from, { data: mad, addr, status: ETIMEDOUT });
      } else this.stats.dropped++;
      return;
    }
    if (!to.hasClass(cls)) {
      this.stats.unregistered++;
      return;
    }
    const smi = cls === MgmtClass.SubnLid || cls === MgmtClass.SubnDirected;
    const src: MadAddress = { lid: from.local.lid, qpn: smi ? 0 : 1, qkey: 0, sl: addr.sl ?? 0, pkeyIndex: addr.pkeyIndex ?? 0 };
    this.stats.delivered++;
    this.push(to, { data: mad, addr: src, status: 0 });
  }
  private realClock?: RealClock;
  private push(to: LoopbackEndpoint, mad: ReceivedMad): void {
    this.queue.push({ to, mad });
    if (this.scheduled) return;
    this.scheduled = true;
    if (this.opts.delivery !== 'immediate') queueMicrotask(this.drain);
    else (this.opts.clock ?? (this.realClock ??= new RealClock())).defer(this.drain);
  }
  private readonly drain = (): void => {
    this.scheduled = false;
    const q = this.queue;
    this.queue = [];
    for (const { to, mad } of q) to.deliver(mad);
  };
}

/**
 * Several subnets joined by IB routers on one in-process fabric (docs/routers.md): one ibsm (SM +
 * SA) per subnet, each with its own subnet prefix (model/subnets.ts), attached at the subnet's
 * first CA. After each heavy sweep of a subnet its SM writes its part of the routers' tables
 * (sm/router-tables.ts) and reads back what they reach; every other subnet's view of its routers is
 * read again (a router's reach changes when a neighbour subnet's tables do); each SA answers
 * inter-subnet PathRecords from its view (sa/inter-subnet.ts). Clients attach at any port.
 */
import { NodeType } from '../wire/mad.js';
import { formatGid } from '../wire/format.js';
import { cloneFabric, type Fabric } from '../model/fabric.js';
import { loadFabricSpec } from '../model/load.js';
import { subnetsOf, type RouterPortView, type SubnetPart } from '../model/subnets.js';
import { SimFabric, type SimNodeRef } from '../sim/fabric.js';
import { PacedClock } from '../util/paced-clock.js';
import { Logger } from '../util/log.js';
import { smpClientOf } from '../sm/smp-client.js';
import { RouterTables } from '../sm/router-tables.js';
import { interSubnetPaths } from '../sa/inter-subnet.js';
import { parsePrefixRoutes, type PrefixRoute } from '../sa/prefix-routes.js';
import { readFileSync } from 'node:fs';
import { attachSim, type Backend } from './backend.js';
import { fileLogSink, openSm, type IbsmSm, type OpenSmOptions } from './sm.js';
import { optionsFor } from './sm-config.js';
import { SimFabricError } from '../sim/fabric-types.js';

/** A subnet prefix as the first four groups of a GID (fec0:0000:0000:0001). */
export function formatPrefix(prefix: bigint): string {
  return formatGid(prefix << 64n).slice(0, 19);
}

export interface SubnetsOptions extends Omit<OpenSmOptions, 'sim' | 'backend' | 'attach' | 'guid' | 'umad' | 'subnetPrefix' | 'prefixRoutes'> {
  /** A topology file or generator spec (gen:subnets:...), or the fabric. */
  sim: string | Fabric;
  /** OpenSM's prefix-routes.conf, which every SA uses for prefixes no router reports. */
  prefixRoutes?: string;
}

/** One subnet: its part of the fabric, its SM+SA, what it knows of its routers. */
export interface RunningSubnet {
  part: SubnetPart;
  sm: IbsmSm;
  tables: RouterTables;
  routers: RouterPortView[];
}

/** A client port on the fabric (for SA queries, local or through a router). */
export interface SubnetClient extends Backend {
  subnet: RunningSubnet;
  /** The port's GID (its subnet's prefix and its GUID). */
  gid: bigint;
  node: number;
  port: number;
}

export class IbsmSubnets {
  /** Router programming runs one subnet at a time (a refresh of the others must not race it). */
  private chain: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    readonly sim: SimFabric,
    readonly fabric: Fabric,
    readonly subnets: RunningSubnet[],
    readonly log: Logger,
    private readonly prefixRoutes: readonly PrefixRoute[] | undefined,
    private readonly closeLog?: () => void,
  ) {
    subnets.forEach((s, i) => {
      s.sm.events.on('sweep', (st) => {
        if (st.kind === 'heavy' && this.started) this.queue(i);
      });
    });
  }
  private started = false;

  /** The first heavy sweep of every subnet, then the routers' tables of all of them. */
  async start(): Promise<void> {
    await Promise.all(this.subnets.map((s) => s.sm.start()));
    this.started = true;
    for (let i = 0; i < this.subnets.length; i++) this.queue(i);
    await this.settled();
    // a second round: a router's reach across several subnets needs every neighbour's tables
    await this.refreshAll();
  }

  /** Program subnet i's routers after the chain's work so far, then refresh the others' views. */
  private queue(i: number): void {
    this.chain = this.chain.then(() => this.program(i)).catch((e: unknown) => this.log.warn('router tables failed', { prefix: formatPrefix(this.subnets[i]!.part.prefix), error: (e as Error).message }));
  }

  private async program(i: number): Promise<void> {
    if (this.stopped) return;
    const s = this.subnets[i]!;
    const snap = s.sm.subnet.sm.current;
    if (!snap || s.sm.subnet.sm.state !== 'master') return;
    this.setRouters(s, await s.tables.program(snap));
    for (const o of this.subnets) if (o !== s) this.setRouters(o, await o.tables.refresh(o.routers, o.sm.subnet.sm.current));
  }

  private setRouters(s: RunningSubnet, views: RouterPortView[]): void {
    s.routers = views;
    s.sm.subnet.sa?.setInterSubnet(interSubnetPaths({ routers: views, prefixRoutes: this.prefixRoutes }));
  }

  /** Read every subnet's routers again. */
  async refreshAll(): Promise<void> {
    const run = this.chain.then(async () => {
      for (const s of this.subnets) this.setRouters(s, await s.tables.refresh(s.routers, s.sm.subnet.sm.current));
    });
    this.chain = run.catch(() => undefined);
    await run;
  }

  /** Resolves when the router programming queued so far is done. */
  async settled(): Promise<void> {
    // the chain may grow while we wait (a sweep queues more)
    for (;;) {
      const c = this.chain;
      await c;
      if (c === this.chain) return;
    }
  }

  /** A heavy sweep of every subnet (after a fabric change), then the routers' tables again. */
  async resweep(): Promise<void> {
    await Promise.all(this.subnets.map((s) => s.sm.subnet.sm.sweep('heavy')));
    await this.settled();
    await this.refreshAll();
  }

  /** The subnet a node is in (a router: the subnet of its port `port`). */
  subnetOf(ref: SimNodeRef, port?: number): RunningSubnet {
    const n = this.sim.node(ref);
    let idx = n.idx;
    if (n.type === NodeType.Router) {
      const p = this.fabric.nodes[n.idx]!.ports[port ?? 1]?.peer;
      if (!p) throw new SimFabricError(`router ${n.desc} port ${port ?? 1} has no cable: name the port of the subnet wanted`);
      idx = p.node;
    }
    const s = this.subnets.find((x) => x.part.nodes.includes(idx));
    if (!s) throw new SimFabricError(`node ${n.desc} is in no managed subnet (no CA of its subnet runs an SM)`);
    return s;
  }

  /** The subnet of a prefix. */
  subnetOfPrefix(prefix: bigint): RunningSubnet | undefined {
    return this.subnets.find((s) => s.part.prefix === prefix);
  }

  /** Attach a client (SA class) at a CA port. */
  client(ref: SimNodeRef, port?: number): SubnetClient {
    const n = this.sim.node(ref);
    const be = attachSim(this.sim, this.fabric, n.idx, port, { sa: true }, false);
    const pn = be.transport.local.portNum;
    const s = this.subnetOf(n.idx, pn);
    return Object.assign(be, { subnet: s, gid: (s.part.prefix << 64n) | be.transport.local.portGuid, node: n.idx, port: pn });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const s of this.subnets) await s.sm.stop();
    this.sim.close();
    this.closeLog?.();
  }
}

/** Build the fabric, one SM+SA per subnet (each with its prefix), not started. */
export async function openSubnets(o: SubnetsOptions): Promise<IbsmSubnets> {
  const fabric = typeof o.sim === 'object' ? o.sim : loadFabricSpec(o.sim, { seed: o.seed });
  const prefixRoutes = o.prefixRoutes ? parsePrefixRoutes(readFileSync(o.prefixRoutes, 'utf8'), o.prefixRoutes) : undefined;
  const parts = subnetsOf(fabric);
  if (!parts.length) throw new SimFabricError('the fabric has no subnet with a CA to run an SM on');
  // One time base for the fabric and its SMs (util/paced-clock.ts); attachSim uses the fabric's.
  const sim = new SimFabric(cloneFabric(fabric), { clock: new PacedClock(), seed: o.seed });
  const { rpc } = optionsFor('backend', o);
  const sink = !o.log && o.logFile ? fileLogSink(o.logFile, o.logMaxSizeMb) : undefined;
  const base = o.log ?? new Logger(sink, o.verbose ? 'debug' : 'info', o.logFormat ?? 'text');
  const subnets: RunningSubnet[] = [];
  for (const part of parts) {
    const log = base.child({ prefix: formatPrefix(part.prefix) });
    const backend = attachSim(sim, fabric, part.smNode, undefined, { sm: true, sa: true, ...(rpc ? { rpc } : {}) }, false);
    // one guid2lid file and one metrics port cannot serve several SMs: none here
    const sm = await openSm({ ...o, sim: undefined, backend, log, subnetPrefix: part.prefix, guid2lid: 'none', prefixRoutes: undefined, metricsPort: part.index === 0 ? o.metricsPort : undefined, metricsListen: part.index === 0 ? o.metricsListen : undefined, web: part.index === 0 ? o.web : undefined });
    subnets.push({ part, sm, tables: new RouterTables({ smp: smpClientOf(backend.rpc), log }), routers: [] });
  }
  return new IbsmSubnets(sim, fabric, subnets, base, prefixRoutes, sink?.close);
}

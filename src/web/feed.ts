/**
 * What the live web view shows, gathered from a running SM without touching it: the SM state and
 * sweeps, the fabric picture (view/topology.ts) of the current snapshot with the links and nodes
 * every earlier snapshot had and this one lacks drawn down and gone (a ViewMemory fed on every
 * sweep), port states (ports never cabled counted apart), routes per link, PerfMgr counters with
 * rates between its last two sweeps, and the last events (the Subnet's typed events, in a bounded
 * ring). Everything it returns is JSON-safe (GUIDs as 0x… strings). Read-only: it has no way to
 * act on the SM.
 */
import type { Subnet } from '../subnet.js';
import type { PerfMgr } from '../sm/perfmgr.js';
import { ERROR_COUNTERS, type CounterName, type CounterValues } from '../sm/perf-counters.js';
import { isSwitch } from '../model/fabric.js';
import { snapshotPorts, type Snapshot } from '../model/snapshot.js';
import { topologyJson, topologySvg, topologyView, viewMemory, type TopologyView, type ViewLink } from '../view/topology.js';
import { routesPerLink } from '../routing/incremental.js';
import { PORT_STATE_NAMES } from '../wire/mad.js';
import { PHYS_PORT_STATE_NAMES } from '../wire/sma.js';
import { TrapNumber } from '../wire/notice.js';
import type { LinkRef, PortRef } from '../events.js';
import { guidHex } from '../util/guid.js';
import { vportRows, vportsPerHca } from '../sm/vport-ops.js';

export interface WebSource {
  subnet: Subnet;
  perf?: PerfMgr;
  /** The SM's clock (virtual on the in-process fabric): PerfMgr rates are per second of it. */
  clock: { now(): number };
}

export interface WebFeedOptions {
  /** Events kept (the oldest dropped); default 200. */
  ringSize?: number;
  /** Rows of each table (ports not active, links, counters); default 200. */
  maxRows?: number;
  /** Wall-clock time of events (tests pass their own). */
  wallNow?: () => Date;
}

export interface WebEvent {
  /** Wall-clock time, ISO 8601. */
  at: string;
  kind: string;
  text: string;
}

/** One end of a link in the tables; `gone`: its node was not found by the last sweep. */
export interface WebLinkEnd {
  node: string;
  guid: string;
  port: number;
  gone?: boolean;
}

export interface WebLink {
  a: WebLinkEnd;
  b: WebLinkEnd;
  width?: string;
  speed?: string;
  routes: number;
  down?: boolean;
  bytesPerSecond?: { ab: number; ba: number };
}

/** A cabled port that is not Active (state from its PortInfo), or one of a node gone (state "Gone"). */
export interface WebPortRow {
  node: string;
  guid: string;
  port: number;
  lid?: number;
  state: string;
  phys: string;
  peer?: string;
}

export interface WebPerfPort {
  node: string;
  guid: string;
  port: number;
  lid: number;
  xmitBytes: number;
  rcvBytes: number;
  xmitPkts: number;
  rcvPkts: number;
  errors: Partial<Record<CounterName, number>>;
  rates?: { xmitBytesPerSecond: number; rcvBytesPerSecond: number; xmitPktsPerSecond: number; rcvPktsPerSecond: number; errorsPerSecond: number };
}

/** What /api/state answers and the page shows (page.ts renders it). */
export interface WebState {
  version: number;
  generatedAt: string;
  sm: {
    state: string;
    guid: string;
    priority: number;
    lid?: number;
    engine?: string;
    sweeps: { heavy: number; light: number };
    lastSweep?: { kind: string; ms: number; smps: number; at?: string };
    saRequests: number;
  };
  fabric?: {
    /** The heavy sweep of the snapshot pictured (the picture changes with it only). */
    sweep: number;
    nodes: number;
    switches: number;
    endPorts: number;
    maxLid: number;
    links: number;
    linksDown: number;
    /** Nodes an earlier sweep found and the last one did not (drawn greyed). */
    nodesGone: number;
  };
  ports?: {
    /** Ports with a cable now or at an earlier sweep, by PortInfo state. */
    total: number;
    byState: Record<string, number>;
    /** Ports of the nodes found that never had a cable (unused switch ports): not news. */
    unlinked: number;
    /** Cabled ports of nodes gone. */
    gone: number;
    notActive: WebPortRow[];
  };
  links?: { maxRoutes: number; meanRoutes: number; busiest: WebLink[]; down: WebLink[] };
  perf?: { sweeps: number; mads: number; failures: number; monitored: number; portsWithErrors: number; rateSeconds?: number; ports: WebPerfPort[] };
  /** SR-IOV vports (docs/vports.md), per HCA; absent on a fabric without virtualization. */
  vports?: { ports: number; vports: number; active: number; withLid: number; hcas: Array<{ node: string; guid: string; vports: number; active: number; withLid: number }> };
  events: WebEvent[];
}

const hex = (g: bigint): string => `0x${guidHex(g)}`;
const portText = (p: PortRef): string => `${p.nodeDescription} ${hex(p.nodeGuid)} port ${p.portNum}${p.lid ? ` LID ${p.lid}` : ''}`;
const linkText = (l: LinkRef): string => `${portText(l.a)} ↔ ${portText(l.b)}`;
const TRAP_NAMES: Record<number, string> = Object.fromEntries(Object.entries(TrapNumber).map(([k, v]) => [v, k]));

/** One PerfMgr sample: the backend clock time and each port's totals. */
interface PerfSample {
  at: number;
  totals: Map<string, CounterValues>;
}

const RATE_COUNTERS = ['xmitData', 'rcvData', 'xmitPkts', 'rcvPkts'] as const;

export class WebFeed {
  /** Bumped on every change a page should show (a sweep, an event, a PerfMgr sweep). */
  version = 0;
  private readonly ring: WebEvent[] = [];
  private readonly ringSize: number;
  private readonly maxRows: number;
  private readonly wallNow: () => Date;
  private readonly offs: Array<() => void> = [];
  private readonly listeners = new Set<() => void>();
  /** Every node and link the pictures showed, as last seen (see ViewMemory). */
  private readonly memory = viewMemory();
  private readonly views = new WeakMap<Snapshot, TopologyView>();
  private readonly svgs = new WeakMap<Snapshot, string>();
  private perfSamples: PerfSample[] = [];
  private lastSweepAt?: string;
  eventsSeen = 0;

  constructor(
    private readonly src: WebSource,
    o: WebFeedOptions = {},
  ) {
    this.ringSize = o.ringSize ?? 200;
    this.maxRows = o.maxRows ?? 200;
    this.wallNow = o.wallNow ?? (() => new Date());
    const ev = src.subnet.events;
    this.offs.push(
      ev.on('subnetUp', (e) => this.push('subnetUp', `SUBNET UP: ${e.stats.nodes} nodes, ${e.stats.switches} switches, ${e.stats.endPorts} end ports, max LID ${e.stats.maxLid}`)),
      ev.on('sweep', (s) => {
        // the picture of every new snapshot is made (once) whether a page looks or not: what it
        // has goes into the memory, so a host unplugged later is drawn as gone
        this.view();
        this.lastSweepAt = this.wallNow().toISOString();
        this.changed();
        if (s.kind === 'heavy' && (s.skippedNodes || s.failedWrites || s.skippedLinks)) this.push('sweep', `heavy sweep incomplete: ${s.skippedNodes} nodes and ${s.skippedLinks} links left out, ${s.failedWrites} writes failed`);
      }),
      ev.on('topologyChanged', (c) => {
        for (const n of c.nodesAdded) this.push('nodeAdded', `node added: ${n.description} ${hex(n.guid)} (${n.type})`);
        for (const n of c.nodesRemoved) this.push('nodeRemoved', `node removed: ${n.description} ${hex(n.guid)} (${n.type})`);
        for (const l of c.linksRemoved) this.push('linkDown', `link down: ${linkText(l)}`);
        for (const l of c.linksAdded) this.push('linkUp', `link up: ${linkText(l)}`);
      }),
      ev.on('portStateChanged', (c) => this.push('portState', `port ${c.from} → ${c.to}: ${portText(c.port)}`)),
      ev.on('vportsChanged', (c) => this.push(c.removed.length && !c.added.length ? 'vportsRemoved' : 'vports', `vports: ${c.added.length} added, ${c.removed.length} removed${[...c.added, ...c.removed].slice(0, 3).map((v) => `; ${v.port.nodeDescription} port ${v.port.portNum} vport ${v.index} ${hex(v.guid)}${v.lid ? ` LID ${v.lid}` : ''}`).join('')}`)),
      ev.on('trap', (t) => this.push('trap', `trap ${t.trapNumber}${TRAP_NAMES[t.trapNumber] ? ` (${TRAP_NAMES[t.trapNumber]})` : ''} from LID ${t.issuerLid}`)),
      ev.on('smStateChanged', (t) => this.push('smState', `SM ${t.from} → ${t.to}: ${t.reason}`)),
      ev.on('multicastGroupCreated', (g) => this.push('multicast', `multicast group created: MGID ${g.mgid.toString(16)} MLID 0x${g.mlid.toString(16)}`)),
      ev.on('multicastGroupDeleted', (g) => this.push('multicast', `multicast group deleted: MGID ${g.mgid.toString(16)} MLID 0x${g.mlid.toString(16)}`)),
      ev.on('healthChanged', (h) => {
        const end = (e: { guid: bigint; description: string; port: number }): string => `${e.description} ${hex(e.guid)}${e.port ? ` port ${e.port}` : ''}`;
        const both = (x: { a: Parameters<typeof end>[0]; b?: Parameters<typeof end>[0] }): string => `${end(x.a)}${x.b ? ` ↔ ${end(x.b)}` : ''}`;
        for (const m of h.found) this.push('health', `topology mismatch (${m.class}): ${both(m)}: expected ${m.expected}, found ${m.found}`);
        for (const m of h.gone) this.push('health', `topology mismatch gone (${m.class}): ${both(m)}`);
        for (const i of h.isolated) this.push('health', `isolated (${i.class}): ${both(i)}`);
        for (const i of h.released) this.push('health', `released (${i.class}): ${both(i)}`);
      }),
    );
  }

  /** Call `fn` after every change (the server pushes it to the pages); returns the unsubscribe. */
  onChange(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A PerfMgr sweep finished: keep its totals (the last two give the rates). */
  perfSwept(): void {
    const perf = this.src.perf;
    if (!perf) return;
    const totals = new Map<string, CounterValues>();
    for (const p of perf.monitored()) totals.set(`${p.nodeGuid}:${p.portNum}`, p.counters.totals);
    this.perfSamples = [...this.perfSamples.slice(-1), { at: this.src.clock.now(), totals }];
    this.changed();
  }

  /** The events kept, newest first. */
  events(): WebEvent[] {
    return [...this.ring].reverse();
  }

  close(): void {
    for (const off of this.offs.splice(0)) off();
    this.listeners.clear();
  }

  private push(kind: string, text: string): void {
    this.eventsSeen++;
    this.ring.push({ at: this.wallNow().toISOString(), kind, text });
    if (this.ring.length > this.ringSize) this.ring.splice(0, this.ring.length - this.ringSize);
    this.changed();
  }

  private changed(): void {
    this.version++;
    for (const fn of [...this.listeners]) {
      try {
        fn();
      } catch {
        /* a page's listener must not stop the SM */
      }
    }
  }

  /** The picture of the current snapshot (built once per snapshot), with the links and nodes
   * earlier ones had and it lacks drawn down and gone. */
  view(): TopologyView | undefined {
    const snap = this.src.subnet.sm.current;
    if (!snap) return undefined;
    let v = this.views.get(snap);
    if (!v) this.views.set(snap, (v = topologyView(snap.fabric, { routes: routesPerLink(snap.fabric, snap.routing), memory: this.memory, health: this.src.subnet.sm.health.state })));
    return v;
  }

  svg(): string | undefined {
    const snap = this.src.subnet.sm.current;
    const v = this.view();
    if (!snap || !v) return undefined;
    let s = this.svgs.get(snap);
    if (!s) this.svgs.set(snap, (s = topologySvg(v)));
    return s;
  }

  topologyJson(): unknown {
    const v = this.view();
    return v ? topologyJson(v) : undefined;
  }

  /** Everything the page shows but the picture. */
  state(): WebState {
    const subnet = this.src.subnet;
    const sm = subnet.sm;
    const snap = sm.current;
    const stats = sm.stats;
    const heavy = stats.filter((s) => s.kind === 'heavy').length;
    const last = stats.at(-1);
    const info = sm.smInfo();
    return {
      version: this.version,
      generatedAt: this.wallNow().toISOString(),
      sm: {
        state: sm.state,
        guid: hex(info.guid),
        priority: info.priority,
        lid: snap?.smLid,
        engine: snap?.routing.engine,
        sweeps: { heavy, light: stats.length - heavy },
        lastSweep: last ? { kind: last.kind, ms: last.ms, smps: last.smps, at: this.lastSweepAt } : undefined,
        saRequests: subnet.sa?.stats.received ?? 0,
      },
      fabric: snap ? this.fabricOf(snap) : undefined,
      ports: snap ? this.portsOf(snap) : undefined,
      links: this.linksOf(),
      perf: this.perfOf(),
      vports: this.vportsOf(),
      events: this.events(),
    };
  }

  /** The vports per HCA (the first maxRows HCAs), totals over all. */
  private vportsOf(): WebState['vports'] {
    const mgr = this.src.subnet.sm.vports;
    if (!mgr.ports.size) return undefined;
    const hcas = vportsPerHca(vportRows(mgr, this.src.subnet.sm.current?.fabric));
    const sum = (k: 'vports' | 'active' | 'withLid'): number => hcas.reduce((n, h) => n + h[k], 0);
    return { ports: mgr.ports.size, vports: sum('vports'), active: sum('active'), withLid: sum('withLid'), hcas: hcas.slice(0, this.maxRows).map((h) => ({ node: h.nodeDesc, guid: hex(h.nodeGuid), vports: h.vports, active: h.active, withLid: h.withLid })) };
  }

  private fabricOf(snap: Snapshot): WebState['fabric'] {
    const f = snap.fabric;
    const v = this.view()!;
    return {
      sweep: snap.sweep,
      nodes: f.nodes.length,
      switches: f.nodes.filter(isSwitch).length,
      endPorts: snapshotPorts(snap).endPorts.filter((e) => e.lid).length,
      maxLid: snap.maxLid,
      links: v.links.filter((l) => !l.down).length,
      linksDown: v.links.filter((l) => l.down).length,
      nodesGone: v.nodes.filter((n) => n.gone).length,
    };
  }

  private portsOf(snap: Snapshot): WebState['ports'] {
    const byState: Record<string, number> = {};
    const notActive: WebPortRow[] = [];
    let total = 0;
    let unlinked = 0;
    const v = this.view()!;
    // "id:port" of every port with a cable now or at an earlier sweep
    const cabled = new Set<string>();
    for (const l of this.memory.links.values()) cabled.add(`${l.a.node}:${l.a.port}`).add(`${l.b.node}:${l.b.port}`);
    snap.discovery.nodes.forEach((d, ni) => {
      const node = snap.fabric.nodes[ni]!;
      d.portInfo.forEach((pi, pn) => {
        if (!pi || (pn === 0 && isSwitch(node))) return;
        const fp = node.ports[pn];
        // a port that never had a cable (an unused switch port) is not news: counted apart
        if (!fp?.peer && !cabled.has(`${guidHex(node.guid)}:${pn}`)) {
          unlinked++;
          return;
        }
        total++;
        const state = PORT_STATE_NAMES[pi.portState] ?? String(pi.portState);
        byState[state] = (byState[state] ?? 0) + 1;
        if (state !== 'Active' && notActive.length < this.maxRows)
          notActive.push({
            node: node.desc,
            guid: hex(node.guid),
            port: pn,
            lid: isSwitch(node) ? node.ports[0]?.lid : fp?.lid,
            state,
            phys: PHYS_PORT_STATE_NAMES[pi.portPhysicalState] ?? String(pi.portPhysicalState),
            ...(fp?.peer ? { peer: `${snap.fabric.nodes[fp.peer.node]!.desc} port ${fp.peer.port}` } : {}),
          });
      });
    });
    // the cabled ports of the nodes gone: no PortInfo (the sweep did not reach them)
    let gone = 0;
    const desc = new Map(v.nodes.map((n) => [n.id, n]));
    for (const l of v.links) {
      if (!l.down) continue;
      for (const [e, o] of [[l.a, l.b], [l.b, l.a]] as const) {
        const n = desc.get(e.node);
        if (!n?.gone) continue;
        gone++;
        if (notActive.length < this.maxRows) notActive.push({ node: n.desc, guid: `0x${n.id}`, port: e.port, ...(n.lid ? { lid: n.lid } : {}), state: 'Gone', phys: 'not found by the last sweep', peer: `${desc.get(o.node)?.desc ?? o.node} port ${o.port}` });
      }
    }
    return { total, byState, unlinked, gone, notActive };
  }

  private linksOf(): WebState['links'] {
    const v = this.view();
    if (!v) return undefined;
    const nodes = new Map(v.nodes.map((n) => [n.id, n]));
    const rate = this.rates();
    const row = (l: ViewLink): WebLink => {
      const end = (e: ViewLink['a']): WebLinkEnd => {
        const n = nodes.get(e.node);
        return { node: n?.desc ?? e.node, guid: `0x${e.node}`, port: e.port, ...(n?.gone ? { gone: true } : {}) };
      };
      const ra = rate.get(`${BigInt(`0x${l.a.node}`)}:${l.a.port}`);
      const rb = rate.get(`${BigInt(`0x${l.b.node}`)}:${l.b.port}`);
      const bytes = ra || rb ? { bytesPerSecond: { ab: ra ? ra.xmitData * 4 : rb!.rcvData * 4, ba: rb ? rb.xmitData * 4 : ra!.rcvData * 4 } } : {};
      return { a: end(l.a), b: end(l.b), ...(l.width ? { width: l.width } : {}), ...(l.speed ? { speed: l.speed } : {}), routes: l.routes, ...(l.down ? { down: true } : {}), ...bytes };
    };
    const up = v.links.filter((l) => !l.down);
    return {
      maxRoutes: v.maxRoutes,
      meanRoutes: Number(v.meanRoutes.toFixed(1)),
      busiest: [...up].sort((x, y) => y.routes - x.routes).slice(0, Math.min(25, this.maxRows)).map(row),
      down: v.links.filter((l) => l.down).slice(0, this.maxRows).map(row),
    };
  }

  /** Per second of the SM's clock, between the last two PerfMgr sweeps, by "guid:port". */
  private rates(): Map<string, Record<(typeof RATE_COUNTERS)[number] | 'errors', number>> {
    const out = new Map<string, Record<(typeof RATE_COUNTERS)[number] | 'errors', number>>();
    const [a, b] = this.perfSamples;
    if (!a || !b || b.at <= a.at) return out;
    const dt = (b.at - a.at) / 1000;
    for (const [k, now] of b.totals) {
      const was = a.totals.get(k);
      if (!was) continue;
      const r = Object.fromEntries(RATE_COUNTERS.map((n) => [n, Number(now[n] - was[n]) / dt])) as Record<(typeof RATE_COUNTERS)[number], number>;
      let errs = 0n;
      for (const n of ERROR_COUNTERS) errs += now[n] - was[n];
      out.set(k, { ...r, errors: Number(errs) / dt });
    }
    return out;
  }

  private perfOf(): WebState['perf'] {
    const perf = this.src.perf;
    if (!perf) return undefined;
    const rate = this.rates();
    const ports = [...perf.monitored()].map((p) => {
      const k = `${p.nodeGuid}:${p.portNum}`;
      const errors = Object.fromEntries([...ERROR_COUNTERS].filter((n) => p.counters.totals[n] > 0n).map((n) => [n, Number(p.counters.totals[n])])) as Partial<Record<CounterName, number>>;
      const r = rate.get(k);
      return {
        node: p.nodeDesc,
        guid: hex(p.nodeGuid),
        port: p.portNum,
        lid: p.lid,
        xmitBytes: Number(p.counters.totals.xmitData) * 4,
        rcvBytes: Number(p.counters.totals.rcvData) * 4,
        xmitPkts: Number(p.counters.totals.xmitPkts),
        rcvPkts: Number(p.counters.totals.rcvPkts),
        errors,
        ...(r ? { rates: { xmitBytesPerSecond: r.xmitData * 4, rcvBytesPerSecond: r.rcvData * 4, xmitPktsPerSecond: r.xmitPkts, rcvPktsPerSecond: r.rcvPkts, errorsPerSecond: r.errors } } : {}),
      };
    });
    const withErrors = ports.filter((p) => Object.keys(p.errors).length > 0);
    const traffic = (p: (typeof ports)[number]): number => (p.rates ? p.rates.xmitBytesPerSecond + p.rates.rcvBytesPerSecond : p.xmitBytes + p.rcvBytes);
    const busiest = ports.filter((p) => !Object.keys(p.errors).length).sort((x, y) => traffic(y) - traffic(x));
    return {
      sweeps: perf.totals.sweeps,
      mads: perf.totals.mads,
      failures: perf.totals.failures,
      monitored: ports.length,
      portsWithErrors: withErrors.length,
      rateSeconds: this.perfSamples.length === 2 ? (this.perfSamples[1]!.at - this.perfSamples[0]!.at) / 1000 : undefined,
      ports: [...withErrors, ...busiest].slice(0, this.maxRows),
    };
  }
}

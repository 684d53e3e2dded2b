/** The composition root: an SM and its SA on one port, over one MadRpc. Used by `ibsm run`,
 * `ibsm query --sim` and the tests, so the wiring exists once. */
import { SA_QKEY } from './wire/sa.js';
import type { NoticeSmp } from './wire/notice.js';
import type { MadRpc } from './rpc/madrpc.js';
import { SubnetManager, type SmOptions, type SweepStats } from './sm/sm.js';
import { portKind, snapshotPorts, type Snapshot } from './model/snapshot.js';
import { installSmHandlers } from './sm/handlers.js';
import { PartitionPlan, partitionGroups } from './model/partitions.js';
import { formatGid } from './wire/format.js';
import { DEFAULT_GID_PREFIX, NodeType, SmpAttr } from './wire/mad.js';
import { SaEngine } from './sa/engine.js';
import { SaServer, coreSaHandlers, type SaServerOptions } from './sa/server.js';
import { MulticastManager } from './sa/multicast.js';
import { ServiceRegistry } from './sa/services.js';
import { InformManager } from './sa/inform.js';
import { AliasGuids } from './sa/guidinfo.js';
import { GUIDInfo } from './wire/sma.js';
import { exportSaState, SyncMirror, SyncSource } from './sa/sync.js';
import { pullSync, registerSync, serveSync, SYNC_SERVICE_ID, SYNC_SERVICE_NAME } from './sa/sync-agent.js';
import { SaClient } from './sa/client.js';
import { SaAttr, ServiceRecord, SERVICE_LEASE_INFINITE } from './wire/sa.js';
import type { SaContext } from './sa/types.js';
import type { QosPolicy, QosVlSettings } from './model/qos-policy.js';
import { diffPortStates, diffTopology, isEmptyChange, TypedEmitter, type SubnetEvents } from './events.js';
import type { SaLimits } from './sa/limits.js';

const SA_ATTR_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(SaAttr).map(([k, v]) => [v, k]));

export interface SubnetOptions extends Omit<SmOptions, 'multicastGroups' | 'onSnapshot'> {
  rpc: MadRpc;
  /** The SM/SA port's GUID. */
  portGuid: bigint;
  /** Serve the SA (default true). */
  sa?: boolean;
  /** Keep the SA's state in step with the other ibsm SMs (sa/sync.ts; default true). */
  saSync?: boolean;
  saServer?: SaServerOptions;
  /** Bounds on the SA state a requester can grow (sa/limits.ts; defaults there). */
  saLimits?: Partial<SaLimits>;
  /** MCMember joins and leaves for another port from any port of the partition (OpenSM's way);
   * default false: only from a trusted requester (sa/multicast.ts MulticastOptions.proxyJoins). */
  saProxyJoins?: boolean;
  /** The QoS policy (qos-policy.conf): PathRecord SLs and limits; ClassPortInfo IsQoSSupported. */
  qos?: QosPolicy;
  /** OpenSM's qos_* VL settings: the SM programs SL2VL/VLArbitration from them (reaches the SM
   * through the options spread below). */
  qosVl?: QosVlSettings;
}

export class Subnet {
  readonly sm: SubnetManager;
  readonly engine: SaEngine;
  readonly multicast: MulticastManager;
  readonly services: ServiceRegistry;
  readonly inform: InformManager;
  /** Alias GUIDs clients set through GUIDInfoRecord; the SM writes them into the ports' GUIDInfo. */
  readonly aliases: AliasGuids;
  readonly sa?: SaServer;
  private ctx?: SaContext;
  /** End ports of the last sweep: port GUID → GID. */
  private knownPorts = new Map<bigint, bigint>();
  private readonly offHandlers: () => void;
  /** SA state sync: what this SM serves as master, what it mirrors as standby. */
  readonly syncSource = new SyncSource();
  readonly syncMirror = new SyncMirror();
  private offSync?: () => void;
  /** The SA state came from the previous master (a failover or handover with sync). */
  private restored = false;
  private readonly qosPolicy?: QosPolicy;
  private qosSlConflictLogged = false;
  /** Typed events (events.ts): subnet up, sweeps, topology and port-state changes, traps, SM
   * state, multicast groups, SA requests. */
  readonly events = new TypedEmitter<SubnetEvents>();
  private prevSnapshot?: Snapshot;
  private upEmitted = false;

  constructor(private readonly o: SubnetOptions) {
    const { rpc, log } = o;
    this.events.onListenerError = (ev, e) => log.warn('event listener failed', { event: String(ev), error: (e as Error).message });
    this.qosPolicy = o.qos?.withPartitions(o.partitions ?? PartitionPlan.defaultPlan());
    for (const w of this.qosPolicy?.warnings ?? []) log.warn('QoS policy', { note: w });
    this.inform = new InformManager({
      send: (lid, qpn, mad) => rpc.request(mad, { lid, qpn, qkey: SA_QKEY }, { retries: 0 }).then(() => undefined),
      onReportFailed: (sub, e) => log.from(sub.lid).warn('report not delivered', { subscriberLid: sub.lid, error: (e as Error).message }),
      limits: o.saLimits,
    });
    this.multicast = new MulticastManager({ traps: this.inform, limits: o.saLimits, proxyJoins: o.saProxyJoins ? 'partition' : 'trusted' });
    this.multicast.onGroupsChanged((e) => {
      if (e.kind === 'created') this.events.emit('multicastGroupCreated', { mgid: e.mgid, mlid: e.mlid });
      else if (e.kind === 'deleted') this.events.emit('multicastGroupDeleted', { mgid: e.mgid, mlid: e.mlid });
    });
    // The groups partitions.conf names (IPoIB broadcast groups, mgid= lines) exist before the SA
    // answers its first query, as under OpenSM: IPoIB joins its broadcast group without creating it.
    const pg = partitionGroups(o.partitions ?? PartitionPlan.defaultPlan());
    for (const w of pg.warnings) log.warn('partitions.conf multicast group skipped', { reason: w });
    for (const spec of pg.groups) {
      try {
        const g = this.multicast.createWellKnown(spec);
        log.info('multicast group created', { mgid: formatGid(g.mgid), mlid: `0x${g.mlid.toString(16)}`, pkey: `0x${spec.pkey.toString(16)}`, from: spec.source });
      } catch (e) {
        log.error('multicast group not created', { mgid: formatGid(spec.mgid), from: spec.source, error: (e as Error).message });
      }
    }
    this.services = new ServiceRegistry({ limits: o.saLimits });
    this.aliases = new AliasGuids({
      onChange: (guid, block, guids) => {
        this.writeGuidInfo(guid, block, guids);
        // answers that resolved GIDs (the PathRecord answer cache) belong to the old aliases
        if (this.ctx) this.sa?.setContext((this.ctx = this.makeContext(this.ctx.snapshot)));
      },
    });
    // RespTimeValue 16 (268 ms): the SA answers within milliseconds; OpenSM's value for its 200 ms default.
    this.engine = new SaEngine({ respTimeValue: 16, qos: o.qos !== undefined });
    for (const h of coreSaHandlers()) this.engine.register(h);
    this.engine.register(this.multicast);
    this.engine.register(this.services);
    this.engine.register(this.inform);

    const sync = o.saSync !== false && registerSync(rpc);
    if (o.saSync !== false && !sync) log.warn('SA state sync unavailable: the transport refused its vendor class; a failover loses SA state');
    this.sm = new SubnetManager({
      ...o,
      multicastGroups: (snap) => this.multicast.mftGroupsOf(snap),
      onSnapshot: (snap) => this.onSnapshot(snap),
      // A standby that never pulls our state does not sync (OpenSM): the controller hands it the
      // subnet after a grace period; an ibsm standby only once it is current.
      standbySync: (guid) => {
        if (!this.syncSource.knows(guid)) return 'unknown';
        this.syncSource.update(this.exportState());
        return this.syncSource.isCurrent(guid) ? 'current' : 'behind';
      },
      onMasterPolled: sync ? (m) => this.pull(m) : undefined,
      stateKept: () => this.restored,
      onStateChange: (t) => {
        // Only the master's SA answers; a standby's drops SA requests (OpenSM, C15-0.1.3).
        this.sa?.setActive(t.to === 'master' || t.to === 'discovering');
        // Taking over from a master whose state we mirror: groups, services, subscriptions, LIDs.
        if (t.from === 'standby' && t.to === 'discovering') this.restoreMirror();
        if (t.to === 'master' && sync) this.advertiseSync();
        o.onStateChange?.(t);
        this.events.emit('smStateChanged', t);
      },
      onSweep: (stats) => {
        o.onSweep?.(stats);
        this.events.emit('sweep', stats);
        if (stats.kind === 'heavy' && !this.upEmitted && this.sm.current) {
          this.upEmitted = true;
          this.events.emit('subnetUp', { stats, snapshot: this.sm.current });
        }
      },
    });
    if (sync) {
      this.offSync = serveSync(rpc, this.syncSource, {
        smKey: o.smKey ?? 0n,
        active: () => this.sm.state === 'master',
        refresh: () => this.syncSource.update(this.exportState()),
        onError: (e, m) => log.from(m.addr.lid).warn('SA state not sent to a standby', { lid: m.addr.lid, error: (e as Error).message }),
      });
    }
    this.multicast.onGroupsChanged(() => this.multicastChanged());
    this.offHandlers = installSmHandlers(rpc, this.sm, {
      portGuid: o.portGuid,
      mkey: o.mkey,
      log,
      onNotice: (notice: NoticeSmp) => {
        this.events.emit('trap', notice);
        if (this.ctx) void this.inform.forwardTrap(notice, this.ctx);
      },
    });
    // The SA agent registers at once (a MAD for an unregistered class kills an ibsim client) and
    // answers BUSY until the first sweep gives it a context.
    if (o.sa !== false) {
      // Answer in the same event-loop turn the requests arrived in (a microtask after the receive
      // batch): a setImmediate per batch added a loop turn to every SA round trip.
      this.sa = new SaServer(rpc, this.engine, {
        log,
        schedule: queueMicrotask,
        limits: o.saLimits,
        ...o.saServer,
        onServed: (e) => {
          o.saServer?.onServed?.(e);
          if (this.events.listenerCount('saRequest')) this.events.emit('saRequest', { ...e, attribute: SA_ATTR_NAMES[e.attrId] ?? `0x${e.attrId.toString(16).padStart(4, '0')}` });
        },
      });
      this.sa.start();
    }
  }

  /** Group changes batched into MFT updates: at most one running and one pending (a flood of
   * joins costs one update per round, not one per join). */
  private mcastRunning = false;
  private mcastPending = false;
  private multicastChanged(): void {
    if (this.mcastRunning) {
      this.mcastPending = true;
      return;
    }
    this.mcastRunning = true;
    void this.sm
      .updateMulticast()
      .catch((e: unknown) => this.o.log.error('multicast forwarding update failed', { error: (e as Error).message }))
      .finally(() => {
        this.mcastRunning = false;
        if (this.mcastPending) {
          this.mcastPending = false;
          this.multicastChanged();
        }
      });
  }

  /** The SA state as sync entries (with the GUID→LID map of the current snapshot). */
  exportState(): ReturnType<typeof exportSaState> {
    const lids = new Map<bigint, { base: number; lmc: number }>();
    const snap = this.sm.current;
    if (snap) for (const ep of snapshotPorts(snap).endPorts) if (ep.lid) lids.set(ep.guid, { base: ep.lid, lmc: ep.lmc });
    return exportSaState(this.multicast, this.services, this.inform, this.o.clock.now(), lids, this.aliases);
  }

  /** Masters known to serve pulls (true) or not (false, with when that was seen). */
  private readonly syncCapable = new Map<bigint, { ok: boolean; at: number }>();

  /** Does the master at `lid` serve SA state pulls? Its SA holds the marker ServiceRecord. */
  private async servesSync(m: { guid: bigint; lid: number }): Promise<boolean> {
    const now = this.o.clock.now();
    const known = this.syncCapable.get(m.guid);
    if (known && (known.ok || now - known.at < 10_000)) return known.ok;
    const sa = new SaClient(this.o.rpc, { saLid: m.lid, smKey: this.o.smKey ?? 0n });
    const recs = await sa.getTable(SaAttr.ServiceRecord, ServiceRecord, { serviceId: SYNC_SERVICE_ID }, ServiceRecord.mask('serviceId'));
    const ok = recs.some((r) => (r.serviceGid & 0xffff_ffff_ffff_ffffn) === m.guid);
    this.syncCapable.set(m.guid, { ok, at: now });
    return ok;
  }

  /** As master: the marker ServiceRecord that tells standbys this SA serves pulls. */
  private advertiseSync(): void {
    const prefix = this.o.gidPrefix ?? DEFAULT_GID_PREFIX;
    this.services.restore({ ...ServiceRecord.decode(new Uint8Array(ServiceRecord.byteLength)), serviceId: SYNC_SERVICE_ID, serviceGid: (prefix << 64n) | this.o.portGuid, servicePKey: 0xffff, serviceLease: SERVICE_LEASE_INFINITE, serviceName: SYNC_SERVICE_NAME }, this.o.clock.now(), { hidden: true });
  }

  private async pull(m: { guid: bigint; lid?: number }): Promise<void> {
    if (!m.lid || !(await this.servesSync({ guid: m.guid, lid: m.lid }))) return;
    const u = await pullSync(this.o.rpc, m.lid, this.o.smKey ?? 0n, this.o.portGuid, this.syncMirror);
    if (u.changes.length) this.o.log.debug('SA state pulled', { master: m.guid, seq: u.seq, full: u.full, changes: u.changes.length });
  }

  private restoreMirror(): void {
    if (!this.syncMirror.entries.size) return;
    const n = this.syncMirror.restore(this.multicast, this.services, this.inform, this.o.clock.now(), this.aliases);
    this.sm.adoptLids(this.syncMirror.lids());
    this.o.log.info('SA state restored', { seq: this.syncMirror.seq, ...n });
    this.restored = true;
  }

  /** The SA's view; `now` reads the clock at each use so leases expire between sweeps. */
  private makeContext(snap: Snapshot): SaContext {
    const clock = this.o.clock;
    const sm = this.sm;
    const partitions = this.o.partitions ?? PartitionPlan.defaultPlan();
    return {
      snapshot: snap,
      partitions,
      qos: this.qosPolicy,
      smPortGuid: this.o.portGuid,
      smKey: this.o.smKey ?? 0n,
      aliases: this.aliases,
      get now() {
        return clock.now();
      },
      tables: {
        pkeys: (node, port) => {
          const n = snap.fabric.nodes[node];
          const p = n?.ports[port];
          if (!n || !p) return undefined;
          const self = node === snap.discovery.smNode && port === snap.discovery.smPort;
          return partitions.pkeysFor(p.guid, portKind(n.type), self);
        },
        sl2vl: () => snap.routing.sl2vl,
        mft: (node) => {
          const n = snap.fabric.nodes[node];
          return n ? [...sm.mftEntries(n.guid)] : [];
        },
      },
      get smInfo() {
        const i = sm.smInfo();
        return { actCount: i.actCount, priority: i.priority, smState: i.smState };
      },
    };
  }

  private onSnapshot(snap: Snapshot): void {
    if (this.qosPolicy?.setsSl && snap.routing.sl && !this.qosSlConflictLogged) {
      // A layered engine's SLs keep its routes deadlock-free: they win over the policy's.
      this.qosSlConflictLogged = true;
      this.o.log.warn('QoS policy SLs not used for PathRecords: the routing engine assigns SLs', { engine: snap.routing.engine });
    }
    const ctx = this.makeContext(snap);
    this.ctx = ctx;
    this.sa?.setContext(ctx);
    // Ports that appeared or left since the last sweep: traps 64/65 to subscribers, memberships dropped.
    const now = new Map<bigint, bigint>();
    for (const ep of snapshotPorts(snap).endPorts) {
      if (!ep.lid) continue;
      const prefix = snap.discovery.nodes[ep.node]!.portInfo[ep.port]?.gidPrefix || DEFAULT_GID_PREFIX;
      now.set(ep.guid, (prefix << 64n) | ep.guid);
    }
    if (this.knownPorts.size) {
      for (const [g, gid] of now) if (!this.knownPorts.has(g)) void this.inform.gidInService(gid, ctx);
      for (const [g, gid] of this.knownPorts) {
        if (!now.has(g)) {
          void this.inform.gidOutOfService(gid, ctx);
          this.multicast.removePort(g, ctx);
        }
      }
    }
    this.knownPorts = now;
    const prev = this.prevSnapshot;
    this.prevSnapshot = snap;
    if (prev) {
      const change = diffTopology(prev, snap);
      if (!isEmptyChange(change)) this.events.emit('topologyChanged', change);
      for (const c of diffPortStates(prev, snap)) this.events.emit('portStateChanged', c);
    }
    // A port's GUIDInfo does not survive its reset: write every alias block again after a sweep.
    this.aliases.prune(new Set(now.keys()));
    for (const b of this.aliases.blocks()) this.writeGuidInfo(b.portGuid, b.block, b.guids);
  }

  /** SubnSet(GUIDInfo) of one block of an end port's alias GUIDs, through its DR path. */
  private writeGuidInfo(portGuid: bigint, block: number, guids: readonly bigint[]): void {
    const snap = this.ctx?.snapshot;
    const ep = snap && snapshotPorts(snap).byGuid.get(portGuid);
    if (!snap || !ep) return;
    const d = snap.discovery.nodes[ep.node]!;
    const path = d.portPaths[ep.port] ?? d.path;
    this.o.smp.setDr(path, SmpAttr.GUIDInfo, block, GUIDInfo.encode({ guids: [...guids] })).catch((e: unknown) =>
      this.o.log.warn('alias GUIDs not written', { node: snap.fabric.nodes[ep.node]!.desc, guid: portGuid, port: ep.port, lid: ep.lid, block, error: (e as Error).message }),
    );
  }

  /** First heavy sweep (the SA answers from its end on). Resolves at SUBNET UP. */
  start(): Promise<SweepStats> {
    return this.sm.start();
  }

  stop(): void {
    this.offSync?.();
    this.sm.stop();
    this.sa?.stop();
    this.offHandlers();
  }
}

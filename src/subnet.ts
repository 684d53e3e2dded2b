/** The composition root: an SM and its SA on one port, over one MadRpc. Used by `ibsm run`,
 * `ibsm query --sim` and the tests, so the wiring exists once. */
import { SA_QKEY } from './wire/sa.js';
import type { NoticeSmp } from './wire/notice.js';
import type { MadRpc } from './rpc/madrpc.js';
import { SubnetManager, type SmOptions, type SweepStats } from './sm/sm.js';
import { fabricFingerprint, portKind, snapshotPorts, type Snapshot } from './model/snapshot.js';
import { installSmHandlers } from './sm/handlers.js';
import { apply } from './sm/apply.js';
import type { SmpWrite } from './sm/programmed.js';
import { PartitionPlan, partitionGroups } from './model/partitions.js';
import { formatGid } from './wire/format.js';
import { DEFAULT_GID_PREFIX, NodeType, SmpAttr } from './wire/mad.js';
import { SaEngine } from './sa/engine.js';
import { SaServer, coreSaHandlers, type SaServerOptions } from './sa/server.js';
import { MulticastManager } from './sa/multicast.js';
import { ServiceRegistry } from './sa/services.js';
import { InformManager } from './sa/inform.js';
import { AliasGuids } from './sa/guidinfo.js';
import { DEFAULT_SM_KEY, GUIDInfo, SmState } from './wire/sma.js';
import { exportSaState, SyncMirror, SyncSource } from './sa/sync.js';
import { isolationOf, isolationRow, type KeptIsolation } from './sm/health-store.js';
import { pullSync, registerSync, serveSync, SYNC_SERVICE_ID, SYNC_SERVICE_NAME } from './sa/sync-agent.js';
import { SaClient } from './sa/client.js';
import { SaAttr, ServiceRecord, SERVICE_LEASE_INFINITE } from './wire/sa.js';
import type { SaContext } from './sa/types.js';
import type { QosPolicy, QosVlSettings } from './model/qos-policy.js';
import { diffPortStates, diffTopology, healthChangeOf, isEmptyChange, TypedEmitter, type ConfigReload, type SubnetEvents } from './events.js';
import { VPortTracker } from './events.js';
import { vportRows } from './sm/vport-ops.js';
import type { SaLimits } from './sa/limits.js';

const SA_ATTR_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(SaAttr).map(([k, v]) => [v, k]));
/** A master found not to serve SA state pulls is asked again after this long (it may have been an
 * ibsm SA not yet up, or the master changed program under the same port). */
const SYNC_RECHECK_MS = 60_000;

export interface SubnetOptions extends Omit<SmOptions, 'multicastGroups' | 'onSnapshot'> {
  rpc: MadRpc;
  /** The SM/SA port's GUID. */
  portGuid: bigint;
  /** Serve the SA (default true). */
  sa?: boolean;
  /** The SA_Key (default OpenSM's, 0x1): what a trusted SA request carries in its SM_Key field. */
  saKey?: bigint;
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

/** QoS is on: a qos-policy.conf or OpenSM's qos_* VL settings. */
const qosOn = (c: Pick<SubnetOptions, 'qos' | 'qosVl'>): boolean => c.qos !== undefined || c.qosVl !== undefined;

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
  /** This SM handed the subnet over and its SA still answers until the new master does. */
  private servingAfterHandover = false;
  /** The SA state came from the previous master (a failover or handover with sync). */
  private restored = false;
  private qosPolicy?: QosPolicy;
  private qosSlConflictLogged = false;
  /** Typed events (events.ts): subnet up, sweeps, topology and port-state changes, traps, SM
   * state, multicast groups, SA requests. */
  readonly events = new TypedEmitter<SubnetEvents>();
  private prevSnapshot?: Snapshot;
  private upEmitted = false;
  /** vport hook: the vports last reported (event vportsChanged) and the manager's version then. */
  private readonly vportTracker = new VPortTracker();
  private vportVersion = -1;

  /** This SM's SM_Key (OpenSM's default unless configured). */
  private readonly smKey: bigint;
  /** This SA's SA_Key (OpenSM's default unless configured). */
  private readonly saKey: bigint;

  constructor(private readonly o: SubnetOptions) {
    this.wallOffset = Date.now() - o.clock.now(); // health hook
    this.smKey = o.smKey ?? DEFAULT_SM_KEY;
    this.saKey = o.saKey ?? DEFAULT_SM_KEY;
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
    const pg = this.configGroups(o);
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
      onMasterPolled: async (m) => {
        // The SM this one handed over to masters now: from here on only its SA answers.
        if (this.servingAfterHandover && m.state === SmState.Master) {
          this.servingAfterHandover = false;
          this.sa?.setActive(false);
        }
        if (sync) await this.pull(m);
      },
      // Handed the subnet while discovering: the SA state of the SM that handed it over.
      onHandedOver: sync
        ? async (m) => {
            await this.pull({ guid: m.guid, lid: m.lid });
            this.restoreMirror();
          }
        : undefined,
      stateKept: () => this.restored,
      masterView: () => this.syncMirror.topology(),
      onStateChange: (t) => {
        // Only the master's SA answers; a standby's drops SA requests (OpenSM, C15-0.1.3). One
        // that just handed over answers (and serves its state to the new master) until the new
        // master answers its poll as MASTER: the clients' MasterSMLID still names it till then.
        // A master that stops hands over first (sm.ts handOverOnStop) and serves likewise until it
        // exits: the new master pulls the latest state before it acknowledges.
        this.servingAfterHandover = (t.to === 'standby' && t.reason === 'handover') || (t.from === 'master' && t.to === 'notActive' && t.reason === 'stopped');
        this.sa?.setActive(t.to === 'master' || t.to === 'discovering' || this.servingAfterHandover);
        // Taking over from a master whose state we mirror: groups, services, subscriptions, LIDs.
        if (t.from === 'standby' && t.to === 'discovering') this.restoreMirror();
        if (t.to === 'master' && sync) this.advertiseSync();
        o.onStateChange?.(t);
        this.events.emit('smStateChanged', t);
      },
      // (always: a reload may give the SM an expected topology later)
      topology: {
        ...o.topology,
        onHealth: (c) => {
          o.topology?.onHealth?.(c);
          this.events.emit('healthChanged', healthChangeOf(c));
        },
      },
      onSweep: (stats) => {
        o.onSweep?.(stats);
        this.emitVportChanges();
        this.events.emit('sweep', stats);
        if (stats.kind === 'heavy' && !this.upEmitted && this.sm.current) {
          this.upEmitted = true;
          this.events.emit('subnetUp', { stats, snapshot: this.sm.current });
        }
      },
    });
    if (sync) {
      this.offSync = serveSync(rpc, this.syncSource, {
        smKey: this.smKey,
        active: () => this.sm.state === 'master' || this.servingAfterHandover,
        refresh: () => this.syncSource.update(this.exportState()),
        onError: (e, m) => log.from(m.addr.lid).warn('SA state not sent to a standby', { lid: m.addr.lid, error: (e as Error).message }),
      });
    }
    // Group changes batched into MFT updates by the controller: at most one running and one
    // pending (a flood of joins costs one update per round, not one per join).
    this.multicast.onGroupsChanged(() => this.sm.multicastChanged());
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

  /** The multicast groups partitions.conf names, its notes logged. QoS on (a policy, or --qos /
   * `qos TRUE`: qosVl): a group's sl= is used, as OpenSM's with qos. */
  private configGroups(c: Pick<SubnetOptions, 'partitions' | 'qos' | 'qosVl'>): ReturnType<typeof partitionGroups> {
    const pg = partitionGroups(c.partitions ?? PartitionPlan.defaultPlan(), { qos: qosOn(c) });
    for (const w of pg.warnings) this.o.log.warn('partitions.conf multicast group skipped', { reason: w });
    return pg;
  }

  /** How the SM routes now (the engine chain and its options, as configured or last reloaded):
   * what `ibsm what-if` re-routes with (cli/what-if.ts). */
  get routingConfig(): Pick<SubnetOptions, 'routing' | 'routingOptions' | 'lmc' | 'seed'> {
    const { routing, routingOptions, lmc, seed } = this.o;
    return { routing, routingOptions, lmc, seed };
  }

  /** Configuration reloads so far, by outcome (ibsm_config_reloads_total). */
  readonly reloads = { ok: 0, failed: 0 };

  /** A reload's outcome: counted, and the `configReload` event. */
  noteReload(r: ConfigReload): void {
    this.reloads[r.ok ? 'ok' : 'failed']++;
    this.events.emit('configReload', r);
  }

  /** A reload's settings (issue #28; api/sm.ts `reload`), each already read and checked: the SA
   * answers from them at once (partitions, QoS policy, the configured multicast groups), and a
   * full heavy sweep programs the ports (P_Key tables, SL2VL/VLArbitration) and the routes.
   * Throws (having changed nothing) when the new groups need more MLIDs than are free. */
  reconfigure(c: Pick<SubnetOptions, 'partitions' | 'qos' | 'qosVl' | 'routing' | 'routingOptions'>): { groupsCreated: number; groupsUpdated: number; groupsReleased: number } {
    const qosPolicy = c.qos?.withPartitions(c.partitions ?? PartitionPlan.defaultPlan());
    const pg = this.configGroups(c);
    const g = this.multicast.syncWellKnown(pg.groups, this.ctx);
    for (const x of g.created) this.o.log.info('multicast group created', { mgid: formatGid(x.mgid), mlid: `0x${x.mlid.toString(16)}`, pkey: `0x${x.rec.pKey.toString(16)}`, from: 'reload' });
    for (const w of qosPolicy?.warnings ?? []) this.o.log.warn('QoS policy', { note: w });
    Object.assign(this.o, { partitions: c.partitions, qos: c.qos, qosVl: c.qosVl, routing: c.routing, routingOptions: c.routingOptions });
    this.qosPolicy = qosPolicy;
    this.qosSlConflictLogged = false;
    this.sm.reconfigure({ partitions: c.partitions, qosVl: c.qosVl, routing: c.routing, routingOptions: c.routingOptions });
    if (this.ctx) this.sa?.setContext((this.ctx = this.makeContext(this.ctx.snapshot)));
    this.sm.requestHeavySweep('configuration reloaded', true);
    return { groupsCreated: g.created.length, groupsUpdated: g.updated, groupsReleased: g.released };
  }

  /** The SA state as sync entries (with the GUID→LID map of the current snapshot). */
  exportState(): ReturnType<typeof exportSaState> {
    const lids = new Map<bigint, { base: number; lmc: number }>();
    const snap = this.sm.current;
    if (snap) for (const ep of snapshotPorts(snap).endPorts) if (ep.lid) lids.set(ep.guid, { base: ep.lid, lmc: ep.lmc });
    // vport hook (docs/vports.md): the vports' LID ranges go to the standbys too
    for (const [, v] of this.sm.vports.all()) if (v.lidRequired && v.lid) lids.set(v.guid, this.sm.vports.lidMap.get(v.guid) ?? { base: v.lid, lmc: 0 });
    if (snap && this.fingerprinted?.snap !== snap) this.fingerprinted = { snap, fp: fabricFingerprint(snap.fabric) };
    // health hook: the isolations too, `since` as wall-clock time (the two SMs' clocks differ)
    const enc = new TextEncoder();
    const health = new Map(this.sm.health.kept().map((i) => [i.key, enc.encode(isolationRow(i, (t) => t + this.wallOffset))]));
    return exportSaState(this.multicast, this.services, this.inform, this.o.clock.now(), lids, this.aliases, this.fingerprinted?.fp, health);
  }
  /** Wall-clock time minus the SM's clock (which starts at 0 with the process), taken at start. */
  private readonly wallOffset: number;
  /** The current snapshot's fingerprint (sent to standbys with the SA state), computed once. */
  private fingerprinted?: { snap: Snapshot; fp: bigint };

  /** Masters known to serve pulls (true) or not (false, with when that was seen). */
  private readonly syncCapable = new Map<bigint, { ok: boolean; at: number }>();

  /** Does the master at `lid` serve SA state pulls? Its SA holds the marker ServiceRecord. Asked
   * through the standard SA (a vendor MAD toward an SM that does not know the class is at best
   * dropped); a master that does not (OpenSM, or one whose SA does not answer) is asked again only
   * after SYNC_RECHECK_MS, and said once. */
  private async servesSync(m: { guid: bigint; lid: number }): Promise<boolean> {
    const now = this.o.clock.now();
    const known = this.syncCapable.get(m.guid);
    if (known && (known.ok || now - known.at < SYNC_RECHECK_MS)) return known.ok;
    let ok = false;
    let error: string | undefined;
    try {
      const sa = new SaClient(this.o.rpc, { saLid: m.lid, smKey: this.saKey });
      const recs = await sa.getTable(SaAttr.ServiceRecord, ServiceRecord, { serviceId: SYNC_SERVICE_ID }, ServiceRecord.mask('serviceId'));
      ok = recs.some((r) => (r.serviceGid & 0xffff_ffff_ffff_ffffn) === m.guid);
    } catch (e) {
      error = (e as Error).message;
    }
    if (!ok && !known) this.o.log.info("the master does not serve ibsm's SA state sync", { master: m.guid, lid: m.lid, ...(error ? { error } : {}) });
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
    const u = await pullSync(this.o.rpc, m.lid, this.smKey, this.o.portGuid, this.syncMirror);
    if (u.changes.length) this.o.log.debug('SA state pulled', { master: m.guid, seq: u.seq, full: u.full, changes: u.changes.length });
  }

  /** vport hook (docs/vports.md): vports that came or went since the last sweep, as their own event. */
  private emitVportChanges(): void {
    const vp = this.sm.vports;
    if (vp.version === this.vportVersion) return;
    this.vportVersion = vp.version;
    const change = this.vportTracker.update(vportRows(vp, this.sm.current?.fabric));
    if (change) this.events.emit('vportsChanged', change);
  }

  private restoreMirror(): void {
    if (!this.syncMirror.entries.size) return;
    const n = this.syncMirror.restore(this.multicast, this.services, this.inform, this.o.clock.now(), this.aliases);
    this.sm.adoptLids(this.syncMirror.lids());
    this.sm.health.adopt(this.mirroredIsolations()); // health hook: the master's isolations held from the first sweep
    this.o.log.info('SA state restored', { seq: this.syncMirror.seq, ...n });
    this.restored = true;
  }

  /** The master's isolations in the mirrored state (health hook), `since` on this SM's clock; a
   * row that does not decode is logged and left out. */
  private mirroredIsolations(): KeptIsolation[] {
    const dec = new TextDecoder();
    return this.syncMirror.health().flatMap((b) => {
      try {
        const i = isolationOf(JSON.parse(dec.decode(b)));
        return [{ ...i, since: i.since - this.wallOffset }];
      } catch (e) {
        this.o.log.warn('health state row from the master not used', { error: (e as Error).message });
        return [];
      }
    });
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
      qosOn: qosOn(this.o),
      smPortGuid: this.o.portGuid,
      smKey: this.smKey,
      saKey: this.saKey,
      aliases: this.aliases,
      vports: sm.vports.saView(snap.fabric, (g) => partitions.pkeysFor(g, 'ca')), // vport hook (docs/vports.md)
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

  /** SubnSet(GUIDInfo) of one block of an end port's alias GUIDs, through its DR path and the
   * apply step (sm/apply.ts); a failure is logged with the port, the next sweep writes it again. */
  private writeGuidInfo(portGuid: bigint, block: number, guids: readonly bigint[]): void {
    const snap = this.ctx?.snapshot;
    const ep = snap && snapshotPorts(snap).byGuid.get(portGuid);
    if (!snap || !ep) return;
    const d = snap.discovery.nodes[ep.node]!;
    const path = d.portPaths[ep.port] ?? d.path;
    const w: SmpWrite = { path, attr: SmpAttr.GUIDInfo, mod: block, data: GUIDInfo.encode({ guids: [...guids] }), effect: { kind: 'guidInfo', portGuid, block } };
    void apply(this.o.smp, [w], {
      ok: () => undefined,
      failed: (_w, e) => this.o.log.warn('alias GUIDs not written', { node: snap.fabric.nodes[ep.node]!.desc, guid: portGuid, port: ep.port, lid: ep.lid, block, error: (e as Error).message }),
    }, 1);
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

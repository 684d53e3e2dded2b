/** An SA client for programs: record queries, multicast join/leave, service register/delete and
 * InformInfo subscriptions with the Reports delivered as events, against ibsm's SA (on the
 * simulated fabric of an `IbsmSm`) or any SA reached through libibumad (OpenSM's included). */
import { MgmtClass, Method, MadHeaderView, DEFAULT_GID_PREFIX, NodeType } from '../wire/mad.js';
import { decodeSaMad, InformInfo, JoinState, MCMemberRecord, NodeRecord, PathRecord, SaAttr, ServiceRecord, SA_CLASS_VERSION, INFORM_ALL_PRODUCERS, INFORM_ALL_TRAPS, INFORM_ALL_TYPES, INFORM_LID_RANGE_ALL } from '../wire/sa.js';
import { Notice } from '../wire/notice.js';
import type { DeepPartial, Layout } from '../wire/layout.js';
import { MadRpc } from '../rpc/madrpc.js';
import { SaClient } from '../sa/client.js';
import { MC_CREATE_MASK, MC_JOIN_MASK } from '../sa/multicast.js';
import { TypedEmitter } from '../events.js';
import { parseNodeRef, openBackend, type Backend } from './backend.js';
import type { IbsmSm } from './sm.js';
import { localSmOn } from './local-sms.js';
import { SubnetNotUpError } from '../util/errors.js';
import { SimFabricError } from '../sim/fabric-types.js';

export interface SaClientEvents {
  /** A Report (a trap forwarded by the SA to this subscriber), already acknowledged with ReportResp. */
  report: Notice;
}

export interface OpenSaClientOptions {
  /** Query the SA of this SM: on its simulated fabric a client is attached to another CA port; on
   * a device the client shares the SM's port and MadRpc (its requests go to the SM's own LID). */
  sm?: IbsmSm;
  /** With `sm`: where to attach (node index, GUID or description); default the first other CA. */
  attach?: string;
  /** Otherwise, through libibumad (real HCA, or ibsim under umad2sim). */
  umad?: boolean;
  ca?: string;
  port?: number;
  guid?: bigint;
  /** The SA's LID (default: the SM LID in the local PortInfo). */
  saLid?: number;
  /** SM_Key for trusted requests. */
  smKey?: bigint;
}

/** The GID of a port: subnet prefix (default fe80::/64) and port GUID. */
export function gidOf(portGuid: bigint, prefix = DEFAULT_GID_PREFIX): bigint {
  return (prefix << 64n) | portGuid;
}

export class IbsmSaClient {
  readonly events = new TypedEmitter<SaClientEvents>();
  private readonly offReports: () => void;
  constructor(
    /** The raw client: `request(method, attrId, layout, record, mask)` for any record. */
    readonly client: SaClient,
    private readonly closeFn: () => Promise<void>,
  ) {
    const rpc = client.rpc;
    this.offReports = rpc.onUnsolicited(
      MgmtClass.SubnAdm,
      (m) => {
        try {
          const msg = decodeSaMad(m.data);
          const ack = m.data.slice();
          MadHeaderView.over(ack).method = Method.ReportResp;
          rpc.respond(m, ack);
          this.events.emit('report', Notice.decode(msg.data, 0));
        } catch {
          /* a malformed Report is dropped */
        }
      },
      { method: Method.Report },
    );
  }

  get rpc(): MadRpc {
    return this.client.rpc;
  }

  /** This port's GID (the subnet prefix fe80::/64 unless given). */
  portGid(prefix = DEFAULT_GID_PREFIX): bigint {
    return gidOf(this.rpc.transport.local.portGuid, prefix);
  }

  /** Any record table: GetTable of `attrId` with the fields of `record` named by `mask` (`Layout.mask(...)`). */
  getTable<V>(attrId: number, layout: Layout<V>, record: DeepPartial<V> = {} as DeepPartial<V>, mask = 0n): Promise<V[]> {
    return this.client.getTable<V>(attrId, layout, record, mask);
  }

  nodes(filter: DeepPartial<NodeRecord> = {}, mask = 0n): Promise<NodeRecord[]> {
    return this.getTable<NodeRecord>(SaAttr.NodeRecord, NodeRecord, filter, mask);
  }

  /** PathRecords from one port to another, by LIDs or GIDs. */
  async pathRecords(q: { slid?: number; dlid?: number; sgid?: bigint; dgid?: bigint; numbPath?: number }): Promise<PathRecord[]> {
    const rec: DeepPartial<PathRecord> = {};
    const names: Array<keyof PathRecord> = [];
    if (q.slid !== undefined) (rec.slid = q.slid), names.push('slid');
    if (q.dlid !== undefined) (rec.dlid = q.dlid), names.push('dlid');
    if (q.sgid !== undefined) (rec.sgid = q.sgid), names.push('sgid');
    if (q.dgid !== undefined) (rec.dgid = q.dgid), names.push('dgid');
    if (q.numbPath !== undefined) (rec.numbPath = q.numbPath), names.push('numbPath');
    return this.getTable<PathRecord>(SaAttr.PathRecord, PathRecord, rec, names.length ? PathRecord.mask(...(names as string[])) : 0n);
  }

  /** Join a multicast group (created with `create`'s parameters when it does not exist; MGID 0 lets the SA pick one). */
  async join(mgid: bigint, o: { joinState?: number; create?: { qKey: number; pKey: number; tClass?: number; flowLabel?: number; sl?: number } } = {}): Promise<MCMemberRecord> {
    const rec: DeepPartial<MCMemberRecord> = { mgid, portGid: this.portGid(), joinState: o.joinState ?? JoinState.FullMember };
    let mask = MC_JOIN_MASK;
    if (o.create) {
      Object.assign(rec, { tClass: 0, flowLabel: 0, sl: 0, ...o.create });
      mask = MC_CREATE_MASK;
    }
    return this.client.set<MCMemberRecord>(SaAttr.MCMemberRecord, MCMemberRecord, rec, mask);
  }

  async leave(mgid: bigint, joinState: number = JoinState.FullMember): Promise<MCMemberRecord> {
    return this.client.delete<MCMemberRecord>(SaAttr.MCMemberRecord, MCMemberRecord, { mgid, portGid: this.portGid(), joinState }, MC_JOIN_MASK);
  }

  /** Register a service for this port (ServiceGID defaults to the port's GID). */
  async registerService(s: { serviceId: bigint; serviceName?: string; servicePKey?: number; serviceLease?: number; serviceData?: DeepPartial<ServiceRecord> }): Promise<ServiceRecord> {
    const rec: DeepPartial<ServiceRecord> = { ...s.serviceData, serviceId: s.serviceId, serviceGid: this.portGid(), servicePKey: s.servicePKey ?? 0xffff, serviceLease: s.serviceLease ?? 0xffffffff, serviceName: s.serviceName ?? '' };
    return this.client.set<ServiceRecord>(SaAttr.ServiceRecord, ServiceRecord, rec, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey', 'serviceLease', 'serviceName'));
  }

  /** Delete this port's registration of a service: the record ID is ServiceID, ServiceGID and ServiceP_Key. */
  async deleteService(serviceId: bigint, servicePKey = 0xffff): Promise<ServiceRecord> {
    return this.client.delete<ServiceRecord>(SaAttr.ServiceRecord, ServiceRecord, { serviceId, serviceGid: this.portGid(), servicePKey }, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey'));
  }

  async services(): Promise<ServiceRecord[]> {
    return this.getTable<ServiceRecord>(SaAttr.ServiceRecord, ServiceRecord);
  }

  /** Subscribe to a trap number (default all) for every LID; Reports arrive as `report` events. */
  async subscribe(trapNumber: number = INFORM_ALL_TRAPS, subscribe = true): Promise<InformInfo> {
    const info: DeepPartial<InformInfo> = {
      gid: 0n, lidRangeBegin: INFORM_LID_RANGE_ALL, lidRangeEnd: 0, isGeneric: 1, subscribe: subscribe ? 1 : 0, type: INFORM_ALL_TYPES, trapNumber, qpn: 1, respTimeValue: 18, producerType: INFORM_ALL_PRODUCERS,
    };
    return this.client.set<InformInfo>(SaAttr.InformInfo, InformInfo, info, 0n);
  }

  unsubscribe(trapNumber: number = INFORM_ALL_TRAPS): Promise<InformInfo> {
    return this.subscribe(trapNumber, false);
  }

  async close(): Promise<void> {
    this.offReports();
    await this.closeFn();
  }
}

/** A client on the SA of `o.sm` (simulated fabric) or through libibumad. On a device, a client of
 * this process's own SM (`{ sm }`, or `{ umad: true }` on the port an SM of this process runs on)
 * shares the SM's MadRpc: its requests go to the SM's LID over the SM's port and come back to it
 * (a second SA agent on that port would never see its answers: the SM's server agent has the
 * class). Such a client receives no Reports (the SM's agent does not take that method). */
export async function openSaClient(o: OpenSaClientOptions): Promise<IbsmSaClient> {
  if (o.sm && !o.sm.sim) {
    const snap = o.sm.snapshot;
    if (!snap) throw new SubnetNotUpError('openSaClient({ sm }): the subnet is not up yet (await sm.start())');
    return sharedClient(o.sm.backend.rpc, o.saLid ?? snap.smLid, o.smKey);
  }
  if (o.sm) {
    const sim = o.sm.sim!;
    const snap = o.sm.snapshot;
    if (!snap) throw new SubnetNotUpError('openSaClient({ sm }): the subnet is not up yet (await sm.start())');
    const smNode = snap.discovery.smNode;
    const smGuid = snap.fabric.nodes[smNode]!.guid;
    const at = o.attach !== undefined ? parseNodeRef(o.attach) : sim.nodes.findIndex((n) => n.type !== NodeType.Switch && n.guid !== smGuid);
    if (at === -1) throw new SimFabricError('the simulated fabric has no other CA to attach the SA client to; name one with attach');
    const ep = sim.attach(at);
    ep.register(MgmtClass.SubnDirected, 1);
    ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, { methods: [Method.Report] });
    const rpc = new MadRpc(ep, o.sm.backend.clock);
    const client = new SaClient(rpc, { saLid: o.saLid ?? snap.smLid, smKey: o.smKey });
    return new IbsmSaClient(client, async () => {
      rpc.close();
      await ep.close();
    });
  }
  const local = (o.umad ?? true) ? localSmOn({ ca: o.ca, port: o.port, guid: o.guid }) : undefined;
  if (local) {
    const saLid = o.saLid ?? local.saLid();
    if (saLid === undefined) throw new SubnetNotUpError('openSaClient: the SM of this process on that port has no subnet up yet (await sm.start())');
    return sharedClient(local.rpc, saLid, o.smKey);
  }
  const be: Backend = await openBackend({ umad: o.umad ?? true, ca: o.ca, port: o.port, guid: o.guid, sa: true, reports: true });
  try {
    const client = await SaClient.locate(be.rpc, { saLid: o.saLid, smKey: o.smKey });
    return new IbsmSaClient(client, () => be.close());
  } catch (e) {
    await be.close();
    throw e;
  }
}

/** A client on the MadRpc of an SM of this process: closing it leaves the SM's port open. */
function sharedClient(rpc: MadRpc, saLid: number, smKey?: bigint): IbsmSaClient {
  return new IbsmSaClient(new SaClient(rpc, { saLid, smKey }), async () => undefined);
}

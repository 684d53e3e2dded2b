/**
 * The SA client (the one: `openSaClient` in api/sa.ts opens it for programs, the CLI and the SM's
 * own inter-subnet lookups build it over their MadRpc). Over MadRpc it finds the SA (the SM LID in
 * the local port's PortInfo, read with a hop-0 SMP, or given), sends Get/GetTable/Set/Delete (and
 * GetTraceTable / GetMulti) with a record and a component mask, and decodes the answer's records
 * with the layouts; on top of that the common requests by name (nodes, PathRecords, multicast join
 * and leave, services, InformInfo subscriptions) and, when asked (`reports`), the SA's Reports as
 * `report` events, each acknowledged. Multi-segment GetTableResp transfers are reassembled by
 * MadRpc's RMPP receiver. A non-zero status becomes a SaStatusError naming the SA status.
 */
import type { MadRpc, RequestOptions } from '../rpc/madrpc.js';
import { rmppLeftToKernel } from '../rpc/rmpp.js';
import { DEFAULT_GID_PREFIX, MAD_SIZE, MadHeaderView, Method, MgmtClass, SmpAttr } from '../wire/mad.js';
import { PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import { decodeSaMad, decodeSaRecords, SA_QKEY, SA_STATUS_NAMES, SA_DATA_SIZE, type SaMessage } from '../wire/sa.js';
import { InformInfo, JoinState, MCMemberRecord, NodeRecord, PathRecord, SaAttr, ServiceRecord, INFORM_ALL_PRODUCERS, INFORM_ALL_TRAPS, INFORM_ALL_TYPES, INFORM_LID_RANGE_ALL } from '../wire/sa.js';
import { Notice } from '../wire/notice.js';
import { TypedEmitter } from '../util/typed-emitter.js';
import { MC_CREATE_MASK, MC_JOIN_MASK } from './multicast.js';
import { saRequest } from '../wire/builders.js';
import type { DeepPartial, Layout } from '../wire/layout.js';
import type { GrhAddress, MadAddress } from '../transport/types.js';
import { IbsmError } from '../util/errors.js';

const METHOD_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(Method).map(([k, v]) => [v, k]));

/** The SA answered with a non-zero status. */
export class SaStatusError extends IbsmError {
  override readonly name = 'SaStatusError';
  constructor(
    readonly method: number,
    readonly attrId: number,
    readonly status: number,
    readonly recordName: string,
  ) {
    super(`SA ${METHOD_NAMES[method] ?? `method 0x${method.toString(16)}`} ${recordName} failed: ${saStatusText(status)}`);
  }
  /** The SA-specific code name (ERR_NO_RECORDS, ...). */
  get statusName(): string {
    return SA_STATUS_NAMES[this.status & 0xff00] ?? `status 0x${this.status.toString(16)}`;
  }
}

export function saStatusText(status: number): string {
  const parts: string[] = [];
  const sa = status & 0xff00;
  if (sa) parts.push(SA_STATUS_NAMES[sa] ?? `SA status 0x${(sa >> 8).toString(16)}`);
  const code = (status >> 2) & 7;
  const generic = ['', 'bad class version', 'method not supported', 'method/attribute not supported', '', '', '', 'invalid attribute value'][code];
  if (generic) parts.push(generic);
  if (status & 1) parts.push('busy');
  return `${parts.join(', ') || 'unknown'} (status 0x${status.toString(16).padStart(4, '0')})`;
}

/** No SM/SA could be found from the local port. */
export class SaNotFoundError extends IbsmError {
  override readonly name = 'SaNotFoundError';
}

export interface SaClientOptions {
  /** LID of the SA (the master SM's LID). */
  saLid: number;
  /** SM_Key to put in requests (0: untrusted). */
  smKey?: bigint;
  /** Per-request RPC options (timeout, retries). */
  request?: RequestOptions;
  pkeyIndex?: number;
  /** Send with a GRH (an SA in another subnet, through a router: saLid is then the router's LID). */
  grh?: GrhAddress;
  /** Take the SA's Reports on this MadRpc: each is acknowledged (ReportResp) and emitted as a
   * `report` event. Only one client of a MadRpc should (the SM's own agent takes them on its port). */
  reports?: boolean;
  /** What `close()` releases besides the Reports handler (the backend a client opened for itself). */
  onClose?: () => Promise<void>;
}

export interface SaClientEvents {
  /** A Report (a trap forwarded by the SA to this subscriber), already acknowledged with ReportResp. */
  report: Notice;
}

/** The GID of a port: subnet prefix (default fe80::/64) and port GUID. */
export function gidOf(portGuid: bigint, prefix = DEFAULT_GID_PREFIX): bigint {
  return (prefix << 64n) | portGuid;
}

export interface SaResult<V> {
  records: V[];
  message: SaMessage;
  /** The SA left RMPP to a kernel that this path does not have (OpenSM's answers under umad2sim):
   * only the records inside the intact bytes of one MAD are here, the rest of the table is not. */
  truncated?: boolean;
}

export class SaClient {
  readonly saLid: number;
  /** `report` events: the SA's Reports (with `reports` in the options). */
  readonly events = new TypedEmitter<SaClientEvents>();
  private readonly smKey: bigint;
  private readonly offReports?: () => void;
  constructor(
    readonly rpc: MadRpc,
    private readonly o: SaClientOptions,
  ) {
    this.saLid = o.saLid;
    this.smKey = o.smKey ?? 0n;
    if (o.reports) this.offReports = rpc.onUnsolicited(MgmtClass.SubnAdm, (m) => this.report(m), { method: Method.Report });
  }

  /** A Report: acknowledged, then emitted. A malformed one is dropped. */
  private report(m: Parameters<Parameters<MadRpc['onUnsolicited']>[1]>[0]): void {
    try {
      const msg = decodeSaMad(m.data);
      const ack = m.data.slice();
      MadHeaderView.over(ack).method = Method.ReportResp;
      this.rpc.respond(m, ack);
      this.events.emit('report', Notice.decode(msg.data, 0));
    } catch {
      /* a malformed Report is dropped */
    }
  }

  /** Find the SA from the local port's PortInfo.SMLID (live, hop-0 SMP); falls back to the port's
   * recorded SM LID when the SMP fails. Throws SaNotFoundError when neither names an SM. */
  static async locate(rpc: MadRpc, opts: Omit<SaClientOptions, 'saLid'> & { saLid?: number } = {}): Promise<SaClient> {
    if (opts.saLid) return new SaClient(rpc, { ...opts, saLid: opts.saLid });
    const local = rpc.transport.local;
    let smLid = 0;
    let why = '';
    try {
      const pi = PortInfo.decode(await rpc.smpGetDr([], SmpAttr.PortInfo, portInfoMod(local.portNum)));
      smLid = pi.masterSmLid;
    } catch (e) {
      why = ` (reading the local PortInfo failed: ${(e as Error).message})`;
      smLid = local.smLid;
    }
    if (!smLid) throw new SaNotFoundError(`No SM/SA found: port ${local.caName}/${local.portNum} has SMLID 0${why}; is a subnet manager running?`);
    return new SaClient(rpc, { ...opts, saLid: smLid });
  }

  private get address(): MadAddress {
    return { lid: this.saLid, qpn: 1, qkey: SA_QKEY, pkeyIndex: this.o.pkeyIndex ?? 0, ...(this.o.grh ? { grh: this.o.grh } : {}) };
  }

  /** Send one SA request and decode the answer's records with `layout` (the request record uses `reqLayout`, default the same). */
  async request<V, R = V>(method: number, attrId: number, layout: Layout<V>, record: DeepPartial<R>, componentMask: bigint, reqLayout?: Layout<R>, attrMod = 0): Promise<SaResult<V>> {
    const rl = (reqLayout ?? layout) as unknown as Layout<R>;
    const data = new Uint8Array(Math.max(SA_DATA_SIZE, rl.byteLength));
    rl.encode(record, data, 0);
    const mad = saRequest({ method, attrId, attrMod, componentMask, smKey: this.smKey, record: data, recordLength: rl.byteLength });
    const rsp = await this.rpc.request(mad, this.address, this.o.request);
    let answer = rsp.data;
    // One MAD of a transfer the sender left to the kernel's RMPP (OpenSM): where the transport cuts
    // MADs short, only the intact bytes hold records.
    const cut = this.rpc.transport.maxMadSize;
    const leftToKernel = rmppLeftToKernel(answer) && answer.length <= MAD_SIZE;
    if (leftToKernel && cut !== undefined && answer.length > cut) answer = answer.subarray(0, cut);
    const msg = decodeSaMad(answer);
    if (msg.header.mgmtClass !== MgmtClass.SubnAdm) throw new SaStatusError(method, attrId, 0xffff, layout.name);
    if (msg.header.status !== 0) throw new SaStatusError(method, attrId, msg.header.status, layout.name);
    const records = decodeSaRecords(msg, layout);
    // A table of one MAD of records from such an SA may have had more.
    const truncated = leftToKernel && (method === Method.GetTable || method === Method.GetTraceTable) && records.length > 0;
    return { records, message: msg, ...(truncated ? { truncated } : {}) };
  }

  async get<V>(attrId: number, layout: Layout<V>, record: DeepPartial<V>, mask: bigint): Promise<V> {
    const r = await this.request(Method.Get, attrId, layout, record, mask);
    if (!r.records[0]) throw new SaStatusError(Method.Get, attrId, 0x0300, layout.name);
    return r.records[0];
  }
  /** Any record table: GetTable of `attrId` with the fields of `record` named by `mask` (`Layout.mask(...)`). */
  async getTable<V>(attrId: number, layout: Layout<V>, record: DeepPartial<V> = {} as DeepPartial<V>, mask = 0n): Promise<V[]> {
    return (await this.request(Method.GetTable, attrId, layout, record, mask)).records;
  }
  async set<V>(attrId: number, layout: Layout<V>, record: DeepPartial<V>, mask: bigint): Promise<V> {
    const r = await this.request(Method.Set, attrId, layout, record, mask);
    return r.records[0] ?? layout.zero();
  }
  async delete<V>(attrId: number, layout: Layout<V>, record: DeepPartial<V>, mask: bigint): Promise<V> {
    const r = await this.request(Method.Delete, attrId, layout, record, mask);
    return r.records[0] ?? layout.zero();
  }

  // ---- the common requests by name

  /** This port's GID (the subnet prefix fe80::/64 unless given). */
  portGid(prefix = DEFAULT_GID_PREFIX): bigint {
    return gidOf(this.rpc.transport.local.portGuid, prefix);
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
    return this.set<MCMemberRecord>(SaAttr.MCMemberRecord, MCMemberRecord, rec, mask);
  }

  async leave(mgid: bigint, joinState: number = JoinState.FullMember): Promise<MCMemberRecord> {
    return this.delete<MCMemberRecord>(SaAttr.MCMemberRecord, MCMemberRecord, { mgid, portGid: this.portGid(), joinState }, MC_JOIN_MASK);
  }

  /** Register a service for this port (ServiceGID defaults to the port's GID). */
  async registerService(s: { serviceId: bigint; serviceName?: string; servicePKey?: number; serviceLease?: number; serviceData?: DeepPartial<ServiceRecord> }): Promise<ServiceRecord> {
    const rec: DeepPartial<ServiceRecord> = { ...s.serviceData, serviceId: s.serviceId, serviceGid: this.portGid(), servicePKey: s.servicePKey ?? 0xffff, serviceLease: s.serviceLease ?? 0xffffffff, serviceName: s.serviceName ?? '' };
    return this.set<ServiceRecord>(SaAttr.ServiceRecord, ServiceRecord, rec, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey', 'serviceLease', 'serviceName'));
  }

  /** Delete this port's registration of a service: the record ID is ServiceID, ServiceGID and ServiceP_Key. */
  async deleteService(serviceId: bigint, servicePKey = 0xffff): Promise<ServiceRecord> {
    return this.delete<ServiceRecord>(SaAttr.ServiceRecord, ServiceRecord, { serviceId, serviceGid: this.portGid(), servicePKey }, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey'));
  }

  async services(): Promise<ServiceRecord[]> {
    return this.getTable<ServiceRecord>(SaAttr.ServiceRecord, ServiceRecord);
  }

  /** Subscribe to a trap number (default all) for every LID; Reports arrive as `report` events
   * (on a client opened with `reports`). */
  async subscribe(trapNumber: number = INFORM_ALL_TRAPS, subscribe = true): Promise<InformInfo> {
    const info: DeepPartial<InformInfo> = {
      gid: 0n, lidRangeBegin: INFORM_LID_RANGE_ALL, lidRangeEnd: 0, isGeneric: 1, subscribe: subscribe ? 1 : 0, type: INFORM_ALL_TYPES, trapNumber, qpn: 1, respTimeValue: 18, producerType: INFORM_ALL_PRODUCERS,
    };
    return this.set<InformInfo>(SaAttr.InformInfo, InformInfo, info, 0n);
  }

  unsubscribe(trapNumber: number = INFORM_ALL_TRAPS): Promise<InformInfo> {
    return this.subscribe(trapNumber, false);
  }

  /** Stop taking Reports and release what the client opened for itself (a client on another
   * MadRpc's port, an SM's, leaves that open). */
  async close(): Promise<void> {
    this.offReports?.();
    await this.o.onClose?.();
  }
}

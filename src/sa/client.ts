/**
 * An SA client over MadRpc: finds the SA (the SM LID in the local port's PortInfo, read with a
 * hop-0 SMP, or given), sends Get/GetTable/Set/Delete (and GetTraceTable / GetMulti) with a record
 * and a component mask, and decodes the answer's records with the layouts. Multi-segment
 * GetTableResp transfers are reassembled by MadRpc's RMPP receiver. A non-zero status becomes a
 * SaStatusError naming the SA status.
 */
import type { MadRpc, RequestOptions } from '../rpc/madrpc.js';
import { rmppLeftToKernel } from '../rpc/rmpp.js';
import { MAD_SIZE } from '../wire/mad.js';
import { Method, MgmtClass, SmpAttr } from '../wire/mad.js';
import { PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import { decodeSaMad, decodeSaRecords, SA_QKEY, SA_STATUS_NAMES, SA_DATA_SIZE, type SaMessage } from '../wire/sa.js';
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
  private readonly smKey: bigint;
  constructor(
    readonly rpc: MadRpc,
    private readonly o: SaClientOptions,
  ) {
    this.saLid = o.saLid;
    this.smKey = o.smKey ?? 0n;
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
  async getTable<V>(attrId: number, layout: Layout<V>, record: DeepPartial<V>, mask: bigint): Promise<V[]> {
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
}

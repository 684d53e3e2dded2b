/** The contract between the SA server (decodes requests, encodes responses, RMPP) and the SA's
 * attribute handlers (pure query logic over the SM's latest snapshot and the SA's own state). */
import type { Snapshot } from '../model/snapshot.js';
import type { PartitionPlan } from '../model/partitions.js';
import type { QosPolicy } from '../model/qos-policy.js';

/** What the SM knows of tables the snapshot does not carry (all optional; the SA falls back to what
 * the SM programs by default: P_Keys from the partition plan, the routing engine's SL→VL table,
 * empty VLArb tables, no MFT blocks). Node indices are into `snapshot.fabric.nodes`. */
export interface SaTables {
  /** P_Key table of a port (switch: port 0), membership bit included. */
  pkeys?(node: number, port: number): readonly number[] | undefined;
  /** SL→VL table (16 VLs) of a port pair (CA: inPort 0, outPort = the port). */
  sl2vl?(node: number, inPort: number, outPort: number): readonly number[] | undefined;
  /** One VLArbitration block (1..4) of a port: up to 32 {vl, weight} entries. */
  vlArb?(node: number, port: number, block: number): readonly { vl: number; weight: number }[] | undefined;
  /** The MFT blocks a switch holds: block (0..511), position (0..15) and 32 port masks. */
  mft?(node: number): Iterable<{ block: number; position: number; masks: readonly number[] }>;
}

/** The SM's own SMInfo values for SMInfoRecord (defaults: Master, priority 0, ActCount = sweep count). */
export interface SaSmInfo {
  actCount: number;
  priority: number;
  smState: number;
}

/** Who asked: the requester's port, as the SA sees it. */
export interface SaRequester {
  /** Source LID of the request. */
  lid: number;
  /** The requester's port GUID when the SA can resolve the LID to a port (undefined otherwise). */
  portGuid?: bigint;
  /** The SM_Key in the request's SA header. */
  smKey: bigint;
  /** True when smKey equals the SA_Key (trusted requester: may see SM_Keys, act for other ports). */
  trusted: boolean;
  /** The address to answer to (for Reports: InformInfo subscribers). */
  qpn: number;
}

/** One SA request, decoded by the server. */
export interface SaQuery {
  method: number;
  attrId: number;
  attrMod: number;
  componentMask: bigint;
  /** The record bytes of the request (the SA data area, 200 bytes; longer for multi-segment requests). */
  data: Uint8Array;
  requester: SaRequester;
}

/** The answer: encoded records (each exactly one record stride) or a status. */
export type SaAnswer =
  | { kind: 'records'; records: Uint8Array[]; /** for Get: the method answered (GetResp) */ method?: number }
  | { kind: 'status'; status: number; /** optional record to echo */ record?: Uint8Array };

/** What a handler sees of the world. Built by the SM after every sweep. */
export interface SaContext {
  snapshot: Snapshot;
  partitions: PartitionPlan;
  /** The SM's port GUID and key. */
  smPortGuid: bigint;
  smKey: bigint;
  /** The SA_Key (OpenSM's sa_key): a request carrying it in the SA header's SM_Key field is
   * trusted; another non-zero key is dropped (sa/server.ts). Absent: the SM_Key. */
  saKey?: bigint;
  /** Virtual-clock time in ms (leases). */
  now: number;
  /** Optional: tables the SM read or programmed (see SaTables). */
  tables?: SaTables;
  /** Optional: the SM's SMInfo (for SMInfoRecord). */
  smInfo?: SaSmInfo;
  /** PathRecord PacketLifeTime (4.096 µs × 2^n); default 0x12 as OpenSM. */
  packetLifeTime?: number;
  /** The QoS policy (qos-policy.conf): PathRecord/MultiPathRecord SL, MTU/rate/lifetime limits. */
  qos?: QosPolicy;
  /** QoS on (a policy, or OpenSM's `qos TRUE`): a PathRecord in a partition with `sl=` takes that
   * SL when neither the routing engine nor a QoS level gives one (OpenSM's partition SL). */
  qosOn?: boolean;
  /** Alias GUIDs (GUIDInfoRecord Set/Delete; sa/guidinfo.ts). */
  aliases?: AliasView;
  /** SR-IOV vports (vport hook, docs/vports.md): their GIDs resolved to their LIDs and P_Keys. */
  vports?: VPortView;
  /** Paths to and from other subnets through routers (sa/inter-subnet.ts); absent: one subnet. */
  interSubnet?: InterSubnetPaths;
}

/** Answers PathRecord queries with an off-subnet SGID or DGID; undefined: not such a query. */
export interface InterSubnetPaths {
  answer(ctx: SaContext, q: SaQuery): Uint8Array[] | undefined;
}

/** What the SA sees of the SR-IOV vports (sm/vport-mgr.ts builds it). */
export interface VPortView {
  /** A vport by its GUID: its physical port's GUID and its LID range (the rule's LID). */
  of(guid: bigint): VPortEntry | undefined;
  /** Every vport (not vport 0: that is its physical port). */
  list(): Iterable<VPortEntry>;
  /** The vport's P_Key table (its partitions), or undefined when `guid` is no vport. */
  pkeys(guid: bigint): readonly number[] | undefined;
}

export interface VPortEntry {
  guid: bigint;
  physGuid: bigint;
  lid: number;
  lmc: number;
  lidRequired: boolean;
}

/** What the SA's handlers see of alias GUIDs. */
export interface AliasView {
  /** The port GUID an alias GUID belongs to. */
  baseOf(alias: bigint): bigint | undefined;
  /** One GUIDInfo block of a port (8 GUIDs), when the port has an alias table. */
  block(portGuid: bigint, block: number): readonly bigint[] | undefined;
  /** GUIDInfoRecord Set/Delete. */
  modify(q: SaQuery, ctx: SaContext): SaAnswer;
}

/** Handles one SA attribute (or several). Pure with respect to I/O: side effects only on the
 * handler's own state (groups, services, subscriptions), reported through `effects`. */
export interface SaHandler {
  readonly attrIds: readonly number[];
  handle(q: SaQuery, ctx: SaContext): SaAnswer;
}

/**
 * Alias GUIDs (GUIDInfoRecord Set/Delete, as OpenSM's SR-IOV support does them): a client adds
 * GUIDs to a port's GUIDInfo table; a GUID of 0 asks the SA to assign one (OUI 0x001405, a
 * configured byte, a counter), and the GUID assigned for an index is kept for that index across
 * deletes. Index 0 of block 0 is the port GUID and read-only; an alias already on another port is
 * refused for that index (answered as 0). Requests come from the port itself or a trusted
 * requester. Each change is reported (`onChange`) so the SM writes the port's GUIDInfo block; the
 * SA resolves alias GIDs to their port (`baseOf`). State is bounded by the ports' GUIDCap.
 */
import { MadStatus, Method } from '../wire/mad.js';
import { GUIDInfoRecord, SaStatus } from '../wire/sa.js';
import { GUID_BLOCK_SIZE } from '../wire/sma.js';
import { snapshotPorts } from '../model/snapshot.js';
import type { AliasView, SaAnswer, SaContext, SaQuery } from './types.js';

/** The OpenIB OUI that SM-assigned alias GUIDs carry in their top 24 bits. */
const OPENIB_OUI = 0x001405n;
const MOD_MASK = GUIDInfoRecord.mask('lid', 'blockNum');
const GUID_BITS = Array.from({ length: GUID_BLOCK_SIZE }, (_, i) => GUIDInfoRecord.mask(`guidInfo.guids#${i}`));

export interface AliasGuidsOptions {
  /** OpenSM's sm_assigned_guid: the byte below the OUI in assigned GUIDs (default 0). */
  assignedByte?: number;
  /** A port's GUIDInfo block changed: the SM writes it. */
  onChange?: (portGuid: bigint, block: number, guids: readonly bigint[]) => void;
}

const status = (s: number, record?: Uint8Array): SaAnswer => ({ kind: 'status', status: s, ...(record ? { record } : {}) });

export class AliasGuids implements AliasView {
  /** Port GUID → its GUID table (GUIDCap entries, index 0 the port GUID, 0 = empty). */
  private readonly tables = new Map<bigint, bigint[]>();
  /** Port GUID → the GUID the SA assigned for each index (kept across deletes). */
  private readonly assigned = new Map<bigint, bigint[]>();
  private readonly owners = new Map<bigint, bigint>();
  private counter = 0;

  constructor(private readonly o: AliasGuidsOptions = {}) {}

  baseOf(alias: bigint): bigint | undefined {
    return this.owners.get(alias);
  }

  block(portGuid: bigint, block: number): readonly bigint[] | undefined {
    const t = this.tables.get(portGuid);
    return t ? Array.from({ length: GUID_BLOCK_SIZE }, (_, i) => t[block * GUID_BLOCK_SIZE + i] ?? 0n) : undefined;
  }

  /** Every port with aliases and its blocks (for the SM to write after a sweep). */
  *blocks(): IterableIterator<{ portGuid: bigint; block: number; guids: readonly bigint[] }> {
    for (const [portGuid, t] of this.tables) for (let b = 0; b * GUID_BLOCK_SIZE < t.length; b++) yield { portGuid, block: b, guids: this.block(portGuid, b)! };
  }

  /** Every port's table and the GUIDs assigned for its indices (what a standby keeps). */
  *list(): IterableIterator<{ portGuid: bigint; table: readonly bigint[]; assigned: readonly bigint[] }> {
    const ports = new Set([...this.tables.keys(), ...this.assigned.keys()]);
    for (const portGuid of ports) yield { portGuid, table: this.tables.get(portGuid) ?? [], assigned: this.assigned.get(portGuid) ?? [] };
  }

  /** Take over a port's table and assigned GUIDs (a standby becoming master). */
  restore(portGuid: bigint, table: readonly bigint[], assigned: readonly bigint[]): void {
    if (table.length > 0) {
      this.tables.set(portGuid, [...table]);
      for (const a of table.slice(1)) if (a) this.owners.set(a, portGuid);
    }
    if (assigned.length > 0) this.assigned.set(portGuid, [...assigned]);
    for (const a of assigned) if (a) this.counter = Math.max(this.counter, Number(a & 0xffffffffn));
  }

  /** Forget the tables of ports no longer in the fabric (their assigned GUIDs stay theirs). */
  prune(present: ReadonlySet<bigint>): void {
    for (const [g, t] of this.tables) {
      if (present.has(g)) continue;
      for (const a of t.slice(1)) if (a) this.owners.delete(a);
      this.tables.delete(g);
    }
  }

  modify(q: SaQuery, ctx: SaContext): SaAnswer {
    if (q.method !== Method.Set && q.method !== Method.Delete) return status(MadStatus.UnsupportedMethodAttr);
    if ((q.componentMask & MOD_MASK) !== MOD_MASK) return status(SaStatus.ReqInsufficientComponents);
    let rec: GUIDInfoRecord;
    try {
      rec = GUIDInfoRecord.decode(q.data, 0);
    } catch {
      return status(SaStatus.ReqInvalid);
    }
    const ep = snapshotPorts(ctx.snapshot).byLid(rec.lid);
    if (!ep || !ep.lid) return status(SaStatus.NoRecords);
    if (!q.requester.trusted && q.requester.portGuid !== ep.guid) return status(SaStatus.ReqDenied);
    const cap = ctx.snapshot.discovery.nodes[ep.node]?.portInfo[ep.port]?.guidCap ?? 1;
    if (rec.blockNum * GUID_BLOCK_SIZE >= cap) return status(SaStatus.NoRecords);
    const picked = GUID_BITS.map((b) => (q.componentMask & b) !== 0n);
    if (rec.blockNum === 0 && picked[0]) return status(SaStatus.ReqInvalid); // the port GUID is read-only
    const table = this.tableOf(ep.guid, cap);
    let changed = false;
    for (let i = 0; i < GUID_BLOCK_SIZE; i++) {
      const at = rec.blockNum * GUID_BLOCK_SIZE + i;
      if (!picked[i] || at >= cap) continue;
      if (q.method === Method.Delete) {
        if (table[at]) {
          this.owners.delete(table[at]!);
          table[at] = 0n;
          changed = true;
        }
        continue;
      }
      const want = rec.guidInfo.guids[i]! || table[at] || this.assignedFor(ep.guid, at, cap);
      if (want === table[at]) continue;
      const owner = this.owners.get(want);
      if (want === 0n || (owner !== undefined && owner !== ep.guid) || want === ep.guid || snapshotPorts(ctx.snapshot).byGuid.has(want)) continue; // taken: answered as 0
      if (owner === ep.guid) table[table.indexOf(want)] = 0n; // moved within the port
      if (table[at]) this.owners.delete(table[at]!);
      table[at] = want;
      this.owners.set(want, ep.guid);
      changed = true;
    }
    const guids = this.block(ep.guid, rec.blockNum)!;
    if (changed) this.o.onChange?.(ep.guid, rec.blockNum, guids);
    return { kind: 'records', records: [GUIDInfoRecord.encode({ lid: ep.lid, blockNum: rec.blockNum, guidInfo: { guids: [...guids] } })], method: Method.GetResp };
  }

  private tableOf(portGuid: bigint, cap: number): bigint[] {
    let t = this.tables.get(portGuid);
    if (!t) {
      t = new Array<bigint>(Math.ceil(cap / GUID_BLOCK_SIZE) * GUID_BLOCK_SIZE).fill(0n);
      t[0] = portGuid;
      this.tables.set(portGuid, t);
    }
    return t;
  }

  /** The GUID the SA assigned this index before, or a new one no port uses. */
  private assignedFor(portGuid: bigint, index: number, cap: number): bigint {
    let a = this.assigned.get(portGuid);
    if (!a) this.assigned.set(portGuid, (a = new Array<bigint>(cap).fill(0n)));
    if (a[index]) return a[index]!;
    for (let tries = 0; tries < 1000 && this.counter < 0xffffffff; tries++) {
      const g = (OPENIB_OUI << 40n) | (BigInt(this.o.assignedByte ?? 0) << 32n) | BigInt(++this.counter);
      if (!this.owners.has(g)) return (a[index] = g);
    }
    return 0n;
  }
}

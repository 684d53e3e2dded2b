/** The SA's state kept across failover: what a master sends its standbys, in band, so that a
 * standby that takes over has the same multicast groups (MGID, MLID, parameters, every member's
 * join state), ServiceRecords (with their remaining lease), InformInfo subscriptions and GUID→LID
 * map, alias GUIDs, and the SM's health isolations (issue #33). OpenSM has no such thing ("No SM
 * to SM SMDB synchronization"); Cornelis opa-fm syncs in band over its own vendor MAD class, which is the model here.
 *
 * The state is a set of entries, each keyed and encoded with the SA's own record layouts
 * (MCMemberRecord, ServiceRecord, InformInfoRecord). The master (`SyncSource`) numbers every
 * change of that set: a standby pulls with the sequence number it has and gets the changes since
 * (or everything, when it is new or too far behind) and so knows it is current. The standby
 * (`SyncMirror`) applies them and, when it becomes master, restores the SA's managers from them.
 * Pure: the vendor MADs that carry a pull live in sa/sync-agent.ts. */
import { InformInfoRecord, MCMemberRecord, ServiceRecord } from '../wire/sa.js';
import { DecodeError } from '../wire/errors.js';
import type { MulticastManager } from './multicast.js';
import type { ServiceRegistry } from './services.js';
import type { InformManager, Subscription } from './inform.js';
import type { AliasGuids } from './guidinfo.js';

/** A GUID's LID range (the guid2lid map the SM persists). */
export interface SyncLid {
  base: number;
  lmc: number;
}

const Tag = { Group: 1, Member: 2, Service: 3, Subscription: 4, Lid: 5, Alias: 6, Topology: 7, Health: 8 } as const;

/** Entries of the SA state, keyed so that a change is a put or a delete. */
export type SyncEntries = Map<string, Uint8Array>;

const hex = (v: bigint): string => v.toString(16);

function tagged(tag: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + body.length);
  out[0] = tag;
  out.set(body, 1);
  return out;
}

/** The SA state as entries: groups (their parameters), members, services, subscriptions, LIDs,
 * alias GUIDs, and the fingerprint of the master's view of the fabric (model/snapshot.ts
 * `fabricFingerprint`: a standby whose own view has it may take over from that view). */
export function exportSaState(mc: MulticastManager, services: ServiceRegistry, inform: InformManager, now: number, lids?: ReadonlyMap<bigint, SyncLid>, aliases?: AliasGuids, topology?: bigint, health?: ReadonlyMap<string, Uint8Array>): SyncEntries {
  const out: SyncEntries = new Map();
  // health hook: the SM's isolations (issue #33), each an opaque row the SM encodes (sm/health-store.ts)
  for (const [k, row] of health ?? []) out.set(`h/${k}`, tagged(Tag.Health, row));
  if (topology !== undefined) {
    const body = new Uint8Array(8);
    new DataView(body.buffer).setBigUint64(0, topology);
    out.set('t', tagged(Tag.Topology, body));
  }
  for (const g of mc.list()) {
    out.set(`g/${hex(g.mgid)}`, tagged(Tag.Group, MCMemberRecord.encode({ ...g.rec, mgid: g.mgid, mlid: g.mlid, portGid: 0n, joinState: 0, proxyJoin: 0 })));
    for (const m of g.members.values()) {
      out.set(`m/${hex(g.mgid)}/${hex(m.portGid)}`, tagged(Tag.Member, MCMemberRecord.encode({ ...g.rec, mgid: g.mgid, mlid: g.mlid, portGid: m.portGid, joinState: m.joinState, proxyJoin: m.proxyJoin ? 1 : 0 })));
    }
  }
  for (const s of services.list(now)) {
    out.set(`s/${hex(s.serviceId)}/${hex(s.serviceGid)}/${(s.servicePKey & 0x7fff).toString(16)}`, tagged(Tag.Service, ServiceRecord.encode(s)));
  }
  for (const s of inform.list()) {
    const body = new Uint8Array(InformInfoRecord.byteLength + 10);
    InformInfoRecord.encode({ subscriberGid: s.subscriberGid, enumeration: s.enumeration, informInfo: s.info }, body);
    const dv = new DataView(body.buffer);
    dv.setBigUint64(InformInfoRecord.byteLength, s.subscriberGuid);
    dv.setUint16(InformInfoRecord.byteLength + 8, s.lid);
    out.set(`i/${hex(s.subscriberGid)}/${s.enumeration}`, tagged(Tag.Subscription, body));
  }
  for (const [guid, r] of lids ?? []) {
    const body = new Uint8Array(11);
    const dv = new DataView(body.buffer);
    dv.setBigUint64(0, guid);
    dv.setUint16(8, r.base);
    body[10] = r.lmc;
    out.set(`l/${hex(guid)}`, tagged(Tag.Lid, body));
  }
  // alias GUIDs: port GUID, entry count n, n table entries, n assigned GUIDs
  for (const a of aliases?.list() ?? []) {
    const n = Math.max(a.table.length, a.assigned.length);
    const body = new Uint8Array(10 + 16 * n);
    const dv = new DataView(body.buffer);
    dv.setBigUint64(0, a.portGuid);
    dv.setUint16(8, n);
    for (let i = 0; i < n; i++) {
      dv.setBigUint64(10 + 8 * i, a.table[i] ?? 0n);
      dv.setBigUint64(10 + 8 * (n + i), a.assigned[i] ?? 0n);
    }
    out.set(`a/${hex(a.portGuid)}`, tagged(Tag.Alias, body));
  }
  return out;
}

const same = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);

/** One numbered change: a put (`data`) or a delete. */
export interface SyncChange {
  key: string;
  data?: Uint8Array;
}

/** What a pull answers. */
export interface SyncUpdate {
  /** The sequence number the standby is at after applying this. */
  seq: bigint;
  /** True: `changes` are the whole state (the standby drops what it had). */
  full: boolean;
  changes: SyncChange[];
}

/** The master's side: the state as last exported, numbered changes, and which standby has what. */
export class SyncSource {
  private seq = 0n;
  private last: SyncEntries = new Map();
  /** Changes by sequence number (the oldest kept is `journal[0]`), bounded. */
  private journal: Array<{ seq: bigint; change: SyncChange }> = [];
  private readonly standbys = new Map<bigint, { seq: bigint; at: number }>();

  constructor(private readonly maxJournal = 65536) {}

  get sequence(): bigint {
    return this.seq;
  }

  /** Take the current state: every difference from the last one becomes a numbered change. */
  update(now: SyncEntries): bigint {
    const changes: SyncChange[] = [];
    for (const [k, v] of now) {
      const was = this.last.get(k);
      if (!was || !same(was, v)) changes.push({ key: k, data: v });
    }
    for (const k of this.last.keys()) if (!now.has(k)) changes.push({ key: k });
    if (!changes.length) return this.seq;
    this.seq++;
    for (const c of changes) this.journal.push({ seq: this.seq, change: c });
    if (this.journal.length > this.maxJournal) this.journal = this.journal.slice(this.journal.length - this.maxJournal);
    this.last = now;
    return this.seq;
  }

  /** Answer a standby at `since` (0: it has nothing): the changes after it, or the whole state. */
  pull(guid: bigint, since: bigint, at: number): SyncUpdate {
    const oldest = this.journal[0]?.seq ?? this.seq + 1n;
    let u: SyncUpdate;
    if (since === this.seq) u = { seq: this.seq, full: false, changes: [] };
    else if (since > 0n && since < this.seq && since + 1n >= oldest) u = { seq: this.seq, full: false, changes: this.journal.filter((j) => j.seq > since).map((j) => j.change) };
    else u = { seq: this.seq, full: true, changes: [...this.last].map(([key, data]) => ({ key, data })) };
    this.standbys.set(guid, { seq: this.seq, at });
    return u;
  }

  /** Has this SM ever pulled (an ibsm standby), and does it hold the current state? */
  knows(guid: bigint): boolean {
    return this.standbys.has(guid);
  }
  isCurrent(guid: bigint): boolean {
    return this.standbys.get(guid)?.seq === this.seq;
  }
}

/** The standby's side: the entries it holds and the sequence number they are at. */
export class SyncMirror {
  seq = 0n;
  readonly entries: SyncEntries = new Map();

  apply(u: SyncUpdate): void {
    if (u.full) this.entries.clear();
    for (const c of u.changes) {
      if (c.data) this.entries.set(c.key, c.data);
      else this.entries.delete(c.key);
    }
    this.seq = u.seq;
  }

  /** Put the state into the SA's managers (this SM has just become master). Returns counts. */
  restore(mc: MulticastManager, services: ServiceRegistry, inform: InformManager, now: number, aliases?: AliasGuids): { groups: number; members: number; services: number; subscriptions: number; aliasPorts: number } {
    const groups = new Map<bigint, { rec: MCMemberRecord; members: MCMemberRecord[] }>();
    const svcs: ServiceRecord[] = [];
    const subs: Subscription[] = [];
    let aliasPorts = 0;
    for (const v of this.entries.values()) {
      const body = v.subarray(1);
      switch (v[0]) {
        case Tag.Group: {
          const rec = MCMemberRecord.decode(body);
          const g = groups.get(rec.mgid) ?? { rec, members: [] };
          g.rec = rec;
          groups.set(rec.mgid, g);
          break;
        }
        case Tag.Member: {
          const rec = MCMemberRecord.decode(body);
          const g = groups.get(rec.mgid) ?? { rec: { ...rec, portGid: 0n, joinState: 0, proxyJoin: 0 }, members: [] };
          g.members.push(rec);
          groups.set(rec.mgid, g);
          break;
        }
        case Tag.Service:
          svcs.push(ServiceRecord.decode(body));
          break;
        case Tag.Subscription: {
          const r = InformInfoRecord.decode(body);
          const dv = new DataView(body.buffer, body.byteOffset, body.byteLength);
          subs.push({ subscriberGid: r.subscriberGid, subscriberGuid: dv.getBigUint64(InformInfoRecord.byteLength), lid: dv.getUint16(InformInfoRecord.byteLength + 8), enumeration: r.enumeration, info: r.informInfo });
          break;
        }
        case Tag.Lid:
        case Tag.Topology:
        case Tag.Health:
          break;
        case Tag.Alias: {
          const dv = new DataView(body.buffer, body.byteOffset, body.byteLength);
          const n = dv.getUint16(8);
          if (body.length < 10 + 16 * n) throw new DecodeError('SaSync', 'alias', 0, `alias entry of ${body.length} bytes for ${n} GUIDs`);
          const at = (i: number): bigint => dv.getBigUint64(10 + 8 * i);
          const table = Array.from({ length: n }, (_, i) => at(i));
          aliases?.restore(dv.getBigUint64(0), table.some((g) => g) ? table : [], Array.from({ length: n }, (_, i) => at(n + i)));
          aliasPorts++;
          break;
        }
        default:
          throw new DecodeError('SaSync', 'tag', 0, `unknown entry tag ${v[0]}`);
      }
    }
    let members = 0;
    for (const g of groups.values()) members += mc.restore(g.rec, g.members);
    for (const s of svcs) services.restore(s, now);
    for (const s of subs) inform.restore(s);
    return { groups: groups.size, members, services: svcs.length, subscriptions: subs.length, aliasPorts };
  }

  /** The fingerprint of the master's view of the fabric, when it sent one. */
  topology(): bigint | undefined {
    const v = this.entries.get('t');
    return v?.[0] === Tag.Topology && v.length === 9 ? new DataView(v.buffer, v.byteOffset + 1, 8).getBigUint64(0) : undefined;
  }

  /** The health rows in the mirrored state (health hook: the SM decodes them). */
  health(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (const v of this.entries.values()) if (v[0] === Tag.Health) out.push(v.subarray(1));
    return out;
  }

  /** The GUID→LID map in the mirrored state. */
  lids(): Map<bigint, SyncLid> {
    const out = new Map<bigint, SyncLid>();
    for (const v of this.entries.values()) {
      if (v[0] !== Tag.Lid) continue;
      const dv = new DataView(v.buffer, v.byteOffset + 1, 11);
      out.set(dv.getBigUint64(0), { base: dv.getUint16(8), lmc: v[11]! });
    }
    return out;
  }
}

// ---------------------------------------------------------------- the payload of a pull

/** A SyncUpdate as bytes: seq (8), full (1), count (4), then per change: key length (2), key,
 * data length (4, 0xffffffff for a delete), data. */
export function encodeSyncUpdate(u: SyncUpdate): Uint8Array {
  const enc = new TextEncoder();
  const keys = u.changes.map((c) => enc.encode(c.key));
  let n = 13;
  u.changes.forEach((c, i) => (n += 2 + keys[i]!.length + 4 + (c.data?.length ?? 0)));
  const out = new Uint8Array(n);
  const dv = new DataView(out.buffer);
  dv.setBigUint64(0, u.seq);
  out[8] = u.full ? 1 : 0;
  dv.setUint32(9, u.changes.length);
  let o = 13;
  u.changes.forEach((c, i) => {
    const k = keys[i]!;
    dv.setUint16(o, k.length);
    out.set(k, o + 2);
    o += 2 + k.length;
    dv.setUint32(o, c.data ? c.data.length : 0xffffffff);
    o += 4;
    if (c.data) {
      out.set(c.data, o);
      o += c.data.length;
    }
  });
  return out;
}

/** Throws DecodeError on anything that does not frame exactly. */
export function decodeSyncUpdate(b: Uint8Array): SyncUpdate {
  const fail = (what: string, at: number): never => {
    throw new DecodeError('SaSync', what, at, `${b.length} bytes do not frame a sync update`);
  };
  if (b.length < 13) fail('header', 0);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const count = dv.getUint32(9);
  const dec = new TextDecoder();
  const changes: SyncChange[] = [];
  let o = 13;
  for (let i = 0; i < count; i++) {
    if (o + 2 > b.length) fail('key length', o);
    const kl = dv.getUint16(o);
    if (o + 2 + kl + 4 > b.length) fail('key', o);
    const key = dec.decode(b.subarray(o + 2, o + 2 + kl));
    o += 2 + kl;
    const dl = dv.getUint32(o);
    o += 4;
    if (dl === 0xffffffff) {
      changes.push({ key });
      continue;
    }
    if (o + dl > b.length) fail('data', o);
    changes.push({ key, data: b.slice(o, o + dl) });
    o += dl;
  }
  return { seq: dv.getBigUint64(0), full: b[8] === 1, changes };
}

/** Partitions in OpenSM's partitions.conf syntax → the P_Key table of every end port. Pure.
 *
 *   <Partition Definition>:[<newline>]<Partition Properties>;
 *   Definition: [Name][=PKey][,indx0][,ipoib[,mgroup flags]][,defmember=full|limited|both]
 *   Properties: port specifiers `<guid|ALL|ALL_CAS|ALL_SWITCHES|ALL_ROUTERS|SELF>[=full|limited|both]`
 *               and multicast groups `mgid=<gid>[,flag=value]*`, comma separated.
 *
 * As in OpenSM, the default partition 0x7fff always exists: without a file every port is a full
 * member and the partition carries IPoIB (`Default=0x7fff, ipoib : ALL=full ;`); with a file that has no rule for it, ALL=limited, SELF=full. */

import { IbsmFileError } from '../util/errors.js';
export type Membership = 'full' | 'limited' | 'both';
import { RATE_GBPS, RATES_ASCENDING } from './rates.js';
import type { PortKind } from './snapshot.js';
import { parseGidText } from '../wire/format.js';
import { parseU64 } from '../util/guid.js';

export type { PortKind };

export interface McastGroupSpec {
  mgid: string;
  flags: Record<string, string>;
}

export interface Partition {
  name: string;
  pkey: number;
  indx0: boolean;
  ipoib: boolean;
  /** Explicit port GUIDs. */
  members: Map<bigint, Membership>;
  /** Keyword rules (ALL, ALL_CAS, ...). */
  keywords: Map<string, Membership>;
  mgroups: McastGroupSpec[];
  /** Multicast group flags given on the partition definition (mtu, rate, sl, scope, q_key,
   * tclass, flowlabel): the IPoIB broadcast group's parameters, inherited by its mgid= groups. */
  groupFlags: Record<string, string>;
}

/** One `definition : members ;` statement, in file order: OpenSM creates the multicast groups
 * statement by statement (the IPoIB broadcast group, then its mgid= lines). */
export interface PartitionStatement {
  pkey: number;
  name: string;
  line: number;
  ipoib: boolean;
  groupFlags: Record<string, string>;
  mgroups: McastGroupSpec[];
}

/** Multicast group flags, on a partition definition or after an mgid=. */
const GROUP_FLAGS = ['rate', 'mtu', 'sl', 'scope', 'q_key', 'tclass', 'flowlabel'];

export class PartitionConfigError extends IbsmFileError {
  override readonly name = 'PartitionConfigError';
}

const KEYWORDS = new Set(['ALL', 'ALL_CAS', 'ALL_SWITCHES', 'ALL_ROUTERS', 'SELF']);
export const DEFAULT_PKEY = 0x7fff;

/** A membership word: full, limited or both, or a beginning of one (`limi`, as OpenSM's man page
 * writes it: OpenSM compares the word's own length). Anything else is refused with its line
 * (OpenSM takes an unknown word as limited: a typo such as `ALL=fool` would quietly make every
 * port a limited member). */
function membership(v: string | undefined, dflt: Membership, where: string, item: string): Membership {
  if (v === undefined) return dflt;
  const s = v.trim().toLowerCase();
  if (s) for (const m of ['full', 'limited', 'both'] as const) if (m.startsWith(s)) return m;
  throw new PartitionConfigError(`${where}: "${item}": unknown membership "${v.trim()}" (full, limited or both)`);
}

/** Combine two rules naming the same port in one partition: full wins over limited (as in
 * OpenSM); only an explicit `both` gives both entries. */
function merge(a: Membership | undefined, b: Membership): Membership {
  if (!a || a === b) return b;
  if (a === 'both' || b === 'both') return 'both';
  return 'full';
}

export class PartitionPlan {
  constructor(
    readonly partitions: Partition[],
    /** The statements that defined them, in file order (default: none, so no multicast groups). */
    readonly statements: readonly PartitionStatement[] = [],
  ) {}

  /** OpenSM's behaviour without a file. */
  static defaultPlan(): PartitionPlan {
    return parsePartitions('Default=0x7fff, ipoib : ALL=full ;');
  }

  /** The SL a partition's definition gives (`sl=`, 0 when not given or out of range): a
   * PathRecord's SL in that partition with QoS on and no QoS level SL, as OpenSM (p_prtn->sl). */
  slOf(pkey: number): number {
    const p = this.partitions.find((x) => (x.pkey & 0x7fff) === (pkey & 0x7fff));
    const n = num(p?.groupFlags.sl);
    return n >= 0 && n <= 15 ? n : MGRP_DEFAULTS.sl;
  }

  /** Membership of a port in a partition, if any. */
  membershipOf(p: Partition, guid: bigint, kind: PortKind, self: boolean): Membership | undefined {
    let m: Membership | undefined = p.members.get(guid);
    const kw = (k: string, applies: boolean): void => {
      const v = p.keywords.get(k);
      if (v && applies) m = m ? merge(m, v) : v;
    };
    kw('ALL', true);
    kw('ALL_CAS', kind === 'ca');
    kw('ALL_SWITCHES', kind === 'switch');
    kw('ALL_ROUTERS', kind === 'router');
    kw('SELF', self);
    return m;
  }

  /** The P_Key table for an end port: the default partition (or an indx0 one) first, with the membership bit. */
  pkeysFor(guid: bigint, kind: PortKind = 'ca', self = false): number[] {
    const out: number[] = [];
    const ordered = [...this.partitions].sort((a, b) => Number(b.indx0 || b.pkey === DEFAULT_PKEY) - Number(a.indx0 || a.pkey === DEFAULT_PKEY));
    for (const p of ordered) {
      const m = this.membershipOf(p, guid, kind, self);
      if (!m) continue;
      if (m === 'full' || m === 'both') out.push(p.pkey | 0x8000);
      if (m === 'limited' || m === 'both') out.push(p.pkey);
    }
    return out;
  }
}

function stripComments(text: string): string {
  return text
    .split('\n')
    .map((l) => l.replace(/#.*/, ''))
    .join('\n');
}

/** Line numbers of offsets in a text (1-based), by binary search over the line starts. */
function lineIndex(text: string): (index: number) => number {
  const starts = [0];
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  return (index) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

export function parsePartitions(text: string, file = 'partitions.conf'): PartitionPlan {
  const src = stripComments(text);
  const lineOf = lineIndex(src);
  const byPkey = new Map<number, Partition>();
  const order: Partition[] = [];
  let autoPkey = 0x0001;
  const statements: PartitionStatement[] = [];
  let pos = 0;
  const re = /;/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(src))) {
    const stmt = src.slice(pos, m.index);
    const stmtLine = lineOf(pos + (stmt.length - stmt.trimStart().length));
    pos = m.index + 1;
    if (!stmt.trim()) continue;
    const colon = stmt.indexOf(':');
    if (colon < 0) throw new PartitionConfigError(`${file}:${stmtLine}: expected "<partition definition> : <members> ;", found no ':'`);
    const defText = stmt.slice(0, colon);
    const stmtStart = pos - stmt.length - 1;
    let propText = stmt.slice(colon + 1);
    let propStart = stmtStart + colon + 1;
    // OpenSM allows a "defmember=..." section between two colons.
    let defmember: Membership = 'limited';
    const second = propText.indexOf(':');
    const defParts = defText.split(',').map((s) => s.trim());
    if (second >= 0 && /^\s*defmember\s*=/i.test(propText.slice(0, second))) {
      for (const extra of propText.slice(0, second).split(',')) defParts.push(extra.trim());
      propText = propText.slice(second + 1);
      propStart += second + 1;
    }
    const [head, ...flags] = defParts;
    const [rawName, rawPkey] = (head ?? '').split('=').map((s) => s.trim());
    let pkey: number;
    // `Name=` with nothing after it is a P_Key left out by mistake, not a request for an automatic one.
    if (rawPkey === '') throw new PartitionConfigError(`${file}:${stmtLine}: "${head}" gives no P_Key after "=" (write ${rawName || 'Name'}=0x8001, or the name alone for an automatic P_Key)`);
    if (rawPkey !== undefined) {
      const v = Number(rawPkey);
      if (!Number.isInteger(v) || v < 0 || v > 0xffff) throw new PartitionConfigError(`${file}:${stmtLine}: bad P_Key "${rawPkey}" (expected a number like 0x7fff)`);
      pkey = v & 0x7fff;
      if (pkey === 0) throw new PartitionConfigError(`${file}:${stmtLine}: P_Key 0 is invalid`);
    } else {
      while (byPkey.has(autoPkey)) autoPkey++;
      pkey = autoPkey++;
    }
    let indx0 = false;
    let ipoib = false;
    const groupFlags: Record<string, string> = {};
    for (const f of flags) {
      if (!f) continue;
      const [k, v] = f.split('=').map((s) => s.trim());
      const key = k!.toLowerCase();
      if (key === 'indx0') indx0 = true;
      else if (key === 'ipoib') ipoib = true;
      else if (key === 'defmember') defmember = membership(v, 'limited', `${file}:${stmtLine}`, f);
      else if (GROUP_FLAGS.includes(key)) {
        if (key === 'scope') groupFlags.scope = groupFlags.scope !== undefined ? `${groupFlags.scope},${v ?? ''}` : (v ?? '');
        else groupFlags[key] = v ?? '';
      } else if (key === 'mtu_limit') {
        /* accepted, as before */
      } else throw new PartitionConfigError(`${file}:${stmtLine}: unknown partition flag "${f}"`);
    }
    let part = byPkey.get(pkey);
    if (!part) {
      part = { name: rawName ?? '', pkey, indx0, ipoib, members: new Map(), keywords: new Map(), mgroups: [], groupFlags };
      byPkey.set(pkey, part);
      order.push(part);
    } else {
      part.indx0 ||= indx0;
      // A later definition of the same partition brings its own IPoIB flags (OpenSM: per statement).
      if (ipoib) part.groupFlags = groupFlags;
      part.ipoib ||= ipoib;
    }
    const statement: PartitionStatement = { pkey, name: part.name, line: stmtLine, ipoib, groupFlags, mgroups: [] };
    statements.push(statement);
    const stmtGroups = statement.mgroups;
    // Properties: split on commas, but "mgid=..., flag=..." continue a group until a port specifier.
    let group: McastGroupSpec | undefined;
    let items = 0;
    for (const raw of propText.matchAll(/[^,\n]+/g)) {
      const item = raw[0].trim();
      if (!item) continue;
      items++;
      const where = `${file}:${lineOf(propStart + raw.index! + (raw[0].length - raw[0].trimStart().length))}`;
      const [k, v] = item.split('=').map((s) => s.trim());
      const key = k!;
      if (key.toLowerCase() === 'mgid') {
        if (!v) throw new PartitionConfigError(`${where}: mgid needs a value`);
        group = { mgid: v, flags: {} };
        part.mgroups.push(group);
        stmtGroups.push(group);
        continue;
      }
      if (group && GROUP_FLAGS.includes(key.toLowerCase())) {
        const fk = key.toLowerCase();
        if (fk === 'scope' && group.flags.scope !== undefined) group.flags.scope += `,${v ?? ''}`;
        else group.flags[fk] = v ?? '';
        continue;
      }
      group = undefined;
      if (KEYWORDS.has(key)) {
        part.keywords.set(key, merge(part.keywords.get(key), membership(v, defmember, where, item)));
      } else if (parseU64(key) !== undefined) {
        const g = parseU64(key)!;
        part.members.set(g, merge(part.members.get(g), membership(v, defmember, where, item)));
      } else {
        throw new PartitionConfigError(`${where}: "${item}" is not a port GUID, a keyword (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF) or mgid=`);
      }
    }
    if (items === 0) throw new PartitionConfigError(`${file}:${stmtLine}: partition ${part.name || `0x${pkey.toString(16)}`} has an empty member list (name its members: ALL=full, a port GUID, ...)`);
  }
  const rest = src.slice(pos);
  if (rest.trim()) throw new PartitionConfigError(`${file}:${lineOf(pos + rest.length - rest.trimStart().length)}: the last partition is not terminated with ';'`);
  if (!byPkey.has(DEFAULT_PKEY)) {
    const dflt: Partition = { name: 'Default', pkey: DEFAULT_PKEY, indx0: false, ipoib: false, members: new Map(), keywords: new Map<string, Membership>([['ALL', 'limited'], ['SELF', 'full']]), mgroups: [], groupFlags: {} };
    order.unshift(dflt);
  }
  return new PartitionPlan(order, statements);
}

// ---------------------------------------------------------------- multicast groups

/** A multicast group the SM creates from partitions.conf before the SA answers (OpenSM's
 * "well-known" groups: never deleted by the last leave). `pkey` carries the full-member bit. */
export interface PartitionGroup {
  mgid: bigint;
  pkey: number;
  qKey: number;
  /** MTU and rate codes (the record's selector is "exactly"). */
  mtu: number;
  rate: number;
  sl: number;
  tClass: number;
  flowLabel: number;
  scope: number;
  hopLimit: number;
  /** Where it came from, for logs: "<partition name> (line N)". */
  source: string;
}

export interface PartitionGroupsResult {
  groups: PartitionGroup[];
  /** Lines or groups skipped, with the reason (OpenSM logs these and goes on). */
  warnings: string[];
}

/** OpenSM's defaults for these groups: MTU 2048 (4), 10 Gb/s (3), SL 0, link-local scope, and
 * the IPoIB Q_Key 0x0b1b for IP groups. */
export const MGRP_DEFAULTS = { mtu: 4, rate: 3, sl: 0, scope: 2, ipQKey: 0x0b1b } as const;
/** ff12:401b:ffff::ffff:ffff, the IPv4 broadcast MGID (P_Key bytes 4..5 filled per partition). */
export const IPOIB_BROADCAST = 0xff12401bffff000000000000ffffffffn;

interface GroupFlags {
  mtu: number;
  rate: number;
  sl: number;
  qKey: number;
  tClass: number;
  flowLabel: number;
  scopes: number[];
}

/** strtoul(v, 0): decimal, 0x hex or 0 octal; NaN when not a number. */
const MTU_BYTES = [256, 512, 1024, 2048, 4096];
const MAX_RATE_CODE = Math.max(...Object.keys(RATE_GBPS).map(Number));
/** The rate code of exactly `gbps`. */
function gbpsCode(gbps: number): number | undefined {
  const hit = Object.entries(RATE_GBPS).find(([, g]) => g === gbps);
  return hit ? Number(hit[0]) : undefined;
}

function num(v: string | undefined): number {
  if (v === undefined) return NaN;
  const s = v.trim();
  if (/^0x[0-9a-f]+$/i.test(s)) return parseInt(s.slice(2), 16);
  if (/^0[0-7]+$/.test(s)) return parseInt(s, 8);
  if (/^\d+$/.test(s)) return parseInt(s, 10);
  return NaN;
}

function applyFlags(base: GroupFlags, flags: Record<string, string>, where: string, warnings: string[]): GroupFlags {
  const out = { ...base, scopes: [...base.scopes] };
  const bad = (k: string, range: string): void => void warnings.push(`${where}: flag '${k}=${flags[k]}' needs ${range}: skipped`);
  for (const [k, v] of Object.entries(flags)) {
    const n = num(v);
    switch (k) {
      // OpenSM reads both as codes (strtoul); ibsm also takes what no code can mean: an MTU in
      // bytes (mtu=4096) and a rate in Gb/s above the last code (rate=400), with a warning
      case 'mtu':
        if (n >= 1 && n <= 5) out.mtu = n;
        else if (MTU_BYTES.includes(n)) {
          out.mtu = MTU_BYTES.indexOf(n) + 1;
          warnings.push(`${where}: flag 'mtu=${v}' read as ${n} bytes (MTU code ${out.mtu}); OpenSM takes only the code`);
        } else bad(k, `an MTU code 1..5 (or bytes: ${MTU_BYTES.join(', ')})`);
        break;
      case 'rate':
        if (n >= 2 && RATE_GBPS[n] !== undefined) out.rate = n;
        else if (n > MAX_RATE_CODE && gbpsCode(n) !== undefined) {
          out.rate = gbpsCode(n)!;
          warnings.push(`${where}: flag 'rate=${v}' read as ${n} Gb/s (rate code ${out.rate}); OpenSM takes only the code`);
        } else bad(k, `a rate code 2..${MAX_RATE_CODE} (or Gb/s above ${MAX_RATE_CODE}: ${RATES_ASCENDING.map((r) => RATE_GBPS[r]!).filter((g) => g > MAX_RATE_CODE).join(', ')})`);
        break;
      case 'sl':
        if (n >= 0 && n <= 15) out.sl = n;
        else bad(k, 'an SL 0..15');
        break;
      case 'q_key':
        if (n >= 0 && n <= 0xffffffff) out.qKey = n;
        else bad(k, 'a 32-bit Q_Key');
        break;
      case 'tclass':
        if (n >= 0 && n <= 0xff) out.tClass = n;
        else bad(k, 'a TClass 0..255');
        break;
      case 'flowlabel':
        if (n >= 0 && n <= 0xfffff) out.flowLabel = n;
        else bad(k, 'a 20-bit FlowLabel');
        break;
      case 'scope':
        for (const one of v.split(',')) {
          const s = num(one);
          if (s >= 1 && s <= 15) {
            if (!out.scopes.includes(s)) out.scopes.push(s);
          } else warnings.push(`${where}: flag 'scope=${one}' needs a scope 1..15: skipped`);
        }
        break;
    }
  }
  return out;
}

const withScope = (mgid: bigint, scope: number): bigint => (mgid & ~(0xfn << 112n)) | (BigInt(scope & 0xf) << 112n);
const withPkey = (mgid: bigint, pkey: number): bigint => (mgid & ~(0xffffn << 80n)) | (BigInt(pkey & 0xffff) << 80n);

/**
 * The multicast groups partitions.conf asks for, in the order OpenSM creates them (so the
 * MLIDs, given out from 0xC000 in this order, are OpenSM's): for each statement, the IPv4
 * broadcast group `ff12:401b:<pkey>::ffff:ffff` when it has the `ipoib` flag, then each of its
 * `mgid=` groups. Partition-level flags (mtu, rate, sl, scope, Q_Key, TClass, FlowLabel) are the
 * broadcast group's; an mgid= group inherits them except TClass and overrides with its own. IP
 * groups (signature 0x401B/0x601B) take the partition's P_Key (the MGID's P_Key bytes must be 0
 * or that P_Key), its MTU and rate, and Q_Key 0x0b1b unless given. The MGID's scope nibble is
 * set to the group's scope, link-local (2) unless `scope` is given, one group per scope given
 * (hop limit 0 for link-local, 0xFF otherwise): OpenSM turns `mgid=ff15::1` without a scope
 * flag into ff12::1 the same way. As OpenSM
 * without QoS, a partition-level `sl` is not used (`qos` true keeps it).
 */
export function partitionGroups(plan: PartitionPlan, opts: { qos?: boolean } = {}): PartitionGroupsResult {
  const groups: PartitionGroup[] = [];
  const warnings: string[] = [];
  const seen = new Set<bigint>();
  const add = (mgid: bigint, f: GroupFlags, pkey: number, source: string): void => {
    for (const sc of f.scopes.length ? f.scopes : [MGRP_DEFAULTS.scope]) {
      const g = withScope(mgid, sc);
      if (seen.has(g)) continue;
      seen.add(g);
      groups.push({ mgid: g, pkey: pkey | 0x8000, qKey: f.qKey, mtu: f.mtu, rate: f.rate, sl: f.sl, tClass: f.tClass, flowLabel: f.flowLabel, scope: Number((g >> 112n) & 0xfn), hopLimit: sc === 2 ? 0 : 0xff, source });
    }
  };
  for (const st of plan.statements) {
    const where = `${st.name || st.pkey.toString(16)} (line ${st.line})`;
    let pf = applyFlags({ mtu: MGRP_DEFAULTS.mtu, rate: MGRP_DEFAULTS.rate, sl: MGRP_DEFAULTS.sl, qKey: 0, tClass: 0, flowLabel: 0, scopes: [] }, st.groupFlags, where, warnings);
    if (!opts.qos && pf.sl !== MGRP_DEFAULTS.sl) {
      warnings.push(`${where}: sl=${pf.sl} not used: QoS is not enabled (SL 0)`);
      pf = { ...pf, sl: MGRP_DEFAULTS.sl };
    }
    if (st.ipoib) add(withPkey(IPOIB_BROADCAST, st.pkey | 0x8000), { ...pf, qKey: pf.qKey || MGRP_DEFAULTS.ipQKey }, st.pkey, `${where} IPoIB broadcast`);
    for (const mg of st.mgroups) {
      const gw = `${where} mgid=${mg.mgid}`;
      let mgid = parseGidText(mg.mgid);
      if (mgid === undefined || mgid >> 120n !== 0xffn) {
        warnings.push(`${gw}: not a multicast GID: skipped`);
        continue;
      }
      const f = applyFlags({ ...pf, tClass: 0 }, mg.flags, gw, warnings);
      const sig = Number((mgid >> 96n) & 0xffffn);
      if (sig === 0x401b || sig === 0x601b) {
        const mp = Number((mgid >> 80n) & 0xffffn);
        if (mgid !== IPOIB_BROADCAST && mp !== 0 && mp !== st.pkey) {
          warnings.push(`${gw}: an IP group's P_Key bytes must be 0 or the partition's 0x${st.pkey.toString(16)}, not 0x${mp.toString(16)}: skipped`);
          continue;
        }
        if (f.rate !== pf.rate || f.mtu !== pf.mtu) {
          warnings.push(`${gw}: an IP group needs the partition's rate ${pf.rate} and mtu ${pf.mtu} (given rate ${f.rate}, mtu ${f.mtu}): skipped`);
          continue;
        }
        mgid = withPkey(mgid, st.pkey | 0x8000);
        if (!f.qKey) f.qKey = MGRP_DEFAULTS.ipQKey;
      }
      if (seen.has(mgid)) continue;
      add(mgid, f, st.pkey, gw);
    }
  }
  return { groups, warnings };
}

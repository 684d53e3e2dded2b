/** Partitions in OpenSM's partitions.conf syntax → the P_Key table of every end port. Pure.
 *
 *   <Partition Definition>:[<newline>]<Partition Properties>;
 *   Definition: [Name][=PKey][,indx0][,ipoib[,mgroup flags]][,defmember=full|limited|both]
 *   Properties: port specifiers `<guid|ALL|ALL_CAS|ALL_SWITCHES|ALL_ROUTERS|SELF>[=full|limited|both]`
 *               and multicast groups `mgid=<gid>[,flag=value]*`, comma separated.
 *
 * As in OpenSM, the default partition 0x7fff always exists: without a file every port is a full
 * member (`Default=0x7fff : ALL=full ;`); with a file that has no rule for it, ALL=limited, SELF=full. */

export type Membership = 'full' | 'limited' | 'both';
import type { PortKind } from './snapshot.js';

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
}

export class PartitionConfigError extends Error {
  override readonly name = 'PartitionConfigError';
}

const KEYWORDS = new Set(['ALL', 'ALL_CAS', 'ALL_SWITCHES', 'ALL_ROUTERS', 'SELF']);
export const DEFAULT_PKEY = 0x7fff;

function membership(v: string | undefined, dflt: Membership): Membership {
  if (v === undefined) return dflt;
  const s = v.trim().toLowerCase();
  if (s === 'full' || s === 'limited' || s === 'both') return s;
  return 'limited'; // OpenSM: unrecognized means limited
}

/** Combine two rules naming the same port in one partition: full wins over limited (as in
 * OpenSM); only an explicit `both` gives both entries. */
function merge(a: Membership | undefined, b: Membership): Membership {
  if (!a || a === b) return b;
  if (a === 'both' || b === 'both') return 'both';
  return 'full';
}

export class PartitionPlan {
  constructor(readonly partitions: Partition[]) {}

  /** OpenSM's behaviour without a file. */
  static defaultPlan(): PartitionPlan {
    return parsePartitions('Default=0x7fff : ALL=full ;');
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

function lineOf(text: string, index: number): number {
  let n = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text[i] === '\n') n++;
  return n;
}

export function parsePartitions(text: string, file = 'partitions.conf'): PartitionPlan {
  const src = stripComments(text);
  const byPkey = new Map<number, Partition>();
  const order: Partition[] = [];
  let autoPkey = 0x0001;
  let pos = 0;
  const re = /;/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(src))) {
    const stmt = src.slice(pos, m.index);
    const stmtLine = lineOf(src, pos + (stmt.length - stmt.trimStart().length));
    pos = m.index + 1;
    if (!stmt.trim()) continue;
    const colon = stmt.indexOf(':');
    if (colon < 0) throw new PartitionConfigError(`${file}:${stmtLine}: expected "<partition definition> : <members> ;", found no ':'`);
    const defText = stmt.slice(0, colon);
    let propText = stmt.slice(colon + 1);
    // OpenSM allows a "defmember=..." section between two colons.
    let defmember: Membership = 'limited';
    const second = propText.indexOf(':');
    const defParts = defText.split(',').map((s) => s.trim());
    if (second >= 0 && /^\s*defmember\s*=/i.test(propText.slice(0, second))) {
      for (const extra of propText.slice(0, second).split(',')) defParts.push(extra.trim());
      propText = propText.slice(second + 1);
    }
    const [head, ...flags] = defParts;
    const [rawName, rawPkey] = (head ?? '').split('=').map((s) => s.trim());
    let pkey: number;
    if (rawPkey !== undefined && rawPkey !== '') {
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
    for (const f of flags) {
      if (!f) continue;
      const [k, v] = f.split('=').map((s) => s.trim());
      const key = k!.toLowerCase();
      if (key === 'indx0') indx0 = true;
      else if (key === 'ipoib') ipoib = true;
      else if (key === 'defmember') defmember = membership(v, 'limited');
      else if (['rate', 'mtu', 'sl', 'scope', 'q_key', 'tclass', 'flowlabel', 'mtu_limit'].includes(key)) {
        /* IPoIB broadcast group flags: accepted */
      } else throw new PartitionConfigError(`${file}:${stmtLine}: unknown partition flag "${f}"`);
    }
    let part = byPkey.get(pkey);
    if (!part) {
      part = { name: rawName ?? '', pkey, indx0, ipoib, members: new Map(), keywords: new Map(), mgroups: [] };
      byPkey.set(pkey, part);
      order.push(part);
    } else {
      part.indx0 ||= indx0;
      part.ipoib ||= ipoib;
    }
    // Properties: split on commas, but "mgid=..., flag=..." continue a group until a port specifier.
    let group: McastGroupSpec | undefined;
    for (const raw of propText.split(/[,\n]/)) {
      const item = raw.trim();
      if (!item) continue;
      const [k, v] = item.split('=').map((s) => s.trim());
      const key = k!;
      if (key.toLowerCase() === 'mgid') {
        if (!v) throw new PartitionConfigError(`${file}:${stmtLine}: mgid needs a value`);
        group = { mgid: v, flags: {} };
        part.mgroups.push(group);
        continue;
      }
      if (group && ['rate', 'mtu', 'sl', 'scope', 'q_key', 'tclass', 'flowlabel'].includes(key.toLowerCase())) {
        group.flags[key.toLowerCase()] = v ?? '';
        continue;
      }
      group = undefined;
      if (KEYWORDS.has(key)) {
        part.keywords.set(key, merge(part.keywords.get(key), membership(v, defmember)));
      } else if (/^(0x[0-9a-fA-F]{1,16}|\d+)$/.test(key)) {
        const g = BigInt(key);
        part.members.set(g, merge(part.members.get(g), membership(v, defmember)));
      } else {
        throw new PartitionConfigError(`${file}:${stmtLine}: "${item}" is not a port GUID, a keyword (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF) or mgid=`);
      }
    }
  }
  if (src.slice(pos).trim()) throw new PartitionConfigError(`${file}:${lineOf(src, pos)}: the last partition is not terminated with ';'`);
  if (!byPkey.has(DEFAULT_PKEY)) {
    const dflt: Partition = { name: 'Default', pkey: DEFAULT_PKEY, indx0: false, ipoib: false, members: new Map(), keywords: new Map<string, Membership>([['ALL', 'limited'], ['SELF', 'full']]), mgroups: [] };
    order.unshift(dflt);
  }
  return new PartitionPlan(order);
}

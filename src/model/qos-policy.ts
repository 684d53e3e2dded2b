/**
 * OpenSM's QoS policy file (qos-policy.conf; doc/QoS_management_in_OpenSM.txt), parsed and
 * matched. Pure.
 *
 *   port-groups      port-group: name, use, port-guid (values and ranges), partition (a
 *                    partitions.conf name), node-type (CA, SWITCH, ROUTER, ALL, SELF); port-name
 *                    is not supported (a warning: ibsm names ports by GUID)
 *   qos-levels       qos-level: name, use, sl, mtu-limit, rate-limit, packet-life, pkey
 *                    (path-bits is accepted and ignored, with a warning)
 *   qos-match-rules  qos-match-rule: use, qos-class, source, destination, service-id, pkey,
 *                    qos-level-name
 *   qos-ulps         the simple form, one rule a line: `default : <sl>`, `any, service-id ...`,
 *                    `any, pkey ...`, `any, target-port-guid ...`, `any, source-port-guid ...`,
 *                    `any, source-target-port-guid ...`, `sdp[, port-num ...]`, `rds[, port-num
 *                    ...]`, `iser[, port-num ...]`, `srp, target-port-guid ...`, `ipoib[, pkey ...]`
 *                    then `: <sl>`. Simple rules come after the full rules, in file order.
 *   qos-setup        OpenSM parses and ignores it (VL tables come from its qos_* options): so
 *                    does ibsm, with a warning.
 *
 * Matching is OpenSM's: the first rule whose every criterion holds (source and destination
 * groups; QoS class, service ID and P_Key only when the request carries them), else the level
 * named DEFAULT (or the simple `default` SL); none when neither exists.
 */
import { IbsmFileError } from '../util/errors.js';
import type { PartitionPlan, PortKind } from './partitions.js';

export class QosPolicyError extends IbsmFileError {
  override readonly name = 'QosPolicyError';
}

export type Range = readonly [bigint, bigint];

export interface QosLevel {
  name: string;
  use?: string;
  sl?: number;
  mtuLimit?: number;
  rateLimit?: number;
  packetLife?: number;
  /** P_Keys the level allows (base values, no membership bit); empty: any. */
  pkeys: Range[];
}

export interface PortGroup {
  name: string;
  use?: string;
  guids: Range[];
  partitions: string[];
  nodeTypes: Set<'ca' | 'switch' | 'router' | 'all' | 'self'>;
}

export interface MatchRule {
  use?: string;
  qosClass: Range[];
  source: string[];
  destination: string[];
  serviceId: Range[];
  pkey: Range[];
  level: QosLevel;
  /** Source/target port GUIDs of a simple rule (`any, target-port-guid ...`). */
  sourceGuids?: Range[];
  destinationGuids?: Range[];
}

/** A port as the matcher sees it. */
export interface QosPort {
  guid: bigint;
  kind: PortKind;
  /** The SM's own port (node-type SELF). */
  self: boolean;
}

/** What a PathRecord/MultiPathRecord request carries (undefined: not in its component mask). */
export interface QosRequest {
  serviceId?: bigint;
  qosClass?: number;
  pkey?: number;
  src: QosPort;
  dst: QosPort;
}

const inRanges = (rs: readonly Range[], v: bigint): boolean => rs.some(([a, b]) => v >= a && v <= b);

export class QosPolicy {
  constructor(
    readonly levels: readonly QosLevel[],
    readonly groups: ReadonlyMap<string, PortGroup>,
    readonly rules: readonly MatchRule[],
    readonly defaultLevel: QosLevel | undefined,
    readonly warnings: readonly string[],
    private readonly partitions?: PartitionPlan,
  ) {}

  /** The same policy resolving `partition:` port groups against this partition plan. */
  withPartitions(plan: PartitionPlan): QosPolicy {
    return new QosPolicy(this.levels, this.groups, this.rules, this.defaultLevel, this.warnings, plan);
  }

  /** True when any level sets an SL (for the routing-engine SL conflict log). */
  get setsSl(): boolean {
    return this.levels.some((l) => l.sl !== undefined) || this.defaultLevel?.sl !== undefined;
  }

  inGroup(name: string, p: QosPort): boolean {
    const g = this.groups.get(name.toLowerCase());
    if (!g) return false;
    if (inRanges(g.guids, p.guid)) return true;
    for (const t of g.nodeTypes) if (t === 'all' || t === p.kind || (t === 'self' && p.self)) return true;
    if (g.partitions.length && this.partitions) {
      for (const name of g.partitions) {
        const part = this.partitions.partitions.find((x) => x.name === name);
        if (part && this.partitions.membershipOf(part, p.guid, p.kind, p.self)) return true;
      }
    }
    return false;
  }

  private inGroups(names: readonly string[], p: QosPort): boolean {
    return names.some((n) => this.inGroup(n, p));
  }

  /** The first matching rule, or undefined. */
  matchRule(r: QosRequest): MatchRule | undefined {
    for (const rule of this.rules) {
      const src = rule.source.length > 0 || rule.sourceGuids !== undefined;
      const dst = rule.destination.length > 0 || rule.destinationGuids !== undefined;
      const srcOk = (): boolean => this.inGroups(rule.source, r.src) || (rule.sourceGuids !== undefined && inRanges(rule.sourceGuids, r.src.guid));
      const dstOk = (): boolean => this.inGroups(rule.destination, r.dst) || (rule.destinationGuids !== undefined && inRanges(rule.destinationGuids, r.dst.guid));
      if (src && !srcOk()) continue;
      if (dst && !dstOk()) continue;
      if (rule.qosClass.length && (r.qosClass === undefined || !inRanges(rule.qosClass, BigInt(r.qosClass)))) continue;
      if (rule.serviceId.length && (r.serviceId === undefined || !inRanges(rule.serviceId, r.serviceId))) continue;
      if (rule.pkey.length && (r.pkey === undefined || !inRanges(rule.pkey, BigInt(r.pkey & 0x7fff)))) continue;
      return rule;
    }
    return undefined;
  }

  /** The QoS level of a request: the first matching rule's, else the default level. */
  levelFor(r: QosRequest): QosLevel | undefined {
    return this.matchRule(r)?.level ?? this.defaultLevel;
  }
}

// ---------------------------------------------------------------- parsing

/** strtoull(v, 0). */
function bigNum(s: string): bigint | undefined {
  const t = s.trim();
  if (/^0x[0-9a-f]+$/i.test(t) || /^\d+$/.test(t)) return BigInt(t);
  return undefined;
}

function ranges(value: string, where: string): Range[] {
  const out: Range[] = [];
  for (const part of value.split(',')) {
    const t = part.trim();
    if (!t) continue;
    const [a, b] = t.split('-').map((x) => x.trim());
    const lo = bigNum(a ?? '');
    const hi = b === undefined ? lo : bigNum(b);
    if (lo === undefined || hi === undefined || hi < lo) throw new QosPolicyError(`${where}: "${t}" is not a number or a range lo-hi (decimal or 0x hex)`);
    out.push([lo, hi]);
  }
  return out;
}

function small(value: string, max: number, what: string, where: string): number {
  const v = bigNum(value);
  if (v === undefined || v > BigInt(max)) throw new QosPolicyError(`${where}: ${what} must be a number 0..${max}, got "${value.trim()}"`);
  return Number(v);
}

const names = (value: string): string[] =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** OpenSM's service IDs of the simple-form ULPs: SDP's port space and RDMA-CM's TCP port space. */
const SDP_BASE = 0x0000000000010000n;
const RDMA_TCP_BASE = 0x0000000001060000n;
const RDS_PORT = 0x48can;
const ISER_PORT = 0x0cbcn;

/** A block of the full form (port-group, qos-level, qos-match-rule) as read: its fields, and the
 * line each was last given on. */
interface Block {
  kind: string;
  line: number;
  fields: Map<string, string>;
  lines: Map<string, number>;
}
type FullRule = Omit<MatchRule, 'level'> & { levelName: string; line: number; lines: Map<string, number> };
type SimpleRule = Omit<MatchRule, 'level'> & { sl: number };

/** What a file gives, before the match rules are resolved against the levels and groups. */
interface Parsed {
  file: string;
  levels: QosLevel[];
  groups: Map<string, PortGroup>;
  fullRules: FullRule[];
  simpleRules: SimpleRule[];
  warnings: string[];
  simpleDefault?: number;
}

/** Each block of the full form: what its fields make. A field's problem is reported at the
 * field's own line (`w`: the last line that gave it), a missing name at the block's (`where`). */
const BLOCKS: Record<string, (f: Map<string, string>, where: string, w: (key: string) => string, b: Block, p: Parsed) => void> = {
  'port-group': (f, where, w, _b, p) => {
    const name = f.get('name');
    if (!name) throw new QosPolicyError(`${where}: a port-group needs a name`);
    const g: PortGroup = { name, use: f.get('use'), guids: ranges(f.get('port-guid') ?? '', w('port-guid')), partitions: names(f.get('partition') ?? ''), nodeTypes: new Set() };
    for (const t of names(f.get('node-type') ?? '')) {
      const k = t.toLowerCase();
      if (k === 'ca' || k === 'switch' || k === 'router' || k === 'all' || k === 'self') g.nodeTypes.add(k);
      else throw new QosPolicyError(`${w('node-type')}: node-type "${t}" is not one of CA, SWITCH, ROUTER, ALL, SELF`);
    }
    if (f.has('port-name')) p.warnings.push(`${w('port-name')}: port-group ${name}: port-name is not supported (name ports by port-guid): ignored`);
    p.groups.set(name.toLowerCase(), g);
  },
  'qos-level': (f, where, w, _b, p) => {
    const name = f.get('name');
    if (!name) throw new QosPolicyError(`${where}: a qos-level needs a name`);
    const l: QosLevel = { name, use: f.get('use'), pkeys: ranges(f.get('pkey') ?? '', w('pkey')) };
    if (f.has('sl')) l.sl = small(f.get('sl')!, 15, 'sl', w('sl'));
    if (f.has('mtu-limit')) l.mtuLimit = small(f.get('mtu-limit')!, 5, 'mtu-limit', w('mtu-limit'));
    if (f.has('rate-limit')) l.rateLimit = small(f.get('rate-limit')!, 22, 'rate-limit', w('rate-limit'));
    if (f.has('packet-life')) l.packetLife = small(f.get('packet-life')!, 0x3f, 'packet-life', w('packet-life'));
    if (f.has('path-bits')) p.warnings.push(`${w('path-bits')}: qos-level ${name}: path-bits is not supported: ignored`);
    p.levels.push(l);
  },
  'qos-match-rule': (f, where, w, b, p) => {
    const levelName = f.get('qos-level-name');
    if (!levelName) throw new QosPolicyError(`${where}: a qos-match-rule needs a qos-level-name`);
    p.fullRules.push({
      use: f.get('use'),
      qosClass: ranges(f.get('qos-class') ?? '', w('qos-class')),
      source: names(f.get('source') ?? ''),
      destination: names(f.get('destination') ?? ''),
      serviceId: ranges(f.get('service-id') ?? '', w('service-id')),
      pkey: ranges(f.get('pkey') ?? '', w('pkey')),
      levelName,
      line: b.line,
      lines: b.lines,
    });
  },
};

function finishBlock(b: Block, p: Parsed): void {
  BLOCKS[b.kind]?.(b.fields, `${p.file}:${b.line + 1}`, (key) => `${p.file}:${(b.lines.get(key) ?? b.line) + 1}`, b, p);
}

/** A simple-form line's criterion: its key (undefined: none) and values; `at` where the line is. */
interface UlpLine {
  ulp: string;
  key: string | undefined;
  vals: Range[];
  at: string;
}

/** A ULP's service IDs in a port space: all of it, or the ports `port-num` names. */
function ulpPorts(c: UlpLine, rule: SimpleRule, base: bigint): void {
  if (c.key === undefined) rule.serviceId = [[base, base + 0xffffn]];
  else if (c.key === 'port-num') rule.serviceId = c.vals.map(([a, b]) => [base + a, base + b] as const);
  else throw new QosPolicyError(`${c.at}: ${c.ulp} takes "port-num", not "${c.key}"`);
}

/** Each ULP of the simple form (qos-ulps, but `default`): what its criterion matches. */
const ULPS: Record<string, (c: UlpLine, rule: SimpleRule) => void> = {
  any: (c, rule) => {
    const { key, vals } = c;
    if (key === 'service-id') rule.serviceId = vals;
    else if (key === 'pkey') rule.pkey = vals;
    else if (key === 'target-port-guid') rule.destinationGuids = vals;
    else if (key === 'source-port-guid') rule.sourceGuids = vals;
    else if (key === 'source-target-port-guid') {
      rule.sourceGuids = vals;
      rule.destinationGuids = vals;
    } else throw new QosPolicyError(`${c.at}: "any" takes service-id, pkey, target-port-guid, source-port-guid or source-target-port-guid, not "${key ?? ''}"`);
  },
  sdp: (c, rule) => ulpPorts(c, rule, SDP_BASE),
  rds: (c, rule) => {
    if (c.key === undefined) rule.serviceId = [[RDMA_TCP_BASE + RDS_PORT, RDMA_TCP_BASE + RDS_PORT]];
    else ulpPorts(c, rule, RDMA_TCP_BASE);
  },
  iser: (c, rule) => {
    if (c.key === undefined) rule.serviceId = [[RDMA_TCP_BASE + ISER_PORT, RDMA_TCP_BASE + ISER_PORT]];
    else ulpPorts(c, rule, RDMA_TCP_BASE);
  },
  srp: (c, rule) => {
    if (c.key !== 'target-port-guid') throw new QosPolicyError(`${c.at}: srp takes "target-port-guid"`);
    rule.destinationGuids = c.vals;
  },
  ipoib: (c, rule) => {
    if (c.key === undefined) rule.pkey = [[0x7fffn, 0x7fffn]];
    else if (c.key === 'pkey') rule.pkey = c.vals.map(([a, b]) => [a & 0x7fffn, b & 0x7fffn] as const);
    else throw new QosPolicyError(`${c.at}: ipoib takes "pkey", not "${c.key}"`);
  },
};

/** One qos-ulps line: "<ulp>[, <criterion> <values>] : <sl>". */
function simpleLine(line: string, at: string, lineNo: number, p: Parsed): void {
  const colon = line.lastIndexOf(':');
  if (colon < 0) throw new QosPolicyError(`${at}: a qos-ulps line is "<ulp>[, <criterion> <values>] : <sl>"`);
  const sl = small(line.slice(colon + 1), 15, 'the SL', at);
  const head = line.slice(0, colon).trim();
  const comma = head.indexOf(',');
  const ulp = (comma < 0 ? head : head.slice(0, comma)).trim().toLowerCase();
  const crit = comma < 0 ? '' : head.slice(comma + 1).trim();
  const m = /^([a-z-]+)\s+(.+)$/i.exec(crit);
  const key = m?.[1]!.toLowerCase();
  const vals = m ? ranges(m[2]!, at) : [];
  if (crit && !m) throw new QosPolicyError(`${at}: "${crit}" is not "<criterion> <values>"`);
  if (ulp === 'default') {
    if (crit) throw new QosPolicyError(`${at}: "default" takes no criterion`);
    p.simpleDefault = sl;
    return;
  }
  const rule: SimpleRule = { qosClass: [], source: [], destination: [], serviceId: [], pkey: [], sl, use: `${ulp} (line ${lineNo})` };
  const fill = Object.hasOwn(ULPS, ulp) ? ULPS[ulp] : undefined;
  if (!fill) throw new QosPolicyError(`${at}: unknown ULP "${ulp}" (default, any, sdp, rds, iser, srp, ipoib)`);
  fill({ ulp, key, vals, at }, rule);
  p.simpleRules.push(rule);
}

/** The sections of a policy file, and the block each holds ('': lines, not blocks). */
const SECTIONS: Record<string, string> = { 'port-groups': 'port-group', 'qos-levels': 'qos-level', 'qos-match-rules': 'qos-match-rule', 'qos-ulps': '', 'qos-setup': '' };

/** The match rules with their levels (and groups) resolved by name, the full form's first. */
function resolveRules(p: Parsed, byName: ReadonlyMap<string, QosLevel>): MatchRule[] {
  const rules: MatchRule[] = [];
  for (const r of p.fullRules) {
    const level = byName.get(r.levelName.toLowerCase());
    const at = (key: string): number => (r.lines.get(key) ?? r.line) + 1;
    if (!level) throw new QosPolicyError(`${p.file}:${at('qos-level-name')}: qos-match-rule: qos-level "${r.levelName}" is not defined`);
    for (const [key, list] of [['source', r.source], ['destination', r.destination]] as const) {
      for (const g of list) if (!p.groups.has(g.toLowerCase())) throw new QosPolicyError(`${p.file}:${at(key)}: qos-match-rule: port-group "${g}" is not defined`);
    }
    const { levelName: _n, line: _l, lines: _ls, ...rest } = r;
    rules.push({ ...rest, level });
  }
  for (const r of p.simpleRules) {
    const { sl, ...rest } = r;
    rules.push({ ...rest, level: { name: `ulp sl ${sl}`, sl, pkeys: [] } });
  }
  return rules;
}

export function parseQosPolicy(text: string, file = 'qos-policy.conf'): QosPolicy {
  const lines = text.split('\n').map((l) => l.replace(/#.*/, '').trim());
  const p: Parsed = { file, levels: [], groups: new Map(), fullRules: [], simpleRules: [], warnings: [] };
  let section: string | undefined;
  let block: Block | undefined;
  const at = (i: number): string => `${file}:${i + 1}`;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (!line) continue;
    const word = line.toLowerCase();
    if (!section) {
      if (Object.hasOwn(SECTIONS, word)) {
        section = word;
        if (word === 'qos-setup') p.warnings.push(`${at(i)}: qos-setup is ignored, as OpenSM ignores it (VL tables come from the qos VL settings)`);
        continue;
      }
      throw new QosPolicyError(`${at(i)}: "${line}" outside a section (port-groups, qos-levels, qos-match-rules, qos-ulps, qos-setup)`);
    }
    if (word === `end-${section}`) {
      if (block) throw new QosPolicyError(`${at(i)}: ${block.kind} from line ${block.line + 1} is not closed with end-${block.kind}`);
      section = undefined;
      continue;
    }
    if (section === 'qos-setup') continue;
    if (section === 'qos-ulps') {
      simpleLine(line, at(i), i + 1, p);
      continue;
    }
    const kind = SECTIONS[section]!;
    if (!block) {
      if (word !== kind) throw new QosPolicyError(`${at(i)}: expected ${kind} or end-${section}, found "${line}"`);
      block = { kind, line: i, fields: new Map(), lines: new Map() };
      continue;
    }
    if (word === `end-${kind}`) {
      finishBlock(block, p);
      block = undefined;
      continue;
    }
    const c = line.indexOf(':');
    if (c < 0) throw new QosPolicyError(`${at(i)}: expected "<key>: <value>" in ${kind}, found "${line}"`);
    const key = line.slice(0, c).trim().toLowerCase();
    const value = line.slice(c + 1).trim();
    // Repeated list keys accumulate (several port-guid lines).
    block.fields.set(key, block.fields.has(key) ? `${block.fields.get(key)},${value}` : value);
    block.lines.set(key, i);
  }
  if (section) throw new QosPolicyError(`${file}: section ${section} is not closed with end-${section}`);
  const byName = new Map(p.levels.map((l) => [l.name.toLowerCase(), l]));
  const rules = resolveRules(p, byName);
  const defaultLevel = byName.get('default') ?? (p.simpleDefault !== undefined ? { name: 'default', sl: p.simpleDefault, pkeys: [] } : undefined);
  return new QosPolicy(p.levels, p.groups, rules, defaultLevel, p.warnings);
}

// ---------------------------------------------------------------- VL settings (OpenSM's qos_* options)

export interface VlArbEntry {
  vl: number;
  weight: number;
}

/** OpenSM's qos_max_vls, qos_high_limit, qos_vlarb_high, qos_vlarb_low and qos_sl2vl. */
export interface QosVlSettings {
  maxVls: number;
  highLimit: number;
  vlarbHigh: VlArbEntry[];
  vlarbLow: VlArbEntry[];
  sl2vl: number[];
}

export interface QosVlOptions {
  maxVls?: number;
  highLimit?: number;
  /** "vl:weight,vl:weight,..." */
  vlarbHigh?: string;
  vlarbLow?: string;
  /** 16 VLs, comma separated */
  sl2vl?: string;
}

/** OpenSM's defaults (osm_base.h OSM_DEFAULT_QOS_*). */
export const QOS_VL_DEFAULTS = {
  maxVls: 15,
  highLimit: 0,
  vlarbHigh: '0:4,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0,10:0,11:0,12:0,13:0,14:0',
  vlarbLow: '0:0,1:4,2:4,3:4,4:4,5:4,6:4,7:4,8:4,9:4,10:4,11:4,12:4,13:4,14:4',
  sl2vl: '0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,7',
} as const;

function vlarb(text: string, what: string): VlArbEntry[] {
  const out: VlArbEntry[] = [];
  for (const part of text.split(',')) {
    const t = part.trim();
    if (!t) continue;
    const m = /^(\d+)\s*:\s*(\d+)$/.exec(t);
    if (!m || Number(m[1]) > 15 || Number(m[2]) > 255) throw new QosPolicyError(`${what}: "${t}" is not "<vl 0..15>:<weight 0..255>"`);
    out.push({ vl: Number(m[1]), weight: Number(m[2]) });
  }
  if (out.length > 64) throw new QosPolicyError(`${what}: at most 64 entries (two VLArbitration blocks), got ${out.length}`);
  return out;
}

export function qosVlSettings(o: QosVlOptions = {}): QosVlSettings {
  const sl2vl = (o.sl2vl ?? QOS_VL_DEFAULTS.sl2vl).split(',').map((s) => Number(s.trim()));
  if (sl2vl.length !== 16 || sl2vl.some((v) => !Number.isInteger(v) || v < 0 || v > 15)) {
    throw new QosPolicyError(`qos sl2vl: 16 VLs 0..15, comma separated (e.g. "${QOS_VL_DEFAULTS.sl2vl}"), got "${o.sl2vl}"`);
  }
  const maxVls = o.maxVls ?? QOS_VL_DEFAULTS.maxVls;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw new QosPolicyError(`qos max VLs: 1..15, got ${maxVls}`);
  const highLimit = o.highLimit ?? QOS_VL_DEFAULTS.highLimit;
  if (!Number.isInteger(highLimit) || highLimit < 0 || highLimit > 255) throw new QosPolicyError(`qos high limit: 0..255, got ${highLimit}`);
  return { maxVls, highLimit, vlarbHigh: vlarb(o.vlarbHigh ?? QOS_VL_DEFAULTS.vlarbHigh, 'qos vlarb high'), vlarbLow: vlarb(o.vlarbLow ?? QOS_VL_DEFAULTS.vlarbLow, 'qos vlarb low'), sl2vl };
}

/** A port's SL→VL table as OpenSM programs it: VLs above what the port operates (OperationalVLs
 * code 1..5: VL0, VL0-1, VL0-3, VL0-7, VL0-14) are masked into range, VL15 stays. */
export function sl2vlForPort(q: QosVlSettings, operationalVls: number): number[] {
  const op = Math.max(1, Math.min(5, operationalVls || 1));
  const mask = (1 << (op - 1)) - 1;
  return q.sl2vl.map((vl) => (vl === 15 ? 15 : vl & mask));
}

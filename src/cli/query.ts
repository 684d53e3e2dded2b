/** `ibsm query <record> [filters] [--json]`: an SA client like saquery. The caller (cli/main.ts)
 * injects how to open a MadRpc and where the SA is; backend options (--sim, --umad, --ca, --ca-port,
 * --seed, --attach) are handed to `openRpc`. Options come from the one table (config/options.ts);
 * the record filters are this file's RECORDS.
 * Exit status: 0 answered (even with no records), 1 the SA or the transport failed, 2 bad usage. */
import type { MadRpc } from '../rpc/madrpc.js';
import { commandHelp, parseCommandLine, UsageError } from '../config/parse.js';
import { isInterSubnetQuery, queryInterSubnet } from './query-inter-subnet.js';
import { suggest, type OptionSpec } from '../config/options.js';
import { SaClient, SaNotFoundError, SaStatusError } from '../sa/client.js';
import { formatGid, formatHex, type AnyLayout, type FieldSpec, type Layout } from '../wire/layout.js';
import { Method } from '../wire/mad.js';
import { parseGidText } from '../wire/format.js';
import { parseU64, parseUintText } from '../util/guid.js';
import {
  GUIDInfoRecord, InformInfoRecord, LinearForwardingTableRecord, LinkRecord, MCMemberRecord, MulticastForwardingTableRecord, MultiPathRecord, NodeRecord, PathRecord,
  PKeyTableRecord, PortInfoRecord, SaAttr, ServiceRecord, SLtoVLMappingTableRecord, SMInfoRecord, SwitchInfoRecord, TraceRecord, VLArbitrationTableRecord, splitMultiPathServiceId,
} from '../wire/sa.js';

export interface QueryIo {
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
}

/** Where the query goes (the backend options of the command line). */
export interface BackendArgs {
  sim?: string;
  umad?: boolean;
  ca?: string;
  caPort?: number;
  seed?: number;
  attach?: string;
}

export interface QuerySession {
  rpc: MadRpc;
  /** The SA's LID when the backend knows it; otherwise the local PortInfo.SMLID is read. */
  saLid?: number;
  close(): Promise<void> | void;
}

export interface QueryOptions {
  openRpc: (backend: BackendArgs) => Promise<QuerySession>;
}

type Filters = Map<string, string[]>;
interface Built {
  record: Record<string, unknown>;
  mask: bigint;
}
interface RecordSpec {
  names: string[];
  attrId: number;
  layout: AnyLayout;
  /** Request layout when it differs (TraceRecord is asked with a PathRecord). */
  reqLayout?: AnyLayout;
  method: number;
  /** filter flag → (record, mask paths) builder */
  filters: Record<string, (v: string, b: Built, all: string[]) => void>;
}

// ---------- value parsing
function num(flag: string, v: string, max: number): number {
  const n = parseUintText(v);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new UsageError(`${flag} needs a number 0..${max} (decimal or 0x hex), got "${v}"`);
  return n;
}
function big(flag: string, v: string): bigint {
  const n = parseU64(v);
  if (n === undefined) throw new UsageError(`${flag} needs a 64-bit value (0x hex or decimal), got "${v}"`);
  return n;
}
/** A GID as IPv6 text (fe80::2:c903:0:1) or 0x + up to 32 hex digits. */
export function parseGid(flag: string, v: string): bigint {
  if (/^0x[0-9a-f]{1,32}$/i.test(v)) return BigInt(v);
  const g = parseGidText(v);
  if (g !== undefined) return g;
  throw new UsageError(`${flag} needs a GID (fe80::... or 0x + 32 hex digits), got "${v}"`);
}

function put(b: Built, layout: AnyLayout, path: string, value: unknown): void {
  const parts = path.split('.');
  let o = b.record;
  for (const p of parts.slice(0, -1)) o = (o[p] ??= {}) as Record<string, unknown>;
  o[parts.at(-1)!] = value;
  b.mask |= layout.mask(path);
}

const f16 = (layout: AnyLayout, path: string) => (v: string, b: Built) => put(b, layout, path, num(`--${path}`, v, 0xffff));
const f8 = (layout: AnyLayout, path: string) => (v: string, b: Built) => put(b, layout, path, num(`--${path}`, v, 0xff));
const f64 = (layout: AnyLayout, path: string) => (v: string, b: Built) => put(b, layout, path, big(`--${path}`, v));
const fGid = (layout: AnyLayout, path: string) => (v: string, b: Built) => put(b, layout, path, parseGid(`--${path}`, v));

const pathFilters = (L: AnyLayout): RecordSpec['filters'] => ({
  slid: f16(L, 'slid'),
  dlid: f16(L, 'dlid'),
  sgid: fGid(L, 'sgid'),
  dgid: fGid(L, 'dgid'),
  'service-id': f64(L, 'serviceId'),
  pkey: f16(L, 'pKey'),
});

const RECORDS: RecordSpec[] = [
  { names: ['nodes', 'NodeRecord', 'NR'], attrId: SaAttr.NodeRecord, layout: NodeRecord, method: Method.GetTable, filters: { lid: f16(NodeRecord, 'lid'), guid: f64(NodeRecord, 'nodeInfo.nodeGuid'), 'port-guid': f64(NodeRecord, 'nodeInfo.portGuid') } },
  { names: ['portinfo', 'PortInfoRecord', 'PIR'], attrId: SaAttr.PortInfoRecord, layout: PortInfoRecord, method: Method.GetTable, filters: { lid: f16(PortInfoRecord, 'endportLid'), port: f8(PortInfoRecord, 'portNum') } },
  { names: ['path', 'PathRecord', 'PR'], attrId: SaAttr.PathRecord, layout: PathRecord, method: Method.GetTable, filters: pathFilters(PathRecord) },
  { names: ['switchinfo', 'SwitchInfoRecord', 'SWIR'], attrId: SaAttr.SwitchInfoRecord, layout: SwitchInfoRecord, method: Method.GetTable, filters: { lid: f16(SwitchInfoRecord, 'lid') } },
  { names: ['links', 'LinkRecord', 'LR'], attrId: SaAttr.LinkRecord, layout: LinkRecord, method: Method.GetTable, filters: { lid: f16(LinkRecord, 'fromLid'), slid: f16(LinkRecord, 'fromLid'), dlid: f16(LinkRecord, 'toLid'), port: f8(LinkRecord, 'fromPort') } },
  { names: ['mcmembers', 'MCMemberRecord', 'MCMR'], attrId: SaAttr.MCMemberRecord, layout: MCMemberRecord, method: Method.GetTable, filters: { mgid: fGid(MCMemberRecord, 'mgid'), mlid: f16(MCMemberRecord, 'mlid'), pkey: f16(MCMemberRecord, 'pKey'), gid: fGid(MCMemberRecord, 'portGid') } },
  { names: ['services', 'ServiceRecord', 'SR'], attrId: SaAttr.ServiceRecord, layout: ServiceRecord, method: Method.GetTable, filters: { 'service-id': f64(ServiceRecord, 'serviceId'), gid: fGid(ServiceRecord, 'serviceGid'), pkey: f16(ServiceRecord, 'servicePKey'), name: (v, b) => put(b, ServiceRecord, 'serviceName', v) } },
  { names: ['sminfo', 'SMInfoRecord', 'SMIR'], attrId: SaAttr.SMInfoRecord, layout: SMInfoRecord, method: Method.GetTable, filters: { lid: f16(SMInfoRecord, 'lid') } },
  { names: ['pkeys', 'PKeyTableRecord', 'PKTR'], attrId: SaAttr.PKeyTableRecord, layout: PKeyTableRecord, method: Method.GetTable, filters: { lid: f16(PKeyTableRecord, 'lid'), block: f16(PKeyTableRecord, 'blockNum'), port: f8(PKeyTableRecord, 'portNum') } },
  { names: ['lft', 'LinearForwardingTableRecord', 'LFTR'], attrId: SaAttr.LinearForwardingTableRecord, layout: LinearForwardingTableRecord, method: Method.GetTable, filters: { lid: f16(LinearForwardingTableRecord, 'lid'), block: f16(LinearForwardingTableRecord, 'blockNum') } },
  { names: ['mft', 'MulticastForwardingTableRecord', 'MFTR'], attrId: SaAttr.MulticastForwardingTableRecord, layout: MulticastForwardingTableRecord, method: Method.GetTable, filters: { lid: f16(MulticastForwardingTableRecord, 'lid'), block: (v, b) => put(b, MulticastForwardingTableRecord, 'blockNum', num('--block', v, 0x1ff)), position: (v, b) => put(b, MulticastForwardingTableRecord, 'position', num('--position', v, 15)) } },
  { names: ['sl2vl', 'SLtoVLMappingTableRecord', 'SL2VL'], attrId: SaAttr.SLtoVLMappingTableRecord, layout: SLtoVLMappingTableRecord, method: Method.GetTable, filters: { lid: f16(SLtoVLMappingTableRecord, 'lid'), 'in-port': f8(SLtoVLMappingTableRecord, 'inputPortNum'), 'out-port': f8(SLtoVLMappingTableRecord, 'outputPortNum') } },
  { names: ['vlarb', 'VLArbitrationTableRecord', 'VLAR'], attrId: SaAttr.VLArbitrationTableRecord, layout: VLArbitrationTableRecord, method: Method.GetTable, filters: { lid: f16(VLArbitrationTableRecord, 'lid'), port: f8(VLArbitrationTableRecord, 'outputPortNum'), block: f8(VLArbitrationTableRecord, 'blockNum') } },
  { names: ['guidinfo', 'GUIDInfoRecord', 'GIR'], attrId: SaAttr.GUIDInfoRecord, layout: GUIDInfoRecord, method: Method.GetTable, filters: { lid: f16(GUIDInfoRecord, 'lid'), block: f8(GUIDInfoRecord, 'blockNum') } },
  { names: ['informinfo', 'InformInfoRecord', 'IIR'], attrId: SaAttr.InformInfoRecord, layout: InformInfoRecord, method: Method.GetTable, filters: { gid: fGid(InformInfoRecord, 'subscriberGid') } },
  {
    names: ['multipath', 'MultiPathRecord', 'MPR'],
    attrId: SaAttr.MultiPathRecord,
    layout: PathRecord,
    reqLayout: MultiPathRecord,
    method: Method.GetMulti,
    filters: {
      sgid: (_v, b, all) => setGids(b, all, 'sgid'),
      dgid: (_v, b, all) => setGids(b, all, 'dgid'),
      'service-id': (v, b) => {
        const s = splitMultiPathServiceId(big('--service-id', v));
        put(b, MultiPathRecord, 'serviceIdMsb', s.serviceIdMsb);
        put(b, MultiPathRecord, 'serviceIdLsb', s.serviceIdLsb);
      },
      pkey: f16(MultiPathRecord, 'pKey'),
    },
  },
  { names: ['trace', 'TraceRecord', 'TR'], attrId: SaAttr.TraceRecord, layout: TraceRecord, reqLayout: PathRecord, method: Method.GetTraceTable, filters: pathFilters(PathRecord) },
];

/** MultiPathRecord: every --sgid then every --dgid, with the counts. */
function setGids(b: Built, all: string[], which: 'sgid' | 'dgid'): void {
  const r = b.record as { gids?: bigint[]; sgidCount?: number; dgidCount?: number; __s?: bigint[]; __d?: bigint[] };
  const list = all.map((v) => parseGid(`--${which}`, v));
  if (which === 'sgid') r.__s = list;
  else r.__d = list;
  const s = r.__s ?? [];
  const d = r.__d ?? [];
  if (s.length + d.length > 11) throw new UsageError('a MultiPathRecord carries at most 11 GIDs (--sgid and --dgid together)');
  r.gids = [...s, ...d];
  r.sgidCount = s.length;
  r.dgidCount = d.length;
  b.mask |= MultiPathRecord.mask('gids', 'sgidCount', 'dgidCount');
}

/** Every filter of every record, as options of the one parser (checked against the record after). */
const FILTER_OPTIONS: OptionSpec[] = [...new Set(RECORDS.flatMap((r) => Object.keys(r.filters)))].map((name) => ({ name, type: 'string', arg: 'VALUE', help: 'filter', commands: ['query'], repeat: true }));

function usage(): string {
  const lines = RECORDS.map((r) => `  ${r.names[0]!.padEnd(11)} ${r.names[1]!.padEnd(32)} ${Object.keys(r.filters).map((f) => `--${f}`).join(' ')}`);
  return commandHelp(
    'query',
    `records (name, SA attribute, filters):
${lines.join('\n')}
Numbers are decimal or 0x hex; GIDs fe80::... or 0x + 32 hex digits. --sgid/--dgid repeat for multipath.
`,
  );
}

interface Parsed {
  spec: RecordSpec;
  filters: Filters;
  json: boolean;
  send: boolean;
  backend: BackendArgs;
  saLid?: number;
  smKey?: bigint;
}

function parse(argv: string[]): Parsed | 'help' {
  const p = parseCommandLine('query', argv, FILTER_OPTIONS);
  if (p.help) return 'help';
  const [name, extra] = p.positionals;
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}" (one record name only)`);
  if (name === undefined) throw new UsageError('which record? e.g. "ibsm query nodes"');
  const spec = RECORDS.find((r) => r.names.some((n) => n.toLowerCase() === name.toLowerCase()));
  if (!spec) throw new UsageError(`unknown record "${name}"; one of: ${RECORDS.map((r) => r.names[0]).join(', ')}${suggest(name, RECORDS.flatMap((r) => r.names))}`);
  const filters: Filters = new Map();
  const backend: BackendArgs = {};
  for (const [k, v] of p.values) {
    if (FILTER_OPTIONS.some((f) => f.name === k)) {
      if (!spec.filters[k]) throw new UsageError(`${spec.names[1]} has no filter --${k} (filters: ${Object.keys(spec.filters).map((f) => `--${f}`).join(' ') || 'none'})`);
      filters.set(k, v as string[]);
    } else if (k === 'sim' || k === 'ca' || k === 'attach') backend[k] = v as string;
    else if (k === 'umad') backend.umad = v as boolean;
    else if (k === 'ca-port') backend.caPort = v as number;
    else if (k === 'seed') backend.seed = v as number;
  }
  return { spec, filters, json: p.values.get('json') === true, send: p.values.get('send') === true, backend, saLid: p.values.get('sa-lid') as number | undefined, smKey: p.values.get('sm-key') as bigint | undefined };
}

/** Build the request record and component mask from the filters. */
export function buildQuery(spec: Pick<RecordSpec, 'filters'>, filters: Filters): Built {
  const b: Built = { record: {}, mask: 0n };
  for (const [name, values] of filters) {
    for (const v of values) spec.filters[name]!(v, b, values);
  }
  const r = b.record as Record<string, unknown>;
  delete r['__s'];
  delete r['__d'];
  return b;
}

// ---------- output
function toJson(layout: AnyLayout, v: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, f] of Object.entries(layout.fields)) {
    if (f.kind === 'reserved') continue;
    out[name] = jsonValue(f, v[name]);
  }
  return out;
}
function jsonValue(f: FieldSpec, v: unknown): unknown {
  switch (f.kind) {
    case 'gid':
      return formatGid(v as bigint);
    case 'u64':
      return formatHex(v as bigint, f.width);
    case 'bytes':
      return Array.from(v as Uint8Array, (x) => x.toString(16).padStart(2, '0')).join('');
    case 'struct':
      return toJson(f.layout, v as Record<string, unknown>);
    case 'array':
      return (v as unknown[]).map((e) => jsonValue(f.elem as FieldSpec, e));
    default:
      return v;
  }
}

export async function queryMain(argv: string[], io: QueryIo, opts: QueryOptions): Promise<number> {
  let p: Parsed;
  try {
    const r = parse(argv);
    if (r === 'help') {
      io.stdout.write(usage());
      return 0;
    }
    p = r;
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`ibsm query: ${e.message}\n(ibsm query --help lists the records, filters and options)\n`);
      return 2;
    }
    throw e;
  }
  let built: Built;
  const saLidArg = p.saLid;
  const smKey = p.smKey;
  try {
    built = buildQuery(p.spec, p.filters);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`ibsm query: ${e.message}\n`);
      return 2;
    }
    throw e;
  }
  // a path between two subnets: the a-g sequence through the routers (cli/query-inter-subnet.ts)
  const rec = built.record as { sgid?: bigint; dgid?: bigint };
  if (p.spec.attrId === SaAttr.PathRecord && isInterSubnetQuery(rec.sgid, rec.dgid)) {
    try {
      return await queryInterSubnet({ sgid: rec.sgid!, dgid: rec.dgid!, json: p.json, send: p.send, backend: p.backend, saLid: saLidArg, smKey }, io, opts.openRpc);
    } catch (e) {
      io.stderr.write(`ibsm query: ${(e as Error).message}\n`);
      return e instanceof UsageError ? 2 : 1;
    }
  }
  if (p.send) {
    io.stderr.write('ibsm query: --send needs a path between two subnets (--sgid and --dgid of different prefixes)\n');
    return 2;
  }
  let session: QuerySession | undefined;
  try {
    session = await opts.openRpc(p.backend);
    const client = await SaClient.locate(session.rpc, { saLid: saLidArg ?? session.saLid, smKey });
    const spec = p.spec;
    const res = await client.request(spec.method, spec.attrId, spec.layout as Layout<Record<string, unknown>>, built.record as never, built.mask, (spec.reqLayout ?? spec.layout) as Layout<Record<string, unknown>>);
    if (p.json) {
      io.stdout.write(JSON.stringify(res.records.map((r) => toJson(spec.layout, r)), null, 2) + '\n');
    } else {
      for (const r of res.records) io.stdout.write(`${spec.layout.name} dump:\n${spec.layout.dump(r, '\t\t')}\n`);
    }
    if (res.truncated) {
      io.stderr.write(
        `ibsm query: warning: the SA left RMPP to a kernel this path does not have (as OpenSM's SA under ibsim): only its first MAD arrived (${res.records.length} record(s) shown); the table may have more\n`,
      );
    }
    return 0;
  } catch (e) {
    if (e instanceof SaStatusError || e instanceof SaNotFoundError) {
      io.stderr.write(`ibsm query: ${e.message}\n`);
      return 1;
    }
    const err = e as Error;
    io.stderr.write(`ibsm query: ${err.name && err.name !== 'Error' ? `${err.name}: ` : ''}${err.message}\n`);
    return 1;
  } finally {
    await session?.close();
  }
}

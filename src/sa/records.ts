/**
 * SA record handlers over the SM's snapshot: NodeRecord, PortInfoRecord, SLtoVLMappingTableRecord,
 * SwitchInfoRecord, LinearForwardingTableRecord, RandomForwardingTableRecord,
 * MulticastForwardingTableRecord, VLArbitrationTableRecord, SMInfoRecord, P_KeyTableRecord,
 * LinkRecord and GUIDInfoRecord. Pure.
 *
 * Each handler answers Get and GetTable: it enumerates candidate records, narrowed first by the
 * RID components present in the request (LID, port, block) so a query by RID never builds the
 * whole table, encodes each candidate and keeps those whose masked components equal the
 * request's bytes (`componentsMatch`). A LID RID matches any LID of the port's LMC range and the
 * record carries the base LID (as OpenSM does). Records about a device are shown only to
 * requesters sharing a P_Key with it; PortInfoRecord.M_Key and SMInfoRecord.SM_Key only to a
 * trusted requester (the SA_Key in the request's SM_Key field).
 */
import { MadStatus, Method, NodeType } from '../wire/mad.js';
import { componentsMatch, readBits, type Layout } from '../wire/layout.js';
import {
  GUIDInfoRecord,
  LinearForwardingTableRecord,
  LinkRecord,
  MulticastForwardingTableRecord,
  NodeRecord,
  PKeyTableRecord,
  PortInfoRecord,
  RandomForwardingTableRecord,
  SLtoVLMappingTableRecord,
  SMInfoRecord,
  SaAttr,
  SaStatus,
  SwitchInfoRecord,
  VLArbitrationTableRecord,
} from '../wire/sa.js';
import { GUID_BLOCK_SIZE, LFT_BLOCK_SIZE, PKEY_BLOCK_SIZE, PortCap, SmState, VLARB_BLOCK_SIZE, type PortInfo } from '../wire/sma.js';
import { NO_ROUTE, isRftSwitch, portSl2Vl, rftBlocksOf } from '../model/routes.js';
import { SaRequestError } from './engine.js';
import { portPkeys, Visibility } from './visibility.js';
import { snapshotPorts, type EndPort, type EndPortIndex } from '../model/snapshot.js';
import { portInfoValue } from '../model/port-info.js';
import type { SaAnswer, SaContext, SaHandler, SaQuery } from './types.js';
import { vportNodeRecords, vportPortInfoRecords } from './vport-records.js';

/** One candidate record: the device it describes (visibility) and its value. */
interface Candidate {
  node: number;
  /** A vport the record describes (sa/vport-records.ts): visible by its own P_Keys. */
  guid?: bigint;
  /** A second device the record describes (LinkRecord's far end): must be visible too. */
  peer?: number;
  value: object;
}

/** What a record definition's enumerator sees. */
interface Env {
  ctx: SaContext;
  idx: EndPortIndex;
  q: SaQuery;
  trusted: boolean;
  /** The end port named by the LID RID, when the request has it. */
  lidPort?: EndPort;
  /** The LID RID, when the request has it. */
  lid?: number;
  /** The value of a uint component of the request when its mask bit is set. */
  rid(path: string): number | undefined;
}

interface RecordDef {
  attrId: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  layout: Layout<any>;
  /** The LID RID component, matched by LMC range. */
  lidPath?: string;
  /** vport hook: the LID RID may be a vport's only (the enumerator yields its records). */
  vportLids?: boolean;
  /** Other LID components the enumerator matches by LMC range itself (left out of the byte comparison). */
  rangePaths?: string[];
  /** Bit-mask components that match when the record has every bit the request sets (as OpenSM and
   * saquery treat PortInfo:CapabilityMask: `saquery -s` asks for the ports with IsSM). */
  subsetPaths?: string[];
  candidates(env: Env): Iterable<Candidate>;
  /** A matched record's bytes, changed for the answer only (after the match, as OpenSM does). */
  answer?(buf: Uint8Array, c: Candidate, env: Env): Uint8Array;
  /** Set/Delete, for the records clients may change (GUIDInfoRecord). */
  write?(q: SaQuery, ctx: SaContext): SaAnswer;
}

function recordHandler(def: RecordDef): SaHandler {
  const { layout } = def;
  const lidBit = def.lidPath ? layout.mask(def.lidPath) : 0n;
  const rangeBits = def.rangePaths?.length ? layout.mask(...def.rangePaths) : 0n;
  const lidComp = def.lidPath ? layout.components.find((c) => c.path === def.lidPath) : undefined;
  const comps = new Map(layout.components.map((c) => [c.path, c]));
  const subsetComps = (def.subsetPaths ?? []).map((p) => comps.get(p)!);
  const subsetBits = def.subsetPaths?.length ? layout.mask(...def.subsetPaths) : 0n;
  return {
    attrIds: [def.attrId],
    handle(q, ctx) {
      if ((q.method === Method.Set || q.method === Method.Delete) && def.write) return def.write(q, ctx);
      if (q.method !== Method.Get && q.method !== Method.GetTable) {
        throw new SaRequestError(MadStatus.UnsupportedMethodAttr, `${layout.name} supports Get and GetTable only`);
      }
      if (q.data.length < layout.byteLength) throw new SaRequestError(SaStatus.ReqInvalid, `${layout.name} request shorter than a record`);
      const idx = snapshotPorts(ctx.snapshot);
      const mask = q.componentMask;
      let lidPort: EndPort | undefined;
      let lid: number | undefined;
      if (lidComp && mask & lidBit) {
        lidPort = idx.byLid((lid = readBits(q.data, lidComp.bit, lidComp.width)));
        if (!lidPort && !(def.vportLids && ctx.vports)) return { kind: 'records', records: [] };
      }
      const env: Env = {
        ctx,
        idx,
        q,
        trusted: q.requester.trusted,
        lidPort,
        lid,
        rid(path) {
          const c = comps.get(path);
          if (!c || !((mask >> BigInt(c.index)) & 1n)) return undefined;
          return readBits(q.data, c.bit, c.width);
        },
      };
      const compare = mask & ~lidBit & ~rangeBits & ~subsetBits;
      const subsets = subsetComps.filter((c) => (mask >> BigInt(c.index)) & 1n).map((c) => ({ c, want: readBits(q.data, c.bit, c.width) }));
      const vis = new Visibility(ctx, q.requester);
      const limit = q.method === Method.Get ? 2 : Infinity;
      const out: Uint8Array[] = [];
      for (const c of def.candidates(env)) {
        if (c.guid !== undefined ? !vis.vport(c.guid) : !vis.node(c.node) || (c.peer !== undefined && !vis.node(c.peer))) continue;
        const buf = layout.encode(c.value);
        if (compare && !componentsMatch(layout, compare, buf, 0, q.data, 0)) continue;
        if (subsets.some(({ c, want }) => (readBits(buf, c.bit, c.width) & want) >>> 0 !== want)) continue;
        out.push(def.answer ? def.answer(buf, c, env) : buf);
        if (out.length >= limit) break;
      }
      return { kind: 'records', records: out };
    },
  };
}

// ---------- helpers ----------

function isSwitch(ctx: SaContext, node: number): boolean {
  return ctx.snapshot.fabric.nodes[node]!.type === NodeType.Switch;
}

/** End ports, narrowed to the LID RID's port (none when the LID is only a vport's). */
function endPorts(env: Env): Iterable<EndPort> {
  return env.lidPort ? [env.lidPort] : env.lid !== undefined ? [] : env.idx.endPorts;
}

/** Switch nodes (with their port-0 end port), narrowed by the LID RID. */
function* switches(env: Env): Iterable<EndPort> {
  for (const ep of endPorts(env)) if (isSwitch(env.ctx, ep.node)) yield ep;
}

/** Ports 0..max, or just the one the request names. */
function* portRange(max: number, only: number | undefined, min = 0): Iterable<number> {
  if (only !== undefined) {
    if (only >= min && only <= max) yield only;
    return;
  }
  for (let p = min; p <= max; p++) yield p;
}

function portInfoOf(ctx: SaContext, node: number, port: number): PortInfo | undefined {
  return ctx.snapshot.discovery.nodes[node]?.portInfo[port];
}

/** The LID a record uses for a node's port: a switch's LID for every port, else the port's base LID. */
function lidOf(ctx: SaContext, node: number, port: number): number {
  const n = ctx.snapshot.fabric.nodes[node]!;
  return (n.type === NodeType.Switch ? n.ports[0]?.lid : n.ports[port]?.lid) ?? 0;
}

// ---------- the records ----------

const nodeRecord: RecordDef = {
  attrId: SaAttr.NodeRecord,
  layout: NodeRecord,
  lidPath: 'lid',
  vportLids: true,
  *candidates(env) {
    const { ctx } = env;
    for (const ep of endPorts(env)) {
      if (!ep.lid) continue;
      const d = ctx.snapshot.discovery.nodes[ep.node]!;
      const n = ctx.snapshot.fabric.nodes[ep.node]!;
      const sw = n.type === NodeType.Switch;
      yield {
        node: ep.node,
        value: {
          lid: ep.lid,
          // A switch's NodeRecord describes its port 0 (LocalPortNum 0, as OpenSM reports), not the port the SM came in by.
          nodeInfo: { ...d.nodeInfo, portGuid: ep.guid, localPortNum: sw ? 0 : ep.port },
          nodeDescription: { description: n.desc },
        },
      };
    }
    yield* vportNodeRecords(ctx, env.lid);
  },
};

const portInfoRecord: RecordDef = {
  attrId: SaAttr.PortInfoRecord,
  layout: PortInfoRecord,
  subsetPaths: ['portInfo.capabilityMask', 'portInfo.capabilityMask2'],
  lidPath: 'endportLid',
  vportLids: true,
  *candidates(env) {
    const { ctx } = env;
    const onlyPort = env.rid('portNum');
    for (const ep of endPorts(env)) {
      if (!ep.lid) continue;
      const n = ctx.snapshot.fabric.nodes[ep.node]!;
      const ports = n.type === NodeType.Switch ? portRange(n.numPorts, onlyPort) : portRange(ep.port, onlyPort, ep.port);
      for (const p of ports) {
        const pi = portInfoOf(ctx, ep.node, p);
        if (!pi) continue;
        // Options: the request's, when it gives them (OpenSM copies them into the record)
        yield { node: ep.node, value: { endportLid: ep.lid, portNum: p, options: env.rid('options') ?? 0, portInfo: { ...portInfoValue(pi), mkey: env.trusted ? pi.mkey : 0n } } };
      }
    }
    yield* vportPortInfoRecords(ctx, env.lid, onlyPort, env.rid('options') ?? 0, env.trusted);
  },
  answer(buf, c, env) {
    // OpenSM (osm_sa_portinfo_record.c pir_rcv_new_pir): unless the request's Options has bit 7
    // (the client knows extended speeds), a port running an extended speed also says QDR in
    // LinkSpeedSupported/Enabled/Active, so that an old client sees a usable speed.
    if (((env.rid('options') ?? 0) & PIR_OPTIONS_EXT_SPEEDS) !== 0) return buf;
    const r = PortInfoRecord.decode(buf);
    const pi = r.portInfo;
    const own = env.ctx.snapshot.fabric.nodes[c.node]!.type === NodeType.Switch ? portInfoOf(env.ctx, c.node, 0) : pi;
    if (!own || !(own.capabilityMask & PortCap.IsExtendedSpeedsSupported) || !pi.linkSpeedExtActive) return buf;
    const QDR = 4;
    return PortInfoRecord.encode({ ...r, portInfo: { ...pi, linkSpeedSupported: pi.linkSpeedSupported | QDR, linkSpeedEnabled: pi.linkSpeedEnabled | QDR, linkSpeedActive: pi.linkSpeedActive | QDR } });
  },
};

/** PortInfoRecord Options bit 7: the requester understands the extended link speed fields. */
const PIR_OPTIONS_EXT_SPEEDS = 0x80;

/** The SL→VL table of a port pair: what the SM read/programmed, else the routing engine's table, else all SLs on VL0. */
function sl2vlOf(ctx: SaContext, node: number, inPort: number, outPort: number): readonly number[] {
  const byPorts = ctx.snapshot.routing.sl2vlByPorts?.get(node);
  if (byPorts && inPort < byPorts.stride && outPort < byPorts.stride) return [...portSl2Vl(byPorts, inPort, outPort)];
  return ctx.tables?.sl2vl?.(node, inPort, outPort) ?? ctx.snapshot.routing.sl2vl ?? new Array<number>(16).fill(0);
}

const slToVlRecord: RecordDef = {
  attrId: SaAttr.SLtoVLMappingTableRecord,
  layout: SLtoVLMappingTableRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const onlyIn = env.rid('inputPortNum');
    const onlyOut = env.rid('outputPortNum');
    for (const ep of endPorts(env)) {
      if (!ep.lid) continue;
      const n = ctx.snapshot.fabric.nodes[ep.node]!;
      if (n.type !== NodeType.Switch) {
        // A CA/router port has one table: input port 0, output port = the port.
        if ((onlyIn ?? 0) !== 0 || (onlyOut ?? ep.port) !== ep.port) continue;
        yield { node: ep.node, value: { lid: ep.lid, inputPortNum: 0, outputPortNum: ep.port, slToVlTable: { vls: [...sl2vlOf(ctx, ep.node, 0, ep.port)] } } };
        continue;
      }
      for (const out of portRange(n.numPorts, onlyOut)) {
        for (const inp of portRange(n.numPorts, onlyIn)) {
          yield { node: ep.node, value: { lid: ep.lid, inputPortNum: inp, outputPortNum: out, slToVlTable: { vls: [...sl2vlOf(ctx, ep.node, inp, out)] } } };
        }
      }
    }
  },
};

const switchInfoRecord: RecordDef = {
  attrId: SaAttr.SwitchInfoRecord,
  layout: SwitchInfoRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    for (const ep of switches(env)) {
      const si = ctx.snapshot.discovery.nodes[ep.node]!.switchInfo;
      if (!si || !ep.lid) continue;
      // The SM sets LinearFDBTop to the top LID when it writes the LFT (after discovery read SwitchInfo).
      const top = ctx.snapshot.routing.lfts.has(ep.node) ? ctx.snapshot.maxLid : si.linearFdbTop;
      yield { node: ep.node, value: { lid: ep.lid, switchInfo: { ...si, linearFdbTop: top, portStateChange: 0 } } };
    }
  },
};

const lftRecord: RecordDef = {
  attrId: SaAttr.LinearForwardingTableRecord,
  layout: LinearForwardingTableRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const onlyBlock = env.rid('blockNum');
    for (const ep of switches(env)) {
      const lft = ctx.snapshot.routing.lfts.get(ep.node);
      if (!lft || !ep.lid || rftSwitch(ctx, ep.node)) continue;
      const top = Math.floor(ctx.snapshot.maxLid / LFT_BLOCK_SIZE);
      for (const b of portRange(top, onlyBlock)) {
        const ports = new Array<number>(LFT_BLOCK_SIZE);
        for (let i = 0; i < LFT_BLOCK_SIZE; i++) ports[i] = lft[b * LFT_BLOCK_SIZE + i] ?? NO_ROUTE;
        yield { node: ep.node, value: { lid: ep.lid, blockNum: b, lft: { ports } } };
      }
    }
  },
};

/** A switch that forwards by its RandomForwardingTable (the SM programs RFTs there, not LFTs). */
function rftSwitch(ctx: SaContext, node: number): boolean {
  const si = ctx.snapshot.discovery.nodes[node]?.switchInfo;
  return si !== undefined && isRftSwitch(si);
}

/** The RFT blocks the SM programs on switches without a linear table (the same blocks, from the
 * same routing result). */
const rftRecord: RecordDef = {
  attrId: SaAttr.RandomForwardingTableRecord,
  layout: RandomForwardingTableRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const onlyBlock = env.rid('blockNum');
    for (const ep of switches(env)) {
      const table = ctx.snapshot.routing.lfts.get(ep.node);
      const si = ctx.snapshot.discovery.nodes[ep.node]?.switchInfo;
      if (!table || !ep.lid || !si || !isRftSwitch(si)) continue;
      const { blocks } = rftBlocksOf(table, ctx.snapshot.maxLid, si.randomFdbCap);
      for (const b of portRange(blocks.length - 1, onlyBlock)) yield { node: ep.node, value: { lid: ep.lid, blockNum: b, rft: { entries: blocks[b]! } } };
    }
  },
};

const mftRecord: RecordDef = {
  attrId: SaAttr.MulticastForwardingTableRecord,
  layout: MulticastForwardingTableRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const source = ctx.tables?.mft;
    if (!source) return;
    const onlyBlock = env.rid('blockNum');
    const onlyPos = env.rid('position');
    for (const ep of switches(env)) {
      if (!ep.lid) continue;
      const blocks = [...source(ep.node)]
        .filter((b) => (onlyBlock === undefined || b.block === onlyBlock) && (onlyPos === undefined || b.position === onlyPos))
        .sort((a, b) => a.block - b.block || a.position - b.position);
      for (const b of blocks) yield { node: ep.node, value: { lid: ep.lid, position: b.position, blockNum: b.block, mft: { portMasks: [...b.masks] } } };
    }
  },
};

/** VLArbitration blocks a port has: 1-2 (low priority), 3-4 (high priority), per its capabilities. */
function vlArbBlocks(pi: PortInfo): number[] {
  const out: number[] = [];
  if (pi.vlArbitrationLowCap > 0) out.push(1);
  if (pi.vlArbitrationLowCap > VLARB_BLOCK_SIZE) out.push(2);
  if (pi.vlArbitrationHighCap > 0) out.push(3);
  if (pi.vlArbitrationHighCap > VLARB_BLOCK_SIZE) out.push(4);
  return out;
}

const vlArbRecord: RecordDef = {
  attrId: SaAttr.VLArbitrationTableRecord,
  layout: VLArbitrationTableRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const onlyPort = env.rid('outputPortNum');
    const onlyBlock = env.rid('blockNum');
    for (const ep of endPorts(env)) {
      if (!ep.lid) continue;
      const n = ctx.snapshot.fabric.nodes[ep.node]!;
      const ports = n.type === NodeType.Switch ? portRange(n.numPorts, onlyPort, 1) : portRange(ep.port, onlyPort, ep.port);
      for (const p of ports) {
        const pi = portInfoOf(ctx, ep.node, p);
        if (!pi) continue;
        for (const b of vlArbBlocks(pi)) {
          if (onlyBlock !== undefined && b !== onlyBlock) continue;
          const entries = ctx.tables?.vlArb?.(ep.node, p, b) ?? [];
          yield { node: ep.node, value: { lid: ep.lid, outputPortNum: p, blockNum: b, vlArbTable: { entries: entries.slice(0, VLARB_BLOCK_SIZE).map((e) => ({ vl: e.vl, weight: e.weight })) } } };
        }
      }
    }
  },
};

const smInfoRecord: RecordDef = {
  attrId: SaAttr.SMInfoRecord,
  layout: SMInfoRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const snap = ctx.snapshot;
    const sm = env.idx.byGuid.get(ctx.smPortGuid) ?? env.idx.byLid(snap.smLid);
    if (!sm || (env.lidPort && env.lidPort !== sm)) return;
    const info = ctx.smInfo ?? { actCount: snap.sweep, priority: 0, smState: SmState.Master };
    yield {
      node: sm.node,
      value: { lid: sm.lid, smInfo: { guid: ctx.smPortGuid, smKey: env.trusted ? ctx.smKey : 0n, actCount: info.actCount >>> 0, priority: info.priority & 0xf, smState: info.smState & 0xf } },
    };
  },
};

const pkeyRecord: RecordDef = {
  attrId: SaAttr.PKeyTableRecord,
  layout: PKeyTableRecord,
  lidPath: 'lid',
  *candidates(env) {
    const { ctx } = env;
    const onlyBlock = env.rid('blockNum');
    const onlyPort = env.rid('portNum');
    for (const ep of endPorts(env)) {
      if (!ep.lid) continue;
      if (onlyPort !== undefined && onlyPort !== ep.port) continue;
      const cap = ctx.snapshot.discovery.nodes[ep.node]!.nodeInfo.partitionCap;
      const keys = portPkeys(ctx, ep.node, ep.port);
      const blocks = Math.max(1, Math.ceil(Math.max(cap, keys.length) / PKEY_BLOCK_SIZE));
      for (const b of portRange(blocks - 1, onlyBlock)) {
        yield { node: ep.node, value: { lid: ep.lid, blockNum: b, portNum: ep.port, pkeyTable: { pkeys: keys.slice(b * PKEY_BLOCK_SIZE, (b + 1) * PKEY_BLOCK_SIZE) } } };
      }
    }
  },
};

const linkRecord: RecordDef = {
  attrId: SaAttr.LinkRecord,
  layout: LinkRecord,
  lidPath: 'fromLid',
  rangePaths: ['toLid'],
  *candidates(env) {
    const { ctx, idx } = env;
    const nodes = ctx.snapshot.fabric.nodes;
    const onlyFromPort = env.rid('fromPort');
    const toLid = env.rid('toLid');
    const toPort = toLid !== undefined ? idx.byLid(toLid) : undefined;
    if (toLid !== undefined && !toPort) return;
    const froms: Iterable<number> = env.lidPort ? [env.lidPort.node] : nodes.keys();
    for (const ni of froms) {
      const n = nodes[ni]!;
      for (let p = 1; p < n.ports.length; p++) {
        const port = n.ports[p];
        if (!port?.peer) continue;
        if (onlyFromPort !== undefined && onlyFromPort !== p) continue;
        if (env.lidPort && n.type !== NodeType.Switch && env.lidPort.port !== p) continue;
        const { node: pn, port: pp } = port.peer;
        if (toPort && (toPort.node !== pn || (nodes[pn]!.type !== NodeType.Switch && toPort.port !== pp))) continue;
        const fromLid = lidOf(ctx, ni, p);
        const to = lidOf(ctx, pn, pp);
        if (!fromLid || !to) continue;
        yield { node: ni, peer: pn, value: { fromLid, fromPort: p, toPort: pp, toLid: to } };
      }
    }
  },
};
const guidInfoRecord: RecordDef = {
  attrId: SaAttr.GUIDInfoRecord,
  layout: GUIDInfoRecord,
  lidPath: 'lid',
  write: (q, ctx) => ctx.aliases?.modify(q, ctx) ?? { kind: 'status', status: MadStatus.UnsupportedMethodAttr },
  *candidates(env) {
    const { ctx } = env;
    const onlyBlock = env.rid('blockNum');
    for (const ep of endPorts(env)) {
      if (!ep.lid) continue;
      const cap = portInfoOf(ctx, ep.node, ep.port)?.guidCap ?? 1;
      const blocks = Math.max(1, Math.ceil(cap / GUID_BLOCK_SIZE));
      for (const b of portRange(blocks - 1, onlyBlock)) {
        // GID index 0 is the port GUID; the others are the alias GUIDs clients set.
        const guids = [...(ctx.aliases?.block(ep.guid, b) ?? new Array<bigint>(GUID_BLOCK_SIZE).fill(0n))];
        if (b === 0) guids[0] = ep.guid;
        yield { node: ep.node, value: { lid: ep.lid, blockNum: b, guidInfo: { guids } } };
      }
    }
  },
};

/** Every record handler of this module (one per attribute). */
export function recordHandlers(): SaHandler[] {
  return [
    recordHandler(nodeRecord),
    recordHandler(portInfoRecord),
    recordHandler(slToVlRecord),
    recordHandler(switchInfoRecord),
    recordHandler(lftRecord),
    recordHandler(rftRecord),
    recordHandler(mftRecord),
    recordHandler(vlArbRecord),
    recordHandler(smInfoRecord),
    recordHandler(pkeyRecord),
    recordHandler(linkRecord),
    recordHandler(guidInfoRecord),
  ];
}

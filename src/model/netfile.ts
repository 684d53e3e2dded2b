/**
 * Parser for ibsim's topology files (".net" files) and for ibnetdiscover's output, which ibsim
 * loads with the same code. The rules follow ibsim 0.10 (ibsim/sim_net.c), checked against the
 * real ibsim + ibnetdiscover:
 *
 * - Lines are dispatched on their first characters (no leading blanks): `Switch`, `Hca`/`Ca`, `Rt`
 *   start a node record (`Router` is accepted too, an extension: ibsim ignores such lines); `switchguid`,
 *   `caguid`/`hcaguids`, `rtguid` set the next GUID of that node type (`=` absolute, `+` relative to
 *   the last absolute base); `vendid`, `sysimgguid` apply to the next node only; `devid`, `width`,
 *   `speed`, `extspeed` apply to every following node; `module="p"` prefixes node ids with `p#`;
 *   `include "file"`; `do <cmd>` (recorded, not executed); every other line is ignored.
 * - A node's NodeDescription is the quoted text after `#` on its header line, else its quoted id.
 * - GUIDs: switches take the switch counter (start 0x200000) and advance it by one, all ports share
 *   the node GUID; CAs and routers take their counter (CA 0x100000, router 0) and advance it by
 *   numPorts + 1, port p having GUID node + p. GUIDs printed on port lines are ignored (as in ibsim).
 * - System image GUID is the node GUID unless a `sysimgguid=` line precedes the node.
 * - Port lines `[p] "remote"[rp]` (rp defaults to 1) with options `w=` (LinkWidthEnabled bits),
 *   `s=` (LinkSpeedEnabled bits, 0 means QDR), `e=` (LinkSpeedExtEnabled bits); on switch and CA
 *   port lines the `lid N <w>x<SPEED>` text ibnetdiscover prints after the last quote sets the
 *   enabled width/speed, and on CA port lines the first `lid N` / `lmc N` set the port's LID/LMC.
 *   A switch header's `lid N lmc N` sets port 0's LID/LMC.
 * - Both ends of a link must list it (ibsim refuses a link given on one side only).
 * - The active width/speed of a link is the highest one enabled on both ends (4x SDR by default).
 *
 * Deliberate differences (all reject input that ibsim would accept with surprising results):
 * a port line outside a node record, more port lines than the node has ports, the same port listed
 * twice, or a non-blank line ending a record early (ibsim silently drops it) are TopologyErrors;
 * port aliases (`@`) are not supported; an include path is resolved against the including file's
 * directory first, then the working directory (ibsim uses only the working directory).
 *
 * Lines, C numbers and ibsim's rate encodings: model/netfile-lex.ts.
 */
import { readFileSync, existsSync } from 'node:fs';
import { dirname, resolve, isAbsolute } from 'node:path';
import { NodeType } from '../wire/mad.js';
import type { Fabric, FabricNode, FabricPort, NodeKind } from './fabric.js';
import { TopologyError } from './errors.js';
import { guidAfter, initialGuids, portGuid } from './ibsim-guids.js';
import { GUID_MASK } from '../util/guid.js';
import {
  DEFAULT_SPEED,
  DEFAULT_WIDTH,
  EXT_ORDER,
  LineReader,
  MAX_INCLUDE_DEPTH,
  NODE_DESC_BYTES,
  SPEED_ORDER,
  SPEED_TEXT,
  S_QDR,
  WIDTH_ORDER,
  WIDTH_TEXT,
  cAtoi,
  cNum,
  cStrToBig,
  highestBit,
  truncateUtf8,
  type Line,
} from './netfile-lex.js';
import { IbsmFileError } from '../util/errors.js';

export { TopologyError } from './errors.js';
export { cStrToBig } from './netfile-lex.js';

/** A `do <command>` line: ibsim runs it as a console command while parsing; we only record it. */
export interface NetCommand {
  file: string;
  line: number;
  command: string;
}

export interface ParsedTopology {
  fabric: Fabric;
  /** The quoted node id of each node (same index as fabric.nodes), with any module prefix. */
  ids: string[];
  /** Switch node indices whose header says "enhanced port 0" (Fabric has no field for it). */
  enhancedPort0: number[];
  commands: NetCommand[];
  /** Things ibsim would warn about and ignore (unparsable rate text and the like). */
  warnings: string[];
}

export interface ParseNetOptions {
  /** Name used in error messages and as the base for relative includes. Default "<text>". */
  fileName?: string;
  /** Reads an included file. Default: the file system, relative to the including file, then cwd. */
  readInclude?: (name: string, fromFile: string) => { path: string; text: string };
}

interface PortDecl {
  remoteId: string;
  remotePort: number;
  file: string;
  line: number;
}

interface PortState {
  decl?: PortDecl;
  widthEna: number;
  speedEna: number;
  extEna: number;
  /** LinkSpeedExtEnabled2 (PortInfo byte 56): 1 = XDR. ibsim has no such field; ibsm's simulated
   * fabric does. */
  ext2Ena: number;
  lid: number;
  lmc: number;
}

interface PNode {
  type: NodeKind;
  id: string;
  desc: string;
  numPorts: number;
  guid: bigint;
  sysGuid: bigint;
  vendorId: number;
  deviceId: number;
  ports: (PortState | undefined)[];
  enhancedPort0: boolean;
}

const TYPE_WORD: Record<NodeKind, string> = { [NodeType.CA]: 'CA', [NodeType.Switch]: 'switch', [NodeType.Router]: 'router' };

const defaultReadInclude = (name: string, fromFile: string): { path: string; text: string } => {
  const candidates = isAbsolute(name) ? [name] : [resolve(dirname(fromFile), name), resolve(name)];
  for (const c of candidates) if (existsSync(c)) return { path: c, text: readFileSync(c, 'utf8') };
  throw new IbsmFileError(`cannot find include file "${name}" (looked in ${candidates.join(', ')})`, { file: name });
};

class NetParser {
  private readonly nodes: PNode[] = [];
  private readonly byId = new Map<string, number>();
  private readonly byGuid = new Map<bigint, number>();
  private readonly guids = initialGuids();
  private readonly absGuids = initialGuids();
  private prefix = '';
  private vendId = 0;
  private devId = 0;
  private sysImgGuid = 0n;
  private width = DEFAULT_WIDTH;
  private speed = DEFAULT_SPEED;
  private extSpeed = 0;
  readonly commands: NetCommand[] = [];
  readonly warnings: string[] = [];
  private readonly includeStack: string[] = [];

  constructor(private readonly readInclude: NonNullable<ParseNetOptions['readInclude']>) {}

  parseFile(text: string, file: string): void {
    if (this.includeStack.includes(file)) {
      throw new TopologyError(file, 0, `include cycle: ${[...this.includeStack, file].join(' -> ')}`);
    }
    this.includeStack.push(file);
    const r = new LineReader(text, file);
    for (let l = r.next(); l; l = r.next()) this.topLine(l, r);
    this.includeStack.pop();
  }

  private err(r: { file: string }, l: Line, detail: string): TopologyError {
    return new TopologyError(r.file, l.no, detail);
  }

  private topLine(l: Line, r: LineReader): void {
    const t = l.text;
    const starts = (w: string): boolean => t.startsWith(w);
    if (starts('Switch')) this.nodeRecord(NodeType.Switch, 'Switch'.length, l, r);
    else if (starts('Hca')) this.nodeRecord(NodeType.CA, 3, l, r);
    else if (starts('Ca')) this.nodeRecord(NodeType.CA, 2, l, r);
    else if (starts('Router')) this.nodeRecord(NodeType.Router, 6, l, r);
    else if (starts('Rt')) this.nodeRecord(NodeType.Router, 2, l, r);
    else if (starts('switchguid')) this.guidBase(NodeType.Switch, l, r);
    else if (starts('hcaguids') || starts('caguid')) this.guidBase(NodeType.CA, l, r);
    else if (starts('rtguid')) this.guidBase(NodeType.Router, l, r);
    else if (starts('vendid')) this.vendId = cNum(this.assignment(l, r));
    else if (starts('devid')) this.devId = cNum(this.assignment(l, r));
    else if (starts('sysimgguid')) this.sysImgGuid = cStrToBig(this.assignment(l, r)).value;
    else if (starts('width')) this.width = this.ranged(l, r, 'width', 1, 31, 'LinkWidthEnabled bits: 1=1x 2=4x 4=8x 8=12x 16=2x');
    else if (starts('speed')) this.speed = this.ranged(l, r, 'speed', 1, 7, 'LinkSpeedEnabled bits: 1=SDR 2=DDR 4=QDR');
    else if (starts('extspeed')) this.extSpeed = this.ranged(l, r, 'extspeed', 0, 15, 'LinkSpeedExtEnabled bits: 1=FDR 2=EDR 4=HDR 8=NDR');
    else if (starts('module')) this.module(l, r);
    else if (starts('include')) this.include(l, r);
    else if (starts('pdebug')) {
      /* ibsim parser debugging switch: nothing to do */
    } else if (starts('do')) this.commands.push({ file: r.file, line: l.no, command: t.slice(2).trim() });
    else if (starts('[') || starts('@')) {
      throw this.err(r, l, 'port line outside a node record: expected a node header (Switch|Hca|Ca|Rt <ports> "<id>") before it, with no blank line in between');
    }
    // anything else: ignored, as ibsim does (comments, vendid-like noise, Chassis lines...)
  }

  private assignment(l: Line, r: LineReader): string {
    const i = l.text.indexOf('=');
    if (i < 0) throw this.err(r, l, `expected "<name>=<value>" (missing "=")`);
    return l.text.slice(i + 1);
  }

  private ranged(l: Line, r: LineReader, name: string, lo: number, hi: number, what: string): number {
    const v = cNum(this.assignment(l, r));
    if (v < lo || v > hi) throw this.err(r, l, `${name}=${v} is out of range: expected ${lo}..${hi} (${what})`);
    return v;
  }

  private guidBase(type: NodeKind, l: Line, r: LineReader): void {
    let i = l.text.indexOf('=');
    let relative = false;
    if (i < 0) {
      i = l.text.indexOf('+');
      relative = true;
    }
    if (i < 0) throw this.err(r, l, 'expected "=<guid>" (absolute) or "+<offset>" (relative) after the GUID keyword');
    const v = cStrToBig(l.text.slice(i + 1)).value;
    if (!relative) this.absGuids[type] = v;
    this.guids[type] = (this.absGuids[type] + (relative ? v : 0n)) & GUID_MASK;
  }

  private module(l: Line, r: LineReader): void {
    const v = this.assignment(l, r);
    const m = /"([^"]*)"/.exec(v);
    if (!m) throw this.err(r, l, 'expected module="<prefix>"');
    if (m[1]!.length > 20) throw this.err(r, l, `module prefix "${m[1]}" is longer than 20 characters`);
    this.prefix = m[1]!;
  }

  private include(l: Line, r: LineReader): void {
    const rest = l.text.slice('include'.length);
    const q = /"([^"]*)"/.exec(rest);
    const name = q ? q[1]! : rest.trim();
    if (!name) throw this.err(r, l, 'expected include "<file name>"');
    if (this.includeStack.length > MAX_INCLUDE_DEPTH) throw this.err(r, l, `includes nested deeper than ${MAX_INCLUDE_DEPTH} levels`);
    let inc: { path: string; text: string };
    try {
      inc = this.readInclude(name, r.file);
    } catch (e) {
      throw this.err(r, l, e instanceof Error ? e.message : String(e));
    }
    this.parseFile(inc.text, inc.path);
  }

  private nodeRecord(type: NodeKind, kwLen: number, l: Line, r: LineReader): void {
    const t = l.text;
    const rest = t.slice(kwLen);
    const q1 = rest.indexOf('"');
    const dm = /\d/.exec(rest);
    const kind = TYPE_WORD[type];
    if (!dm || (q1 >= 0 && dm.index > q1)) throw this.err(r, l, `expected the number of ports after "${t.slice(0, kwLen)}", e.g. ${t.slice(0, kwLen)} 8 "name"`);
    const numPorts = cNum(rest.slice(dm.index));
    if (numPorts < 1 || numPorts > 255) throw this.err(r, l, `a ${kind} must have 1..255 ports, not ${numPorts}`);
    const q2 = q1 >= 0 ? rest.indexOf('"', q1 + 1) : -1;
    if (q1 < 0 || q2 < 0) throw this.err(r, l, `expected a quoted node id after the port count, e.g. ${t.slice(0, kwLen)} ${numPorts} "name"`);
    const base = rest.slice(q1 + 1, q2);
    if (base === '') throw this.err(r, l, 'the node id "" is empty');
    if (base.includes('#') || base.includes('@')) throw this.err(r, l, `bad node id "${base}": "#" and "@" are reserved`);
    const id = this.prefix ? `${this.prefix}#${base}` : base;
    const prev = this.byId.get(id);
    if (prev !== undefined) throw this.err(r, l, `node id "${id}" is defined twice`);
    const guid = this.guids[type];
    const dup = this.byGuid.get(guid);
    if (dup !== undefined) {
      throw this.err(r, l, `${kind} "${id}" would get GUID 0x${guid.toString(16)}, already used by "${this.nodes[dup]!.id}": fix the switchguid=/caguid=/rtguid= lines`);
    }

    // Node description: quoted text after '#', or the text up to " base port "/" lid "... markers.
    let after: string | undefined = rest.slice(q2 + 1);
    let desc: string | undefined;
    const hash = after.indexOf('#');
    if (hash >= 0) {
      let s = after.slice(hash + 1).replace(/^\s+/, '');
      if (s.startsWith('"')) {
        s = s.slice(1);
        const e = s.indexOf('"');
        if (e >= 0) {
          desc = s.slice(0, e);
          after = s.slice(e + 1);
        } else {
          desc = s;
          after = undefined;
        }
      } else {
        let cut = -1;
        for (const marker of [' enhanced port ', ' base port ', ' lid ', ' lmc ']) {
          cut = s.indexOf(marker);
          if (cut >= 0) break;
        }
        if (cut >= 0) {
          desc = s.slice(0, cut);
          after = s.slice(cut + 1);
        } else {
          desc = s;
          after = undefined;
        }
      }
    }
    const node: PNode = {
      type,
      id,
      desc: truncateUtf8(desc ? desc : id, NODE_DESC_BYTES),
      numPorts,
      guid,
      sysGuid: this.sysImgGuid || guid,
      vendorId: this.vendId,
      deviceId: this.devId,
      ports: [],
      enhancedPort0: false,
    };
    this.vendId = 0;
    this.sysImgGuid = 0n;
    this.guids[type] = guidAfter(type, guid, numPorts);
    for (let p = type === NodeType.Switch ? 0 : 1; p <= numPorts; p++) {
      node.ports[p] = { widthEna: this.width, speedEna: this.speed, extEna: this.extSpeed, ext2Ena: 0, lid: 0, lmc: 0 };
    }
    if (type === NodeType.Switch && after !== undefined) {
      node.enhancedPort0 = after.includes('enhanced port 0');
      const p0 = node.ports[0]!;
      const lid = after.indexOf('lid ');
      if (lid >= 0) p0.lid = cNum(after.slice(lid + 4));
      const lmc = after.indexOf('lmc ');
      if (lmc >= 0) p0.lmc = cNum(after.slice(lmc + 4));
    }
    this.byId.set(id, this.nodes.length);
    this.byGuid.set(guid, this.nodes.length);
    this.nodes.push(node);

    // Port lines, until numPorts of them, a blank line, or EOF.
    let seen = 0;
    while (seen < numPorts) {
      const pl = r.next();
      if (!pl) return;
      if (pl.text.startsWith('#')) continue;
      if (pl.text.startsWith('[') || pl.text.startsWith('@')) {
        this.portLine(node, pl, r);
        seen++;
        continue;
      }
      if (pl.text.trim() === '') return;
      throw this.err(r, pl, `expected a port line "[<port>] "<remote id>"[<remote port>]" or a blank line to end the record of ${kind} "${id}" (ibsim would silently drop this line)`);
    }
  }

  private portLine(node: PNode, l: Line, r: LineReader): void {
    const t = l.text;
    const kind = TYPE_WORD[node.type];
    if (t.startsWith('@')) throw this.err(r, l, 'port aliases ("@" lines) are not supported');
    const pn = cAtoi(t.slice(1));
    if (pn < 1 || pn > node.numPorts) {
      throw this.err(r, l, `port number ${pn} is out of range for ${kind} "${node.id}": expected [1]..[${node.numPorts}]`);
    }
    const port = node.ports[pn]!;
    if (port.decl) throw this.err(r, l, `port ${pn} of "${node.id}" is already listed on line ${port.decl.line}`);
    const q1 = t.indexOf('"');
    const q2 = q1 >= 0 ? t.indexOf('"', q1 + 1) : -1;
    if (q1 < 0 || q2 < 0) throw this.err(r, l, `expected a quoted remote node id after [${pn}], e.g. [${pn}] "name"[1]`);
    const rbase = t.slice(q1 + 1, q2);
    if (rbase.includes('@')) throw this.err(r, l, `remote id "${rbase}": port aliases ("@") are not supported`);
    const remoteId = this.prefix && !rbase.includes('#') ? `${this.prefix}#${rbase}` : rbase;
    const afterPos = q2 + 1;
    const after = t.slice(afterPos);
    let remotePort = 1;
    if (after.startsWith('[')) {
      remotePort = cAtoi(after.slice(1));
      if (remotePort <= 0) throw this.err(r, l, `invalid remote port number ${remotePort}: expected "${rbase}"[<1..255>]`);
    }
    port.decl = { remoteId, remotePort, file: r.file, line: l.no };

    // Options: every '=' after the remote id, named by the nearest letter before it (ibsim's rule).
    for (let eq = t.indexOf('=', afterPos + 1); eq >= 0; eq = t.indexOf('=', eq + 1)) {
      let o = eq;
      while (o >= 0 && !/[A-Za-z]/.test(t[o]!)) o--;
      if (o < 0) continue;
      const opt = t[o]!;
      const v = cNum(t.slice(eq + 1));
      if (opt === 'w') {
        if (v < 1 || v > 31) throw this.err(r, l, `bad port option w=${v}: expected LinkWidthEnabled bits 1..31 (1=1x 2=4x 4=8x 8=12x 16=2x)`);
        port.widthEna = v;
      } else if (opt === 's') {
        if (v !== 0 && (v < 1 || v > 7)) throw this.err(r, l, `bad port option s=${v}: expected LinkSpeedEnabled bits 1..7 (1=SDR 2=DDR 4=QDR)`);
        port.speedEna = v || S_QDR;
      } else if (opt === 'e') {
        if (v < 0 || v > 15) throw this.err(r, l, `bad port option e=${v}: expected LinkSpeedExtEnabled bits 0..15 (1=FDR 2=EDR 4=HDR 8=NDR)`);
        port.extEna = v;
      }
    }

    if (node.type === NodeType.Router) return;
    if (node.type === NodeType.CA) {
      const lid = after.indexOf('lid ');
      if (lid >= 0) port.lid = cNum(after.slice(lid + 4));
      const lmc = after.indexOf('lmc ');
      if (lmc >= 0) port.lmc = cNum(after.slice(lmc + 4));
    }
    // The rate ibnetdiscover prints: "lid <n> <w>x<SPEED>" after the last quote.
    const lastQuote = after.lastIndexOf('"');
    const li = after.indexOf('lid', lastQuote + 1);
    if (li < 0) {
      if (after.includes('#')) this.warnings.push(`${r.file}:${l.no}: no "lid <n> <width>x<speed>" after the remote description; link rate left at the defaults`);
      return;
    }
    const m = /^lid\s*[+-]?\d+\s*([+-]?\d+)x(\S{1,9})/.exec(after.slice(li));
    if (!m) {
      this.warnings.push(`${r.file}:${l.no}: cannot parse the link rate in "${after.slice(li)}"; left at the defaults`);
      return;
    }
    const w = WIDTH_TEXT[String(parseInt(m[1]!, 10))];
    if (w !== undefined) port.widthEna = w;
    else this.warnings.push(`${r.file}:${l.no}: unknown link width "${m[1]}x"; left at the default`);
    const sp = m[2]!;
    // ibsim: strncmp(text, NAME, strlen(text)) in this order, i.e. the first NAME the text is a prefix of.
    const chosen = SPEED_TEXT.find(([name]) => name.startsWith(sp));
    if (chosen) {
      port.speedEna = chosen[1].speed;
      if (chosen[1].ext !== undefined) port.extEna = chosen[1].ext;
      port.ext2Ena = chosen[1].ext2 ?? 0;
    } else this.warnings.push(`${r.file}:${l.no}: unknown link speed "${sp}"; left at the default`);
  }

  /** ibsim's connect_ports: every declared link must be declared from both ends. */
  build(): ParsedTopology {
    const fnodes: FabricNode[] = this.nodes.map((n) => ({
      type: n.type,
      guid: n.guid,
      systemImageGuid: n.sysGuid,
      desc: n.desc,
      numPorts: n.numPorts,
      vendorId: n.vendorId,
      deviceId: n.deviceId,
      ports: [],
    }));
    this.nodes.forEach((n, ni) => {
      const fn = fnodes[ni]!;
      n.ports.forEach((ps, p) => {
        if (!ps) return;
        const fp: FabricPort = { num: p, guid: portGuid(n.type, n.guid, p) };
        if (n.type !== NodeType.Switch || p === 0) {
          fp.lid = ps.lid;
          fp.lmc = ps.lmc;
        }
        fn.ports[p] = fp;
      });
    });
    this.nodes.forEach((n, ni) => {
      n.ports.forEach((ps, p) => {
        if (!ps?.decl || p === 0) return;
        const fp = fnodes[ni]!.ports[p]!;
        if (fp.peer) return;
        const d = ps.decl;
        const here = `"${n.id}"[${p}]`;
        const ri = this.byId.get(d.remoteId);
        if (ri === undefined) throw new TopologyError(d.file, d.line, `${here} connects to node "${d.remoteId}", which is not defined anywhere`);
        const rn = this.nodes[ri]!;
        if (d.remotePort > rn.numPorts) {
          throw new TopologyError(d.file, d.line, `${here} connects to "${rn.id}"[${d.remotePort}], but "${rn.id}" has only ${rn.numPorts} ports`);
        }
        if (ri === ni && d.remotePort === p) throw new TopologyError(d.file, d.line, `${here} is connected to itself`);
        const rs = rn.ports[d.remotePort]!;
        if (!rs.decl || rs.decl.remoteId !== n.id || rs.decl.remotePort !== p) {
          const other = rs.decl ? `connects to "${rs.decl.remoteId}"[${rs.decl.remotePort}] (line ${rs.decl.line} of ${rs.decl.file})` : 'has no port line';
          throw new TopologyError(d.file, d.line, `${here} connects to "${rn.id}"[${d.remotePort}], but that port ${other}; both ends of a link must list it`);
        }
        const width = highestBit(ps.widthEna & rs.widthEna, WIDTH_ORDER);
        if (!width) throw new TopologyError(d.file, d.line, `${here}: no link width enabled on both ends (w=${ps.widthEna} here, w=${rs.widthEna} at "${rn.id}"[${d.remotePort}])`);
        const base = highestBit(ps.speedEna & rs.speedEna, SPEED_ORDER);
        if (!base) throw new TopologyError(d.file, d.line, `${here}: no link speed enabled on both ends (s=${ps.speedEna} here, s=${rs.speedEna} at "${rn.id}"[${d.remotePort}])`);
        // FDR10 (a Mellanox extension) shows as QDR: ibnetdiscover only reads it for whitelisted device ids.
        const speed = ps.ext2Ena & rs.ext2Ena & 1 ? 'XDR' : (highestBit(ps.extEna & rs.extEna, EXT_ORDER) ?? base);
        const rp = fnodes[ri]!.ports[d.remotePort]!;
        fp.peer = { node: ri, port: d.remotePort };
        rp.peer = { node: ni, port: p };
        fp.width = rp.width = width;
        fp.speed = rp.speed = speed;
      });
    });
    return {
      fabric: { nodes: fnodes },
      ids: this.nodes.map((n) => n.id),
      enhancedPort0: this.nodes.flatMap((n, i) => (n.enhancedPort0 ? [i] : [])),
      commands: this.commands,
      warnings: this.warnings,
    };
  }
}

/** Parse the text of an ibsim .net file or of ibnetdiscover output. Throws only TopologyError. */
export function parseNetText(text: string, opts: ParseNetOptions = {}): ParsedTopology {
  const p = new NetParser(opts.readInclude ?? defaultReadInclude);
  p.parseFile(text, opts.fileName ?? '<text>');
  return p.build();
}

/** Read and parse a .net / ibnetdiscover file. Throws only TopologyError. */
export function readNetFile(path: string, opts: Omit<ParseNetOptions, 'fileName'> = {}): ParsedTopology {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new TopologyError(path, 0, `cannot read the topology file: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseNetText(text, { ...opts, fileName: path });
}

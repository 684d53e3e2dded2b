/** Pure planners for the tables the SM programs: (the sweep's view, what is programmed, settings)
 * → the SMP Sets needed. P_Key tables from the partition plan, SL2VL/VLArbitration for layered
 * routing, LinearFDBTop and the changed LFT blocks, and the MFT blocks of the multicast trees.
 * A planner never changes `Programmed`: the apply step records what the fabric acknowledged. */
import { NodeType, SmpAttr } from '../wire/mad.js';
import { LinearForwardingTable, MulticastForwardingTable, PKeyTable, RandomForwardingTable, SLtoVLMappingTable, SwitchInfo, VLArbitrationTable, LFT_BLOCK_SIZE, PKEY_BLOCK_SIZE } from '../wire/sma.js';
import { lftBlockMod, pkeyBlockMod, sl2vlMod, vlArbMod, VlArbBlock } from '../wire/modifiers.js';
import { isEndPort, portKind, type DiscoveryResult } from '../model/snapshot.js';
import type { PartitionPlan } from '../model/partitions.js';
import { emptyRftBlock, isRftSwitch, portSl2Vl, rftBlocksOf, type PortSl2Vl, type RoutingResult } from '../model/routes.js';
import { sl2vlForPort, type QosVlSettings, type VlArbEntry } from '../model/qos-policy.js';
import { MCAST_LID_BASE, type MftPlan } from '../routing/mcast-tree.js';
import { mftBlocks } from './mft-blocks.js';
import { allocBytes } from '../util/slab.js';
import { enforces } from './plan-ports.js';
import { LFT_PORTS, sameLftBlock, type LftShadow, type Programmed, type SmpWrite } from './programmed.js';
import { formatGuid } from '../util/guid.js';

/** Switches a full sweep programs at once (lftPlan's `interleave`; see LFT_APPLY_WINDOW in apply.ts). */
export const LFT_INTERLEAVE = 16;

/** The switches' packet lifetime (4.096 µs × 2^n), OpenSM's default. */
const SWITCH_LIFE_TIME = 0x12;

/** Ports found in their reset state and switches found reset (LinearFDBTop 0, or no LID on an
 * RFT switch), taken before any
 * Set changes what the sweep knows of them: the state `Programmed` must forget. */
export function observeResets(disc: DiscoveryResult, programmed: Programmed): void {
  disc.fabric.nodes.forEach((n, ni) => {
    const d = disc.nodes[ni]!;
    // an RFT switch has no LinearFDBTop: its reset shows as port 0 without a LID
    const si = d.switchInfo;
    if (n.type === NodeType.Switch && si && (isRftSwitch(si) ? d.portInfo[0]?.lid === 0 : si.linearFdbTop === 0)) programmed.switchReset(n.guid, n.numPorts);
    d.portInfo.forEach((pi, pn) => {
      if (pi && pi.lid === 0 && isEndPort(n, pn)) programmed.portReset(`${n.guid}/${pn}`);
    });
  });
}

/** P_Key tables: every end port's from the partition plan; a switch port that enforces gets its
 * neighbour's table. A table is written (all its blocks) when it differs from what is programmed.
 * A port whose table (NodeInfo PartitionCap, a switch's PartitionEnforcementCap; 64 entries
 * typically) cannot hold all its partitions gets the first that fit, in the plan's order (as
 * OpenSM, which logs ERR 0512 "table full"): counted in `full.ports` on every sweep, and said
 * (port, capacity, the partitions left out) whenever such a table is written. */
export function planPkeys(disc: DiscoveryResult, plan: PartitionPlan, programmed: Programmed, warn: (msg: string, f: Record<string, unknown>) => void, full?: { ports: number }, partEnforce: 'both' | 'in' | 'out' | 'off' = 'both'): SmpWrite[] {
  const out: SmpWrite[] = [];
  const planned = new Set<string>();
  const write = (key: string, path: readonly number[], port: number, pkeys: readonly number[], cap: number): void => {
    const table = pkeys.slice(0, Math.max(cap, 1));
    const sig = table.join(',');
    if (planned.has(key)) return;
    const over = table.length < pkeys.length;
    if (over && full) full.ports++;
    if (programmed.pkeys.get(key) === sig) return;
    planned.add(key);
    if (over) {
      const left = pkeys.slice(table.length).map((k) => plan.partitions.find((x) => x.pkey === (k & 0x7fff))?.name || `0x${(k & 0x7fff).toString(16)}`);
      const [guid, pn] = key.split('/');
      const node = disc.fabric.nodes.find((x) => String(x.guid) === guid);
      warn('P_Key table full: partitions left out of a port', { node: node?.desc ?? '', nodeGuid: `${formatGuid(BigInt(guid!))}`, port: Number(pn), capacity: table.length, partitions: pkeys.length, leftOut: left.length, first: [...new Set(left)].slice(0, 8).join(',') });
    }
    const blocks = Math.max(1, Math.ceil(table.length / PKEY_BLOCK_SIZE));
    for (let b = 0; b < blocks; b++) {
      const block = table.slice(b * PKEY_BLOCK_SIZE, (b + 1) * PKEY_BLOCK_SIZE);
      out.push({ path, attr: SmpAttr.PKeyTable, mod: pkeyBlockMod(b, port), data: PKeyTable.encode({ pkeys: block }, allocBytes(PKeyTable.byteLength)), effect: { kind: 'pkeys', key, block: b, blocks, sig } });
    }
  };
  disc.fabric.nodes.forEach((n, ni) => {
    if (n.type === NodeType.Switch) return;
    const d = disc.nodes[ni]!;
    const kind = portKind(n.type);
    n.ports.forEach((p, pn) => {
      if (!p?.peer || !d.portPaths[pn]) return;
      const self = ni === disc.smNode && pn === disc.smPort;
      const pkeys = plan.pkeysFor(p.guid, kind, self);
      if (pkeys.length === 0) warn('port is in no partition', { portGuid: p.guid });
      write(`${n.guid}/${pn}`, d.portPaths[pn]!, 0, pkeys, d.nodeInfo.partitionCap);
      const sw = disc.fabric.nodes[p.peer.node]!;
      const sd = disc.nodes[p.peer.node]!;
      if (partEnforce !== 'off' && enforces(disc, sw, sd, sw.ports[p.peer.port]!)) write(`${sw.guid}/${p.peer.port}`, sd.path, p.peer.port, pkeys, sd.switchInfo!.partitionEnforcementCap);
    });
  });
  // The SM's own switch port 0 (an SM embedded in a switch) is an end port too.
  const smN = disc.fabric.nodes[disc.smNode]!;
  if (smN.type === NodeType.Switch) {
    const d = disc.nodes[disc.smNode]!;
    write(`${smN.guid}/0`, d.path, 0, plan.pkeysFor(smN.ports[0]!.guid, 'switch', true), d.nodeInfo.partitionCap);
  }
  return out;
}

/** SL2VL on every switch port pair and end port, and VLArbitration (low priority: every used VL
 * an equal weight), when the routing layers routes on more than one VL. Otherwise, with QoS VL
 * settings (OpenSM's qos_* options), the QoS tables: the SL2VL masked to each port's
 * OperationalVLs, the high and low VLArbitration tables as configured. A layered engine's tables
 * win over QoS (its VLs keep the routes deadlock-free). With per-port tables (`sl2vlByPorts`, the
 * torus's datelines) each switch gets its own table per (in port, out port) pair; an out port
 * whose pairs all hold one table takes it in one Set for all input ports where the switch
 * supports it (OptimizedSLtoVLMappingProgramming). */
export function planVlTables(disc: DiscoveryResult, routing: RoutingResult, programmed: Programmed, qos?: QosVlSettings): SmpWrite[] {
  const vls = routing.vlsUsed ?? 1;
  if ((vls <= 1 || !routing.sl2vl) && qos) return planQosVlTables(disc, qos, programmed);
  if (vls <= 1 || !routing.sl2vl) return [];
  const sl2vl = SLtoVLMappingTable.encode({ vls: [...routing.sl2vl] });
  const arbEntries = Array.from({ length: 32 }, (_, i) => (i < vls ? { vl: i, weight: 64 } : { vl: 0, weight: 0 }));
  const vlarb = VLArbitrationTable.encode({ entries: arbEntries });
  const sig = `${routing.sl2vl.join(',')}|${vls}`;
  const out: SmpWrite[] = [];
  const table = (key: string, sets: Array<[readonly number[], number, number, Uint8Array]>): void => {
    for (const [path, attr, mod, data] of sets) out.push({ path, attr, mod, data, effect: { kind: 'vl', key, sig, parts: sets.length } });
  };
  disc.fabric.nodes.forEach((n, ni) => {
    const d = disc.nodes[ni]!;
    if (n.type === NodeType.Switch) {
      const key = `${n.guid}/sw`;
      const byPorts = routing.sl2vlByPorts?.get(ni);
      if (byPorts) {
        const psig = `${sig}|${portTablesSig(byPorts)}`;
        if (programmed.vl.get(key) === psig) return;
        const sets = perPortSl2VlSets(n, d.path, byPorts, !!d.switchInfo?.optimizedSlToVlMappingProgramming);
        for (const [outP] of linkedPorts(n)) sets.push([d.path, SmpAttr.VLArbitrationTable, vlArbMod(outP, VlArbBlock.LowFirst), vlarb]);
        for (const [path, attr, mod, data] of sets) out.push({ path, attr, mod, data, effect: { kind: 'vl', key, sig: psig, parts: sets.length } });
        return;
      }
      if (programmed.vl.get(key) === sig) return;
      const linked = n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
      const sets: Array<[readonly number[], number, number, Uint8Array]> = [];
      if (d.switchInfo?.optimizedSlToVlMappingProgramming) {
        sets.push([d.path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, 0, { allInputPorts: true, allOutputPorts: true }), sl2vl]);
      } else {
        for (const inP of [0, ...linked]) for (const outP of linked) if (inP !== outP) sets.push([d.path, SmpAttr.SLtoVLMappingTable, sl2vlMod(inP, outP), sl2vl]);
      }
      for (const outP of linked) sets.push([d.path, SmpAttr.VLArbitrationTable, vlArbMod(outP, VlArbBlock.LowFirst), vlarb]);
      table(key, sets);
      return;
    }
    n.ports.forEach((p, pn) => {
      const path = d.portPaths[pn];
      if (!p?.peer || !path) return;
      const key = `${n.guid}/${pn}`;
      if (programmed.vl.get(key) === sig) return;
      table(key, [
        [path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, 0), sl2vl],
        [path, SmpAttr.VLArbitrationTable, vlArbMod(0, VlArbBlock.LowFirst), vlarb],
      ]);
    });
  });
  return out;
}

function linkedPorts(n: DiscoveryResult['fabric']['nodes'][number]): Array<[number]> {
  return n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0).map((i) => [i]);
}

/** A comparable signature of a switch's per-port SL2VL tables: two 32-bit FNV-1a hashes (different
 * offsets) of the table bytes and its size, so that the shadow keeps a few bytes per switch, not
 * (ports + 1)² × 16. */
function portTablesSig(t: PortSl2Vl): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < t.vl.length; i++) {
    h1 = Math.imul(h1 ^ t.vl[i]!, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ (t.vl[i]! + i), 0x01000193) >>> 0;
  }
  return `${t.stride}:${h1.toString(16)}:${h2.toString(16)}`;
}

/** The SLtoVLMappingTable Sets of one switch's per-port tables: every (in port, out port) pair of
 * its linked ports (in port 0 too), or one Set per out port for all input ports when they agree
 * and the switch takes the all-input-ports modifier. */
function perPortSl2VlSets(n: DiscoveryResult['fabric']['nodes'][number], path: readonly number[], t: PortSl2Vl, optimized: boolean): Array<[readonly number[], number, number, Uint8Array]> {
  const linked = linkedPorts(n).map(([p]) => p);
  const sets: Array<[readonly number[], number, number, Uint8Array]> = [];
  const enc = (inP: number, outP: number): Uint8Array => SLtoVLMappingTable.encode({ vls: [...(inP < t.stride && outP < t.stride ? portSl2Vl(t, inP, outP) : new Uint8Array(16))] });
  for (const outP of linked) {
    const ins = [0, ...linked].filter((p) => p !== outP);
    const first = enc(ins[0]!, outP);
    if (optimized && ins.every((p) => enc(p, outP).every((b, i) => b === first[i]))) {
      sets.push([path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, outP, { allInputPorts: true }), first]);
      continue;
    }
    for (const inP of ins) sets.push([path, SmpAttr.SLtoVLMappingTable, sl2vlMod(inP, outP), enc(inP, outP)]);
  }
  return sets;
}

/** One LFT block to read back. */
export interface LftRead {
  path: readonly number[];
  guid: bigint;
  block: number;
  /** Blocks the shadow needs (up to the new LinearFDBTop). */
  blocks: number;
}

/** The LFT blocks to read from switches this SM has no shadow of but that hold tables (another
 * SM programmed them, or this SM did before it restarted): reading them lets a new master write
 * only what differs instead of every block. Blocks up to the switch's LinearFDBTop (and no
 * further than `maxLid` needs). */
export function planLftReads(disc: DiscoveryResult, maxLid: number, programmed: Programmed): LftRead[] {
  const out: LftRead[] = [];
  const blocks = Math.floor(maxLid / LFT_BLOCK_SIZE) + 1;
  disc.fabric.nodes.forEach((n, ni) => {
    if (n.type !== NodeType.Switch || programmed.lfts.has(n.guid)) return;
    const d = disc.nodes[ni]!;
    const top = d.switchInfo?.linearFdbTop ?? 0;
    if (!top) return;
    const held = Math.min(blocks, Math.floor(top / LFT_BLOCK_SIZE) + 1);
    for (let b = 0; b < held; b++) out.push({ path: d.path, guid: n.guid, block: b, blocks });
  });
  return out;
}

/** The QoS SL2VL and VLArbitration tables on every switch port pair and end port (see planVlTables). */
function planQosVlTables(disc: DiscoveryResult, qos: QosVlSettings, programmed: Programmed): SmpWrite[] {
  const out: SmpWrite[] = [];
  const arbBlocks = (entries: readonly VlArbEntry[], cap: number | undefined, first: number): Array<[number, Uint8Array]> => {
    if (cap === 0) return []; // the port has no such table
    const used = entries.slice(0, cap ?? entries.length);
    const blocks: Array<[number, Uint8Array]> = [];
    for (let b = 0; b * 32 < Math.max(used.length, 1) && b < 2; b++) {
      const part = used.slice(b * 32, b * 32 + 32);
      blocks.push([first + b, VLArbitrationTable.encode({ entries: Array.from({ length: 32 }, (_, i) => part[i] ?? { vl: 0, weight: 0 }) })]);
    }
    return blocks;
  };
  const arb = (sets: Array<[readonly number[], number, number, Uint8Array]>, path: readonly number[], port: number, pi: { vlArbitrationLowCap?: number; vlArbitrationHighCap?: number } | undefined): void => {
    for (const [blk, data] of arbBlocks(qos.vlarbLow, pi?.vlArbitrationLowCap, VlArbBlock.LowFirst)) sets.push([path, SmpAttr.VLArbitrationTable, vlArbMod(port, blk), data]);
    for (const [blk, data] of arbBlocks(qos.vlarbHigh, pi?.vlArbitrationHighCap, VlArbBlock.HighFirst)) sets.push([path, SmpAttr.VLArbitrationTable, vlArbMod(port, blk), data]);
  };
  const sigOf = (sl2vl: readonly number[]): string => `qos|${sl2vl.join(',')}|${qos.vlarbHigh.map((e) => `${e.vl}:${e.weight}`).join(',')}|${qos.vlarbLow.map((e) => `${e.vl}:${e.weight}`).join(',')}`;
  const push = (key: string, sig: string, sets: Array<[readonly number[], number, number, Uint8Array]>): void => {
    if (programmed.vl.get(key) === sig) return;
    for (const [path, attr, mod, data] of sets) out.push({ path, attr, mod, data, effect: { kind: 'vl', key, sig, parts: sets.length } });
  };
  disc.fabric.nodes.forEach((n, ni) => {
    const d = disc.nodes[ni]!;
    if (n.type === NodeType.Switch) {
      const linked = n.ports.map((p, i) => (i > 0 && p?.peer ? i : -1)).filter((i) => i > 0);
      // The egress port's OperationalVLs bound the table; one table per output port.
      const sets: Array<[readonly number[], number, number, Uint8Array]> = [];
      const sigs: string[] = [];
      for (const outP of linked) {
        const pi = d.portInfo[outP];
        const sl2vl = sl2vlForPort(qos, pi?.operationalVls ?? 1);
        sigs.push(sigOf(sl2vl));
        const data = SLtoVLMappingTable.encode({ vls: sl2vl });
        // Every input port, itself and unlinked ones included, as OpenSM programs them (one Set
        // for all inputs where the switch takes it).
        if (d.switchInfo?.optimizedSlToVlMappingProgramming) sets.push([d.path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, outP, { allInputPorts: true }), data]);
        else for (let inP = 0; inP <= n.numPorts; inP++) sets.push([d.path, SmpAttr.SLtoVLMappingTable, sl2vlMod(inP, outP), data]);
        arb(sets, d.path, outP, pi);
      }
      push(`${n.guid}/sw`, sigs.join(';'), sets);
      return;
    }
    n.ports.forEach((p, pn) => {
      const path = d.portPaths[pn];
      if (!p?.peer || !path) return;
      const pi = d.portInfo[pn];
      const sl2vl = sl2vlForPort(qos, pi?.operationalVls ?? 1);
      const sets: Array<[readonly number[], number, number, Uint8Array]> = [[path, SmpAttr.SLtoVLMappingTable, sl2vlMod(0, 0), SLtoVLMappingTable.encode({ vls: sl2vl })]];
      arb(sets, path, 0, pi);
      push(`${n.guid}/${pn}`, sigOf(sl2vl), sets);
    });
  });
  return out;
}

/** SwitchInfo (LinearFDBTop, PortStateChange cleared, LifeTimeValue) where it differs, and every LFT
 * block whose contents differ from what is programmed, as two lists (what a local sweep logs
 * block by block). A full sweep takes the same writes from `lftPlan` one at a time instead. */
export function planLfts(disc: DiscoveryResult, routing: RoutingResult, maxLid: number, programmed: Programmed, lifeTime = SWITCH_LIFE_TIME): { switchInfo: SmpWrite[]; lft: SmpWrite[] } {
  const plan = lftPlan(disc, routing, maxLid, programmed, lifeTime);
  const lft: SmpWrite[] = [];
  plan.skipSwitchInfo();
  for (let w = plan.next(); w; w = plan.next()) lft.push(w);
  return { switchInfo: plan.switchInfo, lft };
}

/** The writes of `planLfts` (the SwitchInfo ones first), produced as the apply step asks for the
 * next one: each LFT block is compared with what is programmed and made a write only then, so the
 * writes of a sweep (336,960 LFT blocks at 11,664 hosts) are never all alive at once; at most the
 * apply window's are. A block's shadow changes only by the acknowledgement of that block's own
 * write, so asking later decides exactly as planning everything up front would.
 *
 * `interleave` switches are programmed at once, their blocks handed out in turn (each switch's in
 * ascending order): the per-destination window of the RPC (a few SMPs per switch) then lets that
 * many switches' blocks be on the wire together, so a small apply window keeps the RPC's window
 * full and no write waits long in a per-switch queue (a write that waits is kept alive across
 * collections: it is promoted, and the old generation grows). 1: one switch after the other. */
export function lftPlan(disc: DiscoveryResult, routing: RoutingResult, maxLid: number, programmed: Programmed, lifeTime = SWITCH_LIFE_TIME, interleave = 1): LftPlan {
  return new LftPlan(disc, routing, maxLid, programmed, lifeTime, interleave);
}

/** The LFT blocks of a switch's encoded LinearForwardingTable are its 64 port bytes, the whole of
 * it: a block is sent as a view of the routing table's bytes (no copy, nothing allocated but the view). */
const LFT_WHOLE = LFT_PORTS.offset === 0 && LFT_PORTS.count === LFT_BLOCK_SIZE && LinearForwardingTable.byteLength === LFT_BLOCK_SIZE;

/** One LFT switch being programmed: its table and shadow, and the next block to compare. */
interface LftCursor {
  readonly ni: number;
  readonly guid: bigint;
  readonly path: readonly number[];
  readonly table: Uint8Array;
  /** The table's ArrayBuffer and offset (read once: the views of its blocks are made over them). */
  readonly buf: ArrayBufferLike;
  readonly off: number;
  readonly shadow: LftShadow;
  block: number;
}

export class LftPlan {
  /** The SwitchInfo Sets (LinearFDBTop, PortStateChange, LifeTimeValue), planned up front (one a switch at most). */
  readonly switchInfo: SmpWrite[] = [];
  /** LFT/RFT block writes handed out so far. */
  planned = 0;
  private si = 0;
  private readonly switches: number[] = [];
  /** The next switch of `switches` to start on. */
  private sw = 0;
  private readonly nBlocks: number;
  /** The LFT switches being programmed (at most `interleave`), and whose turn it is. */
  private readonly cursors: LftCursor[] = [];
  private turn = 0;
  private readonly interleave: number;
  private rft: SmpWrite[] = [];
  private rftAt = 0;

  constructor(
    private readonly disc: DiscoveryResult,
    private readonly routing: RoutingResult,
    private readonly maxLid: number,
    private readonly programmed: Programmed,
    lifeTime: number,
    interleave = 1,
  ) {
    this.nBlocks = Math.floor(maxLid / LFT_BLOCK_SIZE) + 1;
    this.interleave = Math.max(1, Math.floor(interleave));
    const { fabric, nodes } = disc;
    fabric.nodes.forEach((n, ni) => {
      if (n.type !== NodeType.Switch || !routing.lfts.get(ni)) return;
      const d = nodes[ni]!;
      const si = d.switchInfo!;
      this.switches.push(ni);
      if ((!isRftSwitch(si) && si.linearFdbTop !== maxLid) || si.portStateChange || si.lifeTimeValue !== lifeTime) {
        const want: SwitchInfo = { ...si, linearFdbTop: maxLid, lifeTimeValue: lifeTime };
        this.switchInfo.push({ path: d.path, attr: SmpAttr.SwitchInfo, mod: 0, data: SwitchInfo.encode(want, allocBytes(SwitchInfo.byteLength)), effect: { kind: 'switchInfo', node: ni } });
      }
    });
  }

  /** Hand out block writes only (the caller took `switchInfo` itself). */
  skipSwitchInfo(): void {
    this.si = this.switchInfo.length;
  }

  /** The next write, or undefined when every one was handed out. */
  next(): SmpWrite | undefined {
    if (this.si < this.switchInfo.length) return this.switchInfo[this.si++];
    const cursors = this.cursors;
    for (;;) {
      if (this.rftAt < this.rft.length) {
        this.planned++;
        return this.rft[this.rftAt++];
      }
      if (cursors.length < this.interleave && this.sw < this.switches.length) {
        this.enter(this.switches[this.sw++]!);
        continue;
      }
      if (cursors.length === 0) return undefined;
      if (this.turn >= cursors.length) this.turn = 0;
      const c = cursors[this.turn]!;
      const w = this.nextBlock(c);
      if (w) {
        this.turn++;
        return w;
      }
      cursors.splice(this.turn, 1); // this switch is done; the next one's turn is at the same index
    }
  }

  /** Start on switch `ni`: an RFT switch's blocks are planned at once (a few), an LFT switch's one by one. */
  private enter(ni: number): void {
    const n = this.disc.fabric.nodes[ni]!;
    const d = this.disc.nodes[ni]!;
    const table = this.routing.lfts.get(ni)!;
    const si = d.switchInfo!;
    if (isRftSwitch(si)) {
      this.rft = planRft(n.guid, d.path, table, this.maxLid, si.randomFdbCap, this.programmed);
      this.rftAt = 0;
      return;
    }
    this.cursors.push({ ni, guid: n.guid, path: d.path, table, buf: table.buffer, off: table.byteOffset, shadow: this.programmed.lftShadowOver(n.guid, this.nBlocks, table), block: 0 });
  }

  /** The switch's next block that differs from its shadow. */
  private nextBlock(c: LftCursor): SmpWrite | undefined {
    const { table, shadow } = c;
    while (c.block < this.nBlocks) {
      const b = c.block++;
      // Straight from the routing table's bytes (entries past its end are 255, no route), compared
      // with the shadow in place; only a block to write becomes a write.
      const lo = b * LFT_BLOCK_SIZE;
      const hi = Math.min(table.length, lo + LFT_BLOCK_SIZE);
      // (the shadow is a view of this table, Programmed.lftShadowOver: a known block is this block)
      if (shadow.known[b] && sameLftBlock(table, shadow.table, b)) continue;
      let data: Uint8Array;
      if (LFT_WHOLE && hi - lo === LFT_BLOCK_SIZE) {
        // the routing table is not changed while its writes are out (a routing result is never
        // changed once made): its bytes are the attribute
        data = new Uint8Array(c.buf, c.off + lo, LFT_BLOCK_SIZE);
      } else {
        // Cut from the MAD slabs (short-lived: until the apply step recorded it), not a backing store each.
        data = allocBytes(LinearForwardingTable.byteLength);
        // the table's entries, then 255 (no route) past its end
        for (let i = 0, at = LFT_PORTS.offset; i < LFT_BLOCK_SIZE; i++) data[at + i] = lo + i < hi ? table[lo + i]! : 0xff;
      }
      this.planned++;
      return { path: c.path, attr: SmpAttr.LinearForwardingTable, mod: lftBlockMod(b), data, effect: { kind: 'lft', guid: c.guid, block: b } };
    }
    return undefined;
  }
}

/** The RFT blocks of a switch that forwards by its RandomForwardingTable: the routed LIDs as
 * entries, 16 a block; blocks whose contents differ from what is programmed, and blocks written
 * before that now hold nothing, as invalid entries. LIDs past RandomFDBCap are left unrouted. */
function planRft(guid: bigint, path: readonly number[], table: Uint8Array, maxLid: number, cap: number, programmed: Programmed): SmpWrite[] {
  const { blocks } = rftBlocksOf(table, maxLid, cap);
  const had = programmed.rfts.get(guid) ?? [];
  const out: SmpWrite[] = [];
  for (let b = 0; b < Math.max(blocks.length, had.length); b++) {
    const entries = blocks[b] ?? emptyRftBlock();
    const sig = entries.map((e) => (e.valid ? `${e.lid}:${e.lmc}:${e.port}` : '-')).join(',');
    if (had[b] === sig || (had[b] === undefined && b >= blocks.length)) continue;
    out.push({ path, attr: SmpAttr.RandomForwardingTable, mod: b, data: RandomForwardingTable.encode({ entries }), effect: { kind: 'rft', guid, block: b, sig } });
  }
  return out;
}

/** The MFT blocks that differ from what is programmed (emptied blocks are written as zeros), for
 * the groups' trees; MLIDs above a switch's MulticastFDBCap are left out for that switch. */
export function planMfts(disc: DiscoveryResult, plan: MftPlan, programmed: Programmed): SmpWrite[] {
  const out: SmpWrite[] = [];
  disc.fabric.nodes.forEach((n, ni) => {
    if (n.type !== NodeType.Switch) return;
    const d = disc.nodes[ni]!;
    const cap = d.switchInfo?.multicastFdbCap ?? 0;
    const masks = new Map([...(plan.bySwitch.get(ni) ?? new Map<number, bigint>())].filter(([mlid]) => mlid < MCAST_LID_BASE + cap));
    for (const w of programmed.mft.diff(n.guid, mftBlocks(masks))) {
      out.push({ path: d.path, attr: SmpAttr.MulticastForwardingTable, mod: w.attrMod, data: MulticastForwardingTable.encode({ portMasks: w.masks }, allocBytes(MulticastForwardingTable.byteLength)), effect: { kind: 'mft', write: w } });
    }
  });
  return out;
}

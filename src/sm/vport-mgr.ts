/**
 * SR-IOV virtual ports, the SM's side (docs/vports.md): what it knows of every
 * virtualization-capable CA port (PortInfo:CapabilityMask2.IsVirtualizationSupported) and its
 * vports, read over directed route; their LIDs (the rule of NVIDIA's `osm_vport_calc_lid`: its own
 * LID when LidRequired, else the LID of the vport at LidByVPortIndex, else the physical port's base
 * LID), LMC-aware, kept in the guid2lid map with the physical ports' and never given to another
 * port while the vport exists; and their routes (every switch forwards a vport LID as it forwards
 * the physical port's base LID). The writes (enable, VPortInfo, LFT entries) are planned in
 * sm/vport-phases.ts and go through the one apply step. No I/O but the SMP client's.
 */
import { NodeType, PortState } from '../wire/mad.js';
import { PortCap2 } from '../wire/sma.js';
import { VirtualizationInfo, VPORT_STATE_BLOCK_SIZE, VPortAttr, VPortInfo, VPortState, vportIndexMod, vportStateMod } from '../wire/vport.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import type { Fabric } from '../model/fabric.js';
import { NO_ROUTE, type RoutingResult } from '../model/routes.js';
import type { Logger } from '../util/log.js';
import { formatGuid } from '../util/guid.js';
import { LidSpaceExhausted, MAX_UNICAST_LID, type LidAssignment, type LidRange } from './lids.js';
import type { SmpClient } from './smp-client.js';

export interface VPortRec {
  index: number;
  guid: bigint;
  lidRequired: boolean;
  lidByVPortIndex: number;
  /** As last read or written. */
  state: number;
  wireLid: number;
  /** The LID the rule gives it (own range base for LidRequired vports). */
  lid: number;
  /** The P_Key table written and acknowledged (its keys joined), undefined: not known. */
  pkeySig?: string;
}

export interface VirtPortRec {
  node: number;
  port: number;
  portGuid: bigint;
  path: readonly number[];
  vportCap: number;
  enabled: boolean;
  stateChange: boolean;
  /** The vports changed after the pass read them (seen by `recheck`): the next pass reads them
   * as if VPortStateChange were set (its clearing erased the SMA's flag for that change). */
  recheck?: boolean;
  vports: Map<number, VPortRec>;
}

/** A vport as the SA sees it (sa/types.ts VPortEntry). */
export interface SaVPort {
  guid: bigint;
  physGuid: bigint;
  lid: number;
  lmc: number;
  lidRequired: boolean;
}

/** What a read of one port found changed (the light sweep's question). */
export interface VirtDelta {
  added: VPortRec[];
  removed: VPortRec[];
}

export class VPortManager {
  /** Capable ports by physical port GUID. */
  readonly ports = new Map<bigint, VirtPortRec>();
  /** The guid2lid map of the last LID assignment (physical and vport ranges): vport ranges are
   * added to it and removed from it as vports come and go. */
  lidMap: Map<bigint, LidRange> = new Map();
  /** SMPs this manager sent (reads). */
  reads = 0;
  /** Bumped whenever vports or their LIDs change (the SA's view rebuilds on it). */
  version = 0;

  constructor(
    private readonly smp: SmpClient,
    private readonly log: Logger,
  ) {}

  /** Every vport known, with its port. */
  *all(): IterableIterator<[VirtPortRec, VPortRec]> {
    for (const p of this.ports.values()) for (const v of p.vports.values()) yield [p, v];
  }

  /** The capable CA ports of a sweep's view. */
  static capable(disc: DiscoveryResult): Array<{ node: number; port: number; guid: bigint; path: number[] }> {
    const out: Array<{ node: number; port: number; guid: bigint; path: number[] }> = [];
    disc.fabric.nodes.forEach((n, ni) => {
      if (n.type === NodeType.Switch) return;
      const d = disc.nodes[ni]!;
      n.ports.forEach((p, pn) => {
        const pi = d.portInfo[pn];
        const path = d.portPaths[pn];
        if (p && p.peer && pi && path && (pi.capabilityMask2 & PortCap2.IsVirtualizationSupported) !== 0) out.push({ node: ni, port: pn, guid: p.guid, path });
      });
    });
    return out;
  }

  /** A heavy sweep's discover step: every capable port's VirtualizationInfo, VPortState and the
   * VPortInfo of each vport that exists. Ports gone from the view are forgotten. */
  async discover(disc: DiscoveryResult): Promise<void> {
    const seen = new Set<bigint>();
    await Promise.all(
      VPortManager.capable(disc).map(async (c) => {
        seen.add(c.guid);
        let rec = this.ports.get(c.guid);
        if (!rec) this.ports.set(c.guid, (rec = { node: c.node, port: c.port, portGuid: c.guid, path: c.path, vportCap: 0, enabled: false, stateChange: false, vports: new Map() }));
        rec.node = c.node;
        rec.port = c.port;
        rec.path = c.path;
        try {
          await this.readPort(rec, true);
        } catch (e) {
          this.log.warn('vports not read', { node: disc.fabric.nodes[c.node]!.desc, guid: formatGuid(c.guid), port: c.port, error: (e as Error).message });
        }
      }),
    );
    for (const g of [...this.ports.keys()]) if (!seen.has(g)) this.forgetPort(g);
  }

  private forgetPort(guid: bigint): void {
    const rec = this.ports.get(guid);
    if (!rec) return;
    for (const v of rec.vports.values()) this.lidMap.delete(v.guid);
    this.ports.delete(guid);
  }

  /** Read a port's VirtualizationInfo; with `full` or when it says VPortStateChange, its VPortState
   * blocks and the VPortInfo of every vport that is new or whose state moved. */
  async readPort(rec: VirtPortRec, full: boolean): Promise<VirtDelta> {
    const vi = VirtualizationInfo.decode(await this.get(rec.path, VPortAttr.VirtualizationInfo, 0));
    rec.vportCap = vi.vportCap;
    const reset = rec.enabled && vi.virtualizationEnable !== 1; // the HCA was reset: its vports' tables are gone
    rec.enabled = vi.virtualizationEnable === 1;
    if (reset) for (const v of rec.vports.values()) v.pkeySig = undefined;
    rec.stateChange = vi.vportStateChange === 1 || rec.recheck === true || reset;
    rec.recheck = false;
    const delta: VirtDelta = { added: [], removed: [] };
    if (!full && !rec.stateChange) return delta;
    const states = await this.readStates(rec, vi.vportIndexTop);
    for (const [i, v] of [...rec.vports]) {
      if (states.has(i)) continue;
      rec.vports.delete(i);
      this.lidMap.delete(v.guid);
      delta.removed.push(v);
    }
    await Promise.all(
      [...states].map(async ([i, s]) => {
        const known = rec.vports.get(i);
        if (known && !full && known.state === s) return;
        const vp = VPortInfo.decode(await this.get(rec.path, VPortAttr.VPortInfo, vportIndexMod(i)));
        if (known && known.guid !== vp.portGuid) this.lidMap.delete(known.guid); // another VF in the slot
        const v: VPortRec = { index: i, guid: vp.portGuid, lidRequired: vp.lidRequired === 1, lidByVPortIndex: vp.lidByVPortIndex, state: vp.vportState, wireLid: vp.vportLid, lid: known?.guid === vp.portGuid ? known.lid : 0, pkeySig: known?.guid === vp.portGuid ? known.pkeySig : undefined };
        rec.vports.set(i, v);
        if (!known || known.guid !== vp.portGuid) delta.added.push(v);
      }),
    );
    if (delta.added.length || delta.removed.length) this.version++;
    return delta;
  }

  /** The states of the vports that exist (index → state), from the VPortState blocks up to `top`. */
  private async readStates(rec: VirtPortRec, top: number): Promise<Map<number, number>> {
    const states = new Map<number, number>();
    const blocks = Math.floor(top / VPORT_STATE_BLOCK_SIZE) + 1;
    for (let b = 0; b < blocks; b++) {
      const st = VPortState.decode(await this.get(rec.path, VPortAttr.VPortState, vportStateMod(b))).states;
      st.forEach((s, i) => {
        if (s !== 0 && b * VPORT_STATE_BLOCK_SIZE + i <= top) states.set(b * VPORT_STATE_BLOCK_SIZE + i, s);
      });
    }
    return states;
  }

  /** A local sweep read these ports again (`<node guid>/<port>` of `fabric`: links that came up, a
   * host re-cabled or reset): their vports are read in full at the next light sweep's vport pass
   * (an HCA that was reset lost its vports' state, its P_Key tables and VirtualizationEnable).
   * Returns the ports marked. */
  recheckPorts(fabric: Fabric, fresh: ReadonlySet<string>): number {
    const read = new Set<bigint>();
    for (const n of fabric.nodes) n.ports.forEach((p, i) => p && fresh.has(`${n.guid}/${i}`) && read.add(p.guid));
    let marked = 0;
    for (const rec of this.ports.values()) {
      if (!read.has(rec.portGuid)) continue;
      rec.recheck = true;
      marked++;
    }
    return marked;
  }

  /** After the SM cleared VPortStateChange on these ports: read their vport states again. A
   * vport created, destroyed or moved between the pass's read and the clearing (whose flag the
   * clearing erased) differs from what the manager holds: the port is marked for the next pass.
   * Returns the ports marked. */
  async recheck(ports: Iterable<VirtPortRec>): Promise<number> {
    let marked = 0;
    await Promise.all(
      [...ports].map(async (rec) => {
        try {
          const vi = VirtualizationInfo.decode(await this.get(rec.path, VPortAttr.VirtualizationInfo, 0));
          const states = await this.readStates(rec, vi.vportIndexTop);
          const same = states.size === rec.vports.size && [...states].every(([i, st]) => rec.vports.get(i)?.state === st);
          if (!same || vi.vportStateChange === 1) {
            rec.recheck = true;
            marked++;
          }
        } catch (e) {
          rec.recheck = true; // not known: read again next time
          marked++;
          this.log.warn('vports not re-read after VPortStateChange was cleared', { guid: formatGuid(rec.portGuid), port: rec.port, error: (e as Error).message });
        }
      }),
    );
    return marked;
  }

  private async get(path: readonly number[], attr: number, mod: number): Promise<Uint8Array> {
    this.reads++;
    return this.smp.getDr(path, attr, mod);
  }

  /** LIDs fresh physical ranges should avoid: what the vports hold (kept while they exist). */
  reserved(existing?: ReadonlyMap<bigint, LidRange>): Set<number> {
    const out = new Set<number>();
    for (const [, v] of this.all()) {
      if (!v.lidRequired) continue;
      for (const r of [this.lidMap.get(v.guid), existing?.get(v.guid)]) if (r) for (let l = r.base; l < r.base + (1 << r.lmc); l++) out.add(l);
      if (v.wireLid) out.add(v.wireLid);
    }
    return out;
  }

  /** Give every LidRequired vport its range (its own from before, the guid2lid one, the one on
   * the wire, else the lowest free aligned one), into `lids` (byGuid, maxLid); then every vport's
   * LID by the rule. `fabric`: the physical ports' LIDs as just assigned. */
  assign(lids: LidAssignment, fabric: Fabric, lmc: number, existing?: ReadonlyMap<bigint, LidRange>, subset?: ReadonlySet<VPortRec>): number {
    const used = new Uint8Array(MAX_UNICAST_LID + 1);
    used[0] = 1;
    const mark = (r: LidRange): void => {
      for (let l = r.base; l < r.base + (1 << r.lmc) && l <= MAX_UNICAST_LID; l++) used[l] = 1;
    };
    for (const r of lids.byGuid.values()) mark(r);
    const n = 1 << lmc;
    const free = (base: number | undefined): boolean => {
      if (!base || base % n !== 0 || base + n - 1 > MAX_UNICAST_LID) return false;
      for (let l = base; l < base + n; l++) if (used[l]) return false;
      return true;
    };
    const before = this.lidMap;
    let assigned = 0;
    const give = (v: VPortRec, base: number): void => {
      const r = { base, lmc };
      mark(r);
      lids.byGuid.set(v.guid, r);
      v.lid = base;
      lids.maxLid = Math.max(lids.maxLid, base + n - 1);
      assigned++;
    };
    const todo = [...this.all()].map(([, v]) => v).filter((v) => v.lidRequired && (!subset || subset.has(v)));
    // 1. its own range from before, the guid2lid one, the one on the wire; 2. the lowest free
    const later: VPortRec[] = [];
    for (const v of todo) {
      const want = [before.get(v.guid)?.base, existing?.get(v.guid)?.base, v.wireLid].find(free);
      if (want !== undefined) give(v, want);
      else later.push(v);
    }
    let cursor = 1;
    for (const v of later) {
      let base = Math.ceil(cursor / n) * n;
      while (base + n - 1 <= MAX_UNICAST_LID && !free(base)) base += n;
      if (base + n - 1 > MAX_UNICAST_LID) throw new LidSpaceExhausted(`no free unicast LID range of ${n} left for vport GUID ${formatGuid(v.guid)}`);
      cursor = base + n;
      give(v, base);
    }
    this.lidMap = lids.byGuid;
    this.resolveLids(fabric);
    this.version++;
    return assigned;
  }

  /** New LidRequired vports of a light sweep: ranges that no port and no vport holds (the others
   * keep theirs). Returns the highest LID given. */
  assignNew(added: readonly VPortRec[], fabric: Fabric, lmc: number): number {
    const fresh = added.filter((v) => v.lidRequired);
    if (!fresh.length) return 0;
    const taken = new Map(this.lidMap);
    for (const v of fresh) taken.delete(v.guid);
    const tmp: LidAssignment = { maxLid: 0, byGuid: taken, changed: 0 };
    this.assign(tmp, fabric, lmc, undefined, new Set(fresh));
    return tmp.maxLid;
  }

  /** Every vport's LID by the rule (LidRequired: its own; else LidByVPortIndex's; else the base LID). */
  resolveLids(fabric: Fabric): void {
    for (const p of this.ports.values()) {
      const base = fabric.nodes[p.node]?.ports[p.port]?.lid ?? 0;
      for (const v of p.vports.values()) {
        if (v.lidRequired) continue;
        const by = p.vports.get(v.lidByVPortIndex);
        v.lid = by && by !== v && by.lidRequired && by.lid ? by.lid : base;
      }
    }
  }

  /** Route every LidRequired vport's LIDs as its physical port's: each switch's LFT entry for
   * vport LID base+i is the one for the port's base LID+i. `only`: just these vports. Returns the
   * highest LID routed. */
  extendRoutes(routing: RoutingResult, fabric: Fabric, maxLid: number, only?: ReadonlySet<VPortRec>): number {
    let top = Math.max(routing.maxLid, maxLid);
    const jobs: Array<[number, number, number]> = [];
    for (const [p, v] of this.all()) {
      if (!v.lidRequired || !v.lid || (only && !only.has(v))) continue;
      const fp = fabric.nodes[p.node]?.ports[p.port];
      if (!fp?.lid) continue;
      const n = 1 << (fp.lmc ?? 0);
      jobs.push([v.lid, fp.lid, n]);
      top = Math.max(top, v.lid + n - 1);
    }
    // A new array for every table it changes, never one written in place: a routing result's
    // arrays are not changed once made (the LFT shadows borrow them, sm/programmed.ts).
    if (jobs.length) {
      for (const [sw, lft] of routing.lfts) {
        const t = new Uint8Array(Math.max(lft.length, top + 1)).fill(NO_ROUTE);
        t.set(lft);
        for (const [vl, base, n] of jobs) for (let i = 0; i < n; i++) t[vl + i] = t[base + i] ?? NO_ROUTE;
        routing.lfts.set(sw, t);
      }
    }
    routing.maxLid = top;
    return top;
  }

  /** Vports not ACTIVE with their LID: what the activation step writes. */
  pending(): Array<[VirtPortRec, VPortRec]> {
    const out: Array<[VirtPortRec, VPortRec]> = [];
    for (const [p, v] of this.all()) if (v.state !== PortState.Active || (v.lidRequired && v.wireLid !== v.lid)) out.push([p, v]);
    return out;
  }

  /** What the SA sees of the vports (sa/types.ts VPortView, matched structurally: the SA does
   * not import the SM): by GUID, the physical port and the LID range; the P_Keys of its partitions. */
  saView(fabric: Fabric, pkeysOf: (guid: bigint) => number[]): { of(guid: bigint): SaVPort | undefined; list(): Iterable<SaVPort>; pkeys(guid: bigint): readonly number[] | undefined } {
    let by = new Map<bigint, SaVPort>();
    let keys = new Map<bigint, readonly number[]>();
    let at = -1;
    // rebuilt when the vports changed since (a light sweep's vport pass makes no new snapshot)
    const fresh = (): void => {
      if (at === this.version) return;
      at = this.version;
      by = new Map();
      keys = new Map();
      for (const [p, v] of this.all()) {
        if (v.guid === p.portGuid) continue; // vport 0: the physical port itself
        const fp = fabric.nodes[p.node]?.ports[p.port];
        by.set(v.guid, { guid: v.guid, physGuid: p.portGuid, lid: v.lid, lmc: v.lidRequired ? (this.lidMap.get(v.guid)?.lmc ?? 0) : (fp?.lmc ?? 0), lidRequired: v.lidRequired });
      }
    };
    return {
      of: (g) => {
        fresh();
        return by.get(g);
      },
      list: () => {
        fresh();
        return by.values();
      },
      pkeys: (g) => {
        fresh();
        if (!by.has(g)) return undefined;
        let k = keys.get(g);
        if (!k) keys.set(g, (k = pkeysOf(g)));
        return k;
      },
    };
  }

  /** Counts for stats and logs. */
  counts(): { ports: number; vports: number; active: number; withLid: number } {
    let vports = 0;
    let active = 0;
    let withLid = 0;
    for (const [, v] of this.all()) {
      vports++;
      if (v.state === PortState.Active) active++;
      if (v.lidRequired && v.lid) withLid++;
    }
    return { ports: this.ports.size, vports, active, withLid };
  }
}

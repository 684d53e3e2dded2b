/**
 * The performance manager: a sweep reads PortCounters (and PortCountersExtended where the PMA's
 * ClassPortInfo offers it) of every linked port of a snapshot through the PMAs (class 0x04,
 * LID-routed GMPs on QP1), keeps 64-bit totals (perf-counters.ts), clears hardware counters
 * before they saturate, notices clears by others, and logs error counters that rise, naming the
 * port. A PMA that does not answer is counted and tried again at the next sweep; nothing it does
 * stops the sweep.
 */
import type { MadRpc } from '../rpc/madrpc.js';
import { GSI_QKEY } from '../wire/mad.js';
import type { Fabric, FabricNode } from '../model/fabric.js';
import { isSwitch } from '../model/fabric.js';
import { formatHex } from '../wire/layout.js';
import { Method, MgmtClass } from '../wire/mad.js';
import { madStatus } from '../wire/builders.js';
import { ClassPortInfo } from '../wire/classportinfo.js';
import { PMA_CLASS_VERSION, PmaAttr, PmaCap, PORT_COUNTER_NAMES, PortCounters, PortCountersExtended, pmaData, pmaRequest } from '../wire/pma.js';
import type { Logger } from '../util/log.js';
import { accumulate, cleared, ERROR_COUNTERS, type PortCounterState } from './perf-counters.js';
import { MadStatusError } from '../rpc/errors.js';

/** The indexes (in PORT_COUNTER_NAMES) of the error counters. */
const ERROR_INDEXES: readonly number[] = PORT_COUNTER_NAMES.flatMap((n, i) => (ERROR_COUNTERS.has(n) ? [i] : []));

/** One monitored port. */
export interface MonitoredPort {
  readonly nodeGuid: bigint;
  readonly nodeDesc: string;
  readonly portNum: number;
  /** The LID its PMA answers at (a switch's port 0 LID for every switch port). */
  readonly lid: number;
  readonly counters: PortCounterState;
}

export interface PerfSweepStats {
  /** Ports read this sweep. */
  ports: number;
  /** Ports whose PMA did not answer or answered with an error. */
  failed: number;
  /** Counter clears sent (before saturation). */
  clears: number;
  /** Ports on which an error counter rose. */
  errorPorts: number;
  /** Counters found cleared by someone else. */
  clearedByOthers: number;
}

export interface PerfMgrOptions {
  rpc: MadRpc;
  log: Logger;
  /** Timeout per PMA query (ms; default the MadRpc's). */
  timeoutMs?: number;
}

interface Target {
  node: FabricNode;
  portNum: number;
  lid: number;
  /** The port's key in PerfMgr.ports. */
  key: string;
}

/** The linked ports of a fabric (and the switch ports of `also`) and the LID each one's PMA
 * answers at. */
function targets(f: Fabric, also: ReadonlySet<string>): Target[] {
  const out: Target[] = [];
  for (const node of f.nodes) {
    const sw = isSwitch(node);
    const mgmtLid = sw ? (node.ports[0]?.lid ?? 0) : 0;
    for (const p of node.ports) {
      if (!p || p.num === 0 || (!p.peer && !(sw && also.has(key(node.guid, p.num))))) continue;
      const lid = sw ? mgmtLid : (p.lid ?? 0);
      if (lid > 0) out.push({ node, portNum: p.num, lid, key: key(node.guid, p.num) });
    }
  }
  return out;
}

const key = (guid: bigint, port: number): string => `${guid}:${port}`;

export class PerfMgr {
  private readonly ports = new Map<string, MonitoredPort>();
  /** PMA CapabilityMask per node GUID (learnt once per node). */
  private readonly caps = new Map<bigint, number>();
  private registered = false;
  readonly totals = { sweeps: 0, mads: 0, failures: 0 };

  constructor(private readonly o: PerfMgrOptions) {}

  /** Every monitored port, in the order they were first seen. */
  monitored(): IterableIterator<MonitoredPort> {
    return this.ports.values();
  }

  port(nodeGuid: bigint, portNum: number): MonitoredPort | undefined {
    return this.ports.get(key(nodeGuid, portNum));
  }

  /** Read every linked port of a fabric (a snapshot's, with its LIDs) once. Ports gone from the
   * fabric are forgotten. `also`: switch ports read though unlinked in `fabric` (health hook:
   * errors; the links the error-rate policy isolated, sm/health-errors.ts). */
  async sweep(fabric: Fabric, also: ReadonlyArray<{ guid: bigint; port: number }> = []): Promise<PerfSweepStats> {
    if (!this.registered) {
      this.o.rpc.register(MgmtClass.Perf, PMA_CLASS_VERSION);
      this.registered = true;
    }
    const list = targets(fabric, new Set(also.map((p) => key(p.guid, p.port))));
    const present = new Set(list.map((t) => t.key));
    for (const k of this.ports.keys()) if (!present.has(k)) this.ports.delete(k);
    const live = new Set(fabric.nodes.map((n) => n.guid));
    for (const g of this.caps.keys()) if (!live.has(g)) this.caps.delete(g);

    const stats: PerfSweepStats = { ports: 0, failed: 0, clears: 0, errorPorts: 0, clearedByOthers: 0 };
    const capsOf = new Map<bigint, Promise<number>>();
    await Promise.all(
      list.map(async (t) => {
        try {
          let cap = capsOf.get(t.node.guid);
          if (!cap) capsOf.set(t.node.guid, (cap = this.capability(t)));
          await this.read(t, await cap, stats);
          stats.ports++;
        } catch (e) {
          stats.failed++;
          this.totals.failures++;
          this.o.log.debug('PMA query failed', this.describe(t, { error: (e as Error).message }));
        }
      }),
    );
    this.totals.sweeps++;
    if (stats.failed > 0) this.o.log.warn('PerfMgr sweep: ports not read', { failed: stats.failed, read: stats.ports });
    return stats;
  }

  private async capability(t: Target): Promise<number> {
    const known = this.caps.get(t.node.guid);
    if (known !== undefined) return known;
    let cap = 0;
    try {
      const r = await this.query(t.lid, Method.Get, PmaAttr.ClassPortInfo);
      cap = ClassPortInfo.decode(pmaData(r), 0).capabilityMask;
    } catch {
      /* no ClassPortInfo: PortCounters only */
    }
    this.caps.set(t.node.guid, cap);
    return cap;
  }

  private async read(t: Target, cap: number, stats: PerfSweepStats): Promise<void> {
    const sel = PortCounters.encode({ portSelect: t.portNum });
    const counters = PortCounters.decode(pmaData(await this.query(t.lid, Method.Get, PmaAttr.PortCounters, sel)), 0);
    const extended = cap & (PmaCap.ExtendedWidth | PmaCap.ExtendedWidthNoIetf) ? PortCountersExtended.decode(pmaData(await this.query(t.lid, Method.Get, PmaAttr.PortCountersExtended, sel)), 0) : undefined;
    const prev = this.ports.get(t.key);
    const r = accumulate(prev?.counters, extended ? { counters, extended } : { counters });
    stats.clearedByOthers += r.clearedByOther.length;
    if (prev) {
      let rose: string[] | undefined;
      for (const i of ERROR_INDEXES) {
        const d = r.deltaWords[i]!;
        if (d > 0n) (rose ??= []).push(`${PORT_COUNTER_NAMES[i]}+${d}`);
      }
      if (rose) {
        stats.errorPorts++;
        this.o.log.warn('port error counters rose', this.describe(t, { counters: rose.join(',') }));
      }
    }
    if (r.clear.counterSelect || r.clear.counterSelect2) {
      const data = PortCounters.encode({ portSelect: t.portNum, counterSelect: r.clear.counterSelect, counterSelect2: r.clear.counterSelect2 });
      await this.query(t.lid, Method.Set, PmaAttr.PortCounters, data);
      cleared(r.state, r.clear);
      stats.clears++;
    }
    if (prev && prev.lid === t.lid && prev.nodeDesc === t.node.desc) return; // its state was updated in place
    this.ports.set(t.key, { nodeGuid: t.node.guid, nodeDesc: t.node.desc, portNum: t.portNum, lid: t.lid, counters: r.state });
  }

  private async query(lid: number, method: number, attrId: number, data?: Uint8Array): Promise<Uint8Array> {
    this.totals.mads++;
    const r = await this.o.rpc.request(pmaRequest(method, attrId, data), { lid, qpn: 1, qkey: GSI_QKEY }, this.o.timeoutMs !== undefined ? { timeoutMs: this.o.timeoutMs } : undefined);
    const status = madStatus(r.data);
    if (status !== 0) throw new MadStatusError({ mgmtClass: MgmtClass.Perf, method, attrId, attrMod: 0, destination: `LID ${lid}` }, status, r.data, `PMA at LID ${lid} answered attribute ${formatHex(attrId, 16)} with MAD status ${formatHex(status, 16)}`);
    return r.data;
  }

  private describe(t: Target, extra: Record<string, unknown>): Record<string, unknown> {
    return { node: t.node.desc, guid: t.node.guid, port: t.portNum, lid: t.lid, ...extra };
  }
}

/** The light sweep: has anything changed since the last heavy sweep? At the cost of OpenSM's.
 *
 * - Every switch's SwitchInfo, one SMP each: PortStateChange set says a port of that switch changed
 *   state (a link went, came up or retrained). The heavy sweep that follows (sm/local-sweep.ts) reads
 *   the ports of the flagged switches only, and clears the bit by writing SwitchInfo back, as
 *   OpenSM's light sweep does (osm_state_mgr.c: SwitchInfo of every switch, PortInfo only behind a
 *   PortStateChange).
 * - CA ports (and routers'): traps say first what changes there (trap 144 for a new SM port, the
 *   switch's trap 128 and PortStateChange for a link). What a lost trap would have said is caught by
 *   a rotating check: each periodic light sweep reads the next ceil(C / K) of the C linked CA ports,
 *   so every one is read at least once every K light sweeps, K = `caRounds(interval)` (at most
 *   LIGHT_CA_BOUND_MS of sweep intervals). A read finds a port not ACTIVE, a new SM (IsSM), and
 *   another SM's writes (MasterSMLID, LID). A full light sweep (an operator's; a local sweep that
 *   must decide) reads every CA port.
 * At most APPLY_WINDOW SMPs in flight (the SM's window for one-SMP jobs). Pure of I/O but the SMPs. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { PortCap, PortInfo, SwitchInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import type { Snapshot } from '../model/snapshot.js';
import { pump } from '../util/pump.js';
import { APPLY_WINDOW } from './apply.js';
import { hasExtendedSpeeds } from './port-info-get.js';
import type { SmpClient } from './smp-client.js';
import type { SmPort } from './sminfo.js';

/** Every linked CA port is read by the periodic light sweeps at least once per this many ms of
 * sweep intervals (K = floor(bound / interval) sweeps, at least 1). */
export const LIGHT_CA_BOUND_MS = 60_000;

/** K: the periodic light sweeps over which every linked CA port is read once. Without periodic
 * light sweeps (interval 0) every light sweep reads them all. */
export function caRounds(sweepIntervalMs: number | undefined): number {
  return sweepIntervalMs && sweepIntervalMs > 0 ? Math.max(1, Math.floor(LIGHT_CA_BOUND_MS / sweepIntervalMs)) : 1;
}

/** A linked CA port of a snapshot: node index, port number, its DR path. */
export interface CaPort {
  node: number;
  port: number;
  path: readonly number[];
}

/** What a light sweep saw of another SM writing the fabric: CA ports naming another master or
 * holding another LID than this SM gave them. */
export interface ForeignWrites {
  ports: number;
  masterSmLids: Set<number>;
  /** The first such port, for the log line. */
  first?: { node: string; guid: bigint; port: number; lid: number; was: number; masterSmLid: number };
}

/** The CA ports the periodic light sweeps read in turn. */
export class CaRotation {
  private cursor = 0;
  private of?: { snap: Snapshot; ports: CaPort[] };

  constructor(readonly rounds: number) {}

  /** The CA ports the next light sweep reads: all of them when `full`, else the next
   * ceil(C / rounds) after those read last (wrapping round). */
  next(snap: Snapshot, full: boolean): readonly CaPort[] {
    if (this.of?.snap !== snap) this.of = { snap, ports: caPorts(snap) };
    const all = this.of.ports;
    if (full || this.rounds <= 1 || all.length === 0) return all;
    const n = Math.ceil(all.length / this.rounds);
    const start = this.cursor % all.length;
    this.cursor = (start + n) % all.length;
    return start + n <= all.length ? all.slice(start, start + n) : [...all.slice(start), ...all.slice(0, start + n - all.length)];
  }
}

/** The linked CA (and router) ports of a snapshot, in node order. */
export function caPorts(snap: Snapshot): CaPort[] {
  const out: CaPort[] = [];
  const { fabric, discovery } = snap;
  fabric.nodes.forEach((n, i) => {
    if (n.type === NodeType.Switch) return;
    const d = discovery.nodes[i]!;
    for (let p = 1; p < n.ports.length; p++) {
      const path = d.portPaths[p];
      if (path && n.ports[p]?.peer) out.push({ node: i, port: p, path });
    }
  });
  return out;
}

export interface LightResult {
  changed: boolean;
  smPorts: SmPort[];
  foreign: ForeignWrites;
  switches: number;
  caPorts: number;
}

/** Read every switch's SwitchInfo and the PortInfo of `cas`: "changed" when a switch flags a port
 * change or does not answer, or a CA port is not ACTIVE, unreadable or written by another SM; the
 * CA ports that advertise an SM (a new IsSM bit is a new SM to query). */
export async function lightSweep(smp: SmpClient, snap: Snapshot, cas: readonly CaPort[]): Promise<LightResult> {
  const { fabric, discovery } = snap;
  let changed = false;
  const sms: SmPort[] = [];
  const smLid = fabric.nodes[discovery.smNode]?.ports[discovery.smPort]?.lid ?? 0;
  const foreign: ForeignWrites = { ports: 0, masterSmLids: new Set(), first: undefined };
  const unreachable = (): void => void (changed = true); // the fabric changed
  const readSwitch = (i: number) => (): Promise<void> =>
    smp.getDr(discovery.nodes[i]!.path, SmpAttr.SwitchInfo, 0).then((b) => {
      if (SwitchInfo.decode(b).portStateChange) changed = true;
    }, unreachable);
  const readCa = (c: CaPort) => (): Promise<void> => {
    const d = discovery.nodes[c.node]!;
    // with bit 31 where the snapshot says the port has extended speeds (its answer complete)
    return smp.getDr(c.path, SmpAttr.PortInfo, portInfoMod(c.port, hasExtendedSpeeds(d.portInfo[c.port]))).then((b) => {
      const pi = PortInfo.decode(b);
      const n = fabric.nodes[c.node]!;
      const port = n.ports[c.port]!;
      if (pi.portState !== PortState.Active) changed = true;
      // Another SM writes here: the port names another master, or holds another LID.
      if (pi.portState >= PortState.Armed && smLid && ((pi.masterSmLid !== smLid && pi.masterSmLid !== 0) || (port.lid !== undefined && pi.lid !== port.lid))) {
        changed = true;
        foreign.ports++;
        if (pi.masterSmLid !== smLid) foreign.masterSmLids.add(pi.masterSmLid);
        foreign.first ??= { node: n.desc, guid: port.guid, port: c.port, lid: pi.lid, was: port.lid ?? 0, masterSmLid: pi.masterSmLid };
      }
      const own = c.node === discovery.smNode && c.port === discovery.smPort;
      if (!own && pi.capabilityMask & PortCap.IsSM) sms.push({ guid: port.guid, lid: pi.lid, path: c.path });
    }, unreachable);
  };
  let switches = 0;
  await pump(
    (function* () {
      for (let i = 0; i < fabric.nodes.length; i++) {
        if (fabric.nodes[i]!.type !== NodeType.Switch) continue;
        switches++;
        yield readSwitch(i);
      }
      for (const c of cas) yield readCa(c);
    })(),
    APPLY_WINDOW,
  );
  return { changed, smPorts: sms, foreign, switches, caPorts: cas.length };
}

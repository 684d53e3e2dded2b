/** Discovery's reads through the SmpClient's callback slot (getDrTo: no promise, async frame or
 * closure per SMP, issue #32): a BFS level's CAs and its probes, a bounded number at a time, over
 * the sweep's own steps (sm/discovery.ts DiscoverySweep, through SlotSweep). The sweep reads the
 * same through promises where the client has no slot. */
import { NodeType, SmpAttr } from '../wire/mad.js';
import { NodeDescription, NodeInfo, type PortInfo } from '../wire/sma.js';
import { portInfoMod } from '../wire/modifiers.js';
import { keepPortInfo } from '../model/port-info.js';
import type { Fabric } from '../model/fabric.js';
import type { DiscoveredNode } from '../model/snapshot.js';
import { MadStatusError } from '../rpc/errors.js';
import { hasExtendedSpeeds } from './port-info-get.js';
import type { SmpClient, SmpGetReq, SmpSink } from './smp-client.js';
import { pumpSlots } from '../util/pump.js';

/** What the slot readers need of the sweep. */
export interface SlotSweep {
  readonly smp: SmpClient;
  readonly fabric: Fabric;
  readonly nodes: DiscoveredNode[];
  /** What the port said of IsExtendedSpeedsSupported at the last sweep. */
  knownExt(portGuid: bigint): boolean | undefined;
  applyPortInfo(idx: number, port: number, pi: PortInfo): void;
  /** A node that could not be read: left out of this sweep, named. */
  skipNode(idx: number, path: readonly number[], error: unknown): void;
  /** The path to probe through node `idx` port `p`, undefined when not to probe; throws past the hop limit. */
  probePath(idx: number, p: number): number[] | undefined;
  /** A probe's NodeInfo taken in: a new node's index, undefined, or a CA port's read under way. */
  probed(idx: number, p: number, path: number[], depth: number, ni: NodeInfo): number | undefined | Promise<void>;
  probeFailed(idx: number, p: number, path: readonly number[], error: unknown): void;
}

/** A switch's external ports read together (readPortsOnSlot): how many answers are still to come,
 * the first failure, and the one promise the node's read waits on. */
interface PortsRead {
  readonly sw: SlotSweep;
  left: number;
  error: unknown;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** One PortInfo Get of a switch's external port, settled through the sweep's callback slot. */
interface PortRead extends SmpGetReq {
  readonly idx: number;
  readonly port: number;
  readonly of: PortsRead;
}

/** The PortInfo of a switch's external ports 1..`numPorts` (node `idx`, at `path`), bit 31 as port
 * 0's mask says; rejects with the first failure once every answer is in. */
export function readPortsOnSlot(sw: SlotSweep, idx: number, path: readonly number[], numPorts: number, pi0: PortInfo): Promise<void> {
  if (numPorts < 1) return Promise.resolve();
  const ext = hasExtendedSpeeds(pi0);
  return new Promise<void>((resolve, reject) => {
    const of: PortsRead = { sw, left: numPorts, error: undefined, resolve, reject };
    for (let p = 1; p <= numPorts; p++) sw.smp.getDrTo!<PortRead>({ path, attr: SmpAttr.PortInfo, mod: portInfoMod(p, ext), idx, port: p, of }, portSink);
  });
}

/** The one sink of every switch-port read. */
const portSink: SmpSink<PortRead> = {
  smpOk(r, data) {
    try {
      r.of.sw.applyPortInfo(r.idx, r.port, keepPortInfo(data));
    } catch (e) {
      r.of.error ??= e;
    }
    portDone(r.of);
  },
  smpFailed(r, e) {
    r.of.error ??= e;
    portDone(r.of);
  },
};

function portDone(of: PortsRead): void {
  if (--of.left) return;
  if (of.error === undefined) of.resolve();
  else of.reject(of.error);
}

/** One CA or router read through the callback slot: its NodeDescription and its port's PortInfo
 * (readCasOnSlot), how many of the two are still to come, the first failure, and its pump slot's
 * `done`. */
interface CaRead {
  readonly idx: number;
  readonly path: readonly number[];
  readonly entry: number;
  /** What the port said of IsExtendedSpeedsSupported at the last sweep (port-info-get.ts). */
  readonly known: boolean | undefined;
  left: number;
  error: unknown;
  readonly done: () => void;
}

/** A Get of a CaRead: its NodeDescription or its PortInfo (`mod` with or without bit 31). */
interface CaReq extends SmpGetReq {
  readonly ca: CaRead;
}

/** One probe (a NodeInfo Get of the far side of node `idx` port `port`), through the callback
 * slot, with its pump slot's `done`. */
interface ProbeReq extends SmpGetReq {
  readonly path: number[];
  readonly idx: number;
  readonly port: number;
  readonly done: (error?: unknown) => void;
}

/** The CAs and routers of a BFS level below the SM's own node (so none is left through: their
 * toProbe entries stay empty), `limit` at a time (util/pump pumpSlots), through the client's
 * callback slot: their NodeDescription and PortInfo read as readNode would, bit 31 as
 * getPortInfo sets it, with no promise or async frame per SMP. One that cannot be read is left
 * out. */
export function readCasOnSlot(sw: SlotSweep, level: readonly number[], limit: number): Promise<void> {
  const smp = sw.smp;
  const nodes = sw.fabric.nodes;
  const settled = (ca: CaRead): void => {
    if (--ca.left) return;
    if (ca.error !== undefined) sw.skipNode(ca.idx, ca.path, ca.error);
    ca.done();
  };
  const sink: SmpSink<CaReq> = {
    smpOk: (r, data) => {
      const ca = r.ca;
      try {
        if (r.attr === SmpAttr.NodeDescription) nodes[ca.idx]!.desc = NodeDescription.decode(data).description;
        else {
          const pi = keepPortInfo(data);
          // read without the bit (it had no extended speeds last time) and now it has them: again with it
          if (ca.known === false && r.mod === portInfoMod(ca.entry, false) && hasExtendedSpeeds(pi)) {
            smp.getDrTo!<CaReq>({ path: ca.path, attr: SmpAttr.PortInfo, mod: portInfoMod(ca.entry, true), ca }, sink);
            return;
          }
          sw.applyPortInfo(ca.idx, ca.entry, pi);
        }
      } catch (e) {
        ca.error ??= e;
      }
      settled(ca);
    },
    smpFailed: (r, e) => {
      const ca = r.ca;
      // never seen and the bit refused (an old SMA): read again without it
      if (r.attr === SmpAttr.PortInfo && ca.known === undefined && r.mod === portInfoMod(ca.entry, true) && e instanceof MadStatusError) {
        smp.getDrTo!<CaReq>({ path: ca.path, attr: SmpAttr.PortInfo, mod: portInfoMod(ca.entry, false), ca }, sink);
        return;
      }
      ca.error ??= e;
      settled(ca);
    },
  };
  let k = 0;
  return pumpSlots((done) => {
    while (k < level.length) {
      const idx = level[k++]!;
      const n = nodes[idx]!;
      if (n.type === NodeType.Switch) continue;
      const d = sw.nodes[idx]!;
      const entry = d.nodeInfo.localPortNum;
      const known = sw.knownExt(n.ports[entry]!.guid);
      const ca: CaRead = { idx, path: d.path, entry, known, left: 2, error: undefined, done };
      smp.getDrTo!<CaReq>({ path: d.path, attr: SmpAttr.NodeDescription, mod: 0, ca }, sink);
      smp.getDrTo!<CaReq>({ path: d.path, attr: SmpAttr.PortInfo, mod: portInfoMod(entry, known !== false), ca }, sink);
      return true;
    }
    return false;
  }, limit);
}

/** Probe every port of `toProbe[k]` of `level[k]`, `limit` at a time (util/pump pumpSlots);
 * resolves with the nodes found (in the order their answers came). Rejects with the first error
 * (a fabric too deep) once the probes in flight are in. */
export function probeOnSlot(sw: SlotSweep, level: readonly number[], toProbe: readonly (readonly number[])[], depth: number, limit: number): Promise<number[]> {
  const next: number[] = [];
  const sink: SmpSink<ProbeReq> = {
    smpOk: (r, data) => {
      let ni: NodeInfo;
      try {
        ni = NodeInfo.decode(data);
      } catch (e) {
        sw.probeFailed(r.idx, r.port, r.path, e); // an answer that does not decode, as getDr's
        r.done();
        return;
      }
      let x: number | undefined | Promise<void>;
      try {
        x = sw.probed(r.idx, r.port, r.path, depth, ni);
      } catch (e) {
        r.done(e);
        return;
      }
      if (typeof x === 'number') next.push(x);
      if (typeof x === 'object') void x.then(() => r.done());
      else r.done();
    },
    smpFailed: (r, e) => {
      sw.probeFailed(r.idx, r.port, r.path, e);
      r.done();
    },
  };
  let k = 0;
  let j = 0;
  return pumpSlots((done) => {
    while (k < level.length) {
      const ports = toProbe[k]!;
      if (j >= ports.length) {
        k++;
        j = 0;
        continue;
      }
      const idx = level[k]!;
      const port = ports[j++]!;
      const path = sw.probePath(idx, port); // throws past the hop limit: the run fails
      if (!path) continue;
      sw.smp.getDrTo!<ProbeReq>({ path, attr: SmpAttr.NodeInfo, mod: 0, idx, port, done }, sink);
      return true;
    }
    return false;
  }, limit).then(() => next);
}

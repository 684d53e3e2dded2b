/**
 * SR-IOV vports in NodeRecord and PortInfoRecord (vport hook, docs/vports.md). Pure.
 *
 * How NVIDIA's SA presents vports could not be read (its osm_sa_node_record.c /
 * osm_sa_portinfo_record.c are not in the sources at hand); ibsm's presentation:
 * - NodeRecord: one per vport (vport 0 is the physical port's own record): the HCA's NodeInfo with
 *   PortGUID the vport's GUID, LID the vport's (its own when LidRequired, else the LID the rule
 *   gives: the physical port's base LID or that of the vport at LidByVPortIndex), LocalPortNum
 *   the physical port; NodeDescription the HCA's;
 * - PortInfoRecord: one per LidRequired vport (a vport without its own LID is its physical port's
 *   record: EndportLID and PortNum would not tell the two apart): the physical port's PortInfo with
 *   the vport's LID and LMC, EndportLID the vport's LID.
 * Each is shown only to a requester sharing a P_Key with the vport itself (its own partitions), so
 * two vports of one HCA in different partitions do not see each other.
 */
import { portInfoValue } from '../model/port-info.js';
import { snapshotPorts } from '../model/snapshot.js';
import type { SaContext, VPortEntry } from './types.js';

/** A vport record candidate: the HCA it is on and the vport (visibility by its own P_Keys). */
export interface VportCandidate {
  node: number;
  guid: bigint;
  value: object;
}

/** The vports of the view, narrowed to those whose LID range holds `lid` when given. */
function* vports(ctx: SaContext, lid: number | undefined): Iterable<VPortEntry> {
  for (const v of ctx.vports?.list() ?? []) {
    if (!v.lid) continue;
    if (lid !== undefined && (lid < v.lid || lid >= v.lid + (1 << v.lmc))) continue;
    yield v;
  }
}

export function* vportNodeRecords(ctx: SaContext, lid: number | undefined): Iterable<VportCandidate> {
  const idx = snapshotPorts(ctx.snapshot);
  for (const v of vports(ctx, lid)) {
    const ep = idx.byGuid.get(v.physGuid);
    if (!ep) continue;
    const d = ctx.snapshot.discovery.nodes[ep.node]!;
    const n = ctx.snapshot.fabric.nodes[ep.node]!;
    yield { node: ep.node, guid: v.guid, value: { lid: v.lid, nodeInfo: { ...d.nodeInfo, portGuid: v.guid, localPortNum: ep.port }, nodeDescription: { description: n.desc } } };
  }
}

export function* vportPortInfoRecords(ctx: SaContext, lid: number | undefined, onlyPort: number | undefined, options: number, trusted: boolean): Iterable<VportCandidate> {
  const idx = snapshotPorts(ctx.snapshot);
  for (const v of vports(ctx, lid)) {
    if (!v.lidRequired) continue;
    const ep = idx.byGuid.get(v.physGuid);
    const pi = ep && ctx.snapshot.discovery.nodes[ep.node]?.portInfo[ep.port];
    if (!ep || !pi || (onlyPort !== undefined && onlyPort !== ep.port)) continue;
    yield { node: ep.node, guid: v.guid, value: { endportLid: v.lid, portNum: ep.port, options, portInfo: { ...portInfoValue(pi), lid: v.lid, lmc: v.lmc, mkey: trusted ? pi.mkey : 0n } } };
  }
}

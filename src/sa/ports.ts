/** The port helpers the SA's state handlers share: the requester's port, a port's GUID, PortInfo,
 * GID and P_Keys in the current snapshot, and P_Key matching. */
import { DEFAULT_GID_PREFIX } from '../wire/mad.js';
import type { PortInfo } from '../wire/sma.js';
import { portKind, snapshotPorts, type EndPort } from '../model/snapshot.js';
import type { PeerRef } from '../model/fabric.js';
import type { SaContext, SaRequester } from './types.js';
import { GUID_MASK } from '../util/guid.js';


/** The requester's port in the current snapshot (by GUID when the server resolved it, else by LID). */
export function requesterPort(ctx: SaContext, req: SaRequester): PeerRef | undefined {
  const fp = snapshotPorts(ctx.snapshot);
  if (req.portGuid !== undefined) {
    const r = fp.byGuid.get(req.portGuid);
    if (r) return r;
    // vport hook: a vport asking is its physical port with its own GUID (its own P_Keys)
    if (ctx.vports?.of(req.portGuid)) return portOfGid(ctx, req.portGuid);
  }
  return fp.byLid(req.lid);
}

export function portGuidOf(ctx: SaContext, ref: PeerRef): bigint {
  return ctx.snapshot.fabric.nodes[ref.node]!.ports[ref.port]!.guid;
}

export function portInfoOf(ctx: SaContext, ref: PeerRef): PortInfo | undefined {
  return ctx.snapshot.discovery?.nodes[ref.node]?.portInfo[ref.port];
}

/** The port's GID (its PortInfo GID prefix, else fe80::, and its GUID; a vport's GUID when `ref`
 * is a vport: `portOfGid`, `requesterPort`). */
export function portGidOf(ctx: SaContext, ref: PeerRef & { guid?: bigint }): bigint {
  const prefix = portInfoOf(ctx, ref)?.gidPrefix || DEFAULT_GID_PREFIX;
  // vport hook: a vport's GID is its own GUID behind its physical port's prefix
  const guid = ref.guid !== undefined && ctx.vports?.of(ref.guid) ? ref.guid : portGuidOf(ctx, ref);
  return (prefix << 64n) | guid;
}

/** The port a GID names (by its interface ID: a port GUID, or an alias GUID set through
 * GUIDInfoRecord, for which the port is given with that GUID), if known. */
export function portOfGid(ctx: SaContext, gid: bigint): EndPort | undefined {
  const guid = gid & GUID_MASK;
  const idx = snapshotPorts(ctx.snapshot);
  const ep = idx.byGuid.get(guid);
  if (ep) return ep;
  const base = ctx.aliases?.baseOf(guid);
  const b = base !== undefined ? idx.byGuid.get(base) : undefined;
  if (b) return { ...b, guid };
  // vport hook: a vport's GID names its physical port, with the vport's GUID and LID
  const v = ctx.vports?.of(guid);
  const phys = v && idx.byGuid.get(v.physGuid);
  return phys && { ...phys, guid, lid: v.lid, lmc: v.lmc };
}

/** The P_Key table the SM programs on this port (membership bit included). */
export function pkeysOf(ctx: SaContext, ref: PeerRef & { guid?: bigint }): number[] {
  // vport hook: a vport's P_Keys are its partitions' (sm/vport-mgr.ts saView)
  const vk = ref.guid !== undefined ? ctx.vports?.pkeys(ref.guid) : undefined;
  if (vk) return [...vk];
  const guid = portGuidOf(ctx, ref);
  return ctx.partitions.pkeysFor(guid, portKind(ctx.snapshot.fabric.nodes[ref.node]!.type), guid === ctx.smPortGuid);
}

/** True when `pkeys` holds `pkey`'s partition (membership ignored), as P_Key visibility needs. */
export function hasPkey(pkeys: readonly number[], pkey: number): boolean {
  const base = pkey & 0x7fff;
  return base !== 0 && pkeys.some((p) => (p & 0x7fff) === base);
}

/** True when two ports can talk: a common partition with at least one full member. */
export function sharePkey(a: readonly number[], b: readonly number[]): boolean {
  for (const x of a) for (const y of b) if ((x & 0x7fff) === (y & 0x7fff) && (x & 0x7fff) !== 0 && ((x | y) & 0x8000) !== 0) return true;
  return false;
}

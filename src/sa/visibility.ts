/**
 * Who is who in a snapshot (end ports by LID and GUID) and the P_Key visibility rules of the SA
 * (IBA 15.4: information about a device goes only to requesters sharing a P_Key with it; a
 * PathRecord only where source, destination and requester share P_Keys pairwise). Pure.
 *
 * "Sharing": a valid P_Key (base ≠ 0) of one port matches one of the other's with the same base,
 * and at least one of the two is a full member (two limited members cannot talk to each other).
 * A device's P_Keys are those of all its end ports (a switch: port 0).
 */
import { NodeType } from '../wire/mad.js';
import { portKind, snapshotPorts, type EndPort } from '../model/snapshot.js';
import type { SaContext, SaRequester } from './types.js';

const pkeyCache = new WeakMap<SaContext, Map<string, readonly number[]>>();

/**
 * The P_Key table of an end port: what the SM read or programmed (`ctx.tables.pkeys`) when given,
 * else what the partition plan assigns (a switch's port 0 with no partition keeps the SMA default
 * full default P_Key 0xffff).
 */
export function portPkeys(ctx: SaContext, node: number, port: number): readonly number[] {
  let cache = pkeyCache.get(ctx);
  if (!cache) pkeyCache.set(ctx, (cache = new Map()));
  const key = `${node}:${port}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let keys = ctx.tables?.pkeys?.(node, port);
  if (!keys) {
    const n = ctx.snapshot.fabric.nodes[node];
    const p = n?.ports[port];
    if (!n || !p) keys = [];
    else {
      keys = ctx.partitions.pkeysFor(p.guid, portKind(n.type), p.guid === ctx.smPortGuid);
      if (!keys.length && n.type === NodeType.Switch) keys = [0xffff];
    }
  }
  cache.set(key, keys);
  return keys;
}

/** P_Keys as base → full membership (invalid keys dropped). */
export type PkeySet = ReadonlyMap<number, boolean>;

export function pkeySet(...tables: (readonly number[])[]): PkeySet {
  const m = new Map<number, boolean>();
  for (const t of tables)
    for (const k of t) {
      const base = k & 0x7fff;
      if (!base) continue;
      m.set(base, (m.get(base) ?? false) || (k & 0x8000) !== 0);
    }
  return m;
}

export function share(a: PkeySet, b: PkeySet): boolean {
  const [small, big] = a.size <= b.size ? [a, b] : [b, a];
  for (const [base, full] of small) {
    const other = big.get(base);
    if (other !== undefined && (full || other)) return true;
  }
  return false;
}

/** True when both sets hold `pkey`'s base and at least one of them as a full member. */
export function shareThis(a: PkeySet, b: PkeySet, pkey: number): boolean {
  const base = pkey & 0x7fff;
  if (!base) return false;
  const x = a.get(base);
  const y = b.get(base);
  return x !== undefined && y !== undefined && (x || y);
}

/** The first P_Key of `src`'s table (table order) that `dst` shares, as `src` holds it. */
export function commonPkey(srcTable: readonly number[], dst: PkeySet, src: PkeySet = pkeySet(srcTable)): number | undefined {
  for (const k of srcTable) {
    const base = k & 0x7fff;
    if (base && shareThis(src, dst, base)) return k;
  }
  return undefined;
}

/** The P_Keys of a port / a device, cached per context. */
export class PkeyView {
  private readonly ports = new Map<number, PkeySet>();
  private readonly devices = new Map<number, PkeySet>();
  constructor(readonly ctx: SaContext) {}

  port(node: number, port: number): PkeySet {
    const k = node * 256 + port;
    let s = this.ports.get(k);
    if (!s) this.ports.set(k, (s = pkeySet(portPkeys(this.ctx, node, port))));
    return s;
  }

  device(node: number): PkeySet {
    let s = this.devices.get(node);
    if (!s) {
      const eps = snapshotPorts(this.ctx.snapshot).byNode[node] ?? [];
      s = pkeySet(...eps.map((ep) => portPkeys(this.ctx, ep.node, ep.port)));
      this.devices.set(node, s);
    }
    return s;
  }
}

const viewCache = new WeakMap<SaContext, PkeyView>();
export function pkeyView(ctx: SaContext): PkeyView {
  let v = viewCache.get(ctx);
  if (!v) viewCache.set(ctx, (v = new PkeyView(ctx)));
  return v;
}

/** The requester's end port: by GUID when the server resolved it, else by source LID. */
export function requesterPort(ctx: SaContext, r: SaRequester): EndPort | undefined {
  const idx = snapshotPorts(ctx.snapshot);
  return (r.portGuid !== undefined ? idx.byGuid.get(r.portGuid) : undefined) ?? idx.byLid(r.lid);
}

/** What one requester may see. */
export class Visibility {
  readonly view: PkeyView;
  /** P_Keys of every port of the requester's device (empty when the requester is unknown). */
  readonly requesterKeys: PkeySet;
  readonly requester?: EndPort;
  private readonly nodeOk = new Map<number, boolean>();

  constructor(
    readonly ctx: SaContext,
    readonly who: SaRequester,
  ) {
    this.view = pkeyView(ctx);
    // vport hook (docs/vports.md): a vport asking sees what its own partitions allow
    const v = who.portGuid !== undefined ? ctx.vports?.of(who.portGuid) : undefined;
    const vk = v && ctx.vports!.pkeys(who.portGuid!);
    this.requester = requesterPort(ctx, who) ?? (v && snapshotPorts(ctx.snapshot).byGuid.get(v.physGuid));
    this.requesterKeys = vk ? pkeySet(vk) : this.requester ? this.view.device(this.requester.node) : new Map();
  }

  /** An end port's P_Keys: a vport's own, else its port's. */
  private keysOf(ep: EndPort): PkeySet {
    const vk = this.ctx.vports?.pkeys(ep.guid);
    return vk ? pkeySet(vk) : this.view.port(ep.node, ep.port);
  }

  /** May the requester see records about this vport (vport hook: by its own P_Keys)? */
  vport(guid: bigint): boolean {
    const vk = this.ctx.vports?.pkeys(guid);
    return vk !== undefined && share(this.requesterKeys, pkeySet(vk));
  }

  /** May the requester see records about this device? */
  node(node: number): boolean {
    let ok = this.nodeOk.get(node);
    if (ok === undefined) {
      ok = share(this.requesterKeys, this.view.device(node));
      this.nodeOk.set(node, ok);
    }
    return ok;
  }

  /** May the requester see a path between these two end ports (pairwise sharing of all three)? */
  path(src: EndPort, dst: EndPort): boolean {
    const s = this.keysOf(src);
    const d = this.keysOf(dst);
    return share(s, d) && share(this.requesterKeys, s) && share(this.requesterKeys, d);
  }
}

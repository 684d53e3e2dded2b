/** A path through the forwarding tables the SM programmed (sa/path.ts): the hops from a source port
 * to a destination LID, the MTU and rate of the links on the way; cached per snapshot. Pure. */
import { NodeType } from '../wire/mad.js';
import type { PortInfo } from '../wire/sma.js';
import type { EndPort } from '../model/snapshot.js';
import type { SaContext } from './types.js';
import { portRate, rateCompare } from '../model/rates.js';
import { walkLfts, type WalkHop } from '../model/lft-walk.js';

/** One node a path goes through: the port it enters by (0 at the source) and leaves by (0 at the destination). */
export type PathHop = WalkHop;

export type PathWalk =
  | { ok: true; hops: PathHop[]; /** links traversed */ links: number; mtu: number; rate: number }
  | { ok: false; reason: string };

/** The PortInfo the sweep read of a node's port. */
export function pinfo(ctx: SaContext, node: number, port: number): PortInfo | undefined {
  return ctx.snapshot.discovery.nodes[node]?.portInfo[port];
}

/** Walks per SA context (a new context comes with every sweep, so a cache never outlives the
 * tables it was walked on), keyed by source port and destination LID (the LID names the
 * destination port: `dst` is its owner). Bounded: cleared when full. */
const WALK_CACHE_MAX = 200_000;
const walkCache = new WeakMap<SaContext['snapshot'], Map<number, PathWalk>>();

/** Follow the LFTs from `src` towards `dlid` (owned by `dst`). */
export function walkPath(ctx: SaContext, src: EndPort, dlid: number, dst: EndPort): PathWalk {
  let cache = walkCache.get(ctx.snapshot);
  if (!cache) walkCache.set(ctx.snapshot, (cache = new Map()));
  const key = (src.node * 256 + src.port) * 0x10000 + dlid;
  const hit = cache.get(key);
  if (hit) return hit;
  if (cache.size >= WALK_CACHE_MAX) cache.clear();
  const w = walkUncached(ctx, src, dlid, dst);
  cache.set(key, w);
  return w;
}

function walkUncached(ctx: SaContext, src: EndPort, dlid: number, dst: EndPort): PathWalk {
  const { fabric, routing } = ctx.snapshot;
  if (src.node === dst.node && src.port === dst.port) {
    const pi = pinfo(ctx, src.node, src.port);
    return { ok: true, hops: [{ node: src.node, inPort: 0, outPort: 0 }], links: 0, mtu: pi?.mtuCap || 1, rate: pi ? portRate(pi) : 2 };
  }
  let mtu = Infinity;
  let rate = -1;
  let links = 0;
  // A switch's own port 0 limits what leaves or reaches it (its MTUCap may be below its links').
  const port0 = (node: number): void => {
    if (fabric.nodes[node]!.type === NodeType.Switch) mtu = Math.min(mtu, pinfo(ctx, node, 0)?.mtuCap || Infinity);
  };
  port0(src.node);
  const w = walkLfts(fabric, routing.lfts, src, dlid, dst, (node, port, peer) => {
    for (const x of [pinfo(ctx, node, port), pinfo(ctx, peer.node, peer.port)]) {
      if (!x) continue;
      mtu = Math.min(mtu, x.mtuCap || Infinity, x.neighborMtu || Infinity);
      const r = portRate(x);
      if (rate < 0 || rateCompare(r, rate) < 0) rate = r;
    }
    links++;
  });
  if (!w.ok) {
    const reason = {
      noLink: `node ${w.node} port ${w.port} has no link`,
      noRoute: `switch ${w.node} has no route to LID ${dlid}`,
      notOwner: `LID ${dlid} routed into node ${w.node}, which is not its owner`,
      loop: `no arrival at LID ${dlid} (the route loops)`,
    }[w.reason];
    return { ok: false, reason };
  }
  const end = w.hops.at(-1)!.node;
  port0(end);
  if (mtu === Infinity) mtu = pinfo(ctx, end, 0)?.mtuCap || 1;
  if (rate < 0) rate = 2;
  return { ok: true, hops: w.hops, links, mtu, rate };
}

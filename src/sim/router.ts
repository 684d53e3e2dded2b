/**
 * The simulated IB router (NodeType 3; docs/routers.md). Each port is an end port of the subnet it
 * is cabled into: NodeInfo, PortInfo, a LID and the GidPrefix from that subnet's SM (the common SMA
 * answers those; directed routes never pass through a router: sim/walk.ts refuses). What is a
 * router's own is here:
 *
 * - its tables: per port, GID→LID (`RouterLidTable`, filled by the SM of the subnet that port is
 *   in, through the vendor SMP attributes of wire/router.ts), and the prefix routes, which the
 *   routers compute among themselves (IBA leaves router-to-router protocols open; here a
 *   distance-vector over routers that share a subnet and know each other's port GUIDs);
 * - forwarding: a data packet with a GRH whose DGID is not one of the router's own GIDs leaves by
 *   the port of the DGID's subnet (or towards the next router), its LRH rewritten (SLID = the
 *   egress port's LID, DLID = the destination's LID there or the next router's, SL from the
 *   table) and its HopLimit decremented; a packet that cannot be forwarded is dropped with a
 *   reason (counted by the fabric).
 *
 * Pure over the nodes' state: no I/O, no timers.
 */
import { NodeType, PortState } from '../wire/mad.js';
import { ROUTER_BLOCK_ENTRIES, ROUTER_LAST_BLOCK, RouterAttr, RouterLidTable, RouterPortInfo, RouterPrefixTable, type RouterLidEntry, type RouterPrefixEntry } from '../wire/router.js';
import { routerHash } from '../model/subnets.js';
import { invalid, reqData, unsupported, writeData, type AttrCtx, type AttrHandlers } from './sma-attr.js';
import { linkIsUp } from './link.js';
import type { SimNode, SimPort } from './node.js';
import type { Packet } from './packet.js';
import { GUID_MASK } from '../util/guid.js';

const MAX_BLOCKS = 0x10000;

interface LidTarget {
  lid: number;
  sl: number;
}

/** One router's tables. */
export class RouterState {
  /** Per port: the blocks as the SM wrote them, and the GUID → {LID, SL} index they imply. */
  readonly blocks = new Map<number, RouterLidEntry[][]>();
  readonly lids = new Map<number, Map<bigint, LidTarget>>();
  /** Bumped by every table write (the routes among routers depend on the tables' contents). */
  version = 0;
  constructor(readonly node: SimNode) {}

  setBlock(port: number, block: number, entries: RouterLidEntry[], last: boolean): void {
    let bl = this.blocks.get(port);
    if (!bl) this.blocks.set(port, (bl = []));
    bl[block] = entries.map((e) => ({ ...e }));
    if (last) bl.length = block + 1;
    this.version++;
    const idx = new Map<bigint, LidTarget>();
    for (const b of bl) for (const e of b ?? []) if (e.valid && e.lid) idx.set(e.guid, { lid: e.lid, sl: e.sl });
    this.lids.set(port, idx);
  }

  entries(port: number): number {
    return this.lids.get(port)?.size ?? 0;
  }
}

/** A usable router port: linked and ACTIVE, with a LID and a prefix from its subnet's SM. */
function usable(p: SimPort | undefined): p is SimPort {
  return p !== undefined && p.peer !== undefined && linkIsUp(p) && p.info.portState === PortState.Active && p.info.lid !== 0 && p.info.gidPrefix !== 0n;
}

/** One way to a prefix from a router: leave by `egress`; `next` is the next router's port GUID in
 * that subnet (undefined: the prefix is the egress port's own subnet). */
interface RouteChoice {
  egress: number;
  next?: bigint;
}
interface PrefixRoute {
  hops: number;
  choices: RouteChoice[];
}

export type Forwarded =
  | { kind: 'local' }
  | { kind: 'drop'; reason: string }
  | { kind: 'forward'; egress: SimPort; slid: number; dlid: number; sl: number };

/** The routers of one simulated fabric and their routing among themselves. */
export class RouterPlane {
  private readonly states = new Map<SimNode, RouterState>();
  private routes = new Map<SimNode, Map<bigint, PrefixRoute>>();
  private signature = '';

  constructor(nodes: readonly SimNode[]) {
    for (const n of nodes) if (n.type === NodeType.Router) this.states.set(n, new RouterState(n));
  }

  state(node: SimNode): RouterState | undefined {
    return this.states.get(node);
  }

  get routers(): RouterState[] {
    return [...this.states.values()];
  }

  /** The prefix routes of every router, recomputed when a router port or table changed (a signature of every router's table version and usable ports). */
  private table(node: SimNode): Map<bigint, PrefixRoute> {
    const sig = this.routers
      .map((r) => `${r.version}/` + r.node.ports.map((p) => (usable(p) ? `${p.num}:${p.info.gidPrefix}:${p.info.lid}` : '-')).join(','))
      .join(';');
    if (sig !== this.signature) {
      this.signature = sig;
      this.routes = this.compute();
    }
    return this.routes.get(node) ?? new Map();
  }

  /** Distance vector: a router reaches its ports' prefixes in 1 hop; through a router R' that
   * shares a subnet with it (its port GUID is in that port's GID table), in 1 + R''s hops. */
  private compute(): Map<SimNode, Map<bigint, PrefixRoute>> {
    const rs = this.routers.sort((a, b) => (a.node.guid < b.node.guid ? -1 : a.node.guid > b.node.guid ? 1 : 0));
    const out = new Map<SimNode, Map<bigint, PrefixRoute>>();
    for (const r of rs) {
      const m = new Map<bigint, PrefixRoute>();
      for (const p of r.node.ports) {
        if (!usable(p)) continue;
        const cur = m.get(p.info.gidPrefix);
        if (cur) cur.choices.push({ egress: p.num });
        else m.set(p.info.gidPrefix, { hops: 1, choices: [{ egress: p.num }] });
      }
      out.set(r.node, m);
    }
    // neighbours: (router, its port, other router's port in the same subnet it knows)
    const nbrs = new Map<SimNode, Array<{ egress: number; peer: RouterState; peerGuid: bigint }>>();
    for (const r of rs) {
      const list: Array<{ egress: number; peer: RouterState; peerGuid: bigint }> = [];
      for (const p of r.node.ports) {
        if (!usable(p)) continue;
        const known = r.lids.get(p.num);
        for (const o of rs) {
          if (o === r) continue;
          for (const q of o.node.ports) if (usable(q) && q.info.gidPrefix === p.info.gidPrefix && known?.has(q.guid)) list.push({ egress: p.num, peer: o, peerGuid: q.guid });
        }
      }
      nbrs.set(r.node, list);
    }
    for (let round = 0; round < rs.length; round++) {
      let changed = false;
      const next = new Map<SimNode, Map<bigint, PrefixRoute>>();
      for (const r of rs) {
        const m = new Map<bigint, PrefixRoute>();
        for (const [k, v] of out.get(r.node)!) m.set(k, { hops: v.hops, choices: [...v.choices] });
        for (const nb of nbrs.get(r.node)!) {
          const viaPrefix = r.node.ports[nb.egress]!.info.gidPrefix;
          for (const [prefix, route] of out.get(nb.peer.node)!) {
            if (prefix === viaPrefix) continue;
            const hops = route.hops + 1;
            const cur = m.get(prefix);
            if (!cur || hops < cur.hops) {
              m.set(prefix, { hops, choices: [{ egress: nb.egress, next: nb.peerGuid }] });
              changed = true;
            } else if (hops === cur.hops && cur.choices.every((c) => c.next !== undefined) && !cur.choices.some((c) => c.next === nb.peerGuid)) {
              cur.choices.push({ egress: nb.egress, next: nb.peerGuid });
              changed = true;
            }
          }
        }
        next.set(r.node, m);
      }
      for (const [k, v] of next) out.set(k, v);
      if (!changed) break;
    }
    return out;
  }

  /** The prefixes a router reaches from `fromPort`: its other ports' subnets and beyond. */
  reach(node: SimNode, fromPort: number): Array<{ prefix: bigint; hops: number; egress: number }> {
    const own = node.ports[fromPort]?.info.gidPrefix;
    const out: Array<{ prefix: bigint; hops: number; egress: number }> = [];
    for (const [prefix, r] of this.table(node)) {
      if (prefix === own) continue;
      const c = r.choices.find((x) => x.egress !== fromPort);
      if (c) out.push({ prefix, hops: r.hops, egress: c.egress });
    }
    return out.sort((a, b) => (a.prefix < b.prefix ? -1 : a.prefix > b.prefix ? 1 : 0));
  }

  /** What the router does with a packet that arrived at (node, inPort). */
  forward(node: SimNode, pkt: Packet): Forwarded {
    const st = this.states.get(node);
    const g = pkt.grh;
    // no GRH, or a multicast DGID (routers here do not forward multicast): the router's own
    if (!st || !g || g.dgid >> 120n === 0xffn) return { kind: 'local' };
    const guid = g.dgid & GUID_MASK;
    const prefix = g.dgid >> 64n;
    if (node.ports.some((p) => p && p.guid === guid && (p.info.gidPrefix === prefix || prefix === 0xfe80000000000000n))) return { kind: 'local' };
    if (g.hopLimit <= 1) return { kind: 'drop', reason: 'router: HopLimit exhausted' };
    const route = this.table(node).get(prefix);
    if (!route || !route.choices.length) return { kind: 'drop', reason: 'router: no route to the DGID prefix' };
    const c = route.choices[routerHash(g.sgid, prefix) % route.choices.length]!;
    const egress = node.ports[c.egress]!;
    const target = st.lids.get(c.egress)?.get(c.next ?? guid);
    if (!target) return { kind: 'drop', reason: c.next === undefined ? 'router: DGID not in its GID table' : 'router: next router not in its GID table' };
    return { kind: 'forward', egress, slid: egress.info.lid, dlid: target.lid, sl: target.sl };
  }
}

/** The vendor SMP attributes a router's SMA answers (wire/router.ts). */
export const ROUTER_HANDLERS: AttrHandlers = routerHandlers();

function pad<T>(xs: T[], zero: T): T[] {
  const out = xs.slice(0, ROUTER_BLOCK_ENTRIES);
  while (out.length < ROUTER_BLOCK_ENTRIES) out.push({ ...zero });
  return out;
}
const ZERO_LID: RouterLidEntry = { guid: 0n, lid: 0, sl: 0, valid: 0 } as RouterLidEntry;

function routerHandlers(): AttrHandlers {
  const stateOf = (c: AttrCtx): [RouterPlane, RouterState] => {
    const pl = c.host.routers;
    const st = pl?.state(c.node);
    if (!pl || !st) return unsupported();
    return [pl, st];
  };
  return {
    [RouterAttr.RouterPortInfo]: (c) => {
      if (c.set) unsupported();
      const [pl, st] = stateOf(c);
      const pn = c.mod === 0 ? c.inPort : c.mod;
      const p = c.node.ports[pn] ?? invalid();
      writeData(c.resp, RouterPortInfo, {
        portGuid: p.guid,
        gidPrefix: p.info.gidPrefix,
        lid: p.info.lid,
        portNum: pn,
        portState: p.info.portState,
        lidTableEntries: st.entries(pn),
        prefixEntries: pl.reach(c.node, pn).length,
      });
    },
    [RouterAttr.RouterLidTable]: (c) => {
      const [, st] = stateOf(c);
      const block = c.mod & 0xffff;
      if (block >= MAX_BLOCKS) invalid();
      if (c.set) st.setBlock(c.inPort, block, reqData(c, RouterLidTable).entries, (c.mod & ROUTER_LAST_BLOCK) !== 0);
      const cur = st.blocks.get(c.inPort)?.[block];
      writeData(c.resp, RouterLidTable, { entries: pad(cur ?? [], ZERO_LID) });
    },
    [RouterAttr.RouterPrefixTable]: (c) => {
      if (c.set) unsupported();
      const [pl] = stateOf(c);
      const all = pl.reach(c.node, c.inPort);
      const start = (c.mod & 0xffff) * ROUTER_BLOCK_ENTRIES;
      writeData(c.resp, RouterPrefixTable, { entries: pad(all.slice(start, start + ROUTER_BLOCK_ENTRIES).map((e) => ({ prefix: e.prefix, hops: e.hops, egressPort: e.egress, valid: 1 }) as RouterPrefixEntry), { prefix: 0n, hops: 0, egressPort: 0, valid: 0 } as RouterPrefixEntry) });
    },
  };
}

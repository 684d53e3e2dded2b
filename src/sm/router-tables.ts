/**
 * The SM's part of its subnet's routers (docs/routers.md): after a heavy sweep, every router port
 * of the snapshot gets this subnet's GID→LID table (RouterLidTable blocks: the end ports' GUIDs and
 * base LIDs, and the SA's well-known GUID 0x0200000000000002 → the SM's LID), only the blocks that
 * changed since the last write; then each router port is read back (RouterPortInfo of every port
 * of the router, RouterPrefixTable: the prefixes it reaches) into the `RouterPortView`s the SA
 * answers inter-subnet PathRecords from. A router that does not answer is logged and left out
 * (it is not offered), the rest carry on. The writes go through the apply step (sm/apply.ts).
 */
import { NodeType } from '../wire/mad.js';
import { ROUTER_BLOCK_ENTRIES, ROUTER_LAST_BLOCK, RouterAttr, RouterLidTable, RouterPortInfo, RouterPrefixTable, SA_WELL_KNOWN_GUID, type RouterLidEntry } from '../wire/router.js';
import { snapshotPorts, type Snapshot } from '../model/snapshot.js';
import type { RouterPortView } from '../model/subnets.js';
import type { Logger } from '../util/log.js';
import type { SmpClient } from './smp-client.js';
import type { SmpWrite } from './programmed.js';
import { apply } from './apply.js';

export interface RouterTableStats {
  routerPorts: number;
  blocksWritten: number;
  failures: number;
}

/** Keeps what it wrote to each router port (by port GUID) so a sweep writes only what changed. */
export class RouterTables {
  private readonly written = new Map<bigint, string[]>();
  lastStats: RouterTableStats = { routerPorts: 0, blocksWritten: 0, failures: 0 };

  constructor(private readonly o: { smp: SmpClient; log: Logger }) {}

  /** The blocks a router port (at `fromLid`) of this subnet gets: every end port with a LID, and
   * the SA's GUID; the SL of each is the routing engine's from the router port (0 without one). */
  static blocksOf(snap: Snapshot, fromLid = 0): RouterLidEntry[][] {
    const entries: RouterLidEntry[] = [];
    const sl = (dlid: number): number => (fromLid ? (snap.routing.sl?.(fromLid, dlid) ?? 0) : 0);
    for (const ep of snapshotPorts(snap).endPorts) if (ep.lid) entries.push({ guid: ep.guid, lid: ep.lid, sl: sl(ep.lid), valid: 1 } as RouterLidEntry);
    if (snap.smLid) entries.push({ guid: SA_WELL_KNOWN_GUID, lid: snap.smLid, sl: sl(snap.smLid), valid: 1 } as RouterLidEntry);
    entries.sort((a, b) => (a.guid < b.guid ? -1 : a.guid > b.guid ? 1 : 0));
    const zero = { guid: 0n, lid: 0, sl: 0, valid: 0 } as RouterLidEntry;
    const blocks: RouterLidEntry[][] = [];
    for (let i = 0; i < Math.max(1, entries.length); i += ROUTER_BLOCK_ENTRIES) {
      const b = entries.slice(i, i + ROUTER_BLOCK_ENTRIES);
      while (b.length < ROUTER_BLOCK_ENTRIES) b.push({ ...zero });
      blocks.push(b);
    }
    return blocks;
  }

  /** Write the tables of every router port of the snapshot (what changed), then read them back. */
  async program(snap: Snapshot): Promise<RouterPortView[]> {
    const { smp, log } = this.o;
    const stats: RouterTableStats = { routerPorts: 0, blocksWritten: 0, failures: 0 };
    const views: RouterPortView[] = [];
    const plain = snap.routing.sl ? undefined : RouterTables.blocksOf(snap);
    for (const ep of snapshotPorts(snap).endPorts) {
      const node = snap.fabric.nodes[ep.node]!;
      if (node.type !== NodeType.Router || !ep.lid) continue;
      const blocks = plain ?? RouterTables.blocksOf(snap, ep.lid);
      const keys = blocks.map((b) => b.map((e) => `${e.guid}:${e.lid}:${e.sl}:${e.valid}`).join(','));
      stats.routerPorts++;
      try {
        const had = this.written.get(ep.guid) ?? [];
        const writes: SmpWrite[] = [];
        for (let b = 0; b < blocks.length; b++) {
          const last = b === blocks.length - 1;
          if (had[b] === keys[b] && !(last && had.length !== blocks.length)) continue;
          const data = RouterLidTable.encode({ entries: blocks[b]! });
          writes.push({ path: [], lid: ep.lid, attr: RouterAttr.RouterLidTable, mod: (b | (last ? ROUTER_LAST_BLOCK : 0)) >>> 0, data, effect: { kind: 'routerLid', portGuid: ep.guid, block: b } });
        }
        // In block order, one at a time (the last block's flag ends the table).
        const r = await apply(smp, writes, { ok: (w) => void (w.effect.kind === 'routerLid' && (had[w.effect.block] = keys[w.effect.block]!)), failed: () => undefined }, 1);
        stats.blocksWritten += r.ok;
        if (r.failed[0]) throw r.failed[0].error;
        had.length = blocks.length;
        this.written.set(ep.guid, had);
        views.push(await this.read(ep.lid, node.guid, node.desc, ep.guid, ep.port, node.numPorts));
      } catch (e) {
        stats.failures++;
        this.written.delete(ep.guid);
        log.warn('router tables not written', { node: node.desc, guid: node.guid, port: ep.port, lid: ep.lid, error: (e as Error).message });
      }
    }
    this.lastStats = stats;
    return views;
  }

  /** Read the router ports' views again (their ports and the prefixes they reach), without
   * writing; a port the snapshot no longer has (or with another LID) is dropped unread. */
  async refresh(views: readonly RouterPortView[], snap: Snapshot | undefined): Promise<RouterPortView[]> {
    const out: RouterPortView[] = [];
    const idx = snap ? snapshotPorts(snap) : undefined;
    for (const v of views) {
      if (idx?.byGuid.get(v.portGuid)?.lid !== v.lid) continue;
      try {
        out.push(await this.read(v.lid, v.nodeGuid, v.desc, v.portGuid, v.portNum, v.ports.length));
      } catch (e) {
        this.o.log.warn('router not read', { node: v.desc, guid: v.nodeGuid, port: v.portNum, lid: v.lid, error: (e as Error).message });
      }
    }
    return out;
  }

  private async read(lid: number, nodeGuid: bigint, desc: string, portGuid: bigint, portNum: number, numPorts: number): Promise<RouterPortView> {
    const { smp } = this.o;
    const ports: RouterPortView['ports'] = [];
    let prefixEntries = 0;
    for (let pn = 1; pn <= numPorts; pn++) {
      const pi = RouterPortInfo.decode(await smp.getLid(lid, RouterAttr.RouterPortInfo, pn));
      ports.push({ portNum: pn, portGuid: pi.portGuid, prefix: pi.gidPrefix, lid: pi.lid, state: pi.portState });
      if (pn === portNum) prefixEntries = pi.prefixEntries;
    }
    const reach: RouterPortView['reach'] = [];
    for (let b = 0; b * ROUTER_BLOCK_ENTRIES < prefixEntries; b++) {
      const t = RouterPrefixTable.decode(await smp.getLid(lid, RouterAttr.RouterPrefixTable, b));
      for (const e of t.entries) if (e.valid) reach.push({ prefix: e.prefix, hops: e.hops });
    }
    return { nodeGuid, desc, portGuid, portNum, lid, ports, reach };
  }
}

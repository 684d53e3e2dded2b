/** The vports as operators see them (events, metrics, `ibsm dump vports`, the web view): one row
 * per vport the SM knows, with its HCA. Pure, over sm/vport-mgr.ts's state. */
import { PortState } from '../wire/mad.js';
import type { Fabric } from '../model/fabric.js';
import type { VPortManager } from './vport-mgr.js';
import type { VportRow } from '../model/vport-row.js';

export type { VportRow } from '../model/vport-row.js';

/** Every vport but vport 0 (the physical function: the port itself), by HCA port and index. */
export function vportRows(mgr: VPortManager, fabric: Fabric | undefined): VportRow[] {
  const rows: VportRow[] = [];
  for (const [p, v] of mgr.all()) {
    if (v.index === 0) continue;
    const n = fabric?.nodes[p.node];
    rows.push({ nodeGuid: n?.guid ?? 0n, nodeDesc: n?.desc ?? '', port: p.port, portGuid: p.portGuid, index: v.index, guid: v.guid, active: v.state === PortState.Active, lidRequired: v.lidRequired, lid: v.lid });
  }
  return rows.sort((a, b) => (a.portGuid === b.portGuid ? a.index - b.index : a.portGuid < b.portGuid ? -1 : 1));
}

export interface HcaVports {
  nodeGuid: bigint;
  nodeDesc: string;
  vports: number;
  active: number;
  withLid: number;
}

/** Vport counts per HCA (node). */
export function vportsPerHca(rows: readonly VportRow[]): HcaVports[] {
  const by = new Map<bigint, HcaVports>();
  for (const r of rows) {
    let h = by.get(r.nodeGuid);
    if (!h) by.set(r.nodeGuid, (h = { nodeGuid: r.nodeGuid, nodeDesc: r.nodeDesc, vports: 0, active: 0, withLid: 0 }));
    h.vports++;
    if (r.active) h.active++;
    if (r.lidRequired && r.lid) h.withLid++;
  }
  return [...by.values()];
}

/**
 * The SM's tables as text on demand, in the formats operators already read: unicast and multicast
 * forwarding tables as `ibroute` (and OpenSM's opensm-lfts.dump) prints them. Pure.
 */
import type { VportRow } from '../model/vport-row.js';
import { isSwitch, type Fabric } from '../model/fabric.js';
import { NO_ROUTE } from '../model/routes.js';
import { indexEndPorts } from '../model/snapshot.js';
import { NodeType } from '../wire/mad.js';
import { formatGuid } from '../util/guid.js';

const lid4 = (l: number): string => `0x${l.toString(16).padStart(4, '0')}`;
const TYPE_NAMES: Record<number, string> = { [NodeType.CA]: 'Channel Adapter', [NodeType.Switch]: 'Switch', [NodeType.Router]: 'Router' };

/** Every switch's LFT as `ibroute <lid>` prints it: entries up to `maxLid`, unrouted ones left out. */
export function dumpLfts(f: Fabric, lfts: ReadonlyMap<number, Uint8Array>, maxLid: number): string {
  const idx = indexEndPorts(f);
  const out: string[] = [];
  f.nodes.forEach((n, ni) => {
    const lft = lfts.get(ni);
    if (!isSwitch(n) || !lft) return;
    out.push(`Unicast lids [0x0-0x${maxLid.toString(16)}] of switch Lid ${n.ports[0]?.lid ?? 0} guid ${formatGuid(n.guid)} (${n.desc}):`);
    out.push('  Lid  Out   Destination', '       Port     Info ');
    let valid = 0;
    for (let lid = 1; lid <= maxLid && lid < lft.length; lid++) {
      const port = lft[lid]!;
      if (port === NO_ROUTE) continue;
      const ep = idx.byLid(lid);
      const dn = ep && f.nodes[ep.node]!;
      out.push(`${lid4(lid)} ${String(port).padStart(3, '0')} : ${dn ? `(${TYPE_NAMES[dn.type] ?? 'Unknown'} portguid ${formatGuid(ep.guid)}: '${dn.desc}')` : '(unknown)'}`);
      valid++;
    }
    out.push(`${valid} valid lids dumped `, '');
  });
  return out.join('\n');
}

/** One switch's multicast entries: MLID → the ports it forwards to. */
export interface MftEntries {
  guid: bigint;
  entries: ReadonlyMap<number, readonly number[]>;
}

/** Every switch's MFT as `ibroute -M <lid>` prints it (one column per port, 0..N). */
export function dumpMfts(f: Fabric, mfts: readonly MftEntries[], mftCap = 1024): string {
  const out: string[] = [];
  const byGuid = new Map(f.nodes.map((n) => [n.guid, n]));
  for (const m of mfts) {
    const n = byGuid.get(m.guid);
    if (!n || !isSwitch(n)) continue;
    const ports = Array.from({ length: n.numPorts + 1 }, (_, i) => i);
    out.push(`Multicast mlids [0xc000-0x${(0xc000 + mftCap - 1).toString(16)}] of switch Lid ${n.ports[0]?.lid ?? 0} guid ${formatGuid(n.guid)} (${n.desc}):`);
    if (n.numPorts > 9) out.push(`            ${ports.filter((p) => p % 10 === 0).map((p) => String(p / 10)).join('                   ')}`);
    out.push(`     Ports: ${ports.map((p) => String(p % 10)).join(' ')} `, ' MLid');
    const mlids = [...m.entries.keys()].filter((l) => (m.entries.get(l)?.length ?? 0) > 0).sort((a, b) => a - b);
    for (const mlid of mlids) {
      const set = new Set(m.entries.get(mlid));
      out.push(`${lid4(mlid)}      ${ports.map((p) => (set.has(p) ? 'x' : ' ')).join(' ')} `);
    }
    out.push(`${mlids.length} valid mlids dumped `, '');
  }
  return out.join('\n');
}


/** `ibsm dump vports`: every vport by HCA port (docs/vports.md), and the count per HCA. */
export function dumpVports(rows: readonly VportRow[]): string {
  const out: string[] = [];
  let at: bigint | undefined;
  let n = 0;
  const flush = (): void => {
    if (at !== undefined) out.push(`  ${n} vports`, '');
  };
  for (const r of rows) {
    if (r.portGuid !== at) {
      flush();
      at = r.portGuid;
      n = 0;
      out.push(`HCA ${formatGuid(r.nodeGuid)} '${r.nodeDesc}' port ${r.port} portguid ${formatGuid(r.portGuid)}:`, '  Index  VPortGUID           State   LID     LidRequired');
    }
    n++;
    out.push(`  ${String(r.index).padStart(5)}  ${formatGuid(r.guid)}  ${(r.active ? 'Active' : 'Init').padEnd(6)}  ${r.lid ? lid4(r.lid) : '-'.padEnd(6)}  ${r.lidRequired ? 'yes' : 'no'}`);
  }
  flush();
  out.push(`${rows.length} vports on ${new Set(rows.map((r) => r.portGuid)).size} ports`, '');
  return out.join('\n');
}

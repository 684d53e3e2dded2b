/** OpenSM's guid_routing_order_file: port GUIDs whose destinations are routed first, in the file's
 * order (minhop, updn and dfsssp balance each switch's ports by the routes already placed, so the
 * destinations routed first get the least loaded ports); every other destination after them, in
 * the engine's own order. guid_routing_order_no_scatter: the listed destinations take no random
 * tie-break (OpenSM: no scatter_ports; ibsm: no --seed rotation). Pure. */
import { parseGuidFile } from '../model/guid-file.js';
import type { FabricIndex } from './graph.js';

/** The file, as OpenSM reads it (parse_node_map): a GUID first on each line, anything after it
 * (a name) ignored, `#` comments, blank lines. A line that does not start with a GUID is an
 * error naming the file and line (model/guid-file.ts, the one GUID-file parser). */
export function parseRouteOrder(text: string, file: string): bigint[] {
  const firsts = text.split('\n').map((l) => l.replace(/#.*/, '').trim().split(/\s+/)[0]!);
  return parseGuidFile(firsts.join('\n'), file);
}

/** Destinations routed together: end ports (ix.ends indices, in routing order) delivered by one
 * switch. */
export interface DestGroup {
  /** The switch that delivers them (index into the FabricIndex's switch arrays). */
  sw: number;
  ends: ArrayLike<number>;
  /** Ties broken without the seed's randomness (listed, with no-scatter). */
  fixed: boolean;
}

export interface DestOrder {
  groups: DestGroup[];
  /** Listed GUIDs routed in order, and those skipped (not an end port with a LID on a switch, or repeated). */
  listed: number;
  skipped: number;
}

/** Each destination switch's end ports, switch by switch: the engines' own order. */
function bySwitch(ix: FabricIndex, done?: Uint8Array): DestGroup[] {
  const out: DestGroup[] = [];
  for (let T = 0; T < ix.nSw; T++) {
    const a = ix.endsStart[T]!;
    const b = ix.endsStart[T + 1]!;
    if (a === b) continue;
    if (!done) {
      out.push({ sw: T, ends: ix.endsOfSw.subarray(a, b), fixed: false });
      continue;
    }
    const rest: number[] = [];
    for (let i = a; i < b; i++) if (!done[ix.endsOfSw[i]!]) rest.push(ix.endsOfSw[i]!);
    if (rest.length) out.push({ sw: T, ends: rest, fixed: false });
  }
  return out;
}

/** The destinations in routing order: without `order`, switch by switch; with it, the listed end
 * ports first in its order (consecutive ones on one switch in one group), then the others switch by
 * switch. A GUID that is no end port here, or repeated, is skipped (OpenSM skips them too). */
export function orderDestinations(ix: FabricIndex, order?: readonly bigint[], noScatter = false): DestOrder {
  if (!order || order.length === 0) return { groups: bySwitch(ix), listed: 0, skipped: 0 };
  const byGuid = new Map<bigint, number>();
  ix.ends.forEach((ep, i) => {
    if (ep.sw >= 0 && !byGuid.has(ep.guid)) byGuid.set(ep.guid, i);
  });
  const done = new Uint8Array(ix.ends.length);
  const groups: DestGroup[] = [];
  let listed = 0;
  let skipped = 0;
  for (const g of order) {
    const ei = byGuid.get(g);
    if (ei === undefined || done[ei]) {
      skipped++;
      continue;
    }
    done[ei] = 1;
    listed++;
    const sw = ix.ends[ei]!.sw;
    const last = groups.at(-1);
    if (last && last.sw === sw) (last.ends as number[]).push(ei);
    else groups.push({ sw, ends: [ei], fixed: noScatter });
  }
  return { groups: [...groups, ...bySwitch(ix, done)], listed, skipped };
}

/** The note an engine adds to its result when it routed in a given order. */
export function orderNote(o: DestOrder): string {
  return `guid routing order: ${o.listed} destination port(s) routed first, in the file's order${o.skipped ? `; ${o.skipped} GUID(s) skipped (not an end port of this fabric, or repeated)` : ''}`;
}

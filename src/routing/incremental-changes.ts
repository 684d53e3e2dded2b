/** SlimUpdate's measure of a re-route: the (switch, destination LID) pairs whose path changed.
 * A pair's path is the switches and ports a packet from that switch to that LID crosses; it
 * changes when any hop on it does (a switch whose own entry stayed can see its path change
 * behind it). Switches are matched by node GUID, destinations by LID (a local sweep keeps LIDs);
 * LIDs whose owner differs, and switches in only one of the fabrics, are left out. */
import type { Fabric } from '../model/fabric.js';
import { indexFabric, type FabricIndex } from './graph.js';
import { NO_ROUTE, type RoutingResult } from './types.js';

export interface PathChanges {
  /** (switch, LID) pairs compared (a route in at least one of the two tables). */
  pairs: number;
  /** Pairs whose path differs. */
  changed: number;
}

const SAME = 2;
const CHANGED = 3;

export function pathChanges(beforeFabric: Fabric, before: RoutingResult, afterFabric: Fabric, after: RoutingResult): PathChanges {
  const ia = indexFabric(beforeFabric);
  const ib = indexFabric(afterFabric);
  const aOf = new Map(ia.swGuid.map((g, i) => [g, i]));
  const toA = Int32Array.from(ib.swGuid, (g) => aOf.get(g) ?? -1);
  const ta = tables(ia, before);
  const tb = tables(ib, after);
  const n = ib.nSw;
  const state = new Uint8Array(n);
  const stack = new Int32Array(n + 1);
  let pairs = 0;
  let changed = 0;
  const maxLid = Math.min(ia.maxLid, ib.maxLid);
  for (let l = 1; l <= maxLid; l++) {
    const oa = ia.lidOwner[l]!;
    const ob = ib.lidOwner[l]!;
    if (oa < 0 || ob < 0 || ia.ends[oa]!.guid !== ib.ends[ob]!.guid) continue;
    state.fill(0);
    /** Whether switch s's step toward l is the same hop in both (and where it leads). */
    const step = (s: number): { same: boolean; next: number } => {
      const sa = toA[s]!;
      const pb = tb[s]?.[l] ?? NO_ROUTE;
      const pa = sa >= 0 ? (ta[sa]?.[l] ?? NO_ROUTE) : NO_ROUTE;
      if (sa < 0 || pa !== pb) return { same: false, next: -1 };
      if (pb === 0 || pb === NO_ROUTE || pb > ib.maxPorts) return { same: true, next: -1 };
      const eb = ib.portEntry[s * (ib.maxPorts + 1) + pb]!;
      const ea = pa <= ia.maxPorts ? ia.portEntry[sa * (ia.maxPorts + 1) + pa]! : -1;
      if (eb < 0 || ea < 0) return { same: eb < 0 && ea < 0, next: -1 };
      const nb = ib.adjSw[eb]!;
      if (ia.swGuid[ia.adjSw[ea]!] !== ib.swGuid[nb]) return { same: false, next: -1 };
      return { same: true, next: nb };
    };
    for (let s0 = 0; s0 < n; s0++) {
      if (state[s0]) continue;
      let sp = 0;
      let s = s0;
      let verdict = SAME;
      for (;;) {
        state[s] = 1;
        stack[sp++] = s;
        const st = step(s);
        if (!st.same) {
          verdict = CHANGED;
          break;
        }
        if (st.next < 0) break;
        const t = state[st.next]!;
        if (t === 0) {
          s = st.next;
          continue;
        }
        verdict = t === CHANGED ? CHANGED : SAME; // 1: a loop in both tables alike
        break;
      }
      for (let k = 0; k < sp; k++) state[stack[k]!] = verdict;
    }
    for (let s = 0; s < n; s++) {
      const sa = toA[s]!;
      if (sa < 0) continue;
      if ((tb[s]?.[l] ?? NO_ROUTE) === NO_ROUTE && (ta[sa]?.[l] ?? NO_ROUTE) === NO_ROUTE) continue;
      pairs++;
      if (state[s] === CHANGED) changed++;
    }
  }
  return { pairs, changed };
}

function tables(ix: FabricIndex, r: RoutingResult): (Uint8Array | undefined)[] {
  return Array.from(ix.swNode, (ni) => r.lfts.get(ni));
}

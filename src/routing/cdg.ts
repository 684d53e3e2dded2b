/** Channel-dependency cycles of one VL (the verifier's deadlock check): strongly connected
 * components of the dependency graph between directed switch-to-switch channels, and one cycle
 * of each cyclic component as a readable route. */
import { swName, type FabricIndex } from './graph.js';

export interface CdgReport {
  vl: number;
  /** Distinct channel dependencies (pairs of consecutive switch-to-switch links) on this VL. */
  dependencies: number;
  /** Strongly connected components with a cycle (0 = deadlock-free on this VL). */
  cyclicComponents: number;
  /** Channels (directed links) inside those components. */
  channelsInCycles: number;
  /** One cycle, as "switch port N" hops, when there is one. */
  exampleCycle?: string[];
}

export function cdgCycles(ix: FabricIndex, vl: number, bits: Uint8Array, depStart: Float64Array, deps: number): CdgReport {
  const { start, adj } = channelGraph(ix, bits, depStart, deps);
  let cyclic = 0;
  let inCycles = 0;
  let example: number[] | undefined;
  stronglyConnected(start, adj, (v, size, comp, id) => {
    cyclic++;
    inCycles += size;
    example ??= cycleIn(start, adj, comp, id, v);
  });
  const rep: CdgReport = { vl, dependencies: deps, cyclicComponents: cyclic, channelsInCycles: inCycles };
  if (example) {
    rep.exampleCycle = example.map((e) => {
      let s = 0;
      while (ix.adjStart[s + 1]! <= e) s++;
      return `${swName(ix, s)} port ${ix.adjPort[e]}`;
    });
  }
  return rep;
}

/** The dependencies of one VL (the bit set `bits` over the channels' dependency index) as a graph
 * over the channels in CSR form: channel v's successors adj[start[v] .. start[v + 1] - 1], in
 * the order of the bits. */
function channelGraph(ix: FabricIndex, bits: Uint8Array, depStart: Float64Array, deps: number): { start: Int32Array; adj: Int32Array } {
  const n = ix.adjStart[ix.nSw]!;
  const { adjStart, adjSw } = ix;
  // Bit indices stay below 2^32 (as the verifier's walk writes them).
  const has = (bit: number): boolean => (bits[bit >>> 3]! & (1 << (bit & 7))) !== 0;
  // Below 2^31: `bit & 7` is the bit's place in its byte.
  const small = depStart[n]! < 2 ** 31;
  const start = new Int32Array(n + 1);
  let adj = new Int32Array(Math.max(16, deps));
  let m = 0;
  for (let v = 0; v < n; v++) {
    start[v] = m;
    const h = adjSw[v]!;
    const deg = adjStart[h + 1]! - adjStart[h]!;
    const b0 = depStart[v]!;
    const b0i = b0 | 0;
    for (let k = 0; k < deg; ) {
      // (Below 2^31, in 32-bit arithmetic; a byte without dependencies skipped whole.)
      if (small) {
        const bit = b0i + k;
        const byte = bits[bit >>> 3]!;
        if (byte === 0 && (bit & 7) === 0 && k + 8 <= deg) {
          k += 8;
          continue;
        }
        k++;
        if (!(byte & (1 << (bit & 7)))) continue;
      } else if (!has(b0 + k++)) continue;
      if (m === adj.length) {
        const grown = new Int32Array(adj.length * 2);
        grown.set(adj);
        adj = grown;
      }
      adj[m++] = adjStart[h]! + k - 1;
    }
  }
  start[n] = m;
  return { start, adj };
}

/** Strongly connected components of a graph in CSR form (vertex v's successors
 * adj[start[v] .. start[v + 1] - 1]): an iterative Tarjan over typed arrays. `onCyclic` is called
 * for each component of more than one vertex as it is completed, with the vertex it was found
 * at, its size, every vertex's component so far (`comp`) and its own number there. */
function stronglyConnected(start: Int32Array, adj: Int32Array, onCyclic: (v: number, size: number, comp: Int32Array, id: number) => void): void {
  const N = start.length - 1;
  const index = new Int32Array(N).fill(-1);
  const low = new Int32Array(N);
  const onStack = new Uint8Array(N);
  const comp = new Int32Array(N).fill(-1);
  const sstack = new Int32Array(N);
  const cstack = new Int32Array(N);
  const citer = new Int32Array(N);
  let sp = 0;
  let idx = 0;
  let ncomp = 0;
  for (let root = 0; root < N; root++) {
    // (a vertex without successors is a component of its own: not a root worth a search)
    if (index[root]! >= 0 || start[root] === start[root + 1]) continue;
    let csp = 0;
    cstack[csp] = root;
    citer[csp++] = start[root]!;
    index[root] = low[root] = idx++;
    sstack[sp++] = root;
    onStack[root] = 1;
    while (csp > 0) {
      const v = cstack[csp - 1]!;
      let k = citer[csp - 1]!;
      let pushed = false;
      while (k < start[v + 1]!) {
        const w = adj[k++]!;
        if (index[w]! < 0) {
          citer[csp - 1] = k;
          index[w] = low[w] = idx++;
          sstack[sp++] = w;
          onStack[w] = 1;
          cstack[csp] = w;
          citer[csp++] = start[w]!;
          pushed = true;
          break;
        } else if (onStack[w] && index[w]! < low[v]!) low[v] = index[w]!;
      }
      if (pushed) continue;
      citer[csp - 1] = k;
      if (low[v] === index[v]) {
        let size = 0;
        let w: number;
        do {
          w = sstack[--sp]!;
          onStack[w] = 0;
          comp[w] = ncomp;
          size++;
        } while (w !== v);
        if (size > 1) onCyclic(v, size, comp, ncomp);
        ncomp++;
      }
      csp--;
      if (csp > 0) {
        const u = cstack[csp - 1]!;
        if (low[v]! < low[u]!) low[u] = low[v]!;
      }
    }
  }
}

/** A cycle inside component `id` from its vertex v: the walk along each vertex's first successor
 * in the component, from where it first repeats. */
function cycleIn(start: Int32Array, adj: Int32Array, comp: Int32Array, id: number, v: number): number[] {
  const seenAt = new Map<number, number>();
  const walk: number[] = [];
  let x = v;
  while (!seenAt.has(x)) {
    seenAt.set(x, walk.length);
    walk.push(x);
    let nx = -1;
    for (let j = start[x]!; j < start[x + 1]!; j++) {
      if (comp[adj[j]!] === id) {
        nx = adj[j]!;
        break;
      }
    }
    if (nx < 0) break;
    x = nx;
  }
  return walk.slice(seenAt.get(x) ?? 0);
}

/** Channel-dependency cycles when routes change VL on the way (per-port SL2VL): the graph is over
 * virtual channels (directed switch-to-switch link, VL), a dependency from (link, VL a) to
 * (next link, VL b) kept in `pairBits[a * 16 + b]` at the bit of the link pair (as `cdgCycles`).
 * One report per VL a virtual channel of the graph is on; a cyclic component counts on the VL of
 * the channel where the search found it. */
export function vcdgCycles(ix: FabricIndex, pairBits: readonly (Uint8Array | undefined)[], depStart: Float64Array): CdgReport[] {
  const n = ix.adjStart[ix.nSw]!;
  const { adjStart, adjSw } = ix;
  const deps = new Float64Array(16);
  const used = new Uint8Array(16);
  // CSR over virtual channels v * n + e.
  const N = 16 * n;
  const start = new Int32Array(N + 1);
  const each = (f: (from: number, to: number) => void): void => {
    for (let pair = 0; pair < 256; pair++) {
      const b = pairBits[pair];
      if (!b) continue;
      const va = pair >> 4;
      const vb = pair & 15;
      for (let e = 0; e < n; e++) {
        const h = adjSw[e]!;
        const base = depStart[e]!;
        for (let k = 0; k < adjStart[h + 1]! - adjStart[h]!; k++) {
          const bit = base + k;
          if (b[bit >>> 3]! & (1 << (bit & 7))) f(va * n + e, vb * n + adjStart[h]! + k);
        }
      }
    }
  };
  each((from, to) => {
    start[from + 1]!++;
    deps[Math.floor(from / n)]!++;
    used[Math.floor(from / n)] = used[Math.floor(to / n)] = 1;
  });
  for (let i = 0; i < N; i++) start[i + 1]! += start[i]!;
  const adj = new Int32Array(start[N]!);
  const fill = start.slice(0, N);
  each((from, to) => (adj[fill[from]!++] = to));
  const cyclic = new Int32Array(16);
  const inCycles = new Int32Array(16);
  const example: (number[] | undefined)[] = new Array(16);
  stronglyConnected(start, adj, (v, size, comp, id) => {
    const vl = Math.floor(v / n);
    cyclic[vl]!++;
    inCycles[vl]! += size;
    example[vl] ??= cycleIn(start, adj, comp, id, v);
  });
  const reports: CdgReport[] = [];
  for (let vl = 0; vl < 16; vl++) {
    if (!used[vl]) continue;
    const rep: CdgReport = { vl, dependencies: deps[vl]!, cyclicComponents: cyclic[vl]!, channelsInCycles: inCycles[vl]! };
    const ex = example[vl];
    if (ex) {
      rep.exampleCycle = ex.map((x) => {
        const e = x % n;
        let s = 0;
        while (ix.adjStart[s + 1]! <= e) s++;
        return `${swName(ix, s)} port ${ix.adjPort[e]} VL ${Math.floor(x / n)}`;
      });
    }
    reports.push(rep);
  }
  return reports;
}

/**
 * torus: dimension-order routing on tori and meshes, deadlock-free with datelines (the idea of
 * OpenSM's torus-2QoS and dor; our implementation). Detected from the graph alone, no
 * configuration.
 *
 * Detection: a torus or mesh is a Cartesian product of rings and lines. Two links at a switch
 * belong to one dimension when they span no 4-cycle; opposite links of a 4-cycle belong to one
 * dimension. The classes of that relation are the dimensions (a ring of 4 is two dimensions of
 * 2, which it is: C4 = K2 × K2). Contracting the links of all other dimensions gives each
 * switch's coordinate in a dimension, which must be a line or a ring. The result is checked
 * exactly: coordinates one-to-one with the grid, every link one step in one dimension, no link
 * missing; anything else is RoutingNotApplicable (the next engine routes it).
 *
 * Routes: dimensions in order, each by its shortest way round (ties between the two ways of an
 * even ring alternate by the other coordinates, for balance); parallel links to one neighbour
 * are dealt by LID. Deadlock freedom on 2 VLs (torus-2QoS's scheme): routes cross dimensions
 * only upward, so a dependency cycle could only go round one ring; within a ring a route runs
 * on VL 0 until it takes the ring's dateline link (between coordinate n−1 and 0) and on VL 1
 * from there to the end of its segment, which is at most n/2 hops, so it never comes back to the
 * dateline; turning into the next dimension it is back on VL 0. In IB the VL of a hop is
 * SL2VL[in port][out port][SL] at the switch: the route's SL has one bit per ring (set when the
 * route crosses that ring's dateline), and each switch's table gives VL 1 for the dateline
 * link itself and for a hop that continues in a ring on the far side of its dateline (the half
 * of the ring a crossing segment reaches after it) with that ring's bit set, VL 0 otherwise.
 * With 1 VL rings are routed as lines (never over their wrap-around link); rings of 3 need no
 * bit (their segments are one hop); at most 4 rings get a bit (16 SLs), others are lines.
 */
import type { Fabric } from '../model/fabric.js';
import type { PortSl2Vl } from '../model/routes.js';
import { emptyLfts, indexFabric, lftMap, swName, type FabricIndex } from './graph.js';
import { checkLmc } from './minhop.js';
import { RoutingNotApplicable, steppedEngine, type RoutingEngine, type RoutingOptions, type RoutingPhase, type RoutingResult } from './types.js';

const NA = (reason: string): RoutingNotApplicable => new RoutingNotApplicable('torus', reason);

export interface TorusShape {
  /** Size of each dimension. */
  dims: number[];
  /** Whether each dimension is a ring (wrap-around link) rather than a line. */
  ring: boolean[];
  /** coord[s * D + i]: coordinate of switch s in dimension i. */
  coord: Int32Array;
}

class UnionFind {
  readonly p: Int32Array;
  constructor(n: number) {
    this.p = Int32Array.from({ length: n }, (_, i) => i);
  }
  find(x: number): number {
    const p = this.p;
    while (p[x] !== x) {
      p[x] = p[p[x]!]!;
      x = p[x]!;
    }
    return x;
  }
  union(a: number, b: number): void {
    const x = this.find(a);
    const y = this.find(b);
    if (x !== y) this.p[Math.max(x, y)] = Math.min(x, y);
  }
}

/** Detect the grid; throws RoutingNotApplicable naming the first thing that is not a torus or mesh. */
export function torusShape(ix: FabricIndex): TorusShape {
  try {
    return detect(ix);
  } catch (err) {
    if (err instanceof RoutingNotApplicable) throw NA(`not a torus or mesh: ${err.reason}`);
    throw err;
  }
}

function detect(ix: FabricIndex): TorusShape {
  const { nSw, adjStart, adjSw } = ix;
  if (nSw < 2) throw NA(`${nSw} switch(es): a torus or mesh needs at least 2`);
  // Distinct neighbour switches.
  const nbr: number[][] = [];
  const maxDeg = 2 * Math.floor(Math.log2(nSw));
  for (let s = 0; s < nSw; s++) {
    const set = new Set<number>();
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) if (adjSw[e] !== s) set.add(adjSw[e]!);
    const l = [...set].sort((a, b) => a - b);
    if (l.length === 0) throw NA(`switch ${swName(ix, s)} has no links to other switches`);
    if (l.length > maxDeg) throw NA(`switch ${swName(ix, s)} has ${l.length} neighbour switches; a torus or mesh of ${nSw} switches has at most ${maxDeg}`);
    nbr.push(l);
  }
  // Simple edges and their ids.
  const edgeId = new Map<number, number>();
  const ends: number[] = [];
  for (let s = 0; s < nSw; s++) for (const t of nbr[s]!) if (s < t) {
    edgeId.set(s * nSw + t, ends.length / 2);
    ends.push(s, t);
  }
  const nEdges = ends.length / 2;
  const eid = (a: number, b: number): number => edgeId.get(a < b ? a * nSw + b : b * nSw + a)!;
  const uf = new UnionFind(nEdges);
  const mark = new Int32Array(nSw).fill(-1);
  for (let x = 0; x < nSw; x++) {
    const N = nbr[x]!;
    for (let i = 0; i < N.length; i++) {
      const a = N[i]!;
      for (const y of nbr[a]!) mark[y] = a;
      for (let j = i + 1; j < N.length; j++) {
        const b = N[j]!;
        let square = false;
        for (const y of nbr[b]!) {
          if (y === x || mark[y] !== a) continue;
          square = true;
          uf.union(eid(x, a), eid(b, y));
          uf.union(eid(x, b), eid(a, y));
        }
        if (!square) uf.union(eid(x, a), eid(x, b));
      }
    }
  }
  const classOf = new Int32Array(nEdges);
  const classIdx = new Map<number, number>();
  for (let e = 0; e < nEdges; e++) {
    const r = uf.find(e);
    let c = classIdx.get(r);
    if (c === undefined) classIdx.set(r, (c = classIdx.size));
    classOf[e] = c;
  }
  const D = classIdx.size;
  if (D > Math.log2(nSw) + 1e-9) throw NA(`its links fall into ${D} dimension classes, more than a grid of ${nSw} switches can have`);
  const dims: number[] = [];
  const ring: boolean[] = [];
  const coord = new Int32Array(nSw * D);
  for (let c = 0; c < D; c++) {
    // Coordinate in dimension c: components of the links of the other dimensions.
    const vuf = new UnionFind(nSw);
    for (let e = 0; e < nEdges; e++) if (classOf[e] !== c) vuf.union(ends[2 * e]!, ends[2 * e + 1]!);
    const compIdx = new Map<number, number>();
    const compOf = new Int32Array(nSw);
    for (let s = 0; s < nSw; s++) {
      const r = vuf.find(s);
      let k = compIdx.get(r);
      if (k === undefined) compIdx.set(r, (k = compIdx.size));
      compOf[s] = k;
    }
    const n = compIdx.size;
    const qn: Set<number>[] = Array.from({ length: n }, () => new Set());
    for (let e = 0; e < nEdges; e++) {
      if (classOf[e] !== c) continue;
      const a = compOf[ends[2 * e]!]!;
      const b = compOf[ends[2 * e + 1]!]!;
      if (a === b) throw NA(`a link of dimension ${c} joins switches that the other dimensions already join: not a grid`);
      qn[a]!.add(b);
      qn[b]!.add(a);
    }
    let qEdges = 0;
    for (const q of qn) {
      if (q.size > 2) throw NA(`dimension ${c} is not a line or ring (a position has ${q.size} neighbours)`);
      qEdges += q.size;
    }
    qEdges /= 2;
    const isRing = n >= 3 && qEdges === n;
    if (!isRing && qEdges !== n - 1) throw NA(`dimension ${c} (${n} positions, ${qEdges} steps) is neither a line nor a ring`);
    let start = 0;
    if (!isRing) while (qn[start]!.size !== 1 && start < n - 1) start++;
    const pos = new Int32Array(n).fill(-1);
    let prev = -1;
    let cur = start;
    for (let k = 0; k < n; k++) {
      if (cur < 0 || pos[cur]! >= 0) throw NA(`dimension ${c} is not connected as a line or ring`);
      pos[cur] = k;
      let nx = -1;
      for (const y of qn[cur]!) if (y !== prev && pos[y]! < 0) {
        nx = y;
        break;
      }
      prev = cur;
      cur = nx;
    }
    for (let s = 0; s < nSw; s++) coord[s * D + c] = pos[compOf[s]!]!;
    dims.push(n);
    ring.push(isRing);
  }
  // Exact check: a bijection onto the grid, every link one step in its own dimension, none missing.
  let total = 1;
  for (const n of dims) total *= n;
  if (total !== nSw) throw NA(`coordinates ${dims.join('×')} = ${total} positions for ${nSw} switches`);
  const seen = new Set<number>();
  const flat = (s: number): number => {
    let k = 0;
    for (let i = D - 1; i >= 0; i--) k = k * dims[i]! + coord[s * D + i]!;
    return k;
  };
  for (let s = 0; s < nSw; s++) {
    const k = flat(s);
    if (seen.has(k)) throw NA(`two switches get the same grid position (${swName(ix, s)})`);
    seen.add(k);
  }
  let expected = 0;
  for (let i = 0; i < D; i++) expected += (nSw / dims[i]!) * (ring[i] ? dims[i]! : dims[i]! - 1);
  if (expected !== nEdges) throw NA(`a ${dims.join('×')} grid has ${expected} switch pairs linked, this fabric ${nEdges}`);
  for (let e = 0; e < nEdges; e++) {
    const a = ends[2 * e]!;
    const b = ends[2 * e + 1]!;
    let diff = 0;
    for (let i = 0; i < D; i++) {
      const d = Math.abs(coord[a * D + i]! - coord[b * D + i]!);
      if (d === 0) continue;
      if (d === 1 || (ring[i] && d === dims[i]! - 1)) diff++;
      else diff += 2;
    }
    if (diff !== 1) throw NA(`link ${swName(ix, a)} – ${swName(ix, b)} is not one step in one dimension`);
  }
  return { dims, ring, coord };
}

/** torus in steps: 'coordinates' (the grid: torusShape), 'paths' before the routes toward each
 *  destination switch with LIDs (dimension order), 'vls' (the SLs and per-port SL2VL tables). */
export function* torusSteps(fabric: Fabric, opts: RoutingOptions): Generator<RoutingPhase, RoutingResult, void> {
  checkLmc('torus', opts);
  const maxVls = opts.maxVls ?? 8;
  if (!Number.isInteger(maxVls) || maxVls < 1 || maxVls > 15) throw NA(`maxVls must be 1..15, got ${maxVls}`);
  yield 'coordinates';
  const ix = indexFabric(fabric);
  const shape = torusShape(ix);
  const dl = datelines(shape, maxVls);
  const lfts = emptyLfts(ix);
  yield* dimensionOrder(ix, shape, dl, lfts);
  yield 'vls';
  const { dims, ring } = shape;
  const { bitDims, wantBits, asLine } = dl;
  const vlsUsed = bitDims.length > 0 ? 2 : 1;
  const notes = [...ix.warnings];
  notes.push(`${dims.map((n, i) => `${n}${ring[i] ? '' : ' (line)'}`).join(' × ')} ${ring.some((r) => r) ? 'torus' : 'mesh'}; ${vlsUsed} VL(s): dateline SL bit for ring(s) ${bitDims.map((i) => `dimension ${i}`).join(', ') || 'none'}`);
  if (asLine.length > 0) notes.push(`${asLine.length} ring(s) routed as lines (not over their wrap-around link): ${maxVls} VL(s) give dateline bits for ${bitDims.length} of ${wantBits.length} ring(s) of 4 or more`);
  return {
    engine: 'torus',
    lfts: lftMap(ix, lfts),
    maxLid: ix.maxLid,
    // Routes on one VL (no ring needs a dateline) need no SLs: QoS's apply then.
    ...(vlsUsed > 1 ? { sl: datelineSl(ix, shape, dl), slBySourceSwitch: true, sl2vl: new Array<number>(16).fill(0), sl2vlByPorts: datelineSl2Vl(fabric, ix, shape, dl.bitOf) } : {}),
    vlsUsed,
    deadlockFree: true,
    notes,
  };
}

/** Which rings get a dateline SL bit, and the way round a route takes in each dimension. */
interface Datelines {
  /** The SL bit of each dimension, −1 for none. */
  bitOf: Int32Array;
  /** The rings that need a bit (n ≥ 4), largest first. */
  wantBits: number[];
  /** Those that have one (up to 4, 16 SLs, with 2 VLs or more). */
  bitDims: number[];
  /** Those routed as lines (never over their wrap-around link) for want of a bit. */
  asLine: number[];
  /** Direction (+1 or −1) from coordinate a to b ≠ a in dimension i, at a switch whose other
   *  coordinates sum to `other`. */
  dir(i: number, a: number, b: number, other: number): number;
}

function datelines({ dims, ring }: TorusShape, maxVls: number): Datelines {
  const D = dims.length;
  // Rings that need a dateline bit (n ≥ 4), largest first: all of them (up to 4, 16 SLs) with 2 VLs.
  const bitOf = new Int32Array(D).fill(-1);
  const wantBits = dims.map((n, i) => i).filter((i) => ring[i] && dims[i]! >= 4).sort((a, b) => dims[b]! - dims[a]! || a - b);
  const haveBits = maxVls >= 2 ? Math.min(4, wantBits.length) : 0;
  wantBits.slice(0, haveBits).forEach((i, b) => (bitOf[i] = b));
  /** Whether routes may use the wrap-around link of dimension i. */
  const wraps = dims.map((n, i) => ring[i]! && (n === 3 || bitOf[i]! >= 0));
  const dir = (i: number, a: number, b: number, other: number): number => {
    const n = dims[i]!;
    if (!wraps[i]) return b > a ? 1 : -1;
    const fwd = (b - a + n) % n;
    if (2 * fwd < n) return 1;
    if (2 * fwd > n) return -1;
    return (other + b) % 2 === 0 ? 1 : -1;
  };
  return { bitOf, wantBits, bitDims: wantBits.slice(0, haveBits), asLine: wantBits.slice(haveBits), dir };
}

/** The dimension-order routes into `lfts`: 'paths' before each destination switch with LIDs. */
function* dimensionOrder(ix: FabricIndex, { dims, ring, coord }: TorusShape, { dir }: Datelines, lfts: Uint8Array[]): Generator<RoutingPhase, void, void> {
  const { nSw, adjStart, adjSw, adjPort, ends } = ix;
  const D = dims.length;
  // Channels from each switch one step in each dimension and direction (parallel links kept).
  const step: number[][] = Array.from({ length: nSw * D * 2 }, () => []);
  for (let s = 0; s < nSw; s++) {
    for (let e = adjStart[s]!; e < adjStart[s + 1]!; e++) {
      const t = adjSw[e]!;
      for (let i = 0; i < D; i++) {
        const a = coord[s * D + i]!;
        const b = coord[t * D + i]!;
        if (a === b) continue;
        const plus = ring[i] ? b === (a + 1) % dims[i]! : b > a;
        step[(s * D + i) * 2 + (plus ? 0 : 1)]!.push(e);
        break;
      }
    }
  }
  const tc = new Int32Array(D);
  for (let T = 0; T < nSw; T++) {
    const lids: number[] = [];
    const deliver: number[] = [];
    for (let k = ix.endsStart[T]!; k < ix.endsStart[T + 1]!; k++) {
      const ep = ends[ix.endsOfSw[k]!]!;
      for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) {
        lids.push(d);
        deliver.push(ep.swPort);
      }
    }
    if (lids.length === 0) continue;
    yield 'paths';
    for (let i = 0; i < D; i++) tc[i] = coord[T * D + i]!;
    for (let j = 0; j < lids.length; j++) lfts[T]![lids[j]!] = deliver[j]!;
    for (let s = 0; s < nSw; s++) {
      if (s === T) continue;
      let i = 0;
      while (coord[s * D + i] === tc[i]) i++;
      let other = 0;
      for (let j = 0; j < D; j++) if (j !== i) other += coord[s * D + j]!;
      const d = dir(i, coord[s * D + i]!, tc[i]!, other);
      const chans = step[(s * D + i) * 2 + (d > 0 ? 0 : 1)]!;
      if (chans.length === 0) throw NA(`switch ${swName(ix, s)} has no link in dimension ${i} direction ${d > 0 ? '+' : '−'}`);
      const lft = lfts[s]!;
      for (let j = 0; j < lids.length; j++) lft[lids[j]!] = adjPort[chans[(lids[j]! >> 0) % chans.length]!]!;
    }
  }
}

/** The SL of a route: one bit per dateline ring it crosses, from the two switches' coordinates. */
function datelineSl(ix: FabricIndex, { dims, coord }: TorusShape, { bitDims, bitOf, dir }: Datelines): (slid: number, dlid: number) => number {
  const D = dims.length;
  const L = ix.maxLid + 1;
  const lidSw = new Int32Array(L).fill(-1);
  for (const ep of ix.ends) if (ep.sw >= 0) for (let d = ep.lid; d < ep.lid + (1 << ep.lmc); d++) lidSw[d] = ep.sw;
  return (slid: number, dlid: number): number => {
    if (bitDims.length === 0 || slid < 0 || slid >= L || dlid < 0 || dlid >= L) return 0;
    const S = lidSw[slid]!;
    const T = lidSw[dlid]!;
    if (S < 0 || T < 0 || S === T) return 0;
    let v = 0;
    for (const i of bitDims) {
      const a = coord[S * D + i]!;
      const b = coord[T * D + i]!;
      if (a === b) continue;
      // At the start of segment i: dimensions before i are at T's coordinates, after i at S's.
      let other = 0;
      for (let j = 0; j < D; j++) if (j !== i) other += j < i ? coord[T * D + j]! : coord[S * D + j]!;
      const d = dir(i, a, b, other);
      if ((d > 0 && b < a) || (d < 0 && b > a)) v |= 1 << bitOf[i]!;
    }
    return v;
  };
}

/** Each switch's SL2VL by (in port, out port): VL 1 on a ring's dateline link, and on a hop that
 * continues in the ring (in port of the same dimension) on the far side of the dateline with
 * the ring's SL bit set; VL 0 otherwise. A crossing segment of a ring of n is at most ⌊n/2⌋ hops,
 * so going + it starts at a coordinate ≥ ⌈n/2⌉ and ends < ⌈n/2⌉: a + hop out of coordinate c
 * has crossed iff c < ⌈n/2⌉ (going −, mirrored: iff c ≥ ⌊n/2⌋). */
function datelineSl2Vl(fabric: Fabric, ix: FabricIndex, shape: TorusShape, bitOf: Int32Array): Map<number, PortSl2Vl> {
  const { dims, coord } = shape;
  const D = dims.length;
  const out = new Map<number, PortSl2Vl>();
  for (let s = 0; s < ix.nSw; s++) {
    const node = ix.swNode[s]!;
    const stride = fabric.nodes[node]!.ports.length;
    // Per port: dimension (−1: not a switch link), direction, whether it is the dateline link.
    const pDim = new Int32Array(stride).fill(-1);
    const pPlus = new Uint8Array(stride);
    const pWrap = new Uint8Array(stride);
    for (let e = ix.adjStart[s]!; e < ix.adjStart[s + 1]!; e++) {
      const t = ix.adjSw[e]!;
      const p = ix.adjPort[e]!;
      for (let i = 0; i < D; i++) {
        const a = coord[s * D + i]!;
        const b = coord[t * D + i]!;
        if (a === b) continue;
        const n = dims[i]!;
        const plus = shape.ring[i] ? b === (a + 1) % n : b > a;
        pDim[p] = i;
        pPlus[p] = plus ? 1 : 0;
        pWrap[p] = shape.ring[i] && (plus ? a === n - 1 : a === 0) ? 1 : 0;
        break;
      }
    }
    const vl = new Uint8Array(stride * stride * 16);
    for (let q = 1; q < stride; q++) {
      const i = pDim[q]!;
      if (i < 0 || bitOf[i]! < 0) continue;
      const n = dims[i]!;
      const c = coord[s * D + i]!;
      const far = pPlus[q] ? c < Math.ceil(n / 2) : c >= Math.floor(n / 2);
      const bit = 1 << bitOf[i]!;
      for (let p = 0; p < stride; p++) {
        if (p === q) continue;
        const o = (p * stride + q) * 16;
        if (pWrap[q]) vl.fill(1, o, o + 16);
        else if (far && pDim[p] === i) for (let sl = 0; sl < 16; sl++) if (sl & bit) vl[o + sl] = 1;
      }
    }
    out.set(node, { stride, vl });
  }
  return out;
}

export const torus: RoutingEngine = steppedEngine({
  name: 'torus',
  description: 'tori and meshes (detected): dimension-order routes, deadlock-free on 2 VLs with datelines (per-port SL2VL; meshes on 1)',
  steps: torusSteps,
});

export const routeTorus = torus.route;

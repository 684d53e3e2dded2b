/** ftree's candidates toward one destination switch T: the switches with an up/down route to T,
 *  their distance and candidate ports (prepare), the weighted rotation of a degraded tree, the
 *  down-then-up fallback of switches without an up/down route, and the port a switch takes for a
 *  destination index (pick). The fields are the state of the current T (its epoch `tEpoch`). */
import { csr, type FabricIndex } from './graph.js';
import { downClasses, switchClasses, type SwitchClasses } from './ftree-classes.js';
import type { FatTreeShape } from './ftree-shape.js';

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

export class FtreeCandidates {
  readonly nSw: number;
  /** Up and down entries of each switch as flat arrays (the hot loops run once per destination
   *  switch), and the switch and port each leads to (one load less in the loops over them). */
  readonly upStart: Int32Array;
  readonly upList: Int32Array;
  readonly downStart: Int32Array;
  readonly downList: Int32Array;
  readonly upSw: Int32Array;
  readonly upPort: Uint8Array;
  readonly downSw: Int32Array;
  /** Switches by level, and each switch's position in its level (the rotation offset). */
  readonly byLevel: number[][];
  readonly sigma: Int32Array;
  /** Per switch: destination index i takes candidate (floor(i / div) + sigma) mod count. On a
   *  regular tree, destination-mod-k: sigma 0 and div the product of the up-link counts of the
   *  levels below (level 0: 1), so every switch of a level splits the destinations alike, by
   *  their digit of that level: a shift pattern whose hosts are in the destination order then
   *  meets no other flow on any link (a non-blocking tree carries it at full rate). On a degraded
   *  tree div 1 and sigma the switch's position in its level: the routes to one destination leave
   *  the switches of a level over every up link in turn. */
  readonly div: Int32Array;
  /** In a degraded tree the candidates of a switch may lead to parents with fewer onward links
   *  (a spine that lost a core): there the rotation is weighted by each candidate's own number of
   *  candidates, interleaved (smooth weighted round robin), so traffic follows capacity. */
  readonly weighted: boolean;
  private readonly ancStamp: Int32Array;
  /** Switches with an up/down route to T (stamped with T's epoch), listed in `rList[0 .. nR-1]`:
   *  T's ancestors first (nearest first, `nAnc` of them), then the switches below them, by level
   *  from the top. */
  readonly inR: Int32Array;
  readonly rList: Int32Array;
  nR = 0;
  nAnc = 0;
  tEpoch = 0;
  /** Per switch: hops to T (−1: no route yet), and its candidates candPort[candLo .. candHi)
   *  (their channels in `cand` when weighted). */
  readonly dist: Int32Array;
  readonly candLo: Int32Array;
  readonly candHi: Int32Array;
  private readonly cand: Int32Array;
  readonly candPort: Uint8Array;
  private readonly queue: Int32Array;
  private readonly cls: SwitchClasses;
  /** Switches by their down links (switch and port, in order), for the ancestors' candidates,
   *  and per down class the candidates computed for the current T. */
  private readonly downClass: Int32Array;
  private readonly dcStamp: Int32Array;
  private readonly dcWant: Int32Array;
  private readonly dcLo: Int32Array;
  private readonly dcHi: Int32Array;
  /** Per switch: the version of its candidate list (its class's; −1 for an ancestor of T). */
  readonly swVer: Int32Array;
  /** Weighted rotation: per switch its sequence seq[seqLo .. seqHi) of candidate indices. */
  private readonly seqLo: Int32Array;
  private readonly seqHi: Int32Array;
  private seq = new Uint8Array(0);
  private readonly bfsStamp: Int32Array;
  /** Per switch outside T's part: the port of its down-then-up route (fallback). */
  readonly fallbackPort: Uint8Array;
  /** Routes that go down then up, counted for the notes. */
  downUpRoutes = 0;

  constructor(
    private readonly ix: FabricIndex,
    shape: FatTreeShape,
  ) {
    const nSw = (this.nSw = ix.nSw);
    const { adjSw, adjPort } = ix;
    const nE = ix.adjStart[nSw]!;
    ({ start: this.upStart, list: this.upList } = csr(shape.up));
    ({ start: this.downStart, list: this.downList } = csr(shape.down));
    this.upSw = this.upList.map((e) => adjSw[e]!);
    this.upPort = Uint8Array.from(this.upList, (e) => adjPort[e]!);
    this.downSw = this.downList.map((e) => adjSw[e]!);
    this.byLevel = Array.from({ length: shape.levels }, () => []);
    this.sigma = new Int32Array(nSw);
    for (let s = 0; s < nSw; s++) this.sigma[s] = this.byLevel[shape.level[s]!]!.push(s) - 1;
    this.weighted = shape.irregular.length > 0;
    this.div = new Int32Array(nSw).fill(1);
    if (!this.weighted && this.destinationModK(ix)) {
      this.sigma.fill(0);
      let d = 1;
      for (const level of this.byLevel) {
        for (const s of level) this.div[s] = d;
        d *= this.upCount(level[0]!);
      }
    }
    this.ancStamp = new Int32Array(nSw).fill(-1);
    this.inR = new Int32Array(nSw).fill(-1);
    this.rList = new Int32Array(nSw);
    this.dist = new Int32Array(nSw);
    this.candLo = new Int32Array(nSw);
    this.candHi = new Int32Array(nSw);
    this.cand = new Int32Array(nE + nSw);
    this.candPort = new Uint8Array(nE + nSw);
    this.queue = new Int32Array(nSw);
    this.cls = switchClasses(nSw, shape.level, this.upStart, this.upSw, this.upPort, this.downStart, this.downSw);
    this.downClass = downClasses(nSw, this.downStart, this.downList, adjSw, adjPort);
    this.dcStamp = new Int32Array(nSw).fill(-1);
    this.dcWant = new Int32Array(nSw);
    this.dcLo = new Int32Array(nSw);
    this.dcHi = new Int32Array(nSw);
    this.swVer = new Int32Array(nSw).fill(-1);
    this.seqLo = new Int32Array(nSw);
    this.seqHi = new Int32Array(nSw);
    this.bfsStamp = new Int32Array(nSw).fill(-1);
    this.fallbackPort = new Uint8Array(nSw);
  }

  /** Distances and candidates toward T, for T's ancestors and the switches below them (the only
   *  ones with up/down routes to T). Ancestors of T (switches that reach it going down) may go
   *  down to a child one hop nearer; every other switch goes up to a parent one hop nearer along
   *  up/down routes. Shared by all LIDs delivered by T. Writes every per-T field (the weighted
   *  rotation's sequences only with `weights`). */
  prepare(T: number, weights = true): void {
    const ep = ++this.tEpoch;
    this.ancestors(T, ep);
    const k = this.ancestorCandidates(ep);
    this.belowCandidates(ep, k);
    if (weights) this.buildWeights();
  }

  /** T's ancestors by BFS up from T: `dist`, stamps, rList[0 .. nAnc). */
  private ancestors(T: number, ep: number): void {
    const { dist, ancStamp, inR, queue, upStart, upSw, rList } = this;
    dist.fill(-1);
    dist[T] = 0;
    ancStamp[T] = ep;
    inR[T] = ep;
    let nR = 0;
    let h = 0;
    let t = 0;
    queue[t++] = T;
    while (h < t) {
      const s = queue[h++]!;
      const ds = dist[s]! + 1;
      for (let j = upStart[s]!, end = upStart[s + 1]!; j < end; j++) {
        const p = upSw[j]!;
        if (ancStamp[p] !== ep) {
          ancStamp[p] = ep;
          inR[p] = ep;
          dist[p] = ds;
          queue[t++] = p;
          rList[nR++] = p;
        }
      }
    }
    this.nR = this.nAnc = nR;
  }

  /** Ancestors: down to children one hop nearer that are ancestors too (or T). Switches with the
   *  same down links at the same distance have the same candidates: computed once. Returns the
   *  candidates' end. */
  private ancestorCandidates(ep: number): number {
    const { rList, swVer, dist, downClass, dcStamp, dcWant, dcLo, dcHi, candLo, candHi, downStart, downList, candPort, cand, ancStamp, weighted } = this;
    const { adjSw, adjPort } = this.ix;
    let k = 0;
    for (let i = 0; i < this.nAnc; i++) {
      const s = rList[i]!;
      swVer[s] = -1;
      const want = dist[s]! - 1;
      const dc = downClass[s]!;
      if (dcStamp[dc] === ep && dcWant[dc] === want) {
        candLo[s] = dcLo[dc]!;
        candHi[s] = dcHi[dc]!;
        continue;
      }
      candLo[s] = k;
      for (let j = downStart[s]!, end = downStart[s + 1]!; j < end; j++) {
        const e = downList[j]!;
        const r = adjSw[e]!;
        if (dist[r] === want && ancStamp[r] === ep) {
          candPort[k] = adjPort[e]!;
          if (weighted) cand[k] = e;
          k++;
        }
      }
      candHi[s] = k;
      dcStamp[dc] = ep;
      dcWant[dc] = want;
      dcLo[dc] = candLo[s]!;
      dcHi[dc] = k;
    }
    return k;
  }

  /** Everything below T and its ancestors (a switch with a parent in the part), by level from the
   *  top: up to the nearest parents (distance and candidates in one scan), from candidate k on.
   *  Once per class: its members have the same parents and up links. Appends to rList. */
  private belowCandidates(ep: number, k: number): void {
    const { cls, inR, upStart, upSw, upPort, upList, dist, candPort, cand, weighted, rList, candLo, candHi, swVer } = this;
    const { order, parStart, parList, memStart, memList, ver, pat, patN, width } = cls;
    let nR = this.nR;
    for (let ci = 0; ci < order.length; ci++) {
      const c = order[ci]!;
      let any = false;
      for (let j = parStart[c]!, end = parStart[c + 1]!; j < end && !any; j++) any = inR[parList[j]!] === ep;
      if (!any) continue;
      const s0 = memList[memStart[c]!]!;
      const lo = k;
      let best = -1;
      for (let j = upStart[s0]!, end = upStart[s0 + 1]!; j < end; j++) {
        const dp = dist[upSw[j]!]!;
        if (dp < 0) continue;
        if (best < 0 || dp < best) {
          best = dp;
          k = lo;
        }
        if (dp === best) {
          candPort[k] = upPort[j]!;
          if (weighted) cand[k] = upList[j]!;
          k++;
        }
      }
      // best ≥ 0: a parent is in the part and has a distance (−1 only with one-sided links)
      const d = best + 1;
      // The list's version changes when its ports do (RunWriter extends runs of equal lists).
      const n = k - lo;
      let same = n === patN[c];
      for (let x = 0; x < n && same; x++) same = pat[c * width + x] === candPort[lo + x];
      if (!same) {
        ver[c] = ++cls.versions;
        patN[c] = n;
        pat.set(candPort.subarray(lo, k), c * width);
      }
      for (let j = memStart[c]!, end = memStart[c + 1]!; j < end; j++) {
        const s = memList[j]!;
        if (inR[s] === ep) continue; // T or an ancestor
        inR[s] = ep;
        rList[nR++] = s;
        candLo[s] = lo;
        candHi[s] = k;
        dist[s] = d;
        swVer[s] = ver[c]!;
      }
    }
    this.nR = nR;
  }

  /** Weighted rotation (degraded trees only): per switch of the part with candidates of unequal
   *  onward counts, its smooth weighted round robin sequence (seq, seqLo, seqHi). */
  private buildWeights(): void {
    if (!this.weighted) return;
    const { rList, seqLo, seqHi, candLo, candHi, cand, inR, tEpoch } = this;
    const adjSw = this.ix.adjSw;
    const parts: Uint8Array[] = [];
    let total = 0;
    const w: number[] = [];
    for (let i = 0; i < this.nR; i++) {
      const s = rList[i]!;
      seqLo[s] = seqHi[s] = total;
      const a = candLo[s]!;
      const n = candHi[s]! - a;
      if (n < 2) continue;
      w.length = 0;
      let g = 0;
      let same = true;
      for (let k = 0; k < n; k++) {
        const r = adjSw[cand[a + k]!]!;
        const c = Math.max(1, inR[r] === tEpoch ? candHi[r]! - candLo[r]! : 1);
        w.push(c);
        g = gcd(g, c);
        if (c !== w[0]) same = false;
      }
      if (same) continue;
      const out = smoothRoundRobin(w, g);
      parts.push(out);
      total += out.length;
      seqHi[s] = total;
    }
    const seq = (this.seq = new Uint8Array(total));
    let off = 0;
    for (const p of parts) {
      seq.set(p, off);
      off += p.length;
    }
  }

  private upCount(s: number): number {
    return this.upStart[s + 1]! - this.upStart[s]!;
  }

  /** Destination-mod-k where it splits the destinations evenly: a regular tree without parallel
   *  links whose leaves each have a multiple of their up-link count of CA ports, and whose CA
   *  ports are a multiple of the product of every level's up-link count. Elsewhere (a leaf with 12
   *  hosts and 8 up-links) it would send every route to one destination down one of the leaf's
   *  links, and the leaf's links would carry 1 or 2 destinations' routes, where the rotation by
   *  position spreads them: that keeps the routes per link at the bound there. */
  private destinationModK(ix: FabricIndex): boolean {
    let total = 0;
    let prod = 1;
    for (const level of this.byLevel) prod *= Math.max(1, this.upCount(level[0]!));
    const seen = new Int32Array(this.nSw).fill(-1);
    for (let s = 0; s < this.nSw; s++) {
      const k = this.upCount(s);
      for (let e = this.upStart[s]!; e < this.upStart[s + 1]!; e++) {
        const p = this.upSw[e]!;
        if (seen[p] === s) return false; // parallel links
        seen[p] = s;
      }
      const cas = ix.caCount[s]!;
      if (cas > 0 && (k === 0 || cas % k !== 0)) return false;
      total += cas;
    }
    return total % prod === 0;
  }

  /** The port switch s takes for destination index i. */
  pick(s: number, i: number): number {
    const { candLo, candHi, candPort, seqLo, seqHi, sigma } = this;
    const a = candLo[s]!;
    const W = this.weighted ? seqHi[s]! - seqLo[s]! : 0;
    const r = Math.floor(i / this.div[s]!) + sigma[s]!;
    if (W > 0) return candPort[a + this.seq[seqLo[s]! + (r % W)]!]!;
    return candPort[a + (r % (candHi[s]! - a))]!;
  }

  /** The switches with CAs that a BFS down from T and its ancestors (in their order) finds
   *  (after prepare(T)), at most `max`, in discovery order: the first is the CA switch nearest
   *  the front of T's part; none: empty. */
  caSwitchesBelow(T: number, max: number): number[] {
    const out: number[] = [];
    const { queue, bfsStamp, rList, downStart, downSw } = this;
    const ep = this.tEpoch;
    let h = 0;
    let t = 0;
    queue[t++] = T;
    bfsStamp[T] = ep;
    for (let i = 0; i < this.nAnc; i++) {
      queue[t++] = rList[i]!;
      bfsStamp[rList[i]!] = ep;
    }
    while (h < t) {
      const x = queue[h++]!;
      for (let j = downStart[x]!, end = downStart[x + 1]!; j < end; j++) {
        const c = downSw[j]!;
        if (bfsStamp[c] === ep) continue;
        bfsStamp[c] = ep;
        if (this.ix.caCount[c]! > 0 && out.push(c) >= max) return out;
        queue[t++] = c;
      }
    }
    return out;
  }

  /** Switches without an up/down route to T (after prepare). */
  outside(): number[] {
    const out: number[] = [];
    for (let s = 0; s < this.nSw; s++) if (this.inR[s] !== this.tEpoch) out.push(s);
    return out;
  }

  /** Switch LIDs only: switches with no up/down route (other top switches, and switches below only
   *  them) take a shortest path through routed switches (down, then up). Writes `fallbackPort`,
   *  `dist` and `downUpRoutes`. */
  fallback(deferred: number[]): void {
    const { adjStart, adjSw, adjPort } = this.ix;
    const dist = this.dist;
    // Rounds: a pending switch next to one with a route takes it (one hop longer), so every
    // route still ends at T without a loop.
    let pending = deferred;
    while (pending.length > 0) {
      const left: number[] = [];
      for (const y of pending) {
        let best = -1;
        for (let e = adjStart[y]!; e < adjStart[y + 1]!; e++) {
          const x = adjSw[e]!;
          if (dist[x]! >= 0 && (best < 0 || dist[x]! < dist[adjSw[best]!]!)) best = e;
        }
        if (best < 0) left.push(y);
        else {
          this.fallbackPort[y] = adjPort[best]!;
          dist[y] = dist[adjSw[best]!]! + 1;
          this.downUpRoutes++;
        }
      }
      if (left.length === pending.length) break; // not connected: left without a route
      pending = left;
    }
  }
}

/** The interleaved sequence of candidate indices for weights w (divided by their gcd g in place):
 *  each index k appears w[k] times, spread evenly (smooth weighted round robin). */
function smoothRoundRobin(w: number[], g: number): Uint8Array {
  const n = w.length;
  let W = 0;
  for (let k = 0; k < n; k++) W += (w[k]! /= g);
  const out = new Uint8Array(W);
  const cur: number[] = [];
  for (let k = 0; k < n; k++) cur.push(0);
  for (let j = 0; j < W; j++) {
    let best = 0;
    for (let k = 0; k < n; k++) {
      cur[k]! += w[k]!;
      if (cur[k]! > cur[best]!) best = k;
    }
    cur[best]! -= W;
    out[j] = best;
  }
  return out;
}

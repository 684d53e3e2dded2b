/**
 * ftree on a regular 3-level tree whose leaves hold more CAs than a multiple of their up links
 * (ft3-large: 12 CAs on 8 up links, issue #35): each destination's routes from the other pods come
 * down one path, as destination-mod-k's do, while every leaf link stays within SPLIT_SLACK of the
 * optimum (issue #17).
 *
 * Why: in a random bisection each host receives one flow. When every route to a destination comes
 * down one path (one top switch, one spine), a link down carries at most as many flows as it has
 * destinations; the rotation by position (ftree-candidates.ts) spreads each destination's routes
 * over every link down, and a random permutation then meets more flows there (ft3-large: EBB 0.226
 * against OpenSM ftree's 0.239, scripts/bench/README.md). Intra-pod routes must come down the same
 * spine as the rest (moving them elsewhere costs more than the split below).
 *
 * The rule, for the n = q·k + r CAs of a leaf T with k up links (0 < r ≤ k/2), ρ its position in
 * its level, y_a the a-th spine of its pod (in the port order of the pod's first leaf: the leaves
 * of a pod count alike, whatever their own port numbers):
 * - CA h < q·k is whole: every route to it comes down y_a, a = (h + ρ) mod k;
 * - CA h = q·k + e (the r extra ones) is split over two spines: y_{a1}, a1 = (2e + ρ) mod k, takes
 *   the routes of the m nearest other pods (by pod number, after T's), y_{a2}, a2 = a1 + 1 mod k,
 *   those of the other pods and of T's own pod. m is the most pods that keep the heavy link within
 *   SPLIT_SLACK × the optimum (n·(N − n)/k routes per leaf link, N the CAs): 5 of 7 on ft3-large
 *   (2,484 routes, the optimum 2,286, the bound of test/routing-ftree.test.ts 2,515).
 * - the top switch of each destination (whole, heavy part, light part) is dealt over the spine's
 *   up links in turn per kind, so every spine-to-core link carries the same number of destinations
 *   (the lower bound exactly);
 * - a leaf of another pod goes up to its spine below that top switch; that spine up to it; the
 *   other switches of T's part take ftree's rotation (no CA route crosses them).
 * Routes stay shortest and up/down (deadlock-free on one VL). Elsewhere (2 levels, other shapes,
 * LMC > 0, CN/IO groups) ftree rotates as before: on a 2-level tree whole destinations would move
 * with a failed leaf link (the incremental re-route of test/reroute-incremental.test.ts's
 * 432-host tree: 45 of 288 LFT blocks instead of 12).
 */
import type { FabricIndex } from './graph.js';
import type { FtreeCandidates } from './ftree-candidates.js';

/** The busiest leaf link the split may reach, over the optimum (issue #17's tolerance). */
export const SPLIT_SLACK = 1.1;

export class FtreeSplit {
  /** Leaves routed by the split (for the notes). */
  leaves = 0;
  /** Per (spine, kind: whole, heavy, light): destinations dealt to its up links so far. */
  private readonly dealt: Int32Array;

  private constructor(
    private readonly c: FtreeCandidates,
    private readonly k: number,
    private readonly q: number,
    private readonly nPods: number,
    /** Pods a heavy part takes (the nearest after the destination's). */
    private readonly m: number,
    /** Pod of each leaf and spine (−1 for the top). */
    private readonly pod: Int32Array,
    /** The child of top switch t in pod P: childIn[t · nPods + P] (−1 for the others). */
    private readonly childIn: Int32Array,
    /** Leaves by pod, their spines (in the first leaf's port order), and each spine's position
     *  there: every leaf of a pod counts its spines alike, whatever its own port numbers. */
    private readonly podLeaves: number[][],
    private readonly podSpines: number[][],
    private readonly spinePos: Int32Array,
  ) {
    this.dealt = new Int32Array(c.nSw * 3);
    // Per leaf, the port up to the spine at each position of its pod.
    this.portAt = new Uint8Array(c.nSw * k);
    for (const s of c.byLevel[0]!) for (let j = c.upStart[s]!; j < c.upStart[s + 1]!; j++) this.portAt[s * k + spinePos[c.upSw[j]!]!] = c.upPort[j]!;
    const a = this.portAt;
    this.samePorts = podLeaves.map((ls) => ls.every((s) => a.subarray(s * k, s * k + k).every((p, j) => p === a[ls[0]! * k + j])));
  }

  private readonly portAt: Uint8Array;
  /** Per pod: its leaves' up ports to each spine are numbered alike. */
  private readonly samePorts: boolean[];

  /** The split where the tree fits the rule, else undefined (ftree rotates). */
  static plan(ix: FabricIndex, c: FtreeCandidates): FtreeSplit | undefined {
    const { byLevel, upStart, upSw, downStart, downSw } = c;
    if (c.weighted || byLevel.length !== 3 || c.div[byLevel[1]![0]!]! !== 1) return undefined;
    if (ix.ends.some((ep) => !ep.isSwitch && ep.lmc > 0)) return undefined;
    const [leaves, spines, tops] = byLevel as [number[], number[], number[]];
    const ups = (s: number): number[] => Array.from(upSw.subarray(upStart[s]!, upStart[s + 1]!));
    const n = ix.caCount[leaves[0]!]!;
    const k = upStart[leaves[0]! + 1]! - upStart[leaves[0]!]!;
    const q = Math.floor(n / k);
    const r = n - q * k;
    if (q < 1 || r === 0 || 2 * r > k) return undefined;
    // Pods: leaves with the same spines; every spine below one pod.
    const pod = new Int32Array(c.nSw).fill(-1);
    const podOf = new Map<string, number>();
    const size: number[] = [];
    const podLeaves: number[][] = [];
    const podSpines: number[][] = [];
    const spinePos = new Int32Array(c.nSw).fill(-1);
    for (const s of leaves) {
      const p = ups(s);
      if (ix.caCount[s] !== n || p.length !== k || new Set(p).size !== k) return undefined;
      const key = [...p].sort((a, b) => a - b).join(',');
      let id = podOf.get(key);
      if (id === undefined) {
        podOf.set(key, (id = size.push(0) - 1));
        podLeaves.push([]);
        podSpines.push(p);
        p.forEach((x, j) => (spinePos[x] = j));
      }
      size[id]!++;
      podLeaves[id]!.push(s);
      pod[s] = id;
      for (const x of p) {
        if (pod[x] !== -1 && pod[x] !== id) return undefined;
        pod[x] = id;
      }
    }
    const nPods = size.length;
    if (nPods < 2 || size.some((x) => x !== size[0])) return undefined;
    for (const x of spines) if (pod[x] === -1 || new Set(ups(x)).size !== ups(x).length) return undefined;
    // Every top switch has exactly one child in every pod.
    const childIn = new Int32Array(c.nSw * nPods).fill(-1);
    for (const t of tops) {
      for (let j = downStart[t]!; j < downStart[t + 1]!; j++) {
        const x = downSw[j]!;
        if (childIn[t * nPods + pod[x]!]! !== -1) return undefined;
        childIn[t * nPods + pod[x]!] = x;
      }
      for (let p = 0; p < nPods; p++) if (childIn[t * nPods + p]! < 0) return undefined;
    }
    // The heavy part's pods: as many as keep the heavy leaf link within the slack.
    const N = n * leaves.length;
    const podCas = n * size[0]!;
    const cap = (SPLIT_SLACK * n * (N - n)) / k;
    const whole = q * (N - n);
    const m = Math.min(nPods - 1, Math.floor((cap - whole) / podCas));
    if (m < 1 || whole + (nPods - 1 - m) * podCas + podCas - n > cap) return undefined;
    return new FtreeSplit(c, k, q, nPods, m, pod, childIn, podLeaves, podSpines, spinePos);
  }

  /** Route leaf T's CA LIDs (`lids`, in its port order; destination indices from i0) at every
   *  switch of T's part (after c.prepare(T)), T's own entries excepted. Row by row: a switch's
   *  entries for T's LIDs together. */
  route(T: number, lids: readonly number[], i0: number, lfts: Uint8Array[]): void {
    const { c, k, q, nPods, m, pod, childIn, dealt, podLeaves, spinePos, portAt } = this;
    const spines = this.podSpines[pod[T]!]!;
    const { rList, nR, upStart, upSw, upPort, candHi, candLo, candPort, sigma } = c;
    const n = lids.length;
    const rho = sigma[T]!;
    const Q = pod[T]!;
    /** The top switch above spine y for the next destination of this kind. */
    const top = (y: number, kind: number): number => {
      const u = upStart[y + 1]! - upStart[y]!;
      return upSw[upStart[y]! + (dealt[y * 3 + kind]!++ % u)]!;
    };
    // Per CA: the spine T's own pod comes down, the top switches of its light and heavy part
    // (whole CAs: the light one only).
    const yIn = new Int32Array(n);
    const light = new Int32Array(n);
    const heavy = new Int32Array(n).fill(-1);
    for (let h = 0; h < n; h++) {
      if (h < q * k) {
        yIn[h] = spines[(h + rho) % k]!;
        light[h] = top(yIn[h]!, 0);
      } else {
        const e = h - q * k;
        heavy[h] = top(spines[(2 * e + rho) % k]!, 1);
        yIn[h] = spines[(2 * e + 1 + rho) % k]!;
        light[h] = top(yIn[h]!, 2);
      }
    }
    // The spines and top switches (the leaves below): ftree's rotation (one candidate down toward
    // T; up where no CA route goes)
    for (let x = 0; x < nR; x++) {
      const s = rList[x]!;
      const a = candLo[s]!;
      const nc = candHi[s]! - a;
      if (nc <= 0 || (pod[s]! >= 0 && spinePos[s]! < 0)) continue;
      const row = lfts[s]!;
      for (let h = 0, r = (i0 + sigma[s]!) % nc; h < n; h++, r = r + 1 === nc ? 0 : r + 1) row[lids[h]!] = candPort[a + r]!;
    }
    // Every leaf up to the spine below its pod's top switch; that spine up to it.
    const at = new Int32Array(n);
    const pat = new Uint8Array(n);
    let consecutive = true;
    for (let h = 1; h < n && consecutive; h++) consecutive = lids[h] === lids[0]! + h;
    for (let P = 0; P < nPods; P++) {
      const heavyHere = (P - Q + nPods) % nPods <= m;
      for (let h = 0; h < n; h++) {
        if (P === Q) {
          at[h] = spinePos[yIn[h]!]!;
          continue;
        }
        for (const u of heavy[h]! >= 0 ? [heavy[h]!, light[h]!] : [light[h]!]) {
          const x = childIn[u * nPods + P]!;
          for (let j = upStart[x]!; j < upStart[x + 1]!; j++) if (upSw[j] === u) lfts[x]![lids[h]!] = upPort[j]!;
        }
        at[h] = spinePos[childIn[(heavyHere && heavy[h]! >= 0 ? heavy[h]! : light[h]!) * nPods + P]!]!;
      }
      // Leaves numbering their up ports alike (the generators' trees) share one pattern.
      const leaves = podLeaves[P]!;
      const same = consecutive && this.samePorts[P]!;
      if (same) for (let h = 0; h < n; h++) pat[h] = portAt[leaves[0]! * k + at[h]!]!;
      for (const S of leaves) {
        if (S === T) continue;
        const row = lfts[S]!;
        if (same) row.set(pat, lids[0]!);
        else for (let h = 0; h < n; h++) row[lids[h]!] = portAt[S * k + at[h]!]!;
      }
    }
  }
}

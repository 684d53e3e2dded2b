/**
 * Max-min fair sharing of link capacities among flows, by progressive filling (routing/traffic.ts
 * builds the flows). Every flow crosses a fixed list of directed links; all flows' rates rise
 * together until a link is full; the flows crossing it are frozen at that rate; the others rise
 * on. The next link to fill is the one with the least fair share, remaining capacity / flows not
 * yet frozen on it: a binary heap of links keyed by that share, entries made stale by a change
 * skipped (their version no longer the link's). Cost O(E log E), E the flows' link crossings.
 * Integer link ids, typed arrays; no allocation per flow. Pure.
 */

/** Flows as CSR: flow f crosses links[start[f] .. start[f+1]-1] (a link crossed twice by one flow
 *  is listed twice: the flow then counts twice on it). */
export interface FlowLinks {
  count: number;
  start: Int32Array;
  links: Int32Array;
}

/** Reusable scratch of progressive filling over `nLinks` links. */
export class MaxMinSolver {
  private readonly remaining: Float64Array;
  private readonly active: Int32Array;
  private readonly version: Int32Array;
  /** Flows of each link (CSR over links, rebuilt per solve). */
  private linkStart: Int32Array;
  private linkFlows = new Int32Array(0);
  private frozen = new Uint8Array(0);
  private heapShare = new Float64Array(1024);
  private heapLink = new Int32Array(1024);
  private heapVer = new Int32Array(1024);
  private heapLen = 0;

  constructor(
    readonly nLinks: number,
    /** Capacity of each link (any unit; the rates come out in it). */
    readonly capacity: Float64Array,
  ) {
    this.remaining = new Float64Array(nLinks);
    this.active = new Int32Array(nLinks);
    this.version = new Int32Array(nLinks);
    this.linkStart = new Int32Array(nLinks + 1);
  }

  /** The max-min fair rate of every flow into `rate` (length ≥ flows.count). A flow that crosses
   *  no link gets Infinity (nothing limits it); the caller decides what that means. */
  solve(flows: FlowLinks, rate: Float64Array): void {
    const { count, start, links } = flows;
    const nL = this.nLinks;
    const act = this.active;
    act.fill(0);
    const E = start[count]!;
    for (let i = 0; i < E; i++) act[links[i]!]!++;
    // Flows per link (CSR), the links touched.
    const ls = this.linkStart;
    ls[0] = 0;
    for (let l = 0; l < nL; l++) ls[l + 1] = ls[l]! + act[l]!;
    if (this.linkFlows.length < E) this.linkFlows = new Int32Array(E);
    const lf = this.linkFlows;
    const fill = this.version; // as a cursor first, reset below
    fill.set(ls.subarray(0, nL));
    for (let f = 0; f < count; f++) for (let i = start[f]!; i < start[f + 1]!; i++) lf[fill[links[i]!]!++] = f;
    fill.fill(0);
    if (this.frozen.length < count) this.frozen = new Uint8Array(count);
    const frozen = this.frozen;
    frozen.fill(0, 0, count);
    const rem = this.remaining;
    rem.set(this.capacity);
    this.heapLen = 0;
    for (let l = 0; l < nL; l++) if (act[l]! > 0) this.push(rem[l]! / act[l]!, l, 0);
    for (let f = 0; f < count; f++) if (start[f] === start[f + 1]) rate[f] = Infinity;
    while (this.heapLen > 0) {
      const share = this.heapShare[0]!;
      const l = this.heapLink[0]!;
      const ver = this.heapVer[0]!;
      this.pop();
      if (ver !== fill[l] || act[l] === 0) continue;
      // Link l is the bottleneck: freeze its flows at `share`.
      for (let k = ls[l]!; k < ls[l + 1]!; k++) {
        const f = lf[k]!;
        if (frozen[f]) continue;
        frozen[f] = 1;
        rate[f] = share;
        for (let i = start[f]!; i < start[f + 1]!; i++) {
          const m = links[i]!;
          rem[m] = rem[m]! - share;
          act[m]!--;
          if (m !== l && act[m]! > 0) this.push(Math.max(0, rem[m]!) / act[m]!, m, ++fill[m]!);
        }
      }
      act[l] = 0;
    }
  }

  private push(share: number, link: number, ver: number): void {
    if (this.heapLen === this.heapShare.length) {
      const n = this.heapLen * 2;
      const s = new Float64Array(n);
      s.set(this.heapShare);
      const li = new Int32Array(n);
      li.set(this.heapLink);
      const v = new Int32Array(n);
      v.set(this.heapVer);
      this.heapShare = s;
      this.heapLink = li;
      this.heapVer = v;
    }
    const hs = this.heapShare;
    const hl = this.heapLink;
    const hv = this.heapVer;
    let i = this.heapLen++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (hs[p]! <= share) break;
      hs[i] = hs[p]!;
      hl[i] = hl[p]!;
      hv[i] = hv[p]!;
      i = p;
    }
    hs[i] = share;
    hl[i] = link;
    hv[i] = ver;
  }

  private pop(): void {
    const hs = this.heapShare;
    const hl = this.heapLink;
    const hv = this.heapVer;
    const n = --this.heapLen;
    if (n === 0) return;
    const share = hs[n]!;
    const link = hl[n]!;
    const ver = hv[n]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && hs[c + 1]! < hs[c]!) c++;
      if (hs[c]! >= share) break;
      hs[i] = hs[c]!;
      hl[i] = hl[c]!;
      hv[i] = hv[c]!;
      i = c;
    }
    hs[i] = share;
    hl[i] = link;
    hv[i] = ver;
  }
}

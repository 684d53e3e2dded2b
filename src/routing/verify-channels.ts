/**
 * What the verifier counts per channel (a directed switch-to-switch link: an adjacency entry of
 * routing/graph.ts's index): the routes over it, the CA destination LIDs whose routes lead over
 * it, and the channel dependencies per VL, as bits. The counts are carried from the sources
 * toward one destination LID along its in-tree (routing/verify-tree.ts's order, every switch
 * after the ones that forward to it): routing/verify-walk.ts carries LID by LID (here),
 * routing/verify-batch.ts a batch of LIDs switch by switch.
 *
 * The entries read are verify-windows.ts's decoded ones: for a switch, n × 256 + the index of
 * the link to switch n among its links, or a (negative) outcome that leads to no other switch.
 */
import type { FabricIndex } from './graph.js';

/** A channel's routes count this much in `routes`, its LIDs 1 (LIDs are 16-bit: fewer). */
export const ROUTE_SCALE = 65536;

export class ChannelCounts {
  /** Per VL, the dependency bits (channel e of switch x, to e2 of e's far end n: bit
   *  xBase[x] + (e − adjStart[x]) × xStride[x] + e2 − adjStart[n]), and how many are set. */
  readonly depBits: (Uint8Array | undefined)[] = new Array(16);
  readonly vlSeen = new Int32Array(16);
  /** Per-hop VLs: dependencies per (VL, next VL) pair, and the VLs seen. */
  readonly pairBits: (Uint8Array | undefined)[] = new Array(256);
  hopVls = 0;
  /** Per switch x, its first dependency bit and the bits per channel (its neighbours' largest degree). */
  readonly xBase: Float64Array;
  readonly xStride: Int32Array;
  /** Per channel e: its routes × ROUTE_SCALE + the CA destination LIDs whose delivering routes
   *  lead over it, in one float (exact: both are integers, the LIDs fewer than ROUTE_SCALE, the
   *  routes fewer than sources × LIDs < 2^32): one read-modify-write per route step for both. */
  readonly routes: Float64Array;
  private readonly nSw: number;
  private readonly adjStart: Int32Array;

  constructor(ix: FabricIndex) {
    const { nSw, adjStart, adjSw } = ix;
    this.nSw = nSw;
    this.adjStart = adjStart;
    this.xBase = new Float64Array(nSw + 1);
    this.xStride = new Int32Array(nSw);
    for (let x = 0; x < nSw; x++) {
      let st = 0;
      for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) st = Math.max(st, adjStart[adjSw[e]! + 1]! - adjStart[adjSw[e]!]!);
      this.xStride[x] = st;
      this.xBase[x + 1] = this.xBase[x]! + (adjStart[x + 1]! - adjStart[x]!) * st;
    }
    this.routes = new Float64Array(adjStart[nSw]!);
  }

  /** Routes (CA to CA) and CA destination LIDs per channel. */
  linkLoads(): { routes: Float64Array; lids: Float64Array } {
    const { routes } = this;
    const r = new Float64Array(routes.length);
    const lids = new Float64Array(routes.length);
    for (let e = 0; e < routes.length; e++) {
      r[e] = Math.floor(routes[e]! / ROUTE_SCALE);
      lids[e] = routes[e]! - r[e]! * ROUTE_SCALE;
    }
    return { routes: r, lids };
  }

  /** The dependency bits' layout as routing/cdg.ts reads it: channel e's first bit (and the total). */
  depStarts(): Float64Array {
    const { adjStart, nSw } = this;
    const nE = adjStart[nSw]!;
    const out = new Float64Array(nE + 1);
    for (let x = 0; x < nSw; x++) for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) out[e] = this.xBase[x]! + (e - adjStart[x]!) * this.xStride[x]!;
    out[nE] = this.xBase[nSw]!;
    return out;
  }

  depsOf(vl: number): Uint8Array {
    return (this.depBits[vl] ??= new Uint8Array(Math.ceil(this.xBase[this.nSw]! / 8) + 1));
  }

  /** From the sources toward the destination (`order` from `first`: every switch after the
   *  ones that forward to it), the sources passing each switch (acc), the routes and CA LIDs per
   *  channel (× m: the LIDs the walk stands for), and the dependencies of the channels that
   *  carry traffic, every route on VL `vl`. `lazyBits`: the VL's bits are made at its first
   *  dependency (with SLs: a VL without one is not used), else at once. */
  carry(win: Int32Array, b: number, order: Int32Array, first: number, acc: Int32Array, destIsCa: boolean, m: number, vl: number, doCdg: boolean, lazyBits: boolean): void {
    const { xBase, xStride, routes, nSw, adjStart } = this;
    let bits = doCdg ? (lazyBits ? this.depBits[vl] : this.depsOf(vl)) : undefined;
    let seen = 0;
    for (let i = first; i < nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      const a = acc[x]!;
      const n = c >>> 8;
      acc[n]! += a;
      if (destIsCa) {
        routes[adjStart[x]! + (c & 255)]! += (a * ROUTE_SCALE + 1) * m;
      }
      if (a === 0 || !doCdg) continue;
      const c2 = win[b + n]!;
      if (c2 < 0) continue;
      bits ??= this.depsOf(vl);
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      if (!(bits[byte]! & bv)) {
        bits[byte] = bits[byte]! | bv;
        seen++;
      }
    }
    this.vlSeen[vl]! += seen;
  }

  /** As `carry`, with the VL masks of the sources' SLs (mask, per switch; cleared after) carried downstream. */
  carryMasks(win: Int32Array, b: number, order: Int32Array, first: number, acc: Int32Array, mask: Int32Array, destIsCa: boolean, m: number, doCdg: boolean): void {
    const { xBase, xStride, routes, vlSeen, nSw, adjStart } = this;
    for (let i = first; i < nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      const n = c >>> 8;
      acc[n]! += acc[x]!;
      const m0 = mask[x]!;
      mask[n]! |= m0;
      if (destIsCa) {
        routes[adjStart[x]! + (c & 255)]! += (acc[x]! * ROUTE_SCALE + 1) * m;
      }
      if (m0 === 0 || !doCdg) continue;
      const c2 = win[b + n]!;
      if (c2 < 0) continue;
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      let mv = m0;
      while (mv) {
        const vl = 31 - Math.clz32(mv);
        mv &= ~(1 << vl);
        const bits = this.depsOf(vl);
        if (!(bits[byte]! & bv)) {
          bits[byte] = bits[byte]! | bv;
          vlSeen[vl]!++;
        }
      }
    }
    mask.fill(0);
  }

  /** As `carry`, when the VL changes hop by hop (per-port SL2VL): vsl[x × 16 + VL] the SLs
   *  arriving at switch x on that VL; dependencies (e, VL) → (e2, VL'), VL' = hopVl(n, in port,
   *  out port, SL). */
  carryPerHop(ix: FabricIndex, win: Int32Array, b: number, order: Int32Array, first: number, acc: Int32Array, vsl: Int32Array, destIsCa: boolean, m: number, doCdg: boolean, hopVl: (s: number, inP: number, outP: number, sl: number) => number): void {
    const { xBase, xStride, routes, pairBits, nSw } = this;
    const { adjStart, adjPort, adjRemotePort } = ix;
    const size = Math.ceil(xBase[nSw]! / 8) + 1;
    let hopVls = this.hopVls;
    for (let i = first; i < nSw; i++) {
      const x = order[i]!;
      const c = win[b + x]!;
      if (c < 0) continue;
      const n = c >>> 8;
      const e = adjStart[x]! + (c & 255);
      if (destIsCa) routes[e]! += (acc[x]! * ROUTE_SCALE + 1) * m;
      acc[n]! += acc[x]!;
      if (!doCdg) continue;
      // The VL of each SL on n's out channel from the port it comes in by.
      for (let v1 = 0; v1 < 16; v1++) if (vsl[x * 16 + v1]) hopVls |= 1 << v1;
      const c2 = win[b + n]!;
      if (c2 < 0) continue;
      const inP = adjRemotePort[e]!;
      const outP = adjPort[adjStart[n]! + (c2 & 255)]!;
      const bit = xBase[x]! + (c & 255) * xStride[x]! + (c2 & 255);
      const byte = bit >>> 3;
      const bv = 1 << (bit & 7);
      for (let v1 = 0; v1 < 16; v1++) {
        let mv = vsl[x * 16 + v1]!;
        while (mv) {
          const s_ = 31 - Math.clz32(mv);
          mv &= ~(1 << s_);
          const v2 = hopVl(n, inP, outP, s_);
          vsl[n * 16 + v2]! |= 1 << s_;
          hopVls |= 1 << v2;
          const pb = (pairBits[v1 * 16 + v2] ??= new Uint8Array(size));
          pb[byte] = pb[byte]! | bv;
        }
      }
    }
    this.hopVls = hopVls;
  }
}

/**
 * The SLs of a destination LID's sources, as the verifier asks them (routing/verify-walk.ts and
 * its batches): one per source switch when the SL depends on the switch only, else one per source
 * port, in a fixed order (the SL vector); and from such a vector, the VL of each source switch's
 * routes (SL→VL) and whether all of them are on one VL. The sources on the destination's own
 * switch T are left out: their routes cross no switch-to-switch channel, so their SLs make no
 * channel dependency.
 */
import type { FabricIndex } from './graph.js';
import type { WalkOptions } from './verify-walk.js';

export class SourceSls {
  /** Entries of an SL vector. */
  readonly len: number;
  /** An SL vector's room, for a LID walked without one of its own. */
  readonly tmp: Uint8Array;
  /** With SLs and one SL→VL table, the VL every SL maps to when it is the same for all 16 (the
   *  SLs then do not matter to the channel dependencies: they are not asked), else −1. */
  readonly oneVl: number;
  /** One source port per switch (its SL stands for the others when the SL is by source switch). */
  private readonly srcEnd0: Int32Array;

  constructor(
    private readonly ix: FabricIndex,
    /** The switches with CA/router ports (the sources), ascending. */
    private readonly srcSw: Int32Array,
    totalSources: number,
    private readonly o: Pick<WalkOptions, 'sl' | 'slBySwitch' | 'slByDest' | 'sl2vl' | 'byPorts' | 'doCdg'>,
  ) {
    const { nSw, ends } = ix;
    this.srcEnd0 = new Int32Array(nSw).fill(-1);
    for (let s = 0; s < nSw; s++) {
      for (let i = ix.endsStart[s]!; i < ix.endsStart[s + 1]!; i++) {
        const ei = ix.endsOfSw[i]!;
        if (ends[ei]!.isSwitch) continue;
        if (this.srcEnd0[s]! < 0) this.srcEnd0[s] = ei;
      }
    }
    this.len = o.slBySwitch ? srcSw.length : totalSources;
    this.tmp = new Uint8Array(o.sl ? this.len : 0);
    let one = o.sl && !o.byPorts ? (o.sl2vl[0] ?? 0) & 15 : -1;
    for (let v = 1; v < 16 && one >= 0; v++) if (((o.sl2vl[v] ?? 0) & 15) !== one) one = -1;
    this.oneVl = one;
    this.anySrcLid = srcSw.length > 0 ? ix.ends[this.srcEnd0[srcSw[0]!]!]!.lid : 0;
  }

  /** A source's LID: what `sl` is asked with when its answer depends on the destination only. */
  private readonly anySrcLid: number;

  /** The SL each source off switch T asks for its route to d (one per source switch when the SL
   *  depends on the switch only, else one per source port), into out[at ..]; returns their hash.
   *  T's own sources are left out: their routes cross no switch-to-switch channel, so their
   *  SLs make no channel dependency. */
  vector(d: number, T: number, out: Uint8Array, at: number): number {
    const { srcSw, srcEnd0 } = this;
    const ends = this.ix.ends;
    const sl = this.o.sl!;
    const { endsStart, endsOfSw } = this.ix;
    let h = 0x811c9dc5;
    let k = at;
    // By destination: asked once, the same vector (and hash) as asking every source.
    const one = this.o.slByDest ? sl(this.anySrcLid, d) & 15 : -1;
    for (let i = 0; i < srcSw.length; i++) {
      const s = srcSw[i]!;
      if (one >= 0) {
        const n = this.o.slBySwitch ? 1 : this.ix.caCount[s]!;
        for (let j = 0; j < n; j++) {
          const v = s === T ? 0 : one;
          out[k++] = v;
          h = Math.imul(h ^ v, 16777619);
        }
        continue;
      }
      if (this.o.slBySwitch) {
        const v = s === T ? 0 : sl(ends[srcEnd0[s]!]!.lid, d) & 15;
        out[k++] = v;
        h = Math.imul(h ^ v, 16777619);
        continue;
      }
      for (let j = endsStart[s]!; j < endsStart[s + 1]!; j++) {
        const se = ends[endsOfSw[j]!]!;
        if (se.isSwitch) continue;
        const v = s === T ? 0 : sl(se.lid, d) & 15;
        out[k++] = v;
        h = Math.imul(h ^ v, 16777619);
      }
    }
    return h;
  }

  /** The VL of every route to CA LID d (delivered by T) when it is one for all of them, else −1
   *  (as `sources`: T's own sources left out). */
  lidVl(d: number, T: number): number {
    const { sl, doCdg } = this.o;
    if (!doCdg || !sl) return 0;
    if (this.oneVl >= 0) return this.oneVl;
    // By destination: every source off T on the VL of d's one SL (none off T: no VL, as vl's).
    if (this.o.slByDest) return this.srcSw.length > 1 || (this.srcSw.length === 1 && this.srcSw[0] !== T) ? this.o.sl2vl[sl(this.anySrcLid, d) & 15]! & 15 : -1;
    this.vector(d, T, this.tmp, 0);
    return this.vl(this.tmp, 0, T, undefined);
  }

  /** From the SL vector of a LID delivered by T (vector's, at vec[k ..]): the VL mask of each
   *  source switch (into mask, when given; T's 0), and the one VL of them all (−1: more, or none). */
  vl(vec: Uint8Array, k: number, T: number, mask: Int32Array | undefined): number {
    const { srcSw } = this;
    const ends = this.ix.ends;
    const { slBySwitch, sl2vl } = this.o;
    const { endsStart, endsOfSw } = this.ix;
    let one = 0;
    for (let i = 0; i < srcSw.length; i++) {
      const s = srcSw[i]!;
      let ms = 0;
      if (slBySwitch) ms = 1 << (sl2vl[vec[k++]!]! & 15);
      else {
        for (let j = endsStart[s]!; j < endsStart[s + 1]!; j++) if (!ends[endsOfSw[j]!]!.isSwitch) ms |= 1 << (sl2vl[vec[k++]!]! & 15);
      }
      if (s === T) ms = 0;
      if (mask) mask[s] = ms;
      else if (one < 0) return -1;
      if (ms !== 0) one = one === 0 ? ms : one === ms ? one : -1;
    }
    // One VL for every source (a single bit): the routes carry no other VL downstream.
    return one > 0 && (one & (one - 1)) === 0 ? 31 - Math.clz32(one) : -1;
  }
}

/**
 * Writing LFT entries in long sequential strokes instead of a byte per table per LID (ftree, nue).
 *
 * Both fill the tables destination switch by destination switch: a few dozen LIDs in every
 * switch's table, so every table gets a short write far from the previous one, and on a large
 * fabric the time went on cache and TLB misses, not on the routing (scripts/bench/README.md, "Figures behind source comments"). Two helpers turn that
 * into row-wise writes:
 *
 * - RunWriter: switch s takes, for consecutive LIDs, its candidate ports in rotation. As long as
 *   the next leaf's LIDs continue the LID range, the candidate list is the same and the rotation
 *   continues where it stopped, the entries extend one pending run per switch (a start LID, a
 *   length, a phase into a stored copy of the candidate list); a run is written out when it cannot
 *   be extended, or at flushAll(). On a regular fat tree a leaf's table is then one run for all
 *   CA LIDs of the other leaves, written as a rotated pattern doubled in place (copyWithin).
 * - ColumnBuffer: LIDs whose entries are set for every switch (ftree: a leaf's own LID, switch
 *   LIDs; nue: every LID of a destination routed on a layer), kept `width` at a time and
 *   written out table by table.
 *
 * Either writes exactly the entries it was given; nothing else in a table changes.
 */

/** Pending runs of rotated candidate ports, one per switch. */
export class RunWriter {
  private readonly start: Int32Array;
  private readonly len: Int32Array;
  private readonly phase: Int32Array;
  /** Phase of the entry after the run's last (where an extension must continue). */
  private readonly next: Int32Array;
  private readonly nc: Int32Array;
  /** Version of the candidate list the run was started with (−1: compare by content). */
  private readonly ver: Int32Array;
  /** Each switch's run pattern (its candidate ports), `width` bytes per switch. */
  private readonly pat: Uint8Array;

  constructor(
    private readonly lfts: Uint8Array[],
    nSw: number,
    private readonly width: number,
  ) {
    this.start = new Int32Array(nSw);
    this.len = new Int32Array(nSw);
    this.phase = new Int32Array(nSw);
    this.next = new Int32Array(nSw);
    this.nc = new Int32Array(nSw);
    this.ver = new Int32Array(nSw).fill(-1);
    this.pat = new Uint8Array(nSw * width);
  }

  /** Entries lfts[s][l0 + j] = ports[a + (r + j) % nc] for j < m. `ver` ≥ 0 names the content
   *  of ports[a .. a+nc-1] (equal versions: equal lists); −1 when it has no version. */
  add(s: number, l0: number, m: number, ports: Uint8Array, a: number, nc: number, r: number, ver: number): void {
    const len = this.len[s]!;
    if (len > 0 && l0 === this.start[s]! + len && nc === this.nc[s] && r === this.next[s] && ((ver >= 0 && ver === this.ver[s]) || this.same(s, ports, a, nc))) {
      this.len[s] = len + m;
      this.next[s] = (r + m) % nc;
      this.ver[s] = ver;
      return;
    }
    if (len > 0) this.write(s);
    this.start[s] = l0;
    this.len[s] = m;
    this.phase[s] = r;
    this.next[s] = (r + m) % nc;
    this.nc[s] = nc;
    this.ver[s] = ver;
    this.pat.set(ports.subarray(a, a + nc), s * this.width);
  }

  /** Write every pending run. */
  flushAll(): void {
    for (let s = 0; s < this.len.length; s++) if (this.len[s]! > 0) this.write(s);
  }

  private same(s: number, ports: Uint8Array, a: number, nc: number): boolean {
    const o = s * this.width;
    for (let k = 0; k < nc; k++) if (this.pat[o + k] !== ports[a + k]) return false;
    return true;
  }

  private write(s: number): void {
    const t = this.lfts[s]!;
    const l0 = this.start[s]!;
    const n = this.len[s]!;
    const nc = this.nc[s]!;
    const o = s * this.width;
    this.len[s] = 0;
    if (nc === 1) {
      t.fill(this.pat[o]!, l0, l0 + n);
      return;
    }
    // One period written, then doubled in place (the entries repeat with period nc).
    const first = Math.min(n, nc);
    let r = this.phase[s]!;
    for (let j = 0; j < first; j++) {
      t[l0 + j] = this.pat[o + r]!;
      if (++r === nc) r = 0;
    }
    for (let done = first; done < n; ) {
      const c = Math.min(done, n - done);
      t.copyWithin(l0 + done, l0, l0 + c);
      done += c;
    }
  }
}

/** Entries of single LIDs for every switch, buffered `width` LIDs at a time and written table by
 *  table. A column starts as NO_ROUTE (255) for every switch: every switch's entry for that LID
 *  is written at flush, so a caller sets every entry that is not to be NO_ROUTE. Switch-major
 *  (switch x's entry in column c is buf[x * width + c]): at flush a table's entries for
 *  consecutive LIDs are one copy. */
export class ColumnBuffer {
  readonly buf: Uint8Array;
  private readonly lid: Int32Array;
  private n = 0;

  constructor(
    private readonly lfts: Uint8Array[],
    private readonly nSw: number,
    readonly width = 64,
  ) {
    this.buf = new Uint8Array(width * nSw).fill(255);
    this.lid = new Int32Array(width);
  }

  /** Start the column of `lid`; returns its index c (switch x's entry is buf[x * width + c]). */
  column(lid: number): number {
    if (this.n === this.width) this.flush();
    this.lid[this.n] = lid;
    return this.n++;
  }

  /** Start the columns of `lids` (consecutive columns, flushing first if they do not fit);
   *  returns the first one's index, −1 when there are more than `width`. */
  reserve(lids: readonly number[]): number {
    const m = lids.length;
    if (m > this.width) return -1;
    if (this.n + m > this.width) this.flush();
    const c0 = this.n;
    for (let k = 0; k < m; k++) this.lid[c0 + k] = lids[k]!;
    this.n += m;
    return c0;
  }

  flush(): void {
    const { lfts, nSw, buf, lid, n, width } = this;
    if (n === 0) return;
    // Runs of consecutive LIDs among the columns: a run of a few or more is one copy per table.
    const runs: number[] = [];
    for (let k = 0; k < n; ) {
      let e = k + 1;
      while (e < n && lid[e] === lid[k]! + (e - k)) e++;
      runs.push(k, e);
      k = e;
    }
    for (let x = 0; x < nSw; x++) {
      const t = lfts[x]!;
      const row = x * width;
      for (let q = 0; q < runs.length; q += 2) {
        const a = runs[q]!;
        const b = runs[q + 1]!;
        if (b - a >= 8) t.set(buf.subarray(row + a, row + b), lid[a]!);
        else for (let k = a; k < b; k++) t[lid[k]!] = buf[row + k]!;
      }
    }
    buf.fill(255);
    this.n = 0;
  }
}

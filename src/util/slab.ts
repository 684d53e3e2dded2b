/** Short-lived byte buffers (MADs) cut from shared slabs. A fresh `new Uint8Array(256)` gets its
 * own off-heap backing store: an allocation, external-memory accounting in the GC and a free, for
 * every MAD (measured: scripts/bench/README.md, "Figures behind source comments"). A view into a slab is
 * one small on-heap object. Slabs are never reused (bump allocation), so every buffer starts
 * zeroed, as a new Uint8Array does; a buffer kept for long keeps its slab (SLAB_BYTES) alive, so
 * use it for what lives as long as a request or a response, not for what is retained. The
 * buffers share one `ArrayBuffer`: read them through `byteOffset`, never transfer them. */
/** A slab's backing store costs the same to make and track whatever its size: 64 KB spreads it
 * over 256 MADs (measured: scripts/bench/README.md, "Figures behind source comments"). */
const SLAB_BYTES = 65536;
/** Larger requests get their own buffer. */
const MAX_SLAB_ALLOC = 512;

let slab = new ArrayBuffer(0); // the first call that needs a byte cuts a slab
let used = 0;

/** A zeroed buffer of `n` bytes. A view made by the constructor over the slab's ArrayBuffer, not
 * by `subarray` (which goes through the species protocol: slower, measured). */
export function allocBytes(n: number): Uint8Array {
  if (n > MAX_SLAB_ALLOC) return new Uint8Array(n);
  // Against the slab's own length: before the first slab (length 0) a 0-byte view at offset 0 is
  // valid, one at SLAB_BYTES was not (RangeError: an empty first allocation in a process).
  if (used + n > slab.byteLength) {
    slab = new ArrayBuffer(SLAB_BYTES);
    used = 0;
  }
  const b = new Uint8Array(slab, used, n);
  used += (n + 7) & ~7;
  return b;
}

/** A copy of `src` in a new buffer (what `src.slice()` gives). */
export function copyBytes(src: Uint8Array): Uint8Array {
  const b = allocBytes(src.length);
  b.set(src);
  return b;
}

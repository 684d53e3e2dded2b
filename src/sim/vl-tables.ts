/**
 * A simulated node's SLtoVL mapping tables (per output port and input port on a switch, one per
 * port on a CA) and VLArbitration tables (4 blocks per port), held compactly and allocated on
 * first write: most fabrics never program them, and a Set to every port pair (what an SM sends
 * when one table serves all) is held once.
 */
import { VLArbitrationTable } from '../wire/sma.js';

/** VLs in one SLtoVL table (one per SL). */
const SLS = 16;
const VLARB_BLOCKS = 4;
const VLARB_BYTES = VLArbitrationTable.byteLength;

export class VlTables {
  /** The table every (output, input) pair holds, when the last Set covered them all. */
  private uniform: Uint8Array | undefined;
  /** SLS bytes per (output, input) pair, allocated when a Set covers only some pairs. */
  private pairs: Uint8Array | undefined;
  /** VLArbitration blocks 1..4 of each port in wire form. */
  private arb: Uint8Array | undefined;

  /** `ports`: port numbers 0..ports-1. */
  constructor(private readonly ports: number) {}

  /** The SLtoVL table of (output, input) port: 16 VLs, zeros when never written. */
  sl2vl(outPort: number, inPort: number): number[] {
    const out = new Array<number>(SLS).fill(0);
    if (outPort < 0 || inPort < 0 || outPort >= this.ports || inPort >= this.ports) return out;
    const src = this.pairs ?? this.uniform;
    if (!src) return out;
    const o = this.pairs ? (outPort * this.ports + inPort) * SLS : 0;
    for (let i = 0; i < SLS; i++) out[i] = src[o + i]!;
    return out;
  }

  /** Write `vls` to every pair of `outPorts` x `inPorts`; `all` says they are every pair. */
  setSl2vl(outPorts: readonly number[], inPorts: readonly number[], vls: readonly number[], all: boolean): void {
    if (all) {
      const u = (this.uniform ??= new Uint8Array(SLS));
      for (let i = 0; i < SLS; i++) u[i] = vls[i] ?? 0;
      this.pairs = undefined;
      return;
    }
    let t = this.pairs;
    if (!t) {
      t = this.pairs = new Uint8Array(this.ports * this.ports * SLS);
      const u = this.uniform;
      if (u) for (let k = 0; k < this.ports * this.ports; k++) t.set(u, k * SLS);
    }
    for (const op of outPorts) {
      for (const ip of inPorts) {
        if (op < 0 || ip < 0 || op >= this.ports || ip >= this.ports) continue;
        const o = (op * this.ports + ip) * SLS;
        for (let i = 0; i < SLS; i++) t[o + i] = vls[i] ?? 0;
      }
    }
  }

  /** Copy VLArbitration block `block` (1..4) of `port` in wire form to `dst` at `off` (zeros when
   * never written). */
  readVlArb(port: number, block: number, dst: Uint8Array, off: number): void {
    const a = this.arb;
    if (!a || port < 0 || port >= this.ports || block < 1 || block > VLARB_BLOCKS) {
      dst.fill(0, off, off + VLARB_BYTES);
      return;
    }
    const o = (port * VLARB_BLOCKS + block - 1) * VLARB_BYTES;
    for (let i = 0; i < VLARB_BYTES; i++) dst[off + i] = a[o + i]!;
  }

  /** Write VLArbitration block `block` (1..4) of `port` from its wire form at `src[off]`
   * (re-encoded: reserved bits are not kept). */
  writeVlArb(port: number, block: number, src: Uint8Array, off: number): void {
    if (port < 0 || port >= this.ports || block < 1 || block > VLARB_BLOCKS) return;
    const a = (this.arb ??= new Uint8Array(this.ports * VLARB_BLOCKS * VLARB_BYTES));
    VLArbitrationTable.encode(VLArbitrationTable.decode(src, off), a, (port * VLARB_BLOCKS + block - 1) * VLARB_BYTES);
  }
}

/** Multicast forwarding tables as the SM programs them: a switch's MLID → port-mask map cut into
 * MFT blocks (32 MLIDs × 16 ports each), and what the SM believes each switch holds. */
import { mftMod } from '../wire/modifiers.js';
import { MCAST_LID_BASE, MCAST_LID_MAX, MFT_BLOCK_MLIDS, MftError } from '../routing/mcast-tree.js';

// ---------------------------------------------------------------- blocks

/** MFT blocks of one switch: key = the MFT attribute modifier (`mftMod(block, position)`), value =
 * 32 16-bit port masks. Only blocks with a non-zero mask are present. */
export function mftBlocks(masks: ReadonlyMap<number, bigint>): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const [mlid, mask] of masks) {
    if (mlid < MCAST_LID_BASE || mlid > MCAST_LID_MAX) throw new MftError(`MLID 0x${mlid.toString(16)} is outside the multicast range`);
    const idx = mlid - MCAST_LID_BASE;
    const block = Math.floor(idx / MFT_BLOCK_MLIDS);
    const slot = idx % MFT_BLOCK_MLIDS;
    let m = mask;
    for (let pos = 0; m !== 0n; pos++, m >>= 16n) {
      const bits = Number(m & 0xffffn);
      if (!bits) continue;
      const key = mftMod(block, pos);
      let arr = out.get(key);
      if (!arr) out.set(key, (arr = new Array<number>(MFT_BLOCK_MLIDS).fill(0)));
      arr[slot] = bits;
    }
  }
  return out;
}

/** The block and position of an `mftBlocks` key. */
export function mftKeyParts(key: number): { block: number; position: number } {
  return { block: key & 0x1ff, position: (key >>> 28) & 0xf };
}

export interface MftWrite {
  switchGuid: bigint;
  /** MFT attribute modifier (block | position << 28). */
  attrMod: number;
  block: number;
  position: number;
  masks: number[];
}

/**
 * What the SM believes every switch's MFT holds, by switch GUID. `diff` lists the blocks to write
 * (changed ones, and blocks that held something and are now empty, written as zeros); the SM calls
 * `commit` for each write the switch acknowledged.
 */
export class MftCache {
  private readonly state = new Map<bigint, Map<number, number[]>>();

  diff(switchGuid: bigint, blocks: ReadonlyMap<number, number[]>): MftWrite[] {
    const old = this.state.get(switchGuid) ?? new Map<number, number[]>();
    const out: MftWrite[] = [];
    const keys = new Set<number>([...blocks.keys(), ...old.keys()]);
    for (const key of [...keys].sort((a, b) => a - b)) {
      const want = blocks.get(key) ?? new Array<number>(MFT_BLOCK_MLIDS).fill(0);
      const have = old.get(key);
      if (have ? have.every((v, i) => v === want[i]) : want.every((v) => v === 0)) continue;
      out.push({ switchGuid, attrMod: key, ...mftKeyParts(key), masks: [...want] });
    }
    return out;
  }

  commit(w: MftWrite): void {
    let m = this.state.get(w.switchGuid);
    if (!m) this.state.set(w.switchGuid, (m = new Map()));
    if (w.masks.every((v) => v === 0)) m.delete(w.attrMod);
    else m.set(w.attrMod, [...w.masks]);
  }

  /** The blocks written to a switch (non-empty ones), as block/position/masks. */
  *entries(switchGuid: bigint): Iterable<{ block: number; position: number; masks: readonly number[] }> {
    for (const [key, masks] of this.state.get(switchGuid) ?? []) yield { ...mftKeyParts(key), masks };
  }

  /** Forget a switch (it left the fabric or was reset). */
  forget(switchGuid: bigint): void {
    this.state.delete(switchGuid);
  }

  /** Forget every switch (another SM may have written them). */
  clear(): void {
    this.state.clear();
  }
}

/** nue's escape routes toward a destination: the spanning tree's unique paths. */
import type { FabricIndex } from '../graph.js';
import type { UnitTree } from './tree.js';

export class EscapeRoutes {
  /** The tree's channels of each switch (in adjacency order): treeList[treeStart[x]..treeStart[x+1]). */
  private readonly treeStart: Int32Array;
  private readonly treeList: Int32Array;
  private readonly tq: Int32Array;
  private readonly tSeen: Int32Array;
  private tEpoch = 0;

  /** Reads the escape tree's channels (`isTree`). */
  constructor(
    private readonly ix: FabricIndex,
    isTree: Uint8Array,
    private readonly tree: UnitTree,
  ) {
    const { nSw, adjStart } = ix;
    this.tq = new Int32Array(nSw);
    this.tSeen = new Int32Array(nSw).fill(-1);
    const treeStart = new Int32Array(nSw + 1);
    for (let x = 0; x < nSw; x++) {
      let c = 0;
      for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) c += isTree[e]!;
      treeStart[x + 1] = treeStart[x]! + c;
    }
    const treeList = new Int32Array(treeStart[nSw]!);
    for (let x = 0, k = 0; x < nSw; x++) for (let e = adjStart[x]!; e < adjStart[x + 1]!; e++) if (isTree[e]) treeList[k++] = e;
    this.treeStart = treeStart;
    this.treeList = treeList;
  }

  /** The tree's paths toward T (BFS from T over tree channels): writes the unit tree's `settled`
   *  (T first) and `outCh`. */
  route(T: number): void {
    const { tq, tSeen, treeStart, treeList } = this;
    const { adjSw, adjReverse } = this.ix;
    const { settled, outCh } = this.tree;
    const ep = ++this.tEpoch;
    settled.length = 0;
    let h = 0;
    let t = 0;
    tq[t++] = T;
    tSeen[T] = ep;
    while (h < t) {
      const x = tq[h++]!;
      settled.push(x);
      for (let j = treeStart[x]!; j < treeStart[x + 1]!; j++) {
        const e = treeList[j]!;
        const y = adjSw[e]!;
        if (tSeen[y] === ep) continue;
        tSeen[y] = ep;
        outCh[y] = adjReverse[e]!;
        tq[t++] = y;
      }
    }
  }
}

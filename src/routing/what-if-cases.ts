/** What-if cases (routing/what-if.ts): which links and switches fail together, named from the
 * command line (`links`, `switches`, or a LIST), and the fabric as it is once they have failed.
 * Pure: no I/O. */
import { type Fabric, type FabricNode } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { formatGuid } from '../util/guid.js';
import { RoutingError } from './types.js';
import { nodeIndexByGuid } from './incremental-columns.js';

/** One failure case: the link ends (node GUID, port) whose links go down and the nodes that go
 * (every link of theirs down), together. */
export interface WhatIfCase {
  /** As reports show it: `<guid> "desc" port P ↔ <guid> "desc" port Q`, or `switch <guid> "desc"`. */
  readonly name: string;
  readonly links: ReadonlyArray<{ readonly guid: bigint; readonly port: number }>;
  readonly nodes: readonly bigint[];
}

/** The syntax of a what-if LIST, for --help and errors. */
export const WHAT_IF_SYNTAX = 'links (every switch-to-switch link in turn), switches (every switch in turn), or a LIST: cases separated by commas, each one or more items joined by + that fail together; an item is a node (GUID or exact node description: a switch goes, a CA loses its links) or a link end GUID:PORT';

export class WhatIfError extends RoutingError {
  override readonly name = 'WhatIfError';
}

const label = (n: FabricNode): string => `${formatGuid(n.guid)}${n.desc ? ` "${n.desc}"` : ''}`;

/** Every switch-to-switch link once, as a case. */
export function linkCases(f: Fabric): WhatIfCase[] {
  const out: WhatIfCase[] = [];
  f.nodes.forEach((n, i) => {
    if (n.type !== NodeType.Switch) return;
    n.ports.forEach((p, pn) => {
      const q = p?.peer;
      if (!q || f.nodes[q.node]!.type !== NodeType.Switch) return;
      if (q.node < i || (q.node === i && q.port < pn)) return;
      out.push({ name: `${label(n)} port ${pn} ↔ ${label(f.nodes[q.node]!)} port ${q.port}`, links: [{ guid: n.guid, port: pn }], nodes: [] });
    });
  });
  return out;
}

/** Every switch, as a case. */
export function switchCases(f: Fabric): WhatIfCase[] {
  return f.nodes.filter((n) => n.type === NodeType.Switch).map((n) => ({ name: `switch ${label(n)}`, links: [], nodes: [n.guid] }));
}

/** `links`, `switches` or a LIST (WHAT_IF_SYNTAX) as cases over `f`; throws WhatIfError naming
 * the item that does not fit. */
export function parseWhatIf(f: Fabric, spec: string): WhatIfCase[] {
  const s = spec.trim();
  if (s === 'links') return linkCases(f);
  if (s === 'switches') return switchCases(f);
  const byGuid = new Map(f.nodes.map((n) => [n.guid, n] as const));
  const portGuid = new Map<bigint, { node: FabricNode; port: number }>();
  for (const n of f.nodes) n.ports.forEach((p, pn) => p && portGuid.set(p.guid, { node: n, port: pn }));
  const byDesc = new Map<string, FabricNode[]>();
  for (const n of f.nodes) byDesc.set(n.desc, [...(byDesc.get(n.desc) ?? []), n]);
  const guidOf = (t: string): bigint | undefined => (/^(0x)?[0-9a-f]{1,16}$/i.test(t) ? BigInt(t.startsWith('0x') || t.startsWith('0X') ? t : '0x' + t) : undefined);
  const node = (t: string): FabricNode => {
    const g = guidOf(t);
    const n = g !== undefined ? (byGuid.get(g) ?? portGuid.get(g)?.node) : undefined;
    if (n) return n;
    const named = byDesc.get(t);
    if (named?.length === 1) return named[0]!;
    if (named && named.length > 1) throw new WhatIfError(`what-if: "${t}" names ${named.length} nodes; give a GUID`);
    throw new WhatIfError(`what-if: no node "${t}" in the fabric (${WHAT_IF_SYNTAX})`);
  };
  return s.split(',').map((c) => c.trim()).filter(Boolean).map((c) => {
    const links: Array<{ guid: bigint; port: number }> = [];
    const nodes: bigint[] = [];
    const names: string[] = [];
    for (const item of c.split('+').map((x) => x.trim()).filter(Boolean)) {
      const m = /^(.*):(\d+)$/.exec(item);
      if (m) {
        const n = node(m[1]!);
        const port = Number(m[2]);
        const p = n.ports[port];
        if (!p?.peer) throw new WhatIfError(`what-if: ${label(n)} port ${port} has no link`);
        links.push({ guid: n.guid, port });
        names.push(`${label(n)} port ${port}`);
      } else {
        const n = node(item);
        if (n.type === NodeType.Switch) {
          nodes.push(n.guid);
          names.push(`switch ${label(n)}`);
        } else {
          n.ports.forEach((p, pn) => p?.peer && links.push({ guid: n.guid, port: pn }));
          names.push(`${label(n)} (its links)`);
        }
      }
    }
    if (!links.length && !nodes.length) throw new WhatIfError(`what-if: "${c}" names nothing to fail (${WHAT_IF_SYNTAX})`);
    return { name: names.join(' + '), links, nodes };
  });
}

/** Most nodes a search for a cut link's ends looks at before the whole fabric is searched. */
const REJOIN_LIMIT = 5000;

/** Whether every node is reached from a switch, through switches (as failCase's search goes);
 *  kept per fabric. */
function oneFabric(f: Fabric): boolean {
  let one = oneCache.get(f);
  if (one === undefined) {
    const start = f.nodes.findIndex((n) => n.type === NodeType.Switch);
    one = start >= 0 && reach(f, start, -1, f.nodes.length, 0, new Set()) === f.nodes.length;
    oneCache.set(f, one);
  }
  return one;
}
const oneCache = new WeakMap<Fabric, boolean>();

/** Whether the ends of the link at port key k (node × W + port) are joined without the ports `cut`
 *  (searched from one end, through switches, up to REJOIN_LIMIT nodes). */
function rejoined(f: Fabric, k: number, W: number, cut: Set<number>): boolean {
  const u = Math.floor(k / W);
  const q = f.nodes[u]!.ports[k % W]?.peer;
  return !!q && reach(f, u, q.node, REJOIN_LIMIT, W, cut) < 0;
}

/** Nodes reached from `start` (expanded whatever it is; after it only switches are), over links
 *  not in `cut`: -1 as soon as `target` is, else how many (stops past `limit`). */
function reach(f: Fabric, start: number, target: number, limit: number, W: number, cut: Set<number>): number {
  const seen = new Set<number>([start]);
  const queue = [start];
  for (let h = 0; h < queue.length && seen.size <= limit; h++) {
    const u = queue[h]!;
    const n = f.nodes[u]!;
    if (n.type !== NodeType.Switch && u !== start) continue;
    for (let pn = 0; pn < n.ports.length; pn++) {
      const q = n.ports[pn]?.peer;
      if (!q || seen.has(q.node) || cut.has(u * W + pn)) continue;
      if (q.node === target) return -1;
      seen.add(q.node);
      queue.push(q.node);
    }
  }
  return seen.size;
}

/** The fabric once `c` has failed, as an SM sees it: the links down on both sides, the nodes gone,
 * and every node no longer reachable from `anchor` (the SM's node GUID; default: the part with
 * the most end ports) dropped, the order of the rest kept. `downLinks`: links that went down
 * with at least one end that stays (what a local sweep counts). */
export function failCase(f: Fabric, c: WhatIfCase, anchor?: bigint): { fabric: Fabric; downLinks: number; dropped: FabricNode[] } {
  const idx = nodeIndexByGuid(f);
  const gone = new Uint8Array(f.nodes.length);
  for (const g of c.nodes) {
    const i = idx.get(g);
    if (i !== undefined) gone[i] = 1;
  }
  // Ports cut: [node, port] with the link down.
  const cut = new Set<number>();
  const W = 256;
  for (const l of c.links) {
    const i = idx.get(l.guid);
    const q = i === undefined ? undefined : f.nodes[i]!.ports[l.port]?.peer;
    if (i === undefined || !q) continue;
    cut.add(i * W + l.port);
    cut.add(q.node * W + q.port);
  }
  f.nodes.forEach((n, i) => {
    if (gone[i]) n.ports.forEach((p, pn) => p?.peer && (cut.add(i * W + pn), cut.add(p.peer.node * W + p.peer.port)));
  });
  // What stays reachable from the anchor over the links left (through switches only).
  const comp = new Int32Array(f.nodes.length).fill(-1);
  const sizes: number[] = [];
  const visit = (start: number, id: number): number => {
    let ends = 0;
    comp[start] = id;
    const queue = [start];
    for (let h = 0; h < queue.length; h++) {
      const u = queue[h]!;
      const n = f.nodes[u]!;
      if (n.type !== NodeType.Switch) ends++;
      if (n.type !== NodeType.Switch && u !== start) continue;
      n.ports.forEach((p, pn) => {
        const q = p?.peer;
        if (!q || comp[q.node]! >= 0 || gone[q.node] || cut.has(u * W + pn)) return;
        comp[q.node] = id;
        queue.push(q.node);
      });
    }
    return ends;
  };
  let keepId = -1;
  const a = anchor === undefined ? undefined : idx.get(anchor);
  if (!c.nodes.length && oneFabric(f) && [...cut].every((k) => rejoined(f, k, W, cut))) {
    // The fabric was one part and each link cut has its ends joined without it: still one part.
    comp.fill(0);
    keepId = 0;
  } else if (a !== undefined && !gone[a]) {
    visit(a, 0);
    keepId = 0;
  } else {
    // The part with the most end ports (switches first as starts, so a CA does not stand alone).
    const order = f.nodes.map((_, i) => i).sort((x, y) => Number(f.nodes[y]!.type === NodeType.Switch) - Number(f.nodes[x]!.type === NodeType.Switch));
    let best = -1;
    for (const i of order) {
      if (comp[i]! >= 0 || gone[i]) continue;
      const id = sizes.length;
      sizes.push(visit(i, id));
      if (best < 0 || sizes[id]! > sizes[best]!) best = id;
    }
    keepId = best;
  }
  const keep: number[] = [];
  const dropped: FabricNode[] = [];
  f.nodes.forEach((n, i) => (comp[i] === keepId && !gone[i] ? keep.push(i) : dropped.push(n)));
  const newIdx = new Int32Array(f.nodes.length).fill(-1);
  keep.forEach((old, k) => (newIdx[old] = k));
  let downLinks = 0;
  // Nothing dropped: the numbering is the same, and a node with no link cut is the original one
  // (shared, not copied: nothing changes a fabric once built).
  const same = keep.length === f.nodes.length;
  const touched = new Uint8Array(f.nodes.length);
  for (const k of cut) touched[Math.floor(k / W)] = 1;
  const nodes = keep.map((i) => {
    const n = f.nodes[i]!;
    if (same && !touched[i]) return n;
    return {
      ...n,
      ports: n.ports.map((p, pn) => {
        if (!p) return p;
        const q = p.peer;
        const alive = q && !cut.has(i * W + pn) && newIdx[q.node]! >= 0;
        if (q && cut.has(i * W + pn) && (newIdx[q.node]! < 0 || i < q.node || (i === q.node && pn < q.port))) downLinks++;
        return { ...p, peer: alive ? { node: newIdx[q.node]!, port: q.port } : undefined };
      }),
    };
  });
  return { fabric: { nodes }, downLinks, dropped };
}

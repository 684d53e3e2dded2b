/** The expected topology against the discovered one (issue #33 item 1): pure, no I/O. Nodes are
 * matched by node GUID; an expected node whose GUID is not found is matched to a new node in the
 * same place (the same neighbours on the same ports, else the same type and NodeDescription when
 * that is unique): a replaced node, "GUID changed". Links are then compared through that matching:
 * an expected link not found whose two nodes are linked on other ports is "a cable on the wrong
 * port" (two cables swapped on a leaf give two of them); what is left is a missing or extra link;
 * a link found where expected but trained below the expected width or speed is "width" / "speed".
 * Links of a missing or extra node are that node's mismatch, not one each. */
import { NodeType } from '../wire/mad.js';
import { SPEED_NAMES } from './rates.js';
import type { Fabric, FabricNode } from './fabric.js';
import { formatGuid } from '../util/guid.js';

import { MISMATCH_CLASSES, type MismatchClass, type MismatchEnd } from './topology-classes.js';

export { MISMATCH_CLASSES, type MismatchClass, type MismatchEnd } from './topology-classes.js';

export interface Mismatch {
  cls: MismatchClass;
  /** The node (node classes) or one end of the link, as found in the fabric where it is there
   * (missing-*: as expected). */
  a: MismatchEnd;
  /** The other end of the link (link classes). */
  b?: MismatchEnd;
  /** What the expected topology says (the other end it should reach, the GUID, the width/speed). */
  expected: string;
  /** What the fabric has. */
  found: string;
  /** Indices into the discovered fabric of what the mismatch is about (for isolation): a node,
   * or a link's two ports. Absent for what is not there (missing-*). */
  at?: { node: number; port?: number; peer?: { node: number; port: number } };
}

const WIDTH_LANES: Readonly<Record<string, number>> = { '1x': 1, '2x': 2, '4x': 4, '8x': 8, '12x': 12 };
const speedRank = (s: string | undefined): number => (s === undefined ? -1 : SPEED_NAMES.indexOf(s.toUpperCase()));
const widthRank = (w: string | undefined): number => (w === undefined ? -1 : (WIDTH_LANES[w.toLowerCase()] ?? -1));

/** "desc" (GUID) port N, the way every mismatch names a port. */
export function endText(e: MismatchEnd): string {
  return `"${e.desc}" (${formatGuid(e.guid)})${e.port ? ` port ${e.port}` : ''}`;
}

/** One line naming the mismatch: its class, both ends, expected and found. */
export function mismatchText(m: Mismatch): string {
  const ends = m.b ? `${endText(m.a)} - ${endText(m.b)}` : endText(m.a);
  return `${m.cls}: ${ends}: expected ${m.expected}, found ${m.found}`;
}

const end = (n: FabricNode, port: number): MismatchEnd => ({ guid: n.guid, desc: n.desc, port, type: n.type });

/** expected → found node index (and back), by GUID, then by place. */
function matchNodes(exp: Fabric, found: Fabric): { e2f: Int32Array; f2e: Int32Array } {
  const e2f = new Int32Array(exp.nodes.length).fill(-1);
  const f2e = new Int32Array(found.nodes.length).fill(-1);
  const byGuid = new Map<bigint, number>();
  found.nodes.forEach((n, i) => byGuid.set(n.guid, i));
  exp.nodes.forEach((n, i) => {
    const f = n.guid ? byGuid.get(n.guid) : undefined;
    if (f !== undefined && f2e[f] === -1 && sameType(found.nodes[f]!, n)) {
      e2f[i] = f;
      f2e[f] = i;
    }
  });
  // Replaced nodes: the found node their matched neighbours reach on the expected ports. Repeated
  // while it finds some (a replaced node next to another replaced node is found from the first).
  for (let changed = true; changed; ) {
    changed = false;
    exp.nodes.forEach((n, i) => {
      if (e2f[i] !== -1) return;
      const votes = new Map<number, number>();
      n.ports.forEach((p, pn) => {
        if (!p?.peer || pn === 0) return;
        const nf = e2f[p.peer.node]!;
        if (nf < 0) return;
        const q = found.nodes[nf]!.ports[p.peer.port]?.peer;
        if (q && q.port === pn && f2e[q.node] === -1 && sameType(found.nodes[q.node]!, n)) votes.set(q.node, (votes.get(q.node) ?? 0) + 1);
      });
      const best = [...votes].sort((x, y) => y[1] - x[1])[0];
      if (!best) return;
      e2f[i] = best[0];
      f2e[best[0]] = i;
      changed = true;
    });
  }
  // Else the same NodeDescription (and type), unique among the nodes left on both sides.
  const key = (n: FabricNode): string => n.desc;
  const left = (f: Fabric, m: Int32Array): Map<string, number[]> => {
    const out = new Map<string, number[]>();
    f.nodes.forEach((n, i) => m[i] === -1 && out.set(key(n), [...(out.get(key(n)) ?? []), i]));
    return out;
  };
  const le = left(exp, e2f);
  const lf = left(found, f2e);
  for (const [k, es] of le) {
    const fs = lf.get(k);
    if (es.length !== 1 || fs?.length !== 1 || !sameType(exp.nodes[es[0]!]!, found.nodes[fs[0]!]!)) continue;
    e2f[es[0]!] = fs[0]!;
    f2e[fs[0]!] = es[0]!;
  }
  return { e2f, f2e };
}

/** Every mismatch between the expected topology and the fabric found, in MISMATCH_CLASSES order
 * then by node and port. Width and speed are compared where the expected file gives them. */
export function compareTopology(exp: Fabric, found: Fabric): Mismatch[] {
  const { e2f, f2e } = matchNodes(exp, found);
  const out: Mismatch[] = [];
  exp.nodes.forEach((n, i) => {
    const f = e2f[i]!;
    if (f < 0) out.push({ cls: 'missing-node', a: end(n, 0), expected: `a ${typeName(n)}`, found: 'none' });
    else if (n.guid && found.nodes[f]!.guid !== n.guid) {
      const fn = found.nodes[f]!;
      out.push({ cls: 'guid-changed', a: end(fn, 0), expected: `GUID ${formatGuid(n.guid)} ("${n.desc}")`, found: `GUID ${formatGuid(fn.guid)}`, at: { node: f } });
    }
  });
  found.nodes.forEach((n, i) => {
    if (f2e[i] === -1) out.push({ cls: 'extra-node', a: end(n, 0), expected: 'none', found: `a ${typeName(n)}`, at: { node: i } });
  });
  // Links: expected ones, in found indices. A link is keyed by its lower (node, port) end.
  const k = (node: number, port: number): number => node * 256 + port;
  const expLinks = new Map<number, { a: [number, number]; b: [number, number]; e: [number, number, number, number] }>();
  exp.nodes.forEach((n, i) => {
    n.ports.forEach((p, pn) => {
      if (!p?.peer || pn === 0) return;
      const fa = e2f[i]!;
      const fb = e2f[p.peer.node]!;
      if (fa < 0 || fb < 0) return;
      if (fa > fb || (fa === fb && pn > p.peer.port)) return;
      expLinks.set(k(fa, pn), { a: [fa, pn], b: [fb, p.peer.port], e: [i, pn, p.peer.node, p.peer.port] });
    });
  });
  const foundLinks = new Map<number, { a: [number, number]; b: [number, number] }>();
  found.nodes.forEach((n, i) => {
    n.ports.forEach((p, pn) => {
      if (!p?.peer || pn === 0 || f2e[i] === -1 || f2e[p.peer.node] === -1) return;
      if (i > p.peer.node || (i === p.peer.node && pn > p.peer.port)) return;
      foundLinks.set(k(i, pn), { a: [i, pn], b: [p.peer.node, p.peer.port] });
    });
  });
  const fnode = (x: number): FabricNode => found.nodes[x]!;
  const missing: Array<NonNullable<ReturnType<typeof expLinks.get>>> = [];
  for (const [key, l] of expLinks) {
    const fl = foundLinks.get(key);
    if (fl && fl.b[0] === l.b[0] && fl.b[1] === l.b[1]) {
      foundLinks.delete(key);
      const ep = exp.nodes[l.e[0]]!.ports[l.e[1]]!;
      const fp = fnode(l.a[0]).ports[l.a[1]]!;
      const at = { node: l.a[0], port: l.a[1], peer: { node: l.b[0], port: l.b[1] } };
      const ends = { a: end(fnode(l.a[0]), l.a[1]), b: end(fnode(l.b[0]), l.b[1]) };
      if (ep.width && widthRank(fp.width) < widthRank(ep.width)) out.push({ cls: 'width', ...ends, expected: ep.width, found: fp.width ?? 'unknown', at });
      if (ep.speed && speedRank(fp.speed) < speedRank(ep.speed)) out.push({ cls: 'speed', ...ends, expected: ep.speed, found: fp.speed ?? 'unknown', at });
    } else missing.push(l);
  }
  // A missing link whose two nodes are linked on other ports (one end the same): the cable is on
  // the wrong port. The links left, by their two nodes.
  const pair = (x: number, y: number): number => Math.min(x, y) * found.nodes.length + Math.max(x, y);
  const byPair = new Map<number, L[]>();
  for (const f of foundLinks.values()) byPair.set(pair(f.a[0], f.b[0]), [...(byPair.get(pair(f.a[0], f.b[0])) ?? []), f]);
  for (const l of missing) {
    const wrong = (byPair.get(pair(l.a[0], l.b[0])) ?? []).find((f) => foundLinks.has(k(f.a[0], f.a[1])) && sameNodes(f, l) && (sameEnd(f, l.a) || sameEnd(f, l.b)));
    const want = `${endText(end(fnode(l.a[0]), l.a[1]))} - ${endText(end(fnode(l.b[0]), l.b[1]))}`;
    if (wrong) {
      foundLinks.delete(k(wrong.a[0], wrong.a[1]));
      out.push({ cls: 'wrong-port', a: end(fnode(wrong.a[0]), wrong.a[1]), b: end(fnode(wrong.b[0]), wrong.b[1]), expected: want, found: 'this link', at: { node: wrong.a[0], port: wrong.a[1], peer: { node: wrong.b[0], port: wrong.b[1] } } });
    } else {
      out.push({ cls: 'missing-link', a: end(fnode(l.a[0]), l.a[1]), b: end(fnode(l.b[0]), l.b[1]), expected: 'a link', found: 'none' });
    }
  }
  for (const f of foundLinks.values()) {
    out.push({ cls: 'extra-link', a: end(fnode(f.a[0]), f.a[1]), b: end(fnode(f.b[0]), f.b[1]), expected: 'none', found: 'a link', at: { node: f.a[0], port: f.a[1], peer: { node: f.b[0], port: f.b[1] } } });
  }
  const order = (c: MismatchClass): number => MISMATCH_CLASSES.indexOf(c);
  return out.sort((x, y) => order(x.cls) - order(y.cls));
}

type L = { a: [number, number]; b: [number, number] };
const sameNodes = (x: L, y: L): boolean => (x.a[0] === y.a[0] && x.b[0] === y.b[0]) || (x.a[0] === y.b[0] && x.b[0] === y.a[0]);
const sameEnd = (x: L, e: [number, number]): boolean => (x.a[0] === e[0] && x.a[1] === e[1]) || (x.b[0] === e[0] && x.b[1] === e[1]);

/** Types match, or the expected one is not given (0: a cabling plan's node). */
const sameType = (a: FabricNode, b: FabricNode): boolean => a.type === b.type || !a.type || !b.type;

function typeName(n: FabricNode): string {
  if (!n.type) return 'node';
  return n.type === NodeType.Switch ? 'switch' : n.type === NodeType.Router ? 'router' : 'CA';
}

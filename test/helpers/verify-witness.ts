/** Independent witnesses of the verifier's figures (routing/verify*.ts): every (source CA port,
 * destination LID) route followed hop by hop through the LFTs — no in-trees, no windows, no
 * batches, no sharing between LIDs. */
import type { Fabric } from '../../src/model/fabric.js';
import { isSwitch } from '../../src/model/fabric.js';
import type { RoutingResult, VerifyReport } from '../../src/routing/index.js';

export interface Witness {
  pairs: number;
  unreachable: number;
  hopMax: number;
  hopSum: number;
  reached: number;
  /** Routes per directed switch-to-switch link ("node:port"). */
  links: Map<string, number>;
}

/** Pairs, reachability, hops and routes per directed switch-to-switch link. */
export function witness(f: Fabric, lfts: ReadonlyMap<number, Uint8Array>): Witness {
  const w: Witness = { pairs: 0, unreachable: 0, hopMax: 0, hopSum: 0, reached: 0, links: new Map() };
  const cas: Array<{ node: number; port: number; lid: number; lmc: number }> = [];
  f.nodes.forEach((n, i) => {
    if (isSwitch(n)) return;
    n.ports.forEach((p, pi) => p?.peer && p.lid && cas.push({ node: i, port: pi, lid: p.lid, lmc: p.lmc ?? 0 }));
  });
  const nSw = f.nodes.filter(isSwitch).length;
  // Switch LIDs as destinations too (node −1, port = the switch's node index).
  const dests = [...cas, ...f.nodes.flatMap((n, i) => (isSwitch(n) && n.ports[0]?.lid ? [{ node: -1, port: i, lid: n.ports[0].lid, lmc: 0 }] : []))];
  for (const dst of dests) {
    for (let d = dst.lid; d < dst.lid + (1 << dst.lmc); d++) {
      for (const src of cas) {
        if (src === dst) continue;
        w.pairs++;
        let x = f.nodes[src.node]!.ports[src.port]!.peer!.node;
        let hops = 1;
        const used: string[] = [];
        let ok = false;
        for (let step = 0; step <= nSw; step++) {
          const p = lfts.get(x)?.[d] ?? 255;
          if (p === 0) {
            ok = dst.node < 0 && x === dst.port;
            break;
          }
          const peer = p === 255 || p === 0 ? undefined : f.nodes[x]!.ports[p]?.peer;
          if (!peer) break;
          hops++;
          if (!isSwitch(f.nodes[peer.node]!)) {
            ok = peer.node === dst.node && peer.port === dst.port;
            break;
          }
          used.push(`${x}:${p}`);
          x = peer.node;
        }
        if (!ok) {
          w.unreachable++;
          continue;
        }
        if (dst.node < 0) continue; // a switch LID: reachability only
        w.reached++;
        w.hopSum += hops;
        w.hopMax = Math.max(w.hopMax, hops);
        for (const k of used) w.links.set(k, (w.links.get(k) ?? 0) + 1);
      }
    }
  }
  return w;
}

export interface Ca {
  node: number;
  port: number;
  lid: number;
  sw: number;
}

export function cas(f: Fabric): Ca[] {
  const out: Ca[] = [];
  f.nodes.forEach((n, i) => {
    if (isSwitch(n)) return;
    n.ports.forEach((p, pi) => p?.peer && p.lid && out.push({ node: i, port: pi, lid: p.lid, sw: p.peer.node }));
  });
  return out;
}

/** Distinct dependencies per VL of every CA-sourced route (to CA and switch LIDs). */
export function witnessDeps(f: Fabric, r: RoutingResult): Map<number, number> {
  return new Map([...witnessDepSets(f, r)].filter(([, s]) => s.size > 0).map(([vl, s]) => [vl, s.size]));
}

/** Per VL with dependencies: the strongly connected components with more than one channel and
 *  the channels in them, of the witness's dependencies (Kosaraju: reachability both ways). */
export function witnessCycles(f: Fabric, r: RoutingResult): Map<number, { cyclicComponents: number; channelsInCycles: number }> {
  const out = new Map<number, { cyclicComponents: number; channelsInCycles: number }>();
  for (const [vl, set] of witnessDepSets(f, r)) {
    if (set.size === 0) continue;
    const fwd = new Map<string, string[]>();
    const bwd = new Map<string, string[]>();
    for (const d of set) {
      const [a, b] = d.split('>') as [string, string];
      for (const [m, x, y] of [[fwd, a, b], [bwd, b, a]] as const) m.set(x, [...(m.get(x) ?? []), y]);
    }
    const reach = (m: Map<string, string[]>, from: string): Set<string> => {
      const seen = new Set([from]);
      const todo = [from];
      while (todo.length) for (const y of m.get(todo.pop()!) ?? []) if (!seen.has(y)) seen.add(y), todo.push(y);
      return seen;
    };
    const done = new Set<string>();
    let cyclicComponents = 0;
    let channelsInCycles = 0;
    for (const c of new Set([...fwd.keys(), ...bwd.keys()])) {
      if (done.has(c)) continue;
      const back = reach(bwd, c);
      const comp = [...reach(fwd, c)].filter((y) => back.has(y));
      for (const y of comp) done.add(y);
      if (comp.length > 1) {
        cyclicComponents++;
        channelsInCycles += comp.length;
      }
    }
    out.set(vl, { cyclicComponents, channelsInCycles });
  }
  return out;
}

function witnessDepSets(f: Fabric, r: RoutingResult): Map<number, Set<string>> {
  const sets = new Map<number, Set<string>>();
  const srcs = cas(f);
  const dests = [...srcs.map((c) => ({ lid: c.lid, node: c.node, port: c.port })), ...f.nodes.flatMap((n, i) => (isSwitch(n) && n.ports[0]?.lid ? [{ lid: n.ports[0].lid, node: i, port: 0 }] : []))];
  const nSw = f.nodes.filter(isSwitch).length;
  for (const dst of dests) {
    for (const src of srcs) {
      if (src.node === dst.node && src.port === dst.port) continue;
      const vl = r.sl2vl![r.sl!(src.lid, dst.lid) & 15]! & 15;
      let x = src.sw;
      const links: string[] = [];
      for (let step = 0; step <= nSw; step++) {
        const p = r.lfts.get(x)?.[dst.lid] ?? 255;
        if (p === 0 || p === 255) break;
        const peer = f.nodes[x]!.ports[p]?.peer;
        if (!peer || !isSwitch(f.nodes[peer.node]!)) break;
        links.push(`${x}:${p}`);
        x = peer.node;
      }
      const set = sets.get(vl) ?? new Set<string>();
      for (let i = 0; i + 1 < links.length; i++) set.add(`${links[i]}>${links[i + 1]}`);
      sets.set(vl, set);
    }
  }
  return sets;
}

export const verifierDeps = (v: VerifyReport): Map<number, number> => new Map(v.cdg.filter((c) => c.dependencies > 0).map((c) => [c.vl, c.dependencies]));


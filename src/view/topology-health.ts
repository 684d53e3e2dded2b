/** The fabric's health on the picture (issue #33 item 4): links the expected topology misses
 * (drawn where they should be), links it does not have or has on other ports (extra), links below
 * their width or speed (degraded), and isolated links and nodes (sm/health-state.ts: held in INIT
 * and not routed, so absent from the routed fabric: drawn back, marked). Pure: marks a view
 * (view/topology.ts) in place. */
import { guidHex } from '../util/guid.js';
import { NodeType } from '../wire/mad.js';
import type { Mismatch, MismatchEnd } from '../model/topology-compare.js';
import type { Isolation } from '../model/topology-classes.js';
import type { TopologyView, ViewLink } from './topology.js';

export type LinkHealth = 'missing' | 'extra' | 'degraded' | 'isolated';

export interface HealthMarks {
  mismatches: readonly Mismatch[];
  isolated: readonly Isolation[];
}

const end = (e: MismatchEnd): ViewLink['a'] => ({ node: guidHex(e.guid), port: e.port });
const keyOf = (a: ViewLink['a'], b: ViewLink['b']): string => (a.node < b.node || (a.node === b.node && a.port <= b.port) ? `${a.node}:${a.port}-${b.node}:${b.port}` : `${b.node}:${b.port}-${a.node}:${a.port}`);

/** Mark `v`'s links and nodes with the health state; links not in the view (missing, isolated)
 * added between nodes it has. Returns the keys of the links it added (a memory of earlier views
 * must not draw them down as well). */
export function markHealth(v: TopologyView, h: HealthMarks): Set<string> {
  const links = new Map(v.links.map((l) => [keyOf(l.a, l.b), l]));
  const nodes = new Map(v.nodes.map((n) => [n.id, n]));
  const added = new Set<string>();
  const mark = (a: ViewLink['a'], b: ViewLink['b'], health: LinkHealth, text: string): void => {
    const k = keyOf(a, b);
    let l = links.get(k);
    if (!l) {
      if (!nodes.has(a.node) || !nodes.has(b.node)) return;
      l = { a, b, routes: 0 };
      links.set(k, l);
      v.links.push(l);
      added.add(k);
    }
    // isolated wins over what it was isolated for; missing is never on a link that is there
    if (l.health !== 'isolated') l.health = health;
    l.healthText = l.healthText ? `${l.healthText}; ${text}` : text;
  };
  for (const m of h.mismatches) {
    if (!m.b) continue;
    const cls = m.cls === 'missing-link' ? 'missing' : m.cls === 'width' || m.cls === 'speed' ? 'degraded' : 'extra';
    mark(end(m.a), end(m.b), cls, `${m.cls}: expected ${m.expected}, found ${m.found}`);
  }
  for (const i of h.isolated) {
    if (i.kind === 'link' && i.b) mark(end(i.a), end(i.b), 'isolated', `isolated (${i.cls}): ${i.reason}`);
    if (i.kind !== 'node') continue;
    // an isolated node is not in the routed fabric (nor are its links): drawn alone, marked
    let n = nodes.get(guidHex(i.a.guid));
    if (!n) {
      const sw = i.a.type === NodeType.Switch;
      n = { id: guidHex(i.a.guid), kind: sw ? 'switch' : i.a.type === NodeType.Router ? 'router' : 'ca', desc: i.a.desc, guid: i.a.guid, tier: sw ? 1 : 0 };
      nodes.set(n.id, n);
      v.nodes.push(n);
    }
    n.gone = undefined;
    n.isolated = `isolated (${i.cls}): ${i.reason}`;
  }
  for (const m of h.mismatches) {
    if (m.b) continue;
    const n = nodes.get(guidHex(m.a.guid));
    if (n && !n.isolated) n.health = `${m.cls}: expected ${m.expected}, found ${m.found}`;
  }
  return added;
}

/** `ibsm dump health`: the isolated links and nodes (class, source, how long held, why), then the
 * mismatches with the expected topology, one a line. `now`: the SM's clock (ms), as `since`. */
export function dumpHealth(h: HealthMarks, now: number, topology: string | undefined): string {
  const out: string[] = [];
  const name = (e: MismatchEnd): string => `"${e.desc}" (0x${guidHex(e.guid)})${e.port ? ` port ${e.port}` : ''}`;
  out.push(`isolated: ${h.isolated.length}`);
  for (const i of h.isolated) out.push(`  ${i.kind} ${name(i.a)}${i.b ? ` - ${name(i.b)}` : ''}  class=${i.cls} source=${i.source} held=${Math.max(0, Math.round((now - i.since) / 1000))}s  ${i.reason}`);
  out.push(topology ? `mismatches with ${topology}: ${h.mismatches.length}` : 'mismatches: no expected topology (--topology)');
  for (const m of h.mismatches) out.push(`  ${m.cls}: ${name(m.a)}${m.b ? ` - ${name(m.b)}` : ''}: expected ${m.expected}, found ${m.found}`);
  return out.join('\n') + '\n';
}

/** Manual isolation (issue #33 item 2): `ibsm isolate NODE[:PORT]` and `ibsm release NODE[:PORT]`
 * over the control socket. NODE is a node GUID, a port GUID or a node description; PORT a port
 * number. An isolated port is its link (both ends), held like every other isolation
 * (sm/health-state.ts) with `source: 'manual'`; the sweep that follows applies it. Pure. */
import type { Fabric, FabricNode } from '../model/fabric.js';
import type { Isolation, MismatchEnd } from '../model/topology-classes.js';
import { IbsmError } from '../util/errors.js';
import { isolationKey } from './health-state.js';

export class HealthTargetError extends IbsmError {
  override readonly name = 'HealthTargetError';
}

const guidOf = (t: string): bigint | undefined => (/^(0x)?[0-9a-f]{1,16}$/i.test(t) ? BigInt(/^0x/i.test(t) ? t : '0x' + t) : undefined);

/** Split `NODE[:PORT]` (a description may hold ':'; the last ':N' is the port). */
function splitTarget(text: string): { node: string; port?: number } {
  const t = text.trim();
  const m = /^(.*):(\d+)$/.exec(t);
  if (m && m[1]) return { node: m[1], port: Number(m[2]) };
  if (!t) throw new HealthTargetError('which node? NODE[:PORT]: a node GUID, a port GUID or a description, and a port number');
  return { node: t };
}

function findNode(f: Fabric, t: string): FabricNode {
  const g = guidOf(t);
  if (g !== undefined) {
    const n = f.nodes.find((x) => x.guid === g || x.ports.some((p) => p?.guid === g));
    if (n) return n;
  }
  const named = f.nodes.filter((n) => n.desc === t);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new HealthTargetError(`"${t}" names ${named.length} nodes; give a GUID`);
  throw new HealthTargetError(`no node "${t}" in the fabric (NODE[:PORT]: a node GUID, a port GUID or a description)`);
}

const endOf = (n: FabricNode, port: number): MismatchEnd => ({ guid: n.guid, desc: n.desc, port, type: n.type });

/** The isolation `ibsm isolate TARGET` asks for, over the SM's fabric (isolated links cut,
 * isolated nodes left out: one of `held` is given back when it is there). Throws
 * HealthTargetError naming what does not fit. */
export function manualIsolation(f: Fabric, target: string, now: number, held: readonly Isolation[] = []): Isolation {
  const t = splitTarget(target);
  const g = guidOf(t.node);
  const there = held.find((i) => [i.a, ...(i.b ? [i.b] : [])].some((e) => (e.guid === g || e.desc === t.node) && (i.kind === 'node' ? t.port === undefined : e.port === t.port)));
  if (there) return there;
  const n = findNode(f, t.node);
  if (t.port === undefined) return { key: isolationKey(endOf(n, 0)), kind: 'node', a: endOf(n, 0), cls: 'manual', source: 'manual', reason: 'isolated by hand', since: now };
  const p = n.ports[t.port];
  if (!p || t.port === 0) throw new HealthTargetError(`"${n.desc}" has no port ${t.port}${t.port === 0 ? ' to isolate (port 0 is the switch itself: give the node alone)' : ''}`);
  if (!p.peer) throw new HealthTargetError(`port ${t.port} of "${n.desc}" is not linked: nothing to isolate`);
  const q = f.nodes[p.peer.node]!;
  const a = endOf(n, t.port);
  const b = endOf(q, p.peer.port);
  return { key: isolationKey(a, b), kind: 'link', a, b, cls: 'manual', source: 'manual', reason: 'isolated by hand', since: now };
}

/** The isolations `ibsm release TARGET` releases: those of the node (TARGET without a port: the
 * node's own and its links') or of the link at the port, whatever their source but the expected
 * topology's (which the next comparison would isolate again). */
export function releaseMatches(isolated: readonly Isolation[], target: string): { keep: Isolation[]; released: Isolation[]; refused: Isolation[] } {
  const t = splitTarget(target);
  const g = guidOf(t.node);
  const isNode = (e: MismatchEnd): boolean => e.guid === g || e.desc === t.node;
  const hit = (i: Isolation): boolean => [i.a, ...(i.b ? [i.b] : [])].some((e) => isNode(e) && (t.port === undefined || e.port === t.port));
  const matched = isolated.filter(hit);
  if (!matched.length) throw new HealthTargetError(`nothing isolated at "${target}" (ibsm status lists the isolations)`);
  const released = matched.filter((i) => i.source !== 'topology');
  return { keep: isolated.filter((i) => !released.includes(i)), released, refused: matched.filter((i) => i.source === 'topology') };
}

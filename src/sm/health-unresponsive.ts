/** The unresponsive-SMA policy (issue #33 item 2): a node whose SMPs time out (after the retries)
 * in K consecutive heavy sweeps is warned about or isolated (`source: 'unresponsive'`, the whole
 * node), and released once it has answered again for the quiet time, or by hand. Pure (time
 * passed in); sm/health-unresponsive-watch.ts sends the probes and moves the health state.
 *
 * A heavy sweep's discovery names what it could not read (sm/discovery.ts onSkip): a node whose
 * details timed out (its GUID known), or a port whose far side did not answer NodeInfo: the node
 * behind it is the one that port led to when it was last seen linked (remembered here; a node
 * never seen answering cannot be named). A node isolated as unresponsive is not probed by the
 * discovery through the ports that lead to it (`leadsToHeld`): one dead SMA does not make every
 * sweep pay its timeouts; one NodeInfo, one try, off the sweep's path, notices it answering again.
 *
 * Modelled on UFM's "unresponsive" unhealthy-port condition (OpenSM's hm_* health manager: a port
 * that times out in 5 of 7 sweeps; actions report / ignore / isolate / disable, cleared by hand).
 * The default here is off. */
import { NodeType } from '../wire/mad.js';
import type { Fabric } from '../model/fabric.js';
import type { Isolation, MismatchEnd } from '../model/topology-classes.js';
import { isolationKey } from './health-state.js';
import type { UnresponsivePolicy } from './health-unresponsive-policy.js';

export { parseUnresponsivePolicy, type UnresponsivePolicy } from './health-unresponsive-policy.js';

/** What a discovery left out (sm/discovery.ts DiscoverySkip, the fields used here). */
export interface SkipSeen {
  kind: 'node' | 'link' | 'duplicate';
  guid: bigint;
  desc: string;
  port?: number;
}

/** A port (its node's GUID, its number) through which a node is reached. */
export interface Face {
  guid: bigint;
  port: number;
}

export interface UnresponsiveVerdict {
  /** Nodes that reached K sweeps now (warned about, or isolated by `isolate`). */
  unresponsive: Array<Isolation & { sweeps: number }>;
  /** Nodes named unresponsive before that this sweep's discovery read again. */
  answering: MismatchEnd[];
}

export class UnresponsiveTracker {
  /** The node each port led to when it was last seen linked: per node GUID, the far node's GUID
   * by port number (arrays of bigints, no object per port: a heavy sweep of 23k nodes fills it
   * in a few ms), and each node's description and type as last seen. */
  private readonly facing = new Map<bigint, Array<bigint | undefined>>();
  private readonly seen = new Map<bigint, { desc: string; type?: number }>();
  /** Consecutive heavy sweeps each node was missed in. */
  private readonly misses = new Map<bigint, number>();
  /** Nodes named unresponsive (K reached), until they answer a discovery again. */
  private readonly named = new Map<bigint, MismatchEnd>();
  /** Held nodes whose probe answers, since when. */
  private readonly answerSince = new Map<bigint, number>();

  constructor(readonly policy: UnresponsivePolicy) {}

  /** The node port `port` of node `guid` led to when last seen linked (port 0: the node). */
  behind(guid: bigint, port: number): MismatchEnd | undefined {
    const far = this.facing.get(guid)?.[port];
    if (far === undefined) return undefined;
    const n = this.seen.get(far);
    return { guid: far, desc: n?.desc ?? '', port: 0, ...(n?.type !== undefined ? { type: n.type } : {}) };
  }

  /** Whether port `port` of node `guid` leads to a node of `held` (its discovery probe is not sent). */
  leadsToHeld(guid: bigint, port: number, held: ReadonlySet<bigint>): boolean {
    const far = held.size ? this.facing.get(guid)?.[port] : undefined;
    return far !== undefined && held.has(far);
  }

  /** The ports a node was last seen linked through (where its probe goes). */
  facesOf(guid: bigint): Face[] {
    const out: Face[] = [];
    for (const [g, ports] of this.facing) for (let port = 1; port < ports.length; port++) if (ports[port] === guid) out.push({ guid: g, port });
    return out;
  }

  /** The ports a node is reached through, from elsewhere (its isolation kept across a restart,
   * or handed by the master): known as if seen. */
  teach(guid: bigint, faces: readonly Face[]): void {
    for (const f of faces) {
      const ports = this.facing.get(f.guid) ?? [];
      ports[f.port] ??= guid;
      this.facing.set(f.guid, ports);
    }
  }

  /** One heavy sweep's view and what its discovery left out. `held`: the nodes isolated as
   * unresponsive now (not counted: the discovery did not probe them). */
  observe(f: Fabric, skips: readonly SkipSeen[], now: number, held: ReadonlySet<bigint>): UnresponsiveVerdict {
    const out: UnresponsiveVerdict = { unresponsive: [], answering: [] };
    const missed = new Map<bigint, MismatchEnd>();
    for (const s of skips) {
      if (s.kind === 'node') {
        const was = this.seen.get(s.guid);
        missed.set(s.guid, this.named.get(s.guid) ?? { guid: s.guid, desc: s.desc || (was?.desc ?? ''), port: 0, ...(was?.type !== undefined ? { type: was.type } : {}) });
      }
      else if (s.kind === 'link' && s.port !== undefined) {
        const far = this.behind(s.guid, s.port);
        if (far) missed.set(far.guid, far);
      }
    }
    const present = new Set<bigint>();
    for (const n of f.nodes) {
      present.add(n.guid);
      this.seen.set(n.guid, { desc: n.desc, type: n.type });
      let ports = this.facing.get(n.guid);
      for (let pn = 1; pn < n.ports.length; pn++) {
        const peer = n.ports[pn]?.peer;
        if (!peer) continue;
        if (!ports) this.facing.set(n.guid, (ports = []));
        ports[pn] = f.nodes[peer.node]!.guid;
      }
    }
    for (const g of present) {
      this.misses.delete(g);
      const was = this.named.get(g);
      if (was && !held.has(g)) {
        this.named.delete(g);
        out.answering.push(was);
      }
    }
    for (const [g, end] of missed) {
      if (present.has(g) || held.has(g)) continue;
      const n = (this.misses.get(g) ?? 0) + 1;
      this.misses.set(g, n);
      if (n !== this.policy.sweeps) continue;
      this.named.set(g, end);
      const a: MismatchEnd = { guid: g, desc: end.desc, port: 0, ...(end.type !== undefined ? { type: end.type } : {}) };
      out.unresponsive.push({ key: isolationKey(a), kind: 'node', a, cls: 'unresponsive', source: 'unresponsive', reason: `SMPs timed out in ${n} consecutive sweeps`, since: now, sweeps: n });
    }
    return out;
  }

  /** A held node's probe: answered or not, at `now`. True when it has answered for the quiet
   * time (release it); a probe not answered starts the quiet time again. */
  probed(guid: bigint, answered: boolean, now: number): boolean {
    if (!answered) {
      this.answerSince.delete(guid);
      return false;
    }
    const since = this.answerSince.get(guid) ?? now;
    this.answerSince.set(guid, since);
    return this.policy.quietMs > 0 && now - since >= this.policy.quietMs;
  }

  /** A node released (quiet, or by hand): counted from nothing again. */
  forget(guid: bigint): void {
    this.misses.delete(guid);
    this.named.delete(guid);
    this.answerSince.delete(guid);
  }
}

/** The directed-route path of a probe through `face`, over a view (`paths` by node GUID): the
 * face's node must be a switch in the view (or the SM's own node). Undefined when none fits. */
export function probePath(f: Fabric, paths: ReadonlyArray<{ path: readonly number[] }>, smNode: number, faces: readonly Face[]): number[] | undefined {
  for (const face of faces) {
    const i = f.nodes.findIndex((n) => n.guid === face.guid);
    if (i < 0 || (i !== smNode && f.nodes[i]!.type !== NodeType.Switch)) continue;
    return [...paths[i]!.path, face.port];
  }
  return undefined;
}

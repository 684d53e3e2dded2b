/** The flapping policy (issue #33 item 2): a link whose state changes N times within a window is
 * warned about or isolated (`source: 'flapping'`), and released after a quiet time with no change.
 * Pure (time passed in). A change is what the SM's sweeps see: a link present in one sweep's view
 * and gone in the next, or the reverse (every heavy and local sweep's view, before the isolated
 * links are cut; a trap 128 or a light sweep's PortStateChange asks for such a sweep).
 *
 * Modelled on opa-fm's port quarantine for flapping links (it quarantines a link after 25 bounces
 * in 15 minutes, released by hand or a restart); OpenSM has no flapping policy (it re-sweeps every
 * bounce); UFM's "unhealthy ports" isolate by hand or by a rule on error counters. The default
 * here is off. */
import type { Fabric } from '../model/fabric.js';
import type { Isolation, MismatchEnd } from '../model/topology-classes.js';
import { isolationKey } from './health-state.js';
import type { FlapPolicy } from './health-flap-policy.js';

export { parseFlapPolicy, type FlapPolicy } from './health-flap-policy.js';

interface LinkEnds {
  a: MismatchEnd;
  b: MismatchEnd;
}

/** The links of a fabric by their isolation key (each once). */
export function linksOf(f: Fabric): Map<string, LinkEnds> {
  const out = new Map<string, LinkEnds>();
  f.nodes.forEach((n, i) => {
    n.ports.forEach((p, pn) => {
      if (pn === 0 || !p?.peer || p.peer.node < i || (p.peer.node === i && p.peer.port < pn)) return;
      const q = f.nodes[p.peer.node]!;
      const a: MismatchEnd = { guid: n.guid, desc: n.desc, port: pn, type: n.type };
      const b: MismatchEnd = { guid: q.guid, desc: q.desc, port: p.peer.port, type: q.type };
      out.set(isolationKey(a, b), { a, b });
    });
  });
  return out;
}

/** What one observation found. */
export interface FlapVerdict {
  /** Links that became flapping now (warned about, or isolated by `isolate`). */
  flapping: Array<Isolation & { changes: number }>;
  /** Flapping isolations to release: quiet for `quietMs`. */
  released: string[];
}

export class FlapTracker {
  /** The links of the last view. */
  private last?: Map<string, LinkEnds>;
  /** Change times per link within the window, and the links known flapping (last change time). */
  private readonly changes = new Map<string, number[]>();
  private readonly ends = new Map<string, LinkEnds>();
  private readonly flapping = new Map<string, number>();
  /** Flapping links whose bounces were counted between two views (`bounced`): the difference the
   * next view shows is those bounces, not one more. */
  private readonly bouncedSince = new Set<string>();
  /** State changes counted so far (all links). */
  counted = 0;
  /** False once the policy is turned off by a reload: no new flapping link, the isolations held
   * are still released after their quiet time. */
  detecting = true;

  /** `policy`: replaced by a reload (HealthKeeper.configureFlap); the next change is judged by it. */
  constructor(public policy: FlapPolicy) {}

  /** One sweep's view: count the links that appeared or went since the last one. `held`: the
   * flapping isolations held now (a restart or a manual release is reflected by their absence). */
  observe(f: Fabric, now: number, held: ReadonlySet<string>): FlapVerdict {
    const links = linksOf(f);
    const out: FlapVerdict = { flapping: [], released: [] };
    const changed = new Set<string>();
    if (this.last) {
      for (const k of links.keys()) if (!this.last.has(k)) changed.add(k);
      for (const k of this.last.keys()) if (!links.has(k)) changed.add(k);
    }
    for (const k of changed) {
      if (this.bouncedSince.has(k)) continue;
      this.ends.set(k, links.get(k) ?? this.last!.get(k)!);
      const times = (this.changes.get(k) ?? []).filter((t) => now - t < this.policy.windowMs);
      times.push(now);
      this.changes.set(k, times);
      this.counted++;
      if (this.flapping.has(k)) this.flapping.set(k, now);
      else if (this.detecting && times.length >= this.policy.count) {
        this.flapping.set(k, now);
        const { a, b } = this.ends.get(k)!;
        const secs = Math.round(this.policy.windowMs / 1000);
        out.flapping.push({ key: k, kind: 'link', a, b, cls: 'flapping', source: 'flapping', reason: `${times.length} state changes in ${secs} s`, since: now, changes: times.length });
      }
    }
    for (const k of held) if (!this.flapping.has(k)) this.flapping.set(k, now); // held from a restart or the master: quiet from now
    for (const [k, t] of this.flapping) {
      const quiet = this.policy.quietMs > 0 && now - t >= this.policy.quietMs;
      if (quiet || (this.policy.action === 'isolate' && !held.has(k) && !out.flapping.some((x) => x.key === k))) {
        this.flapping.delete(k);
        this.changes.delete(k);
        if (quiet && held.has(k)) out.released.push(k);
      }
    }
    this.last = links;
    this.bouncedSince.clear();
    // Forget the links with no change left in the window (bounded state).
    for (const [k, times] of this.changes) if (!this.flapping.has(k) && now - times[times.length - 1]! >= this.policy.windowMs) this.changes.delete(k);
    return out;
  }

  /** A quarantined link bounced, seen without a sweep (sm/health-quiet.ts): counted, and its
   * quiet time starts again. */
  bounced(key: string, now: number): void {
    if (!this.flapping.has(key)) return;
    this.flapping.set(key, now);
    this.counted++;
    this.bouncedSince.add(key);
  }

  /** When the next quiet-time release is due (undefined: none). */
  releaseDue(): number | undefined {
    if (this.policy.quietMs <= 0 || !this.flapping.size) return undefined;
    return Math.min(...this.flapping.values()) + this.policy.quietMs;
  }

  /** Links known flapping now. */
  get flappingLinks(): number {
    return this.flapping.size;
  }

  /** Whether a link (its key) is known flapping now. */
  isFlapping(key: string): boolean {
    return this.flapping.has(key);
  }
}

/** The error-rate policy (issue #33 item 2): a link whose error counters, as PerfMgr reads them at
 * either end, rise faster than the configured rates per minute is warned about or isolated
 * (`source: 'errors'`, both ends), and released after a quiet time in which none of the policy's
 * counters rose (or by hand, `ibsm release`). Pure (time passed in): PerfMgr's 64-bit totals
 * (sm/perf-counters.ts) after each of its sweeps go in, isolations come out; the SM holds them in
 * its one health state (sm/health-state.ts) and a full heavy sweep applies them, as for the
 * flapping policy (sm/health-flap.ts).
 *
 * A rate is the rise of a total between two successive readings of the port over the time
 * between them (a port not read at a sweep, its PMA silent, is skipped, not counted as quiet);
 * the first reading of a port gives no rate (what it counted before PerfMgr came is not judged).
 * PerfMgr keeps reading the switch ends of the links held here (they are cut from the SM's
 * fabric), so "quiet" is seen, not assumed; a host end in INIT has no LID route to its PMA.
 *
 * Modelled on UFM's "high BER" unhealthy ports (auto-isolation off by default, switch-to-switch
 * links by default when on) and opa-fm's PM thresholds (Integrity: 100 weighted errors per
 * 10 s sweep, PortRcvErrors weight 100 %, LinkDowned 25 %, LinkErrorRecovery 0; logged only).
 * The default here is off. */
import type { Fabric, FabricNode } from '../model/fabric.js';
import { NodeType } from '../wire/mad.js';
import { endText } from '../model/topology-compare.js';
import type { Isolation, MismatchEnd } from '../model/topology-classes.js';
import type { Logger } from '../util/log.js';
import { isolationKey, type HealthChange, type HealthState } from './health-state.js';
import type { ErrorPolicy } from './health-errors-policy.js';
import type { CounterName } from './perf-counters.js';

export { parseErrorPolicy, type ErrorPolicy } from './health-errors-policy.js';

export const ERRORS_SOURCE = 'errors';

/** One port as PerfMgr knows it (sm/perfmgr.ts MonitoredPort). */
export interface ReadPort {
  readonly nodeGuid: bigint;
  readonly portNum: number;
  readonly counters: { readonly samples: number; total(name: CounterName): bigint };
}

export interface ErrorVerdict {
  /** Links over a rate now (warned about, or isolated by `isolate`), with the rates. */
  over: Array<Isolation & { rates: string }>;
  /** Error isolations to release: quiet for `quietMs`. */
  released: string[];
}

interface Reading {
  samples: number;
  at: number;
  totals: bigint[];
}

const portKey = (guid: bigint, port: number): string => `${guid.toString(16)}/${port}`;

export class ErrorRateTracker {
  private readonly last = new Map<string, Reading>();
  /** The links known erroring and when one of their counters last rose. */
  private readonly erroring = new Map<string, number>();

  constructor(readonly policy: ErrorPolicy) {}

  /** PerfMgr's ports after one of its sweeps over `f` (the SM's fabric: isolated links cut);
   * `held`: the error isolations held now (a manual release is reflected by its absence). */
  observe(f: Fabric, ports: Iterable<ReadPort>, now: number, held: readonly Isolation[]): ErrorVerdict {
    const out: ErrorVerdict = { over: [], released: [] };
    const byGuid = new Map(f.nodes.map((n) => [n.guid, n]));
    const heldAt = new Map<string, Isolation>();
    for (const i of held) for (const e of [i.a, ...(i.b ? [i.b] : [])]) heldAt.set(portKey(e.guid, e.port), i);
    const seen = new Set<string>();
    for (const p of ports) {
      const k = portKey(p.nodeGuid, p.portNum);
      seen.add(k);
      const prev = this.last.get(k);
      if (prev && prev.samples === p.counters.samples) continue; // not read this sweep
      const totals = this.policy.limits.map((l) => p.counters.total(l.counter));
      this.last.set(k, { samples: p.counters.samples, at: now, totals });
      if (!prev || now <= prev.at) continue;
      const rose: string[] = [];
      let increased = false;
      this.policy.limits.forEach((l, i) => {
        const d = totals[i]! - prev.totals[i]!;
        if (d <= 0n) return;
        increased = true;
        const perMin = (Number(d) * 60_000) / (now - prev.at);
        if (perMin > l.perMin) rose.push(`${l.label} ${Math.round(perMin * 10) / 10}/min (over ${l.perMin})`);
      });
      if (!increased) continue;
      const link = linkAt(f, byGuid, p.nodeGuid, p.portNum) ?? heldLink(heldAt.get(k));
      if (!link) continue;
      const key = isolationKey(link.a, link.b);
      if (this.erroring.has(key) || !rose.length) {
        if (this.erroring.has(key)) this.erroring.set(key, now);
        continue;
      }
      this.erroring.set(key, now);
      const at = link.a.guid === p.nodeGuid && link.a.port === p.portNum ? link.a : link.b;
      const rates = rose.join(', ');
      out.over.push({ key, kind: 'link', a: link.a, b: link.b, cls: 'error-rate', source: ERRORS_SOURCE, reason: `${rates} at ${endText(at)}`, since: now, rates });
    }
    const heldKeys = new Set(held.map((i) => i.key));
    for (const k of heldKeys) if (!this.erroring.has(k)) this.erroring.set(k, now); // health hook: held from a restart or the master: quiet from now
    for (const [k, t] of this.erroring) {
      const quiet = this.policy.quietMs > 0 && now - t >= this.policy.quietMs;
      if (quiet || (this.policy.action === 'isolate' && !heldKeys.has(k) && !out.over.some((x) => x.key === k))) {
        this.erroring.delete(k);
        if (quiet && heldKeys.has(k)) out.released.push(k);
      }
    }
    for (const k of this.last.keys()) if (!seen.has(k)) this.last.delete(k); // ports gone: bounded state
    return out;
  }

  /** Whether a link (its key) is known erroring now. */
  isErroring(key: string): boolean {
    return this.erroring.has(key);
  }

  /** The links known erroring now (warned about or isolated, not yet quiet). */
  get erroringLinks(): number {
    return this.erroring.size;
  }
}

function linkAt(f: Fabric, byGuid: ReadonlyMap<bigint, FabricNode>, guid: bigint, port: number): { a: MismatchEnd; b: MismatchEnd } | undefined {
  const n = byGuid.get(guid);
  const peer = n?.ports[port]?.peer;
  if (!n || !peer) return undefined;
  const q = f.nodes[peer.node]!;
  return { a: { guid: n.guid, desc: n.desc, port, type: n.type }, b: { guid: q.guid, desc: q.desc, port: peer.port, type: q.type } };
}

function heldLink(i: Isolation | undefined): { a: MismatchEnd; b: MismatchEnd } | undefined {
  return i?.b ? { a: i.a, b: i.b } : undefined;
}

/** The switch ends of the links held by the policy: PerfMgr reads them though they are cut from
 * the SM's fabric (sm/perfmgr.ts `sweep`'s `also`). */
export function errorHeldPorts(isolated: readonly Isolation[]): Array<{ guid: bigint; port: number }> {
  return isolated.filter((i) => i.source === ERRORS_SOURCE && i.b).flatMap((i) => [i.a, i.b!].filter((e) => e.type === NodeType.Switch).map((e) => ({ guid: e.guid, port: e.port })));
}

/** The next health state from one observation (undefined: nothing changed), logged. */
export function judgeErrorRates(tracker: ErrorRateTracker, state: HealthState, f: Fabric, ports: Iterable<ReadPort>, now: number, log: Logger): HealthChange | undefined {
  const mine = state.isolated.filter((i) => i.source === ERRORS_SOURCE);
  const v = tracker.observe(f, ports, now, mine);
  const { action, quietMs } = tracker.policy;
  for (const i of v.over) log.warn('port error rate over threshold', { a: endText(i.a), b: endText(i.b!), rates: i.rates, action });
  const added = action === 'isolate' ? v.over.filter((i) => !state.isolated.some((x) => x.key === i.key)).map(({ rates: _, ...i }) => i as Isolation) : [];
  const gone = new Set(v.released);
  const released = mine.filter((i) => gone.has(i.key));
  for (const i of released) log.info('erroring link quiet: isolation released', { a: endText(i.a), b: endText(i.b!), quietS: quietMs / 1000 });
  if (!added.length && !released.length) return undefined;
  const next = { ...state, isolated: [...state.isolated.filter((i) => !(i.source === ERRORS_SOURCE && gone.has(i.key))), ...added] };
  return { state: next, found: [], gone: [], isolated: added, released };
}

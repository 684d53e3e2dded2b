/** health hook: flap. A link quarantined for flapping (isolated by the flapping policy,
 * sm/health-flap.ts) goes on bouncing: the trap 128 of a switch at its end, and the PortStateChange
 * a light sweep reads there, start no sweep. That switch alone is checked: its SwitchInfo, then
 * (PortStateChange set) the PortInfo of its ports, and the NodeInfo through a quarantined port that
 * is up (does it still lead to the isolation's other end?). When nothing but its quarantined ports
 * changed since the snapshot, the bounce counts for the flapping policy only (its quiet time starts
 * again) and PortStateChange is cleared (SwitchInfo written back); anything else is "changed" and
 * the caller sweeps as it would have. Cost: 2 + ports SMPs a switch a bounce (no SwitchInfo of every
 * other switch, no routing, no LFT block), where a local sweep read every switch. Only flapping
 * isolations: a miswired cable held by the expected topology may be re-plugged right. */
import { NodeType, PortState, SmpAttr } from '../wire/mad.js';
import { NodeInfo, PortInfo, SwitchInfo } from '../wire/sma.js';
import { snapshotPorts, type Snapshot } from '../model/snapshot.js';
import type { Isolation, MismatchEnd } from '../model/topology-classes.js';
import type { Logger } from '../util/log.js';
import type { SmpClient } from './smp-client.js';
import { portMoved } from './trap-check.js';

/** What a check found: only quarantined ports moved (counted, PortStateChange cleared), or more. */
export type QuietVerdict = 'absorbed' | 'changed';

/** What the watch needs of the health keeper (sm/health-phase.ts). */
export interface QuarantineHolder {
  readonly state: { readonly isolated: readonly Isolation[] };
  /** A quarantined link bounced (the flapping policy counts it). */
  flapBounce(key: string): void;
}

/** The quarantined ports of a snapshot's switches: node index → port → isolation. */
export type QuarantinedPorts = ReadonlyMap<number, ReadonlyMap<number, Isolation>>;

const up = (s: number | undefined): boolean => (s ?? PortState.Down) >= PortState.Init;

export class QuarantineWatch {
  /** Checks run, and of those the bounces absorbed (no sweep). */
  checks = 0;
  absorbed = 0;
  /** The switches (by LID) being checked, and those a trap asked about meanwhile. */
  private readonly running = new Set<number>();
  private readonly again = new Map<number, () => void>();
  private latest?: Snapshot;
  private cache?: { snap: Snapshot; isolated: readonly Isolation[]; ports: QuarantinedPorts };

  constructor(
    private readonly smp: SmpClient,
    private readonly log: Logger,
    private readonly health: QuarantineHolder,
  ) {}

  /** The switch ends of the flapping isolations, by the snapshot's node indexes. */
  ports(snap: Snapshot): QuarantinedPorts {
    const isolated = this.health.state.isolated;
    if (this.cache?.snap === snap && this.cache.isolated === isolated) return this.cache.ports;
    const out = new Map<number, Map<number, Isolation>>();
    const flapping = isolated.filter((i) => i.source === 'flapping' && i.kind === 'link' && i.b);
    if (flapping.length) {
      const byGuid = new Map<bigint, number>();
      snap.fabric.nodes.forEach((n, i) => n.type === NodeType.Switch && byGuid.set(n.guid, i));
      for (const i of flapping) {
        for (const e of [i.a, i.b!]) {
          const n = byGuid.get(e.guid);
          if (n === undefined || n === snap.discovery.smNode) continue;
          if (!out.has(n)) out.set(n, new Map());
          out.get(n)!.set(e.port, i);
        }
      }
    }
    this.cache = { snap, isolated, ports: out };
    return out;
  }

  /** A trap 128 from `lid`: false when no quarantined port is on that switch (the caller sweeps as
   * usual); else the switch is checked (one check at a time a switch, a trap meanwhile checks it
   * again after) and `sweep` is called when more than its quarantined ports changed. */
  trap(snap: Snapshot, lid: number, sweep: () => void): boolean {
    this.latest = snap;
    const ep = snapshotPorts(snap).byLid(lid);
    if (!ep || !this.ports(snap).has(ep.node)) return false;
    if (this.running.has(lid)) {
      this.again.set(lid, sweep);
      return true;
    }
    this.running.add(lid);
    void this.check(snap, ep.node).then((v) => {
      this.running.delete(lid);
      const next = this.again.get(lid);
      this.again.delete(lid);
      if (v === 'changed') sweep();
      else if (next && !this.trap(this.latest!, lid, next)) next(); // over the latest snapshot
    });
    return true;
  }

  /** Check switch `node` of `snap` (one with quarantined ports): never throws (an SMP that fails
   * makes it "changed": the sweep finds out). */
  async check(snap: Snapshot, node: number): Promise<QuietVerdict> {
    this.checks++;
    const q = this.ports(snap).get(node);
    const n = snap.fabric.nodes[node]!;
    const d = snap.discovery.nodes[node]!;
    try {
      if (!q) return 'changed';
      const si = SwitchInfo.decode(await this.smp.getDr(d.path, SmpAttr.SwitchInfo, 0));
      if (!si.portStateChange) return this.absorb(); // nothing since the last clear (a sweep or a check saw it)
      const states = await Promise.all(Array.from({ length: n.numPorts }, (_, i) => this.smp.getDr(d.path, SmpAttr.PortInfo, i + 1).then((b) => PortInfo.decode(b).portState)));
      for (let p = 1; p <= n.numPorts; p++) {
        const now = states[p - 1]!;
        const i = q.get(p);
        if (i) {
          if (up(now) && !(await this.leadsTo(d.path, p, farEnd(i, n.guid, p)))) return this.changed(n, p, 'the quarantined port leads elsewhere now');
          continue;
        }
        const was = d.portInfo[p]?.portState;
        if (portMoved(now, was, n.ports[p]?.peer !== undefined)) return this.changed(n, p, `PortState ${now}, was ${was ?? 'unknown'}`);
      }
      await this.smp.setDr(d.path, SmpAttr.SwitchInfo, 0, SwitchInfo.encode(si)); // PortStateChange written 1: cleared
      for (const i of new Set(q.values())) {
        this.health.flapBounce(i.key);
        this.log.debug('quarantined link bounced: counted for the flapping policy, no sweep', { node: n.desc, guid: n.guid, link: i.key });
      }
      return this.absorb();
    } catch (e) {
      this.log.debug('quarantined link check failed; sweeping', { node: n.desc, guid: n.guid, error: (e as Error).message });
      return 'changed';
    }
  }

  private absorb(): QuietVerdict {
    this.absorbed++;
    return 'absorbed';
  }

  private changed(n: { desc: string; guid: bigint }, port: number, why: string): QuietVerdict {
    this.log.debug('switch with a quarantined link: another port changed; sweeping', { node: n.desc, guid: n.guid, port, change: why });
    return 'changed';
  }

  /** Does port `p` of the switch at `path` lead to `to` (NodeInfo through it)? */
  private async leadsTo(path: readonly number[], p: number, to: MismatchEnd): Promise<boolean> {
    const ni = NodeInfo.decode(await this.smp.getDr([...path, p], SmpAttr.NodeInfo, 0));
    return ni.nodeGuid === to.guid && ni.localPortNum === to.port;
  }
}

/** The end of isolation `i` that is not (guid, port). */
function farEnd(i: Isolation, guid: bigint, port: number): MismatchEnd {
  return i.a.guid === guid && i.a.port === port ? i.b! : i.a;
}

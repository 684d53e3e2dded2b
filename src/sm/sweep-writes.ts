/** A sweep's writes through the one apply step (sm/apply.ts), with the one failure policy: a
 * write that fails does not stop the others; it is forgotten in what is programmed (the next
 * sweep writes it again), logged with its node, GUID, port and LID (the first FAILURE_LOG_LINES
 * of a sweep, then one summary line) and counted. Acknowledged PortInfo and SwitchInfo answers
 * update the sweep's view (what the SMA now holds); table writes update what is programmed.
 * Writes to a node whose M_Key this SM read and is not its own present that key. One per sweep
 * (heavy, local, takeover, multicast), so the counts are the sweep's. No I/O but the client's. */
import { NodeType } from '../wire/mad.js';
import { SwitchInfo } from '../wire/sma.js';
import { keepPortInfo, rekeepPortInfo } from '../model/port-info.js';
import type { DiscoveryResult } from '../model/snapshot.js';
import type { Logger } from '../util/log.js';
import { APPLY_WINDOW, apply, type ApplyHooks, type ApplyResult, type WriteSource } from './apply.js';
import type { Programmed, SmpWrite } from './programmed.js';
import type { SmpClient } from './smp-client.js';
import { FAILURE_LOG_LINES, logWriteFailure } from './sweep-log.js';

export class SweepWrites {
  /** Writes that failed in this sweep. */
  failedCount = 0;
  /** The writes that failed (what they planned is left for the next sweep). */
  readonly failed = new Set<SmpWrite>();
  private readonly hooks: ApplyHooks;

  constructor(
    private readonly smp: SmpClient,
    private readonly log: Logger,
    /** The sweep's view: PortInfo/SwitchInfo answers go into it; failures are named from it. */
    disc: DiscoveryResult,
    programmed: Programmed,
    /** The SM's own M_Key (a refused write to a port with another key is said as such). */
    mkey: bigint | undefined,
    /** M_Keys to present, by DR path (`foreignKeys`). */
    private readonly keys: ReadonlyMap<string, bigint> = new Map(),
    /** Called with each acknowledged write (a local sweep's LFT block log lines). */
    private readonly onOk?: (w: SmpWrite) => void,
    /** `disc` is a sweep's own discovery, not yet published: an acknowledged PortInfo is written
     * over the one kept (model/port-info.ts rekeepPortInfo) rather than kept anew. */
    ownView = false,
  ) {
    this.hooks = {
      ok: (w, resp) => {
        const e = w.effect;
        if (e.kind === 'portInfo') {
          const pis = disc.nodes[e.node]!.portInfo;
          pis[e.port] = ownView ? rekeepPortInfo(pis[e.port], resp) : keepPortInfo(resp);
        } else if (e.kind === 'switchInfo') disc.nodes[e.node]!.switchInfo = SwitchInfo.decode(resp); // what the switch holds now (the SA reports it)
        else programmed.record(w);
        this.onOk?.(w);
      },
      failed: (w, e) => {
        programmed.failed(w);
        this.failed.add(w);
        if (++this.failedCount <= FAILURE_LOG_LINES) logWriteFailure(log, disc, w, e, mkey);
      },
    };
  }

  /** Send `writes` (a list, or a source asked as the window has room) through the apply step. */
  run(writes: readonly SmpWrite[] | WriteSource, window = APPLY_WINDOW): Promise<ApplyResult> {
    return apply(this.smp, this.keyed(writes), this.hooks, window);
  }

  /** Writes acknowledged of `writes`. */
  async ok(writes: readonly SmpWrite[] | WriteSource, window = APPLY_WINDOW): Promise<number> {
    return (await this.run(writes, window)).ok;
  }

  /** The summary line of the failures past the first FAILURE_LOG_LINES. */
  finish(): void {
    if (this.failedCount > FAILURE_LOG_LINES) this.log.warn('more SMP writes failed in this sweep', { more: this.failedCount - FAILURE_LOG_LINES });
  }

  private keyed(writes: readonly SmpWrite[] | WriteSource): readonly SmpWrite[] | WriteSource {
    const keys = this.keys;
    if (!keys.size) return writes;
    const withKey = (w: SmpWrite): SmpWrite => (keys.has(w.path.join(',')) ? { ...w, mkey: keys.get(w.path.join(',')) } : w);
    if (Array.isArray(writes)) return (writes as readonly SmpWrite[]).map(withKey);
    const src = writes as WriteSource;
    return { next: () => { const w = src.next(); return w && withKey(w); } };
  }
}

/** Nodes (by DR path) whose management port shows an M_Key that is not this SM's, readable
 * because its protection is off (never set, or its lease expired, IBA 14.2.4.2): their Sets
 * present that key (each said once a sweep). */
export function foreignKeys(disc: DiscoveryResult, mine: bigint | undefined, log: Logger): Map<string, bigint> {
  const out = new Map<string, bigint>();
  disc.fabric.nodes.forEach((n, ni) => {
    const d = disc.nodes[ni]!;
    const sw = n.type === NodeType.Switch;
    d.portPaths.forEach((path, pn) => {
      const pi = d.portInfo[sw ? 0 : pn];
      if (!path || !pi || pi.mkeyProtectBits !== 0 || pi.mkey === 0n || pi.mkey === (mine ?? 0n)) return;
      out.set(path.join(','), pi.mkey);
      log.info("port's M_Key read from its PortInfo (protection off): its Sets present it", { node: n.desc, guid: n.guid, port: pn, lid: pi.lid });
    });
  });
  return out;
}

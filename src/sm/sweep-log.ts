/** The heavy sweep's log lines (sm/sweep.ts): what was left out of a discovery, which write
 * failed where, and the --verbose phase lines. Only formatting: no I/O but the logger. */
import { NodeType } from '../wire/mad.js';
import type { Fabric } from '../model/fabric.js';
import type { RoutingResult } from '../routing/types.js';
import type { FallbackResult } from '../routing/registry.js';
import { verifyRoutes } from '../routing/verify.js';
import type { Logger } from '../util/log.js';
import type { DiscoveryResult, DiscoverySkip } from './discovery.js';
import type { SmpWrite } from './programmed.js';
import type { LftAdoption } from './adopt-lfts.js';

/** Log lines per sweep for SMPs given up (then one summary line). */
export const FAILURE_LOG_LINES = 20;

/** Milliseconds to one decimal, for the --verbose phase lines. */
export const ms1 = (ms: number): number => Math.round(ms * 10) / 10;

/** Where a write went, for a log line an operator can act on. */
export function writeTarget(disc: DiscoveryResult, w: SmpWrite): Record<string, unknown> {
  const e = w.effect;
  const ni = e.kind === 'portInfo' || e.kind === 'switchInfo' ? e.node : disc.fabric.nodes.findIndex((n) => n.guid === (e.kind === 'lft' ? e.guid : e.kind === 'mft' ? e.write.switchGuid : undefined));
  return portTarget(disc, ni, e.kind === 'portInfo' ? e.port : 0, w.path);
}

/** A port named in a log line: node description, GUID, port, LID and the DR path to it. */
export function portTarget(disc: DiscoveryResult, ni: number, port: number, path: readonly number[]): Record<string, unknown> {
  const n = ni >= 0 ? disc.fabric.nodes[ni] : undefined;
  const lid = n ? (n.ports[n.type === NodeType.Switch ? 0 : port]?.lid ?? 0) : 0;
  return { node: n?.desc ?? '', guid: n?.guid ?? 0n, port, lid, path: path.join(',') };
}

/** The discovery's onSkip: collects into `skips`, logs a duplicate GUID always and the first
 * FAILURE_LOG_LINES nodes and links left out. */
export function skipLogger(log: Logger, skips: DiscoverySkip[]): (sk: DiscoverySkip) => void {
  return (sk) => {
    skips.push(sk);
    if (sk.kind === 'duplicate') {
      log.error('duplicate GUID: a second node answers with the GUID of a node found already; it is left out', { guid: sk.guid, node: sk.desc, port: sk.port ?? 0, path: sk.path.join(','), first: (sk.first ?? []).join(',') });
      return;
    }
    if (skips.length <= FAILURE_LOG_LINES)
      log.warn(sk.kind === 'node' ? 'node left out of this sweep: it could not be read' : 'link left out of this sweep: its far side could not be read', {
        node: sk.desc,
        guid: sk.guid,
        ...(sk.port !== undefined ? { port: sk.port } : {}),
        lid: sk.lid,
        path: sk.path.join(','),
        error: (sk.error as Error).message,
      });
  };
}

/** One failed write: an M_Key this SM does not know (the M_Key lives on the management port: a
 * switch's port 0, a CA's own port; one not ours reads as 0 when protected), or any other failure. */
export function logWriteFailure(log: Logger, disc: DiscoveryResult, w: SmpWrite, e: unknown, mkey: bigint | undefined): void {
  const ef = w.effect;
  const mp = ef.kind === 'portInfo' ? disc.nodes[ef.node]!.portInfo[disc.fabric.nodes[ef.node]!.type === NodeType.Switch ? 0 : ef.port] : undefined;
  if (mp && mp.mkeyProtectBits > 0 && !(mkey && mp.mkey === mkey))
    log.warn('port protected by an M_Key this SM does not know: its Sets are refused; left out until the M_Key lease expires', { ...writeTarget(disc, w), protectBits: mp.mkeyProtectBits, leaseS: mp.mkeyLeasePeriod });
  else log.warn('SMP write failed; left for the next sweep', { ...writeTarget(disc, w), attr: w.attr, mod: w.mod, error: (e as Error).message });
}

/** The --verbose discovery line. */
export function logDiscoveryPhase(log: Logger, sweep: number, disc: DiscoveryResult, switches: number, skippedNodes: number, skippedLinks: number, ms: number): void {
  let ports = 0;
  let linked = 0;
  for (const n of disc.fabric.nodes) for (const p of n.ports) if (p) (ports++, p.peer && linked++);
  log.debug('sweep phase: discovery', { sweep, nodes: disc.fabric.nodes.length, switches, ports, links: linked / 2, smps: disc.smps, depth: disc.maxDepth, skippedNodes, skippedLinks, ms: ms1(ms) });
}

/** The --verbose routing line: the routes verified (loops, deadlocks, load) as they were computed. */
export function logRoutingPhase(log: Logger, sweep: number, fabric: Fabric, routed: FallbackResult, routeMs: number, now: () => number): void {
  const tv = now();
  const result: RoutingResult = routed.result;
  const v = verifyRoutes(fabric, result, { stretch: false });
  log.debug('sweep phase: routing', {
    sweep,
    engine: result.engine,
    skipped: routed.skipped.map((k) => k.engine).join(',') || 'none',
    ms: ms1(routeMs),
    vls: v.vlsUsed,
    verified: v.ok,
    deadlockFree: v.deadlockFree,
    unreachablePairs: v.unreachablePairs,
    loops: v.loopEntries,
    cdgCycles: v.cdg.reduce((a, c) => a + c.cyclicComponents, 0),
    hopsMax: v.hops.max,
    routesPerLinkMax: v.linkLoad.max,
    routesPerLinkMean: Math.round(v.linkLoad.mean * 10) / 10,
    verifyMs: ms1(now() - tv),
  });
}

/** The LFT blocks read back from switches this SM had not programmed, and whether the tables
 * another SM left there were adopted (sm/adopt-lfts.ts). */
export function logLftReads(log: Logger, blocks: number, a: LftAdoption | undefined, previousMasterLid: number | undefined): void {
  if (blocks) log.info('LFT blocks read back', { blocks });
  if (!a) return;
  if (a.adopted) log.info('forwarding tables of the previous master adopted', { previousMasterLid, lids: a.lids, busiestLink: a.busiest, oursBusiestLink: a.ours, deadlockFree: a.deadlockFree });
  else log.info('forwarding tables of the previous master not adopted: routing with the configured engine', { previousMasterLid, reason: a.reason });
}

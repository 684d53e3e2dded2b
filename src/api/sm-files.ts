/** The files the SM\'s options name, read and checked: partitions.conf, qos-policy.conf (and the
 * qos_* VL settings), the routing engines\' GUID files, prefix-routes.conf; and the guid2lid cache. */
import { closeSync, existsSync, mkdirSync, openSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SubnetOptions } from '../subnet.js';
import { Guid2LidError, parseGuid2Lid, type LidRange } from '../sm/lids.js';
import { Guid2LidFile } from './guid2lid-file.js';
import { parsePartitions, PartitionConfigError, PartitionPlan } from '../model/partitions.js';
import { parseGuidFile } from '../model/guid-file.js';
import { parseRouteOrder } from '../routing/route-order.js';
import { enginesWithoutRouteOrder } from '../routing/registry.js';
import { ConfigFileError, readNamedFile } from '../config/files.js';
import { parseQosPolicy, qosVlSettings, type QosPolicy, type QosVlSettings } from '../model/qos-policy.js';
import { parsePrefixRoutes } from '../sa/prefix-routes.js';
import type { Logger } from '../util/log.js';
import type { Fabric } from '../model/fabric.js';
import { parseTopologyActions, type TopologyActions } from '../model/topology-classes.js';
import { CONFIG_OPTIONS } from '../config/options.js';
import type { OpenSmOptions, SmConfig } from './sm-config.js';

/** What openSm and a reload read from the configuration's files, each checked (an error names its
 * file and line): partitions.conf, qos-policy.conf (and the qos_* VL settings), the GUID files of
 * the routing engines and prefix-routes.conf. */
export interface SmFiles {
  partitions: PartitionPlan;
  qos?: QosPolicy;
  qosVl?: QosVlSettings;
  routingOptions: SubnetOptions['routingOptions'] & object;
  prefixRoutes?: ReturnType<typeof parsePrefixRoutes>;
  /** The expected topology (--topology) and the action of each mismatch class (--topology-action). */
  topology?: { expected: Fabric; actions: TopologyActions };
}

/** A file named and not readable: an error naming the option, the file's role and why (not a bare ENOENT). */
export function namedText(file: string, key: keyof SmConfig): string {
  const t = readNamedFile(file, CONFIG_OPTIONS.find((x) => x.key === key)!.name);
  if (typeof t !== 'string') throw new ConfigFileError([t]);
  return t;
}

/** The files the options name, read and checked. `atStart`: a partitions.conf in error does not
 * stop the SM (OpenSM: "Partition configuration in error; retrying with default config"): said
 * loudly there, and the default partition used; a reload throws instead and keeps the running
 * configuration. */
export function readSmFiles(o: OpenSmOptions, atStart?: Logger, atReload?: Logger): SmFiles {
  let partitions = PartitionPlan.defaultPlan();
  if (o.partitions) {
    const t = namedText(o.partitions, 'partitions');
    try {
      partitions = parsePartitions(t, o.partitions);
    } catch (e) {
      if (!atStart || !(e instanceof PartitionConfigError)) throw e;
      atStart.error('partition configuration in error; using the default configuration', { file: o.partitions, error: e.message });
    }
  }
  const qos = o.qosPolicy ? parseQosPolicy(namedText(o.qosPolicy, 'qosPolicy'), o.qosPolicy) : undefined;
  // QoS on (a policy file, or --qos as opensm -Q): SL2VL, VLArbitration and VLHighLimit from the qos-* settings.
  const qosVl = qos || o.qos ? qosVlSettings({ maxVls: o.qosMaxVls, highLimit: o.qosHighLimit, vlarbHigh: o.qosVlarbHigh, vlarbLow: o.qosVlarbLow, sl2vl: o.qosSl2vl }) : undefined;
  const roots = [...(o.roots ?? []), ...(o.rootGuidFile ? parseGuidFile(namedText(o.rootGuidFile, 'rootGuidFile'), o.rootGuidFile) : [])];
  const cnGuids = o.cnGuidFile ? parseGuidFile(namedText(o.cnGuidFile, 'cnGuidFile'), o.cnGuidFile) : undefined;
  const ioGuids = o.ioGuidFile ? parseGuidFile(namedText(o.ioGuidFile, 'ioGuidFile'), o.ioGuidFile) : undefined;
  const routeOrder = o.guidRoutingOrderFile ? readRouteOrder(o.guidRoutingOrderFile, atReload) : undefined;
  const noScatter = routeOrder && o.guidRoutingOrderNoScatter ? { routeOrderNoScatter: true } : {};
  const prefixRoutes = o.prefixRoutes ? parsePrefixRoutes(namedText(o.prefixRoutes, 'prefixRoutes'), o.prefixRoutes) : undefined;
  // The policy against the partitions it names (throws as at start).
  qos?.withPartitions(partitions);
  return { partitions, qos, qosVl, routingOptions: { ...(roots.length ? { roots } : {}), ...(cnGuids ? { cnGuids } : {}), ...(ioGuids ? { ioGuids } : {}), ...(routeOrder ? { routeOrder, ...noScatter } : {}) }, prefixRoutes };
}

/** The expected topology (--topology) and the actions of its mismatch classes (--topology-action);
 * the parser loaded only when a file is named (ibsm run on a device loads no topology reader). */
export async function readTopology(o: OpenSmOptions): Promise<SmFiles['topology']> {
  if (!o.topology) return undefined;
  const { parseExpectedTopology } = await import('../model/topology-file.js');
  return { expected: parseExpectedTopology(namedText(o.topology, 'topology'), o.topology), actions: parseTopologyActions(o.topologyAction ?? '') };
}

/** The guid routing order file. At start one that cannot be read or parsed is refused, as every
 * file the configuration names; at a reload it is logged and the routes go without an order (as
 * OpenSM, which reads it at every routing: ERR 3A0D), the rest of the reload applied. */
function readRouteOrder(file: string, atReload?: Logger): bigint[] | undefined {
  if (!atReload) return parseRouteOrder(namedText(file, 'guidRoutingOrderFile'), file);
  try {
    return parseRouteOrder(namedText(file, 'guidRoutingOrderFile'), file);
  } catch (e) {
    atReload.error('guid routing order file not read; routing without an order', { file, error: (e as Error).message });
    return undefined;
  }
}

/** A WARN for each engine of the chain that routes in its own order when an order is given. */
export function warnRouteOrder(log: Logger, routing: readonly string[], files: SmFiles): void {
  if (!files.routingOptions.routeOrder) return;
  for (const engine of enginesWithoutRouteOrder(routing)) log.warn('routing engine routes in its own order: the guid routing order file is not used by it', { engine, routing: routing.join(',') });
}

/** The guid2lid cache is written after sweeps (atomically, through FILE.tmp-PID): its directory is
 * made and the temporary file tried now, before the first SMP, so an unwritable cache is a local
 * problem said at start (naming the option and the path), not a failure after the first sweep. */
export function checkGuid2LidWritable(path: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    closeSync(openSync(tmp, 'w'));
    unlinkSync(tmp);
  } catch (e) {
    throw new Guid2LidError(`--guid2lid ${path}: the cache cannot be written: ${(e as Error).message}`, { file: path, cause: e });
  }
}

/** The guid2lid cache the options name (`none`: none): checked writable, read when it exists
 * (unless reassign_lids), and the store the SM saves it to (written off the sweep's path). */
export function openGuid2Lid(o: OpenSmOptions, log: Logger): Pick<SubnetOptions, 'guid2lid' | 'saveGuid2Lid'> & { file?: Guid2LidFile } {
  const g2l = o.guid2lid === 'none' ? undefined : o.guid2lid;
  if (!g2l) return {};
  checkGuid2LidWritable(g2l);
  let guid2lid: Map<bigint, LidRange> | undefined;
  if (existsSync(g2l) && o.reassignLids) log.info('guid2lid not used: every port gets a new LID (reassign_lids)', { file: g2l });
  else if (existsSync(g2l)) {
    const dropped: string[] = [];
    guid2lid = parseGuid2Lid(namedText(g2l, 'guid2lid'), g2l, dropped);
    for (const d of dropped) log.warn('guid2lid entry not used', { problem: d });
    log.info('guid2lid loaded', { file: g2l, entries: guid2lid.size });
  }
  const file = new Guid2LidFile(g2l, log);
  return { guid2lid, saveGuid2Lid: (m) => file.save(m), file };
}

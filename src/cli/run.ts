/** `ibsm run`: the SM daemon wiring — backend, SM, trap and SMInfo handling, signals. */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { Subnet } from '../subnet.js';
import { smpClientOf } from '../sm/smp-client.js';
import { formatGuid2Lid, parseGuid2Lid, type LidRange } from '../sm/lids.js';
import { parsePartitions, PartitionPlan } from '../model/partitions.js';
import { parseQosPolicy, qosVlSettings } from '../model/qos-policy.js';
import type { Logger } from '../util/log.js';
import { openBackend } from './backend.js';
import { renderMetrics, serveMetrics } from './metrics.js';
import type { Server } from 'node:http';

export interface RunOptions {
  sim?: string;
  umad: boolean;
  ca?: string;
  port?: number;
  attach?: string;
  seed?: number;
  routing: string[];
  lmc: number;
  guid2lidFile?: string;
  partitionsFile?: string;
  /** OpenSM's qos-policy.conf: PathRecord SLs and limits. */
  qosPolicyFile?: string;
  sweepIntervalS: number;
  once: boolean;
  mkey?: bigint;
  mkeyProtectBits?: number;
  mkeyLease?: number;
  subnetTimeout?: number;
  priority?: number;
  /** SM_Key (SMs with another non-zero key are ignored). */
  smKey?: bigint;
  /** Standby polling of the master. */
  pollIntervalMs?: number;
  pollRetries?: number;
  log: Logger;
  progress: boolean;
  /** Serve Prometheus metrics on 127.0.0.1:port. */
  metricsPort?: number;
  /** PathRecord answers the SA keeps per sweep for repeated queries (0 disables; default 32768). */
  saCache?: number;
}

/** Write a file atomically (temp + rename) so a crash never leaves half a guid2lid. */
function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

export async function runSm(o: RunOptions): Promise<number> {
  const log = o.log;
  let guid2lid: Map<bigint, LidRange> | undefined;
  if (o.guid2lidFile && existsSync(o.guid2lidFile)) {
    guid2lid = parseGuid2Lid(readFileSync(o.guid2lidFile, 'utf8'), o.guid2lidFile);
    log.info('guid2lid loaded', { file: o.guid2lidFile, entries: guid2lid.size });
  }
  const partitions = o.partitionsFile ? parsePartitions(readFileSync(o.partitionsFile, 'utf8'), o.partitionsFile) : PartitionPlan.defaultPlan();
  const qos = o.qosPolicyFile ? parseQosPolicy(readFileSync(o.qosPolicyFile, 'utf8'), o.qosPolicyFile) : undefined;

  const be = await openBackend({ sim: o.sim, umad: o.umad, ca: o.ca, port: o.port, sm: true, sa: true, seed: o.seed, attach: o.attach, rpc: o.mkey !== undefined ? { mkey: o.mkey } : {} });
  log.info('ibsm starting', { backend: be.kind, port: `${be.transport.local.caName}/${be.transport.local.portNum}`, portGuid: be.transport.local.portGuid, routing: o.routing.join(','), lmc: o.lmc });

  let lastProgress = '';
  const subnet = new Subnet({
    rpc: be.rpc,
    portGuid: be.transport.local.portGuid,
    smp: smpClientOf(be.rpc),
    clock: be.clock,
    log,
    routing: o.routing,
    lmc: o.lmc,
    guid2lid,
    saveGuid2Lid: o.guid2lidFile ? (m) => writeFileAtomic(o.guid2lidFile!, formatGuid2Lid(m)) : undefined,
    partitions,
    qos,
    // QoS on (as OpenSM -Q): SL2VL and VLArbitration from OpenSM's default qos_* settings.
    qosVl: qos ? qosVlSettings() : undefined,
    sweepIntervalMs: o.sweepIntervalS * 1000,
    subnetTimeout: o.subnetTimeout,
    mkey: o.mkey,
    mkeyProtectBits: o.mkeyProtectBits,
    mkeyLeasePeriod: o.mkeyLease,
    priority: o.priority,
    smKey: o.smKey,
    pollIntervalMs: o.pollIntervalMs,
    pollRetries: o.pollRetries,
    seed: o.seed,
    saServer: o.saCache !== undefined ? { answerCacheSize: o.saCache } : undefined,
    onProgress: o.progress
      ? (phase, d) => {
          const line = `\r${phase}: ${Object.entries(d).map(([k, v]) => `${k}=${v}`).join(' ')}`;
          if (line !== lastProgress) process.stderr.write((lastProgress = line) + '\x1b[K');
        }
      : undefined,
  });

  let metrics: Server | undefined;
  if (o.metricsPort !== undefined) {
    try {
      metrics = await serveMetrics(o.metricsPort, () => renderMetrics(subnet, be.rpc));
      log.info('metrics served', { url: `http://127.0.0.1:${o.metricsPort}/metrics` });
    } catch (e) {
      subnet.stop();
      await be.close();
      throw new Error(`cannot serve metrics on 127.0.0.1:${o.metricsPort}: ${(e as Error).message}`);
    }
  }

  let stopping = false;
  const stop = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.info('ibsm stopping', { reason: why });
    subnet.stop();
    metrics?.close();
    await be.close();
  };

  try {
    await subnet.start();
  } catch (e) {
    log.error('first sweep failed', { error: (e as Error).message });
    await stop('error');
    throw e;
  }
  if (o.progress) process.stderr.write('\n');
  if (o.once) {
    await stop('--once');
    return 0;
  }
  await new Promise<void>((resolve) => {
    const onSig = (sig: string): void => {
      void stop(sig).then(resolve);
    };
    process.once('SIGINT', () => onSig('SIGINT'));
    process.once('SIGTERM', () => onSig('SIGTERM'));
  });
  return 0;
}

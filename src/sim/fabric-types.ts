/** The simulated fabric's options, figures and error (sim/fabric.ts). */
import { IbsmError } from '../util/errors.js';
import type { Clock } from '../util/clock.js';
import type { FaultConfig } from './faults.js';
import { MAX_LINEAR_FDB_CAP } from './forwarding.js';
import type { VirtProfile } from './vport.js';

export interface SimFabricOptions {
  clock: Clock;
  /** Seed of the fault-injection RNG (default 1). */
  seed?: number;
  /** Virtual latency per link crossing (ms); default 0.001 (1 µs). 0 delivers on the next
   * deferred turn (`clock.defer`: setImmediate on a RealClock) instead of a timer: the fast choice with a RealClock. */
  hopLatencyMs?: number;
  /** What happens to a MAD whose path is bad: silently dropped (a real fabric), or returned to
   * the sending endpoint with status 110 (ETIMEDOUT) as ibsim does. Default 'drop'. */
  badPath?: 'drop' | 'status';
  /** SwitchInfo.LinearFDBCap (default 49152); 0 with randomFdbCap > 0 makes RFT switches. */
  linearFdbCap?: number;
  randomFdbCap?: number;
  /** Switches (by node GUID) built with a RandomForwardingTable and no linear one (LinearFDBCap 0,
   * RandomFDBCap `randomFdbCap` or 4096), whatever the caps above: fabrics mixing both kinds. */
  rftSwitches?: ReadonlySet<bigint>;
  /** SwitchInfo.MulticastFDBCap (default 1024). */
  multicastFdbCap?: number;
  /** SwitchInfo.EnhancedPort0 (default false). */
  enhancedPort0?: boolean;
  /** NodeInfo.PartitionCap and switch PartitionEnforcementCap (default 32). */
  partitionCap?: number;
  /** Trap resend interval (ms); default 4.096 µs x 2^SubnetTimeout, at least 1 ms. */
  trapRepeatMs?: number;
  /** Sends of one trap without a TrapRepress (default 4). */
  trapMaxSends?: number;
  faults?: FaultConfig;
  /** SR-IOV: every CA port gets this virtualization profile (sim/vport.ts), e.g. 16 vports each,
   * half of them LidRequired; more can be created at run time through `vports`. */
  virtualization?: VirtProfile;
}

/** A node by index, node/port GUID, or NodeDescription. */
export type SimNodeRef = number | bigint | string;

export interface FabricStats {
  injected: number;
  delivered: number;
  dropped: number;
  /** Link crossings of all MADs. */
  hops: number;
  smpsHandled: number;
  trapsSent: number;
  duplicated: number;
  dropReasons: Record<string, number>;
}

export class SimFabricError extends IbsmError {
  override readonly name = 'SimFabricError';
}

/** The options with their defaults (what the fabric's switches and traps are built with). */
export type ResolvedSimFabricOptions = Required<Omit<SimFabricOptions, 'clock' | 'faults' | 'trapRepeatMs' | 'rftSwitches' | 'virtualization'>> & { trapRepeatMs?: number };

export function resolveSimFabricOptions(opts: SimFabricOptions): ResolvedSimFabricOptions {
  return {
    seed: opts.seed ?? 1,
    hopLatencyMs: opts.hopLatencyMs ?? 0.001,
    badPath: opts.badPath ?? 'drop',
    linearFdbCap: Math.min(opts.linearFdbCap ?? 49152, MAX_LINEAR_FDB_CAP),
    randomFdbCap: opts.randomFdbCap ?? 0,
    multicastFdbCap: opts.multicastFdbCap ?? 1024,
    enhancedPort0: opts.enhancedPort0 ?? false,
    partitionCap: opts.partitionCap ?? 32,
    trapMaxSends: opts.trapMaxSends ?? 4,
    ...(opts.trapRepeatMs !== undefined ? { trapRepeatMs: opts.trapRepeatMs } : {}),
  };
}

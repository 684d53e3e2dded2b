/** The SubnetManager's options (sm/sm.ts): what it talks through, what it programs, and the
 * callbacks the composition root (subnet.ts) gives it. */
import type { PartitionPlan } from '../model/partitions.js';
import type { QosVlSettings } from '../model/qos-policy.js';
import type { Snapshot } from '../model/snapshot.js';
import type { McastGroupPorts } from '../routing/mcast-tree.js';
import type { RoutingOptions } from '../routing/types.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/log.js';
import type { ControllerOptions, RemoteSm, Transition } from './controller.js';
import type { LidRange } from './lids.js';
import type { SmpRetryOptions } from './retry.js';
import type { SmpClient } from './smp-client.js';
import type { SweepStats } from './sweep.js';
import type { HealthSettings } from './health-phase.js';

/** The snapshot of a heavy sweep (model/snapshot.ts). */
export type SmSnapshot = Snapshot;

/** The controller's options (sm/controller-types.ts: the sweep interval, this SM's identity in
 * elections, polling, force_master, force_heavy_sweep) go to it as they are; the rest is the
 * shell's and the sweepers'. */
export interface SmOptions extends ControllerOptions {
  smp: SmpClient;
  clock: Clock;
  log: Logger;
  /** Routing engines in order of preference; the first that applies is used. */
  routing: string[];
  lmc: number;
  /** Persisted LIDs (guid2lid), and a callback to persist the new map. */
  guid2lid?: ReadonlyMap<bigint, LidRange>;
  saveGuid2Lid?: (map: ReadonlyMap<bigint, LidRange>) => void;
  partitions?: PartitionPlan;
  /** PortInfo.SubnetTimeout (4.096 µs × 2^n). */
  subnetTimeout?: number;
  /** M_Key to program (0: none) with protect bits and lease period. */
  mkey?: bigint;
  mkeyProtectBits?: number;
  mkeyLeasePeriod?: number;
  /** Subnet prefix programmed into every end port (default fe80::/64). */
  gidPrefix?: bigint;
  /** Whether the SA holds the clients' registrations from before this SM became master (a
   * failover with the SA state kept): otherwise the first master sweep sets ClientReregister. */
  stateKept?: () => boolean;
  /** DISCOVERING after a HANDOVER: before the first sweep as master decides, take the SA state
   * from the SM that handed over (an ibsm one serves it until this SM masters). Awaited. */
  onHandedOver?: (from: RemoteSm) => Promise<void>;
  /** STANDBY: the master answered a poll (the SA pulls its state here). Awaited. */
  onMasterPolled?: (master: RemoteSm) => Promise<void>;
  /** The fingerprint of the master's view of the fabric, as last pulled with its SA state
   * (model/snapshot.ts `fabricFingerprint`); undefined when none (a master that does not sync). */
  masterView?: () => bigint | undefined;
  /** Called on every SMInfo state change (after it is logged). */
  onStateChange?: (t: Transition) => void;
  /** Max operational VLs (PortInfo.OperationalVLs code: 1=VL0, 2=VL0-1, 3=VL0-3, 4=VL0-7, 5=VL0-14). */
  maxOpVls?: number;
  /** Link settings (plan-ports.ts PortSettings): OpenSM's force_link_* values, 0 leaves the ports' own. */
  forceLinkSpeed?: number;
  forceLinkSpeedExt?: number;
  forceLinkSpeedExt2?: number;
  forceLinkWidth?: number;
  /** HOQLife toward switches / toward end ports, SwitchInfo LifeTimeValue (OpenSM's head_of_queue_lifetime, leaf_head_of_queue_lifetime, packet_life_time). */
  hoqLife?: number;
  leafHoqLife?: number;
  packetLife?: number;
  /** Routing options beyond LMC and seed (configured root switches). */
  routingOptions?: Pick<RoutingOptions, 'roots' | 'cnGuids' | 'ioGuids' | 'routeOrder' | 'routeOrderNoScatter'>;
  seed?: number;
  /** OpenSM's qos_* VL settings: with them the SM programs SL2VL and VLArbitration (QoS on). */
  qosVl?: QosVlSettings;
  /** Multicast groups to forward (the SA's MCMember state), as member ports of the given snapshot. */
  multicastGroups?: (snap: SmSnapshot) => McastGroupPorts[];
  /** Called after every heavy sweep with the new snapshot (before SUBNET UP is logged). */
  onSnapshot?: (snap: SmSnapshot) => void;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
  /** Called after every sweep (heavy or light) with its figures. */
  onSweep?: (stats: SweepStats) => void;
  /** The sweep's own SMP retries above MadRpc's (sm/retry.ts). */
  smpRetry?: SmpRetryOptions;
  /** opensm.conf keys (config/opensm-keys.ts): partition enforcement on switch ports (part_enforce),
   * new LIDs at the first master sweep (reassign_lids), the guid2lid file over the old master's
   * LIDs at a takeover (honor_guid2lid_file); force_heavy_sweep is ControllerOptions'. */
  partEnforce?: 'both' | 'in' | 'out' | 'off';
  /** OpenSM lmc_esp0: with an LMC, a switch with an enhanced port 0 gets it there too. */
  lmcEsp0?: boolean;
  reassignLids?: boolean;
  honorGuid2lid?: boolean;
  /** The expected topology, its per-class actions and the health callback (issue #33). */
  topology?: HealthSettings;
}

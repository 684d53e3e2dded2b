/** The options of `openSm` (and `ibsm run`): the config keys of the option table as `SmConfig`,
 * with their defaults, and what a reload may apply live. */
import type { Fabric } from '../model/fabric.js';
import type { Logger } from '../util/log.js';
import { CONFIG_OPTIONS, defaultOf, PLAIN_HOST, targetsOf, type HostFacts } from '../config/options.js';
import type { SubnetOptions } from '../subnet.js';
import type { EffectiveConfig } from '../config/file.js';
import type { Backend, BackendOptions } from './backend.js';

/** What `ibsm run` takes, by config-file key (`ibsm config` lists them). */
export interface SmConfig {
  /** The in-process fabric: a topology file, a generator spec (gen:...) or a Fabric. Default the embedded fat tree. */
  sim?: string | Fabric;
  /** Run on a real HCA (or ibsim) through libibumad instead. */
  umad?: boolean;
  ca?: string;
  port?: number;
  /** The SM port by port GUID (opensm -g). */
  guid?: bigint;
  /** Where the SM attaches on the simulated fabric (node index, GUID or description). */
  attach?: string;
  seed?: number;
  /** Routing engines in order of preference. */
  routing?: string[];
  lmc?: number;
  /** Root switch GUIDs for updn/ftree: a file of GUIDs (OpenSM root_guid_file) ... */
  rootGuidFile?: string;
  /** ... or the GUIDs themselves. */
  roots?: bigint[];
  /** ftree's compute nodes and I/O nodes: files of port GUIDs (OpenSM cn_guid_file, io_guid_file). */
  cnGuidFile?: string;
  ioGuidFile?: string;
  /** Port GUIDs whose destinations minhop, updn and dfsssp route first, in order (OpenSM
   * guid_routing_order_file); with `guidRoutingOrderNoScatter` they take no random tie-break. */
  guidRoutingOrderFile?: string;
  guidRoutingOrderNoScatter?: boolean;
  guid2lid?: string;
  partitions?: string;
  qosPolicy?: string;
  /** Light sweep interval, seconds (0: none). */
  sweepInterval?: number;
  logFormat?: 'text' | 'json';
  logFile?: string;
  logMaxSize?: number;
  verbose?: boolean;
  metricsPort?: number;
  /** Where to serve the metrics, ADDR:PORT (metricsPort N is 127.0.0.1:N). */
  metricsListen?: string;
  saCache?: number;
  priority?: number;
  smKey?: bigint;
  /** The SA_Key: an SA request with it in its SM_Key field is trusted; another non-zero key is dropped. */
  saKey?: bigint;
  /** Program the fabric even while a master with another SM_Key holds it. */
  forceMaster?: boolean;
  /** Standby polling of the master, ms. */
  pollInterval?: number;
  pollRetries?: number;
  mkey?: bigint;
  mkeyProtectBits?: number;
  mkeyLease?: number;
  subnetPrefix?: bigint;
  subnetTimeout?: number;
  maxOpVls?: number;
  /** OpenSM's force_link_speed, force_link_speed_ext, (NVIDIA's) force_link_speed_ext2, force_link_width (0: leave). */
  forceLinkSpeed?: number;
  forceLinkSpeedExt?: number;
  forceLinkSpeedExt2?: number;
  forceLinkWidth?: number;
  packetLife?: number;
  hoqLife?: number;
  leafHoqLife?: number;
  /** QoS on without a policy file (opensm -Q); the qos* values set its VL tables. */
  qos?: boolean;
  qosMaxVls?: number;
  qosHighLimit?: number;
  /** "vl:weight,..." */
  qosVlarbHigh?: string;
  qosVlarbLow?: string;
  /** 16 VLs, comma separated. */
  qosSl2vl?: string;
  /** PerfMgr: sweep every linked port's counters through the PMAs. */
  perfmgr?: boolean;
  /** PerfMgr sweep interval, seconds. */
  perfmgrInterval?: number;
  /** The control socket `ibsm run` serves (cli/control.ts); none when absent. */
  controlSocket?: string;
  /** The read-only live web view on ADDR:PORT (src/web); off when absent. */
  web?: string;
  /** The SA's bounds per requester (sa/limits.ts). */
  saServicesPerPort?: number;
  saSubscriptionsPerPort?: number;
  saReportsQueued?: number;
  saGroupsPerPort?: number;
  saMaxGroups?: number;
  saRmppPerPort?: number;
  saRmppTotal?: number;
  /** Proxy joins (MCMember joins and leaves for another port) from any port of the partition, as
   * OpenSM; default only from a trusted requester (sa/multicast.ts). */
  saProxyJoins?: boolean;
  /** OpenSM's prefix-routes.conf (sa/prefix-routes.ts): off-subnet DGIDs through the named router ports. */
  prefixRoutes?: string;
  /** opensm.conf keys ibsm implements: part_enforce (and no_partition_enforcement), reassign_lids,
   * force_heavy_sweep, honor_guid2lid_file, accum_log_file FALSE. */
  partEnforce?: 'both' | 'in' | 'out' | 'off';
  reassignLids?: boolean;
  lmcEsp0?: boolean;
  forceHeavySweep?: boolean;
  honorGuid2lid?: boolean;
  logTruncate?: boolean;
}

/** An effective configuration (`ibsm run`'s) as openSm's options: the config keys are the option
 * names there. */
export function smOptionsOf(c: EffectiveConfig): OpenSmOptions {
  const o: Record<string, unknown> = {};
  for (const s of c.settings.values()) if (s.option.key !== undefined && s.value !== undefined) o[s.option.key] = s.value;
  return o as OpenSmOptions;
}

/** The keys of SmConfig that are config-file keys: those of `ibsm run` in the option table
 * (test/config.test.ts). */
export const SM_CONFIG_KEYS: ReadonlyArray<keyof SmConfig> = CONFIG_OPTIONS.filter((o) => o.commands.includes('run')).map((o) => o.key as keyof SmConfig);

export interface OpenSmOptions extends SmConfig {
  /** Run on this backend instead of opening one (the SMs of a multi-subnet fabric: api/subnets.ts). */
  backend?: Backend;
  /** The logger (default: from logFormat/logFile/verbose, to stderr). */
  log?: Logger;
  onProgress?: (phase: string, detail: Record<string, number>) => void;
  /** What the host-dependent defaults (the guid2lid cache as root on a real HCA) go by: `ibsm run`
   * passes what it read of its process; default PLAIN_HOST, so a program gets no system path it did
   * not name. */
  host?: HostFacts;
}

/** The options with the table's defaults for those not given. */
export function withDefaults(o: OpenSmOptions): OpenSmOptions {
  const host = o.host ?? PLAIN_HOST;
  const d: Record<string, unknown> = {};
  const get = (name: string): unknown => {
    const k = CONFIG_OPTIONS.find((x) => x.name === name)?.key;
    return k !== undefined ? (o as Record<string, unknown>)[k] : undefined;
  };
  for (const s of CONFIG_OPTIONS) {
    const v = defaultOf(s, get as (name: string) => undefined, host);
    if (v !== undefined) d[s.key!] = v;
  }
  return { ...d, ...Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) } as OpenSmOptions;
}

/** The settings a reload applies to the running SM (issue #28): the options the table marks
 * `live` (the files' contents: partitions, QoS policy and VL settings, the routing engines' GUID
 * files, prefix routes; and the routing chain) and the API's `roots`. Any other setting that
 * changed takes effect at the next start (named in the result). */
export const RELOADABLE_KEYS: ReadonlySet<keyof SmConfig> = new Set<keyof SmConfig>([...CONFIG_OPTIONS.filter((o) => o.live).map((o) => o.key as keyof SmConfig), 'roots']);

/** The live settings that name a file: read again at every reload, changed or not. */
export const REREAD_KEYS: ReadonlyArray<keyof SmConfig> = CONFIG_OPTIONS.filter((o) => o.live && o.arg === 'FILE').map((o) => o.key as keyof SmConfig);

/** The options' values where the option table sends them (`to`: OptionTarget): `subnet` gives the
 * fields of the SM's SubnetOptions, `backend` those of openBackend's options; a value in seconds
 * for a field in ms is scaled. Absent values are left out (the receiver's defaults hold). */
export function optionsFor(where: 'subnet', o: OpenSmOptions): Partial<SubnetOptions>;
export function optionsFor(where: 'backend', o: OpenSmOptions): Partial<BackendOptions>;
export function optionsFor(where: 'subnet' | 'backend', o: OpenSmOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const spec of CONFIG_OPTIONS) {
    const v = (o as Record<string, unknown>)[spec.key!];
    if (v === undefined) continue;
    for (const t of targetsOf(spec)) {
      const path = t.split('.');
      if (path.shift() !== where) continue;
      const field = path.pop()!;
      let at = out;
      for (const p of path) at = (at[p] ??= {}) as Record<string, unknown>;
      at[field] = spec.arg === 'S' && field.endsWith('Ms') ? (v as number) * 1000 : v;
    }
  }
  return out;
}

/** What a reload did: the settings that changed and were applied, those that need a restart. */
export interface ReloadResult {
  /** The files read again (by setting), whether or not their contents changed. */
  reread: string[];
  applied: string[];
  restartNeeded: string[];
  groupsCreated: number;
  groupsUpdated: number;
  groupsReleased: number;
}

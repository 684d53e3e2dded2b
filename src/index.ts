/**
 * ibsm as a library (`import … from 'ibsm'`). docs/api.md describes each part with an example.
 *
 * - An SM+SA on a backend, with the options of `ibsm run`: `openSm`, its typed `events`, the
 *   current snapshot and the route between two ports.
 * - The SA client, against ibsm's SA or any other: `openSaClient`.
 * - The offline router and verifier, topology loaders and writers.
 * - The simulated fabric with its fault controls: `createSimFabric` (and `sm.sim`).
 * - The option table and config files of the `ibsm` command.
 */
import { loadFabricSpec } from './model/load.js';
import { SimFabric, type SimFabricOptions } from './sim/fabric.js';
import { AsapClock } from './util/asap-clock.js';
import type { Fabric } from './model/fabric.js';

// ---- the SM+SA
export { openSm, IbsmSm, parseGuidFile, GuidFileError, fileLogSink, type OpenSmOptions, type SmConfig } from './api/sm.js';
export { Subnet, type SubnetOptions } from './subnet.js';
export type { SweepStats } from './sm/sweep.js';
export type { Transition, SmStateName, RemoteSm } from './sm/controller.js';
export {
  TypedEmitter,
  diffTopology,
  diffPortStates,
  type SubnetEvents,
  type TopologyChange,
  type NodeRef,
  type PortRef,
  type LinkRef,
  type PortStateChange,
  type PortStateName,
  type SaRequestServed,
  type MulticastGroupEvent,
} from './events.js';
export { routeBetween, RouteError, type Route, type RouteHop, type PortSpec } from './api/route.js';
export { openBackend, PortNotFoundError, DEFAULT_SIM_SPEC, type Backend, type BackendOptions } from './api/backend.js';
export { snapshotPorts, type Snapshot, type EndPort, type EndPortIndex, type DiscoveryResult, type DiscoveredNode } from './model/snapshot.js';

// ---- the SA client
export { openSaClient, IbsmSaClient, gidOf, type OpenSaClientOptions, type SaClientEvents } from './api/sa.js';
export { SaClient, SaStatusError, SaNotFoundError, type SaClientOptions, type SaResult } from './sa/client.js';
// Routing between subnets through IB routers (docs/routers.md)
export { openSubnets, IbsmSubnets, formatPrefix, type SubnetsOptions, type RunningSubnet, type SubnetClient } from './api/subnets.js';
export { resolveInterSubnetPath, InterSubnetPathError, saGidOf, type InterSubnetPath, type InterSubnetPathOptions, type InterSubnetAttempt } from './sa/inter-subnet-client.js';
export { parsePrefixRoutes, matchPrefixRoute, PrefixRoutesError, type PrefixRoute } from './sa/prefix-routes.js';
export { subnetsOf, isMultiSubnet, subnetPrefixOf, routerHash, type SubnetPart, type RouterPortView } from './model/subnets.js';
export { sendProbe, type ProbeHeader, type ProbeResult, type ProbeHop } from './sim/probe.js';
export {
  SaAttr,
  SaStatus,
  JoinState,
  NodeRecord,
  PortInfoRecord,
  PathRecord,
  MultiPathRecord,
  LinkRecord,
  SwitchInfoRecord,
  SMInfoRecord,
  MCMemberRecord,
  ServiceRecord,
  InformInfo,
  InformInfoRecord,
  PKeyTableRecord,
  GUIDInfoRecord,
  LinearForwardingTableRecord,
  MulticastForwardingTableRecord,
  SLtoVLMappingTableRecord,
  VLArbitrationTableRecord,
  TraceRecord,
} from './wire/sa.js';
export { Notice, NoticeSmp, TrapNumber } from './wire/notice.js';
export { formatGid, formatHex, type Layout, type DeepPartial } from './wire/layout.js';
export { MadRpc, type MadRpcOptions } from './rpc/madrpc.js';
export { NodeType, PortState, MgmtClass, Method, NODE_TYPE_NAMES, PORT_STATE_NAMES } from './wire/mad.js';

// ---- offline routing, verification, topology files
export * from './routing/index.js';
export { assignLids, parseGuid2Lid, formatGuid2Lid, LidSpaceExhausted, type LidRange } from './sm/lids.js';
export { loadFabricSpec, parseTopologyText, TopologyError, describeGenerators } from './model/load.js';
export { generateFabric, GENERATORS } from './model/generators.js';
export { formatIbnetdiscover, parseIbnetdiscover } from './model/ibnetdiscover.js';
export { fabricToJson, parseFabricJson, diffFabrics } from './model/json.js';
export { parsePartitions, PartitionPlan } from './model/partitions.js';
export { parseQosPolicy } from './model/qos-policy.js';
export { cloneFabric, links, checkFabric, type Fabric, type FabricNode, type FabricPort, type PeerRef } from './model/fabric.js';

// ---- the simulated fabric
export { SimFabric, SimFabricError, SimEndpoint, type SimFabricOptions, type FaultConfig, type FabricStats } from './sim/fabric.js';
export { AsapClock } from './util/asap-clock.js';
export { RealClock, type Clock } from './util/clock.js';
export { Logger, type LogSink, type Level } from './util/log.js';

/** A simulated fabric from a topology file, a generator spec (gen:...) or a Fabric, on a clock
 * that runs as fast as possible (its default); attach endpoints to it with `sim.attach(node)`. */
export function createSimFabric(topology: string | Fabric, opts: Partial<SimFabricOptions> & { seed?: number } = {}): SimFabric {
  const fabric = typeof topology === 'string' ? loadFabricSpec(topology, { seed: opts.seed }) : topology;
  return new SimFabric(fabric, { clock: new AsapClock(), ...opts });
}

// ---- the ibsm command's options and config files
export { OPTIONS, optionsOf, DEFAULT_CONFIG_FILE, ROOT_GUID2LID_FILE, type OptionSpec, type OptionValue, type Command } from './config/options.js';
export { parseCommandLine, commandHelp, UsageError } from './config/parse.js';
export { readConfigFile, resolveConfig, formatEffectiveConfig, type EffectiveConfig, type Setting, type ConfigFileValues } from './config/file.js';
export { readOpensmConf, type OpensmConf } from './config/opensm-conf.js';

/**
 * ibsm as a library: the root, `import … from 'ibsm'` (docs/api.md describes each part with an
 * example). It holds what a program running an SM or asking an SA needs, and the errors they throw:
 *
 * - An SM+SA on a backend, with the options of `ibsm run`: `openSm`, its typed `events`, the
 *   current snapshot (read-only all the way down) and the route between two ports.
 * - The SA client, against ibsm's SA or any other: `openSaClient`.
 * - Several subnets through IB routers: `openSubnets`, `resolveInterSubnetPath`.
 *
 * The rest is in subpaths, each with its own entry file in src/entry/:
 * `ibsm/routing` (the offline router and verifier, LIDs, topology loaders, generators and writers),
 * `ibsm/wire` (SA/SMP records, MadRpc, the enums, formatters), `ibsm/sim` (the simulated fabric,
 * its faults, probes, clocks), `ibsm/config` (the option table, the config files and their parsers).
 */

// ---- the SM+SA
export { openSm, IbsmSm, fileLogSink, type OpenSmOptions, type SmConfig, type ReloadResult } from './api/sm.js';
export type { Subnet, SubnetOptions } from './subnet.js';
export type { SweepStats } from './sm/sweep.js';
export type { Transition, SmStateName, RemoteSm } from './sm/controller.js';
export {
  diffTopology,
  diffPortStates,
  type TypedEmitter,
  type SubnetEvents,
  type TopologyChange,
  type NodeRef,
  type PortRef,
  type LinkRef,
  type PortStateChange,
  type PortStateName,
  type SaRequestServed,
  type MulticastGroupEvent,
  type HealthChanged,
  type HealthMismatch,
  type HealthIsolation,
  type HealthEnd,
} from './events.js';
export { routeBetween, RouteError, type Route, type RouteHop, type PortSpec } from './api/route.js';
export { openBackend, PortNotFoundError, SmPortBusyError, DEFAULT_SIM_SPEC, type Backend, type BackendOptions } from './api/backend.js';
export { snapshotPorts, type Snapshot, type ReadonlySnapshot, type EndPort, type EndPortIndex, type DiscoveryResult, type DiscoveredNode } from './model/snapshot.js';
export type { DeepReadonly } from './util/deep-readonly.js';
export type { Fabric, FabricNode, FabricPort, PeerRef } from './model/fabric.js';
export { IbsmError, IbsmFileError, SubnetNotUpError } from './util/errors.js';
export { TopologyError } from './model/errors.js';
export { NodeType, PortState } from './wire/mad.js';
export { Logger, type LogSink, type Level } from './util/log.js';

// ---- the SA client
export { openSaClient, SaClient, gidOf, type OpenSaClientOptions, type SaClientEvents, type SaClientOptions } from './api/sa.js';
export { SaStatusError, SaNotFoundError, type SaResult } from './sa/client.js';
export { MadTimeoutError } from './rpc/errors.js';

// ---- several subnets through IB routers (docs/routers.md)
export { openSubnets, IbsmSubnets, type SubnetsOptions, type RunningSubnet, type SubnetClient } from './api/subnets.js';
export { resolveInterSubnetPath, InterSubnetPathError, type InterSubnetPath, type InterSubnetPathOptions, type InterSubnetAttempt } from './sa/inter-subnet-client.js';

/** The SA's code paths run once before its first real request (issue #32's storm).
 *
 * A re-registration storm meets the SA at its coldest: a standby that takes over, or an SM that
 * has just brought a fabric up, has never answered a PathRecord, a join, a ServiceRecord or an
 * InformInfo, and V8 runs that code first in its interpreter, with no type feedback, and builds the
 * record layouts' generated codecs on first use. Through ibsim that made the first storm 3-4 times
 * as long as the same storm a second time (scripts/bench/README.md, "storm-ibsim.mjs"). `warmSa`
 * sends the requests a host sends on ClientReregister, as wire MADs, through a scratch SaServer
 * and SaEngine with their own handlers over a small generated fabric, and computes the multicast
 * forwarding their joins call for: the same functions the real SA and multicast update run, none
 * of their state. Nothing leaves the process (the scratch server's RPC sends nowhere).
 * Pure of I/O. */
import { generateFabric } from '../model/generators.js';
import { isSwitch, type Fabric } from '../model/fabric.js';
import type { Snapshot } from '../model/snapshot.js';
import { IPOIB_BROADCAST, MGRP_DEFAULTS, PartitionPlan } from '../model/partitions.js';
import { computeMfts } from '../routing/mcast-tree.js';
import { routeWithFallback } from '../routing/registry.js';
import type { MadRpc } from '../rpc/madrpc.js';
import type { ReceivedMad } from '../transport/types.js';
import { saRequest } from '../wire/builders.js';
import { Method } from '../wire/mad.js';
import { InformInfo, JoinState, MCMemberRecord, PathRecord, SaAttr, ServiceRecord, SA_DATA_SIZE, SA_QKEY, INFORM_ALL_PRODUCERS, INFORM_ALL_TRAPS, INFORM_ALL_TYPES, INFORM_LID_RANGE_ALL } from '../wire/sa.js';
import type { DeepPartial, Layout } from '../wire/layout.js';
import { SaEngine } from './engine.js';
import { InformManager } from './inform.js';
import { MC_CREATE_MASK, MC_JOIN_MASK, MulticastManager } from './multicast.js';
import { coreSaHandlers, SaServer } from './server.js';
import { ServiceRegistry } from './services.js';
import type { SaContext } from './types.js';
import { gidOf } from './client.js';
import { InternalError } from '../util/errors.js';

/** The fabric the warm-up asks about: 2 leaves, 2 spines, 4 hosts a leaf. */
const WARM_FABRIC = 'gen:fattree2:leaves=2,spines=2,hosts=4';
/** How many times each host sends its requests: enough for V8 to compile what they run. */
const WARM_ROUNDS = 3;

/** What the warm-up did: requests answered and the CPU it took (process.cpuUsage is the caller's:
 * this module reads no clock). */
export interface SaWarmup {
  requests: number;
  answered: number;
  /** Answered with an error status (none: the warm-up asks what a host asks). */
  errors: number;
}

/** A fabric with LIDs in node order (switch port 0, then every linked CA port) and its routes. */
function warmContext(): { ctx: SaContext; hosts: Array<{ lid: number; guid: bigint }> } {
  const fabric: Fabric = generateFabric(WARM_FABRIC, { seed: 1 });
  let lid = 1;
  const hosts: Array<{ lid: number; guid: bigint }> = [];
  for (const n of fabric.nodes) {
    if (isSwitch(n)) {
      n.ports[0]!.lid = lid++;
      continue;
    }
    n.ports.forEach((p, i) => {
      if (i === 0 || !p?.peer) return;
      p.lid = lid++;
      hosts.push({ lid: p.lid, guid: p.guid });
    });
  }
  const routing = routeWithFallback(fabric, ['minhop'], { lmc: 0 }).result;
  const snapshot: Snapshot = { fabric, discovery: { fabric, nodes: [], smNode: 0, smPort: 0, smps: 0, maxDepth: 0 }, routing, maxLid: lid - 1, smLid: 1, sweep: 1 };
  return { ctx: { snapshot, partitions: PartitionPlan.defaultPlan(), smPortGuid: fabric.nodes[0]!.ports[0]!.guid, smKey: 1n, now: 0 }, hosts };
}

/** An RPC that takes the scratch server's answers and sends nothing. */
function sinkRpc(): MadRpc {
  const rpc = {
    copiesOnSend: false,
    respond: () => undefined,
    respondRmpp: () => Promise.resolve(),
    register: () => undefined,
    onUnsolicited: () => () => undefined,
    request: () => Promise.reject(new InternalError('the SA warm-up sends nothing')),
  };
  return rpc as unknown as MadRpc;
}

/** Run what a storm runs, WARM_ROUNDS times for every host of the warm-up fabric, a step (one
 * host's requests, a few ms) at a time. */
export function* warmSaSteps(): Generator<void, SaWarmup, void> {
  const { ctx, hosts } = warmContext();
  const inform = new InformManager({ send: () => Promise.resolve() });
  const multicast = new MulticastManager({ traps: inform });
  const engine = new SaEngine({ respTimeValue: 16, qos: false });
  for (const h of [...coreSaHandlers(), multicast, new ServiceRegistry(), inform]) engine.register(h);
  const server = new SaServer(sinkRpc(), engine, { schedule: (fn) => fn(), registerAgent: false });
  server.setContext(ctx);
  let tid = 1;
  const send = <V>(from: number, method: number, attrId: number, layout: Layout<V>, rec: DeepPartial<V>, componentMask: bigint): void => {
    const record = new Uint8Array(Math.max(SA_DATA_SIZE, layout.byteLength));
    layout.encode(rec, record, 0);
    const data = saRequest({ method, attrId, componentMask, record, recordLength: layout.byteLength, tid: BigInt(tid++) });
    const m: ReceivedMad = { data, addr: { lid: from, qpn: 1, qkey: SA_QKEY, pkeyIndex: 0 }, status: 0 };
    server.receive(m);
  };
  const pathMask = PathRecord.mask('sgid', 'dgid', 'reversible', 'numbPath', 'pKey');
  for (let round = 0; round < WARM_ROUNDS; round++) {
    for (const [i, h] of hosts.entries()) {
      const join: DeepPartial<MCMemberRecord> = { mgid: IPOIB_BROADCAST, portGid: gidOf(h.guid), joinState: JoinState.FullMember };
      if (round === 0 && i === 0) send(h.lid, Method.Set, SaAttr.MCMemberRecord, MCMemberRecord, { ...join, qKey: MGRP_DEFAULTS.ipQKey, pKey: 0xffff, tClass: 0, flowLabel: 0, sl: 0 }, MC_CREATE_MASK);
      else send(h.lid, Method.Set, SaAttr.MCMemberRecord, MCMemberRecord, join, MC_JOIN_MASK);
      send(h.lid, Method.Set, SaAttr.ServiceRecord, ServiceRecord, { serviceId: h.guid, serviceGid: gidOf(h.guid), servicePKey: 0xffff, serviceLease: 0xffffffff, serviceName: 'warm-up' }, ServiceRecord.mask('serviceId', 'serviceGid', 'servicePKey', 'serviceLease', 'serviceName'));
      send(h.lid, Method.Set, SaAttr.InformInfo, InformInfo, { gid: 0n, lidRangeBegin: INFORM_LID_RANGE_ALL, isGeneric: 1, subscribe: 1, type: INFORM_ALL_TYPES, trapNumber: INFORM_ALL_TRAPS, qpn: 1, respTimeValue: 18, producerType: INFORM_ALL_PRODUCERS }, 0n);
      for (const d of hosts) if (d !== h) send(h.lid, Method.Get, SaAttr.PathRecord, PathRecord, { sgid: gidOf(h.guid), dgid: gidOf(d.guid), reversible: 1, numbPath: 1, pKey: 0xffff }, pathMask);
      yield;
    }
    // The multicast forwarding the joins call for (the SM's multicast update computes it).
    computeMfts(ctx.snapshot.fabric, ctx.snapshot.routing.lfts, multicast.mftGroupsOf(ctx.snapshot));
    yield;
  }
  server.stop();
  return { requests: tid - 1, answered: server.stats.answered, errors: server.stats.errors };
}

/** The warm-up at once. */
export function warmSa(): SaWarmup {
  const steps = warmSaSteps();
  for (;;) {
    const s = steps.next();
    if (s.done) return s.value;
  }
}

/** The warm-up in the process's idle moments: a step each time `defer` runs its callback (the SM's
 * clock: setImmediate on a device), so a step waits behind the received MADs and timers of its
 * turn and an SM's sweep is held up by one step at most. `done` gets the figures. */
export function warmSaWhenIdle(defer: (fn: () => void) => void, done?: (w: SaWarmup) => void): void {
  const steps = warmSaSteps();
  const step = (): void => {
    const s = steps.next();
    if (s.done) done?.(s.value);
    else defer(step);
  };
  defer(step);
}

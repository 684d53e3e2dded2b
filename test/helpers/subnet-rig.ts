/** The SM and SA together (src/subnet.ts) on the in-process fabric, for the bounds, fuzz and soak
 * tests: bring-up, client ports, and a heap measure after GC. */
import v8 from 'node:v8';
import vm from 'node:vm';
import { VirtualClock } from '../../src/util/clock.js';
import { SimFabric, type SimEndpoint, type SimFabricOptions } from '../../src/sim/fabric.js';
import { loadFabricSpec } from '../../src/model/load.js';
import { MadRpc } from '../../src/rpc/madrpc.js';
import { MgmtClass, Method, NodeType } from '../../src/wire/mad.js';
import { SA_CLASS_VERSION } from '../../src/wire/sa.js';
import { SaClient } from '../../src/sa/client.js';
import { Subnet, type SubnetOptions } from '../../src/subnet.js';
import { smpClientOf } from '../../src/sm/smp-client.js';
import { Logger, MemorySink } from '../../src/util/log.js';
import { drive } from './drive.js';

export const GID_PREFIX = 0xfe80000000000000n;

export interface Rig {
  clock: VirtualClock;
  sim: SimFabric;
  subnet: Subnet;
  sink: MemorySink;
  smEp: SimEndpoint;
  rpc: MadRpc;
  /** Node indexes of the CAs (the SM's is the first). */
  cas: number[];
}

export async function bringUp(spec: string, o: { sim?: Omit<SimFabricOptions, 'clock'>; subnet?: Partial<SubnetOptions>; level?: 'debug' | 'info' | 'warn' } = {}): Promise<Rig> {
  const clock = new VirtualClock();
  const sim = new SimFabric(loadFabricSpec(spec), { clock, seed: 3, ...o.sim });
  const smEp = sim.attach(0);
  smEp.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap, Method.Get, Method.Set] });
  smEp.register(MgmtClass.SubnDirected, 1, { methods: [Method.Get, Method.Set] });
  const rpc = new MadRpc(smEp, clock, { timeoutMs: 50, window: 64 });
  const sink = new MemorySink();
  const subnet = new Subnet({
    rpc,
    portGuid: smEp.local.portGuid,
    smp: smpClientOf(rpc),
    clock,
    log: new Logger(sink, o.level ?? 'info'),
    routing: ['minhop'],
    lmc: 0,
    sweepIntervalMs: 0,
    saServer: { schedule: (fn) => queueMicrotask(fn) },
    ...o.subnet,
  });
  await drive(clock, subnet.start());
  const cas = sim.nodes.map((n, i) => (n.type !== NodeType.Switch ? i : -1)).filter((i) => i >= 0);
  return { clock, sim, subnet, sink, smEp, rpc, cas };
}

export interface Client {
  ep: SimEndpoint;
  rpc: MadRpc;
  sa: SaClient;
  guid: bigint;
  gid: bigint;
  lid: number;
}

/** A client port on CA node `nodeIdx` with an SA client (and, with `answerReports`, a handler that
 * answers Reports with ReportResp and counts them). */
export async function client(r: Rig, nodeIdx: number, o: { answerReports?: (mad: Uint8Array) => void; timeoutMs?: number } = {}): Promise<Client> {
  const ep = r.sim.attach(nodeIdx);
  ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, o.answerReports ? { methods: [Method.Report] } : {});
  const rpc = new MadRpc(ep, r.clock, { timeoutMs: o.timeoutMs ?? 50, window: 64 });
  if (o.answerReports) {
    const seen = o.answerReports;
    rpc.onUnsolicited(
      MgmtClass.SubnAdm,
      (m) => {
        seen(m.data);
        const resp = Uint8Array.from(m.data);
        resp[3] = Method.ReportResp;
        rpc.respond(m, resp);
      },
      { method: Method.Report },
    );
  }
  const sa = await drive(r.clock, SaClient.locate(rpc));
  const guid = ep.local.portGuid;
  return { ep, rpc, sa, guid, gid: (GID_PREFIX << 64n) | guid, lid: ep.local.lid };
}

let gcFn: (() => void) | undefined;
/** Heap in use after a full GC (V8's gc exposed at run time). */
export function heapAfterGc(): number {
  if (!gcFn) {
    v8.setFlagsFromString('--expose-gc');
    gcFn = vm.runInNewContext('gc') as () => void;
  }
  gcFn();
  gcFn();
  return process.memoryUsage().heapUsed;
}

/** Run `jobs` with at most `n` outstanding (what a client with 16 MADs in flight does). */
export async function pool<T>(n: number, jobs: (() => Promise<T>)[]): Promise<PromiseSettledResult<T>[]> {
  const out: PromiseSettledResult<T>[] = new Array(jobs.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      try {
        out[i] = { status: 'fulfilled', value: await jobs[i]!() };
      } catch (e) {
        out[i] = { status: 'rejected', reason: e };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, jobs.length) }, worker));
  return out;
}

/** Test fixture for the SA tests: run the real SM pipeline (discovery → LIDs → PortInfo → P_Keys →
 * routing → LFTs → ACTIVE) over the in-process fabric on a virtual clock and build an SaContext. */
import { SimFabric } from '../src/sim/fabric.js';
import { FabricBuilder } from '../src/model/generators.js';
import type { Fabric } from '../src/model/fabric.js';
import { VirtualClock } from '../src/util/clock.js';
import { Logger, MemorySink } from '../src/util/log.js';
import { MadRpc } from '../src/rpc/madrpc.js';
import { MgmtClass, Method } from '../src/wire/mad.js';
import { SubnetManager, type SmOptions } from '../src/sm/sm.js';
import type { SmpClient } from '../src/sm/smp-client.js';
import { PartitionPlan } from '../src/model/partitions.js';
import type { SaContext, SaQuery, SaRequester } from '../src/sa/types.js';

export interface Built {
  ctx: SaContext;
  sim: SimFabric;
  clock: VirtualClock;
  rpc: MadRpc;
  sm: SubnetManager;
}

export const SM_KEY = 0x1122334455667788n;

export async function buildContext(fabric: Fabric, opts: { lmc?: number; partitions?: PartitionPlan; routing?: string[]; mkey?: bigint; smNode?: number; tweak?: (sim: SimFabric) => void; wrapSmp?: (s: SmpClient) => SmpClient; sm?: Partial<SmOptions> } = {}): Promise<Built> {
  const clock = new VirtualClock();
  const sim = new SimFabric(fabric, { clock });
  opts.tweak?.(sim);
  const ep = sim.attach(opts.smNode ?? firstCa(fabric), opts.smNode !== undefined && fabric.nodes[opts.smNode]!.type === 2 ? 0 : undefined);
  ep.register(MgmtClass.SubnDirected, 1, { methods: [Method.Trap] });
  ep.register(MgmtClass.SubnLid, 1, { methods: [Method.Trap] });
  const rpc = new MadRpc(ep, clock, { timeoutMs: 50, retries: 2, window: 64, perDestinationWindow: 8, mkey: opts.mkey });
  const smp: SmpClient = {
    getDr: (p, a, m) => rpc.smpGetDr(p, a, m ?? 0),
    setDr: (p, a, m, d) => rpc.smpSetDr(p, a, m, d),
    getLid: (l, a, m) => rpc.smpGet(l, a, m ?? 0),
    setLid: (l, a, m, d) => rpc.smpSet(l, a, m, d),
    get sent() {
      return rpc.stats.sent;
    },
  };
  const partitions = opts.partitions ?? PartitionPlan.defaultPlan();
  const sm = new SubnetManager({
    smp: opts.wrapSmp ? opts.wrapSmp(smp) : smp,
    clock,
    log: new Logger(new MemorySink(), 'error'),
    routing: opts.routing ?? ['minhop'],
    lmc: opts.lmc ?? 0,
    partitions,
    sweepIntervalMs: 0,
    mkey: opts.mkey,
    ...opts.sm,
  });
  await clock.runUntil(sm.start(), 100_000).catch((e: unknown) => {
    throw /did not settle|deadlock/.test(String(e)) ? new Error(`SM did not finish its sweep: ${String(e)}`) : e;
  });
  const snapshot = sm.current!;
  const smPortGuid = snapshot.fabric.nodes[snapshot.discovery.smNode]!.ports[snapshot.discovery.smPort]!.guid;
  const ctx: SaContext = { snapshot, partitions, smPortGuid, smKey: SM_KEY, now: clock.now() };
  return { ctx, sim, clock, rpc, sm };
}

function firstCa(f: Fabric): number {
  const i = f.nodes.findIndex((n) => n.type !== 2);
  if (i < 0) throw new Error('fabric has no CA to attach the SM to');
  return i;
}

/**
 *  A small fabric with mixed widths and speeds:
 *
 *   H0 ─4xQDR─ S0 ─4xQDR─ S1 ─1xSDR─ H2
 *   H1 ─4xDDR─┘   └─12xQDR─ S2 ─4xEDR─ H3 (2 ports: port 2 to S0 4xQDR)
 */
export function mixedFabric(): Fabric {
  const b = new FabricBuilder();
  const s0 = b.addSwitch('S0', 8);
  const s1 = b.addSwitch('S1', 8);
  const s2 = b.addSwitch('S2', 8);
  const h0 = b.addCa('H0 HCA-1');
  const h1 = b.addCa('H1 HCA-1');
  const h2 = b.addCa('H2 HCA-1');
  const h3 = b.addCa('H3 HCA-1', 2);
  b.link(h0, 1, s0, 1, '4x', 'QDR');
  b.link(h1, 1, s0, 2, '4x', 'DDR');
  b.link(s0, 3, s1, 1, '4x', 'QDR');
  b.link(s1, 2, h2, 1, '1x', 'SDR');
  b.link(s0, 4, s2, 1, '12x', 'QDR');
  b.link(s2, 2, h3, 1, '4x', 'EDR');
  b.link(s0, 5, h3, 2, '4x', 'QDR');
  return b.build();
}

/** Index in the snapshot (discovery order) of the node with this description. */
export function nodeByDesc(ctx: SaContext, desc: string): number {
  const i = ctx.snapshot.fabric.nodes.findIndex((n) => n.desc === desc);
  if (i < 0) throw new Error(`no node "${desc}" in the snapshot`);
  return i;
}

export function requester(ctx: SaContext, node: number, port = 1, smKey = 0n): SaRequester {
  const n = ctx.snapshot.fabric.nodes[node]!;
  const p = n.ports[n.type === 2 ? 0 : port]!;
  return { lid: p.lid ?? 0, portGuid: p.guid, smKey, trusted: smKey !== 0n && smKey === ctx.smKey, qpn: 1 };
}

export function query(method: number, attrId: number, data: Uint8Array, componentMask: bigint, req: SaRequester, attrMod = 0): SaQuery {
  const d = new Uint8Array(200);
  d.set(data.subarray(0, 200));
  return { method, attrId, attrMod, componentMask, data: d, requester: req };
}

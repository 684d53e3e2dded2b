/** Opens the transport a command runs on — the in-process simulated fabric or libibumad (real
 * HCAs, or ibsim under the umad2sim preload) — with a MadRpc over it. */
import { MgmtClass } from '../wire/mad.js';
import { SA_CLASS_VERSION } from '../wire/sa.js';
import { MadRpc, type MadRpcOptions } from '../rpc/madrpc.js';
import { RealClock, type Clock } from '../util/clock.js';
import { AsapClock } from '../util/asap-clock.js';
import type { Transport } from '../transport/types.js';
import { loadFabricSpec } from '../model/load.js';
import { SimFabric } from '../sim/fabric.js';
import { cloneFabric, type Fabric } from '../model/fabric.js';

/** The embedded default fabric: a 2-level fat tree, 8 leaves × 8 hosts, 4 spines. */
export const DEFAULT_SIM_SPEC = 'gen:fattree2:leaves=8,spines=4,hosts=8';

export interface BackendOptions {
  /** Topology file or generator spec for the in-process fabric. */
  sim?: string;
  umad?: boolean;
  ca?: string;
  port?: number;
  /** Open as the SM (issm). */
  sm?: boolean;
  /** Also serve/ask SA class 0x03. */
  sa?: boolean;
  seed?: number;
  /** Where to attach on the simulated fabric (node index, GUID or description); default the first node, as ibsim does. */
  attach?: string;
  rpc?: MadRpcOptions;
}

export interface Backend {
  kind: 'sim' | 'umad';
  transport: Transport;
  rpc: MadRpc;
  /** Clock for SM timers (real time). */
  clock: Clock;
  sim?: SimFabric;
  simFabric?: Fabric;
  close(): Promise<void>;
}

/** A node named on the command line: an index, a GUID (0x...), or a NodeDescription. */
export function parseNodeRef(s: string): number | bigint | string {
  if (/^\d+$/.test(s)) return Number(s);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return BigInt(s);
  return s;
}

export async function openBackend(o: BackendOptions): Promise<Backend> {
  const clock = new RealClock();
  if (o.umad) {
    const { openUmad } = await import('../transport/umad.js');
    const t = openUmad({ ca: o.ca, port: o.port, issm: o.sm });
    if (o.sm) {
      t.register(MgmtClass.SubnLid, 1);
      t.register(MgmtClass.SubnDirected, 1);
    }
    // An SM's SA server registers class 0x03 itself (as a server); a client registers it here.
    if (o.sa && !o.sm) t.register(MgmtClass.SubnAdm, SA_CLASS_VERSION);
    // Clients read their own PortInfo (SM LID) with a hop-0 SMP.
    if (!o.sm) t.register(MgmtClass.SubnDirected, 1);
    // An SM's timeouts follow the measured round trips, backed off per retry (src/rpc/rto.ts).
    const rpc = new MadRpc(t, clock, { timeoutMs: 200, retries: 3, window: 64, perDestinationWindow: 8, ...(o.sm ? { adaptiveTimeout: true } : {}), ...o.rpc });
    return {
      kind: 'umad',
      transport: t,
      rpc,
      clock,
      async close() {
        rpc.close();
        await t.close();
      },
    };
  }
  const fabric = loadFabricSpec(o.sim ?? DEFAULT_SIM_SPEC, { seed: o.seed });
  // The simulator takes ownership of its Fabric; keep the loaded one pristine for comparisons.
  const sim = new SimFabric(cloneFabric(fabric), { clock: new AsapClock(), seed: o.seed });
  const ep = sim.attach(o.attach !== undefined ? parseNodeRef(o.attach) : 0);
  ep.register(MgmtClass.SubnLid, 1, o.sm ? { methods: [0x05, 0x01, 0x02] } : {});
  ep.register(MgmtClass.SubnDirected, 1, o.sm ? { methods: [0x01, 0x02] } : {});
  if (o.sa && !o.sm) ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, {});
  // In-process, nothing is lost on the wire: a timeout can only come from a stall of this thread.
  const rpc = new MadRpc(ep, clock, { timeoutMs: 1000, retries: 3, window: 256, perDestinationWindow: 16, ...o.rpc });
  return {
    kind: 'sim',
    transport: ep,
    rpc,
    clock,
    sim,
    simFabric: fabric,
    async close() {
      rpc.close();
      await ep.close();
      sim.close();
    },
  };
}


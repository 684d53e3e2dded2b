/** Opens the transport a command runs on — the in-process simulated fabric or libibumad (real
 * HCAs, or ibsim under the umad2sim preload) — with a MadRpc over it. */
import { MgmtClass, Method } from '../wire/mad.js';
import { SA_CLASS_VERSION } from '../wire/sa.js';
import { MadRpc, type MadRpcOptions } from '../rpc/madrpc.js';
import { RealClock, type Clock } from '../util/clock.js';
import { AsapClock } from '../util/asap-clock.js';
import type { Transport } from '../transport/types.js';
import type { SimFabric } from '../sim/fabric.js';
import { cloneFabric, type Fabric } from '../model/fabric.js';
import { DEFAULT_SIM_SPEC } from '../config/options.js';

export { DEFAULT_SIM_SPEC };

/** A local port named by GUID that no CA has. */
export class PortNotFoundError extends Error {
  override readonly name = 'PortNotFoundError';
}

export interface BackendOptions {
  /** Topology file or generator spec for the in-process fabric, or the fabric itself. */
  sim?: string | Fabric;
  umad?: boolean;
  ca?: string;
  port?: number;
  /** The local port by port GUID (as opensm -g): with umad the CA and port that have it, on the
   * simulated fabric the node that has it. 0 or absent: the default. */
  guid?: bigint;
  /** Open as the SM (issm). */
  sm?: boolean;
  /** Also serve/ask SA class 0x03. */
  sa?: boolean;
  seed?: number;
  /** An SA client that receives Reports (InformInfo subscriptions): the SA class agent takes unsolicited Report MADs. */
  reports?: boolean;
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
    const { openUmad, listUmadPorts } = await import('../transport/umad.js');
    let { ca, port } = o;
    if (o.guid) {
      const all = listUmadPorts().flatMap((c) => c.ports);
      const p = all.find((x) => x.portGuid === o.guid);
      if (!p) throw new PortNotFoundError(`no local port has GUID 0x${o.guid.toString(16).padStart(16, '0')} (ports: ${all.map((x) => `${x.caName}/${x.portNum} 0x${x.portGuid.toString(16).padStart(16, '0')}`).join(', ') || 'none'})`);
      [ca, port] = [p.caName, p.portNum];
    }
    const t = openUmad({ ca, port, issm: o.sm });
    if (o.sm) {
      t.register(MgmtClass.SubnLid, 1);
      t.register(MgmtClass.SubnDirected, 1);
    }
    // An SM's SA server registers class 0x03 itself (as a server); a client registers it here.
    if (o.sa && !o.sm) t.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, o.reports ? { methods: [Method.Report] } : {});
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
  // The simulator and the topology loaders are loaded only for the in-process fabric.
  const [{ loadFabricSpec }, { SimFabric }] = await Promise.all([import('../model/load.js'), import('../sim/fabric.js')]);
  const fabric = typeof o.sim === 'object' ? o.sim : loadFabricSpec(o.sim ?? DEFAULT_SIM_SPEC, { seed: o.seed });
  // The simulator takes ownership of its Fabric; keep the loaded one pristine for comparisons.
  const sim = new SimFabric(cloneFabric(fabric), { clock: new AsapClock(), seed: o.seed });
  let at: number | bigint | string = o.attach !== undefined ? parseNodeRef(o.attach) : 0;
  let atPort: number | undefined;
  if (o.guid) {
    const ni = fabric.nodes.findIndex((n) => n.ports.some((p) => p?.guid === o.guid));
    if (ni < 0) throw new PortNotFoundError(`no port of the simulated fabric has GUID 0x${o.guid.toString(16).padStart(16, '0')}`);
    at = ni;
    atPort = fabric.nodes[ni]!.type === 2 ? 0 : fabric.nodes[ni]!.ports.findIndex((p) => p?.guid === o.guid);
  }
  return attachSim(sim, fabric, at, atPort, o, true);
}

/** A backend at one port of a simulated fabric (`ownsSim`: closing it closes the fabric too; an
 * in-process fabric of several subnets has one backend per SM on one fabric: api/subnets.ts). */
export function attachSim(sim: SimFabric, fabric: Fabric, at: number | bigint | string, atPort: number | undefined, o: Pick<BackendOptions, 'sm' | 'sa' | 'reports' | 'rpc'>, ownsSim: boolean): Backend {
  const clock = new RealClock();
  const ep = sim.attach(at, atPort);
  ep.register(MgmtClass.SubnLid, 1, o.sm ? { methods: [0x05, 0x01, 0x02] } : {});
  ep.register(MgmtClass.SubnDirected, 1, o.sm ? { methods: [0x01, 0x02] } : {});
  if (o.sa && !o.sm) ep.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, o.reports ? { methods: [Method.Report] } : {});
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
      if (ownsSim) sim.close();
    },
  };
}

/** Opens the transport a command runs on — the in-process simulated fabric or libibumad (real
 * HCAs, or ibsim under the umad2sim preload) — with a MadRpc over it. */
import { IbsmError } from '../util/errors.js';
import { readFileSync } from 'node:fs';
import { MgmtClass, Method } from '../wire/mad.js';
import { SA_CLASS_VERSION } from '../wire/sa.js';
import { MadRpc, type MadRpcOptions } from '../rpc/madrpc.js';
import { RealClock, type Clock } from '../util/clock.js';
import { PacedClock } from '../util/paced-clock.js';
import type { Transport } from '../transport/types.js';
import type { SimFabric } from '../sim/fabric.js';
import { cloneFabric, type Fabric } from '../model/fabric.js';
import { DEFAULT_SIM_SPEC } from '../config/options.js';

export { DEFAULT_SIM_SPEC };

/** A local port named by GUID that no CA has. */
export { SmPortBusyError } from './sm-port-lock.js';
import { claimSmPort, SmPortBusyError } from './sm-port-lock.js';
import { constants as osConstants } from 'node:os';
import { formatGuid } from '../util/guid.js';

export class PortNotFoundError extends IbsmError {
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
  /** The clock of the SM's timers: real time; on a simulated fabric the fabric's own (one time
   * base for both: util/paced-clock.ts). */
  clock: Clock;
  sim?: SimFabric;
  simFabric?: Fabric;
  /** Under umad2sim: the MADs on the wire at once (the pace, from the sockets' send buffer) and
   * the RPC's window of outstanding requests (umadWindow). */
  windowCap?: { window: number; outstanding: number; sndbuf: number };
  close(): Promise<void>;
}

/** Send-buffer bytes one MAD takes on umad2sim's socket (a 288-byte datagram's skb): a stopped
 * ibsim took 42 sends before the socket stopped polling writable, a quarter of 212,992 bytes. */
export const UMAD2SIM_DGRAM_BYTES = 1280;

/** The MAD window (requests outstanding) a umad backend may use, and under ibsim's umad2sim
 * preload the pace: how many of them may be on the wire at once. Under umad2sim, MADs travel over
 * a pair of unix datagram sockets connected to each other, one per client, so what each direction
 * holds is bounded by its sender's send buffer (`net.core.wmem_default`, 212,992 bytes here; not
 * `net.unix.max_dgram_qlen`, which a socket connected back to its peer never meets): about 167
 * MADs. When both directions fill (seen with 64 MADs in flight on the 1,536-host fat tree under
 * load, with retries on top), ibsim retries its write to us without reading its sockets, our
 * sender thread blocks in umad_send holding umad2sim's one mutex, and umad2sim's receiver, waiting
 * for that mutex, never drains our queue: both processes hang. So under umad2sim the addon paces
 * the port's requests (native setPace: each slot freed by its answer) at half of what a quarter of
 * the send buffer holds (20 with the default), leaving the rest for SA answers, traps and
 * retries, while the RPC keeps the wanted window outstanding (the rest wait in the addon's queue,
 * sent as answers free slots). On a real HCA (the kernel's umad queues) nothing is paced. */
export function umadWindow(wanted: number, env: NodeJS.ProcessEnv, sendBuffer: () => number | undefined): { window: number; pace?: number; sndbuf?: number } {
  if (!env.LD_PRELOAD?.includes('umad2sim')) return { window: wanted };
  const sndbuf = sendBuffer() ?? 212_992;
  return { window: wanted, pace: Math.max(1, Math.min(wanted, Math.floor(sndbuf / UMAD2SIM_DGRAM_BYTES / 4 / 2))), sndbuf };
}

/** net.core.wmem_default (a new socket's send buffer), or undefined when it cannot be read. */
function readSendBuffer(): number | undefined {
  try {
    const v = Number.parseInt(readFileSync('/proc/sys/net/core/wmem_default', 'utf8'), 10);
    return Number.isFinite(v) && v > 0 ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A node named on the command line: an index, a GUID (0x...), or a NodeDescription. */
export function parseNodeRef(s: string): number | bigint | string {
  if (/^\d+$/.test(s)) return Number(s);
  if (/^0x[0-9a-fA-F]+$/.test(s)) return BigInt(s);
  return s;
}

export async function openBackend(o: BackendOptions): Promise<Backend> {
  if (o.umad) {
    const clock = new RealClock();
    const { openUmad, listUmadPorts, portOfGuid } = await import('../transport/umad.js');
    let { ca, port } = o;
    if (o.guid) {
      const cas = listUmadPorts();
      const all = cas.flatMap((c) => c.ports);
      const p = portOfGuid(cas, o.guid, o.sm === true);
      if (!p) throw new PortNotFoundError(`no local port has GUID ${formatGuid(o.guid)} (ports: ${all.map((x) => `${x.caName}/${x.portNum} ${formatGuid(x.portGuid)}`).join(', ') || 'none'})`);
      [ca, port] = [p.caName, p.portNum];
    }
    const w = umadWindow(o.rpc?.window ?? 64, process.env, readSendBuffer);
    const t = openUmad({ ca, port, issm: o.sm, ...(w.pace !== undefined ? { pace: w.pace } : {}) });
    // One SM per port (api/sm-port-lock.ts): claimed before the SMP classes are registered, which
    // opens the issm device (IsSM); refused, this process never touches the port's IsSM.
    let releasePort: (() => void) | undefined;
    if (o.sm) {
      const where = `${t.local.caName} port ${t.local.portNum}`;
      try {
        releasePort = claimSmPort(t.local.portGuid, where);
        t.register(MgmtClass.SubnLid, 1);
        t.register(MgmtClass.SubnDirected, 1);
      } catch (e) {
        releasePort?.();
        await t.close();
        // The kernel's own guard: another process holds the issm device (OpenSM, another ibsm).
        const errno = (e as { errno?: number }).errno;
        if ((e as { call?: string }).call === 'open' && (errno === osConstants.errno.EAGAIN || errno === osConstants.errno.EBUSY)) {
          throw new SmPortBusyError(`another SM (OpenSM or ibsm) holds ${where}'s issm device (IsSM): stop it first, or give this one another --ca/--port/--guid (${(e as Error).message})`);
        }
        throw e;
      }
    }
    // An SM's SA server registers class 0x03 itself (as a server); a client registers it here.
    if (o.sa && !o.sm) t.register(MgmtClass.SubnAdm, SA_CLASS_VERSION, o.reports ? { methods: [Method.Report] } : {});
    // Clients read their own PortInfo (SM LID) with a hop-0 SMP.
    if (!o.sm) t.register(MgmtClass.SubnDirected, 1);
    // An SM's timeouts follow the measured round trips, backed off per retry (src/rpc/rto.ts).
    const rpc = new MadRpc(t, clock, { timeoutMs: 200, retries: 3, perDestinationWindow: 8, ...(o.sm ? { adaptiveTimeout: true } : {}), ...o.rpc, window: w.window });
    return {
      kind: 'umad',
      ...(w.pace !== undefined && w.sndbuf !== undefined ? { windowCap: { window: w.pace, outstanding: w.window, sndbuf: w.sndbuf } } : {}),
      transport: t,
      rpc,
      clock,
      async close() {
        rpc.close();
        await t.close();
        releasePort?.();
      },
    };
  }
  // The simulator and the topology loaders are loaded only for the in-process fabric.
  const [{ loadFabricSpec }, { SimFabric }] = await Promise.all([import('../model/load.js'), import('../sim/fabric.js')]);
  const fabric = typeof o.sim === 'object' ? o.sim : loadFabricSpec(o.sim ?? DEFAULT_SIM_SPEC, { seed: o.seed });
  // The simulator takes ownership of its Fabric; keep the loaded one pristine for comparisons.
  // One time base for the fabric and the SM: real time, the fabric's microseconds run at once.
  const sim = new SimFabric(cloneFabric(fabric), { clock: new PacedClock(), seed: o.seed });
  let at: number | bigint | string = o.attach !== undefined ? parseNodeRef(o.attach) : 0;
  let atPort: number | undefined;
  if (o.guid) {
    const ni = fabric.nodes.findIndex((n) => n.ports.some((p) => p?.guid === o.guid));
    if (ni < 0) throw new PortNotFoundError(`no port of the simulated fabric has GUID ${formatGuid(o.guid)}`);
    at = ni;
    atPort = fabric.nodes[ni]!.type === 2 ? 0 : fabric.nodes[ni]!.ports.findIndex((p) => p?.guid === o.guid);
  }
  return attachSim(sim, fabric, at, atPort, o, true);
}

/** A backend at one port of a simulated fabric, on the fabric's clock (`ownsSim`: closing it
 * closes the fabric too; an in-process fabric of several subnets has one backend per SM on one
 * fabric: api/subnets.ts). */
export function attachSim(sim: SimFabric, fabric: Fabric, at: number | bigint | string, atPort: number | undefined, o: Pick<BackendOptions, 'sm' | 'sa' | 'reports' | 'rpc'>, ownsSim: boolean): Backend {
  const clock = sim.clock;
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

/** The local CA ports the umad transport can open (transport/umad.ts): listing them through the
 * native addon, picking the one an SM or a client should use, and checking that an ibsim listens
 * before libibumad is called under the umad2sim preload. */
import { existsSync, readFileSync } from 'node:fs';
import { loadNative, toTransportError, type NativeCaInfo, type NativeUmad } from './native.js';
import { TransportError, type LocalPortInfo } from './types.js';

const IB_PORT_PHYS_LINKUP = 5;
const IB_PORT_PHYS_DISABLED = 3;
const IB_PORT_ACTIVE = 4;
const NODE_TYPE_SWITCH = 2;
/** PortInfo:CapabilityMask IsSMDisabled (bit 10). */
const PORT_CAP_IS_SM_DISABLED = 1 << 10;
const UMAD2SIM = 'umad2sim';

export interface UmadPortListing extends LocalPortInfo {
  physState: number;
  lmc: number;
  rate: number;
  capMask: number;
}

export interface UmadCaListing {
  name: string;
  nodeType: number;
  nodeGuid: bigint;
  systemGuid: bigint;
  fwVer: string;
  ports: UmadPortListing[];
}

function linkLayerOf(s: string): 'InfiniBand' | 'Ethernet' {
  return s.toLowerCase() === 'ethernet' ? 'Ethernet' : 'InfiniBand';
}

/** Under the umad2sim preload the first libibumad call retries forever when no ibsim listens:
 * check for the simulator's control socket before touching the library. */
export function assertSimulatorListening(env: NodeJS.ProcessEnv = process.env): void {
  if (!(env.LD_PRELOAD ?? '').includes(UMAD2SIM) || env.IBSIM_SERVER_NAME) return;
  const sock = env.IBSIM_SOCKNAME || 'sim';
  let table = '';
  try {
    table = readFileSync('/proc/net/unix', 'utf8');
  } catch {
    return; // cannot tell; let the library try
  }
  const want = `@${sock}:ctl`;
  const listening = table.split('\n').some((line) => {
    const i = line.indexOf(want);
    return i >= 0 && /^@*\s*$/.test(line.slice(i + want.length));
  });
  if (!listening) {
    throw new TransportError(
      `running under umad2sim but no ibsim is listening on socket "${sock}" (IBSIM_SOCKNAME); start ibsim with the same IBSIM_SOCKNAME first`,
      'sim_connect',
    );
  }
}

/** The native addon, once ibsim is known to listen where umad2sim will look. */
export function native(): NativeUmad {
  assertSimulatorListening();
  return loadNative();
}

function describe(ca: NativeCaInfo): UmadCaListing {
  return {
    name: ca.name,
    nodeType: ca.nodeType,
    nodeGuid: ca.nodeGuid,
    systemGuid: ca.systemGuid,
    fwVer: ca.fwVer,
    ports: ca.ports.map((p) => ({
      caName: p.caName,
      portNum: p.portNum,
      nodeGuid: ca.nodeGuid,
      portGuid: p.portGuid,
      lid: p.lid,
      smLid: p.smLid,
      state: p.state,
      linkLayer: linkLayerOf(p.linkLayer),
      physState: p.physState,
      lmc: p.lmc,
      rate: p.rate,
      capMask: p.capMask,
    })),
  };
}

/** Every CA and port libibumad sees. */
export function listUmadPorts(): UmadCaListing[] {
  const n = native();
  try {
    return n.listCas().map(describe);
  } catch (e) {
    // No umad devices at all: libibumad guesses a default CA name and fails on it.
    if (!process.env.LD_PRELOAD?.includes('umad2sim') && !existsSync('/sys/class/infiniband_mad')) {
      throw new TransportError(
        'no InfiniBand devices: /sys/class/infiniband_mad does not exist (no HCA, or the ib_umad kernel module is not loaded: modprobe ib_umad). ' +
          'Without hardware, use --sim, or ibsim with LD_PRELOAD=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so',
        'umad_get_cas_names',
      );
    }
    throw toTransportError(e, 'listing InfiniBand devices');
  }
}

/** Choose the CA port to open: the named one, or the first linked-up one, or the first not down. */
export function resolvePort(cas: readonly UmadCaListing[], ca?: string, port?: number): UmadPortListing {
  const candidates = ca === undefined ? cas : cas.filter((c) => c.name === ca);
  if (candidates.length === 0) {
    const names = cas.map((c) => c.name).join(', ') || 'none';
    throw new TransportError(ca === undefined ? 'no InfiniBand device found (is the ib_umad module loaded?)' : `no InfiniBand device named "${ca}" (found: ${names})`, 'umad_get_ca');
  }
  if (port !== undefined) {
    const ports = candidates.flatMap((c) => c.ports);
    const p = ports.find((x) => x.portNum === port);
    if (!p) throw new TransportError(`${ca ?? candidates[0]!.name} has no port ${port} (ports: ${ports.map((x) => x.portNum).join(', ')})`, 'umad_get_port');
    const why = unusable(p);
    if (why) throw new TransportError(`${p.caName} port ${p.portNum} cannot carry the SM's MADs: ${why}`, 'umad_get_port');
    return p;
  }
  // rdma-core's resolve_ca_name/resolve_ca_port: the first device with an ACTIVE port wins (its
  // first ACTIVE port); else the first device with a usable port, its first LinkUp port, else
  // its first port not Disabled
  let fallback: UmadPortListing | undefined;
  for (const c of candidates) {
    // a switch's SMA device: its port 0, whatever its state (rdma-core: "switch sma port 0")
    if (c.nodeType === NODE_TYPE_SWITCH && c.ports[0]) return c.ports.find((x) => x.portNum === 0) ?? c.ports[0];
    const usable = c.ports.filter((x) => !unusable(x));
    const active = usable.find((x) => x.state === IB_PORT_ACTIVE);
    if (active) return active;
    fallback ??= usable.find((x) => x.physState === IB_PORT_PHYS_LINKUP) ?? usable.find((x) => x.physState !== IB_PORT_PHYS_DISABLED);
  }
  if (fallback) return fallback;
  const all = candidates.flatMap((c) => c.ports);
  const reasons = all.map((x) => `${x.caName} port ${x.portNum}: ${unusable(x) ?? 'Disabled'}`);
  throw new TransportError(`no port for the SM on ${candidates.map((c) => c.name).join(', ')}${reasons.length ? ` (${reasons.join('; ')})` : ' (no ports)'}; name one with --ca/--port once it is an InfiniBand port that is not Disabled`, 'umad_get_port');
}

/** The local port with GUID `guid` (undefined when none has it). For the SM (`sm`), the one that
 * can carry SMPs: a planarized HCA's SMI and GSI devices share one port GUID, and the GSI device
 * says IsSMDisabled (rdma-core's umad_get_smi_gsi_pairs); when none can, the first (whose
 * resolvePort error then says why). */
export function portOfGuid(cas: readonly UmadCaListing[], guid: bigint, sm = false): UmadPortListing | undefined {
  const ports = cas.flatMap((c) => c.ports).filter((p) => p.portGuid === guid);
  return (sm ? ports.find((p) => !unusable(p)) : undefined) ?? ports[0];
}

/** Why a port cannot be the SM's (rdma-core skips these): not an InfiniBand link layer (RoCE,
 * iWARP: an Ethernet device such as irdma listed before mlx5), or IsSMDisabled in its
 * CapabilityMask (the GSI-only device of a planarized HCA, which shares its port GUID with the
 * SMI device). */
export function unusable(p: UmadPortListing): string | undefined {
  if (p.linkLayer !== 'InfiniBand') return `link layer ${p.linkLayer}, not InfiniBand`;
  if (p.capMask & PORT_CAP_IS_SM_DISABLED) return 'IsSMDisabled (no SMI on this device: the GSI side of a planarized HCA)';
  return undefined;
}

/**
 * SR-IOV virtual ports of the simulated CAs (docs/vports.md): the state a virtualization-capable
 * HCA port's SMA keeps (VirtualizationInfo, one SimVPort per vport), and the hypervisor's side,
 * creating and destroying vports at run time (`SimVirtPlane`, the fabric's `vports`).
 *
 * A vport is created in state Init (the function is up, the SM has not activated it); creating or
 * destroying one raises VirtualizationInfo.VPortStateChange, which the SM polls (there is no vport
 * trap). A vport with LidRequired answers on the LID the SM gave it (portOwnsLid, sim/node.ts).
 * Vport 0 is the physical function: it exists while virtualization is on, its GUID is the port's.
 */
import { NodeType, PortState } from '../wire/mad.js';
import { PortCap2 } from '../wire/sma.js';
import type { SimNode, SimPort } from './node.js';
import { SimFabricError } from './fabric-types.js';

/** The profile of a virtualization-capable HCA port. */
export interface VirtProfile {
  /** VirtualizationInfo.VPortCap: the highest vport index the port supports. */
  vportCap: number;
  /** Vports existing from the start (indices 1..n; vport 0 always exists). */
  vports?: number;
  /** Which of those require a LID of their own (default: every second one, the odd indices). */
  lidRequired?: (index: number) => boolean;
}

export interface NewVPort {
  /** Default: the lowest free index from 1. */
  index?: number;
  guid?: bigint;
  lidRequired?: boolean;
  /** Share the LID of this vport (when not LidRequired). */
  lidByVPortIndex?: number;
  desc?: string;
}

export class SimVPort {
  state: number = PortState.Init;
  /** The SM-assigned LID (LidRequired vports). */
  lid = 0;
  /** VPortInfo Sets with ClientReregister the vport received (its clients re-registered). */
  clientReregisters = 0;
  readonly pkeys: Uint16Array;
  readonly guids: bigint[] = new Array<bigint>(8).fill(0n);
  constructor(
    readonly virt: SimVirt,
    readonly index: number,
    readonly guid: bigint,
    readonly lidRequired: boolean,
    readonly lidByVPortIndex: number,
    readonly vnodeGuid: bigint,
    public desc: string,
    partitionCap: number,
  ) {
    this.pkeys = new Uint16Array(partitionCap);
    this.guids[0] = guid;
  }
}

/** The virtualization state of one CA port. */
export class SimVirt {
  enabled = false;
  vportStateChange = false;
  readonly vports = new Map<number, SimVPort>();
  /** LIDs of LidRequired vports (what the port answers on besides its own range). */
  readonly lids = new Map<number, SimVPort>();
  /** Vport state changes the SMA raised (creations, destructions). */
  changes = 0;
  constructor(
    readonly port: SimPort,
    readonly vportCap: number,
  ) {}

  get indexTop(): number {
    let top = 0;
    for (const i of this.vports.keys()) if (i > top) top = i;
    return top;
  }

  ownsLid(lid: number): boolean {
    if (!this.enabled) return false;
    const v = this.lids.get(lid);
    return v !== undefined && v.state >= PortState.Init;
  }

  /** The SM gave a LidRequired vport its LID. */
  setLid(v: SimVPort, lid: number): void {
    if (v.lid !== 0 && this.lids.get(v.lid) === v) this.lids.delete(v.lid);
    v.lid = lid;
    if (lid !== 0) this.lids.set(lid, v);
  }

  add(o: NewVPort): SimVPort {
    let index = o.index;
    if (index === undefined) for (index = 1; this.vports.has(index); index++);
    if (index < 0 || index > this.vportCap) throw new SimFabricError(`vport index ${index} is out of range 0..${this.vportCap} (VPortCap) at port 0x${this.port.guid.toString(16)}`);
    if (this.vports.has(index)) throw new SimFabricError(`vport ${index} already exists at port 0x${this.port.guid.toString(16)}`);
    const guid = o.guid ?? (index === 0 ? this.port.guid : vportGuid(this.port, index));
    const p = this.port;
    const v = new SimVPort(this, index, guid, o.lidRequired ?? false, o.lidByVPortIndex ?? 0, vportGuid(p, index) | VNODE_GUID_BIT, o.desc ?? `${p.node.desc} vport ${index}`, p.node.partitionCap);
    this.vports.set(index, v);
    return v;
  }

  remove(index: number): SimVPort {
    const v = this.vports.get(index);
    if (!v) throw new SimFabricError(`no vport ${index} at port 0x${this.port.guid.toString(16)}`);
    this.vports.delete(index);
    if (v.lid !== 0 && this.lids.get(v.lid) === v) this.lids.delete(v.lid);
    v.state = PortState.Down;
    return v;
  }
}

/** VPortCap of a port the control socket's `vport create` gives virtualization. */
export const HYPERVISOR_VPORT_CAP = 128;

/** Vport GUIDs: 0x5e, then the port's slot in the fabric, then the index (unique in the fabric). */
const VPORT_GUID_BASE = 0x5e00_0000_0000_0000n;
const VNODE_GUID_BIT = 0x0100_0000_0000_0000n;
export function vportGuid(p: SimPort, index: number): bigint {
  return VPORT_GUID_BASE | (BigInt(p.slot) << 16n) | BigInt(index);
}

/** The hypervisor's side of the fabric's vports: the API a test (or the control socket) drives. */
export class SimVirtPlane {
  /** Every virtualization-capable port. */
  readonly ports: SimVirt[] = [];

  constructor(
    private readonly portOf: (ref: bigint | number | string, port: number) => SimPort,
    nodes: readonly SimNode[] = [],
    /** A profile for every CA port of the fabric (SimFabricOptions.virtualization). */
    every?: VirtProfile,
  ) {
    if (every) for (const n of nodes) if (n.type === NodeType.CA) for (const p of n.ports) if (p) this.enable(p, every);
  }

  /** Make a CA port virtualization-capable (CapabilityMask2.IsVirtualizationSupported) with `profile`. */
  enable(p: SimPort, profile: VirtProfile): SimVirt {
    if (p.node.isSwitch) throw new SimFabricError(`${p.node.desc}: only CA ports have vports`);
    if (p.virt) return p.virt;
    const virt = new SimVirt(p, profile.vportCap);
    p.virt = virt;
    p.info.capabilityMask2 = (p.info.capabilityMask2 | PortCap2.IsVirtualizationSupported) >>> 0;
    virt.add({ index: 0 });
    const lidRequired = profile.lidRequired ?? ((i: number) => i % 2 === 1);
    for (let i = 1; i <= (profile.vports ?? 0); i++) virt.add({ index: i, lidRequired: lidRequired(i) });
    this.ports.push(virt);
    return virt;
  }

  virt(ref: bigint | number | string, port = 1): SimVirt {
    const p = this.portOf(ref, port);
    if (!p.virt) throw new SimFabricError(`${p.node.desc} port ${port} has no virtualization (enable it first)`);
    return p.virt;
  }

  /** A hypervisor creates a vport (a VF handed to a VM): raises VPortStateChange. */
  create(ref: bigint | number | string, port: number, o: NewVPort = {}): SimVPort {
    const virt = this.virt(ref, port);
    const v = virt.add(o);
    virt.vportStateChange = true;
    virt.changes++;
    return v;
  }

  /** A hypervisor destroys a vport: raises VPortStateChange. */
  destroy(ref: bigint | number | string, port: number, index: number): void {
    const virt = this.virt(ref, port);
    if (index === 0) throw new SimFabricError('vport 0 is the physical function: it cannot be destroyed');
    virt.remove(index);
    virt.vportStateChange = true;
    virt.changes++;
  }

  /** The hypervisor's commands as the control socket gives them (`ibsm vport create|destroy`):
   * create `count` vports (every other one LidRequired, the first one so) on a port, enabling
   * virtualization there first when it had none (`enabled`: the SM sees that port at its next heavy
   * sweep), or destroy its `count` highest. */
  hypervisor(action: 'create' | 'destroy', ref: bigint | number | string, port: number, count: number): { enabled: boolean; vports: Array<{ index: number; guid: bigint; lidRequired: boolean }> } {
    const p = this.portOf(ref, port);
    const enabled = !p.virt && action === 'create';
    if (enabled) this.enable(p, { vportCap: HYPERVISOR_VPORT_CAP });
    const virt = this.virt(ref, port);
    const out: Array<{ index: number; guid: bigint; lidRequired: boolean }> = [];
    for (let i = 0; i < count; i++) {
      if (action === 'create') {
        const v = this.create(ref, port, { lidRequired: i % 2 === 0 });
        out.push({ index: v.index, guid: v.guid, lidRequired: v.lidRequired });
      } else {
        const top = virt.indexTop;
        if (top === 0) break;
        const v = virt.vports.get(top)!;
        this.destroy(ref, port, top);
        out.push({ index: v.index, guid: v.guid, lidRequired: v.lidRequired });
      }
    }
    return { enabled, vports: out };
  }

  /** Every vport of the fabric. */
  *all(): IterableIterator<SimVPort> {
    for (const virt of this.ports) yield* virt.vports.values();
  }
}

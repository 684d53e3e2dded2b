/** A MAD in flight through the simulated fabric, and what happened to it on the way. */
import type { SimEndpoint } from './endpoint.js';

export interface Packet {
  buf: Uint8Array;
  slid: number;
  dlid: number;
  sqpn: number;
  dqpn: number;
  /** SMP on VL15 (classes 0x01/0x81): needs only link up, not ACTIVE. */
  vl15: boolean;
  /** Sending endpoint and a copy of what it sent (for badPath 'status'). */
  from?: SimEndpoint;
  original?: Uint8Array;
  /** The LRH's SL where it matters (test packets, and what a router sets from its table). */
  sl?: number;
  /** The GRH, when the packet carries one (inter-subnet traffic through routers: sim/router.ts). */
  grh?: PacketGrh;
  /** A test packet (sim/probe.ts): records the ports it leaves by, reports arrival or loss. */
  probe?: ProbeSink;
  /** `buf` is the fabric's own copy of a request (from an endpoint's send): the SMA that answers it
   * hands the buffer back for the next request. */
  pooled?: boolean;
}

/** A packet with every field present (one object shape on the MAD path, whatever it carries). */
export function newPacket(buf: Uint8Array, slid: number, dlid: number, sqpn: number, dqpn: number, vl15: boolean, from?: SimEndpoint): Packet {
  return { buf, slid, dlid, sqpn, dqpn, vl15, from, original: undefined, sl: undefined, grh: undefined, probe: undefined, pooled: false };
}

/** `p` made over into what `newPacket` would give (every field written: the same object shape):
 * an answered request's packet carries its answer back (no packet object per answer). */
export function reusePacket(p: Packet, buf: Uint8Array, slid: number, dlid: number, sqpn: number, dqpn: number, vl15: boolean): Packet {
  p.buf = buf;
  p.slid = slid;
  p.dlid = dlid;
  p.sqpn = sqpn;
  p.dqpn = dqpn;
  p.vl15 = vl15;
  p.from = undefined;
  p.original = undefined;
  p.sl = undefined;
  p.grh = undefined;
  p.probe = undefined;
  p.pooled = false;
  return p;
}

/** GRH fields the simulated routers read and rewrite. */
export interface PacketGrh {
  sgid: bigint;
  dgid: bigint;
  hopLimit: number;
  trafficClass: number;
  flowLabel: number;
}

/** Where a test packet reports: each link crossing (the port it left by), arrival, loss. */
export interface ProbeSink {
  hops: Array<{ node: number; port: number; slid: number; dlid: number; sl: number }>;
  arrived(node: number, port: number, pkt: Packet): void;
  lost(reason: string): void;
}

/** Where a MAD arriving at a port goes: the node's SMA or an agent (endpoint) at the port. */
export type Target = 'sma' | 'agent';

/** Accumulated on the way: link crossings, injected delay, and whether a fault duplicated it. */
export interface Transit {
  hops: number;
  delay: number;
  dup: boolean;
}

export function newTransit(): Transit {
  return { hops: 0, delay: 0, dup: false };
}

/** `t` as `newTransit` makes it (for reuse by the next injection). */
export function resetTransit(t: Transit): Transit {
  t.hops = 0;
  t.delay = 0;
  t.dup = false;
  return t;
}

/** Thrown on the way when a MAD is lost; `pathProblem` says the path (not a fault) was bad. */
export class DropError {
  constructor(
    readonly reason: string,
    readonly pathProblem: boolean,
  ) {}
}

/** A key for (node index, port number) in maps. */
export function portKey(node: number, port: number): number {
  return node * 256 + port;
}
